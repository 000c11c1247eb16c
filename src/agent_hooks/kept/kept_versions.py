"""Reading the kept versions of a path: what `agent-hooks restore`, the sweep, the
holder's notice and `agent-hooks reservations` ask of the store that
`kept_store` writes (docs/adr/0024-kept-versions.md).

Invariants: a version file's lines are read one at a time; a line that is no
version (`valid`: the fields `kept_store.entry_for` writes, of this path) is
skipped, and a file that cannot be read has none — a damaged store loses what
is damaged, nothing else. Content is returned only when its digest is its name.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio
from agent_hooks import posix_fs as fs
from agent_hooks.kept import kept_store
from agent_hooks.kept.kept_store import (
    DELETE,
    DIGEST_SIZE,
    REPLACED,
    RESTORE,
    WRITE,
    digest,
    object_path,
    versions_path,
)

SWEEP_INTERVAL = 15 * 60  # seconds: a Stop or SessionStart sweeps when the last is older

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any


def version_id(entry: Mapping[str, Any]) -> str:
    """How people name a version: the first 12 hex digits of its content's digest
    (a deletion has no content: `deleted`)."""
    value = entry.get("hash")
    return value[:12] if isinstance(value, str) else "deleted"


def read_object(ledger: str, name: str) -> bytes | None:
    """The content stored under `name`, or None when it is missing or damaged (its
    digest is not its name: a crash cut it short, or it was changed)."""
    try:
        data = fs.read_file(object_path(ledger, name))
    except OSError:
        return None
    if data is None or digest(data) != name:
        return None
    return data


KINDS = (WRITE, DELETE, RESTORE, REPLACED)
_HEX = frozenset("0123456789abcdef")


def valid(entry: object, rel: str) -> bool:
    """Is `entry` a version of `rel` as `entry_for` writes one (a file someone
    else wrote, or a line a crash mangled, is no version)?"""
    if not isinstance(entry, dict) or entry.get("path") != rel or entry.get("kind") not in KINDS:
        return False
    name, size, mode, at = entry.get("hash"), entry.get("size"), entry.get("mode"), entry.get("at")
    if name is None:
        if entry["kind"] != DELETE:
            return False
    elif not (isinstance(name, str) and len(name) == 2 * DIGEST_SIZE and _HEX.issuperset(name)):
        return False
    return (
        isinstance(size, int)
        and not isinstance(size, bool)
        and size >= 0
        and isinstance(mode, int)
        and not isinstance(mode, bool)
        and 0 <= mode <= 0o7777
        and isinstance(at, int | float)
        and not isinstance(at, bool)
        and isinstance(entry.get("holder"), str)
    )


def read_versions(ledger: str, worktree: str, rel: str) -> list[dict[str, Any]]:
    """Every version of `rel` kept in `worktree`, oldest first; a line that is no
    version is skipped, an unreadable file has none."""
    try:
        data = fs.read_file(versions_path(ledger, worktree, rel))
    except OSError:
        return []
    found: list[dict[str, Any]] = []
    for line in (data or b"").split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and valid(entry, rel):
            found.append(entry)
    return found


def owner_of(entry: Mapping[str, Any]) -> str:
    """The agent (writer owner) a version's lease belonged to."""
    return str(entry.get("holder")).partition("#")[0]


def kept_for(ledger: str, worktree: str, rel: str, key: str) -> dict[str, Any] | None:
    """The newest version the writer `key` wrote (a write: a restore may have put
    anyone's content back), or None."""
    versions = read_versions(ledger, worktree, rel)
    for version in versions[::-1]:
        if version["kind"] == WRITE and version.get("writer") == key:
            return version
    return None


def way_back(
    path: str, ledger: str, worktree: str, rel: str, key: str, cwd: str | None, now: float
) -> str:
    """What the holder `key` of `rel` (at `path`), found changed by someone else, is
    told of its way back: how to see the difference and put its own last version
    back, when one is kept ("" otherwise). A file found gone is recorded as a
    deletion first. The commands name the file as the holder's shell, in `cwd`,
    reaches it."""
    if not fs.lexists(path):
        entry = kept_store.entry_for(rel, DELETE, None, 0, 0, None, key, now, now)
        kept_store.append(ledger, worktree, rel, entry)
    if kept_for(ledger, worktree, rel, key) is None:
        return ""
    top = path[: len(path) - len(rel) - 1]
    shown = quoted(rel if cwd == top else path)
    return (
        f"Your last version of it is kept: `agent-hooks restore {shown} --diff` shows what "
        f"changed, `agent-hooks restore {shown}` puts it back (with its mode). Restore only "
        "work that was lost: if the other writer changed it on purpose, do not undo their "
        "change without asking the user."
    )


def quoted(path: str) -> str:
    """`path` as one shell word (single-quoted unless it needs no quoting)."""
    if path and all(c.isalnum() or c in "/._-+=:,@%" for c in path):
        return path
    return "'" + path.replace("'", "'\\''") + "'"


def sweep_due(ledger: str, now: float, interval: float = SWEEP_INTERVAL) -> bool:
    """Is there a store in `ledger` not swept for `interval` seconds? (a `stat` or
    two: Stop asks at every turn's end; `kept_sweep` sweeps)"""
    try:
        return (
            posix.stat(fs.join(ledger, kept_store.STORE, kept_store.SWEPT)).st_mtime
            < now - interval
        )
    except FileNotFoundError:
        return fs.isdir(fs.join(ledger, kept_store.STORE))
    except OSError:
        return False
