"""SubagentStart: record the subagent in the active work session's `agents_spawned`."""

from __future__ import annotations

from agent_hooks import identity
from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    try:
        name = ctx.agent.name
    except identity.IdentityError:  # only a label in the work session
        name = None
    turn = work_session_events.Turn(
        ctx.hook, None, name, ctx.now, ctx.log, transcripts=ctx.client.TRANSCRIPTS
    )
    work_session_events.subagent_start(turn, ctx.environ, ctx.project_root())
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
