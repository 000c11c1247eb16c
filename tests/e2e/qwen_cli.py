"""Install and drive the real, pinned ``qwen`` CLI (Qwen Code, ``@qwen-code/qwen-code``) for
end-to-end tests.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_QWEN_CACHE``,
  default ``~/.cache/agent-hooks/e2e/qwen-code-<version>``), never globally; a binary is only
  returned after ``qwen --version`` reports exactly :data:`QWEN_VERSION`. (The package asks for
  Node.js 22; 0.24.4 runs the same on 20 here, measured.)
* ``run_qwen`` (``qwen -p … --yolo``) builds the child environment from scratch: nothing of the
  developer's (``~/.qwen``, ``QWEN_*``, ``OPENAI_*``, proxies) leaks in, apart from what
  ``extra_env`` passes. The model API is the mock (``OPENAI_BASE_URL``), which is also the
  HTTP(S) proxy and refuses every CONNECT (Qwen Code tries to send telemetry).
* ``prepare_home`` merges the run settings (OpenAI auth, the mock model, no telemetry or usage
  statistics) into ``~/.qwen/settings.json`` key by key: the ``hooks`` an installer wrote stay.
* agent-hooks' hooks are the ones ``install.sh --clients qwen`` writes into that file.
"""

from __future__ import annotations

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
    client_env,
    python_bin_dir,
    run_in_session,
    search_path,
    through_proxy,
)

QWEN_VERSION = "0.24.4"
QWEN_PACKAGE = "@qwen-code/qwen-code"
CACHE_ENV = "AGENT_HOOKS_E2E_QWEN_CACHE"
MODEL = "mock-model"
RUN_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"name": MODEL},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


class QwenUnavailable(CliUnavailable):
    """The pinned ``qwen`` cannot be installed or run here; ``reason`` says why."""


class QwenResult(CliResult):
    """A finished ``qwen -p`` run; ``pid`` is the launcher's (the CLI that runs the hooks is
    its child, relaunched with ``QWEN_CODE_NO_RELAUNCH``)."""


def _node_dir() -> str:
    node = shutil.which("node")
    if node is None:
        raise QwenUnavailable("node is not on PATH; Qwen Code needs Node.js")
    return str(Path(node).parent)


def _probe_env(scratch: Path) -> dict[str, str]:
    home = scratch / "home"
    home.mkdir()
    return {"PATH": search_path(_node_dir()), "HOME": str(home), "TMPDIR": str(scratch)}


QWEN = NpmCli(
    name="qwen",
    package=QWEN_PACKAGE,
    version=QWEN_VERSION,
    cache_env=CACHE_ENV,
    cache_name="qwen-code",
    unavailable=QwenUnavailable,
    probe_env=_probe_env,
    reports=lambda words, version: words == [version],
    not_reported="no binary there reports {version} (node missing?)",
    probe_timeout=120,
    requires=_node_dir,
)


def ensure_qwen() -> str:
    """Path of a working ``qwen`` at the pinned version, installed first if needed."""
    return QWEN.ensure()


def settings_path(home: Path) -> Path:
    return home / ".qwen" / "settings.json"


def prepare_home(home: Path) -> Path:
    """Merge :data:`RUN_SETTINGS` into ``~/.qwen/settings.json``, key by key; the file is
    rewritten (atomically) only when that changes it, so runs starting side by side never
    read it half written."""
    path = settings_path(home)
    current = json.loads(path.read_text()) if path.exists() else {}
    wanted = dict(current)
    for key, value in RUN_SETTINGS.items():
        if isinstance(value, dict) and isinstance(wanted.get(key), dict):
            wanted[key] = {**wanted[key], **value}
        else:
            wanted[key] = value
    if wanted != current or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(wanted, indent=2) + "\n")
        os.replace(temporary, path)
    return path


def qwen_env(
    *,
    home: Path,
    server_url: str,
    proxy_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    return client_env(
        home=home,
        tmp=home.parent / f"{home.name}-tmp",
        path=search_path(_node_dir(), python_bin_dir()),
        client={
            "OPENAI_API_KEY": "qwen-e2e-dummy-key",
            "OPENAI_BASE_URL": server_url,
            "OPENAI_MODEL": MODEL,
            **through_proxy(proxy_url),
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "NO_COLOR": "1",
        },
        agent_name=agent_name,
        extra_env=extra_env,
    )


def run_qwen(
    prompt: str,
    *,
    cwd: Path | str,
    home: Path | str,
    server_url: str,
    proxy_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    timeout: float = 120,
    binary: str | None = None,
    on_start: Callable[[subprocess.Popen[str]], object] | None = None,
) -> QwenResult:
    """Run ``qwen -p PROMPT --yolo *args`` in ``cwd`` (its own session, stdin ``/dev/null``;
    on timeout its process group is killed and ``TimeoutExpired`` raised)."""
    home = Path(home)
    prepare_home(home)
    command = [binary or ensure_qwen(), "-p", prompt, "--yolo", *args]
    env = qwen_env(
        home=home,
        server_url=server_url,
        proxy_url=proxy_url,
        agent_name=agent_name,
        extra_env=extra_env,
    )
    return run_in_session(
        command, cwd=cwd, env=env, timeout=timeout, on_start=on_start, result=QwenResult
    )
