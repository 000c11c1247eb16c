"""The gate's tests' common ground: a project (a `.git` directory with a HEAD, `src/`
and `docs/`; its real path), another repository beside it (`other`), and the private
state directory of a HOME beside them. A test
file may define its own (a real git repository: test_shell_gate_git.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> str:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "src").mkdir()
    (path / "docs").mkdir()
    return os.path.realpath(path)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return os.path.realpath(tmp_path) + "/home/.claude"


@pytest.fixture
def other(tmp_path: Path) -> str:
    path = tmp_path / "other"
    (path / ".git").mkdir(parents=True)
    (path / "src").mkdir()
    return os.path.realpath(path)
