#!/usr/bin/env python3
"""Real-history replay benchmark: how often does each patch tool put a real commit right?

Each selected commit of a git repository is replayed onto an older base (5-60 commits before
its parent on the first-parent chain). git's own cherry-pick is the truth: a three-way merge
(`git merge-tree --merge-base=PARENT BASE COMMIT`) gives the expected tree, or says "conflict".
The commit's diff (`git diff -U3` and `-U1`, full index lines, binary files left out) is then
applied to a fresh copy of the base's files by apply-patch (default, `--3way`, the agent form
with and without line numbers), `git apply` and GNU patch (fuzz 2 and `-F0`), and each run is
classified:

  right         applied, and every file is as the truth has it
  refused       an error, and no file changed
  wrong         applied (exit 0), but some file differs from the truth
  half-applied  an error, but some file changed (GNU patch writes the hunks that fit)
  n/a           the agent form cannot express this diff (`convert --to agent` refused it)

and, where git itself conflicts (no truth), whether the tool applied the diff anyway.

Python 3 standard library only. Nothing here writes to the repositories given: the merges are
written into scratch bare repositories (under --work) that borrow their objects through
`objects/info/alternates`. See README "Development" > "The replay benchmark".
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

AP_MODES = ["ap", "ap-3way", "agent", "agent-nonum"]
OTHER_MODES = ["git-apply", "patch", "patch-F0"]
MODE_TITLES = {
    "ap": "apply-patch",
    "ap-3way": "apply-patch --3way",
    "agent": "agent form, with line numbers",
    "agent-nonum": "agent form, bare @@",
    "git-apply": "git apply",
    "patch": "GNU patch (fuzz 2)",
    "patch-F0": "GNU patch -F0",
}
OUTCOMES = ["right", "refused", "wrong", "half-applied", "n/a"]
# A fixed git configuration: the user's (diff.noprefix, diff.renames, merge settings...)
# must not change the diffs or the truth.
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
# Seconds one tool run may take (--timeout): a run killed then counts as refused, code "timeout".
RUN_TIMEOUT = 300
TIMED_OUT = -1


def git_env(extra=None):
    env = dict(os.environ)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(key, None)
    env.update(GIT_ENV)
    env.update(extra or {})
    return env


def run(args, cwd=None, env=None, stdin=None):
    """Run a command; returns (exit status or TIMED_OUT, stdout bytes, stderr bytes)."""
    try:
        proc = subprocess.run(args, cwd=cwd, env=env or git_env(), input=stdin,
                              capture_output=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return TIMED_OUT, b"", f"killed after {RUN_TIMEOUT} s".encode()
    return proc.returncode, proc.stdout, proc.stderr


class Repo:
    """One repository under test: its label, head, and a scratch bare repository whose object
    store borrows the original's, so that merges never write into the original."""

    def __init__(self, spec, work, rev):
        label, _, path = spec.rpartition("=")
        path = os.path.abspath(path)
        rc, out, err = run(["git", "-C", path, "rev-parse", "--path-format=absolute",
                            "--git-path", "objects"])
        if rc != 0:
            raise SystemExit(f"replay-bench: {path} is not a git repository: {err.decode().strip()}")
        objects = out.decode().strip()
        if not label:
            base = os.path.basename(path.rstrip("/"))
            if base in ("repo", ".git"):
                base = os.path.basename(os.path.dirname(path.rstrip("/")))
            label = base.removesuffix(".git").split("+")[-1]
        self.label, self.path, self.objects = label, path, objects
        self.bare = os.path.join(work, "repos", label + ".git")
        if not os.path.isdir(self.bare):
            os.makedirs(os.path.dirname(self.bare), exist_ok=True)
            self.check(["init", "-q", "--bare", self.bare], bare=False)
        with open(os.path.join(self.bare, "objects", "info", "alternates"), "w") as f:
            f.write(objects + "\n")
        rc, out, _ = run(["git", "-C", path, "rev-parse", "--is-shallow-repository"])
        self.shallow = out.decode().strip() == "true"
        self.head = self.check(["-C", path, "rev-parse", "--verify", rev + "^{commit}"],
                               bare=False).decode().strip()

    def git(self, args, stdin=None):
        return run(["git", "--git-dir", self.bare] + args, stdin=stdin)

    def check(self, args, bare=True, stdin=None):
        full = (["git", "--git-dir", self.bare] if bare else ["git"]) + args
        rc, out, err = run(full, stdin=stdin)
        if rc != 0:
            raise RuntimeError(f"{' '.join(full)}: {err.decode(errors='replace').strip()}")
        return out


# ---------------------------------------------------------------------------------------------
# Selection: deterministic from the seed, the repository's label and each commit's id.


def parse_raw(out):
    """`git diff-tree -r -z --raw -M` output → [(old mode, new mode, status, old path, new path)]."""
    fields = out.split(b"\0")
    entries, i = [], 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].split(b" ")
        status = meta[4].decode()
        if status[0] in "RC":
            old, new, i = fields[i + 1], fields[i + 2], i + 3
        else:
            old = new = fields[i + 1]
            i += 2
        entries.append((meta[0].decode(), meta[1].decode(), status,
                        os.fsdecode(old), os.fsdecode(new)))
    return entries


def parse_numstat(out):
    """`git diff-tree -r -z --numstat -M` output → [(added or None, deleted or None, paths)]."""
    fields = out.split(b"\0")
    stats, i = [], 0
    while i < len(fields) and fields[i]:
        added, deleted, path = fields[i].split(b"\t", 2)
        if path:
            paths, i = [os.fsdecode(path)], i + 1
        else:
            paths, i = [os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])], i + 3
        count = (lambda s: None if s == b"-" else int(s))
        stats.append((count(added), count(deleted), paths))
    return stats


def inspect_commit(repo, parent, commit, limits):
    """Why the commit is skipped (a short reason), or (text paths, binary paths)."""
    rc, raw, _ = repo.git(["diff-tree", "-r", "-z", "--raw", "-M", parent, commit])
    rc2, num, _ = repo.git(["diff-tree", "-r", "-z", "--numstat", "-M", parent, commit])
    if rc or rc2:
        return "unreadable"
    entries = parse_raw(raw)
    if not entries:
        return "empty"
    if any(m in ("160000", "120000") for e in entries for m in e[:2]):
        return "submodule or symlink"
    text, binary, lines = set(), set(), 0
    for added, deleted, paths in parse_numstat(num):
        if added is None:
            binary.update(paths)
        else:
            text.update(paths)
            lines += added + deleted
    if not text:
        return "binary only"
    if len(entries) > limits.max_files or lines > limits.max_lines:
        return "huge"
    return sorted(text), sorted(binary)


def first_parent_chain(repo):
    out = repo.check(["rev-list", "--first-parent", "--parents", repo.head])
    chain = [line.split() for line in out.decode().splitlines()]
    return [c[0] for c in chain], {c[0]: c[1:] for c in chain}


def select(repo, count, args, only):
    """The cases of one repository: commit, parent, base and the commit's text/binary paths."""
    chain, parents = first_parent_chain(repo)
    index = {c: i for i, c in enumerate(chain)}
    last = len(chain) - 2 - args.max_back
    eligible = [c for c in chain[:max(last + 1, 0)] if len(parents[c]) == 1]
    if only is not None:
        eligible = [c for c in chain if any(c.startswith(p) for p in only)]
        if not eligible:
            raise SystemExit(f"replay-bench: {repo.label}: no commit of the first-parent "
                             f"history of {repo.head[:12]} matches {', '.join(only)}")
    else:
        random.Random(f"{args.seed}:{repo.label}").shuffle(eligible)
    cases, skipped = [], {}
    for commit in eligible:
        if len(cases) >= count:
            break
        back = random.Random(f"{args.seed}:{commit}").randint(args.min_back, args.max_back)
        parent_at = index[commit] + 1
        if len(parents[commit]) != 1 or parent_at + back >= len(chain):
            skipped["no base"] = skipped.get("no base", 0) + 1
            continue
        found = inspect_commit(repo, chain[parent_at], commit, args)
        if isinstance(found, str):
            skipped[found] = skipped.get(found, 0) + 1
            continue
        if args.clean_only and merge(repo, chain[parent_at], chain[parent_at + back],
                                     commit) is None:
            skipped["git conflicts"] = skipped.get("git conflicts", 0) + 1
            continue
        cases.append({"repo": repo.label, "commit": commit, "parent": chain[parent_at],
                      "base": chain[parent_at + back], "back": back,
                      "text": found[0], "binary": found[1]})
    return cases, skipped


# ---------------------------------------------------------------------------------------------
# A case: the truth, the diffs, the base's files, then every tool on a fresh copy of them.


def blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def ls_tree(repo, tree, paths):
    """{path: (executable, blob id)} of the exact paths of `tree` (a directory is not a path)."""
    if not paths:
        return {}
    specs = [":(literal)" + p for p in sorted(paths)]
    out = repo.check(["ls-tree", "-r", "-z", tree, "--"] + specs)
    found = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, oid = meta.decode().split()
        path = os.fsdecode(path)
        if kind == "blob" and path in paths:
            found[path] = (mode == "100755", oid)
    return found


def read_blobs(repo, ids):
    ids = sorted(set(ids))
    if not ids:
        return {}
    out = repo.check(["cat-file", "--batch"], stdin="".join(i + "\n" for i in ids).encode())
    blobs, pos = {}, 0
    for oid in ids:
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        blobs[oid] = out[end + 1:end + 1 + size]
        pos = end + 2 + size
    return blobs


def make_diff(repo, case, context):
    excludes = [":(exclude,literal)" + p for p in case["binary"]]
    pathspec = ["--", "."] + excludes if excludes else []
    return repo.check(["diff", "--no-ext-diff", "--no-color", "--full-index", "-M",
                       "--src-prefix=a/", "--dst-prefix=b/", f"-U{context}",
                       case["parent"], case["commit"]] + pathspec)


def merge(repo, parent, base, commit):
    """The tree of `git cherry-pick COMMIT` onto BASE, or None where git conflicts."""
    rc, out, err = repo.git(["merge-tree", "--write-tree", "--no-messages",
                             "--merge-base=" + parent, base, commit])
    if rc not in (0, 1):
        raise RuntimeError(f"git merge-tree: {err.decode(errors='replace').strip()}")
    return out.decode().split("\n", 1)[0] if rc == 0 else None


def prepare(repo, case, contexts, keep):
    """Adds the truth (or None: git conflicts), the diffs and the files to compare to a case."""
    truth_tree = merge(repo, case["parent"], case["base"], case["commit"])
    paths = set(case["text"])
    if truth_tree:
        changed = repo.check(["diff-tree", "-r", "-z", "--no-renames", "--name-only",
                              case["base"], truth_tree])
        paths |= {os.fsdecode(p) for p in changed.split(b"\0") if p}
    paths -= set(case["binary"])
    base = ls_tree(repo, case["base"], paths)
    truth = ls_tree(repo, truth_tree, paths) if truth_tree else None
    case["diffs"] = {c: make_diff(repo, case, c) for c in contexts}
    case["files"] = base
    shown = list(base.values()) + (list(truth.values()) if truth and keep else [])
    case["blobs"] = read_blobs(repo, [oid for _, oid in shown])
    case["truth"] = truth


def materialize(root, case, files):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for path, (executable, oid) in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(case["blobs"][oid])
        os.chmod(full, 0o755 if executable else 0o644)


def snapshot(root):
    """{path: (executable, blob id)} of every file under root but the top .git."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root and ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full):
                state[rel] = (False, "link:" + os.readlink(full))
                continue
            with open(full, "rb") as f:
                data = f.read()
            state[rel] = (bool(os.stat(full).st_mode & 0o100), blob_id(data))
    return state


def classify(ok, state, case):
    changed = state != case["files"]
    if case["truth"] is None:
        return "applied" if ok else ("half-applied" if changed else "refused")
    if ok:
        return "right" if state == case["truth"] else "wrong"
    return "half-applied" if changed else "refused"


# ---------------------------------------------------------------------------------------------
# The tools. Each returns (ok, error code, message); the tree is read afterwards.


def apply_patch(binary, root, patch_file, state_dir, three_way=False):
    args = [binary, "--root", root, "--json", "--durability", "atomic"]
    args += ["--3way"] if three_way else []
    env = git_env({"XDG_STATE_HOME": state_dir,
                   "GIT_CEILING_DIRECTORIES": os.path.dirname(root)})
    rc, out, err = run(args + [patch_file], env=env)
    if rc == TIMED_OUT:
        return False, "timeout", err.decode()
    try:
        report = json.loads(out)
    except ValueError:
        return False, f"exit {rc}", err.decode(errors="replace").strip()[:300]
    error = report.get("error") or {}
    message = (error.get("message") or "").split("\n", 1)[0][:300]
    return rc == 0 and report.get("ok", False), error.get("code"), message


def first_line(text, *needles):
    lines = text.decode(errors="replace").splitlines()
    hits = [line for line in lines if any(n in line for n in needles)] or lines
    return hits[0][:300] if hits else ""


def git_apply(root, patch_file):
    env = git_env({"GIT_CEILING_DIRECTORIES": os.path.dirname(root)})
    rc, _, err = run(["git", "apply", "-p1", patch_file], cwd=root, env=env)
    return rc == 0, exit_code(rc), first_line(err, "error:") if rc else ""


def gnu_patch(root, patch_file, fuzz):
    # -f: never ask, never assume a patch is reversed; no backups, rejects discarded, so the
    # only files left are the patched ones.
    args = ["patch", "-p1", "-f", "--no-backup-if-mismatch", "-r", "-", "-i", patch_file]
    args += [] if fuzz is None else [f"-F{fuzz}"]
    rc, out, err = run(args, cwd=root)
    message = first_line(out + err, "FAILED", "can't", "Only garbage", "malformed")
    return rc == 0, exit_code(rc), message if rc else ""


def exit_code(rc):
    return None if rc == 0 else "timeout" if rc == TIMED_OUT else f"exit {rc}"


def agent_forms(binary, diff_file):
    """The agent form of a diff as `convert --to agent` writes it (with `@@ -N,M +N,M @@`
    lines), and the same with bare `@@` lines; or the reason it cannot be written."""
    rc, out, err = run([binary, "convert", "--to", "agent", diff_file])
    if rc != 0:
        return None, None, first_line(err, "error") or f"exit {rc}"
    bare = re.sub(rb"(?m)^@@ -[0-9][^\n]*@@[^\n]*$", b"@@", out)
    return out, bare, None


def run_mode(mode, binary, root, files, state_dir):
    if mode == "ap":
        return apply_patch(binary, root, files["diff"], state_dir)
    if mode == "ap-3way":
        return apply_patch(binary, root, files["diff"], state_dir, three_way=True)
    if mode in ("agent", "agent-nonum"):
        return apply_patch(binary, root, files[mode], state_dir)
    if mode == "git-apply":
        return git_apply(root, files["diff"])
    return gnu_patch(root, files["diff"], None if mode == "patch" else 0)


def init_git(root, objects):
    """--3way needs a git work tree whose object store has the diff's preimage blobs."""
    run(["git", "init", "-q", root])
    with open(os.path.join(root, ".git", "objects", "info", "alternates"), "w") as f:
        f.write(objects + "\n")


def replay(repo, case, args, binaries, keep):
    """Runs every mode of every binary at every context size on one case: [result record]."""
    prepare(repo, case, args.context, keep)
    scratch = tempfile.mkdtemp(prefix=f"{repo.label}-{case['commit'][:10]}-", dir=args.work)
    if keep:  # what each mode's tree is compared with, to look at beside it
        materialize(os.path.join(scratch, "base"), case, case["files"])
        if case["truth"] is not None:
            materialize(os.path.join(scratch, "truth"), case, case["truth"])
    results = []
    try:
        for context in args.context:
            files = {"diff": os.path.join(scratch, f"U{context}.diff")}
            with open(files["diff"], "wb") as f:
                f.write(case["diffs"][context])
            agent, bare, why = agent_forms(binaries[0][1], files["diff"])
            for name, text in (("agent", agent), ("agent-nonum", bare)):
                files[name] = os.path.join(scratch, f"U{context}.{name}.patch")
                if text is not None:
                    with open(files[name], "wb") as f:
                        f.write(text)
            for label, binary, modes in run_plan(binaries, args.modes):
                for mode in modes:
                    results.append(run_case_mode(repo, case, context, label, binary, mode,
                                                 files, scratch, why, keep))
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
        for bulky in ("diffs", "blobs", "files", "truth"):
            case.pop(bulky, None)
    return results


def run_plan(binaries, modes):
    plan = [(label, path, [m for m in AP_MODES if m in modes]) for label, path in binaries]
    plan.append((None, None, [m for m in OTHER_MODES if m in modes]))
    return plan


def run_case_mode(repo, case, context, label, binary, mode, files, scratch, why, keep):
    tag = f"{label + '.' if label else ''}{mode}.U{context}"
    root = os.path.join(scratch, tag)
    record = {"repo": repo.label, "commit": case["commit"], "parent": case["parent"],
              "base": case["base"], "back": case["back"],
              "git": "clean" if case["truth"] is not None else "conflict",
              "context": context, "binary": label, "mode": mode}
    if mode.startswith("agent") and why is not None:
        return dict(record, outcome="n/a", code="not convertible", message=why)
    materialize(root, case, case["files"])
    if mode == "ap-3way":
        init_git(root, repo.objects)
    start = time.monotonic()
    ok, code, message = run_mode(mode, binary, root, files, os.path.join(scratch, "state"))
    elapsed = time.monotonic() - start
    outcome = classify(ok, snapshot(root), case)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    return dict(record, outcome=outcome, code=code, message=message,
                seconds=round(elapsed, 3))


# ---------------------------------------------------------------------------------------------
# The report.


def rows_of(results, binaries, modes):
    rows = []  # each apply-patch mode once per binary, one under the other
    for mode in [m for m in AP_MODES if m in modes]:
        for label, _ in binaries:
            suffix = f" [{label}]" if len(binaries) > 1 else ""
            rows.append((label, mode, MODE_TITLES[mode] + suffix))
    rows += [(None, m, MODE_TITLES[m]) for m in OTHER_MODES if m in modes]
    return rows


def tally(results, label, mode, context):
    mine = [r for r in results
            if r["binary"] == label and r["mode"] == mode and r["context"] == context]
    counts = {"clean": 0, "conflict": 0, "applied": 0}
    counts.update({o: 0 for o in OUTCOMES})
    for r in mine:
        if r["outcome"] == "n/a":
            counts["n/a"] += 1
        elif r["git"] == "clean":
            counts["clean"] += 1
            counts[r["outcome"]] += 1
        else:
            counts["conflict"] += 1
            counts["applied"] += r["outcome"] == "applied"
    return counts


def percent(part, whole):
    return f"{100.0 * part / whole:.1f} % ({part})" if whole else "-"


def table(results, binaries, modes, context):
    cases = {(r["repo"], r["commit"]): r["git"] for r in results if r["context"] == context}
    clean = sum(1 for g in cases.values() if g == "clean")
    lines = [f"### {context} line{'s' if context != 1 else ''} of context: {len(cases)} commits,"
             f" {clean} that git cherry-picks cleanly, {len(cases) - clean} where it conflicts",
             "",
             "| tool | right | refused | wrong | half-applied | n/a | applied where git conflicts |",
             "|---|---|---|---|---|---|---|"]
    for label, mode, title in rows_of(results, binaries, modes):
        c = tally(results, label, mode, context)
        lines.append(f"| {title} | {percent(c['right'], c['clean'])} | "
                     f"{percent(c['refused'], c['clean'])} | {c['wrong']} | "
                     f"{c['half-applied']} | {c['n/a']} | {c['applied']} / {c['conflict']} |")
    return "\n".join(lines)


def notable(results):
    """apply-patch's wrong and half-applied runs, then its refusals where git applies cleanly:
    each case of the two unified-diff modes, counts by code for the agent forms."""
    ours = [r for r in results if r["binary"] is not None]
    lines = []
    for r in ours:
        if r["outcome"] in ("wrong", "half-applied"):
            lines.append(f"- {r['outcome'].upper()}: {case_name(r)} {r['mode']} -U{r['context']}"
                         f" [{r['binary']}] {r['code'] or ''} {r['message'] or ''}".rstrip())
    groups = {}
    for r in ours:
        if r["git"] == "clean" and r["outcome"] == "refused":
            groups.setdefault((r["binary"], r["mode"], r["context"]), []).append(r)
    for (label, mode, context), runs in sorted(groups.items()):
        codes = {}
        for r in runs:
            codes[r["code"]] = codes.get(r["code"], 0) + 1
        counts = ", ".join(f"{n} {code}" for code, n in sorted(codes.items()))
        lines.append(f"- refused where git applies, {mode} -U{context} [{label}]: {counts}")
        if mode in ("ap", "ap-3way"):
            lines += [f"    {case_name(r)} {r['code']}: {r['message']}" for r in runs]
    return lines


def case_name(r):
    return f"{r['repo']}:{r['commit'][:12]} (base {r['base'][:12]}, {r['back']} back)"


def per_repo(results):
    seen = {}
    for r in results:
        seen[(r["repo"], r["commit"])] = r["git"]
    repos = {}
    for (repo, _), git in seen.items():
        total, clean = repos.get(repo, (0, 0))
        repos[repo] = (total + 1, clean + (git == "clean"))
    return ", ".join(f"{repo} {t} ({c} clean)" for repo, (t, c) in repos.items())


def print_details(results):
    for r in results:
        print(f"{r['repo']}:{r['commit'][:12]} base {r['base'][:12]} git {r['git']} "
              f"-U{r['context']} {r['binary'] or '-'} {r['mode']}: {r['outcome']}"
              f"{' ' + r['code'] if r['code'] else ''}{': ' + r['message'] if r['message'] else ''}")


# ---------------------------------------------------------------------------------------------
# The command line.


def parse_args(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default_bin = os.path.join(here, "target", "release", "apply-patch")
    if not os.path.exists(default_bin):
        default_bin = os.path.join(here, "target", "debug", "apply-patch")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("repos", nargs="+", metavar="[LABEL=]REPO",
                   help="a git repository: a clone, a work tree or a git dir (bare or not)")
    p.add_argument("--apply-patch", default=default_bin, metavar="PATH",
                   help="the binary under test (default: target/release, else target/debug)")
    p.add_argument("--compare", metavar="PATH", help="a second binary, reported side by side")
    p.add_argument("--label", default="this", help="the first binary's name in the tables")
    p.add_argument("--compare-label", default="compare", help="the second binary's name")
    p.add_argument("--commits", type=int, default=300,
                   help="commits in all, shared equally between the repositories (default 300)")
    p.add_argument("--seed", default="24", help="selection seed (default 24)")
    p.add_argument("--rev", default="HEAD", help="the history replayed ends here (default HEAD)")
    p.add_argument("--min-back", type=int, default=5, help="base: at least N commits before "
                   "the parent (default 5)")
    p.add_argument("--max-back", type=int, default=60, help="... and at most N (default 60)")
    p.add_argument("--max-files", type=int, default=40,
                   help="skip commits changing more files (default 40)")
    p.add_argument("--max-lines", type=int, default=3000,
                   help="skip commits adding and deleting more lines (default 3000)")
    p.add_argument("--clean-only", action="store_true", help="select only commits that git "
                   "cherry-picks cleanly (the CI sample: only they can be wrong)")
    p.add_argument("--context", default="3,1", help="diff context sizes (default 3,1)")
    p.add_argument("--modes", default=",".join(AP_MODES + OTHER_MODES),
                   help="modes to run (default all: %(default)s)")
    p.add_argument("--only", action="append", metavar="REPO:COMMIT",
                   help="replay only this commit (a prefix of its id; repeatable), with the "
                        "base the seed gives it, and print every run")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=int, default=RUN_TIMEOUT, metavar="SECONDS",
                   help="one tool run killed after this long counts as refused (default "
                        "%(default)s)")
    p.add_argument("--json", default="replay-bench.json", metavar="FILE",
                   help="every run, one record each (default replay-bench.json)")
    p.add_argument("--work", metavar="DIR", help="scratch directory (default: a temporary one, "
                   "removed at the end)")
    p.add_argument("--keep", action="store_true",
                   help="keep the scratch trees (each mode's result) under --work")
    p.add_argument("--fail-on-wrong", action="store_true", help="exit 1 when apply-patch is "
                   "ever wrong or half-applied (the CI sample)")
    p.add_argument("--skip-if-unavailable", action="store_true", help="exit 0 with a message "
                   "when git or GNU patch is missing or a repository is shallow")
    args = p.parse_args(argv)
    args.context = [int(c) for c in args.context.split(",")]
    args.modes = args.modes.split(",")
    unknown = set(args.modes) - set(AP_MODES + OTHER_MODES)
    if unknown:
        p.error(f"unknown mode(s): {', '.join(sorted(unknown))}")
    if not 0 <= args.min_back <= args.max_back:
        p.error("--min-back must be between 0 and --max-back")
    return args


def unavailable(args, repos):
    needed = ["git"] + (["patch"] if {"patch", "patch-F0"} & set(args.modes) else [])
    missing = [t for t in needed if shutil.which(t) is None]
    if missing:
        return f"{' and '.join(missing)} not found"
    shallow = [r.label for r in repos if r.shallow]
    return f"shallow clone: {', '.join(shallow)}" if shallow else None


def work_dir(args):
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        args.work = os.path.abspath(args.work)
    else:
        args.work = tempfile.mkdtemp(prefix="replay-bench-")
    rc, out, _ = run(["git", "-C", args.work, "rev-parse", "--is-inside-work-tree"])
    if rc == 0 and out.strip() == b"true":
        # apply-patch would find that repository above its root (its state place, its
        # filters): every mode but --3way must run outside any git work tree.
        raise SystemExit(f"replay-bench: --work {args.work} is inside a git work tree")


def select_all(repos, args):
    only = {}
    for spec in args.only or []:
        label, _, commit = spec.rpartition(":")
        only.setdefault(label, []).append(commit)
    unknown = set(only) - {r.label for r in repos}
    if unknown:
        raise SystemExit(f"replay-bench: --only names no given repository: {', '.join(unknown)}")
    cases, skipped = [], {}
    share = -(-args.commits // len(repos))
    for repo in repos:
        if args.only and repo.label not in only:
            continue
        mine, why = select(repo, share, args, only.get(repo.label))
        cases += [(repo, c) for c in mine]
        skipped[repo.label] = why
    return cases, skipped


def replay_all(cases, args, binaries):
    results, failures, done = [], [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(replay, repo, case, args, binaries, args.keep): (repo, case)
                   for repo, case in cases}
        for future in concurrent.futures.as_completed(futures):
            repo, case = futures[future]
            try:
                results += future.result()
            except Exception as e:  # a case git itself cannot prepare: reported, not counted
                failures.append({"repo": repo.label, "commit": case["commit"], "error": str(e)})
            done += 1
            if done % 25 == 0 or done == len(cases):
                print(f"replay-bench: {done}/{len(cases)} commits", file=sys.stderr, flush=True)
    results.sort(key=lambda r: (r["repo"], r["commit"], r["context"], r["binary"] or "~",
                                r["mode"]))
    return results, failures


def tool_versions(binaries):
    versions = {}
    for label, path in binaries:
        versions[label] = run([path, "--version"])[1].decode().strip()
    versions["git"] = run(["git", "--version"])[1].decode().strip()
    if shutil.which("patch"):
        versions["patch"] = run(["patch", "--version"])[1].decode().split("\n", 1)[0]
    return versions


def main(argv):
    global RUN_TIMEOUT
    args = parse_args(argv)
    RUN_TIMEOUT = args.timeout
    if shutil.which("git") is None:
        print("replay-bench: SKIPPED (git not found)")
        return 0 if args.skip_if_unavailable else 2
    binaries = [(args.label, os.path.abspath(args.apply_patch))]
    if args.compare:
        binaries.append((args.compare_label, os.path.abspath(args.compare)))
    for _, path in binaries:
        if not os.access(path, os.X_OK):
            raise SystemExit(f"replay-bench: {path} is not an executable (build it first)")
    work_dir(args)
    started = time.monotonic()
    try:
        repos = [Repo(spec, args.work, args.rev) for spec in args.repos]
        why = unavailable(args, repos)
        if why:
            print(f"replay-bench: SKIPPED ({why})")
            return 0 if args.skip_if_unavailable else 2
        cases, skipped = select_all(repos, args)
        results, failures = replay_all(cases, args, binaries)
    finally:
        if not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)
    elapsed = time.monotonic() - started
    meta = {"seed": args.seed, "min_back": args.min_back, "max_back": args.max_back,
            "contexts": args.context, "modes": args.modes, "seconds": round(elapsed, 1),
            "binaries": dict(binaries), "versions": tool_versions(binaries),
            "repos": {r.label: {"path": r.path, "head": r.head} for r in repos},
            "skipped": skipped, "failed_to_prepare": failures}
    with open(args.json, "w") as f:
        json.dump({"meta": meta, "runs": results}, f, indent=1)
    if args.only:
        print_details(results)
        if args.keep:
            print(f"scratch trees kept under {args.work}")
    print(f"\nReplay of {len({(r['repo'], r['commit']) for r in results})} commits "
          f"({', '.join(f'{r.label} {r.head[:12]}' for r in repos)}; seed {args.seed}; "
          f"{elapsed:.0f} s)\n")
    print(f"Commits per repository: {per_repo(results)}\n")
    for context in args.context:
        print(table(results, binaries, args.modes, context) + "\n")
    for line in notable(results):
        print(line)
    for f in failures:
        print(f"- not replayed: {f['repo']}:{f['commit'][:12]}: {f['error']}")
    print(f"\nEvery run: {args.json} (replay one commit with --only REPO:COMMIT --keep)")
    if args.fail_on_wrong:
        ours = [r for r in results if r["binary"] == args.label]
        bad = sum(1 for r in ours if r["outcome"] in ("wrong", "half-applied"))
        # The plain closing line a CI reader counts: apply-patch runs that were not wrong.
        print(f"replay-bench: {len(ours) - bad} passed, {bad} failed")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
