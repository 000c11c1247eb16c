"""Claude Code (2.1.328, 2.1.332): which of its hook events run which adapter,
what its payloads say a tool call does, and how an answer is written for it
(docs/reference/claude-code-2.1.328/PROTOCOL.md, docs/reference/claude-code-2.1.332/NOTES.md).

Invariants:

* Tools: Write, Edit, MultiEdit (older clients) and NotebookEdit (`notebook_path`)
  edit; Write creates when the response says `type: "create"`. Bash is a shell
  command; after it ran, `tool_response.bashEditDiff` (sent in the auto and
  bypassPermissions modes only, never for `run_in_background`) lists the files it
  changed. Read reads; Agent (Task in older clients) launches a subagent or
  teammate; `mcp__<server>__<tool>` is a tool of an MCP server. A skill's or slash
  command's inline shell line
  (`PreSkillShellCommand`, 2.1.332) is a Bash command of the writer loading it.
* A refusal is `hookSpecificOutput.permissionDecision: "deny"` with the reason;
  an allowed call may carry `additionalContext` (with `permissionDecision:
  "allow"` on PreToolUse); `systemMessage` is shown to the person. Context is cut
  at the client's 10,000 characters.
* The holder process is `CLAUDE_PID` (set in every hook's and the Bash tool's
  environment).

Built-ins only: every hook of this client loads it.
"""

from __future__ import annotations

from agent_hooks.clients import envelope
from agent_hooks.tool_use import (
    CREATED,
    EDIT,
    LAUNCH,
    MCP,
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

NAME = "claude"  # as the entry script's first argument says, and as leases record it
SHORT = "cc"  # its code in a pane's agent name, as ntm writes it (myproject__cc_1)
SHELL_COMMAND = "Bash command"  # what its model calls a command its shell tool runs
LABEL = "Claude Code"
# Its Bash tool's environment names the conversation, and (hooks and Bash) the project.
SESSION_VARIABLES = ("CLAUDE_CODE_SESSION_ID",)
PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR",)
PROCESS_NAMES = ("claude",)  # the native binary's comm
SCRIPT_WORDS = ("claude",)  # ... or a Node.js process running it
# How a pane Claude Code retitles reads (`✳ Claude Code`): no AGENT_NAME a person chose.
PANE_TITLE = "claude code"
# The client's event -> the adapter (agent_hooks.hooks.<module>) that handles it.
EVENTS = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool_use",
    "PreSkillShellCommand": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "StatusLine": "status_line",  # not a hook: Claude Code's statusLine command
    # the plugin form's SessionStart (hooks/run): stands aside when agent-hooks is also
    # installed into settings (install_check)
    "PluginSessionStart": "plugin_session_start",
}
CONTEXT_LIMIT = 10_000
# Events of a shell command no PostToolUse follows: a skill's inline shell line runs
# straight after its hook, unseen after (its end is never known).
UNFOLLOWED: frozenset[str] = frozenset({"PreSkillShellCommand"})
# Events whose answer can carry context to the model.
CONTEXT_EVENTS = frozenset({"SessionStart", "PreToolUse", "PostToolUse"})
TRANSCRIPTS = True  # its transcripts carry the token figures work sessions read
MCP_PREFIX = "mcp__"  # an MCP server's tools: `mcp__<server>__<tool>`
EDIT_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def hook_event(event: str, payload: Mapping[str, Any], environ: Mapping[str, str]) -> HookEvent:
    """The event in `payload`: the common envelope (`clients.envelope`)."""
    return envelope.read(payload, environ, SESSION_VARIABLES)


def tool_use(event: str, payload: Mapping[str, Any]) -> ToolUse | None:
    """What the tool call in `payload` does; None when it names no tool."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if type(name) is not str or not isinstance(tool_input, dict):
        return None  # a `tool_name` that is a list or an object names no tool
    response = payload.get("tool_response")
    if name in EDIT_TOOLS:
        created = (
            name == "Write" and isinstance(response, dict) and response.get("type") == "create"
        )
        return ToolUse(
            name, EDIT, files=[(CREATED if created else MODIFIED, tool_input.get(EDIT_TOOLS[name]))]
        )
    if name == "Bash":
        command = tool_input.get("command")
        diff = response.get("bashEditDiff") if isinstance(response, dict) else None
        return ToolUse(
            name,
            SHELL,
            command=command if isinstance(command, str) else None,
            files=_changed(diff),
            reported=isinstance(diff, dict),
        )
    if name == "Read":
        return ToolUse(name, READING, files=[(READ, tool_input.get("file_path"))])
    if name in ("Agent", "Task"):
        result = response if isinstance(response, dict) else {}
        return ToolUse(
            name,
            LAUNCH,
            launched={
                "agent_id": result.get("agentId"),
                "agent_type": tool_input.get("subagent_type"),
                "description": tool_input.get("description"),
                "name": tool_input.get("name"),
                "output_file": result.get("outputFile"),
            },
        )
    server_tool = mcp_tool(name)
    if server_tool is not None:
        return ToolUse(
            name,
            MCP,
            mcp={
                "server": server_tool[0],
                "tool": server_tool[1],
                "args": tool_input,
                "result": response,
            },
        )
    return ToolUse(name, None)


def mcp_tool(name: object) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool as Claude Code names it, `mcp__<server>__<tool>`
    (the server's name may hold `__` itself), or None."""
    if not isinstance(name, str) or not name.startswith(MCP_PREFIX):
        return None
    server, _, tool = name[len(MCP_PREFIX) :].rpartition("__")
    return (server, tool) if server and tool else None


def _changed(diff: object) -> list[tuple[str, object]]:
    """The files `bashEditDiff` says a Bash command created or modified, each once."""
    if not isinstance(diff, dict):
        return []
    found: list[tuple[str, object]] = []
    seen = set()
    files = diff.get("files")
    for item in files if isinstance(files, list) else ():
        if isinstance(item, dict):
            path = item.get("filePath")
            if isinstance(path, str) and path not in seen:
                found.append((CREATED if item.get("created") is True else MODIFIED, path))
                seen.add(path)
    changed = diff.get("changedFiles")
    for path in changed if isinstance(changed, list) else ():
        if isinstance(path, str) and path not in seen:
            found.append((MODIFIED, path))
            seen.add(path)
    return found


def agent_pid(environ: Mapping[str, str]) -> int | None:
    """The Claude Code process a hook or a Bash command runs under: `CLAUDE_PID`, set in
    both environments; None when missing or no decimal pid of at most nine digits."""
    return holder_pid(environ)


def holder_pid(environ: Mapping[str, str]) -> int | None:
    """The Claude Code process behind this hook (`CLAUDE_PID`)."""
    raw = environ.get("CLAUDE_PID", "")
    pid = int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) < 10 else 0
    return pid if pid > 0 else None


def render(event: str, answer: Answer) -> dict[str, Any] | None:
    """The answer as Claude Code reads it on stdout (exit status 0)."""
    hook_event = "PreToolUse" if event == "PreSkillShellCommand" else event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {"hookEventName": hook_event}
    if answer.deny is not None:
        specific["permissionDecision"] = "deny"
        specific["permissionDecisionReason"] = answer.deny
    elif answer.context is not None:
        specific["additionalContext"] = answer.context
        if hook_event == "PreToolUse":
            specific["permissionDecision"] = "allow"
    if len(specific) > 1:
        out["hookSpecificOutput"] = specific
    if answer.message is not None:
        out["systemMessage"] = answer.message
    return out or None


def status_line(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What Claude Code's `statusLine` command gets on stdin says (unknown: None): the
    project (`workspace.project_dir`, absolute), the working directory, the
    conversation and its transcript, and the context the client counts itself
    (`context_window.current_usage`)."""
    workspace = payload.get("workspace")
    window = payload.get("context_window")
    project_dir = workspace.get("project_dir") if isinstance(workspace, dict) else None
    cwd, session = payload.get("cwd"), payload.get("session_id")
    transcript = payload.get("transcript_path")
    return {
        "project_dir": project_dir if isinstance(project_dir, str) and project_dir else None,
        "cwd": cwd if isinstance(cwd, str) else None,
        "session": session if isinstance(session, str) else None,
        "transcript": transcript if isinstance(transcript, str) else None,
        "usage": window.get("current_usage") if isinstance(window, dict) else None,
    }
