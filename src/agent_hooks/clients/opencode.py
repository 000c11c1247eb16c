"""opencode (1.18.33): which of the events its plugin sends run which adapter, what
their payloads say a tool call does, and how an answer is written for the plugin
(docs/reference/opencode-1.18.33/PROTOCOL.md; the plugin: hooks/opencode/agent-hooks.js,
docs/adr/0026-opencode-plugin.md).

opencode has no command hooks: agent-hooks' plugin runs inside it, turns its hooks
and bus events into this client's events, and sends each a payload in the hooks'
common envelope — `session_id` the conversation (the root session), `agent_id` and
`agent_type` a child session (a subagent: a writer of its own), `cwd` the directory
opencode works in, `tool_use_id` the model's call id — with opencode's own
`tool_name`, `tool_input` (the tool's args) and `tool_response` (`{title, output,
metadata}`).

Invariants:

* Tools: `write` and `edit` edit `filePath` (absolute as the schema asks, or relative
  to `cwd`); `write` created it when its result's metadata says `exists: false`.
  `apply_patch` (offered to `gpt-*` models instead of write and edit) edits every
  file its patch names, in Codex's grammar (`shell.patch_targets`), relative to
  `cwd`. `bash` is a shell command run in `workdir` (absolute, or relative to
  `cwd`) when given. `read` reads `filePath`. `task` launched the child session its
  result's metadata names. A tool that failed gets no after-event at all, so an
  after-event's files all changed; no result lists the files a shell command
  changed (`reported` stays False).
* A refusal is `{"deny": R}`: the plugin throws `R` and opencode hands the model
  exactly `R` as the tool's result. Context is `{"context": T}`, which reaches the
  model from `tool.execute.after` (appended to the tool's result) and
  `session.created` (added to that session's system prompt); before a tool runs it
  reaches nowhere (the pre-tool adapter keeps it for the writer's next hook).
* The holder process is opencode itself: the plugin runs in it and spawns each hook
  without a shell, with opencode's environment (`OPENCODE_PID`); the hook's parent
  when that variable is missing.

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
    patch_files,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.hooks.hook_runtime import Answer

NAME = "opencode"  # as the entry script's first argument says, and as leases record it
LABEL = "opencode"
SHORT = "oc"  # its code in a pane's agent name (myproject__oc_1)
SHELL_COMMAND = "bash command"  # what its model calls a command its shell tool runs
# Set by agent-hooks' plugin in bash's environment (shell.env): the root session.
SESSION_VARIABLES = ("OPENCODE_SESSION_ID",)
PROJECT_VARIABLES: tuple[str, ...] = ()  # none: the plugin's cwd is opencode's directory
PROCESS_NAMES = ("opencode", "opencode.exe")  # the native binary (npm's bin is it)
SCRIPT_WORDS: tuple[str, ...] = ()  # no Node.js process
PANE_TITLE: str | None = None  # not measured
EVENTS = {
    "session.created": "session_start",
    "tool.execute.before": "pre_tool_use",
    "tool.execute.after": "post_tool_use",
    "session.idle": "stop",
    "session.deleted": "session_end",
    "dispose": "session_end",
    "subagent.created": "subagent_start",
    "subagent.idle": "subagent_stop",
}
CONTEXT_LIMIT = 10_000
# Events of a shell command no tool.execute.after follows (none).
UNFOLLOWED: frozenset[str] = frozenset()
# Events whose context reaches the model (measured: a tool's result carries what the
# after-hook appends; a system prompt what the plugin adds).
CONTEXT_EVENTS = frozenset({"session.created", "tool.execute.after"})
TRANSCRIPTS = False  # its sessions live in its own database
AFTER = "tool.execute.after"


def hook_event(event: str, payload: Mapping[str, Any], environ: Mapping[str, str]) -> HookEvent:
    """The event in `payload`: the common envelope (`clients.envelope`)."""
    return envelope.read(payload, environ, SESSION_VARIABLES)


def tool_use(event: str, payload: Mapping[str, Any]) -> ToolUse | None:
    """What the tool call in `payload` does; None when it names no tool."""
    name = payload.get("tool_name")
    args = payload.get("tool_input")
    if type(name) is not str or not isinstance(args, dict):
        return None
    response = payload.get("tool_response")
    metadata = response.get("metadata") if isinstance(response, dict) else None
    if not isinstance(metadata, dict):
        metadata = {}
    if name in ("write", "edit"):
        created = event == AFTER and name == "write" and metadata.get("exists") is False
        return ToolUse(name, EDIT, files=[(CREATED if created else MODIFIED, args.get("filePath"))])
    if name == "apply_patch":
        patch = args.get("patchText")
        if not isinstance(patch, str):
            return ToolUse(name, None)
        return ToolUse(name, EDIT, files=patch_files(patch))
    if name == "bash":
        command = args.get("command")
        return ToolUse(
            name,
            SHELL,
            command=command if isinstance(command, str) else None,
            workdir=_workdir(args.get("workdir"), payload.get("cwd")),
        )
    if name == "read":
        return ToolUse(name, READING, files=[(READ, args.get("filePath"))])
    if name == "task":
        return ToolUse(
            name,
            LAUNCH,
            launched={
                "agent_id": metadata.get("sessionId"),
                "agent_type": args.get("subagent_type"),
                "description": args.get("description"),
                "name": None,
                "output_file": None,
            },
        )
    return ToolUse(name, None)


def _workdir(workdir: object, cwd: object) -> str | None:
    """Where bash runs: `workdir`, absolute or relative to `cwd` (None: in `cwd`)."""
    if not isinstance(workdir, str) or not workdir or "\x00" in workdir:
        return None
    if workdir.startswith("/"):
        return workdir
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return None
    return cwd.rstrip("/") + "/" + workdir


def agent_pid(environ: Mapping[str, str]) -> int | None:
    """None: a command in opencode's bash is found under opencode by its process name
    (`OPENCODE_PID`, inherited, would name an outer opencode as readily)."""
    return None


def holder_pid(environ: Mapping[str, str]) -> int | None:
    """The opencode process behind this hook: `OPENCODE_PID` (opencode sets it in its
    own environment, which the plugin passes on), else the hook's parent."""
    raw = environ.get("OPENCODE_PID", "")
    if raw.isascii() and raw.isdigit() and 0 < len(raw) < 10 and int(raw) > 1:
        return int(raw)
    pid = posix.getppid()
    return pid if pid > 1 else None


def render(event: str, answer: Answer) -> dict[str, Any] | None:
    """The answer as the plugin reads it on stdout (exit status 0)."""
    out: dict[str, Any] = {}
    if answer.deny is not None:
        out["deny"] = answer.deny
    elif answer.context is not None and event in CONTEXT_EVENTS:
        out["context"] = answer.context
    if answer.message is not None:
        out["message"] = answer.message
    return out or None
