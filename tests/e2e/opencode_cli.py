"""Install and drive the real, pinned ``opencode`` (``opencode-ai``) for end-to-end tests, with
agent-hooks' plugin in it.

Invariants:

* The CLI is only ever installed into a private npm prefix (``AGENT_HOOKS_E2E_OPENCODE_CACHE``,
  default ``~/.cache/agent-hooks/e2e/opencode-<version>``), never globally; the npm bin is the
  native binary (no Node.js at run time).
* ``run_opencode`` (``opencode run``) and ``start_tui`` (the TUI in a tmux pane, as ntm runs it)
  build the child environment from scratch: nothing from the developer's environment
  (``~/.config/opencode``, ``OPENCODE_*``, proxies) leaks in, apart from what ``extra_env``
  passes. The mock is the provider (``@ai-sdk/openai-compatible``, bundled) and the HTTP(S)
  proxy, which refuses every CONNECT.
* Each run's provider (the mock) comes in ``OPENCODE_CONFIG_CONTENT``, so panes side by side in
  one HOME each talk to their own mock; ``initialize_home`` creates opencode's database before
  they start (two first starts at once: `database is locked`). ``prepare_home`` marks ``~/.config/opencode`` as having its
  dependencies installed (``package.json`` and ``package-lock.json`` naming
  ``@opencode-ai/plugin``, an empty ``node_modules``): without it opencode spends ~50 s at start
  retrying an npm install the proxy refuses, whenever a plugin is present (measured).
* agent-hooks' plugin is the one ``install.sh --clients opencode`` writes into the HOME.
"""

from __future__ import annotations

import json
import os
import shlex
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
    python_bin_dir,
    run_in_session,
    search_path,
    through_proxy,
)

OPENCODE_VERSION = "1.18.33"
OPENCODE_PACKAGE = "opencode-ai"
CACHE_ENV = "AGENT_HOOKS_E2E_OPENCODE_CACHE"
PROVIDER = "mock"
MODEL = "mock-model"  # offered write and edit
PATCH_MODEL = "gpt-5.5"  # a `gpt-` model id: offered apply_patch instead (PROTOCOL §4)


class OpencodeUnavailable(CliUnavailable):
    """The pinned ``opencode`` cannot be installed or run here; ``reason`` says why."""


class OpencodeResult(CliResult):
    """A finished ``opencode run``; ``pid`` is opencode's own (the npm bin is the binary)."""


def _probe_env(scratch: Path) -> dict[str, str]:
    home = scratch / "home"
    home.mkdir()
    return {"PATH": search_path(), "HOME": str(home), "TMPDIR": str(scratch)}


OPENCODE = NpmCli(
    name="opencode",
    package=OPENCODE_PACKAGE,
    version=OPENCODE_VERSION,
    cache_env=CACHE_ENV,
    cache_name="opencode",
    unavailable=OpencodeUnavailable,
    probe_env=_probe_env,
    reports=lambda words, version: words == [version],
    not_reported="no binary there reports {version} (unsupported platform?)",
    native_glob="opencode-linux-*/bin/opencode",
    probe_timeout=120,
)


def ensure_opencode() -> str:
    """Path of a working ``opencode`` at the pinned version, installed first if needed."""
    return OPENCODE.ensure()


# --------------------------------------------------------------------------- configuration


def config_dir(home: Path) -> Path:
    return home / ".config" / "opencode"


def _mark_dependencies(directory: Path) -> None:
    """Make opencode find the plugin SDK it would install into ``directory`` already there
    (its check: ``node_modules`` exists and ``package-lock.json`` lists every dependency)."""
    pinned = {"@opencode-ai/plugin": OPENCODE_VERSION}
    (directory / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": pinned}}}
    for name, doc in (("package.json", {"dependencies": pinned}), ("package-lock.json", lock)):
        path = directory / name
        text = json.dumps(doc)
        if not path.exists() or path.read_text() != text:  # runs side by side read it
            temporary = directory / f".{name}.{os.getpid()}.tmp"
            temporary.write_text(text)
            os.replace(temporary, path)


def run_config(server_url: str) -> dict[str, Any]:
    """opencode's configuration for a run against the mock at ``server_url``: the provider
    (:data:`MODEL` by default, :data:`PATCH_MODEL` offered too), nothing shared or updated,
    every tool allowed."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": server_url, "apiKey": "fake-key"},
                "models": {
                    MODEL: {"name": "Mock", "tool_call": True},
                    PATCH_MODEL: {"name": "Mock GPT", "tool_call": True},
                },
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "permission": "allow",
    }


def prepare_home(home: Path) -> Path:
    """Mark the HOME's opencode config directory as having its dependencies installed (see the
    module); return it. Each run's provider comes in ``OPENCODE_CONFIG_CONTENT``, so panes side
    by side in one HOME each talk to their own mock."""
    directory = config_dir(home)
    _mark_dependencies(directory)
    return directory


def initialize_home(home: Path, binary: str | None = None) -> None:
    """Create opencode's database in ``home`` before any run (``opencode session list``).
    Two opencode processes started at once in a HOME without one both set it up, and one
    fails with `database is locked` (measured: 2 starts in 4), so panes started side by side
    need it there first, as any HOME opencode ran in before has it."""
    if (home / ".local" / "share" / "opencode" / "opencode.db").exists():
        return
    prepare_home(home)
    env = client_env(
        home=home,
        tmp=home.parent / f"{home.name}-tmp",
        path=search_path(),
        client={"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"},
    )
    done = subprocess.run(
        [binary or ensure_opencode(), "session", "list"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        raise OpencodeUnavailable(f"`opencode session list` failed: {done.stderr.strip()[-300:]}")


def opencode_env(
    *,
    home: Path,
    server_url: str,
    proxy_url: str,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of an opencode run (nothing inherited from ours): this
    interpreter's ``bin`` first on ``PATH``, the run's configuration
    (``OPENCODE_CONFIG_CONTENT``), the mock as the HTTP(S) proxy (loopback exempt)."""
    return client_env(
        home=home,
        tmp=home.parent / f"{home.name}-tmp",
        path=search_path(python_bin_dir()),
        client={
            "OPENCODE_CONFIG_CONTENT": json.dumps(run_config(server_url)),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            **through_proxy(proxy_url),
            "NO_COLOR": "1",
        },
        agent_name=agent_name,
        extra_env=extra_env,
    )


# --------------------------------------------------------------------------- running


def run_opencode(
    prompt: str,
    *,
    cwd: Path | str,
    home: Path | str,
    server_url: str,
    proxy_url: str,
    model: str = MODEL,
    agent_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    timeout: float = 120,
    binary: str | None = None,
    on_start: Callable[[subprocess.Popen[str]], object] | None = None,
) -> OpencodeResult:
    """Run ``opencode run --format json --model mock/MODEL *args PROMPT`` in ``cwd`` (its own
    session, stdin ``/dev/null``; on timeout its process group is killed and
    ``TimeoutExpired`` raised)."""
    home = Path(home)
    prepare_home(home)
    command = [binary or ensure_opencode(), "run", "--format", "json"]
    command += ["--model", f"{PROVIDER}/{model}", *args, prompt]
    env = opencode_env(
        home=home,
        server_url=server_url,
        proxy_url=proxy_url,
        agent_name=agent_name,
        extra_env=extra_env,
    )
    return run_in_session(
        command, cwd=cwd, env=env, timeout=timeout, on_start=on_start, result=OpencodeResult
    )


def events(result: OpencodeResult) -> list[dict[str, Any]]:
    """The JSON events ``opencode run --format json`` printed."""
    found = []
    for line in result.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


class Tui:
    """opencode's TUI in a detached tmux pane (a private tmux server), as ntm starts an
    opencode pane: ``opencode`` in the project directory with the pane's ``AGENT_NAME``.

    ``pid`` is opencode's process; ``type(text)`` sends a prompt; ``kill()`` ends the pane
    (SIGHUP to its process group, as closing the pane or ``tmux kill-session`` does).
    """

    def __init__(
        self,
        *,
        cwd: Path,
        home: Path,
        server_url: str,
        proxy_url: str,
        agent_name: str,
        model: str = MODEL,
        binary: str | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        if shutil.which("tmux") is None:
            raise OpencodeUnavailable("tmux is not on PATH")
        prepare_home(home)
        self.socket = str(home.parent / f"{home.name}-tmux.sock")
        self.session = "agent-hooks-e2e"
        env = opencode_env(
            home=home,
            server_url=server_url,
            proxy_url=proxy_url,
            agent_name=agent_name,
            extra_env=extra_env,
        )
        env["TERM"] = "xterm-256color"
        command = " ".join(
            [
                "exec env -i",
                *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                shlex.quote(binary or ensure_opencode()),
                "--model",
                shlex.quote(f"{PROVIDER}/{model}"),
            ]
        )
        self._tmux(
            "new-session", "-d", "-s", self.session, "-x", "160", "-y", "48", "-c", str(cwd),
            command,
        )  # fmt: skip
        self.pid = int(self._tmux("display-message", "-p", "-t", self.session, "#{pane_pid}"))

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env={"PATH": search_path(), "HOME": os.environ.get("HOME", "/"), "TERM": "xterm"},
        )
        return done.stdout.strip()

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.session)

    def wait_for_screen(self, text: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.25)
        raise AssertionError(f"{text!r} not on opencode's screen after {timeout:g}s:\n{shown}")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.session, "-l", text)
        time.sleep(0.2)
        self._tmux("send-keys", "-t", self.session, "Enter")

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        """Close the pane as a person killing it does: tmux sends SIGHUP to its processes."""
        self._tmux("kill-session", "-t", self.session)

    def close(self) -> None:
        try:
            self._tmux("kill-server")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
