"""What the hook adapters call for briefings and freshness.

* `session_start_lines` (SessionStart, after the workspace lines): on
  startup/clear the agent's briefing for the project; on resume/compact (and any
  unknown source) the freshness verdict, carrying the briefing when the verdict
  is `start_fresh_with_briefing`. At most `budget` characters; a failure is
  logged and the other SessionStart lines still come.
* `freshness_report` for `agent-hooks freshness`.

They take plain values from the adapter (the time, the environment, `log`: the
hook's log, for what went wrong) and return text, never a client's output.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

    from agent_hooks import identity

BUDGET = 8_000  # characters of the context these lines may take (clients cap it at 10,000)


def session_start_lines(
    agent: identity.Agent,
    doc: dict[str, Any],
    source: str,
    project: str | None,
    now: float,
    environ: Mapping[str, str],
    log: Callable[[str], None],
    *,
    budget: int = BUDGET,
) -> list[str]:
    """The briefing (startup, clear) or the freshness verdict (any other source)."""
    if project is None:
        return []
    try:
        if source in ("startup", "clear"):
            text = _briefing_text(agent, doc, project, now, budget)
            return [text] if text else []
        return _freshness_lines(agent, doc, project, now, environ, log, budget)
    except Exception as exc:
        log(f"briefing/freshness lines failed: {type(exc).__name__}: {exc}")
        return []


def _briefing_text(
    agent: identity.Agent, doc: dict[str, Any], project: str, now: float, limit: int
) -> str | None:
    import time

    from agent_hooks.briefings import briefing, briefing_store

    brief = briefing_store.load(agent, project, now)
    if brief is None or briefing.is_empty(brief):
        return None
    since = briefing_store.last_session_end(agent, project, doc.get("conversation_id"))
    if since is None:
        since = float(brief["updated_at"])
    files = briefing_store.changed_since(project, since)
    label = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(since))
    return briefing.render(brief, changed_files=files, since=label, limit=max(0, limit))


def _freshness_lines(
    agent: identity.Agent,
    doc: dict[str, Any],
    project: str,
    now: float,
    environ: Mapping[str, str],
    log: Callable[[str], None],
    limit: int,
) -> list[str]:
    from agent_hooks.briefings import freshness

    report = _report(agent, doc, project, environ)
    for glob in report.invalid_globs:
        log(f"critical-file glob {glob!r} does not compile; ignored")
    lines = freshness.context_lines(report, project)
    if report.decision is freshness.Decision.START_FRESH_WITH_BRIEFING:
        room = limit - sum(len(line) + 1 for line in lines)
        text = _briefing_text(agent, doc, project, now, room)
        lines.append(
            text
            or "No briefing is recorded for you in this project "
            "(`agent-hooks brief set-goal …` records one for next time)."
        )
    return lines


def _report(
    agent: identity.Agent, doc: Mapping[str, Any], project: str | None, environ: Mapping[str, str]
) -> Any:
    from agent_hooks.agents import trail_archive
    from agent_hooks.briefings import freshness

    current = doc.get("conversation_id")
    others = [t for t in trail_archive.list_archived(agent) if t.get("conversation_id") != current]
    return freshness.check(
        doc, project, freshness.critical_globs(environ, project), freshness.own_contents(others)
    )


def freshness_report(
    state_dir: str, agent: identity.Agent, now: float, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The freshness of the agent's current conversation, for the CLI."""
    import os

    from agent_hooks.agents import state_file

    doc, problem = state_file.read(agent, now)
    project = doc["project_root"]
    report = _report(agent, doc, project, os.environ if environ is None else environ)
    return {
        "agent": agent.name,
        "state_dir": state_dir,
        "conversation_id": doc["conversation_id"],
        "project_root": project,
        "state_problem": problem,
        **report.as_dict(),
    }
