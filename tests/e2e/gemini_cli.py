"""Install and drive the real, pinned ``gemini`` CLI (Gemini CLI) for end-to-end tests.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_GEMINI_CACHE``,
  default ``~/.cache/agent-hooks/e2e/gemini-cli-<version>``), never globally; an existing working
  install there is reused. Concurrent installers (pytest-xdist workers) serialise on a lock file.
* A binary is only returned after ``<binary> --version`` reports exactly :data:`GEMINI_VERSION`
  (run with a Node.js of at least :data:`NODE_MAJOR_MIN`, the package's ``engines``).
* ``run_gemini`` builds the child environment from scratch: nothing from the developer's
  environment (``~/.gemini``, ``GEMINI_*``/``GOOGLE_*`` variables, proxies) leaks in, apart from
  what ``extra_env`` passes explicitly. It talks to the mock only (``GOOGLE_GEMINI_BASE_URL``).
* The settings a run needs (API-key auth, no update checks, no usage statistics, no telemetry:
  ``RUN_SETTINGS``) are merged into the test HOME's ``~/.gemini/settings.json`` key by key: every
  other key there — above all the ``hooks`` an installer wrote — stays as it was, and a file that
  already holds them is not rewritten. Folder trust is granted the same way, in
  ``~/.gemini/trustedFolders.json``, for the run's ``cwd`` only (``trust=False`` leaves it alone).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .npm_cli import (
    CliResult,
    CliUnavailable,
    NpmCli,
    capture,
    client_env,
    python_bin_dir,
    run_in_session,
    search_path,
)

GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE = "@google/gemini-cli"
CACHE_ENV = "AGENT_HOOKS_E2E_GEMINI_CACHE"
DUMMY_API_KEY = "gemini-e2e-dummy-key"
NODE_MAJOR_MIN = 20
FAST_MODEL = "gemini-2.5-flash"  # ``-m`` with it skips the model router's request
_VERSION_TIMEOUT = 90

# Merged into ~/.gemini/settings.json before each run (PROTOCOL.md §1): without the auth type the
# base-URL variable makes the CLI pick "gateway" auth, which -p mode rejects (exit 41).
RUN_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
TRUST_FOLDER = "TRUST_FOLDER"


class GeminiUnavailable(CliUnavailable):
    """The pinned ``gemini`` cannot be installed or run here; ``reason`` says why."""


class GeminiResult(CliResult):
    """A finished ``gemini`` run; ``duration`` is its wall-clock time in seconds and ``pid`` the
    launcher's process id (the worker that runs hooks is its child)."""


@functools.cache
def node_dir() -> str:
    """The directory of the ``node`` the CLI runs on (its ``#!`` line is ``/usr/bin/env node``).

    Raises :class:`GeminiUnavailable` when there is none or it is older than the package needs.
    """
    node = shutil.which("node")
    if node is None:
        raise GeminiUnavailable("node is not on PATH; Gemini CLI needs Node.js >= 20")
    try:
        done = capture([node, "--version"], timeout=_VERSION_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GeminiUnavailable(f"`{node} --version` failed: {exc}") from exc
    version = done.stdout.strip().lstrip("v")
    major = version.split(".", 1)[0]
    if done.returncode != 0 or not major.isdigit() or int(major) < NODE_MAJOR_MIN:
        raise GeminiUnavailable(
            f"{node} is version {version or '?'}; Gemini CLI needs Node.js >= {NODE_MAJOR_MIN}"
        )
    return str(Path(node).parent)


def _probe_env(scratch: Path) -> dict[str, str]:
    """The environment of ``gemini --version``: Node.js first on ``PATH``."""
    return {"PATH": search_path(node_dir()), "HOME": str(scratch), "TMPDIR": str(scratch)}


# The one binary tried: ``node_modules/.bin/gemini`` (a link to the bundle's ``gemini.js``).
# npm 11 skips the install scripts of the optional ``node-pty``/``keytar``; the CLI works without
# them. Node.js is checked (``node_dir``) before anything else.
GEMINI = NpmCli(
    name="gemini",
    package=GEMINI_PACKAGE,
    version=GEMINI_VERSION,
    cache_env=CACHE_ENV,
    cache_name="gemini-cli",
    unavailable=GeminiUnavailable,
    probe_env=_probe_env,
    reports=lambda words, version: bool(words) and words[-1] == version,
    not_reported="its `gemini` does not report version {version}",
    probe_timeout=_VERSION_TIMEOUT,
    requires=node_dir,
)


def cache_dir() -> Path:
    """The npm prefix the pinned CLI is installed into."""
    return GEMINI.cache_dir()


def ensure_gemini() -> str:
    """Path of a working ``gemini`` at the pinned version, installed first if needed.

    Raises :class:`GeminiUnavailable` when Node.js or npm is missing or too old, the install
    fails (e.g. offline) or the installed CLI does not run.
    """
    return GEMINI.ensure()


# --------------------------------------------------------------------------- configuration


def _merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with every leaf of ``extra`` set in it (objects merged key by key)."""
    result = dict(base)
    for key, value in extra.items():
        current = result.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            result[key] = _merged(current, value)
        else:
            result[key] = value
    return result


def _merge_json_file(path: Path, extra: Mapping[str, Any]) -> Path:
    """Merge ``extra`` into the JSON object in ``path`` (created when missing); the file is
    rewritten only when that changes it. Raises ``ValueError`` for a file that is no object."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    current = json.loads(text) if text.strip() else {}
    if not isinstance(current, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    wanted = _merged(current, extra)
    if wanted != current or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wanted, indent=2) + "\n", encoding="utf-8")
    return path


def user_settings_path(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


def prepare_home(home: Path, *, trust: Sequence[Path] = ()) -> Path:
    """Merge ``RUN_SETTINGS`` into ``<home>/.gemini/settings.json`` (keeping its hooks and every
    other key) and mark each of ``trust`` ``TRUST_FOLDER`` in ``<home>/.gemini/trustedFolders.json``;
    return the settings path."""
    settings = _merge_json_file(user_settings_path(home), RUN_SETTINGS)
    if trust:
        folders = {os.path.realpath(folder): TRUST_FOLDER for folder in trust}
        _merge_json_file(home / ".gemini" / "trustedFolders.json", folders)
    return settings


def gemini_env(
    *,
    home: Path,
    server_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of a ``gemini`` run (nothing inherited from ours).

    ``PATH`` holds Node.js's directory, then this interpreter's ``bin`` directory (hooks find
    ``python3`` of the dev venv), then the system directories. ``TMPDIR`` points inside ``home``.
    """
    return client_env(
        home=home,
        tmp=home / "tmp",
        path=search_path(node_dir(), python_bin_dir()),
        client={"GOOGLE_GEMINI_BASE_URL": server_url, "GEMINI_API_KEY": DUMMY_API_KEY},
        agent_name=agent_name,
        extra_env=extra_env,
    )


# --------------------------------------------------------------------------- running


def run_gemini(
    prompt: str,
    *,
    cwd: Path | str,
    home: Path | str,
    server_url: str,
    model: str | None = None,
    session_id: str | None = None,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    trust: bool = True,
    timeout: float = 120,
    binary: str | None = None,
    on_start: Callable[[subprocess.Popen[str]], object] | None = None,
) -> GeminiResult:
    """Run ``gemini --approval-mode yolo [-m MODEL] [--session-id ID] *args -p PROMPT`` in ``cwd``.

    Before the run ``prepare_home`` merges the run settings into ``home`` and (``trust``) trusts
    ``cwd``. ``model`` (e.g. :data:`FAST_MODEL`) skips the model router. ``on_start`` is called
    with the process as soon as it started (its ``pid`` is the launcher's; the worker that runs
    the hooks is the launcher's child). The process runs in its own session with stdin closed; on
    timeout its whole process group (hooks included) is killed and
    :class:`subprocess.TimeoutExpired` is raised. A non-zero exit is returned, not raised.
    """
    home_path = Path(home)
    prepare_home(home_path, trust=[Path(cwd)] if trust else [])
    command = [binary or ensure_gemini(), "--approval-mode", "yolo"]
    if model is not None:
        command += ["-m", model]
    if session_id is not None:
        command += ["--session-id", session_id]
    command += [*args, "-p", prompt]
    env = gemini_env(
        home=home_path, server_url=server_url, agent_name=agent_name, extra_env=extra_env
    )
    return run_in_session(
        command, cwd=cwd, env=env, timeout=timeout, on_start=on_start, result=GeminiResult
    )
