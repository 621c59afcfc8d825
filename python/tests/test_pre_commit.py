"""The pre-commit framework with the `apply-patch-check-patches-py` hook of this repository's
.pre-commit-hooks.yaml (`language: python`): pre-commit installs it from the wheel, with no
Rust toolchain on PATH, and the hook passes on good patches and fails on a stale one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, VENV_BIN, git

HOOK = "apply-patch-check-patches-py"
RUST_TOOLS = ("cargo", "rustc", "rustup")


def path_without_rust() -> str:
    """PATH with every folder that holds a Rust tool left out, the venv's bin first."""
    kept = [str(VENV_BIN)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and not any((Path(entry) / tool).exists() for tool in RUST_TOOLS):
            kept.append(entry)
    return os.pathsep.join(kept)


def diff(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


@pytest.fixture
def hooks_repo(tmp_path: Path) -> tuple[Path, str]:
    """A git repository holding this work tree's hook definition and the pyproject.toml that
    pre-commit installs with `pip install .`, committed (pre-commit clones a revision)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in (".pre-commit-hooks.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, hooks / name)
    git(hooks, "init", "-q", "-b", "main")
    git(hooks, "add", "-A")
    git(hooks, "commit", "-q", "-m", "hooks")
    return hooks, git(hooks, "rev-parse", "HEAD").strip()


@pytest.fixture
def project(tmp_path: Path, hooks_repo: tuple[Path, str]) -> Path:
    """A throwaway repository using the hook, with one good patch in patches/."""
    hooks, rev = hooks_repo
    root = tmp_path / "project"
    (root / "patches").mkdir(parents=True)
    (root / "a.txt").write_text("one\n")
    (root / "patches" / "0001-one.patch").write_text(diff("a.txt", "one", "uno"))
    (root / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hooks}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        f"      - id: {HOOK}\n"
        "        args: [patches/]\n"
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    return root


def pre_commit(root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    wheels = os.environ.get("APPLY_PATCH_WHEELS")
    if not wheels:
        pytest.skip("APPLY_PATCH_WHEELS (the folders holding the wheel) is not set")
    env = {
        **os.environ,
        "PATH": path_without_rust(),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        # The hook's environment installs the wheel just built, and nothing from an index.
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": wheels,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    env.pop("CARGO_HOME", None)
    env.pop("RUSTUP_HOME", None)
    return subprocess.run(
        [str(VENV_BIN / "pre-commit"), "run", "--all-files", "--color", "never"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )


def test_path_has_no_rust_toolchain() -> None:
    for tool in RUST_TOOLS:
        assert shutil.which(tool, path=path_without_rust()) is None
    assert shutil.which("git", path=path_without_rust())


def test_hook_passes_on_good_patches_and_fails_on_a_stale_one(
    project: Path, tmp_path: Path
) -> None:
    passed = pre_commit(project, tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "patches still apply to the staged tree" in passed.stdout
    assert "Passed" in passed.stdout

    # A second patch written against content the first one already replaced: stale.
    (project / "patches" / "0002-stale.patch").write_text(diff("a.txt", "one", "eins"))
    git(project, "add", "-A")
    failed = pre_commit(project, tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout
    assert "ok    patches/0001-one.patch" in failed.stdout
    assert "FAIL  patches/0002-stale.patch" in failed.stdout
