"""What the hook adapters call for workspaces.

* `session_start_lines` (SessionStart, after the state update and the trail
  archive): the agent's workspace and its context files; it also sweeps the
  project's workspaces idle for 24 h (sparing the agent's own). A failure is
  logged and the other SessionStart lines still come.
* `after_write` (PostToolUse, for a Write into `<project>/.tmp/sessions/`):
  tracks the file in its workspace's manifest. Hot path: this module imports only
  built-in modules at load time, and `after_write` only `workspace` and
  `workspace_store` (built-ins only as well).

Both take plain values from the adapter — the time, the conversation, and `log`
(the hook's log, for what went wrong) — and return text, never a client's output.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks.wording import plural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    from agent_hooks import identity

MAX_FILES_LISTED = 15


def after_write(
    agent: identity.Agent,
    project: str,
    path: str,
    conversation: str | None,
    now: float,
    log: Callable[[str], None],
) -> None:
    """Track a file the agent wrote (in `conversation`, when the client names it)
    into a workspace: when the workspace has a manifest, or is the one bound to this
    agent's conversation (its manifest is then created). Keywords come from the
    file's path."""
    from agent_hooks import storage
    from agent_hooks.workspaces import workspace, workspace_store

    root = workspace_store.sessions_root(project)
    found = workspace.split_workspace_path(root, fs.normpath(path))
    if found is None:
        return
    ws_id, rel = found
    ws = workspace_store.Workspace(project, ws_id)
    try:
        workspace_store.check_real(ws)
    except workspace.WorkspaceError as exc:
        log(f"{rel} written in workspace {ws_id}: {exc}; not tracked")
        return
    if not fs.lexists(ws.manifest_path):
        doc = storage.load_json_object(agent.state_path, aside=True).doc or {}
        mine = workspace_store.bound(doc, project)
        same = conversation in (None, doc.get("conversation_id"))
        if mine is None or mine.id != ws_id or not same:
            log(
                f"{rel} written in workspace {ws_id}, which has no manifest and is not "
                "yours: not tracked"
            )
            return
    result = workspace_store.register(ws, rel, now, durable=False)  # hot path: no fsync
    if not result.held:
        log(f"manifest lock of workspace {ws_id} not acquired; {rel} tracked without it")
    if result.problem:
        log(f"workspace {ws_id}: manifest was unreadable ({result.problem}); a new one begun")


def session_start_lines(
    doc: dict[str, Any], project: str | None, now: float, log: Callable[[str], None]
) -> list[str]:
    """Lines for SessionStart's context for the model: the agent's workspace and its
    context files, and other live workspaces — nothing when none is in use. Sweeps the
    project's workspaces idle for 24 h, sparing the agent's own."""
    if project is None:
        return []
    lines: list[str] = []
    keep: list[str] = []
    try:
        from agent_hooks.workspaces import workspace_store

        ws = workspace_store.bound(doc, project)
        keep = [ws.id] if ws is not None else []
        lines += _workspace_lines(ws, project, now)
    except Exception as exc:  # one part failing must not silence the others
        log(f"workspace lines failed: {type(exc).__name__}: {exc}")
    _sweep(project, keep, now, log)
    return lines


def _workspace_lines(ws: Any, project: str, now: float) -> list[str]:
    from agent_hooks.workspaces import workspace_manifest, workspace_store

    lines = []
    others = [(w, m) for w, m in workspace_store.live(project, now) if ws is None or w.id != ws.id]
    if ws is not None:
        raw, problem = workspace_store.read_manifest(ws)
        files = (
            workspace_manifest.normalize_manifest(raw, ws.id, now)["context_files"] if raw else {}
        )
        lines.append(
            f"Your workspace for context hand-off: {ws.path}/ "
            + (f"({plural(len(files), 'context file')}):" if raw else f"({problem}).")
        )
        for rel, entry in list(files.items())[:MAX_FILES_LISTED]:
            words = ", ".join(entry["keywords"])
            note = f" (keywords: {words})" if words else ""
            lines.append(f"- {ws.project_relative(rel)}{note}")
        if len(files) > MAX_FILES_LISTED:
            more = len(files) - MAX_FILES_LISTED
            lines.append(f"- … and {more} more (`agent-hooks context list`)")
    if others:
        count = sum(len(m["context_files"]) for _, m in others)
        lines.append(
            f"Other live workspaces in this project: {len(others)} "
            f"({plural(count, 'context file')}); search them with "
            "`agent-hooks context find KEYWORD --all`."
        )
    return lines


def _sweep(project: str, keep: list[str], now: float, log: Callable[[str], None]) -> None:
    try:
        from agent_hooks.workspaces import workspace_cleanup

        swept = workspace_cleanup.sweep(project, now, keep=keep)
    except Exception as exc:
        log(f"workspace sweep failed: {type(exc).__name__}: {exc}")
        return
    if swept.closed:
        log(f"swept {plural(len(swept.closed), 'workspace')} idle for 24 h: {', '.join(swept.ids)}")
    for warning in swept.warnings:
        log(f"workspace sweep: {warning}")
