"""`agent-hooks cleanup`: sweep state left by agents untouched for N days."""

from __future__ import annotations

import click

from agent_hooks.agents import sweep
from agent_hooks.cli._common import emit_json, get_env, json_option
from agent_hooks.wording import plural


@click.command()
@click.option(
    "--days",
    type=click.FloatRange(min=0),
    default=7,
    show_default=True,
    help="Remove agents' state untouched for more than this many days.",
)
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@json_option
def cleanup(days: float, dry_run: bool, as_json: bool) -> None:
    """Remove state files (with their lock files, corrupt copies and archived
    trails) of agents untouched for more than --days. Nothing else in the state
    directory is touched, and a state file in use is never removed."""
    if days != days or days == float("inf"):
        raise click.BadParameter("must be a finite number of days", param_hint="--days")
    env = get_env()
    env.check_state_dir()
    keep = None
    try:
        keep = env.agent().state_file
    except click.ClickException:
        pass
    removed = sweep.sweep(env.state_dir, env.now, max_age=days * 86400, keep=keep, dry_run=dry_run)
    if as_json:
        emit_json({"dry_run": dry_run, "removed": removed})
        return
    for path in removed:
        click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
    if not removed:
        click.echo(f"Nothing to remove from {env.state_dir}.")
    else:
        verb = "Would remove" if dry_run else "Removed"
        click.echo(f"{verb} {plural(len(removed), 'file')} from {env.state_dir}.")


def register(group: click.Group) -> None:
    group.add_command(cleanup)
