"""Reserve, renew and release: every change to a project's reservations.

Invariants:

* Each operation runs under the project's one lock, so check-then-write is
  atomic: of 8 agents reserving `src/**` at the same instant exactly one wins.
  The lock is given up after 5 s and the operation refused (never done unlocked:
  a grant must not be a guess).
* Lock order is project index, then agent state — the same everywhere — so
  operations never deadlock.
* After a change, each affected agent's state document mirrors its live
  reservations (the seed ADR's `reservations` field, which other tools read),
  and an issue-like reason fills the agent's `issue_id` if it had none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from agent_hooks import identity, state_file, storage
from agent_hooks.reservations import index, reservation

Reservation = dict[str, Any]
SCHEMA_VERSION = 1


class Outcome:
    """What an operation did: reservations granted or changed, conflicts that
    refused it, names that matched nothing, and notes (e.g. a recovered index)."""

    def __init__(self) -> None:
        self.changed: list[Reservation] = []
        self.conflicts: list[tuple[Reservation, Reservation]] = []
        self.unmatched: list[str] = []
        self.notes: list[str] = []


def _empty(project_root: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "project_root": project_root,
        "strict": False,
        "reservations": [],
    }


def _locked(
    state_dir: str,
    project_root: str,
    now: float,
    operate: Callable[[dict[str, Any], Outcome], bool],
) -> Outcome:
    directory = index.index_dir(state_dir, project_root)
    storage.ensure_dir(directory)
    lock = storage.Lock(index.lock_path(directory))
    if not lock.acquire(storage.LOCK_TIMEOUT):
        raise reservation.ReservationError(
            f"the reservation lock of {project_root} stayed busy for {storage.LOCK_TIMEOUT:g} s; "
            "nothing was changed, try again"
        )
    outcome = Outcome()
    try:
        loaded = index.load_truth(directory, recover_at=now)
        if loaded.problem:
            outcome.notes.append(
                f"the reservation index was not valid JSON ({loaded.problem}); "
                f"it was moved to {loaded.moved_to} and a new one begun"
            )
        doc = loaded.doc or _empty(project_root)
        held = [r for r in doc.get("reservations", []) if isinstance(r, dict)]
        live = [r for r in held if reservation.is_live(r, now)]
        pruned = len(live) != len(doc.get("reservations", []))
        doc["reservations"] = live
        before = {r.get("agent") for r in held}  # expired ones too: their mirrors must drop them
        if operate(doc, outcome) or pruned or loaded.problem:
            doc["updated_at"] = int(now)
            index.write(directory, doc)
            agents = before | {r["agent"] for r in doc["reservations"]}
            _mirror(state_dir, project_root, doc["reservations"], agents, now)
    finally:
        lock.release()
    return outcome


def _mirror(
    state_dir: str, project_root: str, live: list[Reservation], agents: set[str | None], now: float
) -> None:
    """Copy each agent's live reservations in this project into its state file."""
    for name in agents:
        agent = identity.Agent(name, state_dir)
        mine = [
            {
                "id": r["id"],
                "paths": [r["pattern"]],
                "pattern": r["pattern"],
                "mode": r["mode"],
                "reason": r["reason"],
                "created_at": int(r["created_at"]),
                "expires_at": int(r["expires_at"]),
                "keep": r["keep"],
                "project_root": project_root,
            }
            for r in live
            if r["agent"] == name
        ]

        def update(doc: dict[str, Any], mine: list[Reservation] = mine) -> None:
            others = [
                r
                for r in doc["reservations"]
                if r.get("project_root") != project_root and float(r.get("expires_at", 0)) > now
            ]
            doc["reservations"] = others + mine
            if not doc["issue_id"]:
                doc["issue_id"] = next(
                    (r["reason"] for r in mine if reservation.looks_like_issue_id(r["reason"])),
                    None,
                )

        state_file.update(agent, update, now, lambda message: None)


def reserve(
    state_dir: str,
    project_root: str,
    agent: str | None,
    patterns: list[tuple[str, list[Any]]],
    *,
    reason: str,
    ttl: int,
    shared: bool,
    keep: bool,
    now: float,
    conversation_id: str | None = None,
    source: str = "cli",
) -> Outcome:
    """Grant every (pattern, compiled) pair to `agent`, or — on any conflict — none."""
    requested = [
        {
            "id": "r-" + os.urandom(4).hex(),
            "agent": agent,
            "project_root": project_root,
            "pattern": text,
            "compiled": compiled,
            "mode": reservation.SHARED if shared else reservation.EXCLUSIVE,
            "reason": reason,
            "created_at": int(now),
            "expires_at": int(now) + ttl,
            "keep": keep,
            "conversation_id": conversation_id,
            "source": source,
        }
        for text, compiled in patterns
    ]

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        result, conflicts = reservation.plan_reserve(doc["reservations"], requested, now)
        if conflicts:
            outcome.conflicts = conflicts
            return False
        doc["reservations"] = result
        outcome.changed = requested
        return True

    return _locked(state_dir, project_root, now, operate)


def _select(
    doc: dict[str, Any],
    outcome: Outcome,
    agent: str | None,
    patterns: Sequence[str],
    ids: Sequence[str],
    everything: bool,
    force: bool,
) -> list[Reservation]:
    """The reservations named by `patterns` / `ids` / `everything`; names that
    matched nothing go to `outcome.unmatched`. Only `agent`'s own, unless `force`
    (then ids may name anyone's)."""
    held = doc["reservations"]
    mine = [r for r in held if r["agent"] == agent]
    chosen: list[Reservation] = list(mine) if everything else []
    for text in patterns:
        found = [r for r in mine if r["pattern"] == text]
        chosen += found
        if not found:
            outcome.unmatched.append(text)
    for rid in ids:
        found = [r for r in (held if force else mine) if r["id"] == rid]
        chosen += found
        if not found:
            outcome.unmatched.append(rid)
    unique: dict[str, Reservation] = {r["id"]: r for r in chosen}
    return list(unique.values())


def release(
    state_dir: str,
    project_root: str,
    agent: str | None,
    *,
    patterns: Sequence[str] = (),
    ids: Sequence[str] = (),
    everything: bool = False,
    force: bool = False,
    now: float,
    keep_kept: bool = False,
) -> Outcome:
    """Release exactly what is named. `keep_kept` (SessionEnd) spares `--keep` ones."""

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        chosen = _select(doc, outcome, agent, patterns, ids, everything, force)
        if keep_kept:
            chosen = [r for r in chosen if not r.get("keep")]
        gone = {r["id"] for r in chosen}
        doc["reservations"] = [r for r in doc["reservations"] if r["id"] not in gone]
        outcome.changed = chosen
        return bool(chosen)

    return _locked(state_dir, project_root, now, operate)


def renew(
    state_dir: str,
    project_root: str,
    agent: str | None,
    *,
    patterns: list[str],
    ttl: int,
    now: float,
) -> Outcome:
    """Extend the agent's live reservations (all of them when no pattern is named)
    to at least now + ttl. Expired ones are gone and stay gone."""

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        chosen = _select(doc, outcome, agent, patterns, [], not patterns, False)
        for res in chosen:
            res["expires_at"] = max(float(res["expires_at"]), int(now) + ttl)
        outcome.changed = chosen
        return bool(chosen)

    return _locked(state_dir, project_root, now, operate)


def set_strict(state_dir: str, project_root: str, strict: bool, now: float) -> Outcome:
    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        changed = doc.get("strict") is not strict
        doc["strict"] = strict
        return changed

    return _locked(state_dir, project_root, now, operate)


def live(state_dir: str, project_root: str, now: float) -> tuple[list[Reservation], bool]:
    """The project's live reservations (lock-free read) and its strict setting."""
    loaded = index.load_truth(index.index_dir(state_dir, project_root))
    doc = loaded.doc or {}
    held = [
        r
        for r in doc.get("reservations", [])
        if isinstance(r, dict) and reservation.is_live(r, now)
    ]
    return held, doc.get("strict") is True


def known_projects(state_dir: str) -> list[str]:
    """Every project root that has a reservation index in `state_dir`."""
    root = os.path.join(identity.data_dir(state_dir), "projects")
    found = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        doc = index.load_truth(entry.path).doc
        if doc and isinstance(doc.get("project_root"), str):
            found.append(doc["project_root"])
    return found


def release_at_session_end(
    state_dir: str, agent: str | None, doc: dict[str, Any], now: float
) -> int:
    """Release the agent's reservations not made with --keep, in every project its
    state mirrors; return how many were released."""
    projects = {r.get("project_root") for r in doc.get("reservations", []) if not r.get("keep")}
    released = 0
    for project_root in sorted(p for p in projects if isinstance(p, str)):
        outcome = release(state_dir, project_root, agent, everything=True, keep_kept=True, now=now)
        released += len(outcome.changed)
    return released
