"""`agent-hooks session …`: work sessions (design document 003) — a named unit of work
that spans conversations, with milestones, artifacts, subagents and token
figures measured from the client's transcripts.

This module holds the group and the commands that change a work session
(start, resume, switch, pause, close, note, summary, milestone); the read-only
reports are in session_reports, the options and store access every
subcommand shares in session_command.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from agent_hooks.cli import session_reports
from agent_hooks.cli._common import emit_json, get_env
from agent_hooks.cli.session_command import change, command, open_store, view
from agent_hooks.wording import plural
from agent_hooks.work_sessions import work_session, work_session_report


@click.group()
def session() -> None:
    """Work sessions: a named unit of work across conversations (id
    PREFIXYYYYMM-CLIENT-CODE, e.g. SES202611-ACME-AUDIT) with milestones,
    artifacts, subagents and measured token figures. One is active per project."""


session_reports.register(session)


@command(session)
@click.option(
    "--prefix",
    default=work_session.DEFAULT_PREFIX,
    show_default=True,
    help="Id prefix ([A-Z0-9]+).",
)
@click.option("--client", required=True, help="Client part of the id ([A-Z0-9]+, upper-cased).")
@click.option(
    "--code",
    "code",
    metavar="CODE",
    help="The work's code, the id's last part ([A-Z0-9]+, upper-cased; e.g. AUDIT).  [required]",
)
@click.option("--project", "old_code", hidden=True, help="Deprecated: --code.")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=work_session.DEFAULT_MAX,
    show_default=True,
    help="The token budget of a conversation's context.",
)
@click.option(
    "--yes", "-y", is_flag=True, help="Close the active work session first, without asking."
)
def start(
    prefix: str,
    client: str,
    code: str | None,
    old_code: str | None,
    max_tokens: int,
    yes: bool,
    project_dir: str | None,
    sessions_dir: str | None,
    as_json: bool,
) -> None:
    """Start a work session (id PREFIXYYYYMM-CLIENT-CODE, e.g. SES202611-ACME-AUDIT
    from --client ACME --code AUDIT) and make it the project's active one."""
    env = get_env()
    code = _code(code, old_code)
    s = open_store(project_dir, sessions_dir)
    session_id = work_session.make_id(prefix, client, code, env.now)
    doc = work_session.new_document(
        session_id,
        work_session.check_part("prefix", prefix),
        work_session.check_part("client", client),
        work_session.check_part("code", code),
        env.now,
        max_tokens,
    )
    close_active = yes
    current = None if yes else s.active()
    if current is not None and not current.archived:
        prompt = f"Active session found: {current.doc['session_id']}. Close it first?"
        try:
            close_active = click.confirm(prompt, default=False, err=True)
        except click.Abort:  # no answer (stdin closed)
            close_active = False
        if not close_active:
            raise click.ClickException(
                f"not started: {current.doc['session_id']} is still active (--yes closes it)"
            )
    closed = s.start(doc, env.now, close_active=close_active)
    if as_json:
        emit_json(
            {
                "session": doc,
                "closed": closed.doc if closed else None,
                "path": f"{s.directory}/{session_id}.json",
            }
        )
        return
    if closed is not None:
        click.echo(
            f"Closed {closed.doc['session_id']} {work_session.CLOSED} (archived to {closed.path})"
        )
    click.echo(f"Started work session {session_id} {work_session.GREEN}")
    click.echo(f"  budget: {max_tokens:,} tokens per conversation context")
    click.echo(f"  file:   {s.directory}/{session_id}.json")


def _code(code: str | None, old_code: str | None) -> str:
    """`--code`, or the `--project` it was called before (with a one-line notice:
    everywhere else `--project` names a directory)."""
    if old_code is not None:
        click.echo(
            "warning: `session start --project` is now --code (--project names a directory "
            "in every other command); --project still works for now",
            err=True,
        )
        if code is not None and code != old_code:
            raise click.UsageError(f"--code {code} and --project {old_code}: give one")
        code = old_code
    if code is None:
        raise click.UsageError("Missing option '--code' (the id's last part, e.g. AUDIT).")
    return code


@command(session)
def resume(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Show the active work session's summary to continue from (a paused one becomes active)."""
    env = get_env()
    s = open_store(project_dir, sessions_dir)

    def wake(doc: dict[str, Any]) -> None:
        if doc["status"] == "paused":
            doc["status"] = "active"

    doc, _ = change(s, wake)
    if as_json:
        emit_json(view(doc, env.now))
        return
    click.echo(work_session_report.resume_text(doc, env.now))


@command(session)
def close(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Close the active work session: write its closing summary and archive it."""
    env = get_env()
    found = open_store(project_dir, sessions_dir).close(env.now)
    if as_json:
        emit_json({"session": found.doc, "archived_to": found.path})
        return
    click.echo(work_session_report.closing_text(found.doc, found.path))


@command(session)
@click.argument("session_id", metavar="ID")
def switch(
    session_id: str, project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Make work session ID the active one (the current one is paused; a closed one reopens)."""
    env = get_env()
    target, previous = open_store(project_dir, sessions_dir).switch(session_id, env.now)
    if as_json:
        emit_json(
            {
                **view(target.doc, env.now),
                "previous": previous.doc["session_id"] if previous else None,
            }
        )
        return
    if previous is not None:
        click.echo(
            f"{previous.doc['session_id']} is {previous.doc['status']} "
            f"{work_session.indicator(previous.doc)}; switched to {target.doc['session_id']}.\n"
        )
    click.echo(work_session_report.resume_text(target.doc, env.now))


@command(session)
def pause(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Pause the active work session (hooks stop recording until `resume`)."""

    def hold(doc: dict[str, Any]) -> None:
        doc["status"] = "paused"

    doc, _ = change(open_store(project_dir, sessions_dir), hold)
    if as_json:
        emit_json(view(doc, get_env().now))
        return
    click.echo(
        f"Paused {doc['session_id']} {work_session.PAUSED}; `agent-hooks session resume` continues it."
    )


def _words(words: tuple[str, ...]) -> str:
    text = " ".join(words)
    return sys.stdin.read() if text == "-" else text


@command(session)
@click.argument("text", nargs=-1, required=True)
def note(
    text: tuple[str, ...], project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Add a note (a decision or fact worth keeping) to the active work session."""
    content = _words(text)
    doc, _ = change(
        open_store(project_dir, sessions_dir), lambda d: work_session.add_note(d, content)
    )
    if as_json:
        emit_json({"session_id": doc["session_id"], "notes": doc["notes"]})
        return
    click.echo(f"Noted in {doc['session_id']} ({plural(len(doc['notes']), 'note')} now).")


@command(session)
@click.argument("text", nargs=-1, required=True)
def summary(
    text: tuple[str, ...], project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Set the context summary `resume` shows (TEXT `-` reads it from stdin)."""
    content = _words(text)
    doc, _ = change(
        open_store(project_dir, sessions_dir), lambda d: work_session.set_summary(d, content)
    )
    if as_json:
        emit_json({"session_id": doc["session_id"], "context_summary": doc["context_summary"]})
        return
    click.echo(
        f"Context summary of {doc['session_id']} saved "
        f"({plural(len(doc['context_summary']), 'character')})."
    )


@session.group()
def milestone() -> None:
    """Add milestones to the active work session and mark them done."""


@command(milestone, "add")
@click.argument("name", nargs=-1, required=True)
def milestone_add(
    name: tuple[str, ...], project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Add milestone NAME (not done yet)."""
    title = " ".join(name)
    doc, item = change(
        open_store(project_dir, sessions_dir), lambda d: work_session.add_milestone(d, title)
    )
    if as_json:
        emit_json({"session_id": doc["session_id"], "milestone": item})
        return
    click.echo(f"Milestone added to {doc['session_id']}: [ ] {item['name']}")


@command(milestone, "done")
@click.argument("name", nargs=-1, required=True)
def milestone_done(
    name: tuple[str, ...], project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Mark milestone NAME done (now)."""
    title = " ".join(name)
    env = get_env()
    doc, item = change(
        open_store(project_dir, sessions_dir),
        lambda d: work_session.complete_milestone(d, title, env.now),
    )
    if as_json:
        emit_json({"session_id": doc["session_id"], "milestone": item})
        return
    done = sum(1 for m in doc["milestones"] if m["completed"])
    click.echo(
        f"Milestone done in {doc['session_id']}: [x] {item['name']} "
        f"({done}/{len(doc['milestones'])} done)"
    )


def register(group: click.Group) -> None:
    group.add_command(session)
