"""Codex CLI (0.169.0): which of its hook events run which adapter, what its
payloads say a tool call does, and how an answer is written for it
(docs/reference/codex-0.169.0/PROTOCOL.md).

Invariants:

* Tools: `apply_patch` edits every file its patch names (`shell.patch_targets`):
  added ones are created; updated and deleted ones modified; a moved file is its
  old name (modified) and its new one (created). Paths are as the patch writes
  them, relative to the payload's `cwd` (which is an `exec_command`'s workdir when
  it has one) or absolute. `Bash` is a shell command — except exactly the form
  Codex intercepts and applies itself, `[cd DIR &&] apply_patch <<'EOF' … EOF`,
  which is the edit its patch makes (in DIR): it gets no PostToolUse, so only
  this way does it take leases. After `apply_patch` ran, its files count only when
  the output says `Success.`; a shell command's output is text, never a list of
  changed files (`reported` stays False).
* Subagents carry `agent_id` and `agent_type` in every event (`session_id` is
  the parent's): they are writers of their own. A spawned subagent's id is not in
  its spawn call's result, so a launch names nobody.
* A refusal is `hookSpecificOutput.permissionDecision: "deny"` with the reason
  (the model reads `Command blocked by PreToolUse hook: R. Command: …`). Context
  is `hookSpecificOutput.additionalContext` alone: `permissionDecision: "allow"`
  without `updatedInput` makes Codex count the hook as failed, and
  `systemMessage` reaches no one, so neither is ever sent.
* The holder process is the hook's parent: Codex starts each hook through
  `bash -c`, which execs the one command (measured: `getppid()` is codex).

Built-ins only (`posix`): every hook of this client loads it.
"""

from __future__ import annotations

import posix

from agent_hooks.clients import envelope
from agent_hooks.tool_use import EDIT, SHELL, HookEvent, ToolUse, patch_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.hooks.hook_runtime import Answer

NAME = "codex"  # as the entry script's first argument says, and as leases record it
SHORT = "cod"  # its code in a pane's agent name, as ntm writes it (myproject__cod_1)
SHELL_COMMAND = "shell command"  # what its model calls a command its shell tool runs
LABEL = "Codex"
SESSION_VARIABLES = ("CODEX_THREAD_ID",)  # its shell's: the thread its hooks call session_id
PROJECT_VARIABLES: tuple[str, ...] = ()  # none: the project is the payload cwd's
PROCESS_NAMES = ("codex",)  # the native binary's comm
SCRIPT_WORDS = ("codex",)  # ... or a Node.js process running its npm wrapper
PANE_TITLE: str | None = None  # not measured
EVENTS = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
CONTEXT_LIMIT = 10_000
# Events of a shell command no PostToolUse follows (none: Codex's intercepted
# apply_patch is an edit).
UNFOLLOWED: frozenset[str] = frozenset()
# Events whose additionalContext reaches the model (measured: the next request
# carries it as a developer message).
CONTEXT_EVENTS = frozenset({"SessionStart", "PreToolUse", "PostToolUse"})
TRANSCRIPTS = False  # its rollout files are not Claude Code transcripts
PATCH_COMMANDS = ("apply_patch", "applypatch")
PATCH_SUCCESS = "Success. Updated the following files:"


def hook_event(event: str, payload: Mapping[str, Any], environ: Mapping[str, str]) -> HookEvent:
    """The event in `payload`: the common envelope (`clients.envelope`)."""
    return envelope.read(payload, environ, SESSION_VARIABLES)


def tool_use(event: str, payload: Mapping[str, Any]) -> ToolUse | None:
    """What the tool call in `payload` does; None when it names no tool."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if type(name) is not str or not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    if not isinstance(command, str):
        return ToolUse(name, None)
    if name == "apply_patch":
        response = payload.get("tool_response")
        if event == "PostToolUse" and not (isinstance(response, str) and PATCH_SUCCESS in response):
            return ToolUse(name, EDIT)  # it failed: nothing changed
        return ToolUse(name, EDIT, files=patch_files(command))
    if name == "Bash":
        intercepted = intercepted_patch(command)
        cwd = payload.get("cwd")
        if intercepted is not None:
            workdir, patch = intercepted
            if workdir is not None and not workdir.startswith("/"):
                if not (isinstance(cwd, str) and cwd.startswith("/")):
                    return ToolUse(name, SHELL, command=command)  # where it runs is unknown
                workdir = cwd.rstrip("/") + "/" + workdir
            return ToolUse(name, EDIT, files=patch_files(patch), workdir=workdir)
        return ToolUse(name, SHELL, command=command)
    return ToolUse(name, None)


def intercepted_patch(command: str) -> tuple[str | None, str] | None:
    """(directory or None, patch) when `command` is exactly a shell form Codex applies
    itself — `apply_patch <<'EOF'` (any delimiter, quoted or not), the here-doc, its
    end, nothing else; optionally after `cd DIR &&` — else None. Anything else
    (another command beside it, a pipe, an expansion in an unquoted here-doc) is left
    to the shell analysis."""
    text = command.strip()
    workdir = None
    if text.startswith("cd "):
        head, sep, rest = text.partition("&&")
        target = head[3:].strip()
        if not sep or not target or _needs_shell(target):
            return None
        workdir, text = _unquoted(target), rest.strip()
    for name in PATCH_COMMANDS:
        if text.startswith(name) and text[len(name) : len(name) + 1] in (" ", "\t", "<"):
            rest = text[len(name) :].lstrip(" \t")
            break
    else:
        return None
    if not rest.startswith("<<") or rest.startswith(("<<<", "<<-")):
        return None
    opener, _, body = rest[2:].partition("\n")
    delimiter = opener.strip()
    quoted = delimiter[:1] in ("'", '"') and len(delimiter) > 1 and delimiter[-1] == delimiter[0]
    if quoted:
        delimiter = delimiter[1:-1]
    if not delimiter or _needs_shell(delimiter):
        return None
    lines = body.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or lines[-1] != delimiter:
        return None
    patch = "\n".join(lines[:-1]) + "\n"
    if delimiter in lines[:-1] or (not quoted and ("$" in patch or "`" in patch or "\\" in patch)):
        return None
    return workdir, patch


def _needs_shell(word: str) -> bool:
    """Does `word` hold anything the shell would expand, split or act on?"""
    return any(c in _unquoted(word) for c in "$`\\;|&<>(){}*?[~'\" \n\t")


def _unquoted(word: str) -> str:
    if len(word) > 1 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def agent_pid(environ: Mapping[str, str]) -> int | None:
    """None: Codex names no process of its in a command's environment."""
    return None


def holder_pid(environ: Mapping[str, str]) -> int | None:
    """The codex process behind this hook: the hook's parent (bash execs it)."""
    pid = posix.getppid()
    return pid if pid > 1 else None


def render(event: str, answer: Answer) -> dict[str, Any] | None:
    """The answer as Codex reads it on stdout (exit status 0)."""
    specific: dict[str, Any] = {"hookEventName": event}
    if answer.deny is not None:
        specific["permissionDecision"] = "deny"
        # Codex shows `…hook: R. Command: …`: a reason's own closing period would read "..".
        specific["permissionDecisionReason"] = answer.deny.rstrip().removesuffix(".")
    elif answer.context is not None:
        specific["additionalContext"] = answer.context
    return {"hookSpecificOutput": specific} if len(specific) > 1 else None
