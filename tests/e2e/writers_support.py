"""Helpers of ``test_writers_e2e.py``: the repository's ledger as the tests read it, steps that
snapshot it at a scripted moment, and ``claude -p`` runs in the background.

Invariants:

* Everything here only reads the ledger (``<common git dir>/agent-hooks/``), and as the hooks
  read it (``lease_store``): a file being written (a dot name) is never read; nothing writes it.
* A snapshot step is a ``wait_until`` whose predicate holds at once: the mock takes it exactly
  once, between the waits before it and the turn after it, so the ledger is read at that point.
* :func:`wait_for` polls a condition with a deadline (20 ms steps) and fails naming it; it stands
  for no fixed sleep.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_hooks import jsonio
from agent_hooks.leases import lease_store

from .agent_hooks_install import Installation
from .claude_cli import DEFAULT_PATH_DIRS, ClaudeResult, run_claude
from .clients_support import InThread
from .mock_api import MockAnthropicAPI, ToolCall, ToolResult
from .mock_routes import MAIN, Predicate, Wait, wait_until

LEDGER = "agent-hooks"
HOOK_ERROR = "PreToolUse:Write hook error: "


def ledger_dir(worktree: Path) -> Path:
    """The repository's ledger: ``agent-hooks/`` in the common git dir of ``worktree``."""
    common = git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(common) / LEDGER


def leases(ledger: Path) -> dict[str, list[dict[str, Any]]]:
    """Leased path (worktree-relative) -> its leases, as the lease files hold them now, read
    as the hooks read them (``lease_store``): never a hook's temporary file in the middle of
    being written (``.<name>.<pid>.<hex>.tmp``, a dot name), which a predicate run every 20 ms
    while the clients' hooks write would otherwise meet half written."""
    found: dict[str, list[dict[str, Any]]] = {}
    for rel in lease_store.all_paths(str(ledger)):
        held = lease_store.read(str(ledger), rel)
        if held:
            found[rel] = held
    return found


def writer_cards(ledger: Path) -> dict[str, dict[str, Any]]:
    """Writer key -> its card (what it holds, its description or teammate name); dot names
    (a card being written) are skipped, as the hooks skip them."""
    cards = {}
    for path in sorted((ledger / "writers").glob("*")):
        doc = None if path.name.startswith(".") else jsonio.read_object(str(path))
        if doc is not None:
            cards[doc["writer"]] = doc
    return cards


def snapshot(ledger: Path, into: dict[str, Any], label: str, *files: Path) -> Wait:
    """A step that records ``leases``, ``writer_cards`` and the text of ``files`` (by name;
    ``None`` when missing) as ``into[label]`` when taken."""

    def take(_state: object) -> bool:
        into[label] = {
            "leases": leases(ledger),
            "writers": writer_cards(ledger),
            "files": {f.name: f.read_text() if f.exists() else None for f in files},
        }
        return True

    return wait_until(Predicate(take, f"snapshot({label})"))


def on(api: Any, predicate: Predicate, label: str) -> Predicate:
    """``predicate`` judged on another mock (another client process's conversation; any of
    the mocks: each is the state its predicates read)."""
    return Predicate(lambda _state: predicate(api), label)


def ok(result: ClaudeResult, api: MockAnthropicAPI, install: Installation) -> None:
    """Exit 0, no mock error, the whole main script used; the hooks' log in the message."""
    print(f"claude -p took {result.duration:.2f}s; waits: {api.waits}")
    context = (
        f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}\n"
        "agent-hooks.log:\n" + "\n".join(install.log_lines())
    )
    assert result.returncode == 0, context
    assert api.errors == [], context
    assert api.unused_turns == 0, context


def check(install: Installation, rel: str, cwd: Path, agent: str) -> dict[str, Any]:
    """``agent-hooks check REL --json`` as ``agent`` would run it: would its edit pass?"""
    done = install.cli("check", rel, "--json", cwd=cwd, agent_name=agent, check=False)
    (verdict,) = json.loads(done.stdout)
    assert done.returncode == (0 if verdict["allowed"] else 1), done
    return dict(verdict)


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity and nothing of the developer's configuration."""
    env = {"PATH": ":".join(DEFAULT_PATH_DIRS), "HOME": str(cwd), "LANG": "C.UTF-8"}
    identity = ["-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    return subprocess.run(
        ["git", *identity, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def write(path: Path, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": str(path), "content": content})


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "e2e step"})


def denied(result: ToolResult, rel: str, holder: str) -> None:
    """``result`` is agent-hooks' refusal of a Write of ``rel``, naming ``holder``."""
    assert result.is_error, result
    assert result.content.startswith(HOOK_ERROR + f"agent-hooks: {rel} is being changed by "), (
        result.content
    )
    assert f" is being changed by {holder}: it last wrote the file " in result.content, (
        result.content
    )
    assert "you will be told when it is free" in result.content


def session_id(api: MockAnthropicAPI) -> str:
    """The conversation id the client sent with its main requests."""
    ids = {
        value
        for request in api.requests_in(MAIN)
        for key, value in request.headers.items()
        if key.lower() == "x-claude-code-session-id"
    }
    assert len(ids) == 1, ids
    return ids.pop()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Poll ``condition`` every 20 ms until it holds; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still not {what} after {timeout:g}s"
        time.sleep(0.02)


class Background(InThread[ClaudeResult]):
    """One ``claude -p`` run in a thread: ``process`` once it started, ``result()`` when done."""

    def __init__(self, prompt: str, api: MockAnthropicAPI, **options: Any) -> None:
        super().__init__(run_claude, prompt, server_url=api.url, **options)
