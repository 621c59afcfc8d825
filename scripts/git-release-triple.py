#!/usr/bin/env python3
"""Makes a real release-diff workload (a BEFORE tree, an AFTER tree and a diff) from a git
repository and two revisions, for scripts/bench-real.sh.

    scripts/git-release-triple.py REPO FROM TO OUT

writes OUT/before/, OUT/after/ and OUT/diff: a text diff with renames (`git diff -M
--full-index`), the form a release diff is mailed in and GNU patch reads. The trees are
written from the raw blobs (`git cat-file`), not by `git archive` or a checkout, which would
apply the repository's own attributes (eol=crlf, export-subst) and give bytes the diff does not
describe. Files GNU patch cannot take from a text diff are left out of the workload on both
sides: binary changes and submodule links keep their FROM state in AFTER and are not in the
diff. Nothing is written inside REPO (a bare mirror will do). Prints one line: the number of
files the diff touches and its size.
"""
import os
import subprocess
import sys
import threading


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True,
                          stdout=subprocess.PIPE).stdout


def entries(repo, rev):
    """path -> (mode, oid) for every blob and link in REV's tree."""
    out = {}
    for record in git(repo, "ls-tree", "-r", "-z", rev).split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, _kind, oid = meta.split()
            out[path.decode()] = (mode.decode(), oid.decode())
    return out


def write_tree(repo, tree, out):
    """Writes TREE's blobs under OUT, modes and symlinks as recorded; skips submodules."""
    blobs = [(p, m, o) for p, (m, o) in sorted(tree.items()) if m != "160000"]
    batch = subprocess.Popen(["git", "--git-dir", repo, "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # Fed from a thread: git answers while it reads, and a full pipe would stop both.
    def feed():
        batch.stdin.write("".join(o + "\n" for _, _, o in blobs).encode())
        batch.stdin.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    for path, mode, _oid in blobs:
        size = int(batch.stdout.readline().split()[2])
        data = batch.stdout.read(size)
        batch.stdout.read(1)
        target = os.path.join(out, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if mode == "120000":
            os.symlink(data, target)
            continue
        with open(target, "wb") as f:
            f.write(data)
        os.chmod(target, 0o755 if mode == "100755" else 0o644)
    feeder.join()
    if batch.wait() != 0:
        sys.exit("git-release-triple: git cat-file failed")


def left_out(repo, old, new):
    """(old path, new path) of each change a text diff cannot carry (binary, submodule)."""
    fields = git(repo, "diff", "-M", "--numstat", "-z", old, new).split(b"\0")
    skipped, i = [], 0
    while i < len(fields) and fields[i]:
        added, deleted, path = fields[i].split(b"\t", 2)
        if path:
            pair, i = (path, path), i + 1
        else:
            pair, i = (fields[i + 1], fields[i + 2]), i + 3
        if added == b"-" and deleted == b"-":
            skipped.append(tuple(p.decode() for p in pair))
    return skipped


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    repo, old, new, out = sys.argv[1:]
    before, after = entries(repo, old), entries(repo, new)
    skipped = left_out(repo, old, new)
    for path in set(before) | set(after):
        if before.get(path, ("",))[0] == "160000" or after.get(path, ("",))[0] == "160000":
            skipped.append((path, path))
    for old_path, new_path in skipped:
        after.pop(new_path, None)
        if old_path in before:
            after[old_path] = before[old_path]
    write_tree(repo, before, os.path.join(out, "before"))
    write_tree(repo, after, os.path.join(out, "after"))
    excludes = [":(exclude,literal)" + p for pair in skipped for p in set(pair)]
    diff = git(repo, "diff", "-M", "--full-index", old, new, "--", ".", *excludes)
    with open(os.path.join(out, "diff"), "wb") as f:
        f.write(diff)
    files = diff.count(b"\ndiff --git ") + diff.startswith(b"diff --git ")
    print("%s..%s: %d files, %.1f MB diff, %d left out" % (old, new, files, len(diff) / 1e6,
                                                           len(skipped)))


if __name__ == "__main__":
    main()
