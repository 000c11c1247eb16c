"""The work of keeping an active work session current, loaded by
`work_session_events` only once a project has an active work session (its pointer
file exists): artifacts, token figures from transcripts, subagents, warnings.

Invariants (docs/adr/0009-work-sessions.md):

* Only a work session whose status is active or blocked is updated; a paused
  one is left alone (no artifacts, no figures) until it is resumed.
* Figures are kept per conversation (`conversations[<session_id>]`): each
  agent's own context, read incrementally from its own transcript. Tool calls
  made inside a subagent (the hook event's `agent_id`) never move the main
  conversation's figures; the subagent's tokens arrive with SubagentStop or,
  when its transcript is not final yet then (the client writes it late), at a
  later hook: every hook here reads on the pending ones first
  (`work_sessions/subagents.py`).
* The 80 % and 95 % warnings are told once each per conversation (a context
  that falls back below a threshold, after a compaction, re-arms it); Stop
  refreshes figures but never warns, so a crossing found at Stop is told at the
  next tool call.
* Every failure is logged through the turn's `log` and swallowed: these functions
  never stop the adapter's own work (fail open).
* Linear in the files a tool call reports: at most `MAX_NEW_ARTIFACTS` created
  files become artifacts per call (the number left out is logged).
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import timestamps
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.tool_use import LAUNCH
from agent_hooks.wording import plural
from agent_hooks.work_sessions.location import LIVE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any, Protocol

    from agent_hooks.tool_use import HookEvent, ToolUse

    class Turn(Protocol):
        """A `work_session_events.Turn`, as the type checker reads it here (that
        module loads this one: naming it back would close a loop of imports)."""

        hook: HookEvent
        use: ToolUse | None
        agent: str
        now: float
        transcripts: bool

        def log(self, message: str, /) -> None: ...


def post_tool_use(
    turn: Turn, project: str | None, found: list[tuple[str, str]], directory: str
) -> tuple[str, str] | None:
    """`work_session_events.post_tool_use` for the active work session in `directory`."""
    try:
        return _post_tool_use(turn, project, found, directory)
    except Exception as exc:
        turn.log(f"work session not updated: {type(exc).__name__}: {exc}")
        return None


def _post_tool_use(
    turn: Turn, project: str | None, found: list[tuple[str, str]], directory: str
) -> tuple[str, str] | None:
    from agent_hooks.work_sessions import work_session

    hook = turn.hook
    agent = turn.agent
    subagent = hook.agent_type if hook.agent_id else None
    created = _artifact_paths(found, project, directory)
    launched = _launched_agent(turn.use)
    told: list[tuple[str, str]] = []

    left_out: list[int] = []

    def mutate(doc: dict[str, Any]) -> bool:
        changed = _retry_pending(doc, turn)
        added, left = work_session.record_artifacts(
            doc, created, agent, turn.now, subagent if isinstance(subagent, str) else None
        )
        left_out[:] = [left]
        changed = added > 0 or changed
        if launched is not None:
            record = work_session.spawned_agent(doc, launched[0])
            record["output_file"] = launched[1]
            record["started"] = record["started"] or timestamps.iso(turn.now)
            changed = True
        if hook.agent_id:  # inside a subagent: not the main conversation's turn
            return changed
        entry, moved = _refresh(doc, turn)
        if entry is None:
            return changed
        budget, current = doc["tokens"]["max"], entry["current"]
        warned, fire = work_session.due_warning(current, budget, entry["warned"])
        if fire is not None:
            told.append(work_session.warning_texts(doc["session_id"], fire, current, budget))
        if warned != entry["warned"]:
            entry["warned"] = warned
            changed = True
        return changed or moved

    if not _update(turn, directory, mutate):
        return None
    if left_out and left_out[0]:
        turn.log(
            f"work session: {left_out[0]} more created files not recorded as artifacts "
            f"(at most {work_session.MAX_NEW_ARTIFACTS} per tool call)"
        )
    if not told:
        return None
    model, user = told[0]
    turn.log(f"told the model: {user}")
    return model, user


def _artifact_paths(found: list[tuple[str, str]], project: str | None, directory: str) -> list[str]:
    """Created files inside the project, relative to it, outside the sessions
    directory and the workspaces (one pass of string tests: a Bash command can
    report hundreds of thousands)."""
    if not project:
        return []
    root = project.rstrip("/") + "/"
    skip = tuple(p.rstrip("/") + "/" for p in (directory, fs.join(project, WORKSPACES_DIR)))
    cut = len(root)
    return [
        path[cut:]
        for field, path in found
        if field == "files_created"
        and path.startswith(root)
        and len(path) > cut
        and not (path + "/").startswith(skip)
    ]


def _launched_agent(use: ToolUse | None) -> tuple[str, str] | None:
    """(agent id, output file) of the subagent a tool call launched, when the client
    says both (Claude Code's Agent tool does)."""
    launched = use.launched if use is not None and use.kind == LAUNCH else None
    if not launched:
        return None
    agent_id, output = launched.get("agent_id"), launched.get("output_file")
    if isinstance(agent_id, str) and agent_id and isinstance(output, str) and output:
        return agent_id, output
    return None


def _refresh(doc: dict[str, Any], turn: Turn) -> tuple[dict[str, Any] | None, bool]:
    """Read this conversation's transcript from its stored offset and store the
    figures. (The conversation's entry or None when there is no transcript to
    read, whether anything was new.) An entry always has int `current` and a
    list `warned`."""
    from agent_hooks.work_sessions import transcript, work_session

    agent = turn.agent
    conversation = turn.hook.session
    path = turn.hook.transcript
    if (
        not turn.transcripts  # another client's transcripts say nothing we can read
        or not conversation
        or path is None
    ):
        return None, False
    old = doc["conversations"].get(conversation)
    cursor = transcript.advance(old, path)
    if cursor is None:
        return None, False
    entry = dict(old or {})
    moved = entry.get("agent") != agent or any(entry.get(k) != v for k, v in cursor.items())
    entry.update(cursor)
    entry["agent"] = agent
    warned = entry.get("warned")
    thresholds = (work_session.WARN_PERCENT, work_session.CRITICAL_PERCENT)
    entry["warned"] = [t for t in warned if t in thresholds] if isinstance(warned, list) else []
    if moved:
        work_session.apply_figures(doc, conversation, entry, turn.now)
    else:
        doc["conversations"][conversation] = entry
    return entry, moved


def _retry_pending(doc: dict[str, Any], turn: Turn) -> bool:
    """Read on the transcripts of subagents whose figures are not final yet; an
    empty pending list costs this test only (no import, no read)."""
    if not doc["pending_subagents"]:
        return False
    from agent_hooks.work_sessions import subagents

    return subagents.retry(doc, turn.now, turn.log)


def _update(turn: Turn, directory: str, mutate: Callable[[dict[str, Any]], bool]) -> bool:
    """Run `mutate` on the active work session under the lock; False (logged) on failure."""
    from agent_hooks.work_sessions import work_session, work_session_store

    try:
        return (
            work_session_store.Store(directory, durable=False).update_active(
                mutate, turn.now, statuses=LIVE
            )
            is not None
        )
    except (work_session.WorkSessionError, OSError) as exc:
        turn.log(f"work session in {directory} not updated: {exc}")
        return False


def subagent_start(turn: Turn, directory: str) -> None:
    """Record a subagent in `agents_spawned` when it starts."""
    agent_id = turn.hook.agent_id
    if not agent_id:
        return
    from agent_hooks.work_sessions import work_session

    kind = turn.hook.agent_type

    def mutate(doc: dict[str, Any]) -> bool:
        record = work_session.spawned_agent(doc, agent_id)
        record["type"] = kind if isinstance(kind, str) and kind else record["type"]
        record["started"] = record["started"] or timestamps.iso(turn.now)
        record["agent"] = turn.agent
        record["conversation"] = turn.hook.session
        _retry_pending(doc, turn)
        return True

    try:
        _update(turn, directory, mutate)
    except Exception as exc:
        turn.log(f"work session not updated at SubagentStart: {type(exc).__name__}: {exc}")


def subagent_stop(turn: Turn, directory: str) -> None:
    """Record a subagent's end and the tokens its own transcript shows it used;
    one whose transcript is not final yet goes on the pending list
    (`work_sessions/subagents.py`), and the others pending are read on."""
    agent_id = turn.hook.agent_id
    if not agent_id:
        return
    try:
        _subagent_stop(turn, directory, agent_id)
    except Exception as exc:
        turn.log(f"work session not updated at SubagentStop: {type(exc).__name__}: {exc}")


def _subagent_stop(turn: Turn, directory: str, agent_id: str) -> None:
    from agent_hooks.work_sessions import subagents, transcript, work_session

    path, main = turn.hook.agent_transcript, turn.hook.transcript
    if not turn.transcripts:
        path = main = None
    if path is None and main is not None:  # an older client: where it writes, or beside it
        path = transcript.subagent_transcript(
            main, agent_id
        ) or transcript.expected_subagent_transcript(main, agent_id)
    kind = turn.hook.agent_type
    if not kind and path:
        kind = transcript.subagent_type(path)

    def mutate(doc: dict[str, Any]) -> bool:
        work_session.drop_pending(doc, agent_id)  # read below, from where it was left
        subagents.retry(doc, turn.now, turn.log)
        record = work_session.spawned_agent(doc, agent_id)
        record["type"] = kind if isinstance(kind, str) and kind else record["type"]
        record["output_file"] = record["output_file"] or path
        record.setdefault("agent", turn.agent)
        subagents.record_stop(doc, agent_id, path, turn.now, turn.log)
        return True

    _update(turn, directory, mutate)


def stop(turn: Turn, directory: str) -> None:
    """Refresh this conversation's figures at the end of a turn (never warns),
    and read on the transcripts of subagents still pending."""
    if turn.hook.agent_id:
        return

    def mutate(doc: dict[str, Any]) -> bool:
        settled = _retry_pending(doc, turn)
        return _refresh(doc, turn)[1] or settled

    try:
        _update(turn, directory, mutate)
    except Exception as exc:
        turn.log(f"work session not updated at Stop: {type(exc).__name__}: {exc}")


def session_start_lines(directory: str, now: float) -> list[str]:
    """One or two lines on the active work session in `directory` for SessionStart."""
    from agent_hooks.work_sessions import work_session, work_session_store

    try:
        found = work_session_store.Store(directory).active()
    except (work_session.WorkSessionError, OSError) as exc:
        return [f"Work session: the active work session in {directory} cannot be read: {exc}"]
    if found is None or found.archived:
        return []
    doc = found.doc
    tokens = doc["tokens"]
    if doc["status"] == "paused":
        return [
            f"Work session {doc['session_id']} {work_session.PAUSED} is paused; "
            "`agent-hooks session resume` continues it."
        ]
    done = sum(1 for m in doc["milestones"] if m["completed"])
    share = work_session.pct_text(work_session.percent(tokens["current"], tokens["max"]))
    lines = [
        f"Work session {doc['session_id']} {work_session.indicator(doc)} ({doc['status']}): "
        f"{done}/{len(doc['milestones'])} milestones done, "
        f"{plural(len(doc['artifacts']), 'artifact')}, "
        f"last measured context {tokens['current']:,}/{tokens['max']:,} tokens ({share}). "
        "`agent-hooks session resume` shows its summary; record progress with "
        "`agent-hooks session milestone done NAME` and `agent-hooks session summary TEXT`."
    ]
    summary = doc["context_summary"].strip()
    if summary:
        first = summary.splitlines()[0]
        lines.append("Last context: " + (first[:200] + "…" if len(first) > 200 else first))
    return lines
