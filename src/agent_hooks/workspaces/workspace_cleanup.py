"""Closing workspaces and the 24 h sweep: the clean-up of
`<project>/.tmp/sessions/<id>/` (see workspace_store for creation and the
manifest, `workspace` for the pure rules).

Invariants:

* Deletion walks from the workspace directory with `O_NOFOLLOW | O_DIRECTORY`
  descriptors, so it never passes through a symlink; a tracked path that is
  itself a symlink (or not a regular file) is left alone.
* Closing deletes only what the manifest tracks (regular files), then the
  manifest and its lock, then directories left empty — never an untracked file.
  A missing or unreadable manifest means hands off, reported as a warning.
* The sweep removes a workspace only if its manifest's `last_activity`, re-read
  under the lock, is more than `max_idle` seconds (24 h) old; a symlinked
  `.tmp/sessions` is not swept at all.

Only built-in modules are imported (`workspace_store.remove_context` uses the
descriptor walk).
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs
from agent_hooks import storage, timestamps
from agent_hooks.wording import plural
from agent_hooks.workspaces import tree, workspace, workspace_manifest
from agent_hooks.workspaces.workspace_store import (
    MAX_IDLE,
    Workspace,
    read_manifest,
    sessions_root,
    workspace_ids,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterable
    from typing import Any


class Closed:
    """The outcome of closing one workspace."""

    __slots__ = ("closed", "left", "removed", "warning", "ws")

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.closed = False
        self.removed: list[str] = []  # tracked files deleted (relative to the workspace)
        self.left: list[str] = []  # what stays, and why
        self.warning: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.ws.id,
            "path": self.ws.path,
            "closed": self.closed,
            "removed": self.removed,
            "left": self.left,
            "warning": self.warning,
        }


def close(ws: Workspace, now: float, *, idle_before: float | None = None) -> Closed:
    """Delete the workspace's tracked files, its manifest and the directories left
    empty. With `idle_before`, only if `last_activity` (read under the lock) is older."""
    result = Closed(ws)
    try:
        ws_fd = tree.open_workspace(ws.project, ws.id)
    except (OSError, workspace.WorkspaceError) as exc:
        result.warning = f"workspace {ws.id}: {exc}"
        return result
    try:
        lock = storage.Lock(ws.manifest_path + ".lock")
        if not lock.acquire(storage.LOCK_TIMEOUT):
            result.warning = f"workspace {ws.id}: manifest lock busy; left alone"
            return result
        try:
            if not _close_locked(ws, ws_fd, result, idle_before):
                return result
            lock.unlink_while_held()
        finally:
            lock.release()
        tree.prune_empty_dirs(ws_fd)
    finally:
        posix.close(ws_fd)
    try:
        posix.rmdir(ws.path)
    except FileNotFoundError:
        pass
    except OSError:
        try:
            leftovers = sorted(e.name for e in posix.scandir(ws.path))
        except OSError:
            leftovers = []
        result.left += [f"{name}: untracked" for name in leftovers]
        result.warning = (
            f"workspace {ws.id}: {plural(len(leftovers), 'untracked item')} left in place"
        )
    result.closed = True
    return result


def _close_locked(ws: Workspace, ws_fd: int, result: Closed, idle_before: float | None) -> bool:
    raw, problem = read_manifest(ws)
    if raw is None:
        result.warning = f"workspace {ws.id}: {problem}; hands off"
        return False
    if idle_before is not None:
        last = workspace_manifest.idle_since(raw)
        if last is None or last >= idle_before:
            if last is None:
                result.warning = f"workspace {ws.id}: unreadable last_activity; hands off"
            return False
    files = raw.get("context_files")
    for rel in files if isinstance(files, dict) else ():
        try:
            workspace.check_relative(rel)
        except workspace.WorkspaceError as exc:
            result.left.append(f"{rel!r}: {exc}")
            continue
        outcome = tree.remove_tracked(ws_fd, rel)
        if outcome == "removed":
            result.removed.append(rel)
        elif outcome != "already gone":
            result.left.append(f"{rel}: {outcome}")
    posix.unlink(workspace.MANIFEST, dir_fd=ws_fd)
    for entry in list(posix.scandir(ws_fd)):
        if storage.temp_target(entry.name) == workspace.MANIFEST:
            posix.unlink(entry.name, dir_fd=ws_fd)
    return True


class Swept:
    """What a sweep removed (or would remove) and what it left alone, and why."""

    __slots__ = ("closed", "warnings")

    def __init__(self) -> None:
        self.closed: list[Closed | Workspace] = []
        self.warnings: list[str] = []

    @property
    def ids(self) -> list[str]:
        return [item.ws.id if isinstance(item, Closed) else item.id for item in self.closed]


def sweep(
    project: str,
    now: float,
    *,
    max_idle: float = MAX_IDLE,
    keep: Iterable[str] = (),
    dry_run: bool = False,
) -> Swept:
    """Close the project's workspaces idle for more than `max_idle` seconds (by
    the manifest's `last_activity`); `keep` names ids to spare."""
    out = Swept()
    spared = set(keep)
    root = sessions_root(project)
    if fs.islink(root):
        out.warnings.append(f"{root} is a symlink; nothing swept")
        return out
    cutoff = now - max_idle
    for ws_id in workspace_ids(project):
        if ws_id in spared:
            continue
        ws = Workspace(project, ws_id)
        raw, problem = read_manifest(ws)
        if raw is None:
            born = timestamps.parse_iso(
                f"{ws_id[:4]}-{ws_id[4:6]}-{ws_id[6:8]}T"
                f"{ws_id[9:11]}:{ws_id[11:13]}:{ws_id[13:15]}Z"
            )
            if born is None or born < cutoff:  # a young one may be mid-creation
                out.warnings.append(f"workspace {ws_id}: {problem}; hands off")
            continue
        last = workspace_manifest.idle_since(raw)
        if last is None:
            out.warnings.append(f"workspace {ws_id}: unreadable last_activity; hands off")
            continue
        if last >= cutoff:
            continue
        if dry_run:
            out.closed.append(ws)
            continue
        result = close(ws, now, idle_before=cutoff)
        if result.warning:
            out.warnings.append(result.warning)
        if result.closed:
            out.closed.append(result)
    return out
