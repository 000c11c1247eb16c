"""Shared fixtures: a private HOME, a git project, and a runner for the real hook
entry script (`hook_runner.HookRunner`). No test touches the real `~/.claude`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hook_runner import HookRunner


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC in every test (texts for people show local times), unless
    a test asks for `far_timezone`."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def far_timezone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local time 5:30 ahead of UTC, named IST (a POSIX TZ string: no tz database)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME; `~/.claude` inside it does not exist yet."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def state_dir(home: Path) -> Path:
    return home / ".claude"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project (a directory holding `.git/`), symlinks resolved."""
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return Path(os.path.realpath(path))


@pytest.fixture
def run_hook(home: Path, project: Path) -> HookRunner:
    return HookRunner(home, project)
