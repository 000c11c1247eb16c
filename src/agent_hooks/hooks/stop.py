"""Stop: the agent finished a turn. Record the activity, refresh the active
work session's token figures, and start the sync of a ledger shared with other
machines (detached); never block."""

from __future__ import annotations

from agent_hooks.agents import state, state_file
from agent_hooks.hooks import hook_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    state_file.update(ctx.agent, lambda doc: state.touch(doc, ctx.now), ctx.now, ctx.log)
    from agent_hooks.work_sessions import work_session_events

    project = ctx.project_root()
    work_session_events.stop(ctx, project)
    if project is not None:
        from agent_hooks.ledger import remote_view

        remote_view.turn_ended(ctx.state_dir, project, ctx.now)
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
