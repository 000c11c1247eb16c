"""Building a ledger's reservation index: from the truth document to the grouped
records PreToolUse reads, and the marshal cache that lets the next reader skip
parsing. Loaded only when a ledger is written, or when a reader finds no valid
cache (`reservation_index.load_hot`).

Invariant: each entry is `reservation.checked` on its own; one that fails is
left out of the index and named in `problems`, and every other entry is indexed.
"""

from __future__ import annotations

import marshal
import sys

from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease_minutes
from agent_hooks.reservations import index_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def settings_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The repository's settings from a truth document, each valid or its default."""
    raw = doc.get("settings")
    raw = raw if isinstance(raw, dict) else {}
    worktree = raw.get("worktree_leases")
    remote = raw.get("remote")
    return {
        "strict": doc.get("strict") is True,
        "lease_minutes": lease_minutes.from_setting(raw.get("lease_minutes")),
        "worktree_leases": worktree if worktree in ("warn", "deny") else "warn",
        # the git remote the ledger is shared through (docs/adr/0016), None: not shared
        "remote": remote if isinstance(remote, str) and remote else None,
    }


def this_machine(doc: dict[str, Any]) -> str | None:
    """This machine's name in a ledger shared with other machines (what the last
    write from the remote recorded), else None."""
    record = doc.get("remote_ledger")
    host = record.get("host") if isinstance(record, dict) else None
    return host if isinstance(host, str) and host else None


def build_hot(doc: dict[str, Any]) -> index_records.HotIndex:
    """The index of a truth document; entries that are not reservations are left
    out and named in `problems`."""
    from agent_hooks.reservations import pattern, reservation

    groups: dict[str, list[tuple[Any, ...]] | bytes] = {}
    until: dict[str, float] = {}
    problems: list[str] = []
    entries = doc.get("reservations")
    here = this_machine(doc) if settings_of(doc)["remote"] is not None else None
    for raw in entries if isinstance(entries, list) else ():
        try:
            res = reservation.checked(raw)
        except ValueError as exc:
            problems.append(f"skipped a bad reservation entry: {exc}")
            continue
        owner = reservation.owner(res, here)
        machine = res.get("machine")
        elsewhere = machine if here is not None and isinstance(machine, str) else None
        exclusive = res["mode"] != reservation.SHARED
        record = (
            owner,
            exclusive,
            res["expires_at"],
            res["compiled"],
            res["id"],
            res["pattern"],
            res["reason"],
            res["agent"],
            res["conversation_id"],
            _holder(res["holder"]),
            res["keep"],
            elsewhere if elsewhere != here else None,
            client if isinstance(client := res.get("client"), str) else None,
        )
        key = pattern.first_literal(res["compiled"])
        group = groups.setdefault(index_records.GLOB_GROUP if key is None else key, [])
        assert isinstance(group, list)
        group.append(record)
        if exclusive:
            until[owner] = max(until.get(owner, 0.0), float(res["expires_at"]))
    return index_records.HotIndex(groups, until, settings_of(doc), problems)


def _holder(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """Only what liveness reads (and a person's name), in types marshal keeps exactly."""
    if raw is None:
        return None
    pid, start, host = raw.get("pid"), raw.get("start"), raw.get("host")
    found = {
        "pid": pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        "start": start if isinstance(start, int) and not isinstance(start, bool) else None,
        "host": host if isinstance(host, str) else None,
    }
    person = raw.get("person")
    if isinstance(person, str):  # made at a terminal: who, for the refusal to name
        found["person"] = person
    return found


def write_cache(
    directory: str, key: tuple[int, int, int] | None, hot: index_records.HotIndex
) -> None:
    from agent_hooks import storage

    snapshot = (
        index_records.CACHE_VERSION,
        sys.version_info[:2],
        key,
        hot.settings,
        hot.exclusive_until,
        {
            name: records if isinstance(records, bytes) else marshal.dumps(records)
            for name, records in hot.groups.items()
        },
    )
    storage.write_bytes_atomic(
        fs.join(directory, index_records.CACHE), marshal.dumps(snapshot), durable=False
    )


def write(directory: str, doc: dict[str, Any]) -> index_records.HotIndex:
    """Replace the truth (durably) and then its cache. Caller holds the lock."""
    from agent_hooks import storage

    truth = fs.join(directory, index_records.TRUTH)
    storage.write_json_atomic(truth, doc, durable=True)
    hot = build_hot(doc)
    write_cache(directory, index_records.stat_key(truth), hot)
    return hot
