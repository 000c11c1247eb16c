"""What the model is told about its repository's ledger at SessionStart: who holds
what (reservations and other writers' leases), its own reservations, what was
dropped from it, files its branch shares with other worktrees, that its edits are
leased, how to claim (only where reservations are in use), and the strict /
enforcement settings: what is in use, not every feature.

Invariants: every item from another agent (pattern, reason, name) is one line
and trimmed (`reservation.one_line`), and each list is cut at `MAX_LISTED` with
a count, so one agent's text can neither pose as instructions nor push the
other items out of the 10,000-character context.
SessionStart also tidies the ledger here: leases of dead or silent holders go.
"""

from __future__ import annotations

from agent_hooks import switches, writers
from agent_hooks.leases import lease, lease_messages, lease_release, writer_cards
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import reservation
from agent_hooks.wording import plural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_LISTED = 25  # the whole SessionStart context is capped at 10,000 characters
ITEM_LIMIT = 300  # characters of one listed item

LEASES = (
    "Every file you change is leased to you while you work on it: other writers (other agents, "
    "and your own subagents) cannot change it meanwhile, nor you theirs; "
    "`agent-hooks reservations` shows who holds what."
)
# Told only where reservations are in use (someone holds one here, or strict mode).
HOW_TO = (
    "To claim a whole area ahead of time: `agent-hooks reserve 'src/auth/**' --reason "
    "<issue-id>` (refused if someone else holds an overlapping path); release with "
    "`agent-hooks release --all` when done."
)


def _listed(items: list[str]) -> str:
    """At most MAX_LISTED items, each one trimmed line, then how many more."""
    parts = [reservation.one_line(text, ITEM_LIMIT) for text in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        parts.append(f"and {len(items) - MAX_LISTED} more (run `agent-hooks reservations`)")
    return "; ".join(parts)


def session_start_lines(
    state_dir: str, project: str, me: writers.Writer, environ: Any, now: float, since: float
) -> list[str]:
    """The ledger's lines for this writer; `since` is when the agent was last heard
    of (what was dropped after it is news)."""
    repo = Repo(project, state_dir, environ)
    directory = repo.ledger
    swept = lease_release.sweep(directory, now)
    try:
        reservation_store.adopt(repo, now)  # earlier release's ledger; dead holders
    except reservation.ReservationError:
        pass
    found = reservation_store.listing(repo, now)
    held = found.live
    lines = [f"Ledger problem: {problem}" for problem in found.problems[:3]]
    mine = [r for r in held if reservation.owner(r) == me.owner]
    others = [r for r in held if reservation.owner(r) != me.owner]
    if others:
        described = [reservation.describe(r, now, reason_limit=120) for r in others]
        lines.append(
            f"Reservations held by other agents (do not edit these paths): {_listed(described)}."
        )
    if mine:
        own = [
            f"{r['pattern']} ({r['mode']}, {reservation.minutes_left(r, now)} min left"
            + (", kept" if r.get("keep") else "")
            + ")"
            for r in mine
        ]
        lines.append(f"Your reservations: {_listed(own)}.")
    leased = _leases_of_others(repo, me, now)
    if leased:
        lines.append(f"Files other writers are changing right now (leases): {_listed(leased)}.")
    lines += _dropped_lines(found.dropped, me, since)
    if swept:
        lines.append(
            f"{plural(len(swept), 'lease')} of writers that stopped or went silent were dropped "
            "from the ledger."
        )
    from agent_hooks.leases import overlaps

    shared = overlaps.for_worktree(repo.ledger, project, now)
    if shared:
        described = [f"{rel} ({'; '.join(who)})" for rel, who in shared.items()]
        lines.append(
            "Files your branch changed that agents in other worktrees are also changing "
            f"(a merge conflict ahead): {_listed(described)}."
        )
    if repo.minutes > 0:
        lines.append(LEASES)
    strict = switches.strict(environ, found.settings["strict"])
    if held or strict:
        lines.append(HOW_TO)
    lines += shared_lines(directory, found.settings, now)
    if strict:
        lines.append("Strict mode is on: every edit needs your own reservation covering the file.")
    if switches.is_off(environ, switches.ENFORCE):
        lines.append(
            "Warning: AGENT_HOOKS_ENFORCE=off: reservations are NOT enforced for you; "
            "check `agent-hooks reservations` yourself before editing."
        )
    return lines


def shared_lines(directory: str, settings: dict[str, Any], now: float) -> list[str]:
    """A ledger shared with other machines (docs/adr/0016): start its detached sync,
    and say what sharing means for this agent."""
    remote = settings.get("remote")
    if not remote:
        return []
    from agent_hooks.ledger import remote_view

    remote_view.start_sync(directory, now)
    view = remote_view.load(directory)
    synced = view.synced_at if view is not None else None
    age = "never" if synced is None else f"{max(0, int(now - synced))} s ago"
    line = (
        f"This repository's ledger is shared with agents on other machines through git remote "
        f"{reservation.one_line(remote, 80)} (last sync {age}): reservations hold on every "
        "machine; files agents on other machines are changing are told like files changed in "
        "other worktrees."
    )
    note = remote_view.stale_note(view, now) if remote_view.behind(view, synced, now) else None
    return [line] if note is None else [line, note]


def _leases_of_others(repo: Repo, me: writers.Writer, now: float) -> list[str]:
    from agent_hooks import liveness

    directory, worktree = repo.ledger, repo.worktree
    items = []
    for rel, item in lease_release.everything(directory):
        if item.get("worktree") != worktree or not lease.counts(item, now, liveness.alive):
            continue
        if me.relation(str(item.get("writer"))) in (writers.SELF, writers.PARENT):
            continue
        card = writer_cards.card(directory, item.get("writer"))
        items.append(
            f"{rel} ({lease_messages.holder_label(item, card)}, {lease_messages.minutes_until(item.get('expires'), now)} min left)"
        )
    return items


def _dropped_lines(dropped: list[dict[str, Any]], me: writers.Writer, since: float) -> list[str]:
    news = [
        d
        for d in dropped
        if isinstance(d.get("at"), int | float)
        and d["at"] >= since
        and reservation.owner(d) == me.owner
    ]
    if not news:
        return []
    described = [f"{d.get('pattern')} ({d.get('why')})" for d in news]
    return [
        "Your reservations dropped from the ledger since you were last here "
        f"(reserve again before editing there): {_listed(described)}."
    ]
