"""`agent-hooks session …`: work sessions (seed 003) — a named unit of work
that spans conversations, with milestones, artifacts, subagents and token
figures measured from the client's transcripts.

Where the files are: `--sessions-dir DIR`, else `AGENT_HOOKS_SESSIONS_DIR`
(relative: from the project root), else `<project>/.claude/sessions/`; the
project is `--project-dir DIR`, else `CLAUDE_PROJECT_DIR`, else the git top
level of the working directory. (`--project` is the work session's PROJECT
part of its id, as in the seed.)
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from agent_hooks import work_session as ws
from agent_hooks import work_session_store as store
from agent_hooks.cli._common import emit_json, get_env, json_option

F = TypeVar("F", bound=Callable[..., Any])


def _location(func: F) -> F:
    func = click.option(
        "--sessions-dir",
        metavar="DIR",
        help="The sessions directory (default: AGENT_HOOKS_SESSIONS_DIR, else "
        "<project>/.claude/sessions).",
    )(func)
    return click.option(
        "--project-dir",
        metavar="DIR",
        help="The repository (default: CLAUDE_PROJECT_DIR, else the git top "
        "level of the working directory).",
    )(func)


def _errors(func: F) -> F:
    """Every work-session or file error becomes one line on stderr and exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (ws.WorkSessionError, OSError) as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def command(group: click.Group, name: str | None = None) -> Callable[[F], F]:
    """A subcommand of `group` with the location options, --json and clean errors."""

    def decorate(func: F) -> F:
        wrapped = json_option(_location(_errors(func)))
        group.command(name)(wrapped)
        return func

    return decorate


def open_store(project_dir: str | None, sessions_dir: str | None) -> store.Store:
    env = get_env()
    root = env.project_root(project_dir)
    given = os.path.abspath(sessions_dir) if sessions_dir else None
    directory = store.sessions_dir(root, env.environ, given)
    if directory is None:
        raise click.ClickException(
            "no sessions directory: run inside a project (a git repository, or "
            f"CLAUDE_PROJECT_DIR), or pass --sessions-dir DIR or set {store.ENV_VAR}"
        )
    return store.Store(directory)


def _view(doc: dict[str, Any], now: float) -> dict[str, Any]:
    tokens = doc["tokens"]
    return {
        "session": doc,
        "indicator": ws.indicator(doc),
        "percent": round(ws.percent(tokens["current"], tokens["max"]), 1),
        "duration_seconds": int(ws.elapsed(doc, now)),
        "milestones_done": sum(1 for m in doc["milestones"] if m["completed"]),
    }


def _change(s: store.Store, change: Callable[[dict[str, Any]], Any]) -> tuple[dict[str, Any], Any]:
    """Apply `change` to the active work session under the lock; (document, its result)."""
    result: list[Any] = []

    def apply(doc: dict[str, Any]) -> bool:
        result.append(change(doc))
        return True

    found = s.update_active(apply, get_env().now)
    if found is None:
        found = s.require_active()  # raises the "no active session" error
    return found.doc, result[0] if result else None


@click.group()
def session() -> None:
    """Work sessions: a named unit of work across conversations (id
    PREFIXYYYYMM-CLIENT-PROJECT, e.g. SES202611-ACME-AUDIT) with milestones,
    artifacts, subagents and measured token figures. One is active per project."""


@command(session)
@click.option(
    "--prefix", default=ws.DEFAULT_PREFIX, show_default=True, help="Id prefix ([A-Z0-9]+)."
)
@click.option("--client", required=True, help="Client part of the id ([A-Z0-9]+, upper-cased).")
@click.option(
    "--project",
    "project_name",
    required=True,
    help="Project part of the id ([A-Z0-9]+, upper-cased).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=ws.DEFAULT_MAX,
    show_default=True,
    help="The token budget of a conversation's context.",
)
@click.option(
    "--yes", "-y", is_flag=True, help="Close the active work session first, without asking."
)
def start(
    prefix: str,
    client: str,
    project_name: str,
    max_tokens: int,
    yes: bool,
    project_dir: str | None,
    sessions_dir: str | None,
    as_json: bool,
) -> None:
    """Start a work session and make it the project's active one."""
    env = get_env()
    s = open_store(project_dir, sessions_dir)
    session_id = ws.make_id(prefix, client, project_name, env.now)
    doc = ws.new_document(
        session_id,
        ws.check_part("prefix", prefix),
        ws.check_part("client", client),
        ws.check_part("project", project_name),
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
        click.echo(f"Closed {closed.doc['session_id']} {ws.CLOSED} (archived to {closed.path})")
    click.echo(f"Started work session {session_id} {ws.GREEN}")
    click.echo(f"  budget: {max_tokens:,} tokens per conversation context")
    click.echo(f"  file:   {s.directory}/{session_id}.json")


@command(session)
def resume(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Show the active work session's summary to continue from (a paused one becomes active)."""
    env = get_env()
    s = open_store(project_dir, sessions_dir)

    def wake(doc: dict[str, Any]) -> None:
        if doc["status"] == "paused":
            doc["status"] = "active"

    doc, _ = _change(s, wake)
    if as_json:
        emit_json(_view(doc, env.now))
        return
    click.echo(ws.resume_text(doc, env.now))


@command(session)
def status(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Show the active work session: indicator, duration, tokens, milestones, artifacts."""
    env = get_env()
    doc = open_store(project_dir, sessions_dir).require_active().doc
    if as_json:
        emit_json(_view(doc, env.now))
        return
    click.echo(ws.status_text(doc, env.now))


@command(session)
def close(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Close the active work session: write its closing summary and archive it."""
    env = get_env()
    found = open_store(project_dir, sessions_dir).close(env.now)
    if as_json:
        emit_json({"session": found.doc, "archived_to": found.path})
        return
    click.echo(ws.closing_text(found.doc, found.path))


@command(session, "list")
def list_(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """List the live and archived work sessions with their ages."""
    env = get_env()
    s = open_store(project_dir, sessions_dir)
    found, problems = s.all()
    live = [ws.list_entry(f.doc, env.now, False) for f in found if not f.archived]
    archived = [ws.list_entry(f.doc, env.now, True) for f in found if f.archived]
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
    click.echo(ws.list_text(active_id, live, archived))


@command(session)
def tokens(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """The token report: main context used/max/remaining, each subagent, tokens saved."""
    report = ws.token_report(open_store(project_dir, sessions_dir).require_active().doc)
    if as_json:
        emit_json(report)
        return
    click.echo(ws.tokens_text(report))


@command(session)
def savings(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """What isolating work in subagents saved, and whether it would fit without."""
    report = ws.token_report(open_store(project_dir, sessions_dir).require_active().doc)
    if as_json:
        emit_json(report)
        return
    click.echo(ws.savings_text(report))


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
                **_view(target.doc, env.now),
                "previous": previous.doc["session_id"] if previous else None,
            }
        )
        return
    if previous is not None:
        click.echo(
            f"{previous.doc['session_id']} is {previous.doc['status']} "
            f"{ws.indicator(previous.doc)}; switched to {target.doc['session_id']}.\n"
        )
    click.echo(ws.resume_text(target.doc, env.now))


@command(session)
def pause(project_dir: str | None, sessions_dir: str | None, as_json: bool) -> None:
    """Pause the active work session (hooks stop recording until `resume`)."""

    def hold(doc: dict[str, Any]) -> None:
        doc["status"] = "paused"

    doc, _ = _change(open_store(project_dir, sessions_dir), hold)
    if as_json:
        emit_json(_view(doc, get_env().now))
        return
    click.echo(
        f"Paused {doc['session_id']} {ws.PAUSED}; `agent-hooks session resume` continues it."
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
    doc, _ = _change(open_store(project_dir, sessions_dir), lambda d: ws.add_note(d, content))
    if as_json:
        emit_json({"session_id": doc["session_id"], "notes": doc["notes"]})
        return
    click.echo(f"Noted in {doc['session_id']} ({len(doc['notes'])} notes).")


@command(session)
@click.argument("text", nargs=-1, required=True)
def summary(
    text: tuple[str, ...], project_dir: str | None, sessions_dir: str | None, as_json: bool
) -> None:
    """Set the context summary `resume` shows (TEXT `-` reads it from stdin)."""
    content = _words(text)
    doc, _ = _change(open_store(project_dir, sessions_dir), lambda d: ws.set_summary(d, content))
    if as_json:
        emit_json({"session_id": doc["session_id"], "context_summary": doc["context_summary"]})
        return
    click.echo(
        f"Context summary of {doc['session_id']} saved ({len(doc['context_summary'])} characters)."
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
    doc, item = _change(open_store(project_dir, sessions_dir), lambda d: ws.add_milestone(d, title))
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
    doc, item = _change(
        open_store(project_dir, sessions_dir), lambda d: ws.complete_milestone(d, title, env.now)
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
