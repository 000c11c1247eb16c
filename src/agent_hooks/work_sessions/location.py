"""Where a project's work sessions live, and whether one is active: the one rule.

The sessions directory is `--sessions-dir DIR` when given, else
`AGENT_HOOKS_SESSIONS_DIR` (a relative value is taken from the project root, `~`
is the user's home), else `<project>/.claude/sessions`. A work session is
active while the directory holds the pointer file `active-session.json`.

Built-ins only: PostToolUse asks `active_dir` on every call, and without an
active work session that costs one `stat`.
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping

ENV_VAR = "AGENT_HOOKS_SESSIONS_DIR"
DEFAULT_SUBDIR = ".claude/sessions"
POINTER = "active-session.json"
LIVE = ("active", "blocked")  # statuses whose figures the hooks keep current


def sessions_dir(
    project: str | None, environ: Mapping[str, str], given: str | None = None
) -> str | None:
    """`given`, else `AGENT_HOOKS_SESSIONS_DIR`, else `<project>/.claude/sessions`
    (None when a relative setting has no project to be relative to)."""
    raw = given or environ.get(ENV_VAR, "")
    if raw:
        raw = fs.expanduser(raw, environ.get("HOME"))
        if fs.isabs(raw):
            return fs.normpath(raw)
        return fs.normpath(fs.join(project, raw)) if project else None
    return fs.join(project, DEFAULT_SUBDIR) if project else None


def pointer_path(directory: str) -> str:
    return fs.join(directory, POINTER)


def active_dir(environ: Mapping[str, str], project: str | None) -> str | None:
    """The sessions directory when it holds an active-session pointer, else None."""
    directory = sessions_dir(project, environ)
    if directory is None:
        return None
    try:
        posix.stat(pointer_path(directory))
    except (OSError, ValueError):
        return None
    return directory
