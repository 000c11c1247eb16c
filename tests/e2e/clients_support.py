"""Helpers of ``test_clients_e2e.py`` and ``test_opencode_qwen_e2e.py``: any client run in a
background thread, the runs of one test (``Swarm``: every client's options for one HOME and
repository), and each client's refusal as its model reads it.

Invariants: a background run's process is known once it started (``process``), its result once
it ended and was reaped (``result``); nothing here sleeps to decide an outcome (waits are the
mocks' ``wait_until`` steps, or ``writers_support.wait_for`` on a condition). Runs side by side
start behind ``all_up``: no later step waits for a client's start.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Generic, TypeVar

from .agent_hooks_install import Installation
from .claude_cli import ClaudeResult, run_claude
from .codex_cli import CodexResult, run_codex
from .gemini_cli import FAST_MODEL, GeminiResult, run_gemini
from .mock_api import MockAnthropicAPI, ToolResult
from .mock_chat_api import MockChatAPI
from .mock_gemini_api import MockGeminiAPI
from .mock_gemini_api import ToolResult as GeminiToolResult
from .mock_responses_api import MockResponsesAPI
from .mock_routes import MAIN, Predicate, Wait, all_of, requested, wait_until
from .opencode_cli import OpencodeResult, run_opencode
from .qwen_cli import QwenResult, run_qwen

T = TypeVar("T")

# Seconds a client may take to send its first model request on a loaded 2-core machine
# (three Node.js clients started at once: the last one a minute or more after the first).
STARTUP = 240
# Seconds a step of one run waits for another's once every run is up: a tool call and its
# hooks, never a client's start.
STEP = 60

CODEX_BLOCKED = "Command blocked by PreToolUse hook: "
GEMINI_BLOCKED = "Tool execution blocked: "
CLAUDE_BLOCKED = "PreToolUse:Write hook error: "


class InThread(Generic[T]):
    """``run(on_start=…, **options)`` (``run_claude``, ``run_codex``, ``run_gemini``) in a thread."""

    def __init__(self, run: Callable[..., T], prompt: str, **options: Any) -> None:
        self._started = threading.Event()
        self._process: subprocess.Popen[str] | None = None
        self._future: Future[T] = Future()
        threading.Thread(
            target=self._run, args=(run, prompt, options), name="client-bg", daemon=True
        ).start()

    def _run(self, run: Callable[..., T], prompt: str, options: dict[str, Any]) -> None:
        try:
            self._future.set_result(run(prompt, on_start=self._on_start, **options))
        except BaseException as exc:  # handed to result()
            self._future.set_exception(exc)
        finally:
            self._started.set()

    def _on_start(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        self._started.set()

    @property
    def process(self) -> subprocess.Popen[str]:
        assert self._started.wait(60), "the client did not start"
        assert self._process is not None, self._future.exception()
        return self._process

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float = 180) -> T:
        return self._future.result(timeout)


class Swarm:
    """The runs of one test: each client's options for this HOME (``install``'s) and
    repository; ``bins`` each client's binary (by client name); ``timeout`` how long one run
    may take in all."""

    def __init__(
        self, install: Installation, project: Path, bins: dict[str, str], timeout: float
    ) -> None:
        self.install = install
        self.project = project
        self.bins = bins
        self.timeout = timeout

    def _run(self, run: Callable[..., T], api: Any, agent: str, **options: Any) -> InThread[T]:
        return InThread(
            run,
            "Work on the repository.",
            cwd=self.project,
            home=self.install.home,
            server_url=api.url,
            agent_name=agent,
            timeout=self.timeout,
            **options,
        )

    def claude(self, api: MockAnthropicAPI, agent: str, **extra: Any) -> InThread[ClaudeResult]:
        extra.setdefault("binary", self.bins["claude"])
        return self._run(run_claude, api, agent, extra_env=self.install.claude_env(), **extra)

    def codex(self, api: MockResponsesAPI, agent: str) -> InThread[CodexResult]:
        return self._run(run_codex, api, agent, proxy_url=api.proxy_url, binary=self.bins["codex"])

    def gemini(self, api: MockGeminiAPI, agent: str) -> InThread[GeminiResult]:
        return self._run(run_gemini, api, agent, model=FAST_MODEL, binary=self.bins["gemini"])

    def opencode(
        self, api: MockChatAPI, agent: str, model: str | None = None
    ) -> InThread[OpencodeResult]:
        # its PATH: the installed CLI first (its bash runs `agent-hooks`), then the system's;
        # the plugin spawns the hook by its absolute path
        return self._run(
            run_opencode,
            api,
            agent,
            proxy_url=api.proxy_url,
            extra_env={"PATH": self.install.agent_path()},
            binary=self.bins["opencode"],
            **({"model": model} if model else {}),
        )

    def qwen(self, api: MockChatAPI, agent: str) -> InThread[QwenResult]:
        return self._run(run_qwen, api, agent, proxy_url=api.proxy_url, binary=self.bins["qwen"])


def process_of(pid: int) -> tuple[str, int]:
    """(command name, parent pid) of a running process, from /proc."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.index("(") + 1 : stat.rindex(")")], int(stat.rpartition(")")[2].split()[1])


def is_client_process(pid: int, launched: int, name: str) -> bool:
    """Whether `pid` is the client process named `name` that the test launched as `launched`:
    that process itself, or the native binary its launcher started (Codex's npm wrapper
    execs it where Node.js has `process.execve`, else spawns it as its child)."""
    comm, parent = process_of(pid)
    return comm == name and launched in (pid, parent)


def codex_refused(output: str, rel: str, holder: str) -> None:
    """What Codex's model read for a call agent-hooks refused: the reason, then the command."""
    assert output.startswith(f"{CODEX_BLOCKED}agent-hooks: {rel} is being changed by {holder}: "), (
        output
    )
    assert ". Command: " in output
    assert ".. Command: " not in output  # Codex adds the period: the reason ends without one


def gemini_refused(result: GeminiToolResult, rel: str, holder: str) -> None:
    error = result.error
    assert error is not None, result
    assert error.startswith(f"{GEMINI_BLOCKED}agent-hooks: {rel} is being changed by {holder}: "), (
        error
    )


def claude_refused(result: ToolResult, rel: str, holder: str) -> None:
    assert result.is_error, result
    assert result.content.startswith(
        f"PreToolUse:{result.tool_name} hook error: agent-hooks: {rel} is being changed by "
        f"{holder}: "
    ), result.content


def finished_ok(result: Any, api: Any, install: Any, what: str) -> None:
    """A client's run ended well: exit 0, no error in its mock, its whole script used (the
    hooks' log in the message otherwise)."""
    context = (
        f"{what}: stdout={result.stdout[-2000:]!r}\nstderr={result.stderr[-3000:]!r}\n"
        f"requests:\n{api.summary()}\nagent-hooks.log:\n" + "\n".join(install.log_lines())
    )
    assert result.returncode == 0, context
    assert api.errors == [], context
    assert api.unused_turns == 0, context


def all_up(*apis: Any) -> Wait:
    """The first step of every run of a test with several runs side by side: wait until each
    run has sent its first model request. Clients started at once start at very different
    speeds on a loaded machine; behind this barrier every later step waits only for the
    other runs' tool calls (``STEP``), never for a start."""

    def up(api: Any) -> Callable[[Any], bool]:
        return lambda _state: requested(MAIN, 1)(api)

    return wait_until(
        all_of(*(Predicate(up(api), f"run {n} is up") for n, api in enumerate(apis))),
        timeout=STARTUP,
    )
