"""`agent-hooks agents`: every agent in the state directory."""

from __future__ import annotations

import click

from agent_hooks import durations
from agent_hooks.agents import roster, trail_spill
from agent_hooks.cli._common import emit_json, get_env, json_option, table
from agent_hooks.clients import client_table


@click.command()
@click.option("--project", "project", metavar="DIR", help="Only agents working in DIR.")
@json_option
def agents(project: str | None, as_json: bool) -> None:
    """List all agents: name, the client it runs in (Claude Code, Codex, Gemini
    CLI), whether active, last activity, how many files each created, modified and
    read in its current conversation, and its project."""
    env = get_env()
    env.check_state_dir()
    root = env.project_root(project) if project else None
    rows = []
    for record in roster.load_all(env.state_dir, env.now):
        doc = record.doc
        if not roster.ever_ran(record) or (root is not None and doc["project_root"] != root):
            continue
        trail = trail_spill.counts(record.agent, doc)
        rows.append(
            {
                "agent": record.agent.name,
                "client": doc["client"],
                "state_file": record.agent.state_path,
                "project_root": doc["project_root"],
                "active": roster.is_active(doc, env.now),
                "last_activity": doc["last_activity"],
                "files_created": trail["files_created"],
                "files_modified": trail["files_modified"],
                "files_read": trail["files_read"],
                "problem": record.problem,
            }
        )
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(
            "No agents" + (f" in {root}" if root else "") + f" (state directory {env.state_dir})."
        )
        return
    body = []
    for row in rows:
        name = row["agent"] or "(shared agent-state.json)"
        if row["problem"]:
            body.append((name, "-", "unreadable", "-", "-", "-", "-", f"({row['problem']})"))
            continue
        body.append(
            (
                name,
                row["client"] if row["client"] in client_table.CLIENTS else "-",
                "active" if row["active"] else "idle",
                durations.ago(env.now - row["last_activity"]),
                row["files_created"],
                row["files_modified"],
                row["files_read"],
                row["project_root"] or "-",
            )
        )
    header = ("AGENT", "CLIENT", "STATE", "LAST ACTIVE", "CREATED", "MODIFIED", "READ", "PROJECT")
    tones = {2: {"active": "ok", "idle": "dim", "unreadable": "bad"}.get}
    for line in table(header, body, right={4, 5, 6}, tones=tones):
        click.echo(line)


def register(group: click.Group) -> None:
    group.add_command(agents)
