"""The installed `apply-patch` command and `python -m apply_patch`: the command line, run
by the wheel with no Rust toolchain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apply_patch
from conftest import REPO, VENV_BIN, agent_patch

COMMAND = str(VENV_BIN / "apply-patch")


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], input=stdin, capture_output=True, text=True, timeout=120)


def test_version_matches_the_module_and_the_crate() -> None:
    out = run(COMMAND, "--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"apply-patch {apply_patch.__version__}"
    cargo_toml = (REPO / "Cargo.toml").read_text()
    assert f'\nversion = "{apply_patch.__version__}"\n' in cargo_toml


def test_the_wheel_carries_both_licence_texts() -> None:
    # MIT and Apache-2.0 both ask for their text to go with every copy of the binary.
    from importlib import metadata

    dist = metadata.distribution("apply-patch")
    assert sorted(dist.metadata.get_all("License-File") or []) == ["LICENSE-APACHE", "LICENSE-MIT"]
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        shipped = [f for f in dist.files or [] if f.name == name]
        assert shipped, f"{name} is not in the wheel"
        assert shipped[0].read_text() == (REPO / name).read_text()


def test_applies_a_patch_file_and_prints_json(tree: Path, tmp_path: Path) -> None:
    patch = tmp_path / "p.patch"
    patch.write_text(agent_patch("a.txt", "two", "TWO"))
    out = run(COMMAND, "--root", str(tree), "--json", str(patch))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True and report["files"][0]["path"] == "a.txt"
    assert (tree / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_reads_the_patch_from_stdin(tree: Path) -> None:
    out = run(COMMAND, "--root", str(tree), stdin=agent_patch("a.txt", "one", "ONE"))
    assert out.returncode == 0, out.stderr
    assert "a.txt" in out.stdout
    assert (tree / "a.txt").read_text() == "ONE\ntwo\nthree\n"


def test_refusal_exit_status_and_the_same_report_as_the_api(tree: Path) -> None:
    stale = agent_patch("a.txt", "four", "4")
    out = run(COMMAND, "--root", str(tree), "--check", "--json", stale)
    assert out.returncode == 1
    cli_report = json.loads(out.stdout)
    assert cli_report["error"]["code"] == "context_not_found"
    try:
        apply_patch.apply(tree, stale, check=True)
    except apply_patch.ApplyPatchError as e:
        assert e.report == cli_report
    else:
        raise AssertionError("the API applied what the command refused")


def test_human_refusal_goes_to_stderr(tree: Path) -> None:
    out = run(COMMAND, "--root", str(tree), agent_patch("a.txt", "four", "4"))
    assert out.returncode == 1
    assert "context_not_found" in out.stderr or "context not found" in out.stderr
    assert out.stdout == ""


def test_usage_error_exit_status() -> None:
    out = run(COMMAND, "--no-such-flag")
    assert out.returncode == 2
    assert "--no-such-flag" in out.stderr


def test_python_dash_m_runs_the_cli(tree: Path) -> None:
    out = run(sys.executable, "-m", "apply_patch", "read", "--root", str(tree), "--json", "a.txt")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["lines"] == ["one", "two", "three"]
    helped = run(sys.executable, "-m", "apply_patch", "--help")
    assert helped.returncode == 0 and "Usage: apply-patch" in helped.stdout


def test_undo_from_the_command(tree: Path) -> None:
    assert run(COMMAND, "--root", str(tree), agent_patch("a.txt", "two", "2")).returncode == 0
    out = run(COMMAND, "undo", "--root", str(tree), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["files"] == ["a.txt"]
    assert (tree / "a.txt").read_text() == "one\ntwo\nthree\n"
