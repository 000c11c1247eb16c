"""What every `agent-hooks session …` subcommand shares: the location options,
one-line errors, `--json`, and the store they open.

Where the files are: `--sessions-dir DIR`, else `AGENT_HOOKS_SESSIONS_DIR`
(relative: from the project root), else `<project>/.claude/sessions/`; the
project is `--project-dir DIR`, else `CLAUDE_PROJECT_DIR`, else the git top
level of the working directory. (`session start --code` is the last part of the
work session's id; it was `--project`, still taken with a notice.)

Every WorkSessionError a subcommand raises becomes one line on stderr and exit
1 (an OSError does too, through the `agent-hooks` group: `_common.Group`); a
change to the active work session runs under the store's lock.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from agent_hooks.cli._common import get_env, json_option
from agent_hooks.work_sessions import location, work_session, work_session_store

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
    """Every work-session error becomes one line on stderr and exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except work_session.WorkSessionError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def command(group: click.Group, name: str | None = None) -> Callable[[F], F]:
    """A subcommand of `group` with the location options, --json and clean errors."""

    def decorate(func: F) -> F:
        wrapped = json_option(_location(_errors(func)))
        group.command(name)(wrapped)
        return func

    return decorate


def open_store(project_dir: str | None, sessions_dir: str | None) -> work_session_store.Store:
    env = get_env()
    root = env.project_root(project_dir)
    given = os.path.abspath(sessions_dir) if sessions_dir else None
    directory = location.sessions_dir(root, env.environ, given)
    if directory is None:
        raise click.ClickException(
            "no sessions directory: run inside a project (a git repository, or "
            f"CLAUDE_PROJECT_DIR), or pass --sessions-dir DIR or set {location.ENV_VAR}"
        )
    return work_session_store.Store(directory)


def view(doc: dict[str, Any], now: float) -> dict[str, Any]:
    """The `--json` view of a work session that resume, status, switch and pause print."""
    tokens = doc["tokens"]
    return {
        "session": doc,
        "indicator": work_session.indicator(doc),
        "percent": round(work_session.percent(tokens["current"], tokens["max"]), 1),
        "duration_seconds": int(work_session.elapsed(doc, now)),
        "milestones_done": sum(1 for m in doc["milestones"] if m["completed"]),
    }


def settled(s: work_session_store.Store) -> dict[str, Any]:
    """The active work session, with the figures of subagents still pending read
    on first (under the lock, and only when some are pending: otherwise nothing
    is written)."""
    doc = s.require_active().doc
    if not doc["pending_subagents"]:
        return doc
    from agent_hooks.work_sessions import subagents

    now = get_env().now
    found = s.update_active(lambda d: subagents.retry(d, now), now)
    return found.doc if found is not None and not found.archived else doc


def change(
    s: work_session_store.Store, change: Callable[[dict[str, Any]], Any]
) -> tuple[dict[str, Any], Any]:
    """Apply `change` to the active work session under the lock; (document, its
    result). Subagents still pending are read on as well."""
    result: list[Any] = []
    now = get_env().now

    def apply(doc: dict[str, Any]) -> bool:
        if doc["pending_subagents"]:
            from agent_hooks.work_sessions import subagents

            subagents.retry(doc, now)
        result.append(change(doc))
        return True

    found = s.update_active(apply, now)
    if found is None:
        found = s.require_active()  # raises the "no active session" error
    return found.doc, result[0] if result else None
