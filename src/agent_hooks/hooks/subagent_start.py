"""SubagentStart: record the subagent in the active work session's `agents_spawned`."""

from __future__ import annotations

from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "SubagentStart"


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    work_session_events.subagent_start(ctx, ctx.project_root())
    return None


def main() -> int:
    return hook_runtime.run(EVENT, handle)
