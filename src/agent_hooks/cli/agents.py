"""`agent-hooks agents`: every agent in the state directory."""

from __future__ import annotations

import click

from agent_hooks import durations, roster
from agent_hooks.cli._common import emit_json, get_env, json_option


@click.command()
@click.option("--project", "project", metavar="DIR", help="Only agents working in DIR.")
@json_option
def agents(project: str | None, as_json: bool) -> None:
    """List all agents: name, project, activity and trail counts."""
    env = get_env()
    env.check_state_dir()
    root = env.project_root(project) if project else None
    rows = []
    for record in roster.load_all(env.state_dir, env.now):
        doc = record.doc
        if root is not None and doc["project_root"] != root:
            continue
        rows.append(
            {
                "agent": record.agent.name,
                "state_file": record.agent.state_path,
                "project_root": doc["project_root"],
                "active": roster.is_active(doc, env.now),
                "last_activity": doc["last_activity"],
                "files_created": len(doc["files_created"]),
                "files_modified": len(doc["files_modified"]),
                "files_read": len(doc["files_read"]),
                "problem": record.problem,
            }
        )
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(
            "no agents" + (f" in {root}" if root else "") + f" (state directory {env.state_dir})"
        )
        return
    for row in rows:
        name = row["agent"] or "(shared agent-state.json)"
        if row["problem"]:
            click.echo(f"{name:<28} unreadable: {row['problem']}")
            continue
        when = durations.ago(env.now - row["last_activity"])
        flag = "active" if row["active"] else "idle"
        click.echo(
            f"{name:<28} {flag:<7} {when:<12} {row['files_created']:>4}c {row['files_modified']:>4}m "
            f"{row['files_read']:>4}r  {row['project_root'] or '-'}"
        )


def register(group: click.Group) -> None:
    group.add_command(agents)
