"""Whether a Bash command may run: the PreToolUse decision for Bash.

Invariants:

* A command is parsed only when, in the agent's project, another owner holds
  something exclusive, another writer holds a lease, or strict mode is on — or
  it names agent-hooks' own files — and only when the prefilter says the parser
  could see a write: an unclaimed project pays nothing.
* Each visible write target (a path and everything below it, or a glob) is
  located with symlinks resolved — all of them, or for a directory entry the
  command acts on itself (`rm src/out`, `mv src/out x`, `ln -sfn /tmp src/out`:
  `BashTarget.entry`) those of its parent directory, its own name kept — and
  refused by another owner's live exclusive reservation overlapping it, by
  another writer's lease on a file under it, by holding agent-hooks' own files,
  or by strict mode without a reservation of one's own.
* What the parser cannot see (scripts, interpreters) is not refused here; the
  PostToolUse warning (`bash_after`) tells the model afterwards.
* A command the parser gave up on (`BashAnalysis.gave_up`: nesting too deep, too
  many wrappers, ...) may write anything anywhere: it counts as writing the whole
  project, refused while another writer holds anything exclusive in it (a live
  reservation or a lease), and the reason is logged (`verdict.problems`).
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks.gate.tool_call import Request, Verdict, refuse
from agent_hooks.shell import prefilter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    from agent_hooks.reservations import reservation_index

    Place = tuple[str, str]
    Record = tuple[Any, ...]

# The parser, each module after those it imports: loaded at once (agent_hooks.preload)
# when a command is parsed.
PARSER_MODULES = (
    "agent_hooks.shell.lexer",
    "agent_hooks.shell.words",
    "agent_hooks.shell.commands",
    "agent_hooks.shell.writes",
)


def bash(request: Request, command: object) -> Verdict:
    """A Bash command line: refused when a write the parser can see is refused.
    The command is read as the client hands it to the shell (`posix_fs.as_written`:
    a lone surrogate is U+FFFD)."""
    verdict = Verdict()
    project = request.project
    if not isinstance(command, str) or project is None:
        return verdict
    command = fs.as_written(command)
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
    from agent_hooks import preload

    preload(PARSER_MODULES)  # only when someone else holds something
    from agent_hooks.shell import writes

    analysis = writes.analyze(command, request.cwd or project, request.environ.get("HOME"))
    for target in analysis.targets:
        reason = _check_bash_target(request, target.path, target.glob, project, target.entry)
        if reason is not None:
            return refuse(request, verdict, reason)
    if analysis.gave_up is not None:
        verdict.problems.append(
            f"Bash command too complex to check ({analysis.gave_up}): "
            f"it counts as writing anywhere in {project}"
        )
        reason = _too_complex(request, project, analysis.gave_up)
        if reason is not None:
            return refuse(request, verdict, reason)
    return verdict


def _too_complex(request: Request, project: str, why: str) -> str | None:
    """Why a command the parser gave up on may not run: another writer holds
    something exclusive in the project (a live reservation, or a lease)."""
    from agent_hooks.gate import places
    from agent_hooks.leases import lease_messages
    from agent_hooks.reservations import reservation, reservation_index

    owner, now = request.writer.owner, request.now
    hot = request.index(project)
    directory = request.ledger(project)
    minutes = request.lease_minutes(hot)
    compiled = _compile_target("", False)
    held = []
    if hot is not None:
        counts = places.holder_counts(directory, minutes, now)
        holders = blocking_write(hot, compiled, owner, now, counts)
        unique = reservation.unique([reservation_index.as_dict(rec) for rec in holders])
        held = [reservation.describe(res, now) for res in unique[:3]]
    if not held and minutes > 0:
        found = _lease_blocker(request, project, "", compiled, False, directory, hot)
        if found is not None:
            leased, holder, card = found
            held = [f"{leased} is being changed by {lease_messages.holder_label(holder, card)}"]
    if not held:
        return None
    from agent_hooks.reservations import reservation_messages

    return reservation_messages.too_complex_message(why, held)


def _leases_held(request: Request, project: str, minutes: int) -> bool:
    return minutes > 0 and request.others_heard_from(project, minutes)


def _check_bash_target(
    request: Request, path: str, glob: bool, project: str, entry: bool = False
) -> str | None:
    """Why a Bash target (a path and everything below it, or a glob; `entry`: the
    directory entry itself) may not be written: our own files, another owner's
    reservation, another writer's lease, or strict mode without a reservation of
    one's own."""
    from agent_hooks.gate import places, protected

    where = locate_glob(path, project) if glob else locate_write(path, project, entry)
    owner, now = request.writer.owner, request.now
    strict_rel = None
    owned = False
    for root, rel in where:
        hot = request.index(root)
        directory = request.ledger(root)
        minutes = request.lease_minutes(hot)
        compiled = _compile_target(rel, glob)
        if hot is not None:
            holders = blocking_write(
                hot, compiled, owner, now, places.holder_counts(directory, minutes, now)
            )
            if holders:
                return _deny_text(rel, holders, now)
        if minutes > 0:
            reason = _leased_under(request, root, rel, compiled, glob, directory, hot)
            if reason is not None:
                return reason
        if rel and not glob:
            owned = owned or places.owns(hot, rel, owner, now)
            if strict_rel is None and request.strict(hot):
                strict_rel = rel
    if not glob:
        what = protected.guarded(
            _resolved(path, entry),
            request.state_dir,
            directory=True,
            ledgers=[request.ledger(project)],
        )
        if what is not None:
            return protected.message(what, path)
    if strict_rel is not None and not owned:
        from agent_hooks.reservations import reservation_messages

        return reservation_messages.strict_message(strict_rel)
    return None


def _resolved(path: str, entry: bool) -> str:
    from agent_hooks.gate import places

    return places.resolve_entry(path) if entry else fs.realpath(path)


def _leased_under(
    request: Request,
    root: str,
    rel: str,
    compiled: list[Any],
    glob: bool,
    directory: str,
    hot: reservation_index.HotIndex | None,
) -> str | None:
    found = _lease_blocker(request, root, rel, compiled, glob, directory, hot)
    if found is None:
        return None
    from agent_hooks.leases import lease_messages

    leased, holder, card = found
    shown = rel or "the whole project"
    return lease_messages.deny_message(leased, holder, request.now, card).replace(
        "Do not edit it now.",
        f"This Bash command would write {shown}, which includes it; do not run it now.",
        1,
    )


def _lease_blocker(
    request: Request,
    root: str,
    rel: str,
    compiled: list[Any],
    glob: bool,
    directory: str,
    hot: reservation_index.HotIndex | None,
) -> tuple[str, dict[str, Any], dict[str, Any] | None] | None:
    """(leased path, the blocking lease, its writer's card) for the first file
    under the target another writer leases, or None. A target that is no directory
    costs one lookup of its own lease file; only a glob or a directory lists the
    ledger's leases (their names, compared escaped)."""
    from agent_hooks import liveness
    from agent_hooks.leases import lease, lease_store

    deny_elsewhere = hot is not None and hot.settings.get("worktree_leases") == "deny"
    candidates = [rel] if rel and not glob else []
    if glob or not rel or fs.isdir(fs.join(root, rel)):
        from agent_hooks.leases import lease_upkeep
        from agent_hooks.reservations import pattern

        prefix = "" if glob or not rel else rel + "/"
        candidates += lease_upkeep.paths_under(
            directory, lambda p: pattern.matches(compiled, p), prefix
        )
    for leased in candidates:
        seen = lease.judge(
            lease_store.read(directory, leased), request.writer, root, request.now, liveness.alive
        )
        blockers = seen.blockers + (seen.elsewhere if deny_elsewhere else [])
        if blockers:
            holder = blockers[0]
            return leased, holder, lease_store.card(directory, holder.get("writer"))
    return None


_GLOB_CHARS = "*?["


def locate_write(path: str, agent_root: str | None, entry: bool = False) -> list[Place]:
    """Like `locate` for a Bash target, which may be a directory: a project root,
    or a directory above the agent's project (`rm -rf ..`), is the whole project,
    with the relative path "". An `entry` is located by its parent directory,
    resolved, and its own name (a symlink there is what the command acts on)."""
    from agent_hooks import repository
    from agent_hooks.gate import places

    resolved = places.resolve_entry(path) if entry else fs.realpath(path)
    if agent_root is not None and fs.is_within(agent_root, resolved):
        return [(agent_root, "")]
    if repository.git_top_level(resolved, resolved=True) == resolved:
        return [(resolved, "")]
    return places.places(resolved, agent_root)


def locate_glob(path: str, agent_root: str | None) -> list[Place]:
    """Like `locate` for an absolute shell glob: resolve the literal directories
    before the first wildcard segment, keep the rest as written."""
    from agent_hooks.gate import places

    parts = path.split("/")
    first_glob = next(i for i, part in enumerate(parts) if any(c in part for c in _GLOB_CHARS))
    base = fs.realpath("/".join(parts[:first_glob]) or "/")
    rest = "/".join(parts[first_glob:])
    return [
        (root, fs.join(fs.dirname(rel_base), rest).lstrip("/"))
        for root, rel_base in places.places(fs.join(base, "_"), agent_root)
    ]


def blocking_write(
    hot: reservation_index.HotIndex,
    compiled: list[Any],
    owner: str,
    now: float,
    counts: Callable[[Record], bool] | None = None,
) -> list[Record]:
    """Other owners' live exclusive reservations overlapping a write target
    (a path and everything below it, or a shell glob)."""
    from agent_hooks.gate import places
    from agent_hooks.reservations import pattern

    return places.blocking(hot, compiled, pattern.first_literal(compiled), owner, now, None, counts)


def _deny_text(rel: str, holders: list[Any], now: float) -> str:
    from agent_hooks.reservations import reservation_messages

    shown = rel or "the whole project"
    return reservation_messages.deny_message(shown, holders, now).replace(
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
