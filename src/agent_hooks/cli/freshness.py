"""`agent-hooks freshness`: have the files this conversation relied on changed?"""

from __future__ import annotations

from typing import Any

import click

from agent_hooks.briefings import briefing_events, freshness
from agent_hooks.cli._common import agent_choice, emit_json, get_env, json_option
from agent_hooks.wording import plural

Decision = freshness.Decision

# What each decision (the token `--json` and the model see) tells a person to do.
ADVICE = {
    Decision.RESUME: "Resume",
    Decision.RESUME_WITH_UPDATE: "Resume, after re-reading the changed files",
    Decision.START_FRESH_WITH_BRIEFING: "Start a fresh conversation from the briefing",
}


def summary(report: dict[str, Any]) -> str:
    """The decision in words, and why."""
    changed, examined = len(report["changed"]), report["examined"]
    advice = ADVICE[Decision(report["decision"])]
    if not examined:
        return f"{advice}: this conversation has read or modified no file yet."
    if not changed:
        seen = plural(examined, "file")
        return f"{advice}: none of the {seen} this conversation relied on changed."
    why = f"{changed} of the {plural(examined, 'file')} this conversation relied on changed"
    if report["critical"]:
        why += f", {plural(len(report['critical']), 'critical file')} among them"
    elif report["decision"] == Decision.START_FRESH_WITH_BRIEFING:
        why += f" (more than {freshness.MAX_MINOR})"
    return f"{advice}: {why}."


@click.command("freshness")
@agent_choice
@json_option
def freshness_command(agent_name: str | None, as_json: bool) -> None:
    """Compare the files your current conversation read or modified with the disk,
    and say whether to resume (nothing changed), resume after re-reading the
    changed files (1 to 5 changed) or start a fresh conversation from the briefing
    (more, or a critical file such as pyproject.toml or a lock file). --json gives
    the decision as a token: resume, resume_with_update or start_fresh_with_briefing."""
    env = get_env()
    agent = env.known_agent(agent_name) if agent_name is not None else env.agent()
    report = briefing_events.freshness_report(env.state_dir, agent, env.now, env.environ)
    if report["state_problem"]:
        problem = report["state_problem"]
        raise click.ClickException(f"{agent.state_path} is not valid JSON: {problem}")
    if as_json:
        emit_json(report)
        return
    root = report["project_root"]
    click.echo(summary(report))
    for path in report["changed"]:
        shown = path[len(root) + 1 :] if root and path.startswith(root + "/") else path
        click.echo(f"  {shown}" + ("  (critical)" if path in report["critical"] else ""))
    for glob in report["invalid_globs"]:
        click.echo(f"warning: critical-file glob {glob!r} does not compile; ignored", err=True)


def register(group: click.Group) -> None:
    group.add_command(freshness_command)
