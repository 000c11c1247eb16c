"""Install and drive the real, pinned ``claude`` CLI for end-to-end tests.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_CACHE``, default
  ``~/.cache/agent-hooks/e2e/claude-code-<version>``), never globally; an existing working install
  there is reused. Concurrent installers (pytest-xdist workers) serialise on a lock file.
* A binary is only returned after ``<binary> --version`` reports exactly the version asked for:
  :data:`CLAUDE_VERSION` (the pinned one every test runs) unless a test asks for another
  (:data:`CLAUDE_SKILL_VERSION`, the first with the ``PreSkillShellCommand`` event), each in
  its own prefix.
* ``run_claude`` builds the child environment from scratch: nothing from the developer's
  environment (``~/.claude``, ``ANTHROPIC_*``, proxies, ``CLAUDE_CONFIG_DIR``) leaks in, apart
  from what ``extra_env`` passes explicitly.
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

CLAUDE_VERSION = "2.1.328"
CLAUDE_SKILL_VERSION = "2.1.332"  # the first with PreSkillShellCommand (skill shell lines)
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CACHE_ENV = "AGENT_HOOKS_E2E_CACHE"
DUMMY_API_KEY = "sk-ant-e2e-dummy-key"
DEFAULT_PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
_INSTALL_TIMEOUT = 600
_VERSION_TIMEOUT = 60


class ClaudeUnavailable(RuntimeError):
    """The pinned CLI cannot be installed or run here; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ClaudeResult(subprocess.CompletedProcess[str]):
    """A finished ``claude`` run; ``duration`` is its wall-clock time in seconds."""

    def __init__(
        self, args: Sequence[str], returncode: int, stdout: str, stderr: str, duration: float
    ) -> None:
        super().__init__(list(args), returncode, stdout, stderr)
        self.duration = duration


def cache_dir(version: str = CLAUDE_VERSION) -> Path:
    """The npm prefix the CLI at `version` is installed into (``AGENT_HOOKS_E2E_CACHE`` moves
    the pinned version's)."""
    configured = os.environ.get(CACHE_ENV)
    if configured and version == CLAUDE_VERSION:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "agent-hooks" / "e2e" / f"claude-code-{version}"


def ensure_claude(version: str = CLAUDE_VERSION) -> str:
    """Path of a working ``claude`` binary at `version` (the pinned one by default), installed
    first if needed.

    Raises :class:`ClaudeUnavailable` when npm is missing, the install fails (e.g. offline) or the
    installed binary does not run.
    """
    return _ensure_claude(cache_dir(version), version)


@functools.cache
def _ensure_claude(prefix: Path, version: str = CLAUDE_VERSION) -> str:
    found = _working_binary(prefix, version)
    if found:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise ClaudeUnavailable(
            f"npm is not on PATH; cannot install {CLAUDE_PACKAGE}@{version} into {prefix}"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    with _install_lock(prefix):
        found = _working_binary(prefix, version)  # another worker may have installed it
        if found:
            return found
        _npm_install(npm, prefix, version)
        found = _working_binary(prefix, version)
    if not found:
        raise ClaudeUnavailable(
            f"{CLAUDE_PACKAGE}@{version} installed into {prefix}, but no binary there "
            f"reports version {version} (unsupported platform?)"
        )
    return found


@contextlib.contextmanager
def _install_lock(prefix: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<prefix>/.install.lock``."""
    fd = os.open(prefix / ".install.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _npm_install(npm: str, prefix: Path, version: str = CLAUDE_VERSION) -> None:
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{CLAUDE_PACKAGE}@{version}",
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
        raise ClaudeUnavailable(f"`{' '.join(command)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise ClaudeUnavailable(
            f"`{' '.join(command)}` exited {done.returncode} (offline?):\n{tail}"
        )


def _candidates(prefix: Path) -> list[Path]:
    """Binaries to try, best first.

    ``node_modules/.bin/claude`` points at the wrapper's ``bin/claude.exe``, which the package's
    postinstall replaces with the native binary. When npm skipped that script (npm 11 asks for
    ``allowScripts``) the file is still a small stub, so the native binary in the platform package
    (``@anthropic-ai/claude-code-<platform>/claude``) is tried next; it needs no Node.js at all.
    """
    modules = prefix / "node_modules"
    native = sorted((modules / "@anthropic-ai").glob("claude-code-*/claude"))
    return [modules / ".bin" / "claude", *native]


def _working_binary(prefix: Path, version: str = CLAUDE_VERSION) -> str | None:
    for candidate in _candidates(prefix):
        if candidate.is_file() and _reports_version(candidate, version):
            return str(candidate)
    return None


def _reports_version(binary: Path, version: str = CLAUDE_VERSION) -> bool:
    with tempfile.TemporaryDirectory(prefix="claude-version-") as home:
        env = {
            "PATH": os.pathsep.join(DEFAULT_PATH_DIRS),
            "HOME": home,
            "TMPDIR": home,
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
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
    return done.returncode == 0 and bool(words) and words[0] == version


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
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    path_dirs = [str(Path(sys.executable).parent), *DEFAULT_PATH_DIRS]
    env = {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PATH": os.pathsep.join(dict.fromkeys(path_dirs)),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": server_url,
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "IS_SANDBOX": "1",
    }
    if agent_name is not None:
        env["AGENT_NAME"] = agent_name
    env.update(extra_env or {})
    return env


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
    return ClaudeResult(command, proc.returncode, stdout, stderr, time.monotonic() - started)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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
