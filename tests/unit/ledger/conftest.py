"""Fixtures for the remote-ledger tests: a bare remote reached through `file://`
or a `git daemon` on 127.0.0.1, and machines cloned from it (`ledger_machines`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger_machines import Daemon, World


@pytest.fixture(scope="session")
def git_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    daemon = Daemon(tmp_path_factory.mktemp("daemon"))
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A remote reached through file://."""
    return World(tmp_path, None)


@pytest.fixture(params=["file", "daemon"])
def any_world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    """A remote reached through file://, then through git daemon."""
    if request.param == "file":
        return World(tmp_path, None)
    return World(tmp_path, request.getfixturevalue("git_daemon"))
