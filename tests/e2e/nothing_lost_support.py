"""Helpers of ``test_nothing_lost_e2e.py``: a shared checkout with committed files, two agents'
``claude -p`` conversations run side by side against their own mocks, and what each model was
told at a given request.

Invariants:

* Nothing here sleeps to decide an outcome: an order between the two conversations is a
  ``wait_until`` step of one mock on the other (``writers_support.on``) or on a file.
* :func:`act` is a step that does something (touch a marker, read a file) at the moment the mock
  takes it and holds at once, like ``writers_support.snapshot``.
* :func:`added_text` is exactly what one request added to its conversation: the tool results of
  the turn before and whatever the hooks attached to them, not the history repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .agent_hooks_install import Installation
from .claude_cli import ClaudeResult, run_claude
from .mock_api import MockAnthropicAPI, RecordedRequest, ToolCall, ToolResult, request_text
from .mock_routes import MAIN, Predicate, Wait, turns_done, wait_until
from .writers_support import Background, git, on

AGENT_A, AGENT_B = "proj__cc_1", "proj__cc_2"
ORIGINAL = "original = 1\n"
A_EDIT = "edited_by_a = 1\n"
BASH_HOOK_ERROR = "PreToolUse:Bash hook error: "


def shared_repo(project: Path) -> tuple[Path, Path]:
    """Commit ``src/app.py`` (A's file) and ``src/b.py`` (B's) on branch ``main`` of the
    ``git_project`` checkout both agents work in; returns their paths."""
    git(project, "symbolic-ref", "HEAD", "refs/heads/main")
    app, other = project / "src" / "app.py", project / "src" / "b.py"
    app.parent.mkdir()
    app.write_text(ORIGINAL)
    other.write_text("b = 1\n")
    git(project, "add", "src")
    git(project, "commit", "-q", "-m", "initial")
    return app, other


def read(path: Path) -> ToolCall:
    return ToolCall("Read", {"file_path": str(path)})


def bash(command: str, *, background: bool = False) -> ToolCall:
    tool_input: dict[str, Any] = {"command": command, "description": "e2e step"}
    if background:
        tool_input["run_in_background"] = True
    return ToolCall("Bash", tool_input)


def act(action: Callable[[], object], label: str) -> Wait:
    """A step that runs ``action`` when the mock takes it (between the turn before and the next)
    and holds at once."""

    def take(_state: object) -> bool:
        action()
        return True

    return wait_until(Predicate(take, label))


def after(api: MockAnthropicAPI, turns: int, label: str) -> Wait:
    """Hold the next turn until the other conversation (``api``'s) came back after its
    ``turns``-th turn: its tool calls ran, their PostToolUse hooks included."""
    return wait_until(on(api, turns_done(MAIN, turns), label))


def file_reads(path: Path, text: str) -> Predicate:
    """True once ``path`` holds exactly ``text``."""
    return Predicate(
        lambda _state: path.exists() and path.read_text() == text, f"{path.name} == {text!r}"
    )


def added_text(api: MockAnthropicAPI, n: int) -> str:
    """All text the ``n``-th main request (0-based) added to the conversation: the tool results
    of turn ``n - 1`` and the context hooks attached to them (``n`` = 0: the whole first request,
    system prompt included)."""
    requests = api.requests_in(MAIN)
    if n == 0:
        return request_text(requests[0].json)
    return request_text({"messages": _new_messages(requests, n)})


def told_after(api: MockAnthropicAPI, tool: ToolResult) -> str:
    """What the model read with ``tool``'s result: all text of the request that carried it."""
    requests = api.requests_in(MAIN)
    for n in range(1, len(requests)):
        for message in _new_messages(requests, n):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("tool_use_id") == tool.tool_use_id:
                    return added_text(api, n)
    raise AssertionError(f"no request carried the result of {tool.tool_use_id}")


def _new_messages(requests: Sequence[RecordedRequest], n: int) -> list[dict[str, Any]]:
    """The messages request ``n`` has beyond those of request ``n - 1`` (each repeats the
    history before it)."""
    before = len(requests[n - 1].json.get("messages") or [])
    return list((requests[n].json.get("messages") or [])[before:])


def refused_bash(result: ToolResult) -> str:
    """The text of agent-hooks' refusal of a Bash call (fails when it was no refusal)."""
    assert result.is_error, result
    assert result.content.startswith(BASH_HOOK_ERROR + "agent-hooks: "), result.content
    return result.content[len(BASH_HOOK_ERROR) :]


@dataclass
class Pair:
    """The two conversations of one test, once both ended."""

    a_api: MockAnthropicAPI
    a: ClaudeResult
    b_api: MockAnthropicAPI
    b: ClaudeResult


def run_pair(
    claude_bin: str,
    home: Path,
    project: Path,
    install: Installation,
    a_api: MockAnthropicAPI,
    b_api: MockAnthropicAPI,
    *,
    a_args: Sequence[str] = (),
    b_args: Sequence[str] = (),
) -> Pair:
    """A (``proj__cc_1``) in the background, B (``proj__cc_2``) in this thread, both in
    ``project`` with agent-hooks installed; their scripts order them."""
    options: dict[str, Any] = {
        "cwd": project,
        "home": home,
        "extra_env": install.claude_env(),
        "binary": claude_bin,
        "timeout": 90,
    }
    first = Background("Work on src/app.py.", a_api, agent_name=AGENT_A, args=a_args, **options)
    try:
        second = run_claude(
            "Work on the project.",
            server_url=b_api.url,
            agent_name=AGENT_B,
            args=b_args,
            **options,
        )
    finally:
        done = first.result(120)
    return Pair(a_api, done, b_api, second)
