#!/usr/bin/env python3
"""Checks that scripts/replay-bench.py judges runs as it says it does, on made-up history.

Two tiny repositories whose one eligible commit is known: one that git cherry-picks cleanly
onto its base, one where git conflicts. Each is replayed by the real binary (every mode must be
right, or refused where git conflicts) and by two fake binaries: one that reports success and
changes nothing (must be judged wrong, and applied where git conflicts) and one that writes a
file and then fails (half-applied). Python 3 standard library only; needs git and GNU patch.

usage: scripts/replay-bench-test.py [APPLY_PATCH]   (default: target/debug/apply-patch)
"""

import json
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "replay-bench.py")
ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@t")


def git(repo, *args):
    subprocess.run(["git", "-C", repo] + list(args), check=True, env=ENV,
                   capture_output=True)


def commit(repo, lines, message):
    with open(os.path.join(repo, "f.txt"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", message)


def make_repo(path, conflict):
    """Seven commits on one line of history: only the last is eligible with a base 5 back
    (`--min-back 5 --max-back 5`). Between base and parent, lines are added at the top; the
    last commit changes line 30 (clean) or line 1, which the history also changed (conflict)."""
    git(os.path.dirname(path), "init", "-q", path)
    lines = [f"line {n}" for n in range(1, 41)]
    commit(path, lines, "base")
    for k in range(5):
        lines = [f"top {k}"] + lines if k else ["line 1 changed"] + lines[1:]
        commit(path, lines, f"drift {k}")
    at = lines.index("line 1 changed" if conflict else "line 30")
    lines[at] = "the change"
    commit(path, lines, "the commit")


def fake(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def replay(binary, repo, out, converter):
    """Outcomes by mode; the agent forms are made by `converter` (the first binary)."""
    args = [sys.executable, BENCH, "--apply-patch", converter, "--compare", binary,
            "--min-back", "5", "--max-back", "5", "--commits", "1", "--json", out, repo]
    subprocess.run(args, check=True, capture_output=True)
    with open(out) as f:
        runs = json.load(f)["runs"]
    return {(r["binary"], r["mode"], r["context"]): r["outcome"] for r in runs}


def main():
    real = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(HERE, "..", "target", "debug", "apply-patch"))
    failures, checks = [], 0
    with tempfile.TemporaryDirectory(prefix="replay-bench-test-") as tmp:
        noop = fake(os.path.join(tmp, "noop"), 'echo \'{"ok": true}\'\n')
        half = fake(os.path.join(tmp, "half"), 'for a; do [ "$prev" = --root ] && root=$a; '
                    'prev=$a; done\n[ -n "$root" ] && echo broken > "$root/f.txt"\n'
                    'echo \'{"ok": false}\'; exit 1\n')
        expect = {
            False: {"compare": "right", noop: "wrong", half: "half-applied",
                    "git-apply": "right", "patch": "right"},
            True: {"compare": "refused", noop: "applied", half: "half-applied",
                   "git-apply": "refused", "patch": "refused", "patch-F0": "refused"},
        }
        for conflict in (False, True):
            repo = os.path.join(tmp, "conflict" if conflict else "clean")
            make_repo(repo, conflict)
            for binary in (real, noop, half):
                got = replay(binary, repo, os.path.join(tmp, "out.json"), real)
                want = expect[conflict]["compare" if binary == real else binary]
                for context in (3, 1):
                    for mode in ("ap", "ap-3way", "agent", "agent-nonum"):
                        seen = got.get(("compare", mode, context))
                        checks += 1
                        if seen != want:
                            failures.append(f"{os.path.basename(repo)} {mode} -U{context} "
                                            f"{os.path.basename(binary)}: {seen}, not {want}")
                    for mode in ("git-apply", "patch", "patch-F0"):
                        seen, want_tool = got.get((None, mode, context)), expect[conflict].get(mode)
                        checks += want_tool is not None
                        if want_tool and seen != want_tool:
                            failures.append(f"{os.path.basename(repo)} {mode} -U{context}: "
                                            f"{seen}, not {want_tool}")
    for failure in failures:
        print(f"replay-bench-test: {failure}")
    print(f"replay-bench-test: {checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
