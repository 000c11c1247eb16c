"""Install agent-hooks into a test HOME with the real ``./install.sh``, as a user would.

Invariants:

* ``install.sh`` runs unmodified, from this checkout, with ``HOME`` set to the test's home, so the
  hooks land in ``<home>/.claude/settings.json`` and the CLI link in ``<home>/.local/bin``; only
  ``AGENT_HOOKS_HOME`` (where the venv lives) points at a cache of this checkout's, so the slow pip
  part is paid once and later runs find it up to date (install.sh's own check).
* Installs into one cache are serialised by a ``flock`` (pytest-xdist workers, several developers).
* Nothing from the developer's environment leaks into install.sh or the agents: ``PATH`` is built
  from scratch. The agents' ``PATH`` starts with ``<home>/.local/bin`` and does not hold the dev
  venv, so every ``agent-hooks`` an agent runs is the installed one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .claude_cli import DEFAULT_PATH_DIRS

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "install.sh"
DATA_ENV = "AGENT_HOOKS_E2E_DATA"
_INSTALL_TIMEOUT = 600


class InstallFailed(AssertionError):
    """``install.sh`` exited non-zero; the message holds its output."""


def data_home() -> Path:
    """The ``AGENT_HOOKS_HOME`` shared by all test installs of this checkout (the venv lives
    there).

    ``AGENT_HOOKS_E2E_DATA`` overrides it; point it at an empty directory to watch a from-scratch
    install. The default sits beside the cached CLI and survives between test runs; like the
    default ``${XDG_DATA_HOME}/agent-hooks`` its last component is ``agent-hooks``. It is one per
    checkout: install.sh reinstalls the venv whenever the sources differ, so checkouts sharing
    one (several worktrees' e2e runs on one machine) replaced each other's package under running
    hooks, which then failed open and took no lease.
    """
    configured = os.environ.get(DATA_ENV)
    if configured:
        return Path(configured).expanduser()
    major, minor = sys.version_info[:2]
    cache = Path.home() / ".cache" / "agent-hooks" / "e2e"
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    return cache / f"data-py{major}.{minor}-{checkout}" / "agent-hooks"


@dataclass(frozen=True)
class Installation:
    """agent-hooks as installed into one test HOME."""

    home: Path
    data_home: Path
    output: str

    @property
    def state_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def bin_dir(self) -> Path:
        return self.home / ".local" / "bin"

    @property
    def settings_path(self) -> Path:
        return self.state_dir / "settings.json"

    def hook_argv(self, client: str) -> list[str]:
        """The installed hook command's argv prefix for `client`: ``[python, "-IS", entry,
        client]`` (the client appends its event), as the opencode plugin and Qwen Code's
        settings run it."""
        python = self.data_home / "venv" / "bin" / "python"
        return [str(python), "-IS", str(self.data_home / "hooks" / "entry.pyc"), client]

    @property
    def log_path(self) -> Path:
        return self.state_dir / "agent-hooks.log"

    def agent_path(self) -> str:
        """``PATH`` for claude and its tools: the installed CLI first, then the system."""
        return os.pathsep.join([str(self.bin_dir), *DEFAULT_PATH_DIRS])

    def claude_env(self, *, plugin: bool = False) -> dict[str, str]:
        """``extra_env`` for ``run_claude``. The plugin form's ``hooks/run`` finds the venv through
        ``AGENT_HOOKS_HOME``; the settings form needs nothing but the CLI on ``PATH``."""
        env = {"PATH": self.agent_path()}
        if plugin:
            env["AGENT_HOOKS_HOME"] = str(self.data_home)
        return env

    def state(self, agent: str) -> dict[str, Any]:
        """The agent's state file, parsed (fails the test when it is missing)."""
        doc: dict[str, Any] = json.loads((self.state_dir / f"state-{agent}.json").read_text())
        return doc

    def log_lines(self) -> list[str]:
        if not self.log_path.exists():
            return []
        return self.log_path.read_text(encoding="utf-8").splitlines()

    def cli(
        self, *args: str, cwd: Path, agent_name: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the installed ``agent-hooks`` as a person in a terminal of this HOME would."""
        env = {"HOME": str(self.home), "PATH": self.agent_path(), "LANG": "C.UTF-8"}
        if agent_name is not None:
            env["AGENT_NAME"] = agent_name
        done = subprocess.run(
            [str(self.bin_dir / "agent-hooks"), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"agent-hooks {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout}{done.stderr}"
            )
        return done

    def cli_json(self, *args: str, cwd: Path, agent_name: str | None = None) -> Any:
        return json.loads(self.cli(*args, "--json", cwd=cwd, agent_name=agent_name).stdout)


def install(
    home: Path, data: Path, *, settings: bool = True, clients: str | None = None
) -> Installation:
    """Run ``install.sh`` (``--no-settings`` unless ``settings``; ``--clients CLIENTS`` when
    given, e.g. ``claude,codex,gemini``) for ``home``; raise :class:`InstallFailed` with its
    output when it fails."""
    data.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "AGENT_HOOKS_HOME": str(data),
        # python3 on PATH is the interpreter running the tests (>= 3.11, like the package needs)
        "PATH": os.pathsep.join(
            dict.fromkeys([str(Path(sys.executable).parent), *DEFAULT_PATH_DIRS])
        ),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
    }
    command = ["bash", str(INSTALL_SCRIPT), *([] if settings else ["--no-settings"])]
    command += ["--clients", clients] if clients else []
    with _lock(data / ".e2e-install.lock"):
        done = subprocess.run(
            command,
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise InstallFailed(f"`{' '.join(command)}` exited {done.returncode}:\n{output}")
    return Installation(home=home, data_home=data, output=output)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
