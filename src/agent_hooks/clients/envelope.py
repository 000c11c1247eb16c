"""The envelope Claude Code puts around every hook payload, which Codex, Gemini CLI
and Qwen Code copy and agent-hooks' opencode plugin speaks: `session_id`, `cwd`,
`transcript_path`, `agent_id`, `agent_type`, `agent_transcript_path`,
`tool_use_id`, `duration_ms`, `source`. Read here, once, into a `HookEvent`; a
client's module calls `read` with its own session variables.

Invariants: a field of the wrong type is left out (None), never an error; `cwd`
and the transcripts count only as absolute paths; a missing `session_id` is the
first non-empty of the client's session variables in the hook's environment;
`duration_ms` only as a number (not a bool).

Built-ins only: every hook loads it.
"""

from __future__ import annotations

from agent_hooks.tool_use import HookEvent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def _path(payload: Mapping[str, Any], key: str) -> str | None:
    value = _text(payload, key)
    return value if value is not None and value.startswith("/") else None


def read(
    payload: Mapping[str, Any], environ: Mapping[str, str], session_variables: tuple[str, ...]
) -> HookEvent:
    """The event in `payload` (see the module's invariants)."""
    session = _text(payload, "session_id")
    for name in session_variables if session is None else ():
        session = session or environ.get(name) or None
    took = payload.get("duration_ms")
    return HookEvent(
        session=session,
        agent_id=_text(payload, "agent_id"),
        agent_type=_text(payload, "agent_type"),
        cwd=_path(payload, "cwd"),
        transcript=_path(payload, "transcript_path"),
        agent_transcript=_path(payload, "agent_transcript_path"),
        tool_use_id=_text(payload, "tool_use_id"),
        duration_ms=took if isinstance(took, int | float) and not isinstance(took, bool) else None,
        source=_text(payload, "source"),
    )
