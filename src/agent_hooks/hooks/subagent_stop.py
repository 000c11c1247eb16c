"""SubagentStop: the subagent (or teammate) is done. Its leases end — the files it
was changing are free for its parent and siblings —, none of its shell commands
runs on (`hooks.stop.turn_ended`), and the active work
session records it, with the tokens its own transcript shows it used (counted
at a later hook when the client has not written that transcript yet)."""

from __future__ import annotations

from agent_hooks import identity, writers
from agent_hooks.hooks import hook_runtime
from agent_hooks.leases import lease_release
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    project = ctx.project_root()
    try:
        name = ctx.agent.name
    except identity.IdentityError:
        name = None
    me = writers.from_event(name, ctx.hook, ctx.client.NAME)
    if me.agent_id is not None and project is not None:
        from agent_hooks.ledger import ledger_location

        ledger = ledger_location.directory(ctx.state_dir, project)
        try:
            lease_release.release_writer(ledger, me.key, ctx.now)
        except OSError as exc:  # they end with the parent's process, or expire
            ctx.log(f"leases of {me.key} not released: {exc}")
        from agent_hooks.hooks import stop

        stop.turn_ended(ctx, ledger)
    turn = work_session_events.Turn(
        ctx.hook, None, name, ctx.now, ctx.log, transcripts=ctx.client.TRANSCRIPTS
    )
    work_session_events.subagent_stop(turn, ctx.environ, project)
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
