"""One sync of this machine's ledger with the shared remote (docs/adr/0016):
push this host's leases and heartbeat, and this machine's reservations when the
remote's copy of them differs; pull the other machines' leases and
reservations; decide double claims.

Run by `agent-hooks ledger sync`, and detached by hooks (`remote_view.start_sync`
runs `main`) when the last sync is older than the interval. Never on the hot
path: it spawns git and waits for the network.

Invariants:

* At most one sync per ledger at a time: a non-blocking lock on
  `remote.sync.lock`; a second sync started meanwhile returns at once
  (`skipped`). A killed sync leaves its lock to the kernel, which drops it.
* Each machine writes only its own `hosts/<host>.json` and `grants/<host>.json`,
  pushed with a lease on the fetched commit: a lost race is a fetch and a retry
  within the same sync (at most `remote_ledger.ATTEMPTS`), never a merge of
  another host's file. The one exception: the files of a host silent for
  `FORGET_AFTER` (7 days) are removed by the next push of any host (its
  reservations file only once nothing in it still counts). A host file claimed
  by another ledger (another `instance`) that is still heard from is never
  overwritten: the sync fails and says to set `AGENT_HOOKS_HOST`.
* This host's file is pushed when its leases or double claims changed, or its
  heartbeat is older than `HEARTBEAT_EVERY`; its reservations file whenever the
  remote's copy differs from what the local truth holds (`remote_ledger`: a
  deleted, rewound or damaged ref loses none of this machine's live grants);
  otherwise a sync is one fetch.
* A remote that cannot be read (`remote_ledger.RemoteState.broken`) is never
  written over: the sync fails, saying why and naming `agent-hooks ledger
  repair`, and changes nothing.
* Every local write is atomic (`storage`): `remote.view` (hooks), `remote.json`
  (people) and, under the ledger's reservation lock, the local truth
  (`remote_ledger.write_local`). A failed sync keeps the last view of the other
  machines, marks it failed with the one-line reason, and changes nothing else.
* A corrupt or hand-rewritten remote never breaks the local ledger: unreadable
  files are reported and left as they are; another machine's reservations that
  cannot be read stand as last taken; an absent ref starts a new ledger.
* Another machine's lease counts while its `expires` has not passed and its host
  was heard from within that host's lease minutes. Silence is judged on this
  machine's clock: a heartbeat counts from when this machine first saw it, or
  from its own time if that is earlier, so a host whose clock runs ahead still
  falls silent on time (and status says its clock is ahead). `expires` is the
  holder's clock: clocks are assumed to agree well within a lease (NTP).
* What another machine wrote reaches hooks only as numbers and single printable
  lines (`_safe`): its texts may end up in a model's context.
* A double claim of a lease is one path leased, counting, by writers on two
  machines; the earlier `claimed` wins (ties: the host name). Both sides learn
  it: each sync that sees one records it in its own host file for that host's
  lease minutes, and each view lists those found by anyone that involve this
  host. A double claim of reservations is decided by `remote_grants` (the
  earlier grant wins); the losing machine drops its grant at its sync and tells
  its holder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from agent_hooks import __version__, identity, jsonio, liveness, log, storage
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease, lease_minutes, lease_release
from agent_hooks.ledger import (
    ledger_location,
    remote_git,
    remote_grants,
    remote_ledger,
    remote_view,
)
from agent_hooks.reservations import index_build, reservation, reservation_index

LOCK = "remote.sync.lock"
HEARTBEAT_EVERY = 60  # seconds: a host file is refreshed at least this often while syncing
FORGET_AFTER = remote_ledger.FORGET_AFTER  # seconds: the files of a host silent this long go
LOCAL_LOCK_TIMEOUT = 5.0
MAX_DOUBLE_CLAIMS = 50
MAX_TEXT = 200  # characters of a text field from another machine that reach hooks
HOLDER_FIELDS = (
    "machine",
    "writer",
    "agent",
    "claimed",
    "written",
    "expires",
    "worktree",
    "branch",
)
LEASE_FIELDS = (
    "writer",
    "agent",
    "conversation",
    "agent_id",
    "agent_type",
    "pid",
    "start",
    "host",
    "worktree",
    "worktree_path",
    "branch",
    "claimed",
    "written",
    "expires",
    "source",
)


class SyncResult:
    """What one sync did. `skipped` says why nothing ran (another sync holds the
    lock, the remote is off); `ok` False with `error` (one line) when it failed."""

    __slots__ = (
        "attempts",
        "blocked",
        "double_claims",
        "elapsed",
        "error",
        "notes",
        "ok",
        "pushed",
        "report",
        "reservation_claims",
        "skipped",
    )

    def __init__(self) -> None:
        self.ok = False
        self.skipped: str | None = None
        self.error: str | None = None
        self.pushed = False
        self.attempts = 0
        self.elapsed = 0.0
        self.notes: list[str] = []
        self.double_claims: list[dict[str, Any]] = []
        self.reservation_claims: list[dict[str, Any]] = []
        self.blocked: str | None = None
        self.report: dict[str, Any] = {}


def _num(value: object, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def local_leases(ledger_dir: str, now: float) -> list[dict[str, Any]]:
    """This ledger's leases that count now, each with its `path`: what this host
    pushes."""
    found = []
    for rel, item in lease_release.everything(ledger_dir):
        if lease.counts(item, now, liveness.alive):
            found.append({"path": rel, **{k: item.get(k) for k in LEASE_FIELDS}})
    found.sort(key=lambda x: (x["path"], str(x.get("writer")), str(x.get("worktree"))))
    return found


def _safe(value: object) -> object:
    """A field another machine wrote, as this machine's hooks may show it to a
    model or a person: a number, a boolean, None, or one printable line of at most
    `MAX_TEXT` characters (anything else is None)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value if abs(value) < 1e15 else None
    if isinstance(value, str):
        return reservation.one_line(value, MAX_TEXT)
    return None


def _key(lease: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes two records one lease: its writer, the holder's process host,
    and when it was claimed (a ledger on a mount shared by two containers may be
    pushed under two host names)."""
    return (str(lease.get("writer")), str(lease.get("host")), str(lease.get("claimed")))


heartbeat_of = remote_ledger.heartbeat_of
heard_from = remote_ledger.heard_from


def first_seen(
    state: remote_ledger.RemoteState, previous: Mapping[str, Any], now: float
) -> dict[str, float]:
    """For each host, when this machine first saw its current heartbeat (the last
    report's time while the heartbeat is unchanged, else now)."""
    before = previous.get("hosts")
    before = before if isinstance(before, dict) else {}
    seen: dict[str, float] = {}
    for name, doc in state.hosts.items():
        prev = before.get(name)
        prev = prev if isinstance(prev, dict) else {}
        same = prev.get("sent") == doc.get("heartbeat") and _num(prev.get("seen_at"), -1) >= 0
        seen[name] = _num(prev.get("seen_at")) if same else now
    return seen


def others_leases(
    state: remote_ledger.RemoteState,
    host: str,
    mine: list[dict[str, Any]],
    now: float,
    seen: Mapping[str, float] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Other machines' leases that count now, by path, as this machine's hooks see
    them: with `machine`, and their worktree named `<machine>:<worktree>`."""
    own = {(x["path"], *_key(x)) for x in mine}
    found: dict[str, list[dict[str, Any]]] = {}
    for name, doc in sorted(state.hosts.items()):
        if name == host or not heard_from(doc, now, (seen or {}).get(name)):
            continue
        leases = doc.get("leases")
        for item in leases if isinstance(leases, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                continue
            rel = item["path"]
            if _num(item.get("expires")) <= now or (rel, *_key(item)) in own:
                continue
            told = {k: _safe(item.get(k)) for k in LEASE_FIELDS}
            told["machine"] = name
            where = item.get("worktree_path") or item.get("worktree") or "?"
            told["worktree"] = f"{name}:{item.get('worktree') or '?'}"
            told["worktree_path"] = f"{name}:{where}"
            found.setdefault(rel, []).append(told)
    return found


def _holder(machine: str, lease: Mapping[str, Any]) -> dict[str, Any]:
    return {"machine": machine, **{k: lease.get(k) for k in HOLDER_FIELDS if k != "machine"}}


def find_double_claims(
    host: str,
    mine: list[dict[str, Any]],
    others: dict[str, list[dict[str, Any]]],
    now: float,
) -> list[dict[str, Any]]:
    """Paths this host leases that another machine leases too, counting now."""
    found = []
    by_path: dict[str, list[dict[str, Any]]] = {}
    for item in mine:
        by_path.setdefault(item["path"], []).append(_holder(host, item))
    for rel, items in others.items():
        if rel in by_path:
            for item in items:
                holder = _holder(item["machine"], item)
                holder["worktree"] = str(item.get("worktree", "")).partition(":")[2]
                by_path[rel].append(holder)
    for rel, holders in sorted(by_path.items()):
        if len({h["machine"] for h in holders}) < 2:
            continue
        holders.sort(key=lambda h: (_num(h.get("claimed"), float("inf")), h["machine"]))
        ident = fs.name_hash(
            rel + "\0" + "\0".join(f"{h['machine']}|{h['writer']}|{h['claimed']}" for h in holders)
        )
        found.append(
            {
                "id": ident,
                "path": rel,
                "holders": holders,
                "winner": holders[0]["machine"],
                "found_at": int(now),
                "found_by": host,
            }
        )
    return found


def _kept_double_claims(
    previous: list[Any], new: list[dict[str, Any]], now: float, minutes: int
) -> list[dict[str, Any]]:
    """Double claims this host reports: those found now, and those found within
    its lease minutes (so the other side hears of one that ended quickly)."""
    merged: dict[str, dict[str, Any]] = {}
    for item in previous:
        if (
            isinstance(item, dict)
            and isinstance(item.get("id"), str)
            and _num(item.get("found_at")) + max(minutes, 1) * 60 > now
        ):
            merged[item["id"]] = item
    for item in new:
        if item["id"] in merged:
            item = {**item, "found_at": merged[item["id"]].get("found_at", item["found_at"])}
        merged[item["id"]] = item
    kept = sorted(merged.values(), key=lambda d: (_num(d.get("found_at")), str(d.get("id"))))
    return kept[-MAX_DOUBLE_CLAIMS:]


def involving(
    state: remote_ledger.RemoteState, host: str, own: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Double claims involving `host`: its own findings and every other host's."""
    merged = {d["id"]: d for d in own}
    for name, doc in state.hosts.items():
        if name == host:
            continue
        reported = doc.get("double_claims")
        for item in reported if isinstance(reported, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            found = item.get("holders")
            holders = [h for h in found if isinstance(h, dict)] if isinstance(found, list) else []
            machines = {h.get("machine") for h in holders}
            if host in machines and item["id"] not in merged:
                merged[item["id"]] = {
                    "id": reservation.one_line(item["id"], 32),
                    "path": _safe(item.get("path")),
                    "holders": [
                        {k: _safe(v) for k, v in h.items() if k in HOLDER_FIELDS} for h in holders
                    ],
                    "winner": _safe(item.get("winner")),
                    "found_at": _safe(item.get("found_at")),
                    "found_by": name,
                }
    return sorted(merged.values(), key=lambda d: (_num(d.get("found_at")), str(d.get("id"))))


def read_report(ledger_dir: str) -> dict[str, Any]:
    """The last sync's report (`remote.json`), or {}."""
    try:
        loaded = storage.load_json_object(os.path.join(ledger_dir, remote_view.REPORT))
    except OSError:
        return {}
    return loaded.doc or {}


def write_report(ledger_dir: str, report: dict[str, Any]) -> None:
    """`remote.json` for people and `remote.view` for hooks, each atomically."""
    storage.write_json_atomic(os.path.join(ledger_dir, remote_view.REPORT), report, durable=False)
    hosts = {
        name: (info.get("heartbeat"), info.get("lease_minutes"))
        for name, info in (report.get("hosts") or {}).items()
        if isinstance(info, dict)
    }
    header = {
        key: report.get(key)
        for key in ("remote", "host", "interval", "attempted_at", "synced_at", "ok", "error")
    }
    header["hosts"] = hosts
    header["double_claims"] = report.get("double_claims") or []
    data = remote_view.encode(header, report.get("leases") or {})
    storage.write_bytes_atomic(os.path.join(ledger_dir, remote_view.VIEW), data, durable=False)


def _hosts_report(
    state: remote_ledger.RemoteState, host: str, now: float, seen: Mapping[str, float]
) -> dict[str, dict[str, Any]]:
    hosts: dict[str, dict[str, Any]] = {}
    for name, doc in sorted(state.hosts.items()):
        leases = doc.get("leases")
        minutes = doc.get("lease_minutes")
        sent = _num(doc.get("heartbeat"))
        hosts[name] = {
            "heartbeat": heartbeat_of(doc, seen.get(name), now),
            "sent": doc.get("heartbeat"),
            "seen_at": seen.get(name, now),
            "ahead": round(sent - seen.get(name, now)) if sent > seen.get(name, now) + 60 else 0,
            "lease_minutes": minutes if isinstance(minutes, int) else lease_minutes.DEFAULT,
            "leases": len(leases) if isinstance(leases, list) else 0,
            "silent": not heard_from(doc, now, seen.get(name)),
            "this": name == host,
        }
    for name, problem in sorted(state.host_problems.items()):
        hosts[name] = {"heartbeat": None, "lease_minutes": None, "leases": 0, "problem": problem}
    return hosts


def sync(
    ledger_dir: str,
    git: remote_git.Git,
    remote: str,
    host: str,
    now: float,
    *,
    interval: int = remote_view.INTERVAL,
    state_dir: str | None = None,
) -> SyncResult:
    """Sync once (see the module's invariants). Never raises for a remote that
    cannot be reached: the result and `remote.json` say why. With `state_dir`
    (this machine's agents' state), the writers here of a double claim are told
    of it, once (`tell_double_claims`)."""
    result = SyncResult()
    began = time.monotonic()
    ledger_location.ensure(ledger_dir)  # 0700, and never through a symlink planted there
    lock = storage.Lock(os.path.join(ledger_dir, LOCK))
    if not lock.acquire(0):
        result.skipped = "another sync of this ledger is running"
        return result
    try:
        remote_view.touch_stamp(ledger_dir, now)
        previous = read_report(ledger_dir)
        try:
            _sync_locked(ledger_dir, git, remote, host, now, interval, previous, result, state_dir)
        except (remote_git.GitFailure, remote_ledger.RemoteUnavailable, OSError) as exc:
            result.ok = False
            result.error = remote_git.one_line(str(exc))
            report = {
                **previous,
                "schema": 1,
                "remote": remote,
                "host": host,
                "interval": interval,
                "attempted_at": now,
                "ok": False,
                "error": result.error,
                "blocked": result.blocked,
            }
            report.setdefault("synced_at", None)
            result.report = report
            write_report(ledger_dir, report)
    finally:
        result.elapsed = time.monotonic() - began
        lock.release()
    return result


def _sync_locked(
    ledger_dir: str,
    git: remote_git.Git,
    remote: str,
    host: str,
    now: float,
    interval: int,
    previous: dict[str, Any],
    result: SyncResult,
    state_dir: str | None = None,
) -> None:
    local = reservation_index.load_truth(ledger_dir).doc or {}
    minutes = index_build.settings_of(local)["lease_minutes"]
    instance = remote_ledger.instance_id(ledger_dir)
    mine = local_leases(ledger_dir, now)
    earlier = previous.get("own_double_claims")
    earlier = earlier if isinstance(earlier, list) else []
    state = None
    own_claims: list[dict[str, Any]] = []
    grants: Grants | None = None
    for attempt in range(1, remote_ledger.ATTEMPTS + 1):
        result.attempts = attempt
        state = remote_ledger.parse(git.fetch(remote))
        if state.broken is not None:
            result.blocked = state.broken
            raise remote_ledger.blocked(remote, state.broken, "synced")
        remote_ledger.check_instance(state, host, instance, now, "synced")
        seen = first_seen(state, previous, now)
        others = others_leases(state, host, mine, now, seen)
        found = find_double_claims(host, mine, others, now)
        own_claims = _kept_double_claims(earlier, found, now, minutes)
        grants = _settle_grants(ledger_dir, state, remote, host, instance, now, seen, state_dir)
        changes: dict[str, bytes | None] = {}
        if grants.own is not None and grants.own.push:
            changes[remote_grants.grants_file(host)] = grants.own.data
        current = state.hosts.get(host)
        if _host_file_stale(current, mine, own_claims, minutes, now):
            changes[remote_ledger.host_file(host)] = _host_document(
                host, instance, now, minutes, mine, own_claims, result
            )
        if not changes:
            break
        for path in _forgotten(state, host, seen, now):  # a push anyway: take them with it
            changes[path] = None
        try:
            state = _publish(git, remote, state, changes, host, now, result)
        except remote_git.LostRace:
            state = None
            if attempt < remote_ledger.ATTEMPTS:
                remote_ledger.backoff(attempt)
            continue
        result.pushed = True
        break
    if state is None or grants is None:
        raise remote_git.GitFailure(
            f"the ledger on {remote} changed under {remote_ledger.ATTEMPTS} attempts in a row; "
            "the next sync tries again"
        )
    result.notes = list(dict.fromkeys([*state.problems, *grants.notes, *result.notes]))
    seen = first_seen(state, previous, now)
    others = others_leases(state, host, mine, now, seen)
    result.double_claims = involving(state, host, own_claims)
    result.reservation_claims = grants.claims
    result.ok = True
    report = {
        "schema": 1,
        "format": remote_ledger.FORMAT,
        "remote": remote,
        "host": host,
        "interval": interval,
        "attempted_at": now,
        "synced_at": now,
        "ok": True,
        "error": None,
        "blocked": None,
        "pushed_at": now if result.pushed else previous.get("pushed_at"),
        **state.identity(),
        "hosts": _hosts_report(state, host, now, seen),
        "leases": others,
        "double_claims": result.double_claims,
        "own_double_claims": own_claims,
        "reservation_double_claims": grants.claims,
        "dropped": [remote_ledger.dropped_record(r, why, now) for r, why in grants.dropped],
        "unreadable": state.unreadable(),
        "told": tell_double_claims(state_dir, host, result.double_claims, previous, now),
        "problems": result.notes[-20:],
    }
    result.report = report
    write_report(ledger_dir, report)
    try:
        git.prune(now)
    except (remote_git.GitFailure, OSError) as exc:
        result.notes.append(f"pruning the private repository failed: {exc}")


class Grants:
    """What a sync settled of the reservations: this machine's document as it
    should stand on the remote (None: the local ledger stayed locked), the double
    claims found, this machine's grants dropped, and notes."""

    __slots__ = ("claims", "dropped", "notes", "own")

    def __init__(self) -> None:
        self.own: remote_ledger.OwnDocument | None = None
        self.claims: list[dict[str, Any]] = []
        self.dropped: list[tuple[dict[str, Any], str]] = []
        self.notes: list[str] = []


def _settle_grants(
    ledger_dir: str,
    state: remote_ledger.RemoteState,
    remote: str,
    host: str,
    instance: str,
    now: float,
    seen: Mapping[str, float],
    state_dir: str | None,
) -> Grants:
    """Under the ledger's reservation lock (held briefly: never across the network):
    take the other machines' reservations, drop this machine's that ended (a
    tombstone, a double claim lost, a holder process gone), write the local
    truth, and say what this machine's document must be. A change written
    through meanwhile is never undone: it wrote the local truth before it gave up
    the lock, and a push built from an older read loses its race."""
    grants = Grants()
    lock = storage.Lock(reservation_index.lock_path(ledger_dir))
    if not lock.acquire(LOCAL_LOCK_TIMEOUT):
        grants.notes.append("the local ledger stayed locked; reservations follow at the next sync")
        return grants
    try:
        loaded = reservation_index.load_truth(ledger_dir, recover_at=now)
        if loaded.problem:
            grants.notes.append(
                f"the local ledger was not valid JSON ({loaded.problem}); it was moved to "
                f"{loaded.moved_to}"
            )
        doc = loaded.doc or {"schema": 2, "strict": False, "settings": {}, "reservations": []}
        gone = _dead_holders(doc, host, now)

        def counts(machine: str) -> bool:
            found = state.hosts.get(machine)
            return found is not None and heard_from(found, now, seen.get(machine))

        cache = remote_ledger.seeded_cache(ledger_dir, doc, host)
        merged = remote_ledger.merge(state, doc, cache, host, now, counts)
        own = remote_ledger.own_document(
            state, remote_ledger.record_of(doc), host, instance, merged.own, merged.tombstones, now
        )
        told = list(merged.dropped)
        merged.dropped += gone
        remote_ledger.settle(doc, merged, state, remote, host, instance, own, now)
        remote_ledger.write_settled(ledger_dir, doc, merged)
        remote_ledger.tell_dropped(state_dir, told, now)
    finally:
        lock.release()
    grants.own = own
    grants.claims = merged.claims
    grants.dropped = merged.dropped
    grants.notes = merged.notes
    if gone:
        grants.notes.append(f"dropped {len(gone)} reservation(s) whose holder process here is gone")
    return grants


def _dead_holders(doc: dict[str, Any], host: str, now: float) -> list[tuple[dict[str, Any], str]]:
    """Take out of `doc` this machine's reservations whose holder process is gone
    (not `--keep`): only this machine can judge them. Returns them, with why."""
    entries = doc.get("reservations")
    kept, gone = [], []
    for entry in entries if isinstance(entries, list) else []:
        holder = entry.get("holder") if isinstance(entry, dict) else None
        if (
            remote_ledger.is_own(entry, host)
            and isinstance(holder, dict)
            and entry.get("keep") is not True
            and liveness.alive(holder) is False
        ):
            gone.append(({**entry, "machine": host}, "its holder's process is gone"))
        else:
            kept.append(entry)
    doc["reservations"] = kept
    return gone


def _host_document(
    host: str,
    instance: str,
    now: float,
    minutes: int,
    leases: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    result: SyncResult,
) -> bytes:
    """This host's file, held to the size every machine reads: when its leases
    would pass it, the most recently written are shared and the rest are not
    (said in the notes)."""
    shared = list(leases)
    while True:
        data = jsonio.encode(
            {
                "format": remote_ledger.FORMAT,
                "host": host,
                "instance": instance,
                "heartbeat": int(now),
                "lease_minutes": minutes,
                "leases": shared,
                "double_claims": claims,
                "agent_hooks": __version__,
            }
        )
        if len(data) <= remote_git.MAX_BLOB or not shared:
            break
        shared = sorted(shared, key=lambda x: -_num(x.get("written")))[: len(shared) // 2]
        shared.sort(key=lambda x: (x["path"], str(x.get("writer")), str(x.get("worktree"))))
    if len(shared) < len(leases):
        result.notes.append(
            f"{len(leases) - len(shared)} of this machine's {len(leases)} leases are not shared: "
            f"its host file would pass the {remote_git.MAX_BLOB}-byte limit"
        )
    return data


def _publish(
    git: remote_git.Git,
    remote: str,
    state: remote_ledger.RemoteState,
    changes: dict[str, bytes | None],
    host: str,
    now: float,
    result: SyncResult,
) -> remote_ledger.RemoteState:
    """`remote_ledger.publish`; this machine's reservations file over the limit
    is left as it was (said in the notes) and the rest pushed."""
    try:
        return remote_ledger.publish(git, remote, state, changes, host, now)
    except remote_ledger.TooLarge as exc:
        own = remote_grants.grants_file(host)
        if own not in changes:
            raise remote_git.GitFailure(str(exc)) from None
        result.notes.append(
            f"this machine's reservations are not shared: {exc}; release some of them"
        )
        rest = {path: data for path, data in changes.items() if path != own}
        try:
            return remote_ledger.publish(git, remote, state, rest, host, now)
        except remote_ledger.TooLarge as again:
            raise remote_git.GitFailure(str(again)) from None


def tell_double_claims(
    state_dir: str | None,
    host: str,
    claims: list[dict[str, Any]],
    previous: Mapping[str, Any],
    now: float,
) -> list[str]:
    """Tell each writer on this machine holding a double claim about it, at its
    next hook that carries context (`state_file.tell`), once per claim: returns
    the ids told so far (kept in `remote.json` while the claim is reported)."""
    before = previous.get("told")
    told = [i for i in before if isinstance(i, str)] if isinstance(before, list) else []
    current = {c["id"] for c in claims if isinstance(c.get("id"), str)}
    told = [i for i in told if i in current]
    if state_dir is None:
        return told
    from agent_hooks.agents import state_file

    for claim in claims:
        ident = claim.get("id")
        if not isinstance(ident, str) or ident in told:
            continue
        found = claim.get("holders")
        holders = [h for h in found if isinstance(h, dict)] if isinstance(found, list) else []
        for holder in holders:
            if holder.get("machine") == host:
                text = double_claim_text(claim, holder, holders)
                try:
                    state_file.tell(state_dir, holder.get("agent"), text, now)
                except OSError:
                    continue
        told.append(ident)
    return told[-MAX_DOUBLE_CLAIMS:]


def double_claim_text(
    claim: Mapping[str, Any], mine: Mapping[str, Any], holders: list[dict[str, Any]]
) -> str:
    """What a writer on this machine is told of a double claim it holds: one line
    of numbers and names from the other machine, trimmed (`_safe`)."""
    path = reservation.one_line(claim.get("path"), MAX_TEXT)
    others = [
        f"{writers_label(h)} on machine {reservation.one_line(h.get('machine'), 64)}"
        for h in holders
        if h.get("machine") != mine.get("machine")
    ]
    winner = claim.get("winner")
    first = (
        "you claimed it first"
        if winner == mine.get("machine")
        else f"machine {reservation.one_line(winner, 64)} claimed it first"
    )
    return (
        f"agent-hooks: double claim: {path}, which you are changing, was being changed at the "
        f"same time by {'; '.join(others) or 'a writer on another machine'} (each machine "
        f"leased it before hearing of the other; {first}). Your edits and theirs may collide: "
        "check the file, and coordinate with them before you change it again."
    )


def writers_label(holder: Mapping[str, Any]) -> str:
    agent = holder.get("agent")
    if isinstance(agent, str) and agent:
        return f'agent "{reservation.one_line(agent, 64)}"'
    return "an agent without AGENT_NAME"


def _forgotten(
    state: remote_ledger.RemoteState, host: str, seen: Mapping[str, float], now: float
) -> list[str]:
    """The files of hosts silent for `FORGET_AFTER` (containers come and go under
    new names), to go with this host's next push: their host file, and their
    reservations file once nothing in it counts (it is read, and its reservations
    and tombstones have all ended). One that comes back writes them again."""
    gone = {
        name
        for name, doc in state.hosts.items()
        if name != host and heartbeat_of(doc, seen.get(name), now) + FORGET_AFTER < now
    }
    paths = [remote_ledger.host_file(name) for name in gone]
    for name, grants in state.grants.items():
        if name == host or (name in state.hosts and name not in gone):
            continue
        if grants.written_at + FORGET_AFTER >= now:
            continue
        live = any(reservation.is_live(r, now) for r in grants.reservations)
        if not live and not remote_grants.kept_tombstones(grants.tombstones, now):
            paths.append(remote_grants.grants_file(name))
    return sorted(paths)


def _host_file_stale(
    current: Mapping[str, Any] | None,
    mine: list[dict[str, Any]],
    own_claims: list[dict[str, Any]],
    minutes: int,
    now: float,
) -> bool:
    if current is None:
        return True
    if now - _num(current.get("heartbeat")) >= HEARTBEAT_EVERY:
        return True
    if current.get("lease_minutes") != minutes:
        return True
    if jsonio.dumps(current.get("leases")) != jsonio.dumps(mine):
        return True
    ids = current.get("double_claims")
    had = {d.get("id") for d in ids if isinstance(d, dict)} if isinstance(ids, list) else set()
    return had != {d["id"] for d in own_claims}


def sync_repository(
    ledger_dir: str,
    environ: Mapping[str, str],
    now: float,
    *,
    interval: int = remote_view.INTERVAL,
    timeout: float = remote_git.TIMEOUT,
) -> SyncResult:
    """Sync the repository ledger `ledger_dir` with the remote its settings name;
    log a failure to the state directory's hook log."""
    result = SyncResult()
    common = os.path.dirname(ledger_dir.rstrip("/"))
    if not ledger_location.is_repository_ledger(ledger_dir.rstrip("/")) or not os.path.isfile(
        os.path.join(common, "HEAD")
    ):
        result.skipped = f"{ledger_dir} is not a repository's ledger"
        return result
    remote = remote_ledger.remote_of(reservation_index.load_truth(ledger_dir).doc)
    if remote is None:
        result.skipped = "the remote ledger is off for this repository"
        return result
    try:
        host = remote_ledger.host_name(environ)
    except remote_ledger.HostNameError as exc:
        result.error = str(exc)
        return result
    git = remote_git.Git(common, ledger_dir, environ, timeout=timeout)
    result = sync(
        ledger_dir, git, remote, host, now, interval=interval, state_dir=identity.state_dir(environ)
    )
    if result.error:
        log.log(
            identity.state_dir(environ),
            "LedgerSync",
            host,
            f"sync with {remote} failed: {result.error}",
            now,
        )
    return result


def asked_again(ledger_dir: str, since: float) -> bool:
    """Did a hook ask for a sync (touch the stamp) after `since`? A sync it started
    meanwhile found this one running and was turned away, so this one runs again:
    what the hook's writer leased last is not left for the next interval."""
    try:
        return os.stat(os.path.join(ledger_dir, remote_view.STAMP)).st_mtime > since + 0.001
    except OSError:
        return False


def main(argv: list[str]) -> int:
    """The detached sync a hook starts: `ledger_sync.main([<ledger dir>])`. It runs
    once more when a hook asked again while it ran (`asked_again`)."""
    if len(argv) != 1:
        return 2
    try:
        began = time.time()
        result = sync_repository(argv[0], os.environ, began)
        if not result.skipped and asked_again(argv[0], began):
            result = sync_repository(argv[0], os.environ, time.time())
    except Exception as exc:  # a detached process: its log is the only place to tell
        log.log(
            identity.state_dir(os.environ),
            "LedgerSync",
            "-",
            f"sync crashed: {type(exc).__name__}: {exc}",
        )
        return 1
    return 0 if result.ok or result.skipped else 1
