"""Reservations exact across machines: the remote ledger's documents, changes
written through to the remote before the local ledger, and the local ledger
following the remote (docs/adr/0016-ledger-beyond-one-machine.md).

The remote ledger is the tree of the parentless commit at
`refs/agent-hooks/ledger` on the shared remote:

* `ledger.json`: `{"schema": 1, "lineage": <hex>, "generation": n,
  "updated_at": t, "updated_by": <host>}`; every push makes generation n + 1;
  a new lineage starts when the ref was absent or its `ledger.json` unreadable.
* `reservations.json`: `{"schema": 1, "reservations": [...], "dropped": [...],
  "rejected": [...]}`, each reservation as in the local ledger
  (`reservation.py`) without its compiled form, plus `machine`, the host it was
  made on.
* `hosts/<host>.json`: one per machine, written only by that machine
  (`ledger_sync`).
* Any other file is carried over unchanged (a later version may add some).

Invariants:

* `transact` is check-then-write linearized at the remote: it fetches, plans
  against what it fetched, and pushes with a lease on the fetched id; a lost race
  plans again on a fresh fetch after a random back-off, at most `ATTEMPTS` times
  in all. It raises
  `RemoteUnavailable` (one line: what failed, how to retry, what `--local` does)
  when the remote cannot be reached, refuses, or keeps moving: then nothing was
  changed anywhere.
* `write_through` (the caller holds the ledger's reservation lock) writes the
  local ledger only after the remote accepted the change.
* Entries marked `local` (reserved with `--local`) belong to this machine alone:
  never pushed, always kept locally when the remote part is replaced.
* The local ledger records which remote version it reflects (`remote_ledger`:
  lineage, generation, commit); a version older in the same lineage never
  replaces it, so a slow sync cannot undo a reservation written meanwhile.
* A remote `reservations.json` that cannot be read is never taken as empty: its
  last copy this machine holds stands in for it (and the next push repairs it).
"""

from __future__ import annotations

import posix
from collections.abc import Callable, Mapping
from typing import Any

from agent_hooks import jsonio
from agent_hooks.ledger import remote_git
from agent_hooks.reservations import index_build, reservation, reservation_index

META = "ledger.json"
RESERVATIONS = "reservations.json"
HOSTS_DIR = "hosts"
SCHEMA = 1
ATTEMPTS = 5
BACKOFF = 0.1  # seconds, doubled after each lost race, randomized
MAX_DROPPED = 50
MAX_REJECTED = 50
LOCAL_RECORD = "remote_ledger"  # the local truth's note of the remote version it reflects
PENDING = "remote.pending.json"  # releases and renewals the remote has not taken yet
MAX_PENDING = 200
SETTING = "remote"  # the repository setting naming the remote (None: off)
MAX_HOST = 64
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
LOCAL_HINT = "or add --local to reserve on this machine only"


class HostNameError(ValueError):
    """`AGENT_HOOKS_HOST` cannot name a host; the message says why, in one line."""


class RemoteUnavailable(Exception):
    """A reservation change refused because the remote ledger did not take it."""


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
    """Was this reservation made with `--local` (this machine only)?"""
    return isinstance(entry, dict) and entry.get("local") is True


def _object(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(doc, dict):
        return None, f"a JSON {type(doc).__name__}, not an object"
    return doc, None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if abs(value) < 1e15 else None


class RemoteState:
    """One version of the remote ledger, parsed. `reservations` is None when
    `reservations.json` exists but cannot be read (`problems` says why); an
    absent file is an empty list. `hosts` holds every readable host file by host
    name; `host_problems` the others."""

    __slots__ = (
        "blobs",
        "commit",
        "doc",
        "files",
        "generation",
        "host_problems",
        "hosts",
        "lineage",
        "meta_ok",
        "problems",
        "reservations",
    )

    def __init__(self, commit: str | None) -> None:
        self.commit = commit
        self.lineage = ""
        self.generation = 0
        self.meta_ok = False
        self.reservations: list[dict[str, Any]] | None = []
        self.doc: dict[str, Any] = {"schema": SCHEMA, "reservations": []}
        self.hosts: dict[str, dict[str, Any]] = {}
        self.host_problems: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.blobs: dict[str, str] = {}
        self.problems: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"lineage": self.lineage, "generation": self.generation, "commit": self.commit}

    def newer_than(self, recorded: object) -> bool:
        """Is this version newer than the one a local ledger recorded? A version of
        another lineage is (the remote was reset or rewritten); one of the same
        lineage is when its generation is greater."""
        if not isinstance(recorded, dict):
            return True
        if recorded.get("lineage") != self.lineage:
            return True
        generation = recorded.get("generation")
        return not isinstance(generation, int) or self.generation > generation


def parse(snapshot: remote_git.Snapshot) -> RemoteState:
    """The documents of a fetched ledger commit; what cannot be read is reported,
    never raised."""
    state = RemoteState(snapshot.commit)
    state.files = dict(snapshot.files)
    state.blobs = dict(snapshot.blobs)
    state.problems = list(snapshot.problems)
    if snapshot.commit is not None and not snapshot.files and snapshot.problems:
        state.reservations = None  # the commit itself could not be read
    meta_data = snapshot.files.get(META)
    if meta_data is not None:
        meta, problem = _object(meta_data)
        lineage = meta.get("lineage") if meta else None
        generation = meta.get("generation") if meta else None
        if (
            isinstance(lineage, str)
            and 0 < len(lineage) <= 64
            and isinstance(generation, int)
            and not isinstance(generation, bool)
            and 0 <= generation < 1 << 62
        ):
            state.lineage, state.generation, state.meta_ok = lineage, generation, True
        else:
            state.problems.append(f"{META} is unreadable ({problem or 'no lineage or generation'})")
    if not state.meta_ok and snapshot.commit is not None:
        state.lineage = f"commit:{snapshot.commit}"
    res_data = snapshot.files.get(RESERVATIONS)
    if res_data is not None:
        doc, problem = _object(res_data)
        entries = doc.get("reservations") if doc else None
        if doc is None or not isinstance(entries, list):
            state.reservations = None
            state.problems.append(
                f"{RESERVATIONS} is unreadable ({problem or 'no list of reservations'})"
            )
        else:
            state.doc = doc
            state.reservations = [e for e in entries if isinstance(e, dict)]
            if len(state.reservations) != len(entries):
                state.problems.append(f"{RESERVATIONS} holds entries that are not objects")
    for path, data in snapshot.files.items():
        folder, _, name = path.partition("/")
        if folder != HOSTS_DIR or not name.endswith(".json"):
            continue
        host = check_host(name[: -len(".json")])
        if host is None:
            state.problems.append(f"ignored a host file with a bad name: {path[:80]!r}")
            continue
        doc, problem = _object(data)
        if doc is None or _number(doc.get("heartbeat")) is None:
            state.host_problems[host] = problem or "no heartbeat"
            continue
        state.hosts[host] = doc
    return state


def _clean(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A reservation as the remote keeps it: no compiled form, no local mark."""
    return {k: v for k, v in entry.items() if k not in ("compiled", "local")}


def remote_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The remote `reservations.json` for a planned document: its entries that are
    not `--local`, and its recent `dropped` and `rejected`."""
    entries = doc.get("reservations")
    dropped = doc.get("dropped")
    rejected = doc.get("rejected")
    return {
        "schema": SCHEMA,
        "reservations": [
            _clean(e)
            for e in (entries if isinstance(entries, list) else [])
            if isinstance(e, dict) and not is_local(e)
        ],
        "dropped": (dropped if isinstance(dropped, list) else [])[-MAX_DROPPED:],
        "rejected": (rejected if isinstance(rejected, list) else [])[-MAX_REJECTED:],
    }


def publish(
    git: remote_git.Git,
    remote: str,
    state: RemoteState,
    changes: Mapping[str, bytes | None],
    host: str,
    now: float,
) -> RemoteState:
    """Push a new ledger commit: `state`'s files with `changes` applied (None
    removes a file) and the next generation, leased on `state.commit`. Returns
    the state pushed; raises `remote_git.LostRace` / `remote_git.Unreachable`
    (then nothing changed)."""
    meta = {
        "schema": SCHEMA,
        "lineage": state.lineage if state.meta_ok else posix.urandom(8).hex(),
        "generation": state.generation + 1,
        "updated_at": int(now),
        "updated_by": host,
    }
    merged: dict[str, bytes | None] = {**state.files, **changes, META: jsonio.encode(meta)}
    files = {path: data for path, data in merged.items() if data is not None}
    blobs = {path: state.blobs[path] for path in files if path in state.blobs}
    for path, data in files.items():
        if path not in blobs or state.files.get(path) != data:
            blobs[path] = git.blob(data)
    commit = git.commit(blobs, now, f"agent-hooks ledger {meta['generation']} by {host}")
    git.push(remote, commit, state.commit)
    pushed = remote_git.Snapshot(commit)
    pushed.files = files
    pushed.blobs = blobs
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
    return RemoteUnavailable(
        f"the shared ledger on remote {remote!r} did not answer ({reason}); nothing was {what}: "
        f"check the network and the credentials git uses, then run the command again, {hint}"
    )


class Transacted:
    """What `transact` did: the remote version it ended on, whether it pushed,
    after how many attempts, and notes (a document it had to stand in for)."""

    __slots__ = ("attempts", "notes", "pushed", "state")

    def __init__(self, state: RemoteState, pushed: bool, attempts: int, notes: list[str]) -> None:
        self.state = state
        self.pushed = pushed
        self.attempts = attempts
        self.notes = notes


def transact(
    git: remote_git.Git,
    remote: str,
    plan: Callable[[dict[str, Any]], dict[str, Any] | None],
    *,
    host: str,
    now: float,
    what: str = "changed",
    hint: str = LOCAL_HINT,
    attempts: int = ATTEMPTS,
    fallback: list[dict[str, Any]] | None = None,
) -> Transacted:
    """Change the remote `reservations.json` by `plan(doc) -> new doc | None`
    (None: nothing to change), exactly once, or raise RemoteUnavailable.

    `plan` gets a private copy each attempt; `fallback` stands in for entries
    the remote document had when it cannot be read (the local copy of them)."""
    for attempt in range(1, attempts + 1):
        try:
            state = parse(git.fetch(remote))
        except remote_git.GitFailure as exc:
            raise unavailable(remote, str(exc), what, hint) from None
        notes = list(state.problems)
        if state.reservations is None:
            base: dict[str, Any] = {
                "schema": SCHEMA,
                "reservations": [_clean(e) for e in fallback or []],
            }
            notes.append(
                f"the remote {RESERVATIONS} could not be read; this machine's last copy "
                f"({len(base['reservations'])} reservations) stood in for it"
            )
        else:
            base = {**state.doc, "reservations": state.reservations}
        copy = jsonio.loads(jsonio.encode(base))
        assert isinstance(copy, dict)
        planned = plan(copy)
        if planned is None:
            return Transacted(state, False, attempt, notes)
        change = {RESERVATIONS: jsonio.encode(remote_document(planned))}
        try:
            pushed = publish(git, remote, state, change, host, now)
        except remote_git.LostRace:
            if attempt < attempts:
                backoff(attempt)
            continue
        except remote_git.GitFailure as exc:
            raise unavailable(remote, str(exc), what, hint) from None
        return Transacted(pushed, True, attempt, notes)
    raise busy(remote, attempts, what)


# --- the local ledger ---------------------------------------------------------------


def remote_of(doc: Mapping[str, Any] | None) -> str | None:
    """The remote a local truth document is synced with (its `remote` setting)."""
    settings = doc.get("settings") if doc else None
    name = settings.get(SETTING) if isinstance(settings, dict) else None
    return name if isinstance(name, str) and name else None


def _live_checked(
    entries: list[dict[str, Any]], now: float, notes: list[str]
) -> list[dict[str, Any]]:
    kept = []
    for raw in entries:
        try:
            res = reservation.checked(raw)
        except ValueError as exc:
            notes.append(f"a remote reservation entry is ignored: {exc}")
            continue
        if reservation.is_live(res, now) and not is_local(res):
            kept.append(res)
    return kept


def _merged_dropped(mine: object, theirs: object) -> list[Any]:
    found: list[Any] = []
    seen = set()
    for entry in [
        *(mine if isinstance(mine, list) else []),
        *(theirs if isinstance(theirs, list) else []),
    ]:
        key = jsonio.dumps(entry) if isinstance(entry, dict) else None
        if key is not None and key not in seen:
            seen.add(key)
            found.append(entry)
    found.sort(key=lambda e: e.get("at") if isinstance(e.get("at"), int | float) else 0)
    return found[-MAX_DROPPED:]


def write_local(
    ledger_dir: str,
    state: RemoteState,
    remote: str,
    now: float,
    *,
    local_entries: list[dict[str, Any]] | None = None,
    settings: Mapping[str, Any] | None = None,
    host: str | None = None,
) -> list[str]:
    """Make the local truth follow `state` (when it is newer than what the local
    truth reflects), keeping this machine's `--local` entries (`local_entries`
    replaces them when given), the changes still pending for the remote
    (`queue`), and applying `settings` changes; `host` is this machine (recorded
    for the index: `index_build.this_machine`). The caller holds the ledger's
    reservation lock. Returns notes (entries ignored, a corrupt local file set
    aside)."""
    notes: list[str] = []
    loaded = reservation_index.load_truth(ledger_dir, recover_at=now)
    if loaded.problem:
        notes.append(
            f"the local ledger was not valid JSON ({loaded.problem}); it was moved to {loaded.moved_to}"
        )
    doc = loaded.doc or {"schema": 2, "strict": False, "settings": {}, "reservations": []}
    current = doc.get("reservations")
    current = [e for e in current if isinstance(e, dict)] if isinstance(current, list) else []
    newer = state.newer_than(doc.get(LOCAL_RECORD))
    pending = read_pending(ledger_dir)
    if pending and state.reservations is not None:
        left = [op for op in pending if not _op_done(op, state.reservations)]
        if len(left) != len(pending):
            _write_pending(ledger_dir, left)
        pending = left
    if not newer and local_entries is None and not settings and not loaded.problem:
        return notes
    if newer and state.reservations is not None:
        remote_part = _live_checked(state.reservations, now, notes)
        remote_part, _ = apply_pending(remote_part, pending)
        doc["dropped"] = _merged_dropped(doc.get("dropped"), state.doc.get("dropped"))
    else:
        remote_part = [e for e in current if not is_local(e)]
    local_part = local_entries if local_entries is not None else [e for e in current if is_local(e)]
    doc["reservations"] = remote_part + local_part
    previous = doc.get(LOCAL_RECORD)
    if host is None and isinstance(previous, dict) and isinstance(previous.get("host"), str):
        host = previous["host"]
    if newer:
        doc[LOCAL_RECORD] = {"remote": remote, **state.identity(), "at": int(now), "host": host}
    elif isinstance(previous, dict) and previous.get("host") != host and host is not None:
        doc[LOCAL_RECORD] = {**previous, "host": host}
    if settings:
        old = doc.get("settings")
        doc["settings"] = {**(old if isinstance(old, dict) else {}), **settings}
    doc["updated_at"] = int(now)
    index_build.write(ledger_dir, doc)
    return notes


# --- changes made here while the remote could not be waited for ---------------------


def _pending_path(ledger_dir: str) -> str:
    return f"{ledger_dir}/{PENDING}"


def read_pending(ledger_dir: str) -> list[dict[str, Any]]:
    """Releases and renewals made on this machine that the remote has not taken
    yet (`queue`); [] when none (or the file cannot be read)."""
    from agent_hooks import storage

    try:
        loaded = storage.load_json_object(_pending_path(ledger_dir))
    except OSError:
        return []
    ops = (loaded.doc or {}).get("ops")
    return [
        op
        for op in (ops if isinstance(ops, list) else [])
        if isinstance(op, dict)
        and op.get("op") in ("release", "renew")
        and isinstance(op.get("id"), str)
        and (op["op"] == "release" or _number(op.get("expires_at")) is not None)
    ]


def _write_pending(ledger_dir: str, ops: list[dict[str, Any]]) -> None:
    from agent_hooks import storage

    path = _pending_path(ledger_dir)
    if not ops:
        try:
            posix.unlink(path)
        except FileNotFoundError:
            pass
        return
    storage.write_json_atomic(path, {"schema": SCHEMA, "ops": ops[-MAX_PENDING:]}, durable=True)


def queue(ledger_dir: str, ops: list[dict[str, Any]]) -> None:
    """Keep `ops` (`{"op": "release", "id"}` or `{"op": "renew", "id",
    "expires_at"}`) for the next write that reaches the remote: a hook's release
    or renewal never waits for the network. The caller holds the reservation
    lock. Each is applied by every later push (`apply_pending`) and kept until
    the remote shows it done; meanwhile the local truth never takes back what it
    undid."""
    if ops:
        _write_pending(ledger_dir, read_pending(ledger_dir) + ops)


def apply_pending(
    entries: list[dict[str, Any]], ops: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], bool]:
    """`entries` with the pending releases and renewals applied; and whether any
    applied."""
    if not ops:
        return entries, False
    released = {op["id"] for op in ops if op["op"] == "release"}
    renewed: dict[str, float] = {}
    for op in ops:
        if op["op"] == "renew":
            renewed[op["id"]] = max(renewed.get(op["id"], 0.0), float(op["expires_at"]))
    kept, changed = [], False
    for entry in entries:
        rid = entry.get("id")
        if rid in released:
            changed = True
            continue
        until = renewed.get(rid) if isinstance(rid, str) else None
        expires = _number(entry.get("expires_at"))
        if until is not None and expires is not None and expires < until:
            entry = {**entry, "expires_at": int(until)}
            changed = True
        kept.append(entry)
    return kept, changed


def _op_done(op: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
    """Does the remote (`entries`) show `op` done?"""
    found = [e for e in entries if e.get("id") == op["id"]]
    if op["op"] == "release" or not found:
        return not found
    expires = _number(found[0].get("expires_at"))
    return expires is not None and expires >= float(op["expires_at"])


class WriteThrough:
    """What `write_through` did: the planned local document (remote entries and
    this machine's `--local` ones, after `change`), whether `change` changed it,
    the remote transaction, and notes."""

    __slots__ = ("changed", "doc", "notes", "transacted")

    def __init__(
        self, doc: dict[str, Any], changed: bool, transacted: Transacted, notes: list[str]
    ) -> None:
        self.doc = doc
        self.changed = changed
        self.transacted = transacted
        self.notes = notes


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
) -> WriteThrough:
    """A reservation change exact across machines. `change(doc) -> changed?` is
    the store's own operation (tidy, then `reservation.plan_reserve` & co.) run on
    a document holding the remote's reservations and this machine's `--local`
    ones; it runs once per attempt, each time on a fresh copy. Its result goes to
    the remote first (`transact`), then to the local truth. The caller holds the
    ledger's reservation lock. Raises RemoteUnavailable (nothing changed)."""
    loaded = reservation_index.load_truth(ledger_dir)
    local_doc = loaded.doc or {}
    entries = local_doc.get("reservations")
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    local_only = jsonio.encode([e for e in entries if is_local(e)])
    fallback = [e for e in entries if not is_local(e)]
    planned: dict[str, Any] = {}
    pending = read_pending(ledger_dir)

    def plan(remote_doc: dict[str, Any]) -> dict[str, Any] | None:
        doc = {
            k: v for k, v in local_doc.items() if k not in ("reservations", "dropped", "rejected")
        }
        mine = jsonio.loads(local_only)
        assert isinstance(mine, list)
        theirs, caught_up = apply_pending(remote_doc.get("reservations", []), pending)
        doc["reservations"] = [*theirs, *mine]
        doc["dropped"] = (
            remote_doc.get("dropped") if isinstance(remote_doc.get("dropped"), list) else []
        )
        doc["rejected"] = (
            remote_doc.get("rejected") if isinstance(remote_doc.get("rejected"), list) else []
        )
        changed = change(doc)
        planned["doc"], planned["changed"] = doc, changed
        if not changed and not caught_up:
            return None
        for entry in doc["reservations"]:
            if isinstance(entry, dict) and not is_local(entry):
                entry.setdefault("machine", host)
        return doc

    done = transact(git, remote, plan, host=host, now=now, what=what, hint=hint, fallback=fallback)
    doc = planned["doc"]
    local_after = [e for e in doc["reservations"] if is_local(e)]
    notes = done.notes + write_local(
        ledger_dir,
        done.state,
        remote,
        now,
        local_entries=local_after if planned["changed"] else None,
        host=host,
    )
    return WriteThrough(doc, bool(planned["changed"]), done, notes)


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
    from agent_hooks import storage

    lock = storage.Lock(reservation_index.lock_path(ledger_dir))
    if not lock.acquire(storage.LOCK_TIMEOUT):
        raise reservation.ReservationError(
            f"the reservation lock of {ledger_dir} stayed busy for {storage.LOCK_TIMEOUT:g} s; "
            "nothing was changed, try again"
        )
    return lock


def switch_on(ledger_dir: str, git: remote_git.Git, remote: str, host: str, now: float) -> Switched:
    """Share this repository's ledger through `remote`: push the reservations made
    on this machine (all or none: one that conflicts with a reservation already
    on the remote refuses the switch), then set the repository's `remote`
    setting. Raises RemoteUnavailable when the remote does not answer."""
    from agent_hooks.ledger import ledger_location

    ledger_location.ensure(ledger_dir)
    switched = Switched()
    lock = _locked_ledger(ledger_dir)
    try:
        doc = reservation_index.load_truth(ledger_dir).doc or {}
        entries = doc.get("reservations")
        entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        mine = [
            e
            for e in entries
            if not is_local(e) and e.get("machine") in (None, host)  # not another machine's copy
        ]
        notes: list[str] = []
        requested = _live_checked(mine, now, notes)

        def plan(remote_doc: dict[str, Any]) -> dict[str, Any] | None:
            held = _live_checked(remote_doc.get("reservations", []), now, [])
            fresh = jsonio.loads(jsonio.encode(requested))
            assert isinstance(fresh, list)
            result, conflicts = reservation.plan_reserve(held, fresh, now, host)
            switched.conflicts = conflicts
            switched.pushed = fresh if not conflicts else []
            if conflicts or not fresh:
                return None
            for entry in result:
                entry.setdefault("machine", host)
            return {**remote_doc, "reservations": result}

        done = transact(
            git,
            remote,
            plan,
            host=host,
            now=now,
            what="switched on",
            hint="or leave it off: this machine keeps working alone",
        )
        switched.state = done.state
        switched.notes = notes + done.notes
        if switched.conflicts:
            return switched
        local_only = [e for e in entries if is_local(e)]
        switched.notes += write_local(
            ledger_dir,
            done.state,
            remote,
            now,
            local_entries=local_only,
            settings={SETTING: remote},
            host=host,
        )
    finally:
        lock.release()
    return switched


def switch_off(ledger_dir: str, host: str, now: float) -> tuple[int, int]:
    """Stop sharing: the repository's `remote` setting goes, other machines'
    reservations stop being enforced here (this machine's stay), and the view of
    the other machines is removed. Returns (kept, dropped)."""
    from agent_hooks.ledger import remote_view

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
        index_build.write(ledger_dir, doc)
        for name in (remote_view.VIEW, remote_view.STAMP, PENDING):
            try:
                posix.unlink(f"{ledger_dir}/{name}")
            except FileNotFoundError:
                pass
    finally:
        lock.release()
    return len(kept), len(entries) - len(kept)
