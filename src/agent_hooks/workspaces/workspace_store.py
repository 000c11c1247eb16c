"""Workspaces on disk: `<project>/.tmp/sessions/<id>/<category>/<task>-context.md`
plus `<id>/.manifest.json` (see `workspace` for the pure rules): creation, the
binding to the agent's conversation, manifest updates and context files. Closing
and the 24 h sweep are workspace_cleanup's.

Invariants:

* A workspace directory is created with `mkdir`, which fails when the name
  exists; a collision (two agents, same second, same 4 random characters) draws
  a new suffix, so two creators never share a workspace.
* `.tmp` and `.tmp/sessions` must be real directories: a symlink there is refused,
  never followed; so is a symlinked directory on the way to a context file.
* The manifest is changed only under its lock (`.manifest.json.lock`) and
  replaced atomically; every change moves `last_activity`.
* A context file is written (atomically) before the manifest names it;
  `remove_context` deletes it the way closing does (workspace_cleanup: regular
  files only, never through a symlink).

Only built-in modules are imported: `workspace_events.after_write` uses this
module inside PostToolUse.
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs
from agent_hooks import storage
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.workspaces import tree, workspace, workspace_manifest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Iterable
    from typing import Any

    from agent_hooks import identity

MAX_IDLE = 24 * 3600
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
        return f"{WORKSPACES_DIR}/{self.id}/{rel}"


def sessions_root(project: str) -> str:
    return fs.join(project, WORKSPACES_DIR)


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
    for part in WORKSPACES_DIR.split("/"):
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
    for part in (*WORKSPACES_DIR.split("/"), ws.id):
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
    from agent_hooks.agents import state_file

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
    ws: Workspace,
    mutate: Callable[[dict[str, Any]], object],
    now: float,
    *,
    durable: bool = True,
    after_write: Callable[[], None] | None = None,
) -> ManifestUpdate:
    """Read-modify-write the manifest under its lock; `last_activity` moves. Durable
    (fsynced) unless the caller is the hook hot path (see ADR-0008). `after_write`
    runs under the lock once the manifest is written (`storage.locked_update`)."""
    out: dict[str, Any] = {}
    problems: list[str] = []

    def apply(loaded: storage.Loaded) -> dict[str, Any]:
        if loaded.problem is not None:
            moved = f" (moved to {loaded.moved_to})" if loaded.moved_to else ""
            problems.append(loaded.problem + moved)
        doc = workspace_manifest.normalize_manifest(loaded.doc, ws.id, now)
        mutate(doc)
        workspace_manifest.touch(doc, now)
        out.update(doc)
        return doc

    held = storage.locked_update(
        ws.manifest_path, apply, now=now, durable=durable, after_write=after_write
    )
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
        lambda doc: workspace_manifest.add_file(
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
    # Text that is not valid Unicode (an argument's stray bytes) is kept as a
    # visible `\\udcff` escape: the file stays UTF-8.
    storage.write_bytes_atomic(path, content.encode("utf-8", "backslashreplace"))
    return register(ws, rel, now, recipient=recipient, keywords=keywords, replace=replace)


def remove_context(ws: Workspace, rel: str, now: float) -> str:
    """Untrack a context file and delete it; return what happened to the file
    ("removed", "already gone" or why it was left). The file goes only once the
    manifest no longer names it: when that write fails (a full disk) both stay."""
    workspace.check_relative(rel)
    outcome: list[str] = []

    def mutate(doc: dict[str, Any]) -> None:
        if rel not in doc["context_files"]:
            raise workspace.WorkspaceError(
                f"{ws.project_relative(rel)} is not tracked by workspace {ws.id}"
            )
        workspace_manifest.remove_file(doc, rel, now)

    def delete() -> None:
        fd = tree.open_workspace(ws.project, ws.id)
        try:
            outcome.append(tree.remove_tracked(fd, rel))
        finally:
            posix.close(fd)

    update_manifest(ws, mutate, now, after_write=delete)
    if not outcome:  # the manifest was unreadable and could not be rewritten without the lock
        raise workspace.WorkspaceError(f"workspace {ws.id}: manifest busy; nothing removed")
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
        last = workspace_manifest.idle_since(raw)
        if last is not None and now - last <= max_idle:
            out.append((ws, workspace_manifest.normalize_manifest(raw, ws_id, now)))
    return out
