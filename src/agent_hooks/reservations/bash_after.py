"""After a Bash command (PostToolUse): which changed files are this writer's, its
leases on them, and a warning for held files it changed.

The client reports the files a command changed (`bashEditDiff`), and blames
any concurrent change on the command too: a long Bash listed another agent's
Write as its own modification. So:

* A changed file that another writer wrote with a file tool inside the
  command's time window (its edit lease's last write falls between the
  command's start — `duration_ms` before now, less a second of slack — and now)
  is not this writer's: it gets no trail entry, no lease, and no warning.
* A changed file another writer's *Bash* command leased inside the window is
  ambiguous (that lease may itself come from the client's blame: two commands
  running at once each report both's files): it stays in this writer's trail,
  but gets no lease and no warning.
* The writer takes a lease on each file that is its own (one lock for all).
* A changed file another writer leases, or another owner holds exclusively by
  reservation, is reported to the model: the command changed what someone else
  is changing, which the parser did not see coming. A reservation holder whose
  trail shows the file's current content as its own last write made that change,
  not the command.

Hot path: built-ins and agent_hooks' own modules only. In a ledger without
other writers' leases or reservations this costs a lease file read per changed
file and one lease write.
"""

from __future__ import annotations

from agent_hooks import liveness, repository
from agent_hooks import posix_fs as fs
from agent_hooks.reservations import index, lease, lease_store, lease_text, ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.writer import Writer

MAX_LEASED = 200  # files one Bash command may lease; the rest are only recorded
SLACK = 1.0  # seconds before the command's reported start still counted as inside it


class Aftermath:
    __slots__ = ("foreign", "problems", "warning")

    def __init__(self) -> None:
        self.foreign: set[str] = set()  # changed by another writer during the command
        self.warning: str | None = None
        self.problems: list[str] = []


def _rel(path: str, project: str) -> str | None:
    root = project.rstrip("/")
    return path[len(root) + 1 :] if fs.is_within(path, project) and path != project else None


def after_bash(
    state_dir: str,
    project: str,
    me: Writer,
    changed: list[str],
    now: float,
    *,
    duration_ms: object,
    environ: Mapping[str, str],
    minutes: int | None = None,
) -> Aftermath:
    """Sort the changed files, lease this writer's own, and warn about held ones."""
    result = Aftermath()
    directory = ledger.directory(state_dir, project)
    hot = index.load_hot(directory)
    if minutes is None:
        setting = hot.settings.get("lease_minutes") if hot is not None else None
        minutes = setting if isinstance(setting, int) else index.DEFAULT_LEASE_MINUTES
    took = duration_ms / 1000 if isinstance(duration_ms, int | float) and duration_ms > 0 else 0.0
    start = now - took - SLACK
    mine: list[str] = []
    leased_by_others: dict[str, dict[str, Any]] = {}
    for path in changed:
        rel = _rel(path, project)
        if rel is None:
            continue
        leases = lease_store.read(directory, rel) if minutes > 0 else []
        if _written_by_another(leases, me, start, now, "edit"):
            result.foreign.add(path)
            continue
        seen = lease.judge(leases, me, project, now, liveness.alive)
        if _written_by_another(seen.blockers, me, start, now, "bash"):
            continue  # ambiguous: both commands may have reported it
        if seen.blockers:
            leased_by_others[rel] = seen.blockers[0]
        else:
            mine.append(rel)
    if minutes > 0 and mine:
        claims = lease_store.claim_many(
            directory,
            mine[:MAX_LEASED],
            me,
            worktree=project,
            branch=repository.branch(project),
            environ=environ,
            now=now,
            minutes=minutes,
            source="bash",
        )
        for rel, outcome in claims.items():
            if outcome.problem:
                result.problems.append(outcome.problem)
            if outcome.blockers:
                leased_by_others[rel] = outcome.blockers[0]
    notes = [
        f"{rel} ({lease_text.holder_label(held, lease_store.card(directory, held.get('writer')))} "
        "is changing it)"
        for rel, held in leased_by_others.items()
    ]
    if hot is not None and hot.others_hold_exclusive(me.owner, now):
        notes += _reserved_notes(state_dir, project, hot, me, changed, result.foreign, now)
    if notes:
        result.warning = (
            "agent-hooks: your last Bash command changed files that another writer holds: "
            + ", ".join(notes)
            + ". If your command made these changes, undo them (restore the files' previous "
            "content, e.g. `git checkout -- <file>` for a committed file) and leave these "
            "paths to their holder."
        )
    return result


def _written_by_another(
    leases: list[dict[str, Any]], me: Writer, start: float, now: float, source: str
) -> bool:
    """Does another writer's lease from `source` (edit, bash) show a write inside
    the command's window?"""
    for item in leases:
        written = item.get("written")
        if item.get("writer") == me.key or item.get("source") != source:
            continue
        if isinstance(written, int | float) and start <= written <= now + SLACK:
            return True
    return False


def _reserved_notes(
    state_dir: str,
    project: str,
    hot: index.HotIndex,
    me: Writer,
    changed: list[str],
    foreign: set[str],
    now: float,
) -> list[str]:
    """Changed files another owner holds exclusively by reservation — unless the
    file's current content is the holder's own last write."""
    from agent_hooks.reservations import enforcement, reservation

    notes = []
    for path in changed:
        if path in foreign:
            continue
        rel = _rel(path, project)
        if rel is None:
            continue
        holders = enforcement.blocking_edit(
            hot,
            rel,
            me.owner,
            now,
            lambda rec: liveness.alive(rec[index.HOLDER] or {}) is not False,
        )
        holders = [
            rec for rec in holders if not _holder_wrote_it(state_dir, rec[index.AGENT], path, now)
        ]
        if holders:
            described = "; ".join(reservation.describe(index.as_dict(r), now) for r in holders)
            notes.append(f"{rel} ({described})")
    return notes


def _holder_wrote_it(state_dir: str, holder: str | None, path: str, now: float) -> bool:
    from agent_hooks import identity, state_file, trail

    try:
        agent = identity.Agent(identity.check_agent_name(holder) if holder else None, state_dir)
    except identity.IdentityError:
        return False
    doc, _ = state_file.read(agent, now)
    mark = doc["fingerprints"].get(path)
    return mark is not None and mark == trail.fingerprint(path)
