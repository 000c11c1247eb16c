"""`agent-hooks freshness`: have the files this conversation relied on changed?"""

from __future__ import annotations

import click

from agent_hooks.briefings import events as briefing_events
from agent_hooks.cli._common import emit_json, get_env, json_option


@click.command("freshness")
@click.option("--agent", "agent_name", metavar="NAME", help="Another agent (default: AGENT_NAME).")
@json_option
def freshness(agent_name: str | None, as_json: bool) -> None:
    """Compare the files your current conversation read or modified with the disk:
    resume, resume_with_update (1-5 changed) or start_fresh_with_briefing (more,
    or a critical file such as pyproject.toml or a lock file)."""
    env = get_env()
    agent = env.agent(agent_name)
    report = briefing_events.freshness_report(env.state_dir, agent, env.now, env.environ)
    if report["state_problem"]:
        problem = report["state_problem"]
        raise click.ClickException(f"{agent.state_path} is not valid JSON: {problem}")
    if as_json:
        emit_json(report)
        return
    root = report["project_root"]
    click.echo(
        f"{report['decision']}: {len(report['changed'])} of {report['examined']} "
        "examined file(s) changed"
    )
    for path in report["changed"]:
        shown = path[len(root) + 1 :] if root and path.startswith(root + "/") else path
        click.echo(f"  {shown}" + ("  (critical)" if path in report["critical"] else ""))
    for glob in report["invalid_globs"]:
        click.echo(f"warning: critical-file glob {glob!r} does not compile; ignored", err=True)


def register(group: click.Group) -> None:
    group.add_command(freshness)
