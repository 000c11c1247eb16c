"""What every client module provides: the one interface of `agent_hooks.clients.<module>`,
declared for the type checker (a `Protocol`, like pre-commit's `Language`), which holds
each module of `client_table.CLIENTS` to it.

Only the type checker reads this module (`typing` is imported nowhere on the hot path):
code takes a client as `Client` under `TYPE_CHECKING` and gets a module at run time.

What a client knows, and nothing outside `clients/` (and its installer in `install/`) does:

* who it is: `NAME` (the entry's first argument, recorded on leases and states),
  `LABEL` (how people read it), `SHORT` (its code in a pane's agent name, as ntm writes
  it) and `SHELL_COMMAND` (what its model calls a command its shell tool runs);
* how it is recognised: `SESSION_VARIABLES` (where a command its agent runs finds the
  conversation), `PROJECT_VARIABLES` (where its hooks find the project, when it says),
  `PROCESS_NAMES` (its process's `comm`) and `SCRIPT_WORDS` (a word of the command line
  of the Node.js process that runs it), `PANE_TITLE` (what the pane title it sets holds,
  taken for an AGENT_NAME by a launch-script slip), `agent_pid` (the client process a command names
  in its environment, where the client sets one) and `holder_pid` (the process a hook's
  claims live with);
* what its hooks mean: `EVENTS` (its event → the adapter of `agent_hooks.hooks`),
  `hook_event` (the payload as a `HookEvent`: no adapter or domain code reads a
  payload's keys), `tool_use` (the call as a `ToolUse`);
* how it is answered: `render`, and where context reaches its model (`CONTEXT_EVENTS`,
  `CONTEXT_LIMIT`); whether its transcripts carry token figures (`TRANSCRIPTS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import HookEvent, ToolUse


class Client(Protocol):
    """A client module (see the module's docstring)."""

    # Read-only (properties), so that a module's constants conform.
    @property
    def NAME(self) -> str: ...
    @property
    def LABEL(self) -> str: ...
    @property
    def SHORT(self) -> str: ...
    @property
    def SHELL_COMMAND(self) -> str: ...
    @property
    def EVENTS(self) -> Mapping[str, str]: ...
    @property
    def CONTEXT_LIMIT(self) -> int: ...
    @property
    def CONTEXT_EVENTS(self) -> frozenset[str]: ...
    @property
    def UNFOLLOWED(self) -> frozenset[str]: ...
    @property
    def TRANSCRIPTS(self) -> bool: ...
    @property
    def SESSION_VARIABLES(self) -> tuple[str, ...]: ...
    @property
    def PROJECT_VARIABLES(self) -> tuple[str, ...]: ...
    @property
    def PROCESS_NAMES(self) -> tuple[str, ...]: ...
    @property
    def SCRIPT_WORDS(self) -> tuple[str, ...]: ...
    @property
    def PANE_TITLE(self) -> str | None: ...

    def hook_event(
        self, event: str, payload: Mapping[str, Any], environ: Mapping[str, str]
    ) -> HookEvent:
        """What `payload` says about the event: its conversation, subagent, directory,
        transcripts, tool call id, duration, why a session started."""
        ...

    def tool_use(self, event: str, payload: Mapping[str, Any]) -> ToolUse | None:
        """What the tool call in `payload` does; None when it names no tool."""
        ...

    def agent_pid(self, environ: Mapping[str, str]) -> int | None:
        """The client process a command's environment names, if the client sets one."""
        ...

    def holder_pid(self, environ: Mapping[str, str]) -> int | None:
        """The process a hook's claims live with."""
        ...

    def render(self, event: str, answer: Answer) -> dict[str, Any] | None:
        """The answer as the client reads it on stdout, or None for nothing."""
        ...
