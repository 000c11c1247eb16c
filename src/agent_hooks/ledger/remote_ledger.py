"""Reservations exact across machines: the remote ledger's documents, changes
written through to the remote before the local ledger, and the local ledger
following the remote (docs/adr/0016-ledger-beyond-one-machine.md, "Format 2").

The remote ledger is the tree of the parentless commit at
`refs/agent-hooks/v2/ledger` on the shared remote:

* `ledger.json`: `{"format": 2, "lineage": <hex>, "generation": n,
  "updated_at": t, "updated_by": <host>}`; every push makes generation n + 1;
  a new lineage starts when the ref was absent.
* `grants/<host>.json`: the reservations made on that machine and its
  tombstones (`remote_grants`), written only by that machine.
* `hosts/<host>.json`: that machine's leases and heartbeat (`ledger_sync`),
  written only by that machine.
* Any other entry is carried over unchanged, read or not.

Invariants:

* A push changes only the pushing machine's own files (and removes those of a
  machine silent for a week, `ledger_sync`): every other entry of the commit it
  was leased on is carried over by its object id, read or not. One push cannot
  drop another machine's reservations.
* Nothing is written over what could not be read: a ref that names no commit, a
  commit whose tree cannot be read, a `ledger.json` that is not format 2 make the
  ledger `broken`, and every change is refused in one line naming why and
  `agent-hooks ledger repair` (a person's command). Another machine's document
  that cannot be read (too large, damaged, of a format this version does not
  know) is left as it is; its last readable copy here stands in for it, and a
  `reserve` — which must be checked against it — is refused until it is
  readable again or repaired.
* Writes are held to the limits reads enforce: a document over
  `remote_git.MAX_BLOB`, or a commit over `remote_git.MAX_FILES` files, is
  refused before anything is pushed (`TooLarge`).
* This machine's own grants are its local truth's: the remote's copy of them is
  rewritten whenever it differs (missing after a deleted ref, older after a
  rewound one, unreadable), under the same compare-and-swap as any push.
* Another machine's document is taken only when it is not older (`seq`, within
  its `instance`) than the version taken before (`remote.grants.json`, the
  newest version of each): a rewound remote never brings back what it released.
  One missing or unreadable keeps the copy taken before until its reservations
  end. A version taken is kept, even once nothing in it counts, until it is
  `FORGET_AFTER` old: an empty newer version is what keeps an older one out.
* A reservation ends where a tombstone names it, and a double claim is decided
  by `remote_grants.double_claims`; this machine's grants that end so are
  dropped from its ledger, recorded in `dropped`, and their holders told.
* `write_through` (the caller holds the ledger's reservation lock) writes the
  local ledger only after the remote accepted the change; it fetches, plans
  against what it fetched, and pushes with a lease on the fetched id; a lost
  race plans again on a fresh fetch after a random back-off, at most `ATTEMPTS`
  times in all. Entries marked `local` (reserved with `--local`, or recorded by
  a hook) belong to this machine alone: never pushed.
"""

from __future__ import annotations

import posix
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agent_hooks import jsonio, storage
from agent_hooks.ledger import remote_git, remote_grants, remote_view
from agent_hooks.reservations import index_build, reservation, reservation_index

META = "ledger.json"
HOSTS_DIR = "hosts"
FORMAT = remote_grants.FORMAT
ATTEMPTS = 5
BACKOFF = 0.1  # seconds, doubled after each lost race, randomized
MAX_DROPPED = 50
LOCAL_RECORD = "remote_ledger"  # the local truth's note of the remote version it reflects
CACHE = "remote.grants.json"  # the newest version of each other machine's grants taken here
INSTANCE = "remote.instance"
PENDING = "remote.pending.json"  # format 1's queue of changes: its changes are in the local truth
SETTING = "remote"  # the repository setting naming the remote (None: off)
DEFAULT_LEASE_MINUTES = 10
FORGET_AFTER = 7 * 86400  # seconds: what a host silent this long wrote is forgotten
MAX_HOST = 64
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
LOCAL_HINT = "or add --local to reserve on this machine only"
REPAIR = "`agent-hooks ledger repair`"


class HostNameError(ValueError):
    """`AGENT_HOOKS_HOST` cannot name a host; the message says why, in one line."""


class RemoteUnavailable(Exception):
    """A reservation change refused because the remote ledger did not take it."""


class TooLarge(ValueError):
    """A document or commit that would pass the limits every reader enforces."""


def check_host(name: object) -> str | None:
    """`name` when it can name a host file (`hosts/<name>.json`), else None."""
    if (
        isinstance(name, str)
        and 0 < len(name) <= MAX_HOST
        and _HOST_CHARS.issuperset(name)
        and not name.startswith((".", "-"))
    ):
        return name
    return None


def host_name(environ: Mapping[str, str]) -> str:
    """This machine's name on the remote: `AGENT_HOOKS_HOST`, else the node name
    and the first 8 characters of `/etc/machine-id` (two machines that share a
    node name still differ)."""
    given = environ.get("AGENT_HOOKS_HOST", "")
    if given:
        if check_host(given) is None:
            raise HostNameError(
                f"AGENT_HOOKS_HOST {given[:80]!r}: use 1-{MAX_HOST} letters, digits, '.', '_' "
                "or '-', not starting with '.' or '-'"
            )
        return given
    node = "".join(c if c in _HOST_CHARS else "-" for c in posix.uname().nodename)
    node = node.strip(".-")[:48] or "host"
    try:
        with open("/etc/machine-id", encoding="ascii", errors="replace") as handle:
            machine = handle.read(64).strip()[:8]
    except OSError:
        machine = ""
    return f"{node}-{machine}" if machine and check_host(f"{node}-{machine}") else node


def host_file(name: str) -> str:
    return f"{HOSTS_DIR}/{name}.json"


def is_local(entry: object) -> bool:
    """Was this reservation made with `--local` or by a hook (this machine only)?"""
    return isinstance(entry, dict) and entry.get("local") is True


def is_own(entry: object, host: str) -> bool:
    """Is this a grant of this machine (`host`) that the remote must hold?"""
    return isinstance(entry, dict) and not is_local(entry) and entry.get("machine") in (None, host)


def instance_id(ledger_dir: str) -> str:
    """This ledger's random id, made once: tells apart two ledgers given one host
    name (two clones on one machine), and orders its documents' versions."""
    path = f"{ledger_dir}/{INSTANCE}"
    data = storage.read_bytes(path)
    text = data.decode("ascii", "replace").strip() if data else ""
    if len(text) == 16 and all(c in "0123456789abcdef" for c in text):
        return text
    text = posix.urandom(8).hex()
    storage.write_bytes_atomic(path, text.encode() + b"\n", durable=True)
    return text


def _object(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(doc, dict):
        return None, f"a JSON {type(doc).__name__}, not an object"
    return doc, None


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if abs(value) < 1e15 else None


# --- what the remote holds ----------------------------------------------------------------


class RemoteState:
    """One version of the remote ledger, parsed. `broken` says why nothing in it
    may be written over (then the rest is empty); `grants` holds every readable
    machine document by host, `grant_problems` why the others cannot be read;
    `hosts` and `host_problems` the same for host files."""

    __slots__ = (
        "broken",
        "commit",
        "entries",
        "files",
        "generation",
        "grant_problems",
        "grants",
        "host_problems",
        "hosts",
        "lineage",
        "problems",
        "trees",
    )

    def __init__(self, commit: str | None) -> None:
        self.commit = commit
        self.broken: str | None = None
        self.trees: dict[str, str] = {}
        self.lineage = ""
        self.generation = 0
        self.entries: dict[str, tuple[str, str]] = {}
        self.files: dict[str, bytes] = {}
        self.grants: dict[str, remote_grants.Grants] = {}
        self.grant_problems: dict[str, str] = {}
        self.hosts: dict[str, dict[str, Any]] = {}
        self.host_problems: dict[str, str] = {}
        self.problems: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"lineage": self.lineage, "generation": self.generation, "commit": self.commit}

    def unreadable(self) -> dict[str, str]:
        """Every document that could not be read, by path, with why."""
        found = {remote_grants.grants_file(h): why for h, why in self.grant_problems.items()}
        found.update({host_file(h): why for h, why in self.host_problems.items()})
        return found


def _meta(state: RemoteState, data: bytes | None, unread: str | None) -> str | None:
    """Why `ledger.json` makes the commit unusable, or None (and the lineage read)."""
    if unread is not None:
        return f"{META} cannot be read: {unread}"
    if data is None:
        return (
            f"the ledger commit holds no {META}: it was not written by agent-hooks format {FORMAT}"
        )
    meta, problem = _object(data)
    if meta is None:
        return f"{META} is damaged ({problem})"
    found = meta.get("format")
    if found != FORMAT:
        return (
            f"{META} is of format {str(found)[:20]}, which this agent-hooks (format {FORMAT}) "
            "does not know"
        )
    lineage, generation = meta.get("lineage"), meta.get("generation")
    if (
        not isinstance(lineage, str)
        or not 0 < len(lineage) <= 64
        or isinstance(generation, bool)
        or not isinstance(generation, int)
        or not 0 <= generation < 1 << 62
    ):
        return f"{META} is damaged (no lineage or generation)"
    state.lineage, state.generation = lineage, generation
    return None


def parse(snapshot: remote_git.Snapshot) -> RemoteState:
    """The documents of a fetched ledger commit; what cannot be read is reported,
    never raised, and never taken as empty."""
    state = RemoteState(snapshot.commit)
    if snapshot.broken is not None:
        state.broken = snapshot.broken
        return state
    if snapshot.commit is None:
        return state
    state.entries = dict(snapshot.entries)
    state.trees = dict(snapshot.trees)
    state.files = dict(snapshot.files)
    state.problems = list(snapshot.problems)
    broken = _meta(state, snapshot.files.get(META), snapshot.unread.get(META))
    if broken is not None:
        state.broken = broken
        return state
    for path in snapshot.entries:
        folder, _, name = path.partition("/")
        if folder not in (HOSTS_DIR, remote_grants.GRANTS_DIR) or not name.endswith(".json"):
            continue
        host = check_host(name[: -len(".json")])
        if host is None:
            state.problems.append(f"ignored a file with a bad host name: {path[:80]!r}")
            continue
        unread = snapshot.unread.get(path)
        data = snapshot.files.get(path)
        if folder == remote_grants.GRANTS_DIR:
            if unread is not None or data is None:
                state.grant_problems[host] = unread or f"{path} was not read"
                continue
            try:
                state.grants[host] = remote_grants.parse(host, data)
            except ValueError as exc:
                state.grant_problems[host] = f"{path} cannot be read: {exc}"
            continue
        if unread is not None or data is None:
            state.host_problems[host] = unread or f"{path} was not read"
            continue
        doc, problem = _object(data)
        if doc is None or doc.get("format") != FORMAT or number(doc.get("heartbeat")) is None:
            state.host_problems[host] = problem or (
                f"format {str(doc.get('format'))[:20]}" if doc else "damaged"
            )
            if doc is not None and doc.get("format") == FORMAT:
                state.host_problems[host] = "no heartbeat"
            continue
        state.hosts[host] = doc
    return state


def publish(
    git: remote_git.Git,
    remote: str,
    state: RemoteState,
    changes: Mapping[str, bytes | None],
    host: str,
    now: float,
) -> RemoteState:
    """Push a new ledger commit: every entry of `state` carried over, `changes`
    applied (None removes a file), and the next generation, leased on
    `state.commit`. Returns the state pushed; raises `TooLarge` (nothing
    pushed), `remote_git.LostRace` / `remote_git.Unreachable` (nothing changed).
    Never called on a broken state."""
    if state.broken is not None:
        raise RemoteUnavailable(state.broken)
    meta = {
        "format": FORMAT,
        "lineage": state.lineage or posix.urandom(8).hex(),
        "generation": state.generation + 1,
        "updated_at": int(now),
        "updated_by": host,
    }
    merged: dict[str, bytes | None] = {**changes, META: jsonio.encode(meta)}
    tree: dict[str, str | tuple[str, str]] = dict(state.entries)
    files = dict(state.files)
    for path, data in merged.items():
        if data is None:
            tree.pop(path, None)
            files.pop(path, None)
            continue
        if len(data) > remote_git.MAX_BLOB:
            raise TooLarge(
                f"{path} would be {len(data)} bytes, over the {remote_git.MAX_BLOB}-byte limit "
                "every machine reads"
            )
        files[path] = data
    if len(tree.keys() | files.keys()) > remote_git.MAX_FILES:
        raise TooLarge(
            f"the ledger would hold more than {remote_git.MAX_FILES} files, the limit every "
            "machine reads"
        )
    for path, data in merged.items():
        if data is not None:
            tree[path] = git.blob(data)
    base = remote_git.Snapshot(state.commit)
    base.entries, base.trees = state.entries, state.trees
    commit = git.commit(tree, now, f"agent-hooks ledger {meta['generation']} by {host}", base)
    git.push(remote, commit, state.commit)
    pushed = remote_git.Snapshot(commit)
    pushed.entries = {
        p: entry if isinstance(entry, tuple) else ("100644", entry) for p, entry in tree.items()
    }
    pushed.files = {p: files[p] for p in pushed.entries if p in files}
    pushed.unread = {
        p: why for p, why in state.unreadable().items() if p in pushed.entries and p not in files
    }
    return parse(pushed)


def backoff(attempt: int) -> None:
    """Wait a random while after the `attempt`-th lost race (up to 0.2, 0.4, 0.8,
    1.6 s): racers that retried at once would meet again, and a burst of writes
    from other machines is over sooner than that."""
    import time

    time.sleep(int.from_bytes(posix.urandom(2), "big") / 65535 * BACKOFF * 2**attempt)


def busy(remote: str, attempts: int, what: str) -> RemoteUnavailable:
    return RemoteUnavailable(
        f"the shared ledger on remote {remote!r} kept changing: {attempts} attempts in a row "
        f"lost to other machines' writes; nothing was {what}: run the command again"
    )


def unavailable(remote: str, reason: str, what: str, hint: str = LOCAL_HINT) -> RemoteUnavailable:
    if "refused the ledger ref" in reason:  # remote_git.Refused: it answered, and said no
        return RemoteUnavailable(
            f"the shared ledger cannot be written: {reason}; nothing was {what}: the remote must "
            f"accept pushes to refs/agent-hooks/* (ask whoever runs it), {hint}"
        )
    return RemoteUnavailable(
        f"the shared ledger on remote {remote!r} did not answer ({reason}); nothing was {what}: "
        f"check the network and the credentials git uses, then run the command again, {hint}"
    )


def blocked(remote: str, reason: str, what: str) -> RemoteUnavailable:
    """The refusal when the remote's ledger cannot be read: never written over."""
    return RemoteUnavailable(
        f"the shared ledger on remote {remote!r} cannot be read ({reason}); nothing was {what}, "
        f"and nothing is written over it: {REPAIR} shows what it would replace"
    )


# --- silence: a machine heard from ----------------------------------------------------------


def heartbeat_of(doc: Mapping[str, Any], seen_at: float | None, now: float) -> float:
    """A host's last heartbeat on this machine's clock: its own time, but never
    later than when this machine first saw that heartbeat (`seen_at`; now when
    unknown). A host whose clock runs ahead therefore falls silent on time."""
    return min(number(doc.get("heartbeat")) or 0.0, now if seen_at is None else seen_at)


def heard_from(doc: Mapping[str, Any], now: float, seen_at: float | None = None) -> bool:
    """Was the host of `doc` heard from within its lease minutes?"""
    heartbeat = heartbeat_of(doc, seen_at, now)
    minutes = doc.get("lease_minutes")
    minutes = minutes if isinstance(minutes, int) and minutes > 0 else DEFAULT_LEASE_MINUTES
    return heartbeat + minutes * 60 > now


def first_seen_of(ledger_dir: str) -> dict[str, float]:
    """When this machine first saw each host's current heartbeat, as the last sync
    recorded it in its report (`remote.json`): for judging a host silent outside a
    sync."""
    try:
        loaded = storage.load_json_object(f"{ledger_dir}/{remote_view.REPORT}")
    except OSError:
        return {}
    hosts = (loaded.doc or {}).get("hosts")
    found: dict[str, float] = {}
    for name, info in (hosts if isinstance(hosts, dict) else {}).items():
        seen = info.get("seen_at") if isinstance(info, dict) else None
        if isinstance(name, str) and isinstance(seen, int | float) and not isinstance(seen, bool):
            found[name] = float(seen)
    return found


def check_instance(
    state: RemoteState, host: str, instance: str, now: float, what: str = "changed"
) -> None:
    """Refuse (RemoteUnavailable) when another ledger still heard from writes
    under this host name (two clones, one `AGENT_HOOKS_HOST`)."""
    current = state.hosts.get(host)
    if (
        current is not None
        and current.get("instance") not in (None, instance)
        and heard_from(current, now)
    ):
        raise RemoteUnavailable(
            f"host name {host!r} is in use by another ledger (another clone or machine, "
            f"heard from {max(0, int(now - (number(current.get('heartbeat')) or 0)))} s ago); "
            f"give each one its own AGENT_HOOKS_HOST; nothing was {what}"
        )


# --- the local side: what this machine holds, and the others as taken --------------------


def load_cache(ledger_dir: str) -> dict[str, dict[str, Any]]:
    """The newest version of each other machine's document taken here (raw)."""
    try:
        loaded = storage.load_json_object(f"{ledger_dir}/{CACHE}")
    except OSError:
        return {}
    hosts = (loaded.doc or {}).get("hosts")
    if not isinstance(hosts, dict):
        return {}
    return {h: d for h, d in hosts.items() if check_host(h) and isinstance(d, dict)}


def write_cache(ledger_dir: str, cache: Mapping[str, Mapping[str, Any]]) -> None:
    """Atomically, not durably: after a machine's crash an older file (or none)
    only means a version taken again from the remote."""
    storage.write_json_atomic(
        f"{ledger_dir}/{CACHE}", {"format": FORMAT, "hosts": dict(cache)}, durable=False
    )


class Merged:
    """This machine's view of the shared reservations after one fetch (`merge`):
    its own grants that stand (`own`) and those that end now (`dropped`: entry,
    why), the other machines' grants that stand (`others`) and those it judges
    not to count (`expired`, `silent`: for tombstones), this machine's tombstones
    still needed, the double claims found, the documents taken (`cache`), the
    documents that could not be read (`unreadable`), and notes."""

    __slots__ = (
        "cache",
        "claims",
        "dropped",
        "expired",
        "notes",
        "others",
        "own",
        "silent",
        "tombstones",
        "unreadable",
    )

    def __init__(self) -> None:
        self.own: list[dict[str, Any]] = []
        self.dropped: list[tuple[dict[str, Any], str]] = []
        self.others: list[dict[str, Any]] = []
        self.expired: list[dict[str, Any]] = []
        self.silent: list[dict[str, Any]] = []
        self.tombstones: list[dict[str, Any]] = []
        self.claims: list[dict[str, Any]] = []
        self.cache: dict[str, dict[str, Any]] = {}
        self.unreadable: dict[str, str] = {}
        self.notes: list[str] = []


def own_entries(doc: Mapping[str, Any], host: str, notes: list[str]) -> list[dict[str, Any]]:
    """This machine's grants in a local truth document, checked, marked with `host`."""
    found = []
    entries = doc.get("reservations")
    for raw in entries if isinstance(entries, list) else []:
        if not is_own(raw, host):
            continue
        try:
            res = reservation.checked(raw)
        except ValueError as exc:
            notes.append(f"a reservation of this machine is ignored: {exc}")
            continue
        res["machine"] = host
        found.append(res)
    return found


def _described(res: Mapping[str, Any]) -> str:
    return (
        f"{reservation.holder_label(dict(res))}'s {reservation.one_line(res.get('pattern'), 200)} "
        f"({res.get('id')})"
    )


def merge(
    state: RemoteState,
    doc: Mapping[str, Any],
    cache: Mapping[str, Mapping[str, Any]],
    host: str,
    now: float,
    counts: Callable[[str], bool] | None = None,
    *,
    contest_own: bool = True,
) -> Merged:
    """This machine's view (see `Merged`) from the remote `state`, its local truth
    `doc`, and the documents taken before (`cache`). `counts(machine)`: is that
    machine heard from (for its grants whose holder only it can judge; None:
    all are). Without `contest_own`, this machine's entries are requests, not
    grants (switching on): they take no part in the double-claim rule. Pure but
    for `reservation.checked`."""
    merged = Merged()
    notes = merged.notes
    mine = own_entries(doc, host, notes)
    taken: dict[str, remote_grants.Grants] = {}
    for name in sorted((state.grants.keys() | state.grant_problems.keys() | cache.keys()) - {host}):
        remote, kept = state.grants.get(name), cache.get(name)
        if remote is not None and remote_grants.newer(remote, kept):
            taken[name] = remote
            notes.extend(remote.notes)
            continue
        if remote is not None and kept is not None:
            notes.append(
                f"host {name}'s reservations on the remote are an older version (seq "
                f"{remote.seq}) than one taken before (seq {kept.get('seq')}): the remote "
                f"was rewound; the newer stands until {name} writes it again"
            )
        elif name in state.grant_problems:
            merged.unreadable[name] = state.grant_problems[name]
        if kept is None:
            continue
        try:
            copy = remote_grants.parse(name, jsonio.encode(kept))
        except ValueError:
            continue
        live = [r for r in copy.reservations if reservation.is_live(r, now)]
        stones = remote_grants.kept_tombstones(copy.tombstones, now)
        if not live and not stones and copy.written_at + FORGET_AFTER < now:
            continue  # nothing of it counts, and it is a week old: forgotten
        missing = remote is None and name not in state.grant_problems
        if live and missing and state.commit is not None:
            notes.append(
                f"host {name}'s reservations are missing from the remote; the copy taken "
                f"before stands until {name} writes them again"
            )
        taken[name] = copy
    merged.cache = {name: grants.raw() for name, grants in taken.items()}
    merged.tombstones = remote_grants.kept_tombstones(doc.get("tombstones") or [], now)
    ended: dict[tuple[str, str], dict[str, Any]] = {}
    for grants in taken.values():
        for stone in grants.tombstones:
            ended.setdefault(remote_grants.tombstone_key(stone), {**stone, "by": grants.host})
    for stone in merged.tombstones:
        ended.setdefault(remote_grants.tombstone_key(stone), {**stone, "by": host})
    standing: list[dict[str, Any]] = []
    for res in mine:
        if not reservation.is_live(res, now):
            continue
        ending = ended.get((host, res["id"]))
        if ending is not None:
            why = reservation.one_line(ending.get("why"), 200) or "ended"
            merged.dropped.append((res, f"{why} (machine {ending.get('by')})"))
            continue
        standing.append(res)
    others: list[dict[str, Any]] = []
    for grants in taken.values():
        for res in grants.reservations:
            if remote_grants.tombstone_key(res) in ended:
                continue
            if not reservation.is_live(res, now):
                merged.expired.append(res)
            elif _holder_judged(res) and counts is not None and not counts(grants.host):
                merged.silent.append(res)
                others.append(res)
            else:
                others.append(res)
    pairs = remote_grants.double_claims([*standing, *others] if contest_own else others, now, host)
    lost = remote_grants.losers(pairs)
    for winner, loser in pairs:
        merged.claims.append(_claim(winner, loser, now, host))
    for res in standing:
        beaten = lost.get(id(res))
        if beaten is None:
            merged.own.append(res)
        else:
            merged.dropped.append(
                (
                    res,
                    f"lost a double claim to {_described(beaten)}, granted earlier "
                    "(the earlier grant wins; each machine had granted its own)",
                )
            )
    merged.others = [r for r in others if id(r) not in lost]
    merged.silent = [r for r in merged.silent if id(r) not in lost]
    return merged


def _holder_judged(res: Mapping[str, Any]) -> bool:
    """Does a reservation count only while its holder does (not `--keep`, made by
    a process)? Then only its machine judges it, and elsewhere it counts while
    that machine is heard from."""
    holder = res.get("holder")
    return not res.get("keep") and isinstance(holder, dict) and holder.get("pid") is not None


def _claim(
    winner: Mapping[str, Any], loser: Mapping[str, Any], now: float, host: str
) -> dict[str, Any]:
    def side(res: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "machine": res.get("machine") or host,
            "id": res.get("id"),
            "agent": res.get("agent"),
            "pattern": res.get("pattern"),
            "created_at": res.get("created_at"),
            "order": list(remote_grants.order_key(res, host)),
        }

    return {
        "kind": "reservation",
        "id": f"{winner.get('id')}>{loser.get('id')}",
        "winner": side(winner),
        "loser": side(loser),
        "found_at": int(now),
    }


def dropped_record(res: Mapping[str, Any], why: str, now: float) -> dict[str, Any]:
    return {
        "id": res.get("id"),
        "pattern": res.get("pattern"),
        "agent": res.get("agent"),
        "conversation_id": res.get("conversation_id"),
        "machine": res.get("machine"),
        "why": why,
        "at": int(now),
    }


def tell_dropped(
    state_dir: str | None, dropped: Iterable[tuple[Mapping[str, Any], str]], now: float
) -> None:
    """Tell each holder here whose grant ended, at its next hook that carries context."""
    if state_dir is None:
        return
    from agent_hooks.agents import state_file

    for res, why in dropped:
        text = (
            f"agent-hooks: your reservation of {reservation.one_line(res.get('pattern'), 200)} "
            f"({res.get('id')}) in the ledger shared with other machines was dropped: "
            f"{reservation.one_line(why, 400)}. It no longer holds other agents off: check "
            "`agent-hooks reservations`, and reserve again or coordinate before you change "
            "those files."
        )
        try:
            state_file.tell(state_dir, res.get("agent"), text, now)
        except OSError:
            continue


class OwnDocument:
    """This machine's document as it should stand on the remote: its bytes, its
    `seq`, its digest, and whether the remote's copy needs it (`push`)."""

    __slots__ = ("data", "digest", "push", "seq")

    def __init__(self, data: bytes, seq: int, digest: str, push: bool) -> None:
        self.data = data
        self.seq = seq
        self.digest = digest
        self.push = push


def own_document(
    state: RemoteState,
    record: Mapping[str, Any],
    host: str,
    instance: str,
    own: Iterable[Mapping[str, Any]],
    tombstones: Iterable[Mapping[str, Any]],
    now: float,
) -> OwnDocument:
    """This machine's document from its grants and tombstones: the seq recorded
    when what it says is unchanged (`record["own"]`), else the next; past any
    version of this ledger the remote shows that the local truth does not know
    (a write whose local half was lost). `push` when the remote's copy is
    missing, unreadable, another ledger's, older, or says something else."""
    live = []
    for raw in own:
        try:
            res = reservation.checked(raw)  # one form of each field, whoever built it
        except ValueError:
            continue
        if reservation.is_live(res, now):
            live.append(res)
    body = remote_grants.document(host, instance, 0, live, tombstones, now)
    digest = remote_grants.digest(body)
    recorded = record.get("own") if isinstance(record.get("own"), dict) else {}
    assert isinstance(recorded, dict)
    seq = recorded.get("seq") if isinstance(recorded.get("seq"), int) else 0
    assert isinstance(seq, int)
    if recorded.get("digest") != digest or recorded.get("instance") != instance:
        seq += 1
    there = state.grants.get(host)
    same = there is not None and there.instance == instance
    stale = there is not None and same and there.seq >= seq
    if (
        stale
        and there is not None
        and (there.seq > seq or remote_grants.digest(there.raw()) != digest)
    ):
        seq = there.seq + 1
    body["seq"] = seq
    push = (
        there is None or not same or there.seq != seq or remote_grants.digest(there.raw()) != digest
    )
    return OwnDocument(jsonio.encode(body), seq, digest, push)


def record_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    found = doc.get(LOCAL_RECORD)
    return dict(found) if isinstance(found, dict) else {}


def remote_of(doc: Mapping[str, Any] | None) -> str | None:
    """The remote a local truth document is synced with (its `remote` setting)."""
    settings = doc.get("settings") if doc else None
    name = settings.get(SETTING) if isinstance(settings, dict) else None
    return name if isinstance(name, str) and name else None


def settle(
    doc: dict[str, Any],
    merged: Merged,
    state: RemoteState,
    remote: str,
    host: str,
    instance: str,
    own: OwnDocument,
    now: float,
    *,
    reservations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The local truth after a fetch: this machine's grants that stand (or
    `reservations`: the whole list a change planned), the other machines' that
    stand, this machine's `--local` ones, its tombstones, what was dropped, and
    the record of the remote version and of this machine's document."""
    if reservations is None:
        entries = doc.get("reservations")
        local = [e for e in entries if is_local(e)] if isinstance(entries, list) else []
        reservations = [*merged.own, *merged.others, *local]
    doc["reservations"] = [{**e, "machine": host} if is_own(e, host) else e for e in reservations]
    doc["tombstones"] = merged.tombstones
    if merged.dropped:
        old = doc.get("dropped")
        recorded = [dropped_record(res, why, now) for res, why in merged.dropped]
        doc["dropped"] = [*(old if isinstance(old, list) else []), *recorded][-MAX_DROPPED:]
    doc[LOCAL_RECORD] = {
        "remote": remote,
        "format": FORMAT,
        "host": host,
        "own": {"seq": own.seq, "digest": own.digest, "instance": instance},
        **state.identity(),
        "at": int(now),
    }
    doc["updated_at"] = int(now)
    return doc


def write_settled(ledger_dir: str, doc: dict[str, Any], merged: Merged) -> None:
    """Write the local truth (and its index) and the documents taken. The caller
    holds the ledger's reservation lock."""
    index_build.write(ledger_dir, doc)
    write_cache(ledger_dir, merged.cache)
    try:
        posix.unlink(f"{ledger_dir}/{PENDING}")
    except FileNotFoundError:
        pass


def seeded_cache(ledger_dir: str, doc: Mapping[str, Any], host: str) -> dict[str, dict[str, Any]]:
    """The documents taken before; for a local truth last written by format 1,
    the other machines' reservations it holds, each machine's as a version older
    than any it will write (so they stand until that machine writes format 2, or
    they end)."""
    cache = load_cache(ledger_dir)
    if record_of(doc).get("format") == FORMAT or cache:
        return cache
    entries = doc.get("reservations")
    for raw in entries if isinstance(entries, list) else []:
        machine = raw.get("machine") if isinstance(raw, dict) else None
        if is_local(raw) or check_host(machine) is None or machine == host:
            continue
        assert isinstance(raw, dict) and isinstance(machine, str)
        found = cache.setdefault(
            machine,
            {
                "format": FORMAT,
                "host": machine,
                "instance": "format-1",
                "seq": 0,
                "written_at": 0,
                "reservations": [],
                "tombstones": [],
            },
        )
        found["reservations"].append(remote_grants.cleaned(raw))
    return cache


# --- changes written through --------------------------------------------------------------


class WriteThrough:
    """What `write_through` did: the planned local document, whether `change`
    changed it, whether it pushed and after how many attempts, the remote version
    it ended on, and notes."""

    __slots__ = ("attempts", "changed", "doc", "notes", "pushed", "state")

    def __init__(self) -> None:
        self.doc: dict[str, Any] = {}
        self.changed = False
        self.pushed = False
        self.attempts = 0
        self.state: RemoteState | None = None
        self.notes: list[str] = []


def _tombstones_for(
    planned: list[dict[str, Any]],
    offered: list[dict[str, Any]],
    merged: Merged,
    before: list[dict[str, Any]],
    host: str,
    now: float,
    dropped: object,
) -> list[dict[str, Any]]:
    """The tombstones a change writes: for each other machine's grant it was
    offered and took out while live (`release --force`), and for each it judged
    not to count (expired on this clock, or its machine silent) that a grant it
    made overlaps."""
    kept = {remote_grants.tombstone_key(e) for e in planned if not is_own(e, host)}
    whys = {
        d.get("id"): d.get("why")
        for d in (dropped if isinstance(dropped, list) else [])
        if isinstance(d, dict) and isinstance(d.get("why"), str)
    }
    stones = []
    for res in offered:
        if remote_grants.tombstone_key(res) not in kept and reservation.is_live(res, now):
            why = whys.get(res.get("id")) or "released (release --force)"
            stones.append(remote_grants.tombstone(res, host, f"{why} on machine {host}", now))
    had = {(e.get("id"), e.get("pattern"), e.get("mode")) for e in before}
    new = []
    for entry in planned:
        if (
            is_own(entry, host)
            and (entry.get("id"), entry.get("pattern"), entry.get("mode")) not in had
        ):
            try:
                new.append(reservation.checked(entry))
            except ValueError:
                continue
    silent = {id(r) for r in merged.silent}
    for res in [*merged.expired, *merged.silent] if new else []:
        if not any(_overlaps(grant, res) for grant in new):
            continue
        if id(res) in silent:
            why = (
                f"granted over it on machine {host}: machine {res.get('machine')} was silent "
                "for longer than its lease minutes"
            )
        else:
            why = f"granted over it on machine {host}, whose clock had it expired"
        stones.append(remote_grants.tombstone(res, host, why, now))
    return stones


def _overlaps(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    from agent_hooks.reservations import pattern_overlap

    if reservation.EXCLUSIVE not in (a.get("mode"), b.get("mode")):
        return False
    return pattern_overlap.overlap(a["compiled"], b["compiled"])


def write_through(
    ledger_dir: str,
    git: remote_git.Git,
    remote: str,
    host: str,
    now: float,
    change: Callable[[dict[str, Any]], bool],
    *,
    what: str = "changed",
    hint: str = LOCAL_HINT,
    checks_others: bool = True,
    catch_up: bool = True,
    contest_own: bool = True,
    settings: Mapping[str, Any] | None = None,
    state_dir: str | None = None,
) -> WriteThrough:
    """A reservation change exact across machines. `change(doc) -> changed?` is
    the store's own operation run on a document holding this machine's grants,
    the other machines' that count, and its `--local` ones; it runs once per
    attempt, each time on a fresh copy. This machine's document goes to the
    remote first, then the local truth is written (with `settings` applied). The
    caller holds the ledger's reservation lock.

    `checks_others`: the change must be checked against every other machine's
    grants (a reserve), so a document that cannot be read refuses it.
    `catch_up`: when `change` changes nothing, still bring the remote's copy of
    this machine's document and the local view up to date; without it such a
    change writes nothing anywhere (switching on over a conflict).
    `contest_own`: see `merge`. Raises RemoteUnavailable (nothing changed
    anywhere)."""
    loaded = reservation_index.load_truth(ledger_dir, recover_at=now)
    local_doc = loaded.doc or {"schema": 2, "strict": False, "settings": {}, "reservations": []}
    cache = seeded_cache(ledger_dir, local_doc, host)
    record = record_of(local_doc)
    instance = instance_id(ledger_dir)
    seen = first_seen_of(ledger_dir)
    done = WriteThrough()
    if loaded.problem:
        done.notes.append(
            f"the local ledger was not valid JSON ({loaded.problem}); it was moved to {loaded.moved_to}"
        )
    for attempt in range(1, ATTEMPTS + 1):
        done.attempts = attempt
        try:
            state = parse(git.fetch(remote))
        except remote_git.GitFailure as exc:
            raise unavailable(remote, str(exc), what, hint) from None
        if state.broken is not None:
            raise blocked(remote, state.broken, what)
        check_instance(state, host, instance, now, what)

        def counts(machine: str, state: RemoteState = state) -> bool:
            doc = state.hosts.get(machine)
            return doc is not None and heard_from(doc, now, seen.get(machine))

        merged = merge(state, local_doc, cache, host, now, counts, contest_own=contest_own)
        if checks_others and merged.unreadable:
            name, why = sorted(merged.unreadable.items())[0]
            raise blocked(remote, f"the reservations of host {name}: {why}", what)
        planning = copied(local_doc)
        entries = planning.get("reservations")
        local = [e for e in entries if is_local(e)] if isinstance(entries, list) else []
        silent = {id(r) for r in merged.silent}
        offered = [r for r in merged.others if id(r) not in silent]
        before = [remote_grants.cleaned(e) for e in merged.own]
        planning["reservations"] = [
            *copied(before),
            *[remote_grants.cleaned(e) for e in offered],
            *local,
        ]
        changed = change(planning)
        if not changed and not catch_up:
            return done
        planned = [e for e in planning["reservations"] if isinstance(e, dict)]
        stones = _tombstones_for(
            planned, offered, merged, before, host, now, planning.get("dropped")
        )
        merged.tombstones = remote_grants.kept_tombstones([*merged.tombstones, *stones], now)
        ended = {remote_grants.tombstone_key(t) for t in stones}
        aside = [
            remote_grants.cleaned(r)
            for r in merged.silent
            if remote_grants.tombstone_key(r) not in ended
        ]
        own = [e for e in planned if is_own(e, host)]
        mine = own_document(state, record, host, instance, own, merged.tombstones, now)
        doc = settle(
            planning,
            merged,
            state,
            remote,
            host,
            instance,
            mine,
            now,
            reservations=[*planned, *aside],
        )
        if settings:
            old = doc.get("settings")
            doc["settings"] = {**(old if isinstance(old, dict) else {}), **settings}
        done.doc, done.changed, done.state = doc, changed, state
        done.notes = list(dict.fromkeys([*done.notes, *state.problems, *merged.notes]))
        if mine.push:
            try:
                done.state = publish(
                    git, remote, state, {remote_grants.grants_file(host): mine.data}, host, now
                )
            except TooLarge as exc:
                raise RemoteUnavailable(
                    f"{exc}; nothing was {what}: reserve fewer or broader patterns (a directory "
                    "pattern such as src/** covers every file under it), or release some"
                ) from None
            except remote_git.LostRace:
                if attempt < ATTEMPTS:
                    backoff(attempt)
                continue
            except remote_git.GitFailure as exc:
                raise unavailable(remote, str(exc), what, hint) from None
            done.pushed = True
            doc[LOCAL_RECORD].update(done.state.identity())
        write_settled(ledger_dir, doc, merged)
        tell_dropped(state_dir, merged.dropped, now)
        return done
    raise busy(remote, ATTEMPTS, what)


def copied(value: Any) -> Any:
    """A deep copy of a JSON document (`copy` would try to import Jython's modules)."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [copied(v) for v in value]
    return value


# --- switching a repository's ledger on and off ----------------------------------------


class Switched:
    """What switching on did: the reservations of this machine pushed, the
    conflicts that refused it (then nothing changed), and notes."""

    __slots__ = ("conflicts", "notes", "pushed", "state")

    def __init__(self) -> None:
        self.pushed: list[dict[str, Any]] = []
        self.conflicts: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.notes: list[str] = []
        self.state: RemoteState | None = None


def _locked_ledger(ledger_dir: str) -> Any:
    lock = storage.Lock(reservation_index.lock_path(ledger_dir))
    if not lock.acquire(storage.LOCK_TIMEOUT):
        raise reservation.ReservationError(
            f"the reservation lock of {ledger_dir} stayed busy for {storage.LOCK_TIMEOUT:g} s; "
            "nothing was changed, try again"
        )
    return lock


def switch_on(ledger_dir: str, git: remote_git.Git, remote: str, host: str, now: float) -> Switched:
    """Share this repository's ledger through `remote`: push the reservations made
    on this machine (all or none: one that conflicts with another machine's
    refuses the switch), then set the repository's `remote` setting. Raises
    RemoteUnavailable when the remote does not answer or cannot be read."""
    from agent_hooks.ledger import ledger_location

    ledger_location.ensure(ledger_dir)
    switched = Switched()

    def change(doc: dict[str, Any]) -> bool:
        notes: list[str] = []
        mine = own_entries(doc, host, notes)
        theirs = []
        for raw in doc["reservations"]:
            if is_own(raw, host) or is_local(raw):
                continue
            try:
                theirs.append(reservation.checked(raw))
            except ValueError:
                continue
        switched.conflicts = [
            ({k: v for k, v in res.items() if k != "machine"}, held)  # "here", said as such
            for res in mine
            for held in reservation.conflicts_with(res, theirs, now, host)
        ]
        switched.pushed = (
            [] if switched.conflicts else [r for r in mine if reservation.is_live(r, now)]
        )
        return not switched.conflicts

    lock = _locked_ledger(ledger_dir)
    try:
        done = write_through(
            ledger_dir,
            git,
            remote,
            host,
            now,
            change,
            what="switched on",
            hint="or leave it off: this machine keeps working alone",
            catch_up=False,
            contest_own=False,
            settings={SETTING: remote},
        )
    finally:
        lock.release()
    switched.state = done.state
    switched.notes = done.notes
    return switched


def switch_off(ledger_dir: str, host: str, now: float) -> tuple[int, int]:
    """Stop sharing: the repository's `remote` setting goes, other machines'
    reservations stop being enforced here (this machine's stay), and the view of
    the other machines is removed. Returns (kept, dropped)."""
    lock = _locked_ledger(ledger_dir)
    try:
        doc = reservation_index.load_truth(ledger_dir, recover_at=now).doc or {}
        entries = doc.get("reservations")
        entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        kept = [e for e in entries if is_local(e) or e.get("machine") in (None, host)]
        for entry in kept:
            entry.pop("local", None)
        settings = doc.get("settings")
        settings = dict(settings) if isinstance(settings, dict) else {}
        settings.pop(SETTING, None)
        doc.update(settings=settings, reservations=kept, updated_at=int(now))
        doc.pop(LOCAL_RECORD, None)
        doc.pop("tombstones", None)
        index_build.write(ledger_dir, doc)
        for name in (remote_view.VIEW, remote_view.STAMP, PENDING, CACHE):
            try:
                posix.unlink(f"{ledger_dir}/{name}")
            except FileNotFoundError:
                pass
    finally:
        lock.release()
    return len(kept), len(entries) - len(kept)


# --- repair: a person's way out of a ledger that cannot be read -------------------------


class Repair:
    """What `agent-hooks ledger repair` would do to the remote version `commit`:
    start a new ledger in place of one that cannot be read at all (`restart`,
    why), or remove the documents that cannot be read (`remove`: path -> why);
    nothing when both are empty. Each machine writes its own documents again at
    its next sync, from its local truth."""

    __slots__ = ("commit", "remove", "restart")

    def __init__(self, commit: str | None) -> None:
        self.commit = commit
        self.restart: str | None = None
        self.remove: dict[str, str] = {}

    def needed(self) -> bool:
        return self.restart is not None or bool(self.remove)


def repair_plan(state: RemoteState) -> Repair:
    plan = Repair(state.commit)
    if state.broken is not None:
        plan.restart = state.broken
    else:
        plan.remove = state.unreadable()
    return plan


def repair(git: remote_git.Git, remote: str, plan: Repair, host: str, now: float) -> RemoteState:
    """Carry out `plan`, only if the remote is still at the version it was made
    for (compare-and-swap on `plan.commit`): raises `remote_git.LostRace` when it
    moved (look again), `remote_git.GitFailure` when it cannot be reached."""
    if plan.restart is not None:
        meta = {
            "format": FORMAT,
            "lineage": posix.urandom(8).hex(),
            "generation": 1,
            "updated_at": int(now),
            "updated_by": host,
        }
        data = jsonio.encode(meta)
        blob = git.blob(data)
        commit = git.commit({META: blob}, now, f"agent-hooks ledger repaired by {host}")
        git.push(remote, commit, plan.commit)
        pushed = remote_git.Snapshot(commit)
        pushed.entries = {META: ("100644", blob)}
        pushed.files = {META: data}
        return parse(pushed)
    state = parse(git.fetch(remote))
    if state.commit != plan.commit:
        raise remote_git.LostRace("the shared ledger changed since it was looked at")
    return publish(git, remote, state, dict.fromkeys(plan.remove), host, now)
