"""Sweeping what agents left behind in the state directory.

Invariants:

* Only files of agent-hooks' own naming are ever removed: state files
  (`state-<valid name>.json`, `agent-state.json`), their `.lock` files, their
  `.corrupt-*` copies, our temp files, and archived trails. Nothing else in the
  directory is touched.
* A state file is removed only while its lock is held (taken without waiting),
  after re-checking its age under that lock; its lock file is removed while still
  held (`storage` re-validates lock inodes, so waiters are safe).
* A lock file whose state file is gone is removed after an hour, and only if
  nobody holds it (`storage.remove_unused_lock`).
* A state file whose lock cannot be taken because a symlink stands in its place
  is left alone; one agent's planted symlink never stops the sweep of the others.
"""

from __future__ import annotations

import os

from agent_hooks import identity, storage
from agent_hooks.agents import trail_archive

STATE_MAX_AGE = 7 * 86400
ORPHAN_LOCK_AGE = 3600


def sweep(
    state_dir: str,
    now: float,
    *,
    max_age: float = STATE_MAX_AGE,
    keep: str | None = None,
    dry_run: bool = False,
) -> list[str]:
    """Remove agents' files untouched for more than `max_age` seconds; return what
    was removed (or, with `dry_run`, what would be). `keep` names a state file to spare."""
    cutoff = now - max_age
    removed: list[str] = []
    try:
        entries = list(os.scandir(state_dir))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    names = {entry.name for entry in entries}
    for entry in entries:
        name = entry.name
        try:
            if not entry.is_file(follow_symlinks=False):
                continue  # a directory or symlink named like ours is not ours
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except FileNotFoundError:
            continue
        if _is_state_file(name):
            if name != keep and mtime < cutoff and (dry_run or _remove_state(entry.path, cutoff)):
                removed.append(entry.path)
                if name + ".lock" in names:  # removed with it, under its own lock
                    removed.append(entry.path + ".lock")
        elif _is_ours(name, ".lock") and name[:-5] not in names:
            if mtime < now - ORPHAN_LOCK_AGE and (
                dry_run or storage.remove_unused_lock(entry.path)
            ):
                removed.append(entry.path)
        elif _is_corrupt_copy(name) and mtime < cutoff:  # noqa: SIM102 (one kind per branch)
            if dry_run or _unlink(entry.path):
                removed.append(entry.path)
    if not dry_run:
        removed += storage.sweep_temp_files(state_dir, _is_state_file, now - ORPHAN_LOCK_AGE)
    removed += trail_archive.sweep(state_dir, cutoff, dry_run=dry_run)
    return removed


def _is_state_file(name: str) -> bool:
    return identity.agent_from_state_file("", name) is not None


def _is_ours(name: str, suffix: str) -> bool:
    return name.endswith(suffix) and _is_state_file(name[: -len(suffix)])


def _is_corrupt_copy(name: str) -> bool:
    base, sep, _ = name.rpartition(".corrupt-")
    return bool(sep) and _is_state_file(base)


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def _remove_state(path: str, cutoff: float) -> bool:
    lock = storage.Lock(path + ".lock")
    try:
        if not lock.acquire(timeout=0):
            return False  # in use right now: not untouched
    except storage.StorageError:
        return False  # a symlink planted at its lock: left alone, like the rest of it
    try:
        try:
            if os.stat(path, follow_symlinks=False).st_mtime >= cutoff:
                return False
        except FileNotFoundError:
            return False
        os.unlink(path)
        lock.unlink_while_held()
        return True
    finally:
        lock.release()
