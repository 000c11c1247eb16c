"""What the hook adapters call to keep the project's active work session current.

`post_tool_use` runs inside PostToolUse for every Write/Edit/Read/Bash call of
every agent. Without an active work session it costs one `posix.stat` of the
pointer file and nothing else: this module imports only `posix` and `posix_fs`
(both already loaded by every hook), and `work_session_recording` (the store,
the document, the transcript reader) is imported only once a pointer exists.
"""

from __future__ import annotations

from agent_hooks.work_sessions.location import active_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.hooks.hook_runtime import HookContext


def post_tool_use(
    ctx: HookContext, agent_name: str | None, project: str | None, found: list[tuple[str, str]]
) -> dict[str, Any] | None:
    """Record created files as artifacts, refresh this conversation's figures,
    and return `{"additionalContext", "systemMessage"}` when its context first
    passes 80 % or 95 % of the budget; None otherwise (and always without a
    work session). Failures are logged, never raised."""
    directory = active_dir(ctx.environ, project)
    if directory is None:
        return None
    from agent_hooks.work_sessions import work_session_recording

    return work_session_recording.post_tool_use(ctx, agent_name, project, found, directory)


def subagent_start(ctx: HookContext, project: str | None) -> None:
    """Record a subagent in `agents_spawned` when it starts."""
    directory = active_dir(ctx.environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.subagent_start(ctx, directory)


def subagent_stop(ctx: HookContext, project: str | None) -> None:
    """Record a subagent's end and the tokens its own transcript shows it used."""
    directory = active_dir(ctx.environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.subagent_stop(ctx, directory)


def stop(ctx: HookContext, project: str | None) -> None:
    """Refresh this conversation's figures at the end of a turn (never warns)."""
    directory = active_dir(ctx.environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.stop(ctx, directory)


def session_start_lines(
    project: str | None, now: float, environ: Mapping[str, str] | None = None
) -> list[str]:
    """One or two lines on the active work session for the SessionStart context."""
    directory = active_dir(environ or {}, project)
    if directory is None:
        return []
    from agent_hooks.work_sessions import work_session_recording

    return work_session_recording.session_start_lines(directory, now)
