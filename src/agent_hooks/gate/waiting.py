"""Told when it frees: a writer refused a file hears, at its next hook that can
carry context, that the file is free again and why (released, lease ended,
holder gone).

A refusal is noted in the agent's state (`waiting`, at most `MAX_WAITING`, one
per writer and file); PostToolUse of that same writer checks its notes and says
which files are free. Nothing here runs unless a note exists.
"""

from __future__ import annotations

from agent_hooks import liveness
from agent_hooks.agents import state_file
from agent_hooks.leases import lease, lease_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import blocking, index_records, reservation_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    from agent_hooks import identity
    from agent_hooks.writers import Writer

MAX_WAITING = 20
MAX_AGE = 86400  # a note older than a day is dropped unsaid


def note(
    agent: identity.Agent, entry: dict[str, Any], now: float, log: Callable[[str], None]
) -> None:
    """Remember that `entry["writer"]` waits for `entry["rel"]`."""

    def mutate(doc: dict[str, Any]) -> bool:
        same = (entry["writer"], entry["project_root"], entry["rel"])
        notes = [
            n
            for n in doc["waiting"]
            if (n.get("writer"), n.get("project_root"), n.get("rel")) != same
        ]
        notes.append(entry)
        doc["waiting"] = notes[-MAX_WAITING:]
        return True

    state_file.update(agent, mutate, now, log)


def _why_free(state_dir: str, entry: dict[str, Any], directory: str, now: float) -> str:
    holder = entry.get("holder")
    if entry.get("kind") == "lease":
        for item in lease_store.read(directory, entry["rel"]):
            if item.get("writer") != holder:
                continue
            if liveness.alive(item) is False:
                return "its holder's process is gone"
            return "the holder's lease ended (no write for a while)"
        return "the holder finished with it"
    doc = reservation_index.load_truth(directory).doc or {}
    dropped = doc.get("dropped")
    for item in dropped if isinstance(dropped, list) else ():
        if isinstance(item, dict) and item.get("id") == holder:
            return f"the reservation was dropped: {item.get('why')}"
    return "the reservation was released or expired"


def _free(state_dir: str, me: Writer, entry: dict[str, Any], now: float) -> str | None:
    """Why `entry`'s file is free for `me` now, or None while it is still held."""
    root, rel = entry.get("project_root"), entry.get("rel")
    if not isinstance(root, str) or not isinstance(rel, str):
        return "it is no longer tracked"
    repo = Repo(root, state_dir)
    directory, hot = repo.ledger, repo.index
    if hot is not None and blocking.blocking_edit(
        hot,
        rel,
        me.owner,
        now,
        lambda rec: liveness.alive(rec[index_records.HOLDER] or {}) is not False,
    ):
        return None
    seen = lease.judge(lease_store.read(directory, rel), me, repo.worktree, now, liveness.alive)
    if seen.blockers:
        return None
    return _why_free(state_dir, entry, directory, now)


def freed(doc: dict[str, Any], me: Writer, state_dir: str, now: float) -> list[str]:
    """Messages for the files `me` waited for that are free now; their notes are
    removed from `doc` (stale notes of any writer too)."""
    told: list[str] = []
    kept = []
    for entry in doc["waiting"]:
        since = entry.get("since")
        if not isinstance(since, int | float) or now - since > MAX_AGE:
            continue
        if entry.get("writer") != me.key:
            kept.append(entry)
            continue
        rel = entry.get("rel")
        if not isinstance(rel, str):
            continue  # a malformed note is dropped, never fatal
        why = _free(state_dir, me, entry, now)
        if why is None:
            kept.append(entry)
        else:
            shown = rel if rel.isprintable() else repr(rel)
            told.append(f"agent-hooks: {shown} is free now ({why}); you may edit it.")
    doc["waiting"] = kept
    return told
