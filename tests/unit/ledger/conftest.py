"""Fixtures for the remote-ledger tests: a bare remote reached through `file://`
or a `git daemon` on 127.0.0.1, and machines cloned from it (`ledger_machines`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger_machines import Daemon, Machine, bare


class World:
    """One shared remote and the machines that clone it."""

    def __init__(self, tmp: Path, daemon: Daemon | None) -> None:
        self.tmp = tmp
        self.daemon = daemon
        base = daemon.base if daemon is not None else tmp
        self.remote = bare(base / f"remote-{os.urandom(4).hex()}.git")
        self.url = daemon.url(self.remote) if daemon is not None else f"file://{self.remote}"
        self.transport = "daemon" if daemon is not None else "file"

    def machine(self, name: str) -> Machine:
        return Machine(self.tmp, name, self.url)


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
