"""Gemini CLI (0.61.0): which of its hook events run which adapter, what its
payloads say a tool call does, and how an answer is written for it
(docs/reference/gemini-cli-0.61.0/PROTOCOL.md).

Invariants:

* Tools: `write_file` and `replace` edit `file_path`, as the model wrote it
  (relative paths are relative to the payload's `cwd`); `write_file` created it
  when its result says `returnDisplay.isNewFile`. `run_shell_command` is a shell
  command run in `dir_path` (relative to `cwd`) when given. `read_file` reads.
  A call whose result carries `error` changed nothing. No result ever lists the
  files a shell command changed (`reported` stays False).
* Subagents (`invoke_agent`) run with the parent's `session_id` and no id of
  their own: their calls are the parent's writer's (two of them in one turn
  cannot be told apart, and are not).
* A refusal is the top-level `{"decision": "deny", "reason": R}` (Gemini ignores
  Claude Code's `hookSpecificOutput.permissionDecision`); the model reads `Tool
  execution blocked: R`. Context is `hookSpecificOutput.additionalContext`, which
  reaches the model from SessionStart and AfterTool only (BeforeTool's reaches
  nowhere: the pre-tool adapter keeps it for the next AfterTool); `systemMessage`
  is shown to the person.
* The holder process is the hook's parent, the CLI's long-lived worker process
  (measured: bash execs the one command). A SessionEnd hook may outlive the CLI
  (its parent is then init): no holder then.

Built-ins only (`posix`): every hook of this client loads it.
"""

from __future__ import annotations

import posix

from agent_hooks.clients import envelope
from agent_hooks.tool_use import CREATED, EDIT, MODIFIED, READ, READING, SHELL, HookEvent, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.hooks.hook_runtime import Answer

NAME = "gemini"  # as the entry script's first argument says, and as leases record it
SHORT = "gmi"  # its code in a pane's agent name, as ntm writes it (myproject__gmi_1)
SHELL_COMMAND = "shell command"  # what its model calls a command its shell tool runs
LABEL = "Gemini CLI"
SESSION_VARIABLES = ("GEMINI_SESSION_ID",)  # its shell's
PROJECT_VARIABLES = ("GEMINI_PROJECT_DIR",)  # its hooks' (it sets CLAUDE_PROJECT_DIR too)
PROCESS_NAMES: tuple[str, ...] = ()  # a Node.js program:
SCRIPT_WORDS = ("gemini",)  # a word of that process's command line
PANE_TITLE: str | None = None  # not measured
EVENTS = {
    "SessionStart": "session_start",
    "BeforeTool": "pre_tool_use",
    "AfterTool": "post_tool_use",
    "AfterAgent": "stop",
    "SessionEnd": "session_end",
}
CONTEXT_LIMIT = 10_000
# Events of a shell command no AfterTool follows (none).
UNFOLLOWED: frozenset[str] = frozenset()
# Events whose additionalContext reaches the model (measured: SessionStart's is
# prepended to the prompt, AfterTool's appended to the tool's result).
CONTEXT_EVENTS = frozenset({"SessionStart", "AfterTool"})
TRANSCRIPTS = False  # its chat files are not Claude Code transcripts
EDIT_TOOLS = ("write_file", "replace")


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
    failed = isinstance(response, dict) and response.get("error") is not None
    if name in EDIT_TOOLS:
        if failed:
            return ToolUse(name, EDIT)
        shown = response.get("returnDisplay") if isinstance(response, dict) else None
        created = (
            name == "write_file" and isinstance(shown, dict) and shown.get("isNewFile") is True
        )
        return ToolUse(
            name, EDIT, files=[(CREATED if created else MODIFIED, tool_input.get("file_path"))]
        )
    if name == "run_shell_command":
        command = tool_input.get("command")
        return ToolUse(
            name,
            SHELL,
            command=command if isinstance(command, str) else None,
            workdir=_workdir(tool_input.get("dir_path"), payload.get("cwd")),
        )
    if name == "read_file":
        return ToolUse(name, READING, files=[] if failed else [(READ, tool_input.get("file_path"))])
    return ToolUse(name, None)


def _workdir(dir_path: object, cwd: object) -> str | None:
    """Where run_shell_command runs: `dir_path`, absolute or relative to `cwd`."""
    if not isinstance(dir_path, str) or not dir_path or "\x00" in dir_path:
        return None
    if dir_path.startswith("/"):
        return dir_path
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return None
    return cwd.rstrip("/") + "/" + dir_path


def agent_pid(environ: Mapping[str, str]) -> int | None:
    """None: Gemini CLI names no process of its in a command's environment."""
    return None


def holder_pid(environ: Mapping[str, str]) -> int | None:
    """The Gemini CLI worker behind this hook: the hook's parent (bash execs it)."""
    pid = posix.getppid()
    return pid if pid > 1 else None


def render(event: str, answer: Answer) -> dict[str, Any] | None:
    """The answer as Gemini CLI reads it on stdout (exit status 0)."""
    out: dict[str, Any] = {}
    if answer.deny is not None:
        out["decision"] = "deny"
        out["reason"] = answer.deny
    elif answer.context is not None and event in CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": answer.context}
    if answer.message is not None:
        out["systemMessage"] = answer.message
    return out or None
