"""After a Bash command (PostToolUse): which changed files are this writer's, its
leases on them, and a warning for held files it changed.

The client reports the files a command changed (`bashEditDiff`), and blames
any concurrent change on the command too: a long Bash listed another agent's
Write as its own modification. So:

* A changed file that another writer wrote with a file tool inside the
  command's time window (its edit lease's last write falls inside the command's
  window, `tool_use.in_window`: from `duration_ms` before now to now, give or
  take `tool_use.SLACK`; without a reported duration, just now)
  is not this writer's: it gets no trail entry, no lease, and no warning —
  unless it changed after that edit (the edit's fingerprint on its lease no
  longer matches): then this command overwrote the edit, and it is warned about
  like any held file it changed.
* A changed file another writer's *Bash* command leased inside the window is
  ambiguous (that lease may itself come from the client's blame: two commands
  running at once each report both's files): it stays in this writer's trail,
  but gets no lease and no warning.
* The writer takes a lease on each file that is its own (one lock for all).
* A changed file another writer leases, or another owner holds exclusively by
  reservation, is reported to the model: the command changed what someone else
  is changing, which the parser did not see coming. The holder's lease records
  who (`lease_store.mark_changed`): its next hook names this command's writer. A reservation holder whose
  trail shows the file's current content as its own last write made that change,
  not the command.

Linear in the changed files (a command can report hundreds of thousands): the
ledger's lease directory is listed once and only the lease files of changed files
are read; at most MAX_LEASED files are leased, at most MAX_CHECKS held files have
their content compared with the holder's last write (each holder's state is read
once), and at most MAX_NOTES files are named in the warning (the rest counted).

Hot path: built-ins and agent_hooks' own modules only. In a ledger without
other writers' leases or reservations this costs a directory listing and one
lease write.
"""

from __future__ import annotations

from agent_hooks import fingerprints, liveness
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease, lease_store, writer_cards
from agent_hooks.reservations import blocking, index_records
from agent_hooks.tool_use import in_window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

    from agent_hooks.ledger.repo import Repo
    from agent_hooks.tool_use import Window
    from agent_hooks.writers import Writer

MAX_LEASED = 200  # files one Bash command may lease; the rest are only recorded
MAX_CHECKS = 1000  # held files whose content is compared with their holder's last write
MAX_NOTES = 20  # held files the warning names; the rest are counted
LIST_FROM = 32  # changed files past which the lease directory is listed once


class Aftermath:
    __slots__ = ("foreign", "held", "problems", "warning")

    def __init__(self) -> None:
        self.foreign: set[str] = set()  # changed by another writer during the command
        self.warning: str | None = None
        self.problems: list[str] = []
        self.held: dict[str, float] = {}  # rel -> the end of this writer's lease on it


def _rels(paths: list[str], project: str) -> list[tuple[str, str]]:
    """(path, path relative to the project) for the paths inside it (normalised
    absolute paths, as `trail.entries` gives them)."""
    root = project.rstrip("/") + "/"
    cut = len(root)
    return [(path, path[cut:]) for path in paths if path.startswith(root) and len(path) > cut]


def after_bash(
    repo: Repo,
    me: Writer,
    changed: list[str],
    now: float,
    *,
    window: Window | None,
    holder_pid: int | None,
    fingerprint_of: dict[str, str | None] | None = None,
) -> Aftermath:
    """Sort the changed files (normalised absolute paths) that lie in the work tree
    of `repo`, lease this writer's own, and warn about held ones. `window`: when the
    command ran, as the client reports it (None: it ended now, and that is all that
    is known); `holder_pid`: the client process the writer's claims live with;
    `fingerprint_of`: the files' fingerprints (rel -> fingerprint) after the command, for its
    leases to record."""
    result = Aftermath()
    directory, hot, minutes = repo.ledger, repo.index, repo.minutes
    ran = window if window is not None else (now, now)
    mine: list[str] = []
    read: dict[str, list[dict[str, Any]]] = {}  # rel -> its leases, read once
    leased_by_others: dict[str, dict[str, Any]] = {}
    worktree = repo.worktree
    inside = _rels(changed, repo.root)
    names = _lease_names(directory, minutes, len(inside))
    for path, rel in inside:
        if names is not None and lease.file_name(rel) not in names:
            mine.append(rel)  # no lease file: nobody else's
            read[rel] = []
            continue
        leases = read[rel] = lease_store.read(directory, rel)
        edited = _written_by_another(leases, me, ran, "edit")
        if edited is not None:
            if _left_as_written(path, edited, fingerprint_of, rel):
                result.foreign.add(path)  # the other writer's edit is the file: not ours
            else:  # changed after that edit: this command overwrote it
                leased_by_others[rel] = edited
            continue
        seen = lease.judge(leases, me, worktree, now, liveness.alive)
        if _written_by_another(seen.blockers, me, ran, "bash") is not None:
            continue  # ambiguous: both commands may have reported it
        if seen.blockers:
            leased_by_others[rel] = seen.blockers[0]
        else:  # another worktree's lease refuses it in the claim, under `deny`
            mine.append(rel)
    if minutes > 0 and mine:
        claims = lease_store.claim_many(
            repo,
            mine[:MAX_LEASED],
            me,
            now,
            holder_pid=holder_pid,
            source="bash",
            fingerprint_of=fingerprint_of,
            leases_of=read,
        )
        for rel, outcome in claims.items():
            if outcome.problem:
                result.problems.append(outcome.problem)
            if outcome.expires is not None:
                result.held[rel] = outcome.expires
            if outcome.blockers:
                leased_by_others[rel] = outcome.blockers[0]
        if any(outcome.new_ledger for outcome in claims.values()):
            from agent_hooks.ledger import known_ledgers  # the first lease in this repository

            known_ledgers.remember(repo.state_dir, repo.root, directory, now)
    cards: dict[object, dict[str, Any] | None] = {}
    notes = []
    if leased_by_others:
        from agent_hooks.leases import lease_messages  # only to name a holder

        by = f"{me.label()}'s shell command"
        for rel in list(leased_by_others)[:MAX_NOTES]:  # their holders hear it, and who
            lease_store.mark_changed(directory, rel, worktree, by, now)
    for rel, held in list(leased_by_others.items())[:MAX_NOTES]:
        key = held.get("writer")
        if key not in cards:
            cards[key] = writer_cards.card(directory, key)
        notes.append(f"{rel} ({lease_messages.holder_label(held, cards[key])} is changing it)")
    more = len(leased_by_others) - len(notes)
    if hot is not None and hot.others_hold_exclusive(me.owner, now):
        counts = blocking.holder_counts(directory, minutes, now)
        found, unchecked = _reserved_notes(
            repo.state_dir, hot, me, inside, result.foreign, now, MAX_NOTES - len(notes), counts,
            fingerprint_of or {},
        )  # fmt: skip
        notes += found
        more += unchecked
    if more:
        notes.append(f"{'and ' if notes else ''}{more} more changed files in held paths")
    if notes:
        result.warning = (
            "agent-hooks: your last shell command changed files that another writer holds: "
            + ", ".join(notes)
            + ". If your command made these changes, undo them (restore the files' previous "
            "content, e.g. `git checkout -- <file>` for a committed file) and leave these "
            "paths to their holder."
        )
    return result


def _lease_names(directory: str, minutes: int, changed: int) -> set[str] | None:
    """The names of the ledger's lease files, to tell whether a path has one; None:
    look each up on its own. Linear whatever the sizes: for a few changed files each
    is looked up on its own (a failed open); past `LIST_FROM` the ledger's lease
    directory is listed once, its names compared with the files' escaped names
    (`lease.file_name`: a listing of 5,000 leases costs more than a few lookups);
    with leases off there are none."""
    if minutes <= 0:
        return set()
    if changed <= LIST_FROM:
        return None
    import posix

    try:
        return set(posix.listdir(fs.join(directory, lease_store.LEASES)))
    except OSError:
        return set()


def _written_by_another(
    leases: list[dict[str, Any]], me: Writer, ran: Window, source: str
) -> dict[str, Any] | None:
    """Another writer's lease from `source` (edit, bash) whose write falls inside the
    command's window, or None."""
    for item in leases:
        written = item.get("written")
        if item.get("writer") == me.key or item.get("source") != source:
            continue
        if isinstance(written, int | float) and in_window(ran, written):
            return item
    return None


def _left_as_written(
    path: str, edited: dict[str, Any], fingerprint_of: dict[str, str | None] | None, rel: str
) -> bool:
    """Is the file as the other writer's edit left it? Yes while that edit's
    fingerprint is not recorded yet (its PostToolUse is still to come), or the file
    still matches it; no when the file changed after it (a long command overwrote
    an edit made while it ran: issue 18, defect 4). The file's fingerprint taken
    after the command (`fingerprint_of`), when there is one, is not taken again."""
    recorded = fingerprints.read(edited.get("fp"))
    if recorded is None:
        return True
    if fingerprint_of is not None and rel in fingerprint_of:
        return fingerprints.same(fingerprint_of[rel], recorded)
    return fingerprints.changed(path, recorded) is None


def _reserved_notes(
    state_dir: str,
    hot: index_records.HotIndex,
    me: Writer,
    changed: list[tuple[str, str]],
    foreign: set[str],
    now: float,
    room: int,
    holder_counts: Callable[[tuple[Any, ...]], bool],
    fingerprint_of: dict[str, str | None],
) -> tuple[list[str], int]:
    """Changed files another owner holds exclusively by reservation whose holder
    counts (`blocking.holder_counts`) — unless the file's current content is the
    holder's own last write: at most `room` notes (and at most MAX_CHECKS files
    compared), and how many more held files there were (not compared). A file's
    fingerprint taken after the command (`fingerprint_of`, by rel) is not taken again."""

    living: dict[int, bool] = {}  # id(record) -> does its holder count (asked once)

    def counts(rec: tuple[Any, ...]) -> bool:
        if id(rec) not in living:
            living[id(rec)] = holder_counts(rec)
        return living[id(rec)]

    trails: dict[str | None, dict[str, Any]] = {}  # holder agent -> its trail's fingerprints
    described: dict[tuple[int, ...], str] = {}
    notes: list[str] = []
    more = checks = 0
    blockers = blocking.edit_blockers(hot, me.owner, now, counts)
    for path, rel in changed:
        if path in foreign:
            continue
        holders = blockers(rel)
        if not holders:
            continue
        if len(notes) >= room or checks >= MAX_CHECKS:
            more += 1
            continue
        checks += 1
        fingerprint = fingerprint_of[rel] if rel in fingerprint_of else fingerprints.of(path)
        holders = [
            rec
            for rec in holders
            if fingerprint is None
            or _holder_fingerprint(trails, state_dir, rec[index_records.AGENT], path, now)
            != fingerprint
        ]
        if holders:
            from agent_hooks.reservations import reservation  # only to describe a holder

            key = tuple(id(rec) for rec in holders)
            if key not in described:
                described[key] = "; ".join(
                    reservation.describe(index_records.as_dict(r), now) for r in holders
                )
            notes.append(f"{rel} ({described[key]})")
    return notes, more


def _holder_fingerprint(
    trails: dict[str | None, dict[str, Any]],
    state_dir: str,
    holder: str | None,
    path: str,
    now: float,
) -> object:
    """The fingerprint of `path` in the holder's trail (its state read once per call)."""
    if holder not in trails:
        trails[holder] = _fingerprints(state_dir, holder, now)
    return trails[holder].get(path)


def _fingerprints(state_dir: str, holder: str | None, now: float) -> dict[str, Any]:
    from agent_hooks import identity
    from agent_hooks.agents import state_file

    try:
        agent = identity.Agent(identity.check_agent_name(holder) if holder else None, state_dir)
    except identity.IdentityError:
        return {}
    doc, _ = state_file.read(agent, now)
    found: dict[str, Any] = doc["fingerprints"]
    return found
