"""Shared helpers of the wheel's tests. They run against the *installed* wheel in a fresh
virtual environment (scripts/python-test.sh), as its users would use it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The virtual environment the wheel is installed in: its `bin` holds `apply-patch`.
VENV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def agent_patch(path: str, old: str, new: str) -> str:
    """A one-hunk agent patch replacing the line `old` of `path` by `new`."""
    return (
        "*** Begin Patch\n"
        f"*** Update File: {path}\n"
        "@@\n"
        f"-{old}\n"
        f"+{new}\n"
        "*** End Patch\n"
    )


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, env=env, check=True, capture_output=True, text=True,
    )
    return done.stdout


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small project: `a.txt` (three lines) and `src/app.py`."""
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    return root


@pytest.fixture
def repo(tree: Path) -> Path:
    """`tree` as a git repository with everything committed."""
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "init")
    return tree
