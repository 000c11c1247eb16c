"""`agent-hooks statusline`: one short line for Claude Code's `statusLine`
setting — the project's active work session, its indicator, this
conversation's context used/max (%), and the agent:

    SES202611-ACME-AUDIT 🟢 45.0k/150k (30%) · myproject__cc_1

It runs on every status refresh, so the module imports neither click nor
orjson: `main()` (for a tiny entry script) needs only built-ins, `jsonio` and
the work-session modules; the command is `cli/statusline.py`. It never writes
anything.

The figure, in order of preference: the client's own
`context_window.current_usage` on stdin; the tail of `transcript_path`; the
figure the hooks stored for this conversation; the work session's
`tokens.current`. Without an active work session the line is the agent's name
(or empty).
"""

from __future__ import annotations

import sys

from agent_hooks import jsonio, repository
from agent_hooks import posix_fs as fs
from agent_hooks.clients import claude_code
from agent_hooks.work_sessions import location, transcript, work_session, work_session_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAX_INPUT = 1 << 20


def short(n: int) -> str:
    """`950`, `45.0k`, `150k`, `1.2M`."""
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def reported_context(said: Mapping[str, Any]) -> int | None:
    """The context size the client itself put on stdin, if it did."""
    size = transcript.context_size(said["usage"])
    return size if size > 0 else None


def figures(payload: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The active work session's figures as this conversation sees them, or None."""
    said = claude_code.status_line(payload)  # the status line is Claude Code's
    project_dir = said["project_dir"]
    if project_dir is not None and fs.isabs(project_dir):
        project: str | None = fs.realpath(project_dir)
    else:
        project = repository.project_root(environ, said["cwd"], claude_code.PROJECT_VARIABLES)
    directory = location.sessions_dir(project, environ)
    if directory is None:
        return None
    try:
        found = work_session_store.Store(directory).active()
    except (work_session.WorkSessionError, OSError):
        return None
    if found is None or found.archived:
        return None
    doc = found.doc
    current = reported_context(said)
    path = said["transcript"]
    if current is None and path is not None and fs.isabs(path):
        current = transcript.tail_context(path)
    if current is None:
        entry = doc["conversations"].get(said["session"])
        stored = entry.get("current") if isinstance(entry, dict) else None
        current = stored if isinstance(stored, int) else doc["tokens"]["current"]
    budget = doc["tokens"]["max"]
    return {
        "session_id": doc["session_id"],
        "status": doc["status"],
        "indicator": work_session.indicator(doc, current),
        "current": current,
        "max": budget,
        "percent": round(work_session.percent(current, budget), 1),
    }


def line(payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    agent = environ.get("AGENT_NAME", "")
    found = figures(payload, environ)
    if found is None:
        return agent
    text = (
        f"{found['session_id']} {found['indicator']} {short(found['current'])}/"
        f"{short(found['max'])} ({work_session.pct_text(found['percent'])})"
    )
    return f"{text} · {agent}" if agent else text


def read_payload(stream: Any) -> dict[str, Any]:
    """The JSON object on `stream`, or {} for anything else (a status line never fails)."""
    try:
        payload = jsonio.loads(stream.read(MAX_INPUT))
    except (ValueError, OSError):
        return {}
    return payload if isinstance(payload, dict) else {}


def main() -> int:
    """Entry for Claude Code's statusLine: stdin JSON in, one line out, exit 0."""
    environ = fs.environ()
    try:
        text = line(read_payload(sys.stdin.buffer), environ)
    except Exception:  # a status line shows something rather than a traceback
        text = environ.get("AGENT_NAME", "")
    sys.stdout.write(text + "\n")
    return 0
