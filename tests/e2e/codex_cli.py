"""Install and drive the real, pinned ``codex`` CLI (``@openai/codex``) for end-to-end tests.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_CODEX_CACHE``, default
  ``~/.cache/agent-hooks/e2e/codex-<version>``), never globally; an existing working install there
  is reused. Concurrent installers (pytest-xdist workers) serialise on a lock file.
* A binary is only returned after ``<binary> --version`` reports exactly
  ``codex-cli`` :data:`CODEX_VERSION`.
* ``run_codex`` builds the child environment from scratch: nothing from the developer's
  environment (``~/.codex``, ``CODEX_HOME``, ``OPENAI_*``, proxies) leaks in, apart from what
  ``extra_env`` passes explicitly. ``HTTPS_PROXY`` points at the mock, which refuses every CONNECT,
  and the flags in :data:`OFFLINE_ARGS` stop Codex from trying in the first place.
* ``TMPDIR`` is never an ancestor of ``CODEX_HOME``: Codex refuses to create its PATH helpers
  (the ``apply_patch`` alias) under the temp dir (PROTOCOL §1).
* ``write_provider_config`` changes only the provider keys of ``config.toml`` (top-level
  ``model_provider``/``model`` and the ``[model_providers.mock]`` table); every other table — the
  hook trust entries ``agent_hooks.install.codex_config`` writes — stays byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .npm_cli import (
    CliResult,
    CliUnavailable,
    NpmCli,
    client_env,
    kill_group,
    python_bin_dir,
    run_in_session,
    search_path,
)

CODEX_VERSION = "0.169.0"
# The newest measured (reference/codex-0.171.0/PROTOCOL.md): its hooks are 0.169.0's for what
# agent-hooks uses; the cross-client and trust tests run on both.
CODEX_NEWER_VERSION = "0.171.0"
CODEX_VERSIONS = (CODEX_VERSION, CODEX_NEWER_VERSION)
CODEX_PACKAGE = "@openai/codex"
CACHE_ENV = "AGENT_HOOKS_E2E_CODEX_CACHE"
PROVIDER = "mock"
PROVIDER_KEY_ENV = "MOCK_API_KEY"
DUMMY_API_KEY = "sk-codex-e2e-dummy-key"
DIRECT_TOOLS_MODEL = "gpt-5.5"  # the one catalog model with direct tools (PROTOCOL §2)
# Every flag that stopped an outbound attempt in PROTOCOL §1 (plugins, analytics, apps).
OFFLINE_ARGS = (
    "--disable",
    "plugins",
    "-c",
    "analytics.enabled=false",
    "--disable",
    "apps",
    "--disable",
    "remote_plugin",
)


class CodexUnavailable(CliUnavailable):
    """The pinned ``codex`` cannot be installed or run here; ``reason`` says why."""


class CodexResult(CliResult):
    """A finished ``codex`` run; ``duration`` is its wall-clock time in seconds."""


def _search_path() -> str:
    """This interpreter's ``bin`` (hooks find ``python``), node's directory, the system dirs."""
    node = shutil.which("node")
    return search_path(python_bin_dir(), *([str(Path(node).parent)] if node else []))


def _probe_env(scratch: Path) -> dict[str, str]:
    """The environment of ``codex --version``: a HOME and a TMPDIR side by side."""
    home = scratch / "home"
    tmp = scratch / "tmp"
    home.mkdir()
    tmp.mkdir()
    return {"PATH": _search_path(), "HOME": str(home), "TMPDIR": str(tmp)}


# Binaries to try, best first: the npm wrapper (``bin/codex.js``, which ``execve``s the native
# binary and sets ``CODEX_MANAGED_BY_NPM``, as a user's install does), then the native binary of
# the platform package (runs without Node.js).
CODEX = NpmCli(
    name="codex",
    package=CODEX_PACKAGE,
    version=CODEX_VERSION,
    cache_env=CACHE_ENV,
    cache_name="codex",
    unavailable=CodexUnavailable,
    probe_env=_probe_env,
    reports=lambda words, version: words == ["codex-cli", version],
    not_reported=(
        "no binary there reports codex-cli {version} (unsupported platform, or node missing?)"
    ),
    native_glob="@openai/codex-*/vendor/*/bin/codex",
)


def cache_dir() -> Path:
    """The npm prefix the pinned CLI is installed into."""
    return CODEX.cache_dir()


def ensure_codex(version: str = CODEX_VERSION) -> str:
    """Path of a working ``codex`` binary at ``version`` (the pinned one unless told), installed
    first if needed.

    Raises :class:`CodexUnavailable` when npm or node is missing, the install fails (e.g.
    offline) or the installed binary does not run.
    """
    return CODEX.ensure(version)


def native_binary() -> Path:
    """The pinned native ``codex`` binary (installed first if needed). Started under the
    name ``apply_patch`` (a symlink: Codex dispatches on ``argv[0]``, as its PATH helper
    does) it applies the patch given as its argument in its working directory."""
    ensure_codex()
    found = CODEX.natives(cache_dir())
    if not found:
        raise CodexUnavailable(f"no native codex binary under {cache_dir()}")
    return found[0]


# --------------------------------------------------------------------------- configuration


def codex_home(home: Path) -> Path:
    """``$CODEX_HOME`` of a test HOME: ``<home>/.codex`` (Codex's own default)."""
    return home / ".codex"


_PROVIDER_TABLE = f"model_providers.{PROVIDER}"
_TABLE_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_TOP_KEY = re.compile(r"^\s*(model_provider|model)\s*=")


def provider_config(server_url: str, model: str | None = DIRECT_TOOLS_MODEL) -> tuple[str, str]:
    """(top-level lines, ``[model_providers.mock]`` table) pointing Codex at ``server_url``.

    ``model=None`` leaves Codex's default model (code mode, PROTOCOL §2).
    """
    top = f'model_provider = "{PROVIDER}"\n'
    if model is not None:
        top += f'model = "{model}"\n'
    table = (
        f"[{_PROVIDER_TABLE}]\n"
        f'name = "{PROVIDER}"\n'
        f'base_url = "{server_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{PROVIDER_KEY_ENV}"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return top, table


def write_provider_config(
    home: Path, server_url: str, *, model: str | None = DIRECT_TOOLS_MODEL
) -> Path:
    """Point ``<home>/.codex/config.toml`` at the mock and return its path.

    The top-level ``model_provider``/``model`` keys are replaced (or put first) and the
    ``[model_providers.mock]`` table is replaced (or appended); every other line stays as it was,
    so the trust tables an installer wrote survive (and a later install keeps this table).
    """
    path = codex_home(home) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    top, table = provider_config(server_url, model)
    kept: list[str] = []
    in_top = True
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _TABLE_HEADER.match(line)
        if header:
            in_top = False
            skipping = header.group(1).replace('"', "") == _PROVIDER_TABLE
            if skipping:
                continue
        if skipping or (in_top and _TOP_KEY.match(line)):
            continue
        kept.append(line)
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    path.write_text(top + body + ("\n" if body.strip() else "") + table, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- running


def codex_env(
    *,
    home: Path,
    proxy_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of a ``codex`` run (nothing inherited from ours).

    ``TMPDIR`` is ``<home>/../codex-tmp``, a sibling of the HOME (never an ancestor of
    ``CODEX_HOME``). ``HTTPS_PROXY`` (and ``ALL_PROXY``) lead to the mock, which refuses; loopback
    is exempt (``NO_PROXY``) so the provider itself is reached directly.
    """
    return client_env(
        home=home,
        tmp=home.parent / f"{home.name}-tmp",
        path=_search_path(),
        client={
            "CODEX_HOME": str(codex_home(home)),
            PROVIDER_KEY_ENV: DUMMY_API_KEY,
            "HTTPS_PROXY": proxy_url,
            "https_proxy": proxy_url,
            "ALL_PROXY": proxy_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "NO_COLOR": "1",
        },
        agent_name=agent_name,
        extra_env=extra_env,
    )


def run_codex(
    prompt: str,
    *,
    cwd: Path | str,
    home: Path | str,
    server_url: str,
    proxy_url: str,
    model: str | None = DIRECT_TOOLS_MODEL,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    timeout: float = 60,
    binary: str | None = None,
    on_start: Callable[[subprocess.Popen[str]], object] | None = None,
) -> CodexResult:
    """Run ``codex exec --dangerously-bypass-approvals-and-sandbox OFFLINE_ARGS *args PROMPT``.

    Writes the provider config into ``<home>/.codex/config.toml`` first (keeping every other
    table). Hooks run only when trusted (persisted hashes, see ``codex_config``) unless ``args``
    holds ``--dangerously-bypass-hook-trust``. The process runs in its own session with stdin
    ``/dev/null``; on timeout its whole process group (hooks included) is killed and
    :class:`subprocess.TimeoutExpired` is raised. A non-zero exit is returned, not raised.
    """
    home = Path(home)
    write_provider_config(home, server_url, model=model)
    command = [
        binary or ensure_codex(),
        "exec",
        "--color",
        "never",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        *OFFLINE_ARGS,
        *args,
        prompt,
    ]
    env = codex_env(home=home, proxy_url=proxy_url, agent_name=agent_name, extra_env=extra_env)
    return run_in_session(
        command, cwd=cwd, env=env, timeout=timeout, on_start=on_start, result=CodexResult
    )


# --------------------------------------------------------------------------- app-server


def list_hooks(
    *,
    home: Path | str,
    cwd: Path | str,
    binary: str | None = None,
    timeout: float = 60,
) -> list[dict[str, Any]]:
    """What Codex itself says about the hooks it would load in ``cwd``: ``codex app-server`` →
    JSON-RPC ``initialize`` then ``hooks/list {cwds: [cwd]}``; one dict per handler with ``key``,
    ``eventName``, ``command``, ``timeoutSec``, ``currentHash`` and ``trustStatus``
    (``trusted`` | ``untrusted`` | ``modified``). No model is contacted; the environment is the
    one ``run_codex`` uses (the proxy points at a closed port: nothing leaves the machine)."""
    home = Path(home)
    env = codex_env(home=home, proxy_url="http://127.0.0.1:9")
    command = [binary or ensure_codex(), "app-server"]
    with subprocess.Popen(
        command,
        cwd=str(cwd),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
        start_new_session=True,
    ) as proc:
        try:
            rpc = _JsonRpc(proc, time.monotonic() + timeout)
            rpc.call("initialize", {"clientInfo": {"name": "agent-hooks-e2e", "version": "0"}})
            rpc.notify("initialized")
            result = rpc.call("hooks/list", {"cwds": [str(cwd)]})
        finally:
            kill_group(proc)
            proc.wait()
    entries = result.get("data") or []
    return [h for entry in entries for h in entry.get("hooks") or []]


class _JsonRpc:
    """Line-delimited JSON-RPC over a child's unbuffered stdin/stdout; every read is bounded by
    one deadline (``select`` on the raw descriptor, lines split here: no hidden buffer)."""

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._stdin = proc.stdin
        self._fd = proc.stdout.fileno()
        self._proc = proc
        self._deadline = deadline
        self._next_id = 0
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def call(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        self._send({"id": wanted, "method": method, "params": dict(params)})
        while True:
            message = self._read()
            if message.get("id") != wanted:
                continue  # a notification, or a request of the server's
            if "error" in message:
                raise RuntimeError(f"{method} failed: {message['error']}")
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _send(self, message: Mapping[str, Any]) -> None:
        self._stdin.write((json.dumps(message) + "\n").encode())

    def _read(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise TimeoutError("codex app-server did not answer in time")
            chunk = os.read(self._fd, 65536)
            if not chunk:
                raise RuntimeError(f"codex app-server exited (rc={self._proc.poll()})")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        message = json.loads(line)
        return message if isinstance(message, dict) else {}
