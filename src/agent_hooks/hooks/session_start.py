"""SessionStart: register the agent, begin or continue its trail, sweep old state,
and tell the model who it is and who else works in the project.

Reads `source` (startup | resume | clear | compact) — never `trigger`, the field
the earlier project misread and so wiped state on every resume.
"""

from __future__ import annotations

from agent_hooks import durations, identity, writers
from agent_hooks.agents import roster, state, state_file, sweep, trail_archive
from agent_hooks.hooks import hook_runtime
from agent_hooks.wording import plural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    try:
        agent = ctx.agent
    except identity.IdentityError as exc:
        ctx.log(f"{exc}; agent-hooks is inactive for this agent (fail open)")
        return hook_runtime.Answer(
            context=f"agent-hooks: {exc}. This agent keeps no state, trail or reservations "
            "until AGENT_NAME is fixed (no '/', '..' or control characters; at most 128 "
            "characters)."
        )
    source = ctx.hook.source or "unknown"
    conversation = ctx.hook.session
    project = ctx.project_root()
    pid = ctx.client.holder_pid(ctx.environ)
    archived = trail_archive.load(agent, conversation) if source == "resume" else None
    facts: dict[str, Any] = {}

    def mutate(doc: dict[str, Any]) -> None:
        facts["since"] = doc["last_activity"]
        facts["alerts"] = state.take_alerts(doc, conversation)
        other = _other_live_conversation(doc, conversation, pid, ctx.now)
        facts["shared"] = None
        if other is not None:  # one state file, two conversations running: warn both
            facts["shared"] = _shared_warning(agent, other)
            state.add_alert(doc, _shared_warning(agent, conversation or "?"), other)
        facts["archive"] = state.begin_conversation(
            doc,
            conversation_id=conversation,
            source=source,
            project_root=project,
            pid=pid,
            now=ctx.now,
            archived=archived,
            shared=other is not None,
            client=ctx.client.NAME,
        )
        facts["notices"] = state.take_notices(doc)

    doc = state_file.update(agent, mutate, ctx.now, ctx.log)
    if facts["archive"] is not None:
        trail_archive.archive(agent, facts["archive"], ctx.now)
    swept = sweep.sweep(agent.state_dir, ctx.now, keep=agent.state_file)
    if swept:
        ctx.log(f"swept {plural(len(swept), 'file')} untouched for 7 days: {', '.join(swept)}")
    lines = [_identity_line(agent, project, conversation, source, facts["archive"] is not None)]
    lines.append(_cli_line())
    warning = _name_warning(agent, project, ctx.now, ctx.client.NAME)
    if warning is not None:
        lines.append(f"Warning: {warning}")
    lines += [f"Notice: {text}" for text in facts["notices"]]
    lines += facts["alerts"]
    if facts["shared"]:
        lines.append(facts["shared"])
    lines += _others_lines(agent, project, ctx.now)
    from agent_hooks.briefings import briefing_events
    from agent_hooks.ledger import ledger_summary
    from agent_hooks.work_sessions import work_session_events
    from agent_hooks.workspaces import workspace_events

    if project is not None:
        me = writers.from_event(agent.name, ctx.hook, ctx.client.NAME)
        try:
            lines += ledger_summary.session_start_lines(
                ctx.state_dir, project, me, ctx.environ, ctx.now, since=facts["since"]
            )
        except Exception as exc:  # one part failing must not silence the others
            ctx.log(f"ledger lines failed: {type(exc).__name__}: {exc}")
        from agent_hooks.kept import kept_versions  # after the ledger's tidying
        from agent_hooks.ledger import ledger_location

        if kept_versions.sweep_due(ledger_location.directory(ctx.state_dir, project), ctx.now):
            from agent_hooks.kept import kept_sweep  # only when due: it loads `os`

            kept_sweep.after_turn(ctx.state_dir, project, ctx.now, ctx.log)
    lines += work_session_events.session_start_lines(project, ctx.now, ctx.environ)
    lines += workspace_events.session_start_lines(doc, project, ctx.now, ctx.log)
    # The briefing or freshness verdict comes last and gets the room left.
    budget = hook_runtime.CONTEXT_LIMIT - len("\n".join(lines)) - 1
    lines += briefing_events.session_start_lines(
        agent, doc, source, project, ctx.now, ctx.environ, ctx.log, budget=budget
    )
    shown = warning or (facts["shared"] and facts["shared"].removeprefix("Warning: "))
    message = f"agent-hooks: {shown}" if shown else None
    return hook_runtime.Answer(context="\n".join(lines), message=message)


def _cli_line() -> str:
    """Where the `agent-hooks` command is, absolutely: the agent's Bash may not have
    it on PATH (a login shell without ~/.local/bin)."""
    from agent_hooks.install import cli_command

    command = cli_command.cli_path() or "agent-hooks"
    return f"The agent-hooks command is {command} (use this path if `agent-hooks` is not found)."


def _name_warning(
    agent: identity.Agent, project: str | None, now: float, client: str
) -> str | None:
    """Why this agent's identity is probably not what the person meant, if it is not
    (`client`: the client's command, for the launch line that fixes it)."""
    if agent.name is not None:
        why = identity.suspicious(agent.name)
        if why is None:
            return None
        return (
            f"AGENT_NAME {agent.name!r} is probably not a chosen name: {why}. Relaunch with a "
            f"stable name: `agent-hooks launch {client}` in a tmux pane names it after the "
            f"pane (or `agent-hooks launch --name NAME {client}`)."
        )
    active = [
        record
        for record in roster.load_all(agent.state_dir, now)
        if record.agent.name is not None
        and record.doc["project_root"] == project
        and roster.is_active(record.doc, now)
    ]
    if project is None or not active:
        return None
    return (
        "AGENT_NAME is unset while other agents are active in this project "
        f"({', '.join(r.agent.label for r in active[:5])}): this conversation is an agent of "
        "its own, but it keeps the shared agent-state.json and cannot be told apart by name. "
        "Give each agent its own AGENT_NAME."
    )


def _identity_line(
    agent: identity.Agent,
    project: str | None,
    conversation: str | None,
    source: str,
    archived: bool,
) -> str:
    where = f"in project {project}" if project else "outside any project (no git repository found)"
    if source in ("startup", "clear"):
        trail_note = "a new file trail begins" + (
            " (the previous one is archived)" if archived else ""
        )
    else:
        trail_note = "your file trail continues"
    name = (
        f'agent "{agent.name}"'
        if agent.name is not None
        else "an agent without AGENT_NAME (your state file is the shared agent-state.json)"
    )
    return (
        f"agent-hooks: you are {name} {where}; conversation {conversation or '?'} "
        f"({source}): {trail_note}. Run `agent-hooks status` to see your state."
    )


def _others_lines(agent: identity.Agent, project: str | None, now: float) -> list[str]:
    if project is None:
        return []
    others = [
        record
        for record in roster.load_all(agent.state_dir, now)
        if record.agent.key != agent.key
        and record.doc["project_root"] == project
        and roster.is_active(record.doc, now)
    ]
    if not others:
        return ["No other agent is active in this project."]
    listed = ", ".join(
        f"{record.agent.label} (last active {durations.ago(now - record.doc['last_activity'])})"
        for record in others
    )
    return [f"Other agents active in this project: {listed}."]


def _other_live_conversation(
    doc: dict[str, Any], conversation: str | None, pid: int | None, now: float
) -> str | None:
    """Another conversation still running on this state file (its process alive,
    not this one's): one AGENT_NAME in two panes, or two agents without a name."""
    other = doc["conversation_id"]
    if other in (None, conversation) or (pid is not None and doc["pid"] == pid):
        return None
    return other if roster.is_active(doc, now) else None


def _shared_warning(agent: identity.Agent, other: str) -> str:
    """Told to each of two running conversations that share one state file."""
    if agent.name is None:
        return (
            "Warning: AGENT_NAME is unset and another conversation "
            f"({other}) is still using the shared agent-state.json, so the two "
            "share one state file and one trail. Give each agent its own AGENT_NAME "
            "(ntm sets it per pane)."
        )
    return (
        f"Warning: AGENT_NAME {agent.name!r} is also used by another conversation that is "
        f"still running ({other}): the two share one state file and one trail, and their "
        "edits are told apart only by conversation. Relaunch one of them with its own "
        "AGENT_NAME (a copied launch line?)."
    )


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
