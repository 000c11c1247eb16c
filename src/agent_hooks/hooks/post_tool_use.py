"""PostToolUse (Gemini's AfterTool): add what the tool touched to the agent's
trail (marked with the writer inside a subagent); after a shell command, keep
only the changed files that are this writer's, lease them, and warn if it
changed a file another writer holds; register files written into a workspace;
tell the writer about files it waited for that are free now, and other alerts;
keep the active work session's figures current; remember what a launched
subagent or teammate is called; record the reservations mcp_agent_mail's tools
granted.

What the tool did comes from the client layer (`ToolUse`); the adapter is the
same for every client.
"""

from __future__ import annotations

from agent_hooks import identity, writers
from agent_hooks.agents import state, state_file, trail
from agent_hooks.hooks import hook_runtime
from agent_hooks.tool_use import EDIT, LAUNCH, MODIFIED, SHELL
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from agent_hooks.tool_use import ToolUse

# What the aftermath of a shell command that changed files always loads (after the
# event's preload: agent_hooks.hooks.PRELOAD).
BASH_MODULES = (
    "agent_hooks.liveness",
    "agent_hooks.reservations",
    "agent_hooks.reservations.index_records",
    "agent_hooks.reservations.reservation_index",
    "agent_hooks.ledger.ledger_location",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_minutes",
    "agent_hooks.leases.lease_store",
    "agent_hooks.gate.shell_aftermath",
)


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    use = ctx.client.tool_use(ctx.event, ctx.payload)
    if use is None:
        return None
    if use.name.startswith("mcp__"):
        from agent_hooks.interop import mcp_agent_mail_hook  # only for MCP tools

        warning = mcp_agent_mail_hook.handle(ctx)
        return None if warning is None else hook_runtime.Answer(context=warning)
    found = trail.absolute(use.files, ctx.payload.get("cwd"))
    project = ctx.project_root()
    if use.kind == SHELL and not use.reported and use.command and project is not None:
        found = _visible_writes(ctx, use.command, use.workdir or ctx.cwd or project)
    try:
        name = ctx.agent.name
        agent: identity.Agent | None = ctx.agent
    except identity.IdentityError as exc:
        ctx.log(f"{exc}; nothing recorded for this agent (fail open)")
        name, agent = None, None
    me = writers.from_payload(name, ctx.payload, ctx.environ, ctx.client.NAME)
    told: list[str] = []
    if use.kind == SHELL and found and project is not None:
        found = _after_shell(ctx, project, me, found, told)
    if use.kind == LAUNCH and project is not None:
        _describe_launched(ctx, project, me, use)
    if found and agent is not None:
        told += _record(ctx, agent, me, use, found, project)
    session = work_session_events.post_tool_use(ctx, name, project, found)
    if session is not None:
        told.append(session["additionalContext"])
    if not told:
        return None
    message = session["systemMessage"] if session is not None else None
    return hook_runtime.Answer(context="\n\n".join(told), message=message)


def _visible_writes(ctx: hook_runtime.HookContext, command: str, cwd: str) -> list[tuple[str, str]]:
    """The files a shell command visibly wrote, for a client that does not report
    them (Codex, Gemini CLI; Claude Code outside its auto and bypassPermissions
    modes): the regular files among the command's write targets (`shell.writes`;
    not globs, nor what a script may have written), as modified."""
    from agent_hooks import posix_fs as fs
    from agent_hooks.shell import prefilter

    command = fs.as_written(command)
    if not prefilter.might_write(command):
        return []  # nothing the parser could see: do not pay for loading it
    from agent_hooks import preload

    preload(prefilter.PARSER_MODULES)
    from agent_hooks.shell import writes

    analysis = writes.analyze(command, cwd, ctx.environ.get("HOME"))
    return [
        (MODIFIED, target.path)
        for target in analysis.targets
        if not target.glob and fs.isfile(target.path)
    ]


def _after_shell(
    ctx: hook_runtime.HookContext,
    project: str,
    me: writers.Writer,
    found: list[tuple[str, str]],
    told: list[str],
) -> list[tuple[str, str]]:
    """The files the command changed that are this writer's (leased); a warning
    for held ones it changed."""
    from agent_hooks import preload

    preload(BASH_MODULES)
    from agent_hooks.gate import shell_aftermath

    changed = [path for _, path in found]
    result = shell_aftermath.after_bash(
        ctx.state_dir,
        project,
        me,
        changed,
        ctx.now,
        duration_ms=ctx.payload.get("duration_ms"),
        environ=ctx.environ,
        holder_pid=ctx.client.holder_pid(ctx.environ),
    )
    for problem in result.problems:
        ctx.log(problem)
    if result.foreign:
        from agent_hooks.wording import plural

        ctx.log(
            f"{plural(len(result.foreign), 'file')} the client reported for this Bash command were "
            "written by another writer meanwhile: not attributed"
        )
    if result.warning is not None:
        ctx.log(result.warning)
        told.append(result.warning)
    return [(field, path) for field, path in found if path not in result.foreign]


def _describe_launched(
    ctx: hook_runtime.HookContext, project: str, me: writers.Writer, use: ToolUse
) -> None:
    """Remember the description (and a teammate's name) of the agent just launched,
    so that its leases name it: the hook events inside it carry only its id."""
    launched_by = use.launched or {}
    launched = writers.safe_id(launched_by.get("agent_id"))
    if launched is None:
        return
    from agent_hooks.leases import lease_release
    from agent_hooks.ledger import ledger_location

    kind = launched_by.get("agent_type")
    sub = writers.Writer(
        me.agent, me.conversation, launched, kind if isinstance(kind, str) else None, me.client
    )
    try:
        lease_release.describe_writer(
            ledger_location.directory(ctx.state_dir, project),
            sub,
            description=writers.short_text(launched_by.get("description"), 80),
            name=writers.short_text(launched_by.get("name"), 64),
            now=ctx.now,
        )
    except OSError as exc:
        ctx.log(f"subagent {launched} not described: {exc}")


def _record(
    ctx: hook_runtime.HookContext,
    agent: identity.Agent,
    me: writers.Writer,
    use: ToolUse,
    found: list[tuple[str, str]],
    project: str | None,
) -> list[str]:
    limit = trail.read_limit(ctx.environ)
    workspaces = trail.workspace_prefix(project)
    marked = me.key if me.agent_id else None
    told: list[str] = []
    beat: list[bool] = []

    def mutate(doc: dict[str, Any]) -> bool:
        recorded = trail.record(doc, found, limit, workspaces, marked)
        moved = state.touch(doc, ctx.now, state.ACTIVITY_RESOLUTION)
        if moved and doc["reservations"]:
            beat.append(True)
        changed = moved or recorded
        if doc["waiting"]:
            from agent_hooks.gate import waiting  # only while a writer waits

            before = len(doc["waiting"])
            told.extend(waiting.freed(doc, me, ctx.state_dir, ctx.now))
            changed = changed or len(doc["waiting"]) != before
        if doc["alerts"]:
            told.extend(state.take_alerts(doc))
            changed = True
        return changed

    state_file.update(agent, mutate, ctx.now, ctx.log)
    if beat and project is not None:
        from agent_hooks.leases import writer_cards
        from agent_hooks.ledger import ledger_location

        owner = writers.Writer(me.agent, me.conversation, client=me.client)
        writer_cards.heartbeat(
            ledger_location.directory(ctx.state_dir, project),
            owner,
            ctx.client.holder_pid(ctx.environ),
            ctx.now,
        )
    if workspaces is not None and project is not None and use.kind == EDIT:
        for _, path in found:
            if path.startswith(workspaces):
                # only for a file written into a workspace
                from agent_hooks.workspaces import workspace_events

                workspace_events.after_write(ctx, agent, project, path)
    return told


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
