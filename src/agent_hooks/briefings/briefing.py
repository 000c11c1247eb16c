"""Briefings: what one agent must carry into its next conversation in one project
(design document 002: "briefings, not transcripts"). Pure functions over a plain dict.

A briefing holds a goal, the decisions made, the findings confirmed, the changes
noted and the focus for the next session. Each decision, finding and change is
`{"text", "at"}` so the oldest can be dropped first when space runs out.

Invariants:

* Every text is one or more non-empty lines, at most `MAX_TEXT` characters, with
  no control character other than newline (`check_text`); so the goal, the focus
  and the fixed parts always fit the limit on their own.
* `render` returns the design document's shape — `SESSION BRIEFING (from prior work):`,
  `GOAL:`, `DECISIONS ALREADY MADE:`, `FINDINGS ALREADY CONFIRMED:`, `WHAT HAS
  CHANGED SINCE LAST SESSION:`, `FOCUS FOR THIS SESSION:` and the closing
  instruction — in at most `limit` characters. When it would be longer, whole
  entries are dropped oldest first (then files from the automatic change list)
  and a note says so; a line is never cut.
"""

from __future__ import annotations

from typing import Any

from agent_hooks.wording import plural

LIMIT = 10_000
MAX_TEXT = 2_000
MAX_FILES_SHOWN = 60
KINDS = {"decision": "decisions", "finding": "findings", "change": "changes"}
HEADER = "SESSION BRIEFING (from prior work):"
_LEFT_OUT = "- (left out to fit; see `agent-hooks brief show`)"
CLOSING = "Do not repeat work already completed. Build on the briefing above."
_SECTIONS = (
    ("decisions", "DECISIONS ALREADY MADE:", "- (none recorded)"),
    ("findings", "FINDINGS ALREADY CONFIRMED:", "- (none recorded)"),
)


class BriefingError(ValueError):
    """A text that cannot go into a briefing; the message is one line."""


def check_text(text: str, what: str = "text") -> str:
    cleaned = "\n".join(line.rstrip() for line in text.strip().splitlines())
    if not cleaned:
        raise BriefingError(f"the {what} is empty")
    if len(cleaned) > MAX_TEXT:
        raise BriefingError(
            f"the {what} is {len(cleaned)} characters long; the limit is {MAX_TEXT}"
        )
    if any((ch < " " and ch != "\n") or ch == "\x7f" for ch in cleaned):
        raise BriefingError(f"the {what} contains a control character")
    return cleaned


def empty(agent_name: str | None, project: str, now: float) -> dict[str, Any]:
    return {
        "agent": agent_name,
        "project_root": project,
        "goal": None,
        "decisions": [],
        "findings": [],
        "changes": [],
        "focus": None,
        "updated_at": int(now),
    }


def normalize(
    raw: dict[str, Any] | None, agent_name: str | None, project: str, now: float
) -> dict[str, Any]:
    doc = empty(agent_name, project, now)
    if not raw:
        return doc
    for field in ("goal", "focus"):
        value = raw.get(field)
        doc[field] = value if isinstance(value, str) and value.strip() else None
    for field in KINDS.values():
        items = raw.get(field)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                at = item.get("at")
                when = int(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0
                doc[field].append({"text": item["text"], "at": when})
    updated = raw.get("updated_at")
    if isinstance(updated, int | float) and not isinstance(updated, bool):
        doc["updated_at"] = int(updated)
    return doc


def is_empty(doc: dict[str, Any]) -> bool:
    return not (doc["goal"] or doc["focus"] or any(doc[f] for f in KINDS.values()))


def set_goal(doc: dict[str, Any], text: str, now: float) -> None:
    doc["goal"] = check_text(text, "goal")
    doc["updated_at"] = int(now)


def set_focus(doc: dict[str, Any], text: str, now: float) -> None:
    doc["focus"] = check_text(text, "focus")
    doc["updated_at"] = int(now)


def add(doc: dict[str, Any], kind: str, text: str, now: float) -> None:
    """Append a decision, finding or change (`kind` is the singular)."""
    if kind not in KINDS:
        raise BriefingError(f"unknown entry kind {kind!r}; use one of: {', '.join(KINDS)}")
    doc[KINDS[kind]].append({"text": check_text(text, kind), "at": int(now)})
    doc["updated_at"] = int(now)


def _bullet(text: str) -> list[str]:
    first, *rest = text.splitlines() or [""]
    return [f"- {first}", *(f"  {line}" for line in rest)]


class _Entry:
    __slots__ = ("at", "field", "lines", "seq")

    def __init__(self, field: str, seq: int, at: int, lines: list[str]) -> None:
        self.field = field
        self.seq = seq
        self.at = at
        self.lines = lines


def render(
    doc: dict[str, Any],
    *,
    changed_files: list[str] | None = None,
    since: str | None = None,
    limit: int = LIMIT,
) -> str:
    """The briefing as context text, at most `limit` characters (see the module
    invariants). `changed_files` are the project's files changed `since` (a label
    such as "2026-11-21 20:13 UTC"), listed under WHAT HAS CHANGED."""
    entries = [
        _Entry(field, seq, item["at"], _bullet(item["text"]))
        for field in KINDS.values()
        for seq, item in enumerate(doc[field])
    ]
    files = list(changed_files or [])
    dropped_entries = 0
    listed = shown_files = min(len(files), MAX_FILES_SHOWN)
    order = sorted(entries, key=lambda e: (e.at, e.seq))
    had = {e.field for e in entries}
    while True:
        text = _compose(
            doc,
            entries,
            had,
            files[:shown_files],
            len(files),
            since,
            dropped_entries,
            listed - shown_files,
        )
        if len(text) <= limit:
            return text
        if order:
            oldest = order.pop(0)
            entries.remove(oldest)
            dropped_entries += 1
        elif shown_files > 0:
            shown_files = max(0, shown_files - max(1, (len(text) - limit) // 40))
        else:
            # only a limit far below LIMIT gets here: goal and focus alone exceed it
            return text[: text.rfind("\n", 0, limit) + 1].rstrip("\n")


def _compose(
    doc: dict[str, Any],
    entries: list[_Entry],
    had: set[str],
    files: list[str],
    total_files: int,
    since: str | None,
    dropped: int,
    dropped_files: int,
) -> str:
    lines = [HEADER]
    if dropped or dropped_files:
        parts = []
        if dropped:
            parts.append(plural(dropped, "oldest entry", "oldest entries"))
        if dropped_files:
            parts.append(plural(dropped_files, "changed file name"))
        lines.append(
            f"[agent-hooks: {' and '.join(parts)} left out to fit the context limit; "
            "`agent-hooks brief show` lists every entry]"
        )
    goal = (doc["goal"] or "(not recorded)").splitlines()
    lines.append(f"GOAL: {goal[0]}")
    lines += goal[1:]
    by_field: dict[str, list[_Entry]] = {field: [] for field in KINDS.values()}
    for entry in entries:
        by_field[entry.field].append(entry)
    for field, title, none in _SECTIONS:
        lines.append(title)
        chosen = sorted(by_field[field], key=lambda e: e.seq)
        lines += [line for e in chosen for line in e.lines] or [_LEFT_OUT if field in had else none]
    lines.append("WHAT HAS CHANGED SINCE LAST SESSION:")
    changes = [line for e in sorted(by_field["changes"], key=lambda e: e.seq) for line in e.lines]
    if total_files:
        when = f" since {since}" if since else ""
        changes.append(f"- Files changed in the project{when} ({total_files}):")
        changes += [f"  - {path}" for path in files]
        if len(files) < total_files:
            changes.append(f"  - … and {total_files - len(files)} more")
    lines += changes or [_LEFT_OUT if "changes" in had else "No changes"]
    lines.append("FOCUS FOR THIS SESSION:")
    lines += (doc["focus"] or "(not recorded)").splitlines()
    lines.append(CLOSING)
    return "\n".join(lines)
