"""Subagent token figures: read from each subagent's own transcript when it
stops and, while that transcript is not final yet, again at later hooks.

Why (docs/adr/0009-work-sessions.md, "Subagent figures"): Claude Code 2.1.328
fires SubagentStop before it has flushed the subagent's last transcript entries
(its transcript writes are buffered and flushed from a timer; the file may not
exist yet), so what SubagentStop reads may be nothing, or the figures of the
turns before the last one.

Invariants:

* A stopped subagent whose transcript does not show its final entry yet is on
  the document's `pending_subagents` list ({id, transcript, since}). Every hook
  that already updates the work session (PostToolUse, Stop, SubagentStart,
  SubagentStop) and the CLI's reports and changes retry the list; an empty list
  costs one truthiness test and no import.
* Each retry reads only what was appended since the last read (the cursor is the
  agent record's `read`: {transcript, device, inode, offset}), and stores what it
  found at once: `tokens_used` and `tokens.saved` always show the figures read so
  far, never 0 while the transcript has any; `finish_agent` keeps `saved` the sum.
* A subagent leaves the list when the last assistant entry read ends its turn
  (its figures are complete), or `PENDING_TTL` seconds after it stopped (the
  figures read by then are kept; logged), or when more than `MAX_PENDING` are
  waiting (the oldest, likewise). Going on the list and leaving it complete are
  routine and not logged. A read always comes before the expiry check, so
  a transcript that is complete by the time of the first hook after the limit
  still counts in full.
* A later stop of the same subagent (one resumed after its stop) reads on from
  where the last one stopped, so its new turns count and a final entry of an
  earlier turn does not end the new wait.

Only built-in modules and agent_hooks' own are imported: hooks load this module,
and only while something is pending or a subagent stops.
"""

from __future__ import annotations

from agent_hooks.work_sessions import transcript, work_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    Log = Callable[[str], object] | None

PENDING_TTL = 600.0  # seconds after a subagent's stop during which its transcript is retried
MAX_PENDING = 20


def record_stop(
    doc: dict[str, Any], agent_id: str, path: str | None, now: float, log: Log = None
) -> bool:
    """Count a stopped subagent from its transcript `path`; put it on the pending
    list when the figures are not final yet (or the file is not there yet).
    True when it is pending."""
    record = work_session.spawned_agent(doc, agent_id)
    work_session.drop_pending(doc, agent_id)
    final = _read(doc, record, path, now)[1] if path else False
    work_session.finish_agent(doc, agent_id, record["tokens_used"], now)
    if final:
        return False
    if not path:
        _say(log, f"subagent {agent_id}: no transcript to read; tokens not counted")
        return False
    work_session.add_pending(doc, agent_id, path, now)  # routine: not logged
    while len(doc["pending_subagents"]) > MAX_PENDING:
        oldest = doc["pending_subagents"].pop(0)
        _give_up(doc, oldest, "too many subagents pending", log)
    return True


def retry(doc: dict[str, Any], now: float, log: Log = None) -> bool:
    """Read on every pending subagent's transcript; True when the document changed."""
    pending = doc.get("pending_subagents")
    if not pending:
        return False
    keep: list[dict[str, Any]] = []
    changed = False
    for item in pending:
        agent_id = item.get("id")
        if not isinstance(agent_id, str) or not agent_id:
            changed = True
            continue
        path = item.get("transcript")
        record = work_session.spawned_agent(doc, agent_id)
        moved, final = _read(doc, record, path, now) if isinstance(path, str) else (False, False)
        changed = changed or moved
        if final:
            changed = True
            continue
        since = work_session.parse_time(item.get("since"))
        if since is None or now - since >= PENDING_TTL:
            changed = True
            why = (
                "pending since an unknown time"
                if since is None
                else f"still not complete {PENDING_TTL:g} s after its stop"
            )
            _give_up(doc, item, why, log)
            continue
        keep.append(item)
    if changed:
        doc["pending_subagents"] = keep
    return changed


def _read(
    doc: dict[str, Any], record: dict[str, Any], path: str | None, now: float
) -> tuple[bool, bool]:
    """Read `record`'s transcript on from its cursor and store the figures:
    (whether the record changed, whether its figures are final)."""
    if not path:
        return False, False
    read = record.get("read")
    cursor = dict(read, used=record["tokens_used"]) if isinstance(read, dict) else None
    progress = transcript.subagent_progress(cursor, path)
    if progress is None:
        return False, False
    now_read = {k: progress[k] for k in ("transcript", "device", "inode", "offset")}
    changed = now_read != read
    record["read"] = now_read
    if progress["used"] != record["tokens_used"]:
        work_session.finish_agent(doc, record["id"], progress["used"], now)
        changed = True
    return changed, bool(progress["final"])


def _give_up(doc: dict[str, Any], item: dict[str, Any], why: str, log: Log) -> None:
    record = work_session.spawned_agent(doc, str(item.get("id")))
    _say(
        log,
        f"subagent {record['id']}: transcript {item.get('transcript') or '(none)'} {why}; "
        f"stopped retrying, {record['tokens_used']:,} tokens counted",
    )


def _say(log: Log, text: str) -> None:
    if log is not None:
        log(text)
