"""`agent-hooks session status | list | tokens | savings`: the reports on work
sessions (the texts are work_session_report's). Each has `--json` with the same
figures as its text. They change no file, except that status, tokens and
savings first read on the transcripts of subagents still pending
(`session_command.settled`), so the figures they show are in.
"""

from __future__ import annotations

import click

from agent_hooks.cli._common import emit_json, get_env
from agent_hooks.cli.session_command import command, open_store, settled, view
from agent_hooks.work_sessions import work_session_report


def status(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Show the active work session: indicator, duration, tokens, milestones, artifacts."""
    env = get_env()
    doc = settled(open_store(project_dir, sessions_dir))
    if as_json:
        emit_json(view(doc, env.now))
        return
    click.echo(work_session_report.status_text(doc, env.now))


def list_(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """List the live and archived work sessions with their ages."""
    env = get_env()
    s = open_store(project_dir, sessions_dir)
    found, problems = s.all()
    live = [work_session_report.list_entry(f.doc, env.now, False) for f in found if not f.archived]
    archived = [work_session_report.list_entry(f.doc, env.now, True) for f in found if f.archived]
    active_id = s.active_id()
    for problem in problems:
        click.echo(f"warning: not read: {problem}", err=True)
    if as_json:
        emit_json(
            {
                "directory": s.directory,
                "active_session": active_id,
                "live": live,
                "archived": archived,
                "problems": problems,
            }
        )
        return
    click.echo(work_session_report.list_text(active_id, live, archived))


def tokens(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """The token report: main context used/max/remaining, each subagent, tokens saved."""
    report = work_session_report.token_report(settled(open_store(project_dir, sessions_dir)))
    if as_json:
        emit_json(report)
        return
    click.echo(work_session_report.tokens_text(report))


def savings(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """What isolating work in subagents saved, and whether it would fit without."""
    report = work_session_report.token_report(settled(open_store(project_dir, sessions_dir)))
    if as_json:
        emit_json(report)
        return
    click.echo(work_session_report.savings_text(report))


def register(session: click.Group) -> None:
    """Add the report commands to the `session` group."""
    command(session)(status)
    command(session, "list")(list_)
    command(session)(tokens)
    command(session)(savings)
