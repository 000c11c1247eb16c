"""Reserve, renew and release: every change to a repository's reservations.

Invariants:

* Each operation runs under the ledger's one lock, so check-then-write is
  atomic: of 8 agents reserving `src/**` at the same instant exactly one wins.
  The lock is given up after `timeout` (5 s; `SHARED_LOCK_TIMEOUT` in a ledger
  shared with other machines, whose changes hold it across a remote
  transaction) and the operation refused (never
  done unlocked: a grant must not be a guess).
* Lock order is ledger, then agent state — the same everywhere — so
  operations never deadlock.
* An exclusive reservation is refused, all or nothing, while it covers a file
  another owner's writer is changing (a live lease): the holders are named.
* Every write first tidies the ledger: entries that are not reservations are
  moved to `rejected` (kept, with the reason, never silently lost; so is a
  `reservations` or `rejected` field that is not a list); expired ones
  go; those whose holder's process is gone go too, unless made with `--keep`,
  and each is recorded in `dropped` with why (shown by `reservations` and the
  holder's next SessionStart).
* A release takes exactly the entries it chose, never another owner's entry
  that repeats one of their ids (a hand-edited ledger may).
* After a change, each affected agent's state document mirrors its live
  reservations (the original ADR's `reservations` field, which other tools read),
  and an issue-like reason fills the agent's `issue_id` if it had none.
* The first write to a repository's ledger adopts what an earlier release left
  at the old per-HOME location (`adopt_legacy`).
* A ledger shared with other machines (its `remote` setting, docs/adr/0016)
  changes through `ledger.shared_reservations`: a reserve, release or renew
  goes to the remote first (the same operation, planned against the remote
  document) and only then to the local truth, or is refused with one line and
  changes nothing; `--local` reservations, settings and tidying stay here;
  `offline` (hooks) never waits for the network. Only this machine's holders
  are judged here: another machine's reservations go when it drops them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from agent_hooks import identity, liveness, storage
from agent_hooks.agents import state_file
from agent_hooks.ledger import ledger_location
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import index_build, index_records, reservation, reservation_index
from agent_hooks.wording import plural
from agent_hooks.writers import Writer

Reservation = dict[str, Any]
SCHEMA_VERSION = 2
MAX_DROPPED = 50
MAX_REJECTED = 50
# seconds to wait for the lock of a shared ledger: its holder may be in a remote
# transaction (up to 5 attempts, each a fetch and a push) of another agent here
SHARED_LOCK_TIMEOUT = 60.0


def _empty(project_root: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "project_root": project_root,
        "strict": False,
        "settings": {},
        "reservations": [],
    }


def _dropped_entry(res: Reservation, why: str, now: float) -> dict[str, Any]:
    return {
        "id": res.get("id"),
        "pattern": res.get("pattern"),
        "agent": res.get("agent"),
        "conversation_id": res.get("conversation_id"),
        "why": why,
        "at": int(now),
    }


def _tidy(doc: dict[str, Any], now: float, outcome: reservation.Outcome) -> bool:
    """Check every entry, drop expired ones and those of dead holders (this
    machine's: another machine's holders are judged there); True if changed."""
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
        ours = outcome.host is None or res.get("machine") in (None, outcome.host)
        if ours and holder is not None and not res.get("keep") and liveness.alive(holder) is False:
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
    repo: Repo,
    now: float,
    operate: Callable[[dict[str, Any], reservation.Outcome], bool],
    *,
    timeout: float | None = None,
    needs_remote: Callable[[reservation.Outcome], bool] | None = None,
    offline: bool = False,
    what: str = "changed",
) -> reservation.Outcome:
    """Run `operate` on the repository's ledger under its lock. In a ledger shared
    with other machines, `needs_remote(outcome of a trial run here)` says whether
    the change must reach the remote (None: never, e.g. a setting); `offline` makes
    it here now and leaves it to the next sync (`shared_reservations.change`), which
    runs git with the repository's environment (`repo.environ`)."""
    state_dir, project_root, directory = repo.state_dir, repo.root, repo.ledger
    ledger_location.ensure(directory)
    if timeout is None:  # a lock-free look: is the ledger shared (a remote transaction)?
        timeout = SHARED_LOCK_TIMEOUT if repo.shared else storage.LOCK_TIMEOUT
    lock = storage.Lock(reservation_index.lock_path(directory))
    if not lock.acquire(timeout):
        raise reservation.ReservationError(
            f"the reservation lock of {project_root} stayed busy for {timeout:g} s; "
            "nothing was changed, try again"
        )
    outcome = reservation.Outcome()
    try:
        outcome.notes += adopt_legacy(repo, now)
        loaded = reservation_index.load_truth(directory, recover_at=now)
        if loaded.problem:
            outcome.notes.append(
                f"the reservation index was not valid JSON ({loaded.problem}); "
                f"it was moved to {loaded.moved_to} and a new one begun"
            )
        doc = loaded.doc or _empty(project_root)
        entries = doc.get("reservations")
        before = [  # expired ones too: their mirrors must drop them
            r
            for r in (entries if isinstance(entries, list) else [])
            if isinstance(r, dict) and (r.get("agent") is None or isinstance(r.get("agent"), str))
        ]
        remote = index_build.settings_of(doc)["remote"]
        written: dict[str, Any] | None = None
        if remote is not None:
            from agent_hooks.ledger import shared_reservations

            written, outcome = shared_reservations.change(
                directory,
                doc,
                remote,
                now,
                lambda d, o: _tidy(d, now, o) | operate(d, o),
                outcome,
                needs_remote=needs_remote,
                offline=offline,
                forced=bool(loaded.problem or outcome.notes),
                what=what,
                environ=repo.environ,
            )
        else:
            tidied = _tidy(doc, now, outcome)
            if operate(doc, outcome) or tidied or loaded.problem or outcome.notes:
                doc["schema"] = SCHEMA_VERSION
                doc["updated_at"] = int(now)
                index_build.write(directory, doc)
                written = doc
        if written is not None:
            repo.changed()
            from agent_hooks.ledger import known_ledgers

            known_ledgers.remember(state_dir, project_root, directory, now)

            def here(r: Reservation) -> bool:  # another machine's agents have no state here
                return outcome.host is None or r.get("machine") in (None, outcome.host)

            ours = [r for r in written.get("reservations") or [] if here(r)]
            agents = {r.get("agent") for r in [*before, *ours] if here(r)}
            _mirror(state_dir, project_root, ours, agents, now)
    finally:
        lock.release()
    return outcome


def _mirror(
    state_dir: str, project_root: str, live: list[Reservation], agents: set[str | None], now: float
) -> None:
    """Copy each agent's live reservations in this project into its state file —
    only into one that exists: a person's reservation from a shell gives nobody a
    state (it would list as an agent that never ran)."""
    for name in agents:
        try:
            agent = identity.Agent(identity.check_agent_name(name) if name else None, state_dir)
        except identity.IdentityError:
            continue
        if not state_file.exists(agent):
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
    repo: Repo,
    me: Writer,
    patterns: list[tuple[str, list[Any]]],
    now: float,
    *,
    reason: str,
    ttl: int,
    shared: bool = False,
    keep: bool = False,
    holder: dict[str, Any] | None = None,
    source: str = "cli",
    local: bool = False,
    offline: bool = False,
) -> reservation.Outcome:
    """Grant every (pattern, compiled) pair to the writer's agent (its name, else
    its conversation: `me.owner`), or — on any conflict — none; the reservations
    name the client it runs in (`me.client`, when known). In a ledger shared with
    other machines: `local` reserves on this machine only; `offline` (a hook) does
    too, saying so, rather than wait for the network."""
    requested = [
        {
            "id": "r-" + os.urandom(4).hex(),
            "agent": me.agent,
            "project_root": repo.root,
            "pattern": text,
            "compiled": compiled,
            "mode": reservation.SHARED if shared else reservation.EXCLUSIVE,
            "reason": reason,
            "created_at": int(now),
            "expires_at": int(now) + ttl,
            "keep": keep,
            "conversation_id": me.conversation,
            "holder": holder,
            "source": source,
            **({"local": True} if local else {}),
            **({"client": me.client} if me.client is not None else {}),
        }
        for text, compiled in patterns
    ]

    def operate(doc: dict[str, Any], outcome: reservation.Outcome) -> bool:
        fresh = [dict(r) for r in requested]  # each attempt plans anew
        result, conflicts = reservation.plan_reserve(doc["reservations"], fresh, now, outcome.host)
        if conflicts:
            outcome.conflicts = conflicts
            return False
        outcome.leased = _leased_by_others(
            repo.ledger, requested, reservation.owner(requested[0]), now
        )
        if outcome.leased:
            return False
        doc["reservations"] = result
        outcome.changed = fresh
        return True

    return _locked(
        repo,
        now,
        operate,
        needs_remote=None if local else lambda outcome: True,
        offline=offline,
        what="reserved",
    )


def _leased_by_others(
    directory: str, requested: list[Reservation], owner: str, now: float
) -> list[tuple[Reservation, str, dict[str, Any]]]:
    """The files another owner's writers are changing (live leases) that an
    exclusive request covers: such a reservation would refuse the lease holder its
    own file in the reserver's name, and the reserver by the lease (issue 18)."""
    from agent_hooks.leases import lease, lease_store
    from agent_hooks.reservations import pattern

    exclusive = [r for r in requested if r["mode"] == reservation.EXCLUSIVE]
    found: list[tuple[Reservation, str, dict[str, Any]]] = []
    if not exclusive:
        return found
    for rel in lease_store.all_paths(directory):
        wanting = [r for r in exclusive if pattern.matches(r["compiled"], rel)]
        if not wanting:
            continue
        for item in lease_store.read(directory, rel):
            writer = str(item.get("writer"))
            if writer.partition("#")[0] != owner and lease.counts(item, now, liveness.alive):
                found.append((wanting[0], rel, item))
                break
    return found


def _select(
    doc: dict[str, Any],
    outcome: reservation.Outcome,
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
    mine = [r for r in held if reservation.owner(r, outcome.host) == owner]
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
    repo: Repo,
    me: Writer,
    now: float,
    *,
    patterns: Sequence[str] = (),
    ids: Sequence[str] = (),
    everything: bool = False,
    force: bool = False,
    keep_kept: bool = False,
    forced_by: str | None = None,
    timeout: float | None = None,
    offline: bool = False,
) -> reservation.Outcome:
    """Release exactly what is named of the writer's agent's (`me.owner`).
    `keep_kept` (SessionEnd) spares `--keep` ones. With `force`, an id may name
    another owner's reservation: it is recorded in `dropped` as released by
    `forced_by`. `offline`: in a ledger shared with other machines, released here
    now and on the remote at the next sync."""
    owner = me.owner

    def operate(doc: dict[str, Any], outcome: reservation.Outcome) -> bool:
        chosen = _select(doc, outcome, owner, patterns, ids, everything, force)
        if keep_kept:
            chosen = [r for r in chosen if not r.get("keep")]
        gone = {id(r) for r in chosen}  # never another owner's entry that repeats an id
        doc["reservations"] = [r for r in doc["reservations"] if id(r) not in gone]
        others = [r for r in chosen if reservation.owner(r, outcome.host) != owner]
        if others:
            why = f"released by {forced_by or 'a person'} (release --force)"
            entries = [_dropped_entry(r, why, now) for r in others]
            outcome.dropped += entries
            _record_dropped(doc, entries)
        outcome.changed = chosen
        return bool(chosen)

    return _locked(
        repo, now, operate, timeout=timeout, needs_remote=_beyond_here, offline=offline,
        what="released",
    )  # fmt: skip


def _beyond_here(outcome: reservation.Outcome) -> bool:
    """Must a release or renewal reach the remote? Unless all it chose was made
    with --local: what it did not find here may be on the remote."""
    return not outcome.changed or any(r.get("local") is not True for r in outcome.changed)


def renew(
    repo: Repo, me: Writer, now: float, *, patterns: list[str], ttl: int, offline: bool = False
) -> reservation.Outcome:
    """Extend the writer's agent's live reservations (all of them when no pattern is
    named) to at least now + ttl. Expired ones are gone and stay gone. `offline` as
    for `release`."""
    owner = me.owner

    def operate(doc: dict[str, Any], outcome: reservation.Outcome) -> bool:
        chosen = _select(doc, outcome, owner, patterns, [], not patterns, False)
        for res in chosen:
            res["expires_at"] = max(float(res["expires_at"]), int(now) + ttl)
        outcome.changed = chosen
        return bool(chosen)

    return _locked(repo, now, operate, needs_remote=_beyond_here, offline=offline, what="renewed")


def set_strict(repo: Repo, strict: bool, now: float) -> reservation.Outcome:
    def operate(doc: dict[str, Any], outcome: reservation.Outcome) -> bool:
        changed = doc.get("strict") is not strict
        doc["strict"] = strict
        return changed

    return _locked(repo, now, operate)


def set_setting(repo: Repo, name: str, value: Any, now: float) -> reservation.Outcome:
    """Change one repository setting (`lease_minutes`, `worktree_leases`)."""

    def operate(doc: dict[str, Any], outcome: reservation.Outcome) -> bool:
        settings = doc.get("settings")
        settings = settings if isinstance(settings, dict) else {}
        changed: bool = settings.get(name) != value
        doc["settings"] = {**settings, name: value}
        return changed

    return _locked(repo, now, operate)


def adopt_legacy(repo: Repo, now: float) -> list[str]:
    """Merge what an earlier release left at the old per-HOME location into the
    repository's ledger (caller holds the ledger's lock); return notes on what was
    adopted. Nothing is lost: the old file is kept, renamed
    `reservations.json.migrated-<UTC>`."""
    target = repo.ledger
    old_dir = ledger_location.legacy_directory(repo.state_dir, repo.root)
    if old_dir == target:
        return []
    old = os.path.join(old_dir, index_records.TRUTH)
    try:
        loaded = storage.load_json_object(old)
    except OSError:
        return []
    if loaded.doc is None and loaded.problem is None:
        return []
    notes: list[str] = []
    found = loaded.doc.get("reservations") if loaded.doc else None
    if isinstance(found, list) and found:
        new = os.path.join(target, index_records.TRUTH)
        present = storage.load_json_object(new, recover_at=now)  # a corrupt one is kept aside
        if present.problem:
            notes.append(
                f"the repository's ledger was not valid JSON ({present.problem}); "
                f"it was moved to {present.moved_to}"
            )
        current = present.doc or {}
        held = current.get("reservations")
        held = held if isinstance(held, list) else []
        ids = {r.get("id") for r in held if isinstance(r, dict)}
        adopted = [r for r in found if isinstance(r, dict) and r.get("id") not in ids]
        current["reservations"] = held + adopted
        if loaded.doc and loaded.doc.get("strict") is True:
            current["strict"] = True
        storage.write_json_atomic(new, current)
        notes.append(f"adopted {plural(len(adopted), 'reservation')} from {old}")
    os.rename(old, f"{old}.migrated-{storage.utc_stamp(now)}")
    return notes


def adopt(repo: Repo, now: float) -> reservation.Outcome:
    """Take the ledger's lock once: adopts an earlier release's ledger, tidies."""
    return _locked(repo, now, lambda doc, outcome: False)


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


def listing(repo: Repo, now: float) -> Listing:
    loaded = reservation_index.load_truth(repo.ledger)
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


def live(repo: Repo, now: float) -> tuple[list[Reservation], bool]:
    """The repository's live reservations (lock-free read) and its strict setting."""
    found = listing(repo, now)
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
    every project its state mirrors; return how many were released. A hook runs
    it: a shared ledger's remote follows at the next sync (`offline`)."""
    mirrored = [r.get("project_root") for r in doc.get("reservations", []) if not r.get("keep")]
    roots = {p for p in (*projects, *mirrored) if isinstance(p, str)}
    released = 0
    me = Writer(agent, conversation_id)
    for project_root in sorted(roots):
        outcome = release(
            Repo(project_root, state_dir), me, now, everything=True, keep_kept=True,
            timeout=timeout, offline=True,
        )  # fmt: skip
        released += len(outcome.changed)
    return released
