"""`agent-hooks brief set-goal | add | focus | show | clear`: what an agent carries
into its next conversation in this project (injected at SessionStart)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from agent_hooks import identity, timestamps
from agent_hooks.briefings import briefing, briefing_store
from agent_hooks.cli._common import (
    Env,
    emit_json,
    get_env,
    json_option,
    project_option,
    require_project,
)

agent_option = click.option(
    "--agent", "agent_name", metavar="NAME", help="Another agent's briefing (default: AGENT_NAME)."
)


def _target(env: Env, agent_name: str | None, project: str | None) -> tuple[identity.Agent, str]:
    return env.agent(agent_name), require_project(env, project)


def _change(
    agent_name: str | None,
    project: str | None,
    as_json: bool,
    mutate: Callable[[dict[str, Any], float], None],
    said: str,
) -> None:
    env = get_env()
    agent, root = _target(env, agent_name, project)
    try:
        doc = briefing_store.update(agent, root, lambda d: mutate(d, env.now), env.now)
    except briefing.BriefingError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(doc)
    else:
        click.echo(f"{said} in the briefing of {agent.label} for {root}")


@click.group("brief")
def brief_group() -> None:
    """The briefing your next conversation in this project starts from."""


@brief_group.command("set-goal")
@click.argument("text", nargs=-1, required=True)
@agent_option
@project_option
@json_option
def set_goal(
    text: tuple[str, ...], agent_name: str | None, project: str | None, as_json: bool
) -> None:
    """Set the GOAL (replaces the previous one)."""
    _change(
        agent_name,
        project,
        as_json,
        lambda d, now: briefing.set_goal(d, " ".join(text), now),
        "goal set",
    )


@brief_group.command("add")
@click.option("--decision", "decisions", multiple=True, help="A decision already made.")
@click.option("--finding", "findings", multiple=True, help="A finding already confirmed.")
@click.option("--change", "changes", multiple=True, help="Something that changed.")
@agent_option
@project_option
@json_option
def add(
    decisions: tuple[str, ...],
    findings: tuple[str, ...],
    changes: tuple[str, ...],
    agent_name: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Add decisions, findings or changes (each option may be repeated)."""
    items = (
        [("decision", t) for t in decisions]
        + [("finding", t) for t in findings]
        + [("change", t) for t in changes]
    )
    if not items:
        raise click.ClickException("give --decision, --finding or --change")

    def mutate(doc: dict[str, Any], now: float) -> None:
        for kind, text in items:
            briefing.add(doc, kind, text, now)

    said = f"{len(items)} entr{'y' if len(items) == 1 else 'ies'} added"
    _change(agent_name, project, as_json, mutate, said)


@brief_group.command("focus")
@click.argument("text", nargs=-1, required=True)
@agent_option
@project_option
@json_option
def focus(
    text: tuple[str, ...], agent_name: str | None, project: str | None, as_json: bool
) -> None:
    """Set the FOCUS FOR THIS SESSION (replaces the previous one)."""
    _change(
        agent_name,
        project,
        as_json,
        lambda d, now: briefing.set_focus(d, " ".join(text), now),
        "focus set",
    )


@brief_group.command("show")
@agent_option
@project_option
@json_option
def show(agent_name: str | None, project: str | None, as_json: bool) -> None:
    """Show the briefing as the next SessionStart will inject it (every entry)."""
    env = get_env()
    agent, root = _target(env, agent_name, project)
    doc = briefing_store.load(agent, root, env.now)
    if as_json:
        emit_json(doc)
        return
    if doc is None or briefing.is_empty(doc):
        click.echo(f"No briefing is recorded for {agent.label} in {root}.")
        return
    updated = timestamps.local(doc["updated_at"])
    click.echo(f"# briefing of {agent.label} for {root} (updated {updated})")
    click.echo(briefing.render(doc, limit=1 << 30))


@brief_group.command("clear")
@agent_option
@project_option
@json_option
def clear(agent_name: str | None, project: str | None, as_json: bool) -> None:
    """Delete the briefing."""
    env = get_env()
    agent, root = _target(env, agent_name, project)
    removed = briefing_store.clear(agent, root)
    if as_json:
        emit_json({"cleared": removed})
    else:
        click.echo("briefing cleared" if removed else f"no briefing for {agent.label} in {root}")


def register(group: click.Group) -> None:
    group.add_command(brief_group)
