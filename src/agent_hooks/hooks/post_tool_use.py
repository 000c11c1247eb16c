"""PostToolUse (Gemini's AfterTool): add what the tool touched to the agent's
trail (marked with the writer inside a subagent); after a shell command, keep
only the changed files that are this writer's, lease them, and warn if it
changed a file another writer holds; register files written into a workspace;
tell the writer about files it waited for that are free now, and other alerts;
keep the active work session's figures current; remember what a launched
subagent or teammate is called; record the reservations mcp_agent_mail's tools
granted.

What the tool did comes from the client layer (`ToolUse`); the adapter is the
same for every client.
"""

from __future__ import annotations

from agent_hooks import identity, preload, writers
from agent_hooks import posix_fs as fs
from agent_hooks.agents import state, state_file, trail
from agent_hooks.hooks import hook_runtime
from agent_hooks.tool_use import EDIT, LAUNCH, MODIFIED, READ, SHELL
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from agent_hooks.ledger.repo import Place, Repo, Repos
    from agent_hooks.tool_use import ToolUse

MAX_VISIBLE = 200  # files read from one command line (the rest are left to the net)
MAX_NOTED = 32  # files of one tool call whose fingerprints the writer's held files keep
MAX_REPOSITORIES = 8  # repositories one shell command's files are sorted into
# What noting a tool call's own writes always loads (after the event's preload).
WRITE_MODULES = (
    "agent_hooks.ledger.ledger_location",
    "agent_hooks.ledger.repo",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_store",
)
# What the aftermath of a shell command that changed files always loads (after the
# event's preload: agent_hooks.hooks.PRELOAD).
BASH_MODULES = (
    "agent_hooks.liveness",
    "agent_hooks.reservations",
    "agent_hooks.reservations.index_records",
    "agent_hooks.reservations.blocking",
    "agent_hooks.reservations.reservation_index",
    "agent_hooks.ledger.ledger_location",
    "agent_hooks.ledger.repo",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_minutes",
    "agent_hooks.leases.lease_store",
    "agent_hooks.leases.writer_cards",
    "agent_hooks.gate.shell_aftermath",
)
# What checking a writer's held files loads (only a writer that holds files has any).
HELD_MODULES = ("agent_hooks.leases.held_files",)


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    use = ctx.client.tool_use(ctx.event, ctx.payload)
    if use is None:
        return None
    if use.name.startswith("mcp__"):
        from agent_hooks.interop import mcp_agent_mail_hook  # only for MCP tools

        warning = mcp_agent_mail_hook.handle(ctx)
        return None if warning is None else hook_runtime.Answer(context=warning)
    found = trail.absolute(use.files, ctx.payload.get("cwd"))
    project = ctx.project_root()
    try:
        name = ctx.agent.name
        agent: identity.Agent | None = ctx.agent
    except identity.IdentityError as exc:
        ctx.log(f"{exc}; nothing recorded for this agent (fail open)")
        name, agent = None, None
    me = writers.from_payload(name, ctx.payload, ctx.environ, ctx.client.NAME)
    told: list[str] = []
    if use.kind == SHELL and not use.reported and use.command:  # the client did not say
        found += _visible_writes(ctx, use, project)
    written = _Written(ctx, use, found)
    if use.kind == SHELL and written.repos is not None:
        for top in _work_trees(written.repos, found, project):
            found = _after_shell(ctx, written.repos.repo(top), me, found, told, written)
    if use.kind == LAUNCH and project is not None:
        _describe_launched(ctx, project, me, use)
    if agent is not None:
        told += _record(ctx, agent, me, use, found, project, written)
    session = work_session_events.post_tool_use(ctx, name, project, found)
    if session is not None:
        told.append(session["additionalContext"])
    if not told:
        return None
    message = session["systemMessage"] if session is not None else None
    return hook_runtime.Answer(context="\n\n".join(told), message=message)


def _after_shell(
    ctx: hook_runtime.HookContext,
    repo: Repo,
    me: writers.Writer,
    found: list[tuple[str, str]],
    told: list[str],
    written: _Written,
) -> list[tuple[str, str]]:
    """The files the command changed that are this writer's (leased, with their
    fingerprints: `written`); a warning for held ones it changed."""
    preload(BASH_MODULES)
    from agent_hooks.gate import shell_aftermath

    changed = [path for _, path in found]
    result = shell_aftermath.after_bash(
        repo,
        me,
        changed,
        ctx.now,
        duration_ms=ctx.payload.get("duration_ms"),
        holder_pid=ctx.client.holder_pid(ctx.environ),
        marks=written.marks_in(repo),
    )
    written.leased(repo, result.held)
    for problem in result.problems:
        ctx.log(problem)
    if result.foreign:
        from agent_hooks.wording import plural

        ctx.log(
            f"{plural(len(result.foreign), 'file')} the client reported for this Bash command were "
            "written by another writer meanwhile: not attributed"
        )
    if result.warning is not None:
        ctx.log(result.warning)
        told.append(result.warning)
    return [(field, path) for field, path in found if path not in result.foreign]


class _Written:
    """The files this tool call wrote (at most MAX_NOTED): the repository each is
    held in and its path relative to that work tree, its fingerprint now, and the
    end of the writer's lease on it once that lease records the fingerprint — by
    the shell aftermath's own claim, or `note` for an edit's lease taken before."""

    __slots__ = ("ends", "places", "repos", "taken")

    def __init__(
        self, ctx: hook_runtime.HookContext, use: ToolUse, found: list[tuple[str, str]]
    ) -> None:
        self.places: dict[str, Place] = {}
        self.ends: dict[str, float] = {}
        self.taken: dict[str, str | None] = {}
        self.repos: Repos | None = None  # each file in the ledger of its repository
        if use.kind not in (EDIT, SHELL) or not found:
            return
        from agent_hooks import fingerprints

        preload(WRITE_MODULES)
        from agent_hooks.ledger.repo import Place, Repos

        self.repos = repos = Repos(ctx.state_dir, ctx.environ)
        for field, path in found:
            if len(self.places) >= MAX_NOTED:
                break
            repo = repos.of_file(path) if field != READ else None
            if repo is not None:
                self.places[path] = Place(repo, path[len(repo.root.rstrip("/")) + 1 :])
        self.taken = {path: fingerprints.of(path) for path in self.places}

    def held_at(self, path: str) -> tuple[str, str, str]:
        """Where the writer holds `path`, as its state records it: (ledger, rel, worktree)."""
        place = self.places[path]
        return place.repo.ledger, place.rel, place.repo.worktree

    def marks_in(self, repo: Repo) -> dict[str, str | None]:
        return {p.rel: self.taken[path] for path, p in self.places.items() if p.repo is repo}

    def leased(self, repo: Repo, held: dict[str, float]) -> None:
        """The aftermath's claims in `repo` recorded these files' fingerprints."""
        for path, place in self.places.items():
            if place.repo is repo and place.rel in held:
                self.ends[path] = held[place.rel]

    def note(self, writer: str, now: float) -> None:
        """Record the fingerprints on the writer's leases not noted yet (an edit's,
        taken at its PreToolUse), one lock per ledger."""
        todo = {path: place for path, place in self.places.items() if path not in self.ends}
        if not todo:
            return
        from agent_hooks.leases import lease_store

        repos = list({id(place.repo): place.repo for place in todo.values()}.values())
        for repo in repos:
            mine = {path: place.rel for path, place in todo.items() if place.repo is repo}
            marks = {rel: self.taken[path] for path, rel in mine.items()}
            noted = lease_store.note_written(repo.ledger, marks, writer, repo.worktree, now)
            self.ends.update({path: noted[rel] for path, rel in mine.items() if rel in noted})


def _work_trees(repos: Repos, found: list[tuple[str, str]], project: str | None) -> list[str]:
    """The work trees the files lie in (at most MAX_REPOSITORIES), the project first."""
    tops: list[str] = []
    for _, path in found:
        top = repos.top(fs.dirname(path))
        if top is not None and top not in tops:
            tops.append(top)
            if len(tops) >= MAX_REPOSITORIES:
                break
    return sorted(tops, key=lambda top: top != project)


def _visible_writes(
    ctx: hook_runtime.HookContext, use: ToolUse, project: str | None
) -> list[tuple[str, str]]:
    """The files a shell command visibly wrote, read from the command itself when
    the client reports none (Claude Code outside its auto and bypassPermissions
    modes, and for background commands; Codex; Gemini CLI): existing regular files
    only (a deleted file is held by nobody)."""
    from agent_hooks.shell import prefilter

    command = use.command
    if command is None or not prefilter.might_write(command):
        return []
    from agent_hooks.shell import plain  # only for a command that may write

    cwd = use.workdir or ctx.cwd or project or "/"
    paths = plain.targets(command, cwd)  # without loading the parser, when it can
    if paths is None:
        from agent_hooks import preload

        preload(prefilter.PARSER_MODULES)
        from agent_hooks.shell import writes

        analysis = writes.analyze(command, cwd, ctx.environ.get("HOME"))
        paths = [target.path for target in analysis.targets[:MAX_VISIBLE] if not target.glob]
    return [(MODIFIED, fs.normpath(path)) for path in paths[:MAX_VISIBLE] if fs.isfile(path)]


def _describe_launched(
    ctx: hook_runtime.HookContext, project: str, me: writers.Writer, use: ToolUse
) -> None:
    """Remember the description (and a teammate's name) of the agent just launched,
    so that its leases name it: the hook events inside it carry only its id."""
    launched_by = use.launched or {}
    launched = writers.safe_id(launched_by.get("agent_id"))
    if launched is None:
        return
    from agent_hooks.leases import lease_release
    from agent_hooks.ledger import ledger_location

    kind = launched_by.get("agent_type")
    sub = writers.Writer(
        me.agent, me.conversation, launched, kind if isinstance(kind, str) else None, me.client
    )
    try:
        lease_release.describe_writer(
            ledger_location.directory(ctx.state_dir, project),
            sub,
            description=writers.short_text(launched_by.get("description"), 80),
            name=writers.short_text(launched_by.get("name"), 64),
            now=ctx.now,
        )
    except OSError as exc:
        ctx.log(f"subagent {launched} not described: {exc}")


def _record(
    ctx: hook_runtime.HookContext,
    agent: identity.Agent,
    me: writers.Writer,
    use: ToolUse,
    found: list[tuple[str, str]],
    project: str | None,
    written: _Written,
) -> list[str]:
    """The trail, the writer's held files (its own writes noted on their leases,
    in the ledgers of their repositories, and others' changes found:
    `leases.held_files`), waiting notes and alerts, in one state update."""
    limit = trail.read_limit(ctx.environ)
    workspaces = trail.workspace_prefix(project)
    marked = me.key if me.agent_id else None
    written.note(me.key, ctx.now)
    taken, ends = written.taken, written.ends
    window = _window(ctx, use)
    told: list[str] = []
    beat: list[bool] = []
    changes: list[Any] = []  # held_files.Change: held files someone else changed
    maybe_own: list[Any] = []
    overflow: list[tuple[str, str]] = []
    conversation: list[object] = []

    def mutate(doc: dict[str, Any]) -> bool:
        recorded = (
            trail.record(doc, found, limit, workspaces, marked, taken, overflow) if found else False
        )
        conversation[:] = [doc["conversation_id"]]
        foreign: list[Any] = []
        own: list[Any] = []
        maybe_own.clear()
        if ends or doc["held"]:  # only a writer that holds files has any to watch
            preload(HELD_MODULES)
            from agent_hooks.leases import held_files

            if use.kind == SHELL and use.reported:
                # A held file the client says the command changed, which the command line
                # does not visibly write, may have been changed by someone else while the
                # command ran (the client blames every change on it): said, not assumed.
                blamed = held_files.moved(doc, me.key, {p: taken.get(p) for p in ends})
                if blamed:  # rare, so read here, under the lock, rather than on every call
                    seen = {path for _, path in _visible_writes(ctx, use, project)}
                    own.extend(c for c in blamed if c.path not in seen)
            for path, until in ends.items():
                held_files.note(
                    doc, me.key, path, taken.get(path), written.held_at(path), until, ctx.now
                )
            start = window[0] if window is not None else doc["last_activity"]
            foreign, inside = held_files.check(
                doc, me.key, ctx.now, (start, ctx.now) if use.kind == SHELL else None
            )
            own.extend(inside)
            changes.extend(foreign)
            maybe_own.extend(own)
        moved = state.touch(doc, ctx.now, state.ACTIVITY_RESOLUTION)
        if moved and doc["reservations"]:
            beat.append(True)
        changed = moved or recorded or bool(ends) or bool(foreign) or bool(own)
        if doc["waiting"]:
            from agent_hooks.gate import waiting  # only while a writer waits

            before = len(doc["waiting"])
            told.extend(waiting.freed(doc, me, ctx.state_dir, ctx.now))
            changed = changed or len(doc["waiting"]) != before
        if doc["alerts"] or (me.conversation and me.conversation in doc["alerts_for"]):
            told.extend(state.take_alerts(doc, me.conversation))
            changed = True
        return changed

    if found or state_file.exists(agent):  # a new agent holds nothing yet
        state_file.update(agent, mutate, ctx.now, ctx.log)
    if overflow:  # left the trail's window: kept beside the state, which stays small
        from agent_hooks.agents import trail_spill

        try:
            trail_spill.spill(agent, conversation[0] if conversation else None, overflow)
        except OSError as exc:
            ctx.log(f"{len(overflow)} trail entries that left the window not kept: {exc}")
    told += _changed_held_files(ctx, me, changes, maybe_own)
    if beat and project is not None:
        from agent_hooks.leases import writer_cards
        from agent_hooks.ledger import ledger_location

        owner = writers.Writer(me.agent, me.conversation, client=me.client)
        writer_cards.heartbeat(
            ledger_location.directory(ctx.state_dir, project),
            owner,
            ctx.client.holder_pid(ctx.environ),
            ctx.now,
        )
    if workspaces is not None and project is not None and use.kind == EDIT:
        for _, path in found:
            if path.startswith(workspaces):
                # only for a file written into a workspace
                from agent_hooks.workspaces import workspace_events

                workspace_events.after_write(ctx, agent, project, path)
    return told


def _window(ctx: hook_runtime.HookContext, use: ToolUse) -> tuple[float, float] | None:
    """When a shell command ran, as far as the client says (`duration_ms`)."""
    took = ctx.payload.get("duration_ms")
    if use.kind != SHELL or isinstance(took, bool) or not isinstance(took, int | float):
        return None
    return (ctx.now - max(0.0, took / 1000), ctx.now)


def _changed_held_files(
    ctx: hook_runtime.HookContext, me: writers.Writer, changes: list[Any], maybe_own: list[Any]
) -> list[str]:
    """What to tell the holder of files someone else changed (and note on their
    leases, for `reservations` and `watch`); a change during its own shell
    command is told as possibly its own."""
    if not changes and not maybe_own:
        return []
    from agent_hooks import durations, timestamps
    from agent_hooks.leases import lease_store

    told = []
    for change in changes:
        held = [
            item
            for item in lease_store.read(change.ledger, change.rel)
            if item.get("writer") == me.key and item.get("worktree") == change.worktree
        ]
        if not held:
            continue  # released meanwhile: not this writer's any more
        noted = held[0].get("changed")
        by = noted.get("by") if isinstance(noted, dict) else None
        who = by if isinstance(by, str) else _UNSEEN
        if noted is None:
            lease_store.mark_changed(change.ledger, change.rel, change.worktree, None, change.at)
        ctx.log(f"held file {change.rel} of {me.key} changed by {who}")
        told.append(
            f"agent-hooks: {change.rel}, which you are changing, was changed by {who} at "
            f"{timestamps.local(change.at)} ({durations.ago(ctx.now - change.at)}), "
            f"after your last write to it. Re-read it before you edit it, and check that "
            "your changes are still there; if they are not, tell the user."
        )
    for change in maybe_own:
        ctx.log(f"held file {change.rel} of {me.key} changed while its shell command ran")
        told.append(
            f"agent-hooks: {change.rel}, which you are changing, changed while your last "
            "shell command ran. If your command did not write it, someone else did: "
            "re-read it before you edit it."
        )
    return told


_UNSEEN = (
    "someone else (a process agent-hooks does not see: a script, git, an editor, "
    "an agent without hooks)"
)


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
