"""The texts people read about a work session (design document 003): `status`, `resume`,
`list`, `tokens`, `savings` and the closing summary, with their progress bar
and milestone lines. The document model and its thresholds are work_session's.

Pure: every function takes a normalized document (`work_session.normalize`) or a
`token_report`, and `now`; nothing is read or written. Only built-in modules are
imported (work_session_store loads this module when it closes a work session).

Invariants (docs/adr/0009-work-sessions.md):

* Every indicator and percentage comes from work_session (`indicator`,
  `level_indicator`, `percent`, `pct_text`), so the texts, the status line and
  the hooks' warnings never disagree about a threshold.
* The progress bar fills whole cells only: 99 % never shows full.
* `token_report` holds the figures the `tokens` and `savings` texts (and their
  `--json`) show: total if nothing were isolated = current + saved; savings %
  = saved / total; "would exceed the limit by" = total - max.
* A subagent whose transcript is still pending (`pending_subagents`) is shown as
  "still being counted": its figure is the part read so far.
* The closing summary is built from the document alone: decisions (the notes),
  outcomes (milestones reached, artifacts, subagents, peak context) and next
  steps (open milestones, `Next:`/`TODO` lines of the context summary).
"""

from __future__ import annotations

from agent_hooks.durations import ago, duration
from agent_hooks.timestamps import iso, local_iso
from agent_hooks.wording import plural
from agent_hooks.work_sessions.work_session import (
    CLOSED,
    CRITICAL_PERCENT,
    GREEN,
    RED,
    WARN_PERCENT,
    YELLOW,
    agent_contexts,
    elapsed,
    indicator,
    level_indicator,
    parse_time,
    pct_text,
    percent,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def progress_bar(fraction: float, width: int = 10) -> str:
    """`[████████░░]`: whole cells only, so 99 % never shows full."""
    filled = min(width, max(0, int(fraction * width + 1e-9)))
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def milestone_lines(doc: dict[str, Any]) -> list[str]:
    return [f"- [{'x' if m['completed'] else ' '}] {m['name']}" for m in doc["milestones"]]


def age_days(seconds: float) -> str:
    days = max(0, int(seconds)) // 86400
    return "today" if days == 0 else "1 day" if days == 1 else f"{days} days"


def _tokens_line(doc: dict[str, Any]) -> str:
    tokens = doc["tokens"]
    share = pct_text(percent(tokens["current"], tokens["max"]))
    return f"{tokens['current']:,}/{tokens['max']:,} ({share})"


def resume_text(doc: dict[str, Any], now: float) -> str:
    done = sum(1 for m in doc["milestones"] if m["completed"])
    started = parse_time(doc["created"])
    lines = [
        f"Resuming Session: {doc['session_id']} {indicator(doc)}",
        f"Status: {doc['status']}",
        f"Started: {local_iso(doc['created'])}" + (f" ({ago(now - started)})" if started else ""),
        f"Milestones: {len(doc['milestones'])} ({done} completed)",
        f"Artifacts: {len(doc['artifacts'])}",
        f"Token Usage: {_tokens_line(doc)}",
    ]
    open_ = [m["name"] for m in doc["milestones"] if not m["completed"]]
    if open_:
        lines.append("Open Milestones: " + "; ".join(open_))
    lines += [
        "",
        "Last Context:",
        doc["context_summary"] or "(none yet: record one with `agent-hooks session summary TEXT`)",
    ]
    if doc["notes"]:
        lines += ["", "Notes:"] + [f"- {note}" for note in doc["notes"]]
    return "\n".join(lines)


def status_text(doc: dict[str, Any], now: float, recent: int = 5) -> str:
    tokens = doc["tokens"]
    share = percent(tokens["current"], tokens["max"])
    done = sum(1 for m in doc["milestones"] if m["completed"])
    lines = [
        f"Session: {doc['session_id']} {indicator(doc)}",
        f"Status: {doc['status']}",
        f"Duration: {duration(elapsed(doc, now))}",
        f"Tokens: {_tokens_line(doc)}",
        f"Progress Bar: {progress_bar(share / 100)} {pct_text(share)}",
    ]
    contexts = agent_contexts(doc)
    if len(contexts) > 1:
        lines.append(
            "Contexts: "
            + ", ".join(
                f"{c['agent']} {c['current']:,} ({pct_text(percent(c['current'], tokens['max']))})"
                for c in contexts
            )
        )
    lines += ["", f"Milestones ({done}/{len(doc['milestones'])}):"]
    lines += milestone_lines(doc) or ["- (none yet: `agent-hooks session milestone add NAME`)"]
    lines += ["", "Recent Artifacts:"]
    shown = doc["artifacts"][-recent:][::-1]
    for artifact in shown:
        when = parse_time(artifact["created"])
        by = f" by {artifact['agent']}" if artifact["agent"] else ""
        lines.append(f"- {artifact['path']} (created {ago(now - when) if when else '?'}{by})")
    if not shown:
        lines.append("- (none yet)")
    lines += [
        "",
        f"Agents Spawned This Session: {len(doc['agents_spawned'])}",
        f"Token Savings from Isolation: {tokens['saved']:,}{_counting(doc)}",
    ]
    return "\n".join(lines)


def _pending(doc: dict[str, Any]) -> set[str]:
    return {str(item.get("id")) for item in doc.get("pending_subagents") or ()}


def _counting(doc: dict[str, Any]) -> str:
    """` (2 subagents still being counted)` while transcripts are pending, else ``."""
    count = len(_pending(doc))
    if not count:
        return ""
    return f" ({count} subagent{'s' if count > 1 else ''} still being counted)"


def list_entry(doc: dict[str, Any], now: float, archived: bool) -> dict[str, Any]:
    return {
        "session_id": doc["session_id"],
        "status": doc["status"],
        "indicator": indicator(doc),
        "created": doc["created"],
        "closed": doc.get("closed"),
        "archived": archived,
        "age": age_days(elapsed(doc, now)),
    }


def list_text(
    active_id: str | None, live: list[dict[str, Any]], archived: list[dict[str, Any]]
) -> str:
    """The design document's list; `live` and `archived` hold `list_entry` results."""
    lines = ["Active Sessions:"]
    for item in live:
        mark = " ← current" if item["session_id"] == active_id else ""
        lines.append(f"  {item['session_id']} {item['indicator']} ({item['age']}){mark}")
    if not live:
        lines.append("  (none)")
    lines += ["", "Archived Sessions:"]
    for item in archived:
        closed = local_iso(item["closed"], "")[:10] or "date unknown"
        lines.append(f"  {item['session_id']} {item['indicator']} (closed {closed})")
    if not archived:
        lines.append("  (none)")
    return "\n".join(lines)


def token_report(doc: dict[str, Any]) -> dict[str, Any]:
    """The figures behind `tokens` and `savings` (definitions in the ADR)."""
    tokens = doc["tokens"]
    main, budget, saved = tokens["current"], tokens["max"], tokens["saved"]
    total = main + saved
    pending = _pending(doc)
    return {
        "session_id": doc["session_id"],
        "max": budget,
        "initial": tokens["initial"],
        "current": main,
        "peak": tokens["peak"],
        "remaining": max(0, budget - main),
        "percent": round(percent(main, budget), 1),
        "indicator": level_indicator(main, budget),
        "contexts": agent_contexts(doc),
        "subagents": [
            {
                "id": a.get("id"),
                "type": a.get("type"),
                "tokens_used": a["tokens_used"],
                "completed": a["completed"],
                "pending": a.get("id") in pending,
            }
            for a in doc["agents_spawned"]
        ],
        "pending": len(pending),
        "saved": saved,
        "total_without_isolation": total,
        "savings_percent": round(percent(saved, total), 1),
        "exceeds_without_isolation_by": max(0, total - budget),
    }


def tokens_text(report: dict[str, Any]) -> str:
    lines = [
        f"Token Usage Report: {report['session_id']}",
        "",
        "Main Session:",
        f"  Used: {report['current']:,} / {report['max']:,} ({pct_text(report['percent'])})",
        f"  Remaining: {report['remaining']:,}",
        f"  Peak: {report['peak']:,}",
    ]
    if len(report["contexts"]) > 1:
        lines += [
            f"  {c['agent']}: {c['current']:,} (peak {c['peak']:,})" for c in report["contexts"]
        ]
    lines += ["", "Subprocess Agents:"]
    for agent in report["subagents"]:
        name = " ".join(x for x in (agent["type"], str(agent["id"] or "")[:8]) if x) or "agent"
        running = "" if agent["completed"] else ", running"
        running += ", still being counted" if agent.get("pending") else ""
        lines.append(f"  {name}: {agent['tokens_used']:,} tokens (isolated{running})")
    if not report["subagents"]:
        lines.append("  (none)")
    lines += [
        "",
        f"Total Consumed (if no isolation): {report['total_without_isolation']:,}",
        f"Actual Main Session: {report['current']:,}",
        f"Tokens Saved: {report['saved']:,} ({pct_text(report['savings_percent'])} savings)",
    ]
    return "\n".join(lines)


def savings_text(report: dict[str, Any]) -> str:
    total, budget, main = report["total_without_isolation"], report["max"], report["current"]
    if total > budget:
        limit = f"  Would exceed limit by: {total - budget:,} tokens"
    else:
        limit = f"  Would stay within the limit: {budget - total:,} tokens to spare"
    mark = report["indicator"]
    if main > budget:
        verdict = f"{RED} Over budget by {main - budget:,} tokens"
    elif mark == RED:
        verdict = f"{RED} Within budget, above {CRITICAL_PERCENT}%"
    elif mark == YELLOW:
        verdict = f"{YELLOW} Within budget, above {WARN_PERCENT}%"
    else:
        verdict = f"{GREEN} Within budget"
    return "\n".join(
        [
            "Token Isolation Savings",
            "",
            "Without Isolation:",
            f"  All agent work in main context: {total:,} tokens",
            limit,
            "",
            "With Isolation:",
            f"  Main session: {main:,} tokens",
            f"  Agents in subprocesses: {report['saved']:,} tokens (not counted)",
            "",
            f"Savings: {report['saved']:,} tokens ({pct_text(report['savings_percent'])})",
            f"Status: {verdict}",
        ]
    )


_NEXT_MARKS = ("next", "todo", "to do", "then")


def closing_summary(doc: dict[str, Any], now: float) -> dict[str, Any]:
    """Decisions (the notes), outcomes (milestones reached, artifacts, subagents,
    peak context) and next steps (open milestones, `Next:`/`TODO` lines of the
    context summary)."""
    tokens = doc["tokens"]
    outcomes = [
        f"Milestone reached: {m['name']} ({m['completed'][:10]})"
        for m in doc["milestones"]
        if m["completed"]
    ]
    paths = [a["path"] for a in doc["artifacts"]]
    if paths:
        more = f", … ({len(paths) - 10} more)" if len(paths) > 10 else ""
        outcomes.append(f"{plural(len(paths), 'artifact')} created: {', '.join(paths[:10])}{more}")
    if doc["agents_spawned"]:
        outcomes.append(
            f"{plural(len(doc['agents_spawned']), 'subagent')} spawned; "
            f"{tokens['saved']:,} tokens kept out of the main context{_counting(doc)}"
        )
    outcomes.append(
        f"Peak context: {tokens['peak']:,} of {tokens['max']:,} tokens "
        f"({pct_text(percent(tokens['peak'], tokens['max']))})"
    )
    next_steps = [f"Open milestone: {m['name']}" for m in doc["milestones"] if not m["completed"]]
    for line in doc["context_summary"].splitlines():
        text = line.strip().lstrip("-*• ").strip()
        if text.lower().startswith(_NEXT_MARKS):
            next_steps.append(text)
    start = parse_time(doc["created"])
    return {
        "closed": iso(now),
        "duration": duration(now - start) if start else "?",
        "decisions": list(doc["notes"]),
        "outcomes": outcomes,
        "next_steps": next_steps,
    }


def closing_text(doc: dict[str, Any], archived_to: str) -> str:
    summary = doc["closing_summary"]
    lines = [f"Closed Session: {doc['session_id']} {CLOSED}", f"Duration: {summary['duration']}"]
    for title, key in (
        ("Decisions and Learnings", "decisions"),
        ("Outcomes", "outcomes"),
        ("Next Steps", "next_steps"),
    ):
        lines += ["", f"{title}:"] + ([f"  - {item}" for item in summary[key]] or ["  (none)"])
    lines += ["", f"Archived to: {archived_to}"]
    return "\n".join(lines)
