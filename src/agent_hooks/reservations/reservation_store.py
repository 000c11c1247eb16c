"""Reserve, renew and release: every change to a repository's reservations.

Invariants:

* Each operation runs under the ledger's one lock, so check-then-write is
  atomic: of 8 agents reserving `src/**` at the same instant exactly one wins.
  The lock is given up after `timeout` (5 s) and the operation refused (never
  done unlocked: a grant must not be a guess).
* Lock order is ledger, then agent state — the same everywhere — so
  operations never deadlock.
* Every write first tidies the ledger: entries that are not reservations are
  moved to `rejected` (kept, with the reason, never silently lost; so is a
  `reservations` or `rejected` field that is not a list); expired ones
  go; those whose holder's process is gone go too, unless made with `--keep`,
  and each is recorded in `dropped` with why (shown by `reservations` and the
  holder's next SessionStart).
* A release takes exactly the entries it chose, never another owner's entry
  that repeats one of their ids (a hand-edited ledger may).
* After a change, each affected agent's state document mirrors its live
  reservations (the seed ADR's `reservations` field, which other tools read),
  and an issue-like reason fills the agent's `issue_id` if it had none.
* The first write to a repository's ledger adopts what an earlier release left
  at the old per-HOME location (`ledger_location.adopt_legacy`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from agent_hooks import identity, liveness, storage
from agent_hooks.agents import state_file
from agent_hooks.ledger import ledger_location
from agent_hooks.reservations import index_build, reservation, reservation_index

Reservation = dict[str, Any]
SCHEMA_VERSION = 2
MAX_DROPPED = 50
MAX_REJECTED = 50


class Outcome:
    """What an operation did: reservations granted or changed, conflicts that
    refused it, names that matched nothing, and notes (e.g. a recovered index)."""

    def __init__(self) -> None:
        self.changed: list[Reservation] = []
        self.conflicts: list[tuple[Reservation, Reservation]] = []
        self.unmatched: list[str] = []
        self.notes: list[str] = []
        self.dropped: list[dict[str, Any]] = []


def _empty(project_root: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "project_root": project_root,
        "strict": False,
        "settings": {},
        "reservations": [],
    }


def directory_of(state_dir: str, project_root: str) -> str:
    return ledger_location.directory(state_dir, project_root)


def _dropped_entry(res: Reservation, why: str, now: float) -> dict[str, Any]:
    return {
        "id": res.get("id"),
        "pattern": res.get("pattern"),
        "agent": res.get("agent"),
        "conversation_id": res.get("conversation_id"),
        "why": why,
        "at": int(now),
    }


def _tidy(doc: dict[str, Any], now: float, outcome: Outcome) -> bool:
    """Check every entry, drop expired ones and those of dead holders; True if changed."""
    raw = doc.get("reservations")
    changed = not isinstance(raw, list)
    if changed and raw is not None:
        _rejected(doc, now).append(
            {"entry": raw, "why": "'reservations' was not a list", "at": int(now)}
        )
        outcome.notes.append(
            "set aside a 'reservations' that was not a list; see --json 'rejected'"
        )
    raw = raw if isinstance(raw, list) else []
    kept: list[Reservation] = []
    for entry in raw:
        try:
            res = reservation.checked(entry)
        except ValueError as exc:
            rejected = _rejected(doc, now)
            rejected.append({"entry": entry, "why": str(exc), "at": int(now)})
            del rejected[:-MAX_REJECTED]
            outcome.notes.append(
                f"set aside a bad reservation entry ({exc}); see --json 'rejected'"
            )
            changed = True
            continue
        if not reservation.is_live(res, now):
            changed = True
            continue
        holder = res.get("holder")
        if holder is not None and not res.get("keep") and liveness.alive(holder) is False:
            outcome.dropped.append(_dropped_entry(res, "its holder's process is gone", now))
            changed = True
            continue
        kept.append(res)
    doc["reservations"] = kept
    if outcome.dropped:
        _record_dropped(doc, outcome.dropped)
    return changed


def _rejected(doc: dict[str, Any], now: float) -> list[Any]:
    """The ledger's list of entries set aside; what stood there if it was not a
    list is kept in it, as one more thing set aside."""
    rejected = doc.get("rejected")
    if not isinstance(rejected, list):
        found = rejected
        rejected = doc["rejected"] = []
        if found is not None:
            rejected.append({"entry": found, "why": "'rejected' was not a list", "at": int(now)})
    return rejected


def _record_dropped(doc: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    dropped = doc.get("dropped")
    dropped = dropped if isinstance(dropped, list) else []
    dropped.extend(entries)
    doc["dropped"] = dropped[-MAX_DROPPED:]


def _locked(
    state_dir: str,
    project_root: str,
    now: float,
    operate: Callable[[dict[str, Any], Outcome], bool],
    *,
    timeout: float = storage.LOCK_TIMEOUT,
) -> Outcome:
    directory = directory_of(state_dir, project_root)
    ledger_location.ensure(directory)
    lock = storage.Lock(reservation_index.lock_path(directory))
    if not lock.acquire(timeout):
        raise reservation.ReservationError(
            f"the reservation lock of {project_root} stayed busy for {timeout:g} s; "
            "nothing was changed, try again"
        )
    outcome = Outcome()
    try:
        outcome.notes += ledger_location.adopt_legacy(state_dir, project_root, now)
        loaded = reservation_index.load_truth(directory, recover_at=now)
        if loaded.problem:
            outcome.notes.append(
                f"the reservation index was not valid JSON ({loaded.problem}); "
                f"it was moved to {loaded.moved_to} and a new one begun"
            )
        doc = loaded.doc or _empty(project_root)
        entries = doc.get("reservations")
        before = {  # expired ones too: their mirrors must drop them
            r.get("agent")
            for r in (entries if isinstance(entries, list) else [])
            if isinstance(r, dict) and (r.get("agent") is None or isinstance(r.get("agent"), str))
        }
        tidied = _tidy(doc, now, outcome)
        if operate(doc, outcome) or tidied or loaded.problem or outcome.notes:
            from agent_hooks.ledger import known_ledgers

            known_ledgers.remember(state_dir, project_root, directory, now)
            doc["schema"] = SCHEMA_VERSION
            doc["updated_at"] = int(now)
            index_build.write(directory, doc)
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
        try:
            agent = identity.Agent(identity.check_agent_name(name) if name else None, state_dir)
        except identity.IdentityError:
            continue
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
                if r.get("project_root") != project_root
                and isinstance(r.get("expires_at"), int | float)
                and r["expires_at"] > now
            ]
            doc["reservations"] = others + mine
            if not doc["issue_id"]:
                doc["issue_id"] = next(
                    (r["reason"] for r in mine if reservation.looks_like_issue_id(r["reason"])),
                    None,
                )

        try:
            state_file.update(agent, update, now, lambda message: None)
        except OSError:
            pass  # the ledger is the truth; a mirror that cannot be written is not fatal


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
    holder: dict[str, Any] | None = None,
    source: str = "cli",
    client: str | None = None,
) -> Outcome:
    """Grant every (pattern, compiled) pair to `agent`, or — on any conflict — none.
    `client`: the client the agent runs in (`writers.CLIENT_LABELS`), when known."""
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
            "holder": holder,
            "source": source,
            **({"client": client} if client is not None else {}),
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
    owner: str,
    patterns: Sequence[str],
    ids: Sequence[str],
    everything: bool,
    force: bool,
) -> list[Reservation]:
    """The reservations named by `patterns` / `ids` / `everything`; names that
    matched nothing go to `outcome.unmatched`. Only `owner`'s own, unless `force`
    (then ids may name anyone's)."""
    held = doc["reservations"]
    mine = [r for r in held if reservation.owner(r) == owner]
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
    unique = {id(r): r for r in chosen}  # by identity: a hand-edited ledger may repeat an id
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
    conversation_id: str | None = None,
    forced_by: str | None = None,
    timeout: float = storage.LOCK_TIMEOUT,
) -> Outcome:
    """Release exactly what is named. `keep_kept` (SessionEnd) spares `--keep` ones.
    With `force`, an id may name another owner's reservation: it is recorded in
    `dropped` as released by `forced_by`."""
    owner = reservation.owner({"agent": agent, "conversation_id": conversation_id})

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        chosen = _select(doc, outcome, owner, patterns, ids, everything, force)
        if keep_kept:
            chosen = [r for r in chosen if not r.get("keep")]
        gone = {id(r) for r in chosen}  # never another owner's entry that repeats an id
        doc["reservations"] = [r for r in doc["reservations"] if id(r) not in gone]
        others = [r for r in chosen if reservation.owner(r) != owner]
        if others:
            why = f"released by {forced_by or 'a person'} (release --force)"
            entries = [_dropped_entry(r, why, now) for r in others]
            outcome.dropped += entries
            _record_dropped(doc, entries)
        outcome.changed = chosen
        return bool(chosen)

    return _locked(state_dir, project_root, now, operate, timeout=timeout)


def renew(
    state_dir: str,
    project_root: str,
    agent: str | None,
    *,
    patterns: list[str],
    ttl: int,
    now: float,
    conversation_id: str | None = None,
) -> Outcome:
    """Extend the agent's live reservations (all of them when no pattern is named)
    to at least now + ttl. Expired ones are gone and stay gone."""
    owner = reservation.owner({"agent": agent, "conversation_id": conversation_id})

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        chosen = _select(doc, outcome, owner, patterns, [], not patterns, False)
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


def set_setting(state_dir: str, project_root: str, name: str, value: Any, now: float) -> Outcome:
    """Change one repository setting (`lease_minutes`, `worktree_leases`)."""

    def operate(doc: dict[str, Any], outcome: Outcome) -> bool:
        settings = doc.get("settings")
        settings = settings if isinstance(settings, dict) else {}
        changed: bool = settings.get(name) != value
        doc["settings"] = {**settings, name: value}
        return changed

    return _locked(state_dir, project_root, now, operate)


def adopt(state_dir: str, project_root: str, now: float) -> Outcome:
    """Take the ledger's lock once: adopts an earlier release's ledger, tidies."""
    return _locked(state_dir, project_root, now, lambda doc, outcome: False)


class Listing:
    """A lock-free read of a ledger: live reservations (checked), settings, what
    was dropped lately, and entries set aside as bad."""

    def __init__(
        self,
        live: list[Reservation],
        settings: dict[str, Any],
        dropped: list[dict[str, Any]],
        problems: list[str],
    ) -> None:
        self.live = live
        self.settings = settings
        self.dropped = dropped
        self.problems = problems


def listing(state_dir: str, project_root: str, now: float) -> Listing:
    loaded = reservation_index.load_truth(directory_of(state_dir, project_root))
    doc = loaded.doc or {}
    live: list[Reservation] = []
    problems = [f"the ledger is not valid JSON: {loaded.problem}"] if loaded.problem else []
    for entry in doc.get("reservations") or [] if isinstance(doc.get("reservations"), list) else []:
        try:
            res = reservation.checked(entry)
        except ValueError as exc:
            problems.append(f"a bad reservation entry is ignored: {exc}")
            continue
        if reservation.is_live(res, now):
            live.append(res)
    dropped = doc.get("dropped")
    recent = [d for d in dropped if isinstance(d, dict)] if isinstance(dropped, list) else []
    return Listing(live, index_build.settings_of(doc), recent, problems)


def live(state_dir: str, project_root: str, now: float) -> tuple[list[Reservation], bool]:
    """The project's live reservations (lock-free read) and its strict setting."""
    found = listing(state_dir, project_root, now)
    return found.live, found.settings["strict"]


def known_projects(state_dir: str) -> list[str]:
    """Every project root with a ledger this HOME has used: repositories' ledgers
    recorded in the registry, and the old per-HOME ledgers."""
    from agent_hooks.ledger import known_ledgers

    return known_ledgers.project_roots(state_dir)


def release_at_session_end(
    state_dir: str,
    agent: str | None,
    doc: dict[str, Any],
    now: float,
    *,
    conversation_id: str | None = None,
    projects: Sequence[str] = (),
    timeout: float = storage.LOCK_TIMEOUT,
) -> int:
    """Release the agent's reservations not made with --keep, in `projects` and
    every project its state mirrors; return how many were released."""
    mirrored = [r.get("project_root") for r in doc.get("reservations", []) if not r.get("keep")]
    roots = {p for p in (*projects, *mirrored) if isinstance(p, str)}
    released = 0
    for project_root in sorted(roots):
        outcome = release(
            state_dir,
            project_root,
            agent,
            everything=True,
            keep_kept=True,
            now=now,
            conversation_id=conversation_id,
            timeout=timeout,
        )
        released += len(outcome.changed)
    return released
