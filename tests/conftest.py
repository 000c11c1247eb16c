"""Shared fixtures: a private HOME, a git project, and a runner for the real hook
entry script (`hook_runner.HookRunner`). No test touches the real `~/.claude`.
Under pytest-xdist the suite runs on the schedule `suite_schedule` describes."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hook_runner import HookRunner

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler import LoadScopeScheduling


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadScopeScheduling | None:
    """The suite's schedule (`suite_schedule`) for `-n N`; any other `--dist` is xdist's."""
    if config.getoption("dist") != "load":
        return None
    from suite_schedule import SuiteScheduling

    return SuiteScheduling(config, log)


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
