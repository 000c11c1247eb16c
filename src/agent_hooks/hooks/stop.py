"""Stop: the agent finished a turn. Record the activity, note in the ledger that
none of its shell commands runs on (`command_log.stopped`), refresh the
active work session's token figures, start the sync of a ledger shared with other
machines (detached), and sweep the repository's kept versions when due (at most
every `kept_versions.SWEEP_INTERVAL`); never block."""

from __future__ import annotations

from agent_hooks import identity, writers
from agent_hooks.agents import state, state_file
from agent_hooks.hooks import hook_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    state_file.update(ctx.agent, lambda doc: state.touch(doc, ctx.now), ctx.now, ctx.log)
    from agent_hooks.work_sessions import work_session_events

    project = ctx.project_root()
    turn = work_session_events.Turn(
        ctx.hook, None, ctx.agent.name, ctx.now, ctx.log, transcripts=ctx.client.TRANSCRIPTS
    )
    work_session_events.stop(turn, ctx.environ, project)
    if project is not None:
        from agent_hooks.ledger import remote_view

        remote_view.turn_ended(ctx.state_dir, project, ctx.now)
        from agent_hooks.kept import kept_versions
        from agent_hooks.ledger import ledger_location

        ledger = ledger_location.directory(ctx.state_dir, project)
        turn_ended(ctx, ledger)
        if kept_versions.sweep_due(ledger, ctx.now):
            from agent_hooks.kept import kept_sweep  # only when due: it loads `os`

            kept_sweep.after_turn(ctx.state_dir, project, ctx.now, ctx.log)
    return None


def turn_ended(ctx: hook_runtime.HookContext, ledger: str) -> None:
    """None of the writer's shell commands runs on (a command the client ended with
    no PostToolUse: refused by the person, failed, interrupted)."""
    from agent_hooks.leases import command_log

    try:
        name = ctx.agent.name
    except identity.IdentityError:
        return
    me = writers.from_event(name, ctx.hook, ctx.client.NAME)
    try:
        command_log.stopped(ledger, me, ctx.now)
    except OSError as exc:
        ctx.log(f"the end of this turn's commands not kept: {exc}")


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
