"""`agent-hooks status`: this agent's identity, conversation and trail counts."""

from __future__ import annotations

import click

from agent_hooks import durations
from agent_hooks.agents import roster, state_file, trail_spill
from agent_hooks.cli import doctor
from agent_hooks.cli._common import agent_choice, emit_json, get_env, json_option


@click.command()
@agent_choice
@json_option
def status(agent_name: str | None, as_json: bool) -> None:
    """Show an agent's state: who it is, its project, conversation and trail
    counts. AGENT (or --agent NAME) names another agent, which must have a state
    file; without it, this agent (AGENT_NAME), which may have none yet."""
    env = get_env()
    agent = env.known_agent(agent_name) if agent_name is not None else env.agent()
    doc, problem = state_file.read(agent, env.now)
    if problem:
        raise click.ClickException(f"{agent.state_path} is not valid JSON: {problem}")
    trail = trail_spill.counts(agent, doc)
    summary = {
        "agent": agent.name,
        "state_file": agent.state_path,
        "exists": doc["registered"] or bool(doc["conversations"]),
        "project_root": doc["project_root"],
        "conversation_id": doc["conversation_id"],
        "active": roster.is_active(doc, env.now),
        "last_activity": doc["last_activity"],
        "issue_id": doc["issue_id"],
        "files_created": trail["files_created"],
        "files_modified": trail["files_modified"],
        "files_read": trail["files_read"],
        "reservations": doc["reservations"],
        "client": doc["client"],
        "client_problems": doctor.problems(env.environ),
    }
    if as_json:
        emit_json(summary)
        return
    click.echo(f"agent:        {agent.label}")
    click.echo(f"state file:   {agent.state_path}")
    for line in summary["client_problems"]:
        click.echo(f"warning: {line} (agent-hooks doctor says more)")
    if not summary["exists"]:
        click.echo("no state yet: the SessionStart hook has not run for this agent")
        return
    active = "active" if summary["active"] else "inactive"
    if doc["client"]:
        click.echo(f"client:       {doc['client']}")
    click.echo(f"project:      {doc['project_root'] or '-'}")
    click.echo(
        f"conversation: {doc['conversation_id'] or '-'} ({active}, last activity "
        f"{durations.ago(env.now - doc['last_activity'])})"
    )
    if doc["issue_id"]:
        click.echo(f"issue:        {doc['issue_id']}")
    click.echo(
        f"trail:        {summary['files_created']} created, "
        f"{summary['files_modified']} modified, {summary['files_read']} read"
    )


def register(group: click.Group) -> None:
    group.add_command(status)
