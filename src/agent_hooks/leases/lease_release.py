"""Leases ending: released by their writer (SubagentStop, SessionEnd, `release
--all`) or by a person (`release --force --lease`), and dropped by `sweep` when
they no longer count (expired, or their holder's process is gone); also the
listing of every lease, and recording what a launched subagent is called.

Invariants: every change runs under the ledger's lease lock (`lease_store.locked`),
given up after `timeout` — a release that cannot get the lock changes nothing
and says so (TimeoutError); each dropped lease is returned with its path, so the
caller can say whose it was. Reads every lease file: never on the hot path
(PreToolUse, PostToolUse) — SubagentStop, SessionEnd, SessionStart and the CLI.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, liveness, storage
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease, writer_cards
from agent_hooks.leases.lease_store import (
    LEASES,
    LOCK,
    LOCK_TIMEOUT,
    all_paths,
    lease_path,
    locked,
    read,
    unlink,
    write_doc,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Iterable
    from typing import Any

    from agent_hooks.writers import Writer


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
    unlink(writer_cards.writer_path(ledger, key))
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
        unlink(writer_cards.writer_path(ledger, key))
    return [rel for rel, _ in dropped]


def everything(ledger: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, lease) for every lease on file, live or not."""
    return [(rel, item) for rel in all_paths(ledger) for item in read(ledger, rel)]


def sweep(ledger: str, now: float) -> list[tuple[str, dict[str, Any], str]]:
    """Drop leases that no longer count: expired, or their holder's process is
    gone; return (path, lease, why) for each. Cards of writers that hold no lease
    and were not heard from for a day go too, and so do the records of when a
    writer's shell commands ran, untouched for a day (`command_windows.sweep`)."""
    why: dict[int, str] = {}

    def dead(item: dict[str, Any]) -> bool:
        if not lease.counts(item, now, liveness.alive):
            expires = item.get("expires")
            gone = isinstance(expires, int | float) and expires > now
            why[id(item)] = "its holder's process is gone" if gone else "it expired"
            return True
        return False

    dropped = release(ledger, dead, now)
    directory = fs.join(ledger, writer_cards.WRITERS)

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
            doc = jsonio.read_object(path)
            stale = now - mtime > 86400
            if stale and (doc is None or doc.get("writer") not in holding):
                unlink(path)

    if fs.isdir(directory):
        locked(ledger, tidy_cards)
    from agent_hooks.leases import command_windows

    command_windows.sweep(ledger, now)
    return [(rel, item, why.get(id(item), "it no longer counts")) for rel, item in dropped]


def describe_writer(
    ledger: str, me: Writer, *, description: str | None, name: str | None, now: float
) -> None:
    """Record what a subagent or teammate is called (PostToolUse of the Agent tool)."""

    def work() -> None:
        path = writer_cards.writer_path(ledger, me.key)
        doc = jsonio.read_object(path) or {}
        doc.update(me.as_dict())
        if description:
            doc["description"] = description
        if name:
            doc["name"] = name
        doc["updated"] = int(now)
        write_doc(path, doc)

    storage.ensure_dir(fs.join(ledger, writer_cards.WRITERS))
    locked(ledger, work)
