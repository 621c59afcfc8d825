"""The Python API (`apply_patch.apply`, `read`, `undo`, `ApplyPatchError`) on real trees."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import apply_patch
from apply_patch import ApplyPatchError
from conftest import VENV_BIN, agent_patch, git


def test_the_installed_wheel_is_the_one_tested() -> None:
    # Not the sources in python/python: the package comes from the venv's site-packages.
    assert Path(apply_patch.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    assert VENV_BIN.resolve().is_relative_to(Path(sys.prefix).resolve())


def test_apply_changes_the_file_and_reports_like_json(tree: Path) -> None:
    report = apply_patch.apply(tree, agent_patch("a.txt", "two", "TWO"))
    assert (tree / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert report["ok"] is True and report["error"] is None
    assert report["warnings"] == []
    [f] = report["files"]
    assert f["path"] == "a.txt" and f["op"] == "modify"
    assert f["hunks"] == [{"hunk": 1, "line": 2, "level": "exact", "fuzz": 0, "offset": None}]
    assert len(f["new_sha256"]) == 64


def test_patch_as_bytes_and_as_path(tree: Path, tmp_path: Path) -> None:
    apply_patch.apply(str(tree), agent_patch("a.txt", "one", "1").encode())
    patch_file = tmp_path / "p.patch"
    patch_file.write_text(agent_patch("a.txt", "three", "3"))
    apply_patch.apply(tree, patch_file)
    assert (tree / "a.txt").read_text() == "1\ntwo\n3\n"


def test_a_patch_path_is_read_by_the_command_lines_reader(tree: Path, tmp_path: Path) -> None:
    # A FIFO with no writer hung Python's open(); a folder raised IsADirectoryError.
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "fifo.patch"
    os.mkfifo(fifo)
    for path, what in ((fifo, "FIFO"), (tmp_path, "folder")):
        with pytest.raises(ApplyPatchError) as caught:
            apply_patch.apply(tree, path)
        assert caught.value.code == "usage", caught.value.message
        assert what in caught.value.message, caught.value.message
    missing = tmp_path / "missing.patch"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, missing)
    assert caught.value.code == "usage"


def test_refusal_raises_with_code_and_changes_nothing(tree: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n"
        "*** Update File: src/app.py\n@@\n-    return 42\n+    return 0\n*** End Patch\n"
    )
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, patch)
    e = caught.value
    assert e.code == "context_not_found"
    assert e.exit_status == 1
    assert "src/app.py" in e.message and e.details["path"] == "src/app.py"
    assert e.details["hunk"] == 1
    assert e.hint
    assert e.report["ok"] is False and e.report["error"] is e.details
    assert str(e).startswith("context_not_found: ")
    # All or nothing: the hunk that did match was not written either.
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_ambiguity_is_its_own_code(tree: Path) -> None:
    (tree / "a.txt").write_text("x\nsame\nx\nsame\n")
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "same", "other"))
    assert caught.value.code == "ambiguous_match"


def test_check_plans_without_writing(tree: Path) -> None:
    report = apply_patch.apply(tree, agent_patch("a.txt", "two", "TWO"), check=True, diff=True)
    assert report["ok"] is True and report["files"][0]["path"] == "a.txt"
    assert "+TWO" in report["diff"]
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "four", "4"), check=True)
    assert caught.value.code == "context_not_found"


def test_usage_errors(tree: Path) -> None:
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "two", "2"), format="yaml")
    assert caught.value.code == "usage" and caught.value.exit_status == 2
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree / "missing", agent_patch("a.txt", "two", "2"))
    assert caught.value.code == "usage"
    with pytest.raises(TypeError):
        apply_patch.apply(tree, 42)  # type: ignore[arg-type]


def test_index_applies_to_work_tree_and_index(repo: Path) -> None:
    diff = (
        "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n"
        "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    )
    report = apply_patch.apply(repo, diff, index=True)
    assert report["files"][0]["path"] == "a.txt"
    assert (repo / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert git(repo, "diff", "--cached", "--name-only").split() == ["a.txt"]
    assert git(repo, "diff", "--name-only") == ""  # index and work tree agree


def test_index_refuses_a_file_that_differs_from_the_index(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("def main():\n    return 1\n# local\n")
    patch = agent_patch("src/app.py", "    return 1", "    return 2")
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(repo, patch, index=True)
    assert caught.value.code == "index_mismatch"
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_cached_touches_only_the_index(repo: Path) -> None:
    apply_patch.apply(repo, agent_patch("a.txt", "two", "TWO"), cached=True)
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert git(repo, "show", ":a.txt") == "one\nTWO\nthree\n"


def test_read_serves_lines_and_the_version(tree: Path) -> None:
    view = apply_patch.read(tree, "a.txt", lines="2:3")
    assert view["lines"] == ["two", "three"]
    assert (view["start_line"], view["end_line"], view["total_lines"]) == (2, 3, 3)
    assert view["line_ending"] == "lf" and view["final_newline"] is True
    assert len(view["base"]) == 16 and view["sha256"].startswith(view["base"])
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.read(tree, "nope.txt")
    assert caught.value.code == "file_not_found"


def test_read_around_serves_the_enclosing_function(tree: Path) -> None:
    (tree / "f.rs").write_text("use x;\n\nfn f() {\n    g(1);\n}\n")
    view = apply_patch.read(tree, "f.rs", around=4)
    assert view["lines"] == ["fn f() {", "    g(1);", "}"]
    assert (view["start_line"], view["end_line"]) == (3, 5)
    assert view["around"]["line"] == 4 and view["around"]["kind"] == "function"
    assert view["base"] == apply_patch.read(tree, "f.rs")["base"]
    for bad in ({"around": 0}, {"around": 4, "lines": "1:2"}):
        with pytest.raises(ApplyPatchError) as caught:
            apply_patch.read(tree, "f.rs", **bad)
        assert caught.value.code == "usage", bad


def test_undo_reverts_the_last_patch(tree: Path) -> None:
    assert apply_patch.undo(tree)["undone"] is None
    apply_patch.apply(tree, agent_patch("a.txt", "two", "TWO"))
    undone = apply_patch.undo(tree)
    assert undone["undone"] and undone["files"] == ["a.txt"]
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_window_is_passed_through(tree: Path) -> None:
    # `window=0` is refused as the command line refuses `--window 0`; others are accepted.
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, agent_patch("a.txt", "two", "2"), window=0)
    assert caught.value.code == "usage" and "window" in caught.value.message
    assert apply_patch.apply(tree, agent_patch("a.txt", "two", "2"), window=5)["ok"]


@pytest.mark.skipif(sys.platform == "win32", reason="no RLIMIT_NOFILE on Windows")
def test_run_cli_leaves_the_hosts_open_file_limit_alone(tree: Path) -> None:
    # A library call must not change its host's limits (the binary and the console command
    # raise their own). In a child interpreter with a soft limit below the hard one, so that
    # a raise would show, and so that this test process keeps its own limit.
    import subprocess

    script = (
        "import resource, sys, apply_patch\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "low = (hard - 1) if hard != resource.RLIM_INFINITY else 4096\n"
        "low = min(low, soft) if soft != resource.RLIM_INFINITY else low\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))\n"
        "status = apply_patch.run_cli(['apply-patch', '--root', sys.argv[1], 'recover'])\n"
        "print(status, low, resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tree)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    status, low, after = done.stdout.split()[-3:]
    assert status == "0"
    assert after == low, f"run_cli changed the soft limit from {low} to {after}"


def test_fuzz_is_passed_through(tree: Path) -> None:
    # The outer context lines `zero` and `four` are not in the file: found only with fuzz 1
    # (the default 2), refused with fuzz=0.
    (tree / "f.txt").write_text("x\na\nb\nc\nd\ny\n")
    patch = (
        "*** Begin Patch\n*** Update File: f.txt\n@@\n zero\n a\n-b\n+B\n c\n four\n"
        "*** End Patch\n"
    )
    with pytest.raises(ApplyPatchError) as caught:
        apply_patch.apply(tree, patch, fuzz=0)
    assert caught.value.code == "context_not_found"
    report = apply_patch.apply(tree, patch)
    assert report["files"][0]["hunks"][0]["fuzz"] == 2
    assert [w["code"] for w in report["warnings"]] == ["fuzz"]
    assert (tree / "f.txt").read_text() == "x\na\nB\nc\nd\ny\n"


def test_search_replace_blocks_with_path_and_base(tree: Path) -> None:
    blocks = "<<<<<<< SEARCH\ntwo\n=======\n2\n>>>>>>> REPLACE\n"
    report = apply_patch.apply(tree, blocks, path="a.txt")
    assert (tree / "a.txt").read_text() == "one\n2\nthree\n"
    assert report["files"][0]["path"] == "a.txt"
    # The path is taken exactly: never guessed.
    with pytest.raises(ApplyPatchError) as e:
        apply_patch.apply(tree, "<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n", path="b.txt")
    assert e.value.code == "file_not_found"
    base = apply_patch.read(tree, "a.txt")["base"]
    hinted = "<<<<<<< SEARCH\n:start_line:1\n-------\none\n=======\n1\n>>>>>>> REPLACE\n"
    apply_patch.apply(tree, hinted, path="a.txt", base=base, format="blocks")
    assert (tree / "a.txt").read_text() == "1\n2\nthree\n"
    with pytest.raises(ApplyPatchError) as e:
        apply_patch.apply(tree, hinted, base=base)
    assert e.value.code == "usage"
