"""Whether an edit may proceed, given a project's reservations: pure decisions
and the messages that explain them to the model.

Invariants:

* Only another owner's live *exclusive* reservation blocks; shared ones never
  do, an owner never blocks itself (nor its subagents), and a holder `counts`
  rules out (its process is gone) blocks nobody. Every blocking holder is named.
* A target is resolved (symlinks included) before it is compared: editing a
  symlink to a reserved file is editing the reserved file. A directory entry a
  command acts on itself (removing, renaming or replacing a symlink:
  `resolve_entry`) is located by its parent directory, resolved, and its own name. The reservations that
  apply are those of every project the *target* lies in: the git top level above
  it (so an agent started elsewhere cannot walk around a project's reservations)
  and the agent's own project when the target lies inside it (so a nested
  repository, e.g. a submodule, does not hide its parent's reservations); a
  target in no project is not subject to any.
* Strict mode additionally requires a live reservation of the agent's own
  covering the target, and then names the exact `agent-hooks reserve` command.

`pattern` and `reservation` are imported inside the functions that need them:
a project without reservations never loads them (docs/adr/0005).
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import repository
from agent_hooks.reservations import reservation_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    Record = tuple[Any, ...]

Place = tuple[str, str]  # (project root, path relative to it; "" = the whole project)


def _places(resolved: str, agent_root: str | None) -> list[Place]:
    roots = []
    top = repository.git_top_level(fs.dirname(resolved), resolved=True)
    if top is not None:
        roots.append(top)
    if agent_root is not None and agent_root != top and fs.is_within(resolved, agent_root):
        roots.append(agent_root)
    return [(root, resolved[len(root.rstrip("/")) + 1 :]) for root in roots if resolved != root]


def resolve(path: str, cwd: str | None, agent_root: str | None) -> str:
    """An edit target as an absolute path, as the client will write it
    (`posix_fs.as_written`), symlinks resolved."""
    base = cwd or agent_root or "/"
    return fs.realpath(fs.as_written(path if fs.isabs(path) else fs.join(base, path)))


def resolve_entry(path: str) -> str:
    """An absolute path naming a directory entry, its parent's symlinks resolved
    and its own name kept: `rm src/out` removes the link `src/out`, wherever it
    points."""
    parent, _, name = path.rpartition("/")
    if name in ("", ".", ".."):
        return fs.realpath(path)
    return fs.join(fs.realpath(parent or "/"), name)


def places(resolved: str, agent_root: str | None) -> list[Place]:
    """Every (project root, relative path) whose reservations apply to the
    resolved target; empty when it lies in no project."""
    return _places(resolved, agent_root)


def locate(path: str, cwd: str | None, agent_root: str | None) -> list[Place]:
    """Every (project root, relative path) whose reservations apply to an edit
    target, symlinks resolved; empty when the target lies in no project."""
    return _places(resolve(path, cwd, agent_root), agent_root)


def blocking(
    hot: reservation_index.HotIndex,
    compiled: list[Any],
    first: str | None,
    owner: str,
    now: float,
    exact_path: str | None,
    counts: Callable[[Record], bool] | None,
) -> list[Record]:
    from agent_hooks.reservations import pattern

    found = []
    for rec in hot.candidates(first):
        if (
            rec[reservation_index.OWNER] == owner
            or not rec[reservation_index.EXCLUSIVE]
            or rec[reservation_index.EXPIRES] <= now
        ):
            continue
        if counts is not None and not counts(rec):
            continue
        hit = (
            pattern.matches(rec[reservation_index.COMPILED], exact_path)
            if exact_path is not None
            else pattern.overlap(rec[reservation_index.COMPILED], compiled)
        )
        if hit:
            found.append(rec)
    return found


def holder_counts(directory: str, minutes: int, now: float) -> Callable[[Record], bool]:
    """Does a reservation's holder still count? Its process gone here: no; on
    another host: only while its owner was heard from within a lease's time. A
    reservation made with `--keep`, or outside Claude Code (no holder process),
    counts until it expires."""
    from agent_hooks import liveness

    def counts(rec: Record) -> bool:
        holder = rec[reservation_index.HOLDER]
        if holder is None or holder.get("pid") is None or rec[reservation_index.KEEP]:
            return True  # --keep: it outlives its conversation (until the TTL), by design
        alive = liveness.alive(holder)
        if alive is not None:
            return alive
        from agent_hooks.leases import lease_upkeep  # a holder on another host: rare

        return lease_upkeep.heard_from(directory, rec[reservation_index.OWNER], now, minutes)

    return counts


def blocking_edit(
    hot: reservation_index.HotIndex,
    rel: str,
    owner: str,
    now: float,
    counts: Callable[[Record], bool] | None = None,
) -> list[Record]:
    """Other owners' live exclusive reservations covering the file `rel`."""
    return blocking(hot, [], rel.partition("/")[0], owner, now, rel, counts)


def edit_blockers(
    hot: reservation_index.HotIndex,
    owner: str,
    now: float,
    counts: Callable[[Record], bool] | None = None,
) -> Callable[[str], list[Record]]:
    """`blocking_edit` for many files (the files a Bash command changed): the
    reservations that may block are sorted out once per leading directory, then
    each file is only matched."""
    from agent_hooks.reservations import pattern

    live: dict[str, list[Record]] = {}

    def blockers(rel: str) -> list[Record]:
        first = rel.partition("/")[0]
        if first not in live:
            live[first] = [
                rec
                for rec in hot.candidates(first)
                if rec[reservation_index.OWNER] != owner
                and rec[reservation_index.EXCLUSIVE]
                and rec[reservation_index.EXPIRES] > now
                and (counts is None or counts(rec))
            ]
        return [rec for rec in live[first] if pattern.matches(rec[reservation_index.COMPILED], rel)]

    return blockers


def owns(hot: reservation_index.HotIndex | None, rel: str, owner: str, now: float) -> bool:
    """Strict mode: does `owner` hold a live reservation (any mode) covering `rel`?"""
    if hot is None:
        return False
    from agent_hooks.reservations import pattern

    return any(
        rec[reservation_index.OWNER] == owner
        and rec[reservation_index.EXPIRES] > now
        and pattern.matches(rec[reservation_index.COMPILED], rel)
        for rec in hot.candidates(rel.partition("/")[0])
    )
