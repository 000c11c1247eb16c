"""`agent-hooks trail`: the files an agent created, modified and read."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks.agents import state, state_file, trail_archive, trail_spill
from agent_hooks.cli._common import agent_choice, emit_json, get_env, json_option, relative


@click.command("trail")
@agent_choice
@click.option("--conversation", metavar="ID", help="An archived conversation's trail.")
@click.option("--previous", is_flag=True, help="The trails of earlier conversations too.")
@click.option("--absolute", is_flag=True, help="Absolute paths (default: relative to the project).")
@json_option
def trail_command(
    agent_name: str | None, conversation: str | None, previous: bool, absolute: bool, as_json: bool
) -> None:
    """Show the trail of AGENT (or --agent NAME; default: AGENT_NAME): the files
    it created, modified and read. An agent without a state file is an error."""
    env = get_env()
    agent = env.known_agent(agent_name)
    doc, problem = state_file.read(agent, env.now)
    if problem:
        raise click.ClickException(f"{agent.state_path} is not valid JSON: {problem}")
    trails: list[dict[str, Any]]
    if conversation is not None:
        found = trail_archive.load(agent, conversation)
        if found is None and doc["conversation_id"] == conversation:
            found = state.trail(doc)
        if found is None:
            raise click.ClickException(f"no trail of conversation {conversation} for {agent.label}")
        trails = [found]
    else:
        trails = [state.trail(doc)] + (trail_archive.list_archived(agent) if previous else [])
    for item in trails:  # the paths seen before the state's window, kept beside it
        for field, paths in trail_spill.spilled(agent, item.get("conversation_id")).items():
            if isinstance(item.get(field), list):
                item[field] = list(dict.fromkeys(paths + item[field]))
    if as_json:
        emit_json({"agent": agent.name, "trails": trails})
        return
    for item in trails:
        root = None if absolute else item.get("project_root")
        click.echo(
            f"# {agent.label} · conversation {item.get('conversation_id') or '-'}"
            f" · project {item.get('project_root') or '-'}"
        )
        for field, title in (
            ("files_created", "created"),
            ("files_modified", "modified"),
            ("files_read", "read"),
        ):
            paths = item.get(field) or []
            click.echo(f"{title} ({len(paths)}):")
            for path in paths:
                click.echo(f"  {relative(path, root)}")


def register(group: click.Group) -> None:
    group.add_command(trail_command)
