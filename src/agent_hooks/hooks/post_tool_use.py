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
from agent_hooks.tool_use import EDIT, LAUNCH, MCP, MODIFIED, READ, SHELL, SLACK, reported_window
from agent_hooks.work_sessions import work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from agent_hooks.ledger.repo import Repo, Repos
    from agent_hooks.tool_use import ToolUse, Window

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
# What keeping a version of a held file loads (kept versions: a writer's own write).
KEPT_MODULES = ("agent_hooks.kept.kept_store",)
# What noting when a shell command ran loads (after WRITE_MODULES).
COMMAND_MODULES = ("agent_hooks.leases.lease", "agent_hooks.leases.command_log")


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    use = ctx.tool_use()
    if use is None:
        return None
    if use.kind == MCP and use.mcp is not None:
        from agent_hooks.interop import mcp_agent_mail_hook  # only for MCP tools

        warning = mcp_agent_mail_hook.handle(ctx, use.mcp)
        return None if warning is None else hook_runtime.Answer(context=warning)
    found = trail.absolute(use.files, ctx.cwd)
    project = ctx.project_root()
    try:
        name = ctx.agent.name
        agent: identity.Agent | None = ctx.agent
    except identity.IdentityError as exc:
        ctx.log(f"{exc}; nothing recorded for this agent (fail open)")
        name, agent = None, None
    me = writers.from_event(name, ctx.hook, ctx.client.NAME)
    told: list[str] = []
    if use.kind == SHELL and not use.reported and use.command:  # the client did not say
        found += _visible_writes(ctx, use, project)
    written = _Written(ctx, use, found)
    window = reported_window(ctx.hook.duration_ms, ctx.now) if use.kind == SHELL else None
    if use.kind == SHELL and project is not None and agent is not None:
        _ended(ctx, me, written.home(ctx, project), window)
    if use.kind == SHELL and written.repos is not None:
        for top in _work_trees(written.repos, found, project):
            repo = written.repos.repo(top)
            found = _after_shell(ctx, repo, me, found, window, told, written)
    if use.kind == LAUNCH and project is not None:
        _describe_launched(ctx, project, me, use)
    if agent is not None:
        told += _record(agent, _StateUpdate(ctx, me, use, found, project, written, window))
    if written.ends:
        _keep(ctx, me, written)
    turn = work_session_events.Turn(
        ctx.hook, use, name, ctx.now, ctx.log, transcripts=ctx.client.TRANSCRIPTS
    )
    session = work_session_events.post_tool_use(turn, ctx.environ, project, found)
    if session is not None:
        told.append(session[0])  # what the model is told; the person is shown session[1]
    if not told:
        return None
    message = session[1] if session is not None else None
    return hook_runtime.Answer(context="\n\n".join(told), message=message)


def _after_shell(
    ctx: hook_runtime.HookContext,
    repo: Repo,
    me: writers.Writer,
    found: list[tuple[str, str]],
    window: Window | None,
    told: list[str],
    written: _Written,
) -> list[tuple[str, str]]:
    """The files the command changed that are this writer's (leased, with their
    fingerprints: `written`); a warning for held ones it changed. `window`: when the
    command ran, as the client reports it."""
    preload(BASH_MODULES)
    from agent_hooks.gate import shell_aftermath

    changed = [path for _, path in found]
    result = shell_aftermath.after_bash(
        repo,
        me,
        changed,
        ctx.now,
        window=window,
        holder_pid=ctx.client.holder_pid(ctx.environ),
        fingerprint_of=written.fingerprints_in(repo),
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

    __slots__ = ("ends", "fingerprint_of", "places", "repos")

    def __init__(
        self, ctx: hook_runtime.HookContext, use: ToolUse, found: list[tuple[str, str]]
    ) -> None:
        self.places: dict[str, tuple[Repo, str]] = {}  # path -> (its repository, rel)
        self.ends: dict[str, float] = {}
        self.fingerprint_of: dict[str, str | None] = {}
        self.repos: Repos | None = None  # each file in the ledger of its repository
        if use.kind not in (EDIT, SHELL) or not found:
            return
        from agent_hooks import fingerprints

        preload(WRITE_MODULES)
        from agent_hooks.ledger.repo import Repos

        self.repos = repos = Repos(ctx.state_dir, ctx.environ)
        for field, path in found:
            if len(self.places) >= MAX_NOTED:
                break
            repo = repos.of_file(path) if field != READ else None
            if repo is not None:
                self.places[path] = (repo, path[len(repo.root.rstrip("/")) + 1 :])
        self.fingerprint_of = {path: fingerprints.of(path) for path in self.places}

    def home(self, ctx: hook_runtime.HookContext, project: str) -> Repo:
        """The project's repository (worked out once, with the files' own)."""
        if self.repos is None:
            preload(WRITE_MODULES)
            from agent_hooks.ledger.repo import Repos

            self.repos = Repos(ctx.state_dir, ctx.environ)
        return self.repos.repo(project)

    def held_at(self, path: str) -> tuple[str, str, str]:
        """Where the writer holds `path`, as its state records it: (ledger, rel, worktree)."""
        repo, rel = self.places[path]
        return repo.ledger, rel, repo.worktree

    def fingerprints_in(self, repo: Repo) -> dict[str, str | None]:
        return {
            rel: self.fingerprint_of[path] for path, (r, rel) in self.places.items() if r is repo
        }

    def leased(self, repo: Repo, held: dict[str, float]) -> None:
        """The aftermath's claims in `repo` recorded these files' fingerprints."""
        for path, (r, rel) in self.places.items():
            if r is repo and rel in held:
                self.ends[path] = held[rel]

    def note(self, writer: str, now: float) -> None:
        """Record the fingerprints on the writer's leases not noted yet (an edit's,
        taken at its PreToolUse), one lock per ledger."""
        todo = {path: place for path, place in self.places.items() if path not in self.ends}
        if not todo:
            return
        from agent_hooks.leases import lease_store

        repos = list({id(repo): repo for repo, _ in todo.values()}.values())
        for repo in repos:
            mine = {path: rel for path, (r, rel) in todo.items() if r is repo}
            fingerprint_of = {rel: self.fingerprint_of[path] for path, rel in mine.items()}
            noted = lease_store.note_written(
                repo.ledger, fingerprint_of, writer, repo.worktree, now
            )
            self.ends.update({path: noted[rel] for path, rel in mine.items() if rel in noted})


def _ended(
    ctx: hook_runtime.HookContext, me: writers.Writer, home: Repo, window: Window | None
) -> None:
    """The writer's shell command ended now, as the project's ledger keeps it
    (`leases.command_log`; its start too where the client reports how long it
    ran): a held file changed while it ran is put down to it."""
    preload(COMMAND_MODULES)
    from agent_hooks.leases import command_log

    call_id = writers.safe_id(ctx.hook.tool_use_id)
    try:
        command_log.ended(home.ledger, me, home.worktree, call_id, window, ctx.now)
    except (OSError, ValueError) as exc:
        ctx.log(f"when this shell command ran not kept: {exc}")


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


def _record(agent: identity.Agent, update: _StateUpdate) -> list[str]:
    """The trail, the writer's held files (its own writes noted on their leases,
    in the ledgers of their repositories, and others' changes found:
    `leases.held_files`), waiting notes and alerts, in one state update; then what
    the update found is told and kept, outside the agent's lock."""
    ctx, me, use, found, project = update.ctx, update.me, update.use, update.found, update.project
    update.written.note(me.key, ctx.now)
    if found or state_file.exists(agent):  # a new agent holds nothing yet
        state_file.update(agent, update.apply, ctx.now, ctx.log)
    if update.overflow:  # left the trail's window: kept beside the state, which stays small
        _spill(ctx, agent, update)
    maybe_own = _maybe_own(ctx, use, project, update)
    changes = update.changes
    if maybe_own and update.window is None and project is not None:
        home = update.written.home(ctx, project)
        changes, maybe_own = _since_it_started(ctx, me, home, update, maybe_own)
    told = update.told + _changed_held_files(ctx, me, changes, maybe_own)
    if update.beat and project is not None:
        _heartbeat(ctx, me, project)
    if update.workspaces is not None and project is not None and use.kind == EDIT:
        for _, path in found:
            if path.startswith(update.workspaces):
                # only for a file written into a workspace
                from agent_hooks.workspaces import workspace_events

                workspace_events.after_write(
                    agent, project, path, ctx.hook.session, ctx.now, ctx.log
                )
    return told


class _StateUpdate:
    """One PostToolUse's change of the agent's state: what the tool call did (the
    writer, the tool, the files it touched, its project, its own writes and when a
    shell command ran), and the steps run under the agent's lock (`apply`: the trail,
    the held files, the activity, the waiting notes, the alerts); each step says
    whether it changed the document and keeps what it found for after the lock: what
    to tell (`told`, `changes`, `blamed`, `inside`), the trail entries that left the
    window (`overflow`), whether the writer's heartbeat is due (`beat`)."""

    __slots__ = (
        "beat",
        "blamed",
        "changes",
        "conversation",
        "ctx",
        "found",
        "inside",
        "limit",
        "me",
        "overflow",
        "project",
        "told",
        "use",
        "window",
        "workspaces",
        "written",
    )

    def __init__(
        self,
        ctx: hook_runtime.HookContext,
        me: writers.Writer,
        use: ToolUse,
        found: list[tuple[str, str]],
        project: str | None,
        written: _Written,
        window: Window | None,
    ) -> None:
        self.ctx, self.me, self.use, self.found, self.written = ctx, me, use, found, written
        self.project = project
        self.limit = trail.read_limit(ctx.environ)
        self.workspaces = trail.workspace_prefix(project)
        self.window = window
        self.conversation: object = None
        self.overflow: list[tuple[str, str]] = []
        self.told: list[str] = []
        self.changes: list[Any] = []  # held_files.Change: held files someone else changed
        self.blamed: list[Any] = []  # ... that the client blames on the command, maybe its own
        self.inside: list[Any] = []  # ... changed while the writer's own command ran
        self.beat = False

    def apply(self, doc: dict[str, Any]) -> bool:
        """Every step, in order: True when the document changed."""
        self.conversation = doc["conversation_id"]
        changed = self._trail(doc)
        changed = self._held_files(doc) or changed
        changed = self._activity(doc) or changed
        changed = self._waiting(doc) or changed
        return self._alerts(doc) or changed

    def _trail(self, doc: dict[str, Any]) -> bool:
        """What the tool touched, marked with the writer inside a subagent."""
        if not self.found:
            return False
        marked = self.me.key if self.me.agent_id else None
        return trail.record(
            doc,
            self.found,
            self.limit,
            self.workspaces,
            marked,
            self.written.fingerprint_of,
            self.overflow,
        )

    def _held_files(self, doc: dict[str, Any]) -> bool:
        """The writer's own writes noted as its held files' last writes; held files
        someone else changed found (each told once)."""
        ends = self.written.ends
        if not ends and not doc["held"]:  # only a writer that holds files has any to watch
            return False
        preload(HELD_MODULES)
        from agent_hooks.leases import held_files

        me, now, fingerprint_of = self.me, self.ctx.now, self.written.fingerprint_of
        if self.use.kind == SHELL and self.use.reported:
            # A held file the client says the command changed may have been changed by
            # someone else while the command ran (the client blames every change on
            # it): said, not assumed, unless the command line visibly writes it
            # (`_maybe_own`, after the lock).
            self.blamed = held_files.moved(doc, me.key, {p: fingerprint_of.get(p) for p in ends})
        for path, until in ends.items():
            held_files.note(
                doc, me.key, path, fingerprint_of.get(path), self.written.held_at(path), until, now
            )
        ran = None
        if self.use.kind == SHELL:  # without a reported duration: since its last activity
            ran = self.window if self.window is not None else (doc["last_activity"], now)
        self.changes, self.inside = held_files.check(doc, me.key, now, ran)
        return bool(ends) or bool(self.changes) or bool(self.inside)

    def _activity(self, doc: dict[str, Any]) -> bool:
        """The agent was active now; a holder of reservations is heard from."""
        moved = state.touch(doc, self.ctx.now, state.ACTIVITY_RESOLUTION)
        self.beat = moved and bool(doc["reservations"])
        return moved

    def _waiting(self, doc: dict[str, Any]) -> bool:
        """Files the writer waited for that are free now (their notes removed)."""
        if not doc["waiting"]:
            return False
        from agent_hooks.gate import waiting  # only while a writer waits

        before = len(doc["waiting"])
        self.told += waiting.freed(doc, self.me, self.ctx.state_dir, self.ctx.now)
        return len(doc["waiting"]) != before

    def _alerts(self, doc: dict[str, Any]) -> bool:
        """What was kept to tell this writer (its conversation's too)."""
        conversation = self.me.conversation
        if not doc["alerts"] and not (conversation and conversation in doc["alerts_for"]):
            return False
        self.told += state.take_alerts(doc, conversation)
        return True


def _keep(ctx: hook_runtime.HookContext, me: writers.Writer, written: _Written) -> None:
    """Keep what the writer just wrote into files it holds, so that it can be put
    back (`agent-hooks restore`; `kept.kept_store`)."""
    preload(KEPT_MODULES)
    from agent_hooks.kept import kept_store

    held = [(path, *written.held_at(path), until) for path, until in written.ends.items()]
    for problem in kept_store.keep_held(held, me.as_dict(), ctx.now, ctx.environ):
        ctx.log(problem)


def _maybe_own(
    ctx: hook_runtime.HookContext, use: ToolUse, project: str | None, update: _StateUpdate
) -> list[Any]:
    """Held files changed during the writer's own shell command, told as possibly
    its own: those the client blamed on it that its command line does not visibly
    write (the command read once, only then, and never under the agent's lock),
    and those changed while it ran."""
    if not update.blamed:
        return update.inside
    seen = {path for _, path in _visible_writes(ctx, use, project)}
    return [c for c in update.blamed if c.path not in seen] + update.inside


def _since_it_started(
    ctx: hook_runtime.HookContext,
    me: writers.Writer,
    home: Repo,
    update: _StateUpdate,
    maybe_own: list[Any],
) -> tuple[list[Any], list[Any]]:
    """(changes by someone else, changes maybe the writer's own) once a change
    taken for one during its shell command — the client gave no duration, so the
    command was taken to have run since the writer's last activity — is judged by
    when the command started (its PreToolUse kept it: `command_windows.began`).
    A change made before that was someone else's."""
    preload(COMMAND_MODULES)
    from agent_hooks.leases import command_windows
    from agent_hooks.tool_use import in_window

    call_id = writers.safe_id(ctx.hook.tool_use_id)
    start = command_windows.began(home.ledger, me, call_id)
    if start is None:
        return update.changes, maybe_own
    ran = (start, ctx.now)
    before = [c for c in maybe_own if c in update.inside and not in_window(ran, c.at)]
    return update.changes + before, [c for c in maybe_own if c not in before]


def _spill(ctx: hook_runtime.HookContext, agent: identity.Agent, update: _StateUpdate) -> None:
    """Trail entries that left the state's window, kept beside it."""
    from agent_hooks.agents import trail_spill

    try:
        trail_spill.spill(agent, update.conversation, update.overflow)
    except OSError as exc:
        ctx.log(f"{len(update.overflow)} trail entries that left the window not kept: {exc}")


def _heartbeat(ctx: hook_runtime.HookContext, me: writers.Writer, project: str) -> None:
    """A holder of reservations is heard from (how other hosts judge it)."""
    from agent_hooks.leases import writer_cards
    from agent_hooks.ledger import ledger_location

    owner = writers.Writer(me.agent, me.conversation, client=me.client)
    writer_cards.heartbeat(
        ledger_location.directory(ctx.state_dir, project),
        owner,
        ctx.client.holder_pid(ctx.environ),
        ctx.now,
    )


def _changed_held_files(
    ctx: hook_runtime.HookContext, me: writers.Writer, changes: list[Any], maybe_own: list[Any]
) -> list[str]:
    """What to tell the holder of files someone else changed (and note on their
    leases, for `reservations` and `watch`); a change during its own shell
    command is told as possibly its own. A change no other writer's hook saw is put
    down to the shell commands that ran when it was made, and those writers are
    told too (`leases.command_notices`)."""
    if not changes and not maybe_own:
        return []
    from agent_hooks import durations, timestamps
    from agent_hooks.leases import command_notices, lease_store

    blame = command_notices.Blame(me, ctx.state_dir, ctx.now)
    earliest: dict[str, float] = {}
    for change in changes + maybe_own:
        earliest[change.ledger] = min(earliest.get(change.ledger, change.at), change.at)
    found = []
    for change in changes:
        held = [
            item
            for item in lease_store.read(change.ledger, change.rel)
            if item.get("writer") == me.key and item.get("worktree") == change.worktree
        ]
        if not held:
            continue  # released meanwhile: not this writer's any more
        by = _noted_by(held[0].get("changed"), change.at)
        running = [] if by is not None else blame.running(change, earliest[change.ledger])
        if by is None:
            who = command_notices.whose(blame, change.ledger, running) if running else None
            lease_store.mark_changed(change.ledger, change.rel, change.worktree, who, change.at)
            blame.note(change, running, holder_ran=False)
        found.append((change, by, running))
    own = [(change, blame.running(change, earliest[change.ledger])) for change in maybe_own]
    for change, running in own:
        blame.note(change, running, holder_ran=True)
    blame.tell()
    told = []
    for change, by, running in found:
        if running:
            who = (
                command_notices.whose(blame, change.ledger, running) if len(running) == 1 else None
            )
            said = command_notices.holder_words(blame, change.ledger, running)
        else:
            who, said = by or _UNSEEN, ""
        ctx.log(f"held file {change.rel} of {me.key} changed by {who or 'one of several'}")
        back = _way_back(ctx, me, change)
        told.append(
            f"agent-hooks: {change.rel}, which you are changing, was changed "
            + (f"by {who} " if who else "")
            + f"at {timestamps.local(change.at)} ({durations.ago(ctx.now - change.at)}), "
            f"after your last write to it{said}. "
            + (
                back + " Re-read it before you edit it."
                if back
                else "Re-read it before you edit it, and check that your changes are still "
                "there; if they are not, tell the user."
            )
        )
    for change, running in own:
        ctx.log(f"held file {change.rel} of {me.key} changed while its shell command ran")
        back = _way_back(ctx, me, change)
        others = (
            command_notices.holder_words(blame, change.ledger, running, also=True)
            if running
            else ""
        )
        told.append(
            f"agent-hooks: {change.rel}, which you are changing, changed while your last "
            "shell command ran. If your command did not write it, someone else did: "
            "re-read it before you edit it." + others + (f" {back}" if back else "")
        )
    return told


def _noted_by(noted: object, at: float) -> str | None:
    """Who another writer's hook saw change the file, as its lease notes it, when
    that note is of this change (made when it was, or after), not of one before."""
    if not isinstance(noted, dict) or not isinstance(noted.get("by"), str):
        return None
    when = noted.get("at")
    if isinstance(when, int | float) and not isinstance(when, bool) and when < at - SLACK:
        return None
    by: str = noted["by"]
    return by


def _way_back(ctx: hook_runtime.HookContext, me: writers.Writer, change: Any) -> str:
    """How the holder sees and puts back its own last version of a changed file,
    when one is kept (`kept.kept_versions.way_back`); "" otherwise."""
    from agent_hooks.kept import kept_versions

    try:
        return kept_versions.way_back(
            change.path, change.ledger, change.worktree, change.rel, me.key, ctx.cwd, ctx.now
        )
    except OSError as exc:
        ctx.log(f"kept versions of {change.rel} not read: {exc}")
        return ""


_UNSEEN = (
    "someone else (a process agent-hooks does not see: a script, git, an editor, "
    "an agent without hooks)"
)


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
