"""Install a real, pinned client CLI from npm and run it, for end-to-end tests.

What ``claude_cli``, ``codex_cli`` and ``gemini_cli`` share: each describes its package as an
:class:`NpmCli` (package, pinned version, cache, binary candidates, version check) and builds its
own command line and environment; installing, checking and running are done here.

Invariants:

* A CLI is only ever installed into a private npm prefix (``NpmCli.cache_env`` for the pinned
  version, default ``~/.cache/agent-hooks/e2e/<cache_name>-<version>``), never globally; an
  existing working install there is reused. Concurrent installers (pytest-xdist workers)
  serialise on an exclusive ``flock`` on ``<prefix>/.install.lock``.
* A binary is only returned after ``<binary> --version``, run with a scratch ``HOME`` and
  ``TMPDIR``, reports the version asked for (``NpmCli.reports``); the candidates are tried in
  order, ``node_modules/.bin/<name>`` first.
* Missing npm, an uncreatable prefix, a failing install (e.g. offline) and a binary that does not
  report the version raise the client's :class:`CliUnavailable` subclass, whose ``reason`` the
  fixtures skip with.
* :func:`run_in_session` runs the client in its own session with stdin ``/dev/null``; on timeout
  its whole process group (hooks included) is killed and :class:`subprocess.TimeoutExpired` is
  raised. A non-zero exit is returned, not raised: callers assert on ``returncode``.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

DEFAULT_PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
_INSTALL_TIMEOUT = 600


class CliUnavailable(RuntimeError):
    """The pinned CLI cannot be installed or run here; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CliResult(subprocess.CompletedProcess[str]):
    """A finished client run; ``duration`` is its wall-clock time in seconds and ``pid`` the
    process id of the process that was started."""

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


@dataclass(frozen=True)
class NpmCli:
    """A client CLI as npm ships it.

    ``name`` is the binary's name (``node_modules/.bin/<name>``, tried first); ``native_glob``,
    relative to ``node_modules``, finds the platform packages' native binaries, tried next.
    ``probe_env`` builds the environment of ``<binary> --version`` in a fresh scratch directory;
    ``reports(words, version)`` says whether its output's words name ``version``.
    ``not_reported`` (formatted with ``version``) ends the reason given when the installed
    package has no binary that does. ``requires``, when set, runs before anything else and
    raises :attr:`unavailable` when a prerequisite (such as Node.js) is missing.
    """

    name: str
    package: str
    version: str
    cache_env: str
    cache_name: str
    unavailable: type[CliUnavailable]
    probe_env: Callable[[Path], dict[str, str]]
    reports: Callable[[list[str], str], bool]
    not_reported: str
    native_glob: str | None = None
    probe_timeout: float = 60
    requires: Callable[[], object] | None = None

    def cache_dir(self, version: str | None = None) -> Path:
        """The npm prefix the CLI at `version` (the pinned one by default) is installed into
        (``cache_env`` moves the pinned version's)."""
        version = self.version if version is None else version
        configured = os.environ.get(self.cache_env)
        if configured and version == self.version:
            return Path(configured).expanduser()
        return Path.home() / ".cache" / "agent-hooks" / "e2e" / f"{self.cache_name}-{version}"

    def ensure(self, version: str | None = None) -> str:
        """Path of a working binary at `version` (the pinned one by default), installed first
        if needed; raises :attr:`unavailable` when that cannot be done."""
        version = self.version if version is None else version
        return _ensure(self, self.cache_dir(version), version)

    def natives(self, prefix: Path) -> list[Path]:
        """The native binaries of the platform packages installed under ``prefix``, sorted."""
        if self.native_glob is None:
            return []
        return sorted((prefix / "node_modules").glob(self.native_glob))

    def candidates(self, prefix: Path) -> list[Path]:
        """Binaries to try, best first: the npm wrapper, then the native binaries."""
        return [prefix / "node_modules" / ".bin" / self.name, *self.natives(prefix)]

    def working_binary(self, prefix: Path, version: str) -> str | None:
        for candidate in self.candidates(prefix):
            if candidate.is_file() and self.reports_version(candidate, version):
                return str(candidate)
        return None

    def reports_version(self, binary: Path, version: str) -> bool:
        with tempfile.TemporaryDirectory(prefix=f"{self.name}-version-") as scratch:
            env = self.probe_env(Path(scratch))
            try:
                done = capture([str(binary), "--version"], timeout=self.probe_timeout, env=env)
            except (OSError, subprocess.TimeoutExpired):
                return False
        return done.returncode == 0 and self.reports(done.stdout.split(), version)


def capture(
    command: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end with stdin ``/dev/null`` and its output captured as text
    (``env`` None: ours). A non-zero exit is returned; :class:`OSError` and
    :class:`subprocess.TimeoutExpired` are raised."""
    return subprocess.run(
        list(command),
        capture_output=True,
        text=True,
        env=None if env is None else dict(env),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@functools.cache
def _ensure(cli: NpmCli, prefix: Path, version: str) -> str:
    if cli.requires is not None:
        cli.requires()
    found = cli.working_binary(prefix, version)
    if found:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise cli.unavailable(
            f"npm is not on PATH; cannot install {cli.package}@{version} into {prefix}"
        )
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cli.unavailable(f"cannot create the npm prefix {prefix}: {exc}") from exc
    with _install_lock(prefix):
        found = cli.working_binary(prefix, version)  # another worker may have installed it
        if found:
            return found
        _npm_install(cli, npm, prefix, version)
        found = cli.working_binary(prefix, version)
    if not found:
        raise cli.unavailable(
            f"{cli.package}@{version} installed into {prefix}, but "
            + cli.not_reported.format(version=version)
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


def _npm_install(cli: NpmCli, npm: str, prefix: Path, version: str) -> None:
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{cli.package}@{version}",
    ]
    try:
        done = capture(command, timeout=_INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise cli.unavailable(f"`{' '.join(command)}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise cli.unavailable(f"`{' '.join(command)}` exited {done.returncode} (offline?):\n{tail}")


# --------------------------------------------------------------------------- running


def python_bin_dir() -> str:
    """This interpreter's ``bin`` directory (hooks find ``python3`` and the project's console
    scripts of the dev venv there)."""
    return str(Path(sys.executable).parent)


def search_path(*first: str) -> str:
    """A ``PATH`` of ``first`` then :data:`DEFAULT_PATH_DIRS`, each directory once."""
    return os.pathsep.join(dict.fromkeys([*first, *DEFAULT_PATH_DIRS]))


def through_proxy(proxy_url: str) -> dict[str, str]:
    """The variables that send a client's HTTP and HTTPS traffic through ``proxy_url`` (the
    mock, which refuses every CONNECT), loopback exempt (the mock as the provider is reached
    directly)."""
    return {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


def client_env(
    *,
    home: Path,
    tmp: Path,
    path: str,
    client: Mapping[str, str],
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A complete environment built from scratch (nothing inherited from ours): ``HOME``,
    ``TMPDIR`` (``tmp``, created), ``PATH``, ``LANG=C.UTF-8``, the ``client``'s own variables,
    ``AGENT_NAME`` when given, and last ``extra_env``, which overrides any of them."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "TMPDIR": str(tmp), "PATH": path, "LANG": "C.UTF-8", **client}
    if agent_name is not None:
        env["AGENT_NAME"] = agent_name
    env.update(extra_env or {})
    return env


ResultT = TypeVar("ResultT", bound=CliResult)


def run_in_session(
    command: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    timeout: float,
    on_start: Callable[[subprocess.Popen[str]], object] | None,
    result: type[ResultT],
) -> ResultT:
    """Run ``command`` in ``cwd`` with exactly ``env``, in its own session with stdin
    ``/dev/null``, and return it as a ``result``.

    ``on_start`` is called with the process as soon as it started (a test may signal it from
    another thread; it is still reaped here). On timeout the whole process group (hooks
    included) is killed and :class:`subprocess.TimeoutExpired` is raised. A non-zero exit is
    returned, not raised.
    """
    started = time.monotonic()
    with subprocess.Popen(
        list(command),
        cwd=str(cwd),
        env=dict(env),
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
            kill_group(proc)
            stdout, stderr = proc.communicate()
            raise subprocess.TimeoutExpired(list(command), timeout, stdout, stderr) from None
    return result(command, proc.returncode, stdout, stderr, time.monotonic() - started, proc.pid)


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the process group ``proc`` leads (started with ``start_new_session``)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
