"""Whether a file edit may change its target: the gate's decision for edit tools
(Claude Code's Write, Edit, NotebookEdit; Codex's apply_patch; Gemini's
write_file and replace — the client layer names the files).

Given the tool call and the target, `decide` returns a `Verdict`: a `Refusal`
(the reason the model reads), context for an allowed call (a file other
worktrees are changing), and what to log.

Invariants:

* A target is judged in every project it lies in (`places`), each against its
  repository's ledger: explicit reservations first (another owner's live
  exclusive reservation refuses, unless its holder no longer counts:
  `blocking.holder_counts`), then leases (`lease.judge`).
* Another machine's lease on the file (a ledger shared through a git remote:
  `remote_view.elsewhere`) is told like a lease in another worktree.
* An allowed edit takes (or renews) the writer's lease on the file in each
  ledger (`lease_store.claim`), atomically: of two writers editing one file at
  the same instant exactly one goes ahead. `claim=False` (`agent-hooks check`)
  judges without taking anything, as does a writer that can hold nothing.
* Writes into agent-hooks' own ledgers and state are refused (`protected`).
* `AGENT_HOOKS_ENFORCE=off` never hides a refusal: it comes back marked
  `overridden`, for the adapter to log and let through.

Hot path: built-ins and agent_hooks' own modules only; texts load only to refuse.
"""

from __future__ import annotations

from agent_hooks import liveness, writers
from agent_hooks.gate import places, protected
from agent_hooks.gate.tool_call import Place, ToolCall, Verdict, refuse
from agent_hooks.reservations import blocking, index_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.leases.lease_store import Claim


def decide(
    call: ToolCall, target: object, *, claim: bool = True, verdict: Verdict | None = None
) -> Verdict:
    """May `call.writer` change the file `target` (as the client gave it)? The
    answer is added to `verdict` when given."""
    verdict = Verdict() if verdict is None else verdict
    where = _judged(call, target, verdict)
    if where:
        _leases(call, verdict, where, claim)
    return verdict


def decide_all(call: ToolCall, targets: list[object]) -> Verdict:
    """May `call.writer` change all the files one edit writes (a patch)? Refused as
    a whole before any file is leased: each file is located and judged once, and
    only when none is refused are their leases taken (each claim judges its file
    again under the lease lock, as every claim does)."""
    if len(targets) == 1:
        return decide(call, targets[0])
    judged = []
    for target in targets:
        verdict = Verdict()
        where = _judged(call, target, verdict)
        if where:
            _leases(call, verdict, where, claim=False)
        if verdict.refusal is not None:
            return verdict
        judged.append(where)
    verdict = Verdict()
    for where in judged:
        if where and _leases(call, verdict, where, claim=True):
            break
    return verdict


def _judged(call: ToolCall, target: object, verdict: Verdict) -> list[Place]:
    """The places `target` lies in, once nothing refuses it there but leases (our
    own files, reservations, strict mode: else the refusal is in `verdict`, and no
    places)."""
    if not isinstance(target, str) or not target or "\x00" in target:
        return []
    resolved = places.resolve(target, call.cwd, call.project)
    where = call.places(places.places(resolved, call.project))
    what = protected.guarded(resolved, call.state_dir, [p.repo.ledger for p in where])
    if what is not None:
        refuse(call, verdict, protected.message(what, target))
        return []
    owner, now = call.writer.owner, call.now
    strict_rel = None
    owned = False
    for place in where:
        repo, rel = place.repo, place.rel
        if repo.index is not None:
            counts = blocking.holder_counts(repo.ledger, repo.minutes, now)
            holders = blocking.blocking_edit(repo.index, rel, owner, now, counts)
            if holders:
                from agent_hooks.reservations import reservation_messages

                waiting = _waiting(call, place, "reservation", holders[0][index_records.RID])
                reason = reservation_messages.deny_message(rel, holders, now)
                refuse(call, verdict, reason, waiting)
                return []
        owned = owned or blocking.owns(repo.index, rel, owner, now)
        if strict_rel is None and repo.strict and not places.in_workspaces(p.rel for p in where):
            strict_rel = rel
    if strict_rel is not None and not owned:
        from agent_hooks.reservations import reservation_messages

        refuse(call, verdict, reservation_messages.strict_message(strict_rel))
        return []
    return where


def _leases(call: ToolCall, verdict: Verdict, where: list[Place], claim: bool) -> bool:
    """Judge (and, with `claim`, take) the writer's leases on the target's places:
    True when another writer's lease refuses the edit."""
    holds = claim and call.writer.conversation != writers.NOBODY
    return any(place.repo.minutes > 0 and _leased(call, verdict, place, holds) for place in where)


def _leased(call: ToolCall, verdict: Verdict, place: Place, holds: bool) -> bool:
    """Judge (and, when `holds`, take) the writer's lease on the place: True when
    another writer's lease refuses the edit."""
    from agent_hooks.leases import lease, lease_store

    repo = place.repo
    remote: list[dict[str, Any]] = []  # other machines' leases (a ledger shared through git)
    if repo.shared:
        from agent_hooks.ledger import remote_view

        remote = remote_view.elsewhere(repo.ledger, repo.index, place.rel, call.now)
    if holds and not (remote and repo.deny_elsewhere):
        outcome = _claim(call, place)
        if outcome.problem is not None:
            verdict.problems.append(outcome.problem)
        if outcome.new_ledger:  # the first lease in this repository: a ledger to know of
            from agent_hooks.ledger import known_ledgers

            known_ledgers.remember(call.state_dir, repo.root, repo.ledger, call.now)
        blockers, elsewhere = outcome.blockers, outcome.elsewhere
    else:
        seen = lease.judge(
            lease_store.read(repo.ledger, place.rel),
            call.writer,
            repo.worktree,
            call.now,
            liveness.alive,
        )
        blockers, elsewhere = seen.blockers, seen.elsewhere
    elsewhere = elsewhere + remote
    if repo.deny_elsewhere:  # the claim counted this machine's other worktrees already
        blockers = blockers + [item for item in elsewhere if item not in blockers]
    if blockers:
        from agent_hooks.leases import lease_messages, writer_cards

        holder = blockers[0]
        card = writer_cards.card(repo.ledger, holder.get("writer"))
        reason = lease_messages.deny_message(place.rel, holder, call.now, card, call.writer)
        refuse(call, verdict, reason, _waiting(call, place, "lease", holder.get("writer")))
        return True
    if elsewhere:
        from agent_hooks.leases import lease_messages

        verdict.context.append(lease_messages.elsewhere_note(place.rel, elsewhere, call.now))
    return False


def _claim(call: ToolCall, place: Place) -> Claim:
    from agent_hooks.leases import lease_store

    return lease_store.claim(
        place.repo,
        place.rel,
        call.writer,
        call.now,
        holder_pid=call.holder_pid,
        tool_use_id=call.tool_use_id,
    )


def _waiting(call: ToolCall, place: Place, kind: str, holder: object) -> dict[str, Any] | None:
    """What to note for the refused writer, to tell it when the file frees (a
    writer that can hold nothing is never told)."""
    if call.writer.conversation == writers.NOBODY:
        return None
    return {
        "writer": call.writer.key,
        "project_root": place.repo.root,
        "rel": place.rel,
        "kind": kind,
        "holder": holder if isinstance(holder, str) else None,
        "since": int(call.now),
    }
