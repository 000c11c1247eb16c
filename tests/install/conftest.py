"""Fixtures for the tests that run the real ./install.sh.

Invariants:

* ``pip_from_wheelhouse`` is the environment under which install.sh's pip installs from a
  wheelhouse instead of the package index: ``PIP_NO_INDEX`` and ``PIP_FIND_LINKS``. The
  wheelhouse holds the wheels of the package's dependencies and of its build requirements,
  as pip resolves them from the index (PyPI, or what pip is configured with) once per test
  run, shared by every xdist worker of the run under a lock. Each install is still a fresh
  one: a new venv, the package built from the clone, every dependency installed into it.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def requirements() -> list[str]:
    """What install.sh's `pip install <clone>` fetches: the build requirements and the
    dependencies, as pyproject.toml names them."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [*doc["build-system"]["requires"], *doc["project"]["dependencies"]]


def build_wheelhouse(directory: Path) -> Path:
    """`directory`/wheels holding the wheels of :func:`requirements` (and theirs), built
    once: later calls, from any process, find it done."""
    wheels = directory / "wheels"
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "wheels.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not (directory / "wheels.done").exists():
            command = [sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check"]
            command += ["--quiet", "--wheel-dir", str(wheels), *requirements()]
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
            )
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
            (directory / "wheels.done").touch()
    finally:
        os.close(fd)
    return wheels


@pytest.fixture(scope="session")
def pip_from_wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for install.sh: its pip installs from this run's wheelhouse."""
    run_root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_root = run_root.parent  # the workers' common directory of this run
    wheels = build_wheelhouse(run_root / "pip")
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
