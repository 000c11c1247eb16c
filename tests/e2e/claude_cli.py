"""Install and drive the real, pinned ``claude`` CLI for end-to-end tests.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_CACHE``, default
  ``~/.cache/agent-hooks/e2e/claude-code-<version>``), never globally; an existing working install
  there is reused. Concurrent installers (pytest-xdist workers) serialise on a lock file
  (:mod:`.npm_cli` installs and checks).
* A binary is only returned after ``<binary> --version`` reports exactly the version asked for:
  :data:`CLAUDE_VERSION` (the pinned one every test runs) unless a test asks for another
  (:data:`CLAUDE_SKILL_VERSION`, the first with the ``PreSkillShellCommand`` event), each in
  its own prefix.
* ``run_claude`` builds the child environment from scratch: nothing from the developer's
  environment (``~/.claude``, ``ANTHROPIC_*``, proxies, ``CLAUDE_CONFIG_DIR``) leaks in, apart
  from what ``extra_env`` passes explicitly.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .npm_cli import DEFAULT_PATH_DIRS as DEFAULT_PATH_DIRS
from .npm_cli import (
    CliResult,
    CliUnavailable,
    NpmCli,
    client_env,
    python_bin_dir,
    run_in_session,
    search_path,
)

CLAUDE_VERSION = "2.1.328"
CLAUDE_SKILL_VERSION = "2.1.332"  # the first with PreSkillShellCommand (skill shell lines)
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CACHE_ENV = "AGENT_HOOKS_E2E_CACHE"
DUMMY_API_KEY = "sk-ant-e2e-dummy-key"


class ClaudeUnavailable(CliUnavailable):
    """The pinned ``claude`` cannot be installed or run here; ``reason`` says why."""


class ClaudeResult(CliResult):
    """A finished ``claude`` run; ``duration`` is its wall-clock time in seconds."""


def _probe_env(scratch: Path) -> dict[str, str]:
    """The environment of ``claude --version``: no update check, no other traffic."""
    return {
        "PATH": search_path(),
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


# Binaries to try, best first. ``node_modules/.bin/claude`` points at the wrapper's
# ``bin/claude.exe``, which the package's postinstall replaces with the native binary. When npm
# skipped that script (npm 11 asks for ``allowScripts``) the file is still a small stub, so the
# native binary in the platform package (``@anthropic-ai/claude-code-<platform>/claude``) is tried
# next; it needs no Node.js at all.
CLAUDE = NpmCli(
    name="claude",
    package=CLAUDE_PACKAGE,
    version=CLAUDE_VERSION,
    cache_env=CACHE_ENV,
    cache_name="claude-code",
    unavailable=ClaudeUnavailable,
    probe_env=_probe_env,
    reports=lambda words, version: bool(words) and words[0] == version,
    not_reported="no binary there reports version {version} (unsupported platform?)",
    native_glob="@anthropic-ai/claude-code-*/claude",
)


def cache_dir(version: str = CLAUDE_VERSION) -> Path:
    """The npm prefix the CLI at `version` is installed into (``AGENT_HOOKS_E2E_CACHE`` moves
    the pinned version's)."""
    return CLAUDE.cache_dir(version)


def ensure_claude(version: str = CLAUDE_VERSION) -> str:
    """Path of a working ``claude`` binary at `version` (the pinned one by default), installed
    first if needed.

    Raises :class:`ClaudeUnavailable` when npm is missing, the install fails (e.g. offline) or the
    installed binary does not run.
    """
    return CLAUDE.ensure(version)


# --------------------------------------------------------------------------- running


def claude_env(
    *,
    home: Path,
    server_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of a ``claude`` run (nothing inherited from ours).

    ``PATH`` holds this interpreter's ``bin`` directory first (so hooks find ``python3`` and the
    project's console scripts of the dev venv), then the system directories. ``TMPDIR`` points
    inside ``home`` because the client writes per-session task files under ``$TMPDIR/claude-<uid>``.
    ``IS_SANDBOX=1`` lets ``--permission-mode bypassPermissions`` run as root.
    """
    return client_env(
        home=home,
        tmp=home / "tmp",
        path=search_path(python_bin_dir()),
        client={
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "IS_SANDBOX": "1",
        },
        agent_name=agent_name,
        extra_env=extra_env,
    )


def run_claude(
    prompt: str,
    *,
    cwd: Path | str,
    home: Path | str,
    server_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    timeout: float = 60,
    binary: str | None = None,
    on_start: Callable[[subprocess.Popen[str]], object] | None = None,
) -> ClaudeResult:
    """Run ``claude -p PROMPT --permission-mode bypassPermissions *args`` in ``cwd``.

    ``args`` carries extra flags such as ``--continue`` or ``--plugin-dir DIR``. ``on_start`` is
    called with the process as soon as it started (its ``pid`` is the client's ``CLAUDE_PID``):
    a test may signal it from another thread; ``run_claude`` still reaps it. The process runs
    in its own session with stdin closed; on timeout its whole process group (hooks included) is
    killed and :class:`subprocess.TimeoutExpired` is raised. A non-zero exit is returned, not
    raised: callers assert on ``returncode``.
    """
    command = [
        binary or ensure_claude(),
        "-p",
        prompt,
        "--permission-mode",
        "bypassPermissions",
        *args,
    ]
    env = claude_env(
        home=Path(home), server_url=server_url, agent_name=agent_name, extra_env=extra_env
    )
    return run_in_session(
        command, cwd=cwd, env=env, timeout=timeout, on_start=on_start, result=ClaudeResult
    )


# --------------------------------------------------------------------------- configuration


def write_user_settings(home: Path, settings: Mapping[str, object]) -> Path:
    """Write ``settings`` as ``<home>/.claude/settings.json`` (the user scope) and return its path.

    Hooks go under ``settings["hooks"]``:
    ``{Event: [{"matcher": M, "hooks": [{"type": "command", "command": C, "timeout": S}]}]}``.
    """
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path


def command_hooks(
    command: str, events: Sequence[str], *, matcher: str | None = None, timeout: int = 30
) -> dict[str, list[dict[str, object]]]:
    """A ``hooks`` mapping that runs the same shell ``command`` for each of ``events``."""
    group: dict[str, object] = {
        "hooks": [{"type": "command", "command": command, "timeout": timeout}]
    }
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group] for event in events}
