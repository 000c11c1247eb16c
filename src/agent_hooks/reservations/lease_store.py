"""Leases on disk: one small file per leased path, one per writer.

Inside a ledger directory: `leases/<escaped path>` holds a path's leases
(`{"path": rel, "leases": [lease, …]}`, one per worktree at most);
`writers/<escaped writer key>` holds what a writer holds and what it is called
(`{"writer", "agent", …, "description", "name", "paths": [rel, …],
"updated"}`); `leases.lock` serializes every change of either.

Invariants:

* A claim is check-then-write under `leases.lock`: of two writers claiming one
  file at the same instant exactly one gets it; the other is told who holds it.
  A renewal of one's own fresh lease (written within `lease.RESOLUTION`) is not
  written at all.
* Reads take no lock (files are replaced atomically); a lease file that does
  not parse counts as no lease (it is rewritten by the next claim, and the
  problem is reported).
* A writer's file lists every path it holds (a path is added when claimed,
  removed when released), so releasing a writer (SubagentStop, SessionEnd)
  never scans every lease; `sweep` does scan, off the hot path, to drop what
  dead or silent holders left.
* When the lock cannot be had within `LOCK_TIMEOUT` the claim is not recorded
  and the edit goes on (fail open, logged by the caller).

Hot-path clean: built-in modules and agent_hooks' own.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, liveness, storage
from agent_hooks import posix_fs as fs
from agent_hooks.reservations import lease as rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Iterable
    from typing import Any

    from agent_hooks.writer import Writer

LEASES = "leases"
WRITERS = "writers"
LOCK = "leases.lock"
LOCK_TIMEOUT = 2.0
MAX_PATHS = 2000  # per writer file


def lease_path(ledger: str, rel: str) -> str:
    return fs.join(ledger, LEASES, rules.file_name(rel))


def writer_path(ledger: str, key: str) -> str:
    return fs.join(ledger, WRITERS, rules.file_name(key))


def _read(path: str) -> dict[str, Any] | None:
    try:
        data = fs.read_file(path)
        doc = jsonio.loads(data) if data is not None else None
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read(ledger: str, rel: str) -> list[dict[str, Any]]:
    """The leases on `rel` (possibly expired or of dead holders; `rules.judge` sorts)."""
    doc = _read(lease_path(ledger, rel))
    if doc is None or doc.get("path") != rel:
        return []
    found = doc.get("leases")
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def card(ledger: str, key: object) -> dict[str, Any] | None:
    """What a writer is called (description, teammate name), when known."""
    return _read(writer_path(ledger, key)) if isinstance(key, str) else None


class Claim:
    """A claim's outcome: `blockers` (then nothing was taken), leases held in
    other worktrees, and whether anything was written."""

    __slots__ = ("blockers", "elsewhere", "problem", "written")

    def __init__(self) -> None:
        self.blockers: list[dict[str, Any]] = []
        self.elsewhere: list[dict[str, Any]] = []
        self.written = False
        self.problem: str | None = None


def _locked(ledger: str, work: Callable[[], None], timeout: float = LOCK_TIMEOUT) -> bool:
    """Run `work` under the ledger's lease lock; False when the lock was not had."""
    lock = storage.Lock(fs.join(ledger, LOCK))
    if not lock.acquire(timeout):
        return False
    try:
        work()
    finally:
        lock.release()
    return True


def claim(
    ledger: str,
    rel: str,
    me: Writer,
    *,
    worktree: str,
    branch: str | None,
    environ: Any,
    now: float,
    minutes: int,
    tool_use_id: str | None = None,
    source: str = "edit",
) -> Claim:
    """Take (or renew) `me`'s lease on `rel` unless another writer's lease blocks it."""
    return claim_many(
        ledger,
        [rel],
        me,
        worktree=worktree,
        branch=branch,
        environ=environ,
        now=now,
        minutes=minutes,
        tool_use_id=tool_use_id,
        source=source,
    )[rel]


def claim_many(
    ledger: str,
    rels: list[str],
    me: Writer,
    *,
    worktree: str,
    branch: str | None,
    environ: Any,
    now: float,
    minutes: int,
    tool_use_id: str | None = None,
    source: str = "edit",
) -> dict[str, Claim]:
    """`claim` for several paths under one lock (the files a Bash command changed)."""
    outcomes = {rel: Claim() for rel in rels}
    todo = []
    for rel in rels:
        seen = rules.judge(read(ledger, rel), me, worktree, now, liveness.alive)
        outcome = outcomes[rel]
        outcome.elsewhere = seen.elsewhere
        if seen.blockers:
            outcome.blockers = seen.blockers
        elif seen.own is None or not rules.fresh(seen.own, me, now, minutes):
            todo.append(rel)
    if not todo:
        return outcomes
    holder = liveness.process(environ)

    def work() -> None:
        taken: list[str] = []
        last: dict[str, Any] = {}
        for rel in todo:
            current = read(ledger, rel)
            again = rules.judge(current, me, worktree, now, liveness.alive)
            if again.blockers:  # lost the race
                outcomes[rel].blockers = again.blockers
                continue
            own = again.own
            mine = own if own is not None and own.get("writer") == me.key else None
            last = rules.new(
                me,
                holder,
                worktree,
                branch,
                now,
                minutes,
                source=source,
                tool_use_id=tool_use_id,
                claimed=mine.get("claimed") if mine is not None else None,
            )
            kept = [item for item in current if item.get("worktree") != worktree]
            _write(lease_path(ledger, rel), {"path": rel, "leases": [*kept, last]})
            previous = own.get("writer") if own is not None else None
            if previous not in (None, me.key):  # moved from the parent
                _forget(ledger, str(previous), [rel])
            outcomes[rel].written = True
            taken.append(rel)
        if taken:
            _remember(ledger, me, last, taken, now)

    problem = None
    try:
        storage.ensure_dir(fs.join(ledger, LEASES))
        storage.ensure_dir(fs.join(ledger, WRITERS))
        if not _locked(ledger, work):
            problem = f"lease lock of {ledger} busy for {LOCK_TIMEOUT:g} s; not leased"
    except OSError as exc:
        problem = f"lease not recorded: {exc}"
    if problem is not None:
        for rel in todo:
            outcomes[rel].problem = f"{rel}: {problem}"
    return outcomes


def _write(path: str, doc: dict[str, Any]) -> None:
    storage.write_bytes_atomic(path, jsonio.dumps(doc).encode("utf-8"), durable=False)


def _remember(
    ledger: str, me: Writer, lease: dict[str, Any], rels: Iterable[str], now: float
) -> None:
    """Add `rels` to the writer's file (caller holds the lock)."""
    path = writer_path(ledger, me.key)
    doc = _read(path) or {}
    paths = doc.get("paths") if isinstance(doc.get("paths"), list) else []
    assert isinstance(paths, list)
    added = [rel for rel in rels if rel not in paths]
    doc.update(me.as_dict())
    doc.update(
        {
            "pid": lease.get("pid"),
            "start": lease.get("start"),
            "host": lease.get("host"),
            "worktree": lease.get("worktree"),
            "branch": lease.get("branch"),
            "paths": (paths + added)[-MAX_PATHS:],
            "updated": int(now),
        }
    )
    _write(path, doc)


def _forget(ledger: str, key: str, rels: Iterable[str]) -> None:
    path = writer_path(ledger, key)
    doc = _read(path)
    if doc is None:
        return
    gone = set(rels)
    paths = [p for p in doc.get("paths") or [] if isinstance(p, str) and p not in gone]
    if paths:
        doc["paths"] = paths
        _write(path, doc)
    else:
        _unlink(path)


def _unlink(path: str) -> None:
    try:
        posix.unlink(path)
    except FileNotFoundError:
        pass


def describe_writer(
    ledger: str, me: Writer, *, description: str | None, name: str | None, now: float
) -> None:
    """Record what a subagent or teammate is called (PostToolUse of the Agent tool)."""

    def work() -> None:
        path = writer_path(ledger, me.key)
        doc = _read(path) or {"paths": []}
        doc.update(me.as_dict())
        if description:
            doc["description"] = description
        if name:
            doc["name"] = name
        doc["updated"] = int(now)
        _write(path, doc)

    storage.ensure_dir(fs.join(ledger, WRITERS))
    _locked(ledger, work)


def release(
    ledger: str,
    select: Callable[[dict[str, Any]], bool],
    now: float,
    rels: Iterable[str] | None = None,
    *,
    timeout: float = LOCK_TIMEOUT,
) -> list[tuple[str, dict[str, Any]]]:
    """Drop every lease `select` picks (on `rels`, else on every leased path);
    return (path, lease) for each dropped. Writers' files follow. Nothing is
    dropped when the lock is not had within `timeout`."""
    dropped: list[tuple[str, dict[str, Any]]] = []

    def work() -> None:
        for rel in list(rels) if rels is not None else all_paths(ledger):
            path = lease_path(ledger, rel)
            current = read(ledger, rel)
            gone = [item for item in current if select(item)]
            if not gone:
                continue
            kept = [item for item in current if not select(item)]
            if kept:
                _write(path, {"path": rel, "leases": kept})
            else:
                _unlink(path)
            dropped.extend((rel, item) for item in gone)
        by_writer: dict[str, list[str]] = {}
        for rel, item in dropped:
            by_writer.setdefault(str(item.get("writer")), []).append(rel)
        for key, paths in by_writer.items():
            _forget(ledger, key, paths)

    if fs.isdir(fs.join(ledger, LEASES)):
        _locked(ledger, work, timeout)
    return dropped


def release_writer(
    ledger: str, key: str, now: float, *, timeout: float = LOCK_TIMEOUT
) -> list[str]:
    """Drop every lease writer `key` holds here (SubagentStop); return the paths."""
    paths = writer_paths(ledger, key)
    dropped = release(ledger, lambda item: item.get("writer") == key, now, paths, timeout=timeout)
    _unlink_card(ledger, key, timeout)
    return [rel for rel, _ in dropped]


def _unlink_card(ledger: str, key: str, timeout: float) -> None:
    def work() -> None:
        doc = _read(writer_path(ledger, key))
        if doc is not None and not doc.get("paths"):
            _unlink(writer_path(ledger, key))

    if fs.isdir(fs.join(ledger, WRITERS)):
        _locked(ledger, work, timeout)


def release_conversation(
    ledger: str,
    owner: str,
    conversation: str | None,
    pid: int | None,
    now: float,
    *,
    timeout: float,
) -> list[str]:
    """Drop the leases of every writer of one conversation (its main writer and its
    subagents): SessionEnd. A writer of the owner counts when its lease names the
    conversation or the Claude Code process that ends."""
    here = liveness.host()

    def ours(item: dict[str, Any]) -> bool:
        key = str(item.get("writer"))
        if key.partition("#")[0] != owner:
            return False
        same_process = pid is not None and item.get("pid") == pid and item.get("host") == here
        return same_process or (
            conversation is not None and item.get("conversation") == conversation
        )

    keys = [k for k in _writer_keys(ledger) if k.partition("#")[0] == owner]
    paths = sorted({rel for key in keys for rel in writer_paths(ledger, key)})
    dropped = release(ledger, ours, now, paths, timeout=timeout)
    for key in keys:
        _unlink_card(ledger, key, timeout)
    return [rel for rel, _ in dropped]


def _writer_keys(ledger: str) -> list[str]:
    try:
        names = posix.listdir(fs.join(ledger, WRITERS))
    except (FileNotFoundError, NotADirectoryError):
        return []
    keys = []
    for name in names:
        doc = _read(fs.join(ledger, WRITERS, name))
        key = doc.get("writer") if doc else None
        if isinstance(key, str):
            keys.append(key)
    return keys


def writer_paths(ledger: str, key: str) -> list[str]:
    doc = card(ledger, key)
    paths = doc.get("paths") if doc else None
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def all_paths(ledger: str) -> list[str]:
    """Every leased path (read from the files; names cut short are resolved)."""
    directory = fs.join(ledger, LEASES)
    try:
        names = posix.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for name in names:
        if name.startswith("."):
            continue
        prefix, whole = rules.name_prefix(name)
        if whole:
            found.append(prefix)
            continue
        doc = _read(fs.join(directory, name))
        if doc is not None and isinstance(doc.get("path"), str):
            found.append(doc["path"])
    return sorted(found)


def paths_under(ledger: str, test: Callable[[str], bool], prefix: str = "") -> list[str]:
    """Leased paths starting with `prefix` for which `test` holds (Bash targets)."""
    return [rel for rel in all_paths(ledger) if rel.startswith(prefix) and test(rel)]


def others_hold(ledger: str, me: Writer, now: float, minutes: int) -> bool:
    """Does any other writer hold a lease here that could still count? (a directory
    listing and a `stat` per other writer: the gate before parsing a Bash command)"""
    directory = fs.join(ledger, WRITERS)
    try:
        names = posix.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return False
    mine = rules.file_name(me.key)
    for name in names:
        if name == mine or name.startswith("."):
            continue
        try:
            mtime = posix.stat(fs.join(directory, name), follow_symlinks=False).st_mtime
        except OSError:
            continue
        if mtime + minutes * 60 + rules.RESOLUTION > now:
            return True
    return False


def heard_from(ledger: str, key: str, now: float, minutes: int) -> bool:
    """Has writer `key` been heard from (a claim, or its heartbeat) within a lease's
    time? How a holder on another host is judged."""
    window = (minutes or rules.DEFAULT_MINUTES) * 60 + rules.RESOLUTION
    try:
        mtime = posix.stat(writer_path(ledger, key), follow_symlinks=False).st_mtime
    except (OSError, ValueError):
        return False
    return mtime + window > now


def heartbeat(ledger: str, me: Writer, environ: Any, now: float) -> None:
    """Mark the writer as heard from now (its file's mtime), creating its file if
    needed: what other hosts judge it by. Best effort, no lock needed for a touch."""
    path = writer_path(ledger, me.key)
    try:
        posix.utime(path, (now, now), follow_symlinks=False)
    except FileNotFoundError:
        try:
            storage.ensure_dir(fs.join(ledger, WRITERS))
            doc = {**me.as_dict(), **liveness.process(environ), "paths": [], "updated": int(now)}
            _write(path, doc)
        except OSError:
            pass
    except OSError:
        pass


def everything(ledger: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, lease) for every lease on file, live or not."""
    return [(rel, item) for rel in all_paths(ledger) for item in read(ledger, rel)]


def sweep(ledger: str, now: float) -> list[tuple[str, dict[str, Any], str]]:
    """Drop leases that no longer count: expired, or their holder's process is
    gone; return (path, lease, why) for each. Writer files left without paths and
    untouched for a day go too."""
    why: dict[int, str] = {}

    def dead(item: dict[str, Any]) -> bool:
        if not rules.counts(item, now, liveness.alive):
            expires = item.get("expires")
            gone = isinstance(expires, int | float) and expires > now
            why[id(item)] = "its holder's process is gone" if gone else "it expired"
            return True
        return False

    dropped = release(ledger, dead, now)
    directory = fs.join(ledger, WRITERS)
    try:
        names = posix.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for name in names:
        path = fs.join(directory, name)
        doc = _read(path)
        updated = doc.get("updated") if doc else None
        stale = not isinstance(updated, int | float) or now - updated > 86400
        if doc is None or (not doc.get("paths") and stale):
            _unlink(path)
    return [(rel, item, why.get(id(item), "it no longer counts")) for rel, item in dropped]
