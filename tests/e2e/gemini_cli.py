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

import contextlib
import fcntl
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE = "@google/gemini-cli"
CACHE_ENV = "AGENT_HOOKS_E2E_GEMINI_CACHE"
DUMMY_API_KEY = "gemini-e2e-dummy-key"
NODE_MAJOR_MIN = 20
DEFAULT_PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
FAST_MODEL = "gemini-2.5-flash"  # ``-m`` with it skips the model router's request
_INSTALL_TIMEOUT = 600
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


class GeminiUnavailable(RuntimeError):
    """The pinned CLI cannot be installed or run here; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GeminiResult(subprocess.CompletedProcess[str]):
    """A finished ``gemini`` run; ``duration`` is its wall-clock time in seconds and ``pid`` the
    launcher's process id (the worker that runs hooks is its child)."""

    def __init__(
        self,
        args: Sequence[str],
        returncode: int,
        stdout: str,
        stderr: str,
        duration: float,
        pid: int,
    ) -> None:
        super().__init__(list(args), returncode, stdout, stderr)
        self.duration = duration
        self.pid = pid


def cache_dir() -> Path:
    """The npm prefix the pinned CLI is installed into."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "agent-hooks" / "e2e" / f"gemini-cli-{GEMINI_VERSION}"


def ensure_gemini() -> str:
    """Path of a working ``gemini`` at the pinned version, installed first if needed.

    Raises :class:`GeminiUnavailable` when Node.js or npm is missing or too old, the install
    fails (e.g. offline) or the installed CLI does not run.
    """
    return _ensure_gemini(cache_dir())


@functools.cache
def _ensure_gemini(prefix: Path) -> str:
    node_dir()  # raises when there is no usable Node.js
    found = _working_binary(prefix)
    if found:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise GeminiUnavailable(
            f"npm is not on PATH; cannot install {GEMINI_PACKAGE}@{GEMINI_VERSION} into {prefix}"
        )
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GeminiUnavailable(f"cannot create the npm prefix {prefix}: {exc}") from exc
    with _install_lock(prefix):
        found = _working_binary(prefix)  # another worker may have installed it meanwhile
        if found:
            return found
        _npm_install(npm, prefix)
        found = _working_binary(prefix)
    if not found:
        raise GeminiUnavailable(
            f"{GEMINI_PACKAGE}@{GEMINI_VERSION} installed into {prefix}, but its `gemini` does "
            f"not report version {GEMINI_VERSION}"
        )
    return found


@functools.cache
def node_dir() -> str:
    """The directory of the ``node`` the CLI runs on (its ``#!`` line is ``/usr/bin/env node``).

    Raises :class:`GeminiUnavailable` when there is none or it is older than the package needs.
    """
    node = shutil.which("node")
    if node is None:
        raise GeminiUnavailable("node is not on PATH; Gemini CLI needs Node.js >= 20")
    try:
        done = subprocess.run(
            [node, "--version"],
            capture_output=True,
            text=True,
            timeout=_VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GeminiUnavailable(f"`{node} --version` failed: {exc}") from exc
    version = done.stdout.strip().lstrip("v")
    major = version.split(".", 1)[0]
    if done.returncode != 0 or not major.isdigit() or int(major) < NODE_MAJOR_MIN:
        raise GeminiUnavailable(
            f"{node} is version {version or '?'}; Gemini CLI needs Node.js >= {NODE_MAJOR_MIN}"
        )
    return str(Path(node).parent)


@contextlib.contextmanager
def _install_lock(prefix: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<prefix>/.install.lock``."""
    fd = os.open(prefix / ".install.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _npm_install(npm: str, prefix: Path) -> None:
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{GEMINI_PACKAGE}@{GEMINI_VERSION}",
    ]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GeminiUnavailable(f"`{' '.join(command)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise GeminiUnavailable(
            f"`{' '.join(command)}` exited {done.returncode} (offline?):\n{tail}"
        )


def _working_binary(prefix: Path) -> str | None:
    """``node_modules/.bin/gemini`` (a link to the bundle's ``gemini.js``) when it reports the
    pinned version. npm 11 skips the install scripts of the optional ``node-pty``/``keytar``;
    the CLI works without them."""
    candidate = prefix / "node_modules" / ".bin" / "gemini"
    if candidate.is_file() and _reports_pinned_version(candidate):
        return str(candidate)
    return None


def _reports_pinned_version(binary: Path) -> bool:
    with tempfile.TemporaryDirectory(prefix="gemini-version-") as home:
        env = {
            "PATH": os.pathsep.join(dict.fromkeys([node_dir(), *DEFAULT_PATH_DIRS])),
            "HOME": home,
            "TMPDIR": home,
        }
        try:
            done = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                env=env,
                timeout=_VERSION_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
    words = done.stdout.split()
    return done.returncode == 0 and bool(words) and words[-1] == GEMINI_VERSION


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
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    path_dirs = [node_dir(), str(Path(sys.executable).parent), *DEFAULT_PATH_DIRS]
    env = {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PATH": os.pathsep.join(dict.fromkeys(path_dirs)),
        "LANG": "C.UTF-8",
        "GOOGLE_GEMINI_BASE_URL": server_url,
        "GEMINI_API_KEY": DUMMY_API_KEY,
    }
    if agent_name is not None:
        env["AGENT_NAME"] = agent_name
    env.update(extra_env or {})
    return env


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
    started = time.monotonic()
    with subprocess.Popen(
        command,
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        if on_start is not None:
            on_start(proc)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr) from None
    return GeminiResult(
        command, proc.returncode, stdout, stderr, time.monotonic() - started, proc.pid
    )


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
