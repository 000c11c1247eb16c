"""PreToolUse (and Claude Code's skill shell lines, Gemini's BeforeTool): refuse a
change to a file another writer holds, and lease what the writer may change.

The client layer says what the tool does (`ToolUse`): an edit of named files, or
a shell command line; anything else (reads included) is never blocked. The
writer is the agent plus the payload's `agent_id` inside a subagent or teammate.
The gate decides (`edit_gate` for each file an edit writes, `shell_gate` for a
command); the adapter turns its verdict into an `Answer`: a refusal, or an allowed
call with context (a file another worktree is changing) — where the client cannot
carry context before a tool runs, it is kept for the writer's next hook.

Invariants: a refusal, once decided, is answered whatever else fails (noting the
refused writer, to tell it when the file frees, is a side note: its failure is
logged, never an allow). `AGENT_HOOKS_ENFORCE=off` lets a refused call through
(logged). In a ledger shared with other machines the hook starts the detached
sync when it is due and never waits for it (`remote_view.on_tool_call`).
"""

from __future__ import annotations

from agent_hooks import identity, writers
from agent_hooks.gate import tool_call
from agent_hooks.hooks import hook_runtime
from agent_hooks.tool_use import EDIT, SHELL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from agent_hooks.gate.tool_call import Verdict

# What a file edit always loads (after the event's preload: agent_hooks.hooks.PRELOAD).
SHELL_MODULES = ("agent_hooks.shell.prefilter", "agent_hooks.gate.shell_gate")
# What noting a shell command's start loads.
COMMAND_MODULES = ("agent_hooks.leases.command_log",)
EDIT_MODULES = (
    "agent_hooks.liveness",
    "agent_hooks.gate.places",
    "agent_hooks.gate.protected",
    "agent_hooks.reservations.blocking",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_store",
    "agent_hooks.gate.edit_gate",
)


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    use = ctx.tool_use()
    if use is None or use.kind not in (EDIT, SHELL):
        return None
    try:
        me = writers.from_event(ctx.agent.name, ctx.hook, ctx.client.NAME)
    except identity.IdentityError as exc:
        # Such a writer can never hold anything, so checking it against everyone
        # else's claims is safe: it cannot walk around them by a bad name.
        ctx.log(f"{exc}; checked as a writer that holds nothing")
        me = writers.nobody()
    call = tool_call.ToolCall(
        writer=me,
        cwd=use.workdir or ctx.cwd,
        project=ctx.project_root(),
        state_dir=ctx.state_dir,
        environ=ctx.environ,
        now=ctx.now,
        tool_use_id=writers.safe_id(ctx.hook.tool_use_id),
        holder_pid=ctx.client.holder_pid(ctx.environ),
        shell_command=ctx.client.SHELL_COMMAND,
    )
    if call.project is not None:  # its repository's rules are asked (`_shared_ledger` at least)
        from agent_hooks import preload
        from agent_hooks.ledger.repo import RULES_MODULES

        preload(RULES_MODULES)
    verdict = _decide(call, use)
    if call.project is not None:
        _shared_ledger(call, verdict)
    for problem in verdict.problems:
        ctx.log(problem)
    refusal = verdict.refusal
    if use.kind == SHELL and (refusal is None or refusal.overridden):
        _started(ctx, call)
    if refusal is None:
        return _allowed(ctx, "\n".join(verdict.context)) if verdict.context else None
    first_line = refusal.reason.splitlines()[0]
    if refusal.overridden:
        ctx.log(f"AGENT_HOOKS_ENFORCE=off: allowed {use.name} that would be denied: {first_line}")
        return None
    ctx.log(f"denied {use.name}: {first_line}")
    if refusal.waiting is not None:
        try:
            from agent_hooks.gate import waiting  # only on a deny

            waiting.note(ctx.agent, refusal.waiting, ctx.now, ctx.log)
        except Exception as exc:  # a side note: the refusal stands whatever happens to it
            ctx.log(f"not noted to tell when {refusal.waiting.get('rel')!r} frees: {exc}")
    return hook_runtime.Answer(deny=refusal.reason)


def _decide(call: tool_call.ToolCall, use: object) -> Verdict:
    from agent_hooks.tool_use import ToolUse

    assert isinstance(use, ToolUse)
    if use.kind == SHELL:
        from agent_hooks import preload

        preload(SHELL_MODULES)
        from agent_hooks.gate import shell_gate

        return shell_gate.decide(call, use.command)
    from agent_hooks import preload

    preload(EDIT_MODULES)
    from agent_hooks.gate import edit_gate

    return edit_gate.decide_all(call, use.targets())


def _shared_ledger(call: tool_call.ToolCall, verdict: Verdict) -> None:
    """A ledger shared with other machines: start its detached sync when due, and
    say so when what this machine knows of the others is behind (docs/adr/0016)."""
    assert call.project is not None
    home = call.repo(call.project)
    if home.shared:
        from agent_hooks.ledger import remote_view

        note = remote_view.on_tool_call(home.ledger, home.index, call.now)
        if note is not None:
            verdict.context.append(note)


def _started(ctx: hook_runtime.HookContext, call: tool_call.ToolCall) -> None:
    """The shell command about to run starts now, as the project's ledger keeps it
    (`leases.command_log`): a held file changed while it runs is put down to it.
    Not for a line no PostToolUse follows (a skill's shell line): its end is never
    known."""
    if (
        call.project is None
        or ctx.event in ctx.client.UNFOLLOWED
        or call.writer.conversation == writers.NOBODY
    ):
        return
    from agent_hooks import preload

    preload(COMMAND_MODULES)
    from agent_hooks.leases import command_log

    home = call.repo(call.project)
    try:
        command_log.started(home.ledger, call.writer, home.worktree, call.tool_use_id, call.now)
    except (OSError, ValueError) as exc:
        ctx.log(f"when this shell command started not kept: {exc}")


def _allowed(ctx: hook_runtime.HookContext, context: str) -> hook_runtime.Answer | None:
    """An allowed call with context; kept for the writer's next hook when the
    client drops context given before a tool runs."""
    if ctx.event in ctx.client.CONTEXT_EVENTS:
        return hook_runtime.Answer(context=context)
    try:
        from agent_hooks.agents import state, state_file

        state_file.update(ctx.agent, lambda doc: state.add_alert(doc, context), ctx.now, ctx.log)
    except Exception as exc:
        ctx.log(f"context not kept for later: {exc}")
    return None


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
