"""What the hook adapters call to keep the project's active work session current.

`post_tool_use` runs inside PostToolUse for every Write/Edit/Read/Bash call of
every agent. Without an active work session it costs one `posix.stat` of the
pointer file and nothing else: this module imports only `posix` and `posix_fs`
(both already loaded by every hook), and `work_session_recording` (the store,
the document, the transcript reader) is imported only once a pointer exists.

The adapters hand over a `Turn` — plain values, nothing of a client's module or of
the hooks — and get back text: `post_tool_use` returns what the model is told and
what the person is shown, which the adapter puts in its answer.
"""

from __future__ import annotations

from agent_hooks.work_sessions.location import active_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping

    from agent_hooks.tool_use import HookEvent, ToolUse


class Turn:
    """One hook call as the work session reads it: the client's `hook` event (its
    conversation, transcript, subagent's id, type and transcript), the tool call
    it made (`use`, None for none; the subagent a launch started), the `agent`'s
    name (`-` for none, or a bad AGENT_NAME: only a label here), whether the client's
    `transcripts` carry token figures, the time `now`, and `log`, the hook's log for
    what went wrong."""

    __slots__ = ("agent", "hook", "log", "now", "transcripts", "use")

    def __init__(
        self,
        hook: HookEvent,
        use: ToolUse | None,
        agent: str | None,
        now: float,
        log: Callable[[str], None],
        *,
        transcripts: bool,
    ) -> None:
        self.hook = hook
        self.use = use
        self.agent = agent or "-"
        self.now = now
        self.log = log
        self.transcripts = transcripts


def post_tool_use(
    turn: Turn, environ: Mapping[str, str], project: str | None, found: list[tuple[str, str]]
) -> tuple[str, str] | None:
    """Record created files as artifacts, refresh this conversation's figures,
    and return (what the model is told, what the person is shown) when its context
    first passes 80 % or 95 % of the budget; None otherwise (and always without a
    work session). Failures are logged, never raised."""
    directory = active_dir(environ, project)
    if directory is None:
        return None
    from agent_hooks.work_sessions import work_session_recording

    return work_session_recording.post_tool_use(turn, project, found, directory)


def subagent_start(turn: Turn, environ: Mapping[str, str], project: str | None) -> None:
    """Record a subagent in `agents_spawned` when it starts."""
    directory = active_dir(environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.subagent_start(turn, directory)


def subagent_stop(turn: Turn, environ: Mapping[str, str], project: str | None) -> None:
    """Record a subagent's end and the tokens its own transcript shows it used."""
    directory = active_dir(environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.subagent_stop(turn, directory)


def stop(turn: Turn, environ: Mapping[str, str], project: str | None) -> None:
    """Refresh this conversation's figures at the end of a turn (never warns)."""
    directory = active_dir(environ, project)
    if directory is not None:
        from agent_hooks.work_sessions import work_session_recording

        work_session_recording.stop(turn, directory)


def session_start_lines(
    project: str | None, now: float, environ: Mapping[str, str] | None = None
) -> list[str]:
    """One or two lines on the active work session for the SessionStart context."""
    directory = active_dir(environ or {}, project)
    if directory is None:
        return []
    from agent_hooks.work_sessions import work_session_recording

    return work_session_recording.session_start_lines(directory, now)
