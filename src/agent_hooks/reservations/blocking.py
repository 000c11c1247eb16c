"""Which reservations stand in a writer's way: pure judgements over a ledger's
index (`index_records.HotIndex`).

Invariants:

* Only another owner's live *exclusive* reservation blocks; shared ones never
  do, an owner never blocks itself (nor its subagents), and a holder `counts`
  rules out blocks nobody.
* A holder counts while its process is alive (`liveness.alive`); on another
  host, while its owner was heard from within a lease's time
  (`writer_cards.heard_from`); on another machine sharing the ledger, while that
  machine was heard from at the last sync (`remote_view.holds`); a reservation
  made with `--keep`, or outside any client (no holder process), counts until it
  expires.
* Strict mode asks `owns`: a live reservation of the writer's own, any mode.

`pattern` is imported inside the functions that need it: a project without
reservations never loads it (docs/adr/0005).
"""

from __future__ import annotations

from agent_hooks import preload
from agent_hooks.reservations import index_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    Record = tuple[Any, ...]

# What matching a path, or intersecting a directory or glob, loads: only once a
# reservation may block it (agent_hooks.preload).
MATCHING = ("agent_hooks.reservations.pattern",)
OVERLAPPING = (*MATCHING, "agent_hooks.reservations.pattern_overlap")
WHOLE_PROJECT = ["", 0]  # `pattern.compile("**")`, which every pattern overlaps


def blocking(
    hot: index_records.HotIndex,
    compiled: list[Any],
    first: str | None,
    owner: str,
    now: float,
    exact_path: str | None,
    counts: Callable[[Record], bool] | None,
) -> list[Record]:
    """Other owners' live exclusive reservations overlapping `compiled` (a directory
    or a glob; `first`: its leading literal segment, None when it has none), or
    covering the file `exact_path` when given, whose holders `counts` (None: each
    one, not asked: the caller asks only of those it needs)."""
    found = []
    second = exact_path.split("/", 2)[1] if exact_path is not None and "/" in exact_path else None
    whole = compiled == WHOLE_PROJECT
    for rec in hot.candidates(first):
        if (
            rec[index_records.OWNER] == owner
            or not rec[index_records.EXCLUSIVE]
            or rec[index_records.EXPIRES] <= now
        ):
            continue
        if exact_path is not None:
            if not may_match(rec[index_records.COMPILED], second):
                continue
            preload(MATCHING)  # only once a record may block
            from agent_hooks.reservations import pattern

            hit = pattern.matches(rec[index_records.COMPILED], exact_path)
        elif whole:  # the whole project: every reservation lies in it
            hit = True
        else:  # a directory or a glob a shell command names
            preload(OVERLAPPING)
            from agent_hooks.reservations import pattern_overlap

            hit = pattern_overlap.overlap(rec[index_records.COMPILED], compiled)
        if hit and (counts is None or counts(rec)):  # whether its holder counts: a syscall
            found.append(rec)
    return found


def holder_counts(directory: str, minutes: int, now: float) -> Callable[[Record], bool]:
    """Does a reservation's holder still count? Its process gone here: no; on
    another host: only while its owner was heard from within a lease's time. A
    reservation made with `--keep`, or outside any client (no holder process),
    counts until it expires."""
    from agent_hooks import liveness

    def counts(rec: Record) -> bool:
        holder = rec[index_records.HOLDER]
        if holder is None or holder.get("pid") is None or rec[index_records.KEEP]:
            return True  # --keep: it outlives its conversation (until the TTL), by design
        machine = rec[index_records.MACHINE]
        if machine is not None:  # made on another machine: only it can judge the process
            from agent_hooks.ledger import remote_view

            return remote_view.holds(directory, machine, now)
        alive = liveness.alive(holder)
        if alive is not None:
            return alive
        from agent_hooks.leases import writer_cards  # a holder on another host: rare

        return writer_cards.heard_from(directory, rec[index_records.OWNER], now, minutes)

    return counts


def blocking_edit(
    hot: index_records.HotIndex,
    rel: str,
    owner: str,
    now: float,
    counts: Callable[[Record], bool] | None = None,
) -> list[Record]:
    """Other owners' live exclusive reservations covering the file `rel`."""
    return blocking(hot, [], rel.partition("/")[0], owner, now, rel, counts)


def edit_blockers(
    hot: index_records.HotIndex,
    owner: str,
    now: float,
    counts: Callable[[Record], bool] | None = None,
) -> Callable[[str], list[Record]]:
    """`blocking_edit` for many files (the files a Bash command changed): the
    reservations that may block are sorted out once per leading directory, then
    each file is only matched (`pattern` loaded only once a record may block)."""
    live: dict[str, list[Record]] = {}

    def blockers(rel: str) -> list[Record]:
        first = rel.partition("/")[0]
        if first not in live:
            live[first] = [
                rec
                for rec in hot.candidates(first)
                if rec[index_records.OWNER] != owner
                and rec[index_records.EXCLUSIVE]
                and rec[index_records.EXPIRES] > now
            ]
        second = rel.split("/", 2)[1] if "/" in rel else None
        maybe = [rec for rec in live[first] if may_match(rec[index_records.COMPILED], second)]
        if not maybe:
            return []
        preload(MATCHING)
        from agent_hooks.reservations import pattern

        return [  # whether a holder counts (a syscall) asked only of those that match
            rec
            for rec in maybe
            if pattern.matches(rec[index_records.COMPILED], rel) and (counts is None or counts(rec))
        ]

    return blockers


def may_match(compiled: list[Any], second: str | None) -> bool:
    """False only when `compiled` cannot match a path whose second segment is
    `second` (None: a path of one segment): its first two segments are literal
    (strings, in `pattern`'s compiled form) and the second is not `second`. Many
    agents reserving beside each other under one leading directory are ruled out
    this way without loading `pattern`."""
    return not (
        len(compiled) > 2
        and type(compiled[1]) is str
        and type(compiled[2]) is str
        and compiled[2] != second
    )


def owns(hot: index_records.HotIndex | None, rel: str, owner: str, now: float) -> bool:
    """Strict mode: does `owner` hold a live reservation (any mode) covering `rel`?"""
    if hot is None:
        return False
    preload(MATCHING)
    from agent_hooks.reservations import pattern

    return any(
        rec[index_records.OWNER] == owner
        and rec[index_records.EXPIRES] > now
        and pattern.matches(rec[index_records.COMPILED], rel)
        for rec in hot.candidates(rel.partition("/")[0])
    )
