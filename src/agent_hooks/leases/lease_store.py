"""Leases on disk, the hot part: reading a path's leases, listing the leased
paths, and claiming them.

Inside a ledger directory: `leases/<escaped path>` holds a path's leases
(`{"path": rel, "leases": [lease, …]}`, one per worktree at most); the
writers' cards beside them are `writer_cards`'; `leases.lock` serializes every
change of either.

Invariants:

* A claim is check-then-write under `leases.lock`: of two writers claiming one
  file at the same instant exactly one gets it; the other is told who holds it.
  A renewal of one's own fresh lease (written within `lease.RESOLUTION`) is not
  written at all.
* Reads take no lock (files are replaced atomically); a lease file that does
  not parse counts as no lease (it is rewritten by the next claim, and the
  problem is reported).
* A claim writes the lease file (a new file and a rename) and, only at a
  writer's first lease, its card: file creation is what a claim costs, so it
  does no more of it than the lease itself needs.
* When the lock cannot be had within `LOCK_TIMEOUT` the claim is not recorded
  and the edit goes on (fail open, logged by the caller).

Hot-path clean: built-in modules and agent_hooks' own; `storage` is loaded only
when a claim is written (a renewal of a fresh lease writes nothing).
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, preload
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any, Protocol

    from agent_hooks.writers import Writer

    class Repo(Protocol):
        """What a claim needs of the repository its paths lie in: the shape of
        `ledger.repo.Repo`, declared here because the ledger's room lies above the
        leases' (tests/unit/test_architecture.py): the ledger directory, the work
        tree (`root`) and which of the repository's it is (`worktree`), its
        checked-out branch, the lease minutes and the `worktree_leases` setting."""

        @property
        def ledger(self) -> str: ...
        @property
        def root(self) -> str: ...
        @property
        def worktree(self) -> str: ...
        @property
        def branch(self) -> str | None: ...
        @property
        def minutes(self) -> int: ...
        @property
        def deny_elsewhere(self) -> bool: ...


LEASES = "leases"
LOCK = "leases.lock"
LOCK_TIMEOUT = 2.0
# What writing a lease loads (lazily: a writer that already holds the file writes none).
CLAIM_MODULES = ("agent_hooks.storage", "agent_hooks.leases.writer_cards")


def lease_path(ledger: str, rel: str) -> str:
    return fs.join(ledger, LEASES, lease.file_name(rel))


def read(ledger: str, rel: str) -> list[dict[str, Any]]:
    """The leases on `rel` (possibly expired or of dead holders; `lease.judge` sorts)."""
    return read_checked(ledger, rel)[0]


def read_checked(ledger: str, rel: str) -> tuple[list[dict[str, Any]], str | None]:
    """The leases on `rel`, and why the file holding them could not be used (a
    file that exists but does not parse counts as no lease, and says so)."""
    path = lease_path(ledger, rel)
    try:
        data = fs.read_file(path)  # one failed open when there is no lease
        doc = jsonio.loads(data) if data is not None else None
    except (OSError, ValueError):
        doc = data = b""
    if not isinstance(doc, dict):
        return [], None if data is None else f"lease file {path} is unreadable; taken as no lease"
    if doc.get("path") != rel:
        return [], f"lease file {path} names {str(doc.get('path'))[:80]!r}, not {rel!r}; ignored"
    found = doc.get("leases")
    leases = [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []
    return leases, None


class Claim:
    """A claim's outcome: `blockers` (then nothing was taken), leases held in
    other worktrees, and whether anything was written."""

    __slots__ = ("blockers", "elsewhere", "expires", "new_ledger", "problem", "written")

    def __init__(self) -> None:
        self.blockers: list[dict[str, Any]] = []
        self.elsewhere: list[dict[str, Any]] = []
        self.written = False
        self.expires: float | None = None  # the writer's lease's end, when it holds one
        self.new_ledger = False  # this claim made the ledger's lease directory
        self.problem: str | None = None


def locked(ledger: str, work: Callable[[], None], timeout: float = LOCK_TIMEOUT) -> bool:
    """Run `work` under the ledger's lease lock; False when the lock was not had."""
    from agent_hooks import storage

    lock = storage.Lock(fs.join(ledger, LOCK))
    if not lock.acquire(timeout):
        return False
    try:
        work()
    finally:
        lock.release()
    return True


def claim(
    repo: Repo,
    rel: str,
    me: Writer,
    now: float,
    *,
    holder_pid: int | None,
    tool_use_id: str | None = None,
    source: str = "edit",
) -> Claim:
    """Take (or renew) `me`'s lease on `rel` in `repo` unless another writer's lease
    blocks it."""
    return claim_many(
        repo, [rel], me, now, holder_pid=holder_pid, tool_use_id=tool_use_id, source=source
    )[rel]


def claim_many(
    repo: Repo,
    rels: list[str],
    me: Writer,
    now: float,
    *,
    holder_pid: int | None,
    tool_use_id: str | None = None,
    source: str = "edit",
    fingerprint_of: dict[str, str | None] | None = None,
    leases_of: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Claim]:
    """`claim` for several paths of one repository under one lock (the files a Bash
    command changed): in its ledger, for its worktree and branch, for its lease
    minutes. With `fingerprint_of` (rel -> fingerprint, taken after the writer's own write),
    each lease records what its file looks like now (`fingerprints`): a lease whose
    fingerprint moved is rewritten even when fresh. When the repository's `worktree_leases`
    is `deny` (`repo.deny_elsewhere`), a live lease in another worktree blocks like
    one in this worktree — judged under the lock too, so a refused writer never
    holds one. `holder_pid`: the client process the writer's claims live with;
    `leases_of`: rel -> its leases, as the caller read them a moment ago (without
    the lock, as the first look here reads them): not read again before the lock."""
    from agent_hooks import liveness

    ledger, worktree, minutes = repo.ledger, repo.worktree, repo.minutes
    deny_elsewhere = repo.deny_elsewhere

    outcomes = {rel: Claim() for rel in rels}
    todo = []
    for rel in rels:
        current = (
            leases_of[rel] if leases_of is not None and rel in leases_of else read(ledger, rel)
        )
        seen = lease.judge(current, me, worktree, now, liveness.alive)
        outcome = outcomes[rel]
        outcome.elsewhere = seen.elsewhere
        if seen.blockers or (deny_elsewhere and seen.elsewhere):
            outcome.blockers = seen.blockers + (seen.elsewhere if deny_elsewhere else [])
        elif (
            seen.own is None
            or not lease.fresh(seen.own, me, now, minutes)
            or (
                fingerprint_of is not None
                and rel in fingerprint_of
                and seen.own.get("fp") != fingerprint_of[rel]
            )
        ):
            todo.append(rel)
        else:
            expires = seen.own.get("expires")
            outcome.expires = expires if isinstance(expires, int | float) else None
    if not todo:
        return outcomes
    holder = liveness.process(holder_pid)

    def work() -> None:
        from agent_hooks import storage

        taken: list[str] = []
        last: dict[str, Any] = {}
        branch = repo.branch  # read only when a lease is written
        for rel in todo:
            current, problem = read_checked(ledger, rel)
            if problem is not None:
                outcomes[rel].problem = problem  # it is rewritten whole just below
            again = lease.judge(current, me, worktree, now, liveness.alive)
            if again.blockers or (deny_elsewhere and again.elsewhere):  # lost the race
                outcomes[rel].blockers = again.blockers + (
                    again.elsewhere if deny_elsewhere else []
                )
                outcomes[rel].elsewhere = again.elsewhere
                continue
            own = again.own
            mine = own if own is not None and own.get("writer") == me.key else None
            last = lease.new(
                me,
                holder,
                worktree,
                branch,
                now,
                minutes,
                source=source,
                tool_use_id=tool_use_id,
                claimed=mine.get("claimed") if mine is not None else None,
                worktree_path=repo.root,
                fingerprint=fingerprint_of.get(rel) if fingerprint_of is not None else None,
            )
            kept = [item for item in current if item.get("worktree") != worktree]
            doc = {"path": rel, "leases": [*kept, last]}
            path = lease_path(ledger, rel)
            data = jsonio.encode(doc)
            if current or problem is not None or not storage.create_new(path, data):
                write_doc(path, doc)  # replace what is there, atomically
            outcomes[rel].written = True
            outcomes[rel].expires = last["expires"]
            taken.append(rel)
        if taken:
            writer_cards.touch_card(ledger, me, last, now)

    problem = None
    try:
        preload(CLAIM_MODULES)
        from agent_hooks import storage
        from agent_hooks.leases import writer_cards

        new_ledger = not fs.isdir(fs.join(ledger, LEASES))
        storage.ensure_dir(fs.join(ledger, LEASES))
        storage.ensure_dir(fs.join(ledger, writer_cards.WRITERS))
        for rel in todo:
            outcomes[rel].new_ledger = new_ledger
        if not locked(ledger, work):
            problem = f"lease lock of {ledger} busy for {LOCK_TIMEOUT:g} s; not leased"
    except OSError as exc:
        problem = f"lease not recorded: {exc}"
    if problem is not None:
        for rel in todo:
            outcomes[rel].problem = f"{rel}: {problem}"
    return outcomes


def write_doc(path: str, doc: dict[str, Any]) -> None:
    from agent_hooks import storage

    storage.write_bytes_atomic(path, jsonio.encode(doc), durable=False)


def unlink(path: str) -> None:
    try:
        posix.unlink(path)
    except FileNotFoundError:
        pass


def all_paths(ledger: str, prefix: str = "") -> list[str]:
    """Every leased path starting with `prefix` (read from the file names; a name
    cut short is resolved from its file). Names are compared escaped, so only the
    matching ones are decoded: a Bash target among thousands of leases costs one
    directory listing, not one decoding per lease."""
    directory = fs.join(ledger, LEASES)
    try:
        names = posix.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    wanted = lease.escape(prefix)
    found = []
    for name in names:
        if name.startswith("."):
            continue
        if not name.startswith(wanted):
            head = name.partition("~")[0]
            if head == name or not wanted.startswith(head):
                continue  # neither matching nor a cut name that could
        decoded, whole = lease.name_prefix(name)
        if whole:
            found.append(decoded)
            continue
        doc = jsonio.read_object(fs.join(directory, name))
        if doc is not None and isinstance(doc.get("path"), str) and doc["path"].startswith(prefix):
            found.append(doc["path"])
    return sorted(found)


def paths_under(ledger: str, test: Callable[[str], bool], prefix: str = "") -> list[str]:
    """Leased paths starting with `prefix` for which `test` holds (Bash targets)."""
    return [rel for rel in all_paths(ledger, prefix) if test(rel)]


def note_written(
    ledger: str,
    fingerprint_of: dict[str, str | None],
    writer: str,
    worktree: str,
    now: float,
    *,
    timeout: float = LOCK_TIMEOUT,
) -> dict[str, float]:
    """Record on `writer`'s leases in `worktree` what each file (rel -> its
    fingerprint, `fingerprints.of`) looks like after the writer's own write,
    clearing any change noted before: what other writers' hooks compare the file
    with. Returns rel -> the lease's end for each lease noted (none for a file
    without such a lease: leases off, refused, released), all under one lock."""
    ends: dict[str, float] = {}

    def work() -> None:
        for rel, fingerprint in fingerprint_of.items():
            current, problem = read_checked(ledger, rel)
            if problem is not None:
                continue
            for item in current:
                expires = item.get("expires")
                if (
                    item.get("writer") == writer
                    and item.get("worktree") == worktree
                    and isinstance(expires, int | float)
                ):
                    item["fp"] = fingerprint
                    item["fp_at"] = int(now)
                    item.pop("changed", None)
                    ends[rel] = expires
                    write_doc(lease_path(ledger, rel), {"path": rel, "leases": current})
                    break

    if fingerprint_of and fs.isdir(fs.join(ledger, LEASES)):
        try:
            locked(ledger, work, timeout)
        except OSError:
            pass
    return ends


def mark_changed(
    ledger: str,
    rel: str,
    worktree: str,
    by: str | None,
    at: float,
    *,
    timeout: float = LOCK_TIMEOUT,
) -> bool:
    """Note on the leases of `rel` in `worktree` that the file was changed by
    someone other than its holder (`by`: who, when a hook saw it; None: unknown),
    at `at`: shown by `agent-hooks reservations` and `watch`, told to the holder."""

    def update(item: dict[str, Any]) -> bool:
        if item.get("worktree") != worktree:
            return False
        item["changed"] = {"by": by, "at": int(at)}
        return True

    return _update_lease(ledger, rel, update, timeout)


def _update_lease(
    ledger: str, rel: str, update: Callable[[dict[str, Any]], bool], timeout: float
) -> bool:
    path = lease_path(ledger, rel)
    done: list[bool] = []

    def work() -> None:
        current, problem = read_checked(ledger, rel)
        if problem is not None:
            return
        touched = [update(item) for item in current]
        if any(touched):
            write_doc(path, {"path": rel, "leases": current})
            done.append(True)

    if not fs.lexists(path):
        return False
    try:
        locked(ledger, work, timeout)
    except OSError:
        return False
    return bool(done)
