"""`agent-hooks cleanup`: sweep state left by agents untouched for N days, and the
kept versions of every repository this HOME knows (`kept.kept_sweep`)."""

from __future__ import annotations

import click

from agent_hooks.agents import sweep
from agent_hooks.cli._common import emit_json, get_env, json_option
from agent_hooks.kept import kept_sweep
from agent_hooks.ledger import known_ledgers
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
    directory is touched, and a state file in use is never removed. Also sweep
    the kept versions of every repository agent-hooks knows: 7 days after their
    lease ended, or beyond the repository's kept-total-mib (never a live lease's
    latest version)."""
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
    kept = []
    for ledger in sorted(known_ledgers.ledgers(env.state_dir)):
        swept = kept_sweep.sweep(ledger, env.now, dry_run=dry_run)
        if swept.versions or swept.objects or swept.problems:
            kept.append((ledger, swept))
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "removed": removed,
                "kept_versions": [
                    {
                        "ledger": ledger,
                        "versions": swept.versions,
                        "objects": swept.objects,
                        "bytes_freed": swept.freed,
                        "bytes_kept": swept.bytes,
                        "problems": swept.problems,
                    }
                    for ledger, swept in kept
                ],
            }
        )
        return
    for ledger, swept in kept:
        click.echo(
            f"{'would sweep' if dry_run else 'swept'} {plural(swept.versions, 'kept version')} "
            f"and {plural(swept.objects, 'object')} ({swept.freed >> 10} KiB) from {ledger}"
        )
        for problem in swept.problems:
            click.echo(f"  {problem}")
    for path in removed:
        click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
    if not removed:
        click.echo(f"Nothing to remove from {env.state_dir}.")
    else:
        verb = "Would remove" if dry_run else "Removed"
        click.echo(f"{verb} {plural(len(removed), 'file')} from {env.state_dir}.")


def register(group: click.Group) -> None:
    group.add_command(cleanup)
