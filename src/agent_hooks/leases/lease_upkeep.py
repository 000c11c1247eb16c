"""Leases off the hot path: releasing them (SubagentStop, SessionEnd), dropping
what dead or silent holders left (`sweep`), listing them, describing a writer,
and the heartbeat other hosts judge a holder by.

Invariants: every change runs under the ledger's lease lock (`lease_store`'s),
given up after `timeout` — a release that cannot get the lock changes nothing;
a writer's file lists what it holds, so releasing one writer never scans
every lease; `sweep` does, to drop leases that no longer count and say why.
"""

from __future__ import annotations

import posix

from agent_hooks import liveness, storage
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease
from agent_hooks.leases.lease_store import (
    LEASES,
    LOCK,
    LOCK_TIMEOUT,
    WRITERS,
    lease_path,
    locked,
    read,
    read_doc,
    unlink,
    write_doc,
    writer_path,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Iterable
    from typing import Any

    from agent_hooks.writers import Writer


def describe_writer(
    ledger: str, me: Writer, *, description: str | None, name: str | None, now: float
) -> None:
    """Record what a subagent or teammate is called (PostToolUse of the Agent tool)."""

    def work() -> None:
        path = writer_path(ledger, me.key)
        doc = read_doc(path) or {}
        doc.update(me.as_dict())
        if description:
            doc["description"] = description
        if name:
            doc["name"] = name
        doc["updated"] = int(now)
        write_doc(path, doc)

    storage.ensure_dir(fs.join(ledger, WRITERS))
    locked(ledger, work)


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
    dropped when the lock is not had within `timeout`: TimeoutError (an OSError)
    says so, for the caller to log."""
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
                write_doc(path, {"path": rel, "leases": kept})
            else:
                unlink(path)
            dropped.extend((rel, item) for item in gone)

    if fs.isdir(fs.join(ledger, LEASES)) and not locked(ledger, work, timeout):
        raise TimeoutError(f"{fs.join(ledger, LOCK)} stayed locked for {timeout:.1f} s")
    return dropped


def release_writer(
    ledger: str, key: str, now: float, *, timeout: float = LOCK_TIMEOUT
) -> list[str]:
    """Drop every lease writer `key` holds here, and its card (SubagentStop); return
    the paths. Off the hot path: it reads every lease file."""
    dropped = release(ledger, lambda item: item.get("writer") == key, now, timeout=timeout)
    unlink(writer_path(ledger, key))
    return [rel for rel, _ in dropped]


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
    subagents), and their cards: SessionEnd. A writer of the owner counts when its
    lease names the conversation or the Claude Code process that ends."""
    here = liveness.host()

    def ours(item: dict[str, Any]) -> bool:
        key = str(item.get("writer"))
        if key.partition("#")[0] != owner:
            return False
        same_process = pid is not None and item.get("pid") == pid and item.get("host") == here
        return same_process or (
            conversation is not None and item.get("conversation") == conversation
        )

    dropped = release(ledger, ours, now, timeout=timeout)
    for key in {str(item.get("writer")) for _, item in dropped}:
        unlink(writer_path(ledger, key))
    return [rel for rel, _ in dropped]


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
        doc = read_doc(fs.join(directory, name))
        if doc is not None and isinstance(doc.get("path"), str) and doc["path"].startswith(prefix):
            found.append(doc["path"])
    return sorted(found)


def paths_under(ledger: str, test: Callable[[str], bool], prefix: str = "") -> list[str]:
    """Leased paths starting with `prefix` for which `test` holds (Bash targets)."""
    return [rel for rel in all_paths(ledger, prefix) if test(rel)]


def heard_from(ledger: str, key: str, now: float, minutes: int) -> bool:
    """Has writer `key` been heard from (a claim, or its heartbeat) within a lease's
    time? How a holder on another host is judged."""
    window = (minutes or lease.DEFAULT_MINUTES) * 60 + lease.RESOLUTION
    try:
        mtime = posix.stat(writer_path(ledger, key), follow_symlinks=False).st_mtime
    except (OSError, ValueError):
        return False
    return mtime + window > now


def heartbeat(ledger: str, me: Writer, environ: Any, now: float) -> None:
    """Mark the writer as heard from now (its file's mtime), creating its file if
    needed: what other hosts judge it by. Best effort, no lock needed for a touch.
    The atime (the end of the writer's latest lease, see `lease_store`) is kept."""
    path = writer_path(ledger, me.key)
    try:
        until = posix.stat(path, follow_symlinks=False).st_atime
        posix.utime(path, (max(until, now), now), follow_symlinks=False)
    except FileNotFoundError:
        try:
            storage.ensure_dir(fs.join(ledger, WRITERS))
            doc = {**me.as_dict(), **liveness.process(environ), "since": int(now)}
            write_doc(path, doc)
        except OSError:
            pass
    except OSError:
        pass


def everything(ledger: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, lease) for every lease on file, live or not."""
    return [(rel, item) for rel in all_paths(ledger) for item in read(ledger, rel)]


def sweep(ledger: str, now: float) -> list[tuple[str, dict[str, Any], str]]:
    """Drop leases that no longer count: expired, or their holder's process is
    gone; return (path, lease, why) for each. Cards of writers that hold no lease
    and were not heard from for a day go too."""
    why: dict[int, str] = {}

    def dead(item: dict[str, Any]) -> bool:
        if not lease.counts(item, now, liveness.alive):
            expires = item.get("expires")
            gone = isinstance(expires, int | float) and expires > now
            why[id(item)] = "its holder's process is gone" if gone else "it expired"
            return True
        return False

    dropped = release(ledger, dead, now)
    directory = fs.join(ledger, WRITERS)

    def tidy_cards() -> None:
        try:
            names = posix.listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return
        holding = {str(item.get("writer")) for _, item in everything(ledger)}
        for name in names:
            if name.startswith("."):
                continue  # a temp file: another process is writing a card
            path = fs.join(directory, name)
            try:
                mtime = posix.stat(path, follow_symlinks=False).st_mtime
            except OSError:
                continue
            doc = read_doc(path)
            stale = now - mtime > 86400
            if stale and (doc is None or doc.get("writer") not in holding):
                unlink(path)

    if fs.isdir(directory):
        locked(ledger, tidy_cards)
    return [(rel, item, why.get(id(item), "it no longer counts")) for rel, item in dropped]
