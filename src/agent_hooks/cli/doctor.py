"""`agent-hooks doctor`: will every client agent-hooks is installed into run its hooks?"""

from __future__ import annotations

import click

from agent_hooks.cli._common import emit_json, get_env, json_option
from agent_hooks.install import clients


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check every install of agent-hooks in this HOME: Claude Code's settings files,
    Codex's hooks and trust entries (a stale trust hash means Codex silently skips the
    hook), Gemini CLI's settings (disabled hooks, an untrusted project). Exit 1 when
    a client will not run agent-hooks' hooks; each problem is one line saying what to do."""
    env = get_env()
    found = clients.check(env.environ)
    if as_json:
        emit_json([item.as_dict() for item in found])
    elif not found:
        click.echo("agent-hooks is installed into no client here (./install.sh installs it)")
    else:
        for item in found:
            where = f" (project {item.project})" if item.project else ""
            verdict = "ok" if item.ok else "PROBLEM"
            click.echo(f"{clients.LABELS[item.client]}{where}: {verdict} — {item.where}")
            for line in item.problems:
                click.echo(f"  {line}")
    if any(not item.ok for item in found):
        raise SystemExit(1)


def problems(environ: dict[str, str]) -> list[str]:
    """One line per install a client will not run (for `agent-hooks status`)."""
    try:
        found = clients.check(environ)
    except (OSError, ValueError) as exc:
        return [f"cannot check the clients' hooks: {' '.join(str(exc).split())}"]
    return [item.problems[0] if item.problems else item.where for item in found if not item.ok]


def register(group: click.Group) -> None:
    group.add_command(doctor)
