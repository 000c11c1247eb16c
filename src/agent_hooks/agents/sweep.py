"""Sweeping what agents left behind in the state directory.

Invariants:

* Only files of agent-hooks' own naming are ever removed: state files
  (`state-<valid name>.json`, `agent-state.json`), their `.lock` files, their
  aside files (`storage.aside_path`), their `.corrupt-*` copies, our temp files,
  and archived trails. Nothing else in the directory is touched.
* A state file is removed only while its lock is held (taken without waiting),
  after re-checking its age under that lock, and its aside file with it; its lock
  file is removed while still held (`storage` re-validates lock inodes, so waiters
  are safe). An aside file without its state file is the state (a writer was
  killed between its renames) and is swept as one.
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
        document = storage.listed_document(name, names)
        if document is None:
            continue  # an aside file beside its document: removed (or replaced) with it
        if _is_state_file(document):
            name = document  # itself, or its state held aside by a writer that was killed
        if _is_state_file(name):
            path = os.path.join(state_dir, name)
            if name != keep and mtime < cutoff and (dry_run or _remove_state(path, cutoff)):
                removed.append(entry.path)
                aside = storage.aside_name(name)
                if entry.name != aside and aside in names:
                    removed.append(os.path.join(state_dir, aside))  # removed with it
                if name + ".lock" in names:  # removed with it, under its own lock
                    removed.append(path + ".lock")
        elif _is_ours(name, ".lock") and not {name[:-5], storage.aside_name(name[:-5])} & names:
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
    """Remove the state file at `path` (whichever of it and its aside file is there)
    if still untouched since `cutoff`, under its lock."""
    lock = storage.Lock(path + ".lock")
    try:
        if not lock.acquire(timeout=0):
            return False  # in use right now: not untouched
    except storage.StorageError:
        return False  # a symlink planted at its lock: left alone, like the rest of it
    try:
        found = storage.stat_current(path, aside=True)
        if found is None or found.st_mtime >= cutoff:
            return False
        removed = _unlink(path)
        removed = _unlink(storage.aside_path(path)) or removed
        lock.unlink_while_held()
        return removed
    finally:
        lock.release()
