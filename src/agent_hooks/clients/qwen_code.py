"""Qwen Code (0.24.4): which of its hook events run which adapter, what its payloads
say a tool call does, and how an answer is written for it
(docs/reference/OTHER-CLIENTS.md; payloads captured in tests/fixtures/payloads/qwen/).

Qwen Code runs Claude Code-shaped command hooks (`~/.qwen/settings.json`), with
Claude Code's payload envelope (`session_id`, `cwd`, `transcript_path`, `tool_name`,
`tool_input`, `tool_response`, `tool_use_id`, `duration_ms`; `agent_id` inside a
subagent) and Claude Code's deny. It also sets `CLAUDE_PROJECT_DIR` and
`GEMINI_PROJECT_DIR` for its hooks, so it is never recognised by them: the entry's
first argument (`qwen`) says which client runs a hook, and a command an agent runs
finds its conversation in `QWEN_CODE_SESSION_ID`.

Invariants:

* Tools: `write_file` and `edit` edit `file_path`, `notebook_edit` edits
  `notebook_path` (absolute, as the schemas ask; a relative one is relative to
  `cwd`); `write_file` created it when its result says `Successfully created`.
  `run_shell_command` is a shell command run in `directory` (Qwen Code refuses one
  that is not absolute) when given. `read_file` reads. `agent` launches a subagent
  whose id its result names (`task_id: …`). A failed call fires PostToolUseFailure,
  never PostToolUse, so a PostToolUse's files all changed; no result lists the files
  a shell command changed (`reported` stays False).
* Subagents carry `agent_id` in every event (`session_id` is the parent's) and
  `agent_type` at SubagentStart and SubagentStop: they are writers of their own.
* A refusal is `hookSpecificOutput.permissionDecision: "deny"` with the reason (the
  model reads exactly the reason). Context is `hookSpecificOutput.additionalContext`
  alone, sent at SessionStart and PostToolUse only: before a tool runs, any
  `permissionDecision` would be Qwen Code's decision (`allow` skips the user's
  approval), so none is sent with context, and the pre-tool adapter keeps it for the
  writer's next hook. `systemMessage` is shown to the person.
* The holder process is the hook's parent, the CLI's node process (measured: bash
  execs the one command; `QWEN_CODE_LAUNCHER_PID` is the launcher above it).

Built-ins only (`posix`): every hook of this client loads it.
"""

from __future__ import annotations

import posix

from agent_hooks.clients import envelope
from agent_hooks.tool_use import (
    CREATED,
    EDIT,
    LAUNCH,
    MODIFIED,
    READ,
    READING,
    SHELL,
    HookEvent,
    ToolUse,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.hooks.hook_runtime import Answer

NAME = "qwen"  # as the entry script's first argument says, and as leases record it
LABEL = "Qwen Code"
SHORT = "qw"  # its code in a pane's agent name (myproject__qw_1)
SHELL_COMMAND = "shell command"  # what its model calls a command its shell tool runs
SESSION_VARIABLES = ("QWEN_CODE_SESSION_ID",)  # its shell's (measured)
PROJECT_VARIABLES = ("QWEN_PROJECT_DIR",)  # its hooks' (it sets Claude's and Gemini's too)
PROCESS_NAMES: tuple[str, ...] = ()  # a Node.js program:
SCRIPT_WORDS = ("qwen",)  # a word of that process's command line
PANE_TITLE: str | None = None  # not measured
EVENTS = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "SessionEnd": "session_end",
}
CONTEXT_LIMIT = 10_000
# Events of a shell command no PostToolUse follows (none).
UNFOLLOWED: frozenset[str] = frozenset()
# Events whose additionalContext reaches the model.
CONTEXT_EVENTS = frozenset({"SessionStart", "PostToolUse"})
TRANSCRIPTS = False  # its chat files are not Claude Code transcripts
EDIT_TOOLS = {"write_file": "file_path", "edit": "file_path", "notebook_edit": "notebook_path"}
CREATED_TEXT = "Successfully created"
TASK_ID = "task_id: "


def hook_event(event: str, payload: Mapping[str, Any], environ: Mapping[str, str]) -> HookEvent:
    """The event in `payload`: the common envelope (`clients.envelope`)."""
    return envelope.read(payload, environ, SESSION_VARIABLES)


def tool_use(event: str, payload: Mapping[str, Any]) -> ToolUse | None:
    """What the tool call in `payload` does; None when it names no tool."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if type(name) is not str or not isinstance(tool_input, dict):
        return None
    response = payload.get("tool_response")
    said = response.get("llmContent") if isinstance(response, dict) else None
    said = said if isinstance(said, str) else ""
    if name in EDIT_TOOLS:
        created = name == "write_file" and said.startswith(CREATED_TEXT)
        return ToolUse(
            name, EDIT, files=[(CREATED if created else MODIFIED, tool_input.get(EDIT_TOOLS[name]))]
        )
    if name == "run_shell_command":
        command = tool_input.get("command")
        directory = tool_input.get("directory")
        return ToolUse(
            name,
            SHELL,
            command=command if isinstance(command, str) else None,
            workdir=directory
            if isinstance(directory, str) and directory.startswith("/") and "\x00" not in directory
            else None,
        )
    if name == "read_file":
        return ToolUse(name, READING, files=[(READ, tool_input.get("file_path"))])
    if name == "agent":
        return ToolUse(
            name,
            LAUNCH,
            launched={
                "agent_id": _task_id(said),
                "agent_type": tool_input.get("subagent_type"),
                "description": tool_input.get("description"),
                "name": None,
                "output_file": None,
            },
        )
    return ToolUse(name, None)


def _task_id(said: str) -> str | None:
    """The launched subagent's id, as the agent tool's result names it."""
    at = said.find(TASK_ID)
    if at < 0:
        return None
    word = said[at + len(TASK_ID) :].split(None, 1)
    return word[0] if word else None


def agent_pid(environ: Mapping[str, str]) -> int | None:
    """None: Qwen Code's launcher variable names the launcher, not the CLI its agent runs in."""
    return None


def holder_pid(environ: Mapping[str, str]) -> int | None:
    """The Qwen Code process behind this hook: the hook's parent (bash execs it)."""
    pid = posix.getppid()
    return pid if pid > 1 else None


def render(event: str, answer: Answer) -> dict[str, Any] | None:
    """The answer as Qwen Code reads it on stdout (exit status 0)."""
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {"hookEventName": event}
    if answer.deny is not None:
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = answer.deny
    elif answer.context is not None and event in CONTEXT_EVENTS:
        specific["additionalContext"] = answer.context
    if len(specific) > 1:
        out["hookSpecificOutput"] = specific
    if answer.message is not None:
        out["systemMessage"] = answer.message
    return out or None
