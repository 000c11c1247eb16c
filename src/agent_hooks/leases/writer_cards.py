"""Writers' cards: who a writer is and when it was last heard from.

Inside a ledger directory, `writers/<escaped writer key>` is a writer's card:
who it is and what it is called (`{"writer", "agent", …, "description",
"name"}`); its mtime is the last time the writer was heard from (a claim, or a
heartbeat), and its atime the end of its latest lease, so that a lease set with
longer minutes than a reader's own is seen without reading the card (a mount
that moves atimes on reads only shortens that to the reader's minutes). A card
holds no list of paths: a claim writes one file, the lease, and touches the card.

Invariants: a card is created at a writer's first lease (or heartbeat) and
replaced atomically; its times are moved with `utime`, never by rewriting it;
a holder on another host counts while its card was heard from within
`heartbeat_window`. Built-ins only: the gate reads cards on the hot path.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease, lease_minutes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.writers import Writer

WRITERS = "writers"  # the cards' directory in a ledger


def writer_path(ledger: str, key: str) -> str:
    return fs.join(ledger, WRITERS, lease.file_name(key))


def card(ledger: str, key: object) -> dict[str, Any] | None:
    """What a writer is called (description, teammate name), when known."""
    return jsonio.read_object(writer_path(ledger, key)) if isinstance(key, str) else None


def touch_card(ledger: str, me: Writer, latest: dict[str, Any], now: float) -> None:
    """Keep the writer's card: create it at its first lease, else refresh its mtime
    (the heartbeat others judge it by) at most once per RESOLUTION. Caller holds
    the lock. A card holds no list of paths, so a claim writes one file, not two."""
    path = writer_path(ledger, me.key)
    expires = latest.get("expires")
    until = max(expires, now) if isinstance(expires, int | float) else now
    try:
        st = posix.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        keys = ("pid", "start", "host", "worktree", "branch")
        _write(path, {**me.as_dict(), **{k: latest.get(k) for k in keys}, "since": int(now)})
        posix.utime(path, (until, now), follow_symlinks=False)
        return
    if now - st.st_mtime >= lease.RESOLUTION:
        posix.utime(path, (max(until, st.st_atime), now), follow_symlinks=False)


def heard_from(ledger: str, key: str, now: float, minutes: int) -> bool:
    """Has writer `key` been heard from (a claim, or its heartbeat) within a lease's
    time? How a holder on another host is judged."""
    window = heartbeat_window(minutes)
    try:
        mtime = posix.stat(writer_path(ledger, key), follow_symlinks=False).st_mtime
    except (OSError, ValueError):
        return False
    return mtime + window > now


def heartbeat(ledger: str, me: Writer, holder_pid: int | None, now: float) -> None:
    """Mark the writer as heard from now (its file's mtime), creating its file if
    needed: what other hosts judge it by. Best effort, no lock needed for a touch.
    The atime (the end of the writer's latest lease, see `lease_store`) is kept."""
    path = writer_path(ledger, me.key)
    try:
        until = posix.stat(path, follow_symlinks=False).st_atime
        posix.utime(path, (max(until, now), now), follow_symlinks=False)
    except FileNotFoundError:
        try:
            from agent_hooks import storage

            storage.ensure_dir(fs.join(ledger, WRITERS))
            from agent_hooks import liveness

            doc = {**me.as_dict(), **liveness.process(holder_pid), "since": int(now)}
            _write(path, doc)
        except OSError:
            pass
    except OSError:
        pass


def others_heard_from(ledger: str, me: str, minutes: int, now: float) -> bool:
    """Could a writer other than `me` hold a lease in this ledger? One directory
    listing and a `stat` per other writer's card (the gate before parsing a Bash
    command): a card heard from within `minutes`, or whose latest lease (its
    atime) runs longer, says yes."""
    directory = fs.join(ledger, WRITERS)
    try:
        names = posix.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return False
    mine = lease.file_name(me)
    window = minutes * 60 + lease.RESOLUTION
    for name in names:
        if name == mine or name.startswith("."):
            continue
        try:
            st = posix.stat(fs.join(directory, name), follow_symlinks=False)
            if st.st_mtime + window > now or st.st_atime + lease.RESOLUTION > now:
                return True
        except OSError:
            continue
    return False


def heartbeat_window(minutes: int) -> int:
    """Seconds a holder on another host counts after it was last heard from: its
    lease time (the default when leases are off: a reservation's holder is judged
    by its heartbeat too), plus one renewal's resolution."""
    return (minutes or lease_minutes.DEFAULT) * 60 + lease.RESOLUTION


def _write(path: str, doc: dict[str, Any]) -> None:
    from agent_hooks import storage

    storage.write_bytes_atomic(path, jsonio.encode(doc), durable=False)
