"""SubagentStart: record the subagent in the active work session's `agents_spawned`."""

from __future__ import annotations

from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    work_session_events.subagent_start(ctx, ctx.project_root())
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
