"""Whether one tool call may change what it targets: the PreToolUse decision.

Given the writer, the target (a file path, or a Bash command line), the project
and the clock, `edit` and `bash` return a `Verdict`: a `Refusal` (the reason the
model reads), context for an allowed call (a file other worktrees are changing),
and what to log. The adapter turns the payload into one of these calls and the
verdict into protocol output.

Invariants:

* A target is checked in every project it lies in (`enforcement.places`), each
  against its repository's ledger: explicit reservations first (another owner's
  live exclusive reservation refuses, unless its holder is known to be gone or,
  on another host, silent longer than a lease), then leases (`lease.judge`).
* An allowed file edit takes (or renews) the writer's lease on the file in each
  ledger (`lease_store.claim`), atomically: of two writers editing one file at
  the same instant exactly one goes ahead.
* Writes into agent-hooks' own ledgers and state are refused (`protected`).
* A Bash command is parsed only when, in the agent's project, another owner
  holds something exclusive, another writer holds a lease, or strict mode is
  on, and only when the prefilter says the parser could see a write.
* `AGENT_HOOKS_ENFORCE=off` never hides a refusal: it comes back marked
  `overridden`, for the adapter to log and let through.

Hot path: built-ins and agent_hooks' own modules only; the Bash parser and the
pattern compiler load only when a command must be parsed.
"""

from __future__ import annotations

from agent_hooks import liveness, switches
from agent_hooks import writer as writers
from agent_hooks.reservations import enforcement, ledger, protected
from agent_hooks.reservations import index as reservation_index
from agent_hooks.reservations.bash import prefilter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.writer import Writer

LEASE_MINUTES_ENV = "AGENT_HOOKS_LEASE_MINUTES"


class Request:
    """One tool call to decide: who writes, from where, and when."""

    __slots__ = (
        "_dirs",
        "cwd",
        "environ",
        "indexes",
        "now",
        "project",
        "state_dir",
        "tool_use_id",
        "writer",
    )

    def __init__(
        self,
        *,
        writer: Writer,
        cwd: str | None,
        project: str | None,
        state_dir: str,
        environ: Mapping[str, str],
        now: float,
        tool_use_id: str | None = None,
    ) -> None:
        self.writer = writer
        self.cwd = cwd
        self.project = project
        self.state_dir = state_dir
        self.environ = environ
        self.now = now
        self.tool_use_id = tool_use_id
        self.indexes: dict[str, reservation_index.HotIndex | None] = {}
        self._dirs: dict[str, str] = {}

    def ledger(self, project: str) -> str:
        if project not in self._dirs:
            self._dirs[project] = ledger.directory(self.state_dir, project)
        return self._dirs[project]

    def index(self, project: str) -> reservation_index.HotIndex | None:
        """The project's reservation index, read at most once per request; an
        earlier release's ledger is adopted on first use."""
        directory = self.ledger(project)
        if directory not in self.indexes:
            hot = reservation_index.load_hot(directory)
            if hot is None and ledger.has_legacy(self.state_dir, project):
                hot = _adopt(self.state_dir, project, self.now, directory)
            self.indexes[directory] = hot
        return self.indexes[directory]

    def strict(self, hot: reservation_index.HotIndex | None) -> bool:
        return switches.strict(self.environ, hot is not None and hot.strict)

    def lease_minutes(self, hot: reservation_index.HotIndex | None) -> int:
        raw = self.environ.get(LEASE_MINUTES_ENV, "")
        if raw.isascii() and raw.isdigit() and len(raw) < 5:
            return int(raw)
        settings = hot.settings if hot is not None else reservation_index.SETTINGS_DEFAULTS
        minutes = settings.get("lease_minutes")
        return minutes if isinstance(minutes, int) else reservation_index.DEFAULT_LEASE_MINUTES


def _adopt(
    state_dir: str, project: str, now: float, directory: str
) -> reservation_index.HotIndex | None:
    from agent_hooks.reservations import store

    try:
        store.adopt(state_dir, project, now)
    except Exception:  # the check goes on without the old ledger; the next write adopts it
        return None
    return reservation_index.load_hot(directory)


class Refusal:
    """Why a tool call may not run. `overridden`: AGENT_HOOKS_ENFORCE=off lets it run."""

    __slots__ = ("overridden", "reason", "waiting")

    def __init__(
        self, reason: str, overridden: bool, waiting: dict[str, Any] | None = None
    ) -> None:
        self.reason = reason
        self.overridden = overridden
        self.waiting = waiting  # what to tell the writer about once the target is free


class Verdict:
    __slots__ = ("context", "problems", "refusal")

    def __init__(self) -> None:
        self.refusal: Refusal | None = None
        self.context: list[str] = []
        self.problems: list[str] = []


def _refuse(
    request: Request, verdict: Verdict, reason: str, waiting: dict[str, Any] | None = None
) -> Verdict:
    verdict.refusal = Refusal(reason, switches.is_off(request.environ, switches.ENFORCE), waiting)
    return verdict


def edit(request: Request, target: object) -> Verdict:
    """A file tool (Write, Edit, NotebookEdit, MultiEdit) writing `target`."""
    verdict = Verdict()
    if not isinstance(target, str) or not target or "\x00" in target:
        return verdict
    resolved = enforcement.resolve(target, request.cwd, request.project)
    what = protected.guarded(resolved, request.state_dir)
    if what is not None:
        return _refuse(request, verdict, protected.message(what, target))
    places = enforcement.places(resolved, request.project)
    owner, now = request.writer.owner, request.now
    strict_rel = None
    owned = False
    claims = []
    for root, rel in places:
        hot = request.index(root)
        directory = request.ledger(root)
        minutes = request.lease_minutes(hot)
        if hot is not None:
            holders = enforcement.blocking_edit(
                hot, rel, owner, now, enforcement.holder_counts(directory, minutes, now)
            )
            if holders:
                waiting = _waiting(
                    request, root, rel, "reservation", holders[0][reservation_index.RID]
                )
                return _refuse(
                    request, verdict, enforcement.deny_message(rel, holders, now), waiting
                )
        owned = owned or enforcement.owns(hot, rel, owner, now)
        if strict_rel is None and request.strict(hot):
            strict_rel = rel
        if minutes > 0:
            claims.append((root, rel, directory, minutes, hot))
    if strict_rel is not None and not owned:
        return _refuse(request, verdict, enforcement.strict_message(strict_rel))
    for root, rel, directory, minutes, hot in claims:
        if request.writer.conversation == writers.NOBODY:
            refused = _judge_only(request, verdict, root, rel, directory)
        else:
            refused = _claim(request, verdict, root, rel, directory, minutes, hot)
        if refused:
            return verdict
    return verdict


def _claim(
    request: Request,
    verdict: Verdict,
    root: str,
    rel: str,
    directory: str,
    minutes: int,
    hot: reservation_index.HotIndex | None,
) -> bool:
    from agent_hooks import repository
    from agent_hooks.reservations import lease, lease_store

    outcome = lease_store.claim(
        directory,
        rel,
        request.writer,
        worktree=root,
        branch=repository.branch(root),
        environ=request.environ,
        now=request.now,
        minutes=minutes,
        tool_use_id=request.tool_use_id,
    )
    if outcome.problem is not None:
        verdict.problems.append(outcome.problem)
    deny_elsewhere = hot is not None and hot.settings.get("worktree_leases") == "deny"
    blockers = outcome.blockers + (outcome.elsewhere if deny_elsewhere else [])
    if blockers:
        holder = blockers[0]
        waiting = _waiting(request, root, rel, "lease", holder.get("writer"))
        reason = lease.deny_message(
            rel, holder, request.now, lease_store.card(directory, holder.get("writer"))
        )
        _refuse(request, verdict, reason, waiting)
        return True
    if outcome.elsewhere:
        verdict.context.append(lease.elsewhere_note(rel, outcome.elsewhere, request.now))
    return False


def _judge_only(request: Request, verdict: Verdict, root: str, rel: str, directory: str) -> bool:
    """A writer that can hold nothing: refused by other writers' leases, takes none."""
    from agent_hooks.reservations import lease, lease_store

    seen = lease.judge(
        lease_store.read(directory, rel), request.writer, root, request.now, liveness.alive
    )
    if not seen.blockers:
        return False
    holder = seen.blockers[0]
    reason = lease.deny_message(
        rel, holder, request.now, lease_store.card(directory, holder.get("writer"))
    )
    _refuse(request, verdict, reason)
    return True


def _waiting(request: Request, root: str, rel: str, kind: str, holder: object) -> dict[str, Any]:
    return {
        "writer": request.writer.key,
        "project_root": root,
        "rel": rel,
        "kind": kind,
        "holder": holder if isinstance(holder, str) else None,
        "since": int(request.now),
    }


def bash(request: Request, command: object) -> Verdict:
    """A Bash command line: refused when a write the parser can see is refused."""
    verdict = Verdict()
    project = request.project
    if not isinstance(command, str) or project is None:
        return verdict
    hot = request.index(project)
    owner, now = request.writer.owner, request.now
    minutes = request.lease_minutes(hot)
    if not prefilter.might_write(command):
        return verdict  # nothing the parser could see: do not pay for loading it
    contended = (
        (hot is not None and hot.others_hold_exclusive(owner, now))
        or request.strict(hot)
        or _leases_held(request, project, minutes)
    )
    if not contended and not prefilter.mentions_own_files(command):
        return verdict
    from agent_hooks.reservations.bash import writes  # only when someone else holds something

    analysis = writes.analyze(command, request.cwd or project, request.environ.get("HOME"))
    for target in analysis.targets:
        reason = _check_bash_target(request, target.path, target.glob, project)
        if reason is not None:
            return _refuse(request, verdict, reason)
    return verdict


def _leases_held(request: Request, project: str, minutes: int) -> bool:
    if minutes <= 0:
        return False
    from agent_hooks.reservations import lease_store

    return lease_store.others_hold(request.ledger(project), request.writer, request.now, minutes)


def _check_bash_target(request: Request, path: str, glob: bool, project: str) -> str | None:
    """Why a Bash target (a path and everything below it, or a glob) may not be
    written: our own files, another owner's reservation, another writer's lease,
    or strict mode without a reservation of one's own."""
    places = (
        enforcement.locate_glob(path, project) if glob else enforcement.locate_write(path, project)
    )
    owner, now = request.writer.owner, request.now
    strict_rel = None
    owned = False
    for root, rel in places:
        hot = request.index(root)
        directory = request.ledger(root)
        minutes = request.lease_minutes(hot)
        compiled = _compile_target(rel, glob)
        if hot is not None:
            holders = enforcement.blocking_write(
                hot, compiled, owner, now, enforcement.holder_counts(directory, minutes, now)
            )
            if holders:
                return _deny_text(rel, holders, now)
        if minutes > 0:
            reason = _leased_under(request, root, rel, compiled, glob, directory, hot)
            if reason is not None:
                return reason
        if rel and not glob:
            owned = owned or enforcement.owns(hot, rel, owner, now)
            if strict_rel is None and request.strict(hot):
                strict_rel = rel
    if not glob:
        what = protected.guarded(_resolved(path), request.state_dir, directory=True)
        if what is not None:
            return protected.message(what, path)
    if strict_rel is not None and not owned:
        return enforcement.strict_message(strict_rel)
    return None


def _resolved(path: str) -> str:
    from agent_hooks import posix_fs as fs

    return fs.realpath(path)


def _leased_under(
    request: Request,
    root: str,
    rel: str,
    compiled: list[Any],
    glob: bool,
    directory: str,
    hot: reservation_index.HotIndex | None,
) -> str | None:
    from agent_hooks.reservations import lease, lease_store, pattern

    prefix = "" if glob or not rel else rel
    deny_elsewhere = hot is not None and hot.settings.get("worktree_leases") == "deny"
    for leased in lease_store.paths_under(
        directory, lambda p: pattern.matches(compiled, p), prefix
    ):
        seen = lease.judge(
            lease_store.read(directory, leased), request.writer, root, request.now, liveness.alive
        )
        blockers = seen.blockers + (seen.elsewhere if deny_elsewhere else [])
        if blockers:
            holder = blockers[0]
            card = lease_store.card(directory, holder.get("writer"))
            shown = rel or "the whole project"
            return lease.deny_message(leased, holder, request.now, card).replace(
                "Do not edit it now.",
                f"This Bash command would write {shown}, which includes it; do not run it now.",
                1,
            )
    return None


def _deny_text(rel: str, holders: list[Any], now: float) -> str:
    shown = rel or "the whole project"
    return enforcement.deny_message(shown, holders, now).replace(
        "Do not edit it now.", f"This Bash command would write {shown}; do not run it now.", 1
    )


def _compile_target(rel: str, glob: bool) -> list[Any]:
    """A Bash target as a pattern: the path and everything below it ("" is the
    whole project); a shell glob keeps its wildcards (one the pattern syntax
    refuses is taken literally)."""
    from agent_hooks.reservations import pattern

    if not rel:
        return pattern.compile("**")
    if glob:
        try:
            return pattern.compile(rel)
        except ValueError:
            pass
    return pattern.literal(rel)
