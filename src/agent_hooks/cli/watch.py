"""`agent-hooks watch`: a live view of the project for a spare tmux pane.

The data are `watch_model.snapshot`; `--once` prints them through `watch_text`
without loading a terminal library; the live view (`watch_app`, Textual) is
imported only when it runs. Read-only: nothing is written, created or swept.
"""

from __future__ import annotations

import sys
import time

import click

from agent_hooks.cli import watch_model, watch_text
from agent_hooks.cli._common import emit_json, get_env, project_option, require_project


def _terminal() -> bool:
    """A terminal on every stream the live view uses (keys in, frames out)."""
    return all(stream.isatty() for stream in (sys.stdin, sys.stdout, sys.stderr))


@click.command()
@project_option
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1, max=3600),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="How often the view reads the files again.",
)
@click.option(
    "--once", is_flag=True, help="Print one frame as plain text and exit (no terminal needed)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one snapshot as JSON and exit (implies --once)."
)
def watch(project: str | None, interval: float, once: bool, as_json: bool) -> None:
    """A live view for a tmux pane beside the agents, redrawn about once a second
    (only what changed): the agents (alive or gone, last activity, current work:
    the issue id, else the file changed last), the project's reservations and
    leases with the time left, the last denials in the hook log (of every
    project) and the active work session's token use. Keys: q quits; arrows and
    Page Up/Down scroll.

    Read-only. Needs a terminal; `--once` prints a single frame to anything."""
    env = get_env()
    root = require_project(env, project)
    if as_json:
        emit_json(watch_model.snapshot(env, root, env.now).as_json())
        return
    if once:
        click.echo(watch_text.frame(watch_model.snapshot(env, root, env.now)))
        return
    if not _terminal():
        raise click.ClickException(
            "not a terminal: the live view needs one; for a single frame use --once (or --json)"
        )
    from agent_hooks.cli.watch_app import WatchApp  # Textual: only for the live view

    WatchApp(lambda: watch_model.snapshot(env, root, time.time()), root, interval).run(mouse=False)


def register(group: click.Group) -> None:
    group.add_command(watch)
