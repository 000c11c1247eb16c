"""Stop: the agent finished a turn. Record the activity and refresh the active
work session's token figures; never block."""

from __future__ import annotations

from agent_hooks.agents import state, state_file
from agent_hooks.hooks import hook_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    state_file.update(ctx.agent, lambda doc: state.touch(doc, ctx.now), ctx.now, ctx.log)
    from agent_hooks.work_sessions import work_session_events

    work_session_events.stop(ctx, ctx.project_root())
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
