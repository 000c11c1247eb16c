"""Workspaces on disk: `<project>/.tmp/sessions/<id>/<category>/<task>-context.md`
plus `<id>/.manifest.json` (see `workspace` for the pure rules).

Invariants:

* A workspace directory is created with `mkdir`, which fails when the name
  exists; a collision (two agents, same second, same 4 random characters) draws
  a new suffix, so two creators never share a workspace.
* `.tmp` and `.tmp/sessions` must be real directories: a symlink there is refused,
  never followed. Deletion walks from the workspace directory with
  `O_NOFOLLOW | O_DIRECTORY` descriptors, so it never passes through a symlink;
  a tracked path that is itself a symlink is left alone.
* The manifest is changed only under its lock (`.manifest.json.lock`) and
  replaced atomically; every change moves `last_activity`.
* Closing deletes only what the manifest tracks (regular files), then the
  manifest and its lock, then directories left empty — never an untracked file.
  A missing or unreadable manifest means hands off, reported as a warning.
* The sweep removes a workspace only if its manifest's `last_activity`, re-read
  under the lock, is more than `max_idle` seconds old.

Only built-in modules are imported: `workspace_hooks.after_write` uses this
module inside PostToolUse.
"""

from __future__ import annotations

import errno
import posix

from agent_hooks import posix_fs as fs
from agent_hooks import storage, workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Iterable
    from typing import Any

    from agent_hooks import identity

MAX_IDLE = 24 * 3600
_DIR_FLAGS = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
_CREATE_ATTEMPTS = 64


class Workspace:
    """One workspace of a project: its id and absolute directory."""

    __slots__ = ("id", "path", "project")

    def __init__(self, project: str, ws_id: str) -> None:
        self.project = project
        self.id = ws_id
        self.path = fs.join(sessions_root(project), ws_id)

    @property
    def manifest_path(self) -> str:
        return fs.join(self.path, workspace.MANIFEST)

    def file(self, rel: str) -> str:
        return fs.join(self.path, workspace.check_relative(rel))

    def project_relative(self, rel: str) -> str:
        return f"{workspace.SESSIONS_DIR}/{self.id}/{rel}"


def sessions_root(project: str) -> str:
    return fs.join(project, workspace.SESSIONS_DIR)


def _lmode(path: str) -> int | None:
    """The file type of `path` itself (a symlink is not followed), None if absent."""
    try:
        return int(posix.stat(path, follow_symlinks=False).st_mode) & fs.S_IFMT
    except (OSError, ValueError):
        return None


def _real_dir(path: str) -> None:
    mode = _lmode(path)
    if mode == fs.S_IFLNK:
        raise workspace.WorkspaceError(f"{path} is a symlink; refusing to work through it")
    if mode != fs.S_IFDIR:
        raise workspace.WorkspaceError(f"{path} is not a directory")


def ensure_sessions_root(project: str) -> str:
    """Create `.tmp/sessions` in `project` (refusing symlinks); it ignores itself in git."""
    path = project
    for part in workspace.SESSIONS_DIR.split("/"):
        path = fs.join(path, part)
        try:
            posix.mkdir(path, storage.DIR_MODE)
        except FileExistsError:
            pass
        _real_dir(path)
    ignore = fs.join(path, ".gitignore")
    if not fs.lexists(ignore):
        storage.write_bytes_atomic(ignore, b"*\n", durable=False)
    return path


def create(
    project: str, now: float, *, suffix: Callable[[], str] = workspace.random_suffix
) -> Workspace:
    """A new workspace with an id no other creator can also get, and its manifest."""
    root = ensure_sessions_root(project)
    for _ in range(_CREATE_ATTEMPTS):
        ws_id = workspace.make_id(now, suffix())
        try:
            posix.mkdir(fs.join(root, ws_id), storage.DIR_MODE)
        except FileExistsError:
            continue
        ws = Workspace(project, ws_id)
        update_manifest(ws, lambda doc: None, now)
        return ws
    raise workspace.WorkspaceError(f"no free workspace id in {root} after {_CREATE_ATTEMPTS} tries")


def exists(ws: Workspace) -> bool:
    return _lmode(ws.path) == fs.S_IFDIR


def check_real(ws: Workspace) -> None:
    """Raise WorkspaceError unless `.tmp`, `.tmp/sessions` and the workspace are real
    directories (so nothing written into the workspace lands elsewhere through a link)."""
    path = ws.project
    for part in (*workspace.SESSIONS_DIR.split("/"), ws.id):
        path = fs.join(path, part)
        _real_dir(path)


def bound(doc: dict[str, Any], project: str | None) -> Workspace | None:
    """The workspace the agent's state binds to its current conversation, if it
    belongs to `project` and still exists."""
    record = doc.get("workspace")
    if project is None or not isinstance(record, dict):
        return None
    ws_id = record.get("id")
    if not isinstance(ws_id, str) or not workspace.is_workspace_id(ws_id):
        return None
    if record.get("conversation_id") != doc.get("conversation_id"):
        return None
    ws = Workspace(project, ws_id)
    if record.get("path") != ws.path or not exists(ws):
        return None
    return ws


def binding(ws: Workspace, conversation_id: str | None) -> dict[str, Any]:
    """The agent state's `workspace` value for `ws`."""
    return {"id": ws.id, "path": ws.path, "conversation_id": conversation_id}


def current_or_create(
    agent: identity.Agent, project: str, now: float, log: Callable[[str], None]
) -> tuple[Workspace, bool]:
    """The workspace bound to the agent's current conversation, created and bound
    (under the agent's state lock) when there is none; and whether it was created."""
    from agent_hooks import state_file

    found: list[tuple[Workspace, bool]] = []

    def mutate(doc: dict[str, Any]) -> None:
        ws = bound(doc, project)
        if ws is not None:
            found.append((ws, False))
            return
        ws = create(project, now)
        doc["workspace"] = binding(ws, doc["conversation_id"])
        found.append((ws, True))

    state_file.update(agent, mutate, now, log)
    return found[0]


# --- the manifest -------------------------------------------------------------


class ManifestUpdate:
    """What `update_manifest` did: the manifest written, whether the lock was
    held, and the problem with what was there before (it was then quarantined)."""

    __slots__ = ("doc", "held", "problem")

    def __init__(self, doc: dict[str, Any], held: bool, problem: str | None) -> None:
        self.doc = doc
        self.held = held
        self.problem = problem


def update_manifest(
    ws: Workspace, mutate: Callable[[dict[str, Any]], object], now: float, *, durable: bool = True
) -> ManifestUpdate:
    """Read-modify-write the manifest under its lock; `last_activity` moves. Durable
    (fsynced) unless the caller is the hook hot path (see ADR-0008)."""
    out: dict[str, Any] = {}
    problems: list[str] = []

    def apply(loaded: storage.Loaded) -> dict[str, Any]:
        if loaded.problem is not None:
            moved = f" (moved to {loaded.moved_to})" if loaded.moved_to else ""
            problems.append(loaded.problem + moved)
        doc = workspace.normalize_manifest(loaded.doc, ws.id, now)
        mutate(doc)
        workspace.touch(doc, now)
        out.update(doc)
        return doc

    held = storage.locked_update(ws.manifest_path, apply, now=now, durable=durable)
    return ManifestUpdate(out, held, problems[0] if problems else None)


def read_manifest(ws: Workspace) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest as on disk (not normalized), or None and why it cannot be used."""
    try:
        loaded = storage.load_json_object(ws.manifest_path)
    except OSError as exc:
        return None, f"manifest unreadable ({exc})"
    if loaded.problem is not None:
        return None, f"manifest is not valid JSON ({loaded.problem})"
    if loaded.doc is None:
        return None, "no manifest"
    return loaded.doc, None


def register(
    ws: Workspace,
    rel: str,
    now: float,
    *,
    recipient: str | None = None,
    keywords: Iterable[str] = (),
    replace: bool = False,
    durable: bool = True,
) -> ManifestUpdate:
    """Track an existing file of the workspace in its manifest."""
    workspace.check_relative(rel)
    return update_manifest(
        ws,
        lambda doc: workspace.add_file(
            doc, rel, now, recipient=recipient, keywords=keywords, replace=replace
        ),
        now,
        durable=durable,
    )


def write_context(
    ws: Workspace,
    rel: str,
    content: str,
    now: float,
    *,
    recipient: str | None = None,
    keywords: Iterable[str] = (),
    replace: bool = False,
) -> ManifestUpdate:
    """Write a context file (atomically) and track it. Refuses to overwrite a file
    unless `replace`; the file is written before the manifest names it, so a
    manifest never tracks a file that was not fully written."""
    path = ws.file(rel)
    check_real(ws)
    directory = ws.path
    for part in rel.split("/")[:-1]:
        directory = fs.join(directory, part)
        try:
            posix.mkdir(directory, storage.DIR_MODE)
        except FileExistsError:
            pass
        _real_dir(directory)
    if not replace and fs.lexists(path):
        raise workspace.WorkspaceError(f"{path} exists; pass --replace to overwrite it")
    storage.write_bytes_atomic(path, content.encode("utf-8"))
    return register(ws, rel, now, recipient=recipient, keywords=keywords, replace=replace)


def remove_context(ws: Workspace, rel: str, now: float) -> str:
    """Delete a tracked context file and untrack it; return what happened to the
    file ("removed", "already gone" or why it was left)."""
    workspace.check_relative(rel)
    outcome: list[str] = []

    def mutate(doc: dict[str, Any]) -> None:
        if rel not in doc["context_files"]:
            raise workspace.WorkspaceError(
                f"{ws.project_relative(rel)} is not tracked by workspace {ws.id}"
            )
        fd = _open_workspace(ws)
        try:
            outcome.append(_remove_tracked(fd, rel))
        finally:
            posix.close(fd)
        workspace.remove_file(doc, rel, now)

    update_manifest(ws, mutate, now)
    return outcome[0]


# --- listing --------------------------------------------------------------------


def workspace_ids(project: str) -> list[str]:
    """Ids of the project's workspace directories (real directories only), oldest first."""
    root = sessions_root(project)
    try:
        entries = list(posix.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        e.name
        for e in entries
        if workspace.is_workspace_id(e.name) and e.is_dir(follow_symlinks=False)
    )


def live(
    project: str, now: float, max_idle: float = MAX_IDLE
) -> list[tuple[Workspace, dict[str, Any]]]:
    """The project's workspaces with a readable manifest active within `max_idle`."""
    out = []
    for ws_id in workspace_ids(project):
        ws = Workspace(project, ws_id)
        raw, _ = read_manifest(ws)
        if raw is None:
            continue
        last = workspace.idle_since(raw)
        if last is not None and now - last <= max_idle:
            out.append((ws, workspace.normalize_manifest(raw, ws_id, now)))
    return out


# --- clean-up -----------------------------------------------------------------


def _open_workspace(ws: Workspace) -> int:
    """A descriptor on the workspace directory, reached without following any
    symlink below the project."""
    fd = posix.open(ws.project, _DIR_FLAGS & ~posix.O_NOFOLLOW)
    where = ws.project
    try:
        for part in (*workspace.SESSIONS_DIR.split("/"), ws.id):
            where = fs.join(where, part)
            try:
                nxt = posix.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise workspace.WorkspaceError(
                        f"{where} is a symlink or not a directory; left alone"
                    ) from None
                raise
            posix.close(fd)
            fd = nxt
    except BaseException:
        posix.close(fd)
        raise
    return fd


def _remove_tracked(ws_fd: int, rel: str) -> str:
    parts = rel.split("/")
    fd = posix.dup(ws_fd)
    try:
        for part in parts[:-1]:
            try:
                nxt = posix.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                return "already gone"
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    return f"left: {part}/ is a symlink or not a directory"
                raise
            posix.close(fd)
            fd = nxt
        try:
            st = posix.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return "already gone"
        kind = st.st_mode & fs.S_IFMT
        if kind != fs.S_IFREG:
            return "left: a symlink" if kind == fs.S_IFLNK else "left: not a regular file"
        posix.unlink(parts[-1], dir_fd=fd)
        return "removed"
    finally:
        posix.close(fd)


def _prune_empty_dirs(fd: int) -> None:
    """Remove the empty directories below `fd` (depth first, never through a symlink)."""
    for entry in list(posix.scandir(fd)):
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            sub = posix.open(entry.name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue
        try:
            _prune_empty_dirs(sub)
        finally:
            posix.close(sub)
        try:
            posix.rmdir(entry.name, dir_fd=fd)
        except OSError:
            pass  # not empty: something untracked is in it


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
        ws_fd = _open_workspace(ws)
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
        _prune_empty_dirs(ws_fd)
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
        result.warning = f"workspace {ws.id}: {len(leftovers)} untracked item(s) left in place"
    result.closed = True
    return result


def _close_locked(ws: Workspace, ws_fd: int, result: Closed, idle_before: float | None) -> bool:
    raw, problem = read_manifest(ws)
    if raw is None:
        result.warning = f"workspace {ws.id}: {problem}; hands off"
        return False
    if idle_before is not None:
        last = workspace.idle_since(raw)
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
        outcome = _remove_tracked(ws_fd, rel)
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
    if _lmode(root) == fs.S_IFLNK:
        out.warnings.append(f"{root} is a symlink; nothing swept")
        return out
    cutoff = now - max_idle
    for ws_id in workspace_ids(project):
        if ws_id in spared:
            continue
        ws = Workspace(project, ws_id)
        raw, problem = read_manifest(ws)
        if raw is None:
            born = workspace.parse_iso(
                f"{ws_id[:4]}-{ws_id[4:6]}-{ws_id[6:8]}T"
                f"{ws_id[9:11]}:{ws_id[11:13]}:{ws_id[13:15]}Z"
            )
            if born is None or born < cutoff:  # a young one may be mid-creation
                out.warnings.append(f"workspace {ws_id}: {problem}; hands off")
            continue
        last = workspace.idle_since(raw)
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
