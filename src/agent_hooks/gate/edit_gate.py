"""Whether one tool call may change what it targets: the PreToolUse decision.

Given the writer, the target (a file path; a Bash command line is
`bash_decision`'s), the project and the clock, `edit` returns a `Verdict`: a `Refusal` (the reason the
model reads), context for an allowed call (a file other worktrees are changing),
and what to log. The adapter turns the payload into one of these calls and the
verdict into protocol output.

Invariants:

* A target is checked in every project it lies in (`places.places`), each
  against its repository's ledger: explicit reservations first (another owner's
  live exclusive reservation refuses, unless its holder is known to be gone or,
  on another host, silent longer than a lease), then leases (`lease.judge`).
* An allowed file edit takes (or renews) the writer's lease on the file in each
  ledger (`lease_store.claim`), atomically: of two writers editing one file at
  the same instant exactly one goes ahead.
* Writes into agent-hooks' own ledgers and state are refused (`protected`).
* A Bash command is decided by `bash_decision` (which uses this module's
  Request and Verdict), so a file edit never loads any of it.
* `AGENT_HOOKS_ENFORCE=off` never hides a refusal: it comes back marked
  `overridden`, for the adapter to log and let through.

Hot path: built-ins and agent_hooks' own modules only; the Bash parser and the
pattern compiler load only when a command must be parsed.
"""

from __future__ import annotations

from agent_hooks import liveness, writers
from agent_hooks.gate import places, protected
from agent_hooks.gate.tool_call import Request, Verdict, refuse
from agent_hooks.reservations import reservation_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def edit(request: Request, target: object) -> Verdict:
    """A file tool (Write, Edit, NotebookEdit, MultiEdit) writing `target`."""
    verdict = Verdict()
    if not isinstance(target, str) or not target or "\x00" in target:
        return verdict
    resolved = places.resolve(target, request.cwd, request.project)
    what = protected.guarded(resolved, request.state_dir)
    if what is not None:
        return refuse(request, verdict, protected.message(what, target))
    where = places.places(resolved, request.project)
    owner, now = request.writer.owner, request.now
    strict_rel = None
    owned = False
    claims = []
    for root, rel in where:
        hot = request.index(root)
        directory = request.ledger(root)
        minutes = request.lease_minutes(hot)
        if hot is not None:
            holders = places.blocking_edit(
                hot, rel, owner, now, places.holder_counts(directory, minutes, now)
            )
            if holders:
                waiting = _waiting(
                    request, root, rel, "reservation", holders[0][reservation_index.RID]
                )
                from agent_hooks.reservations import reservation_messages

                return refuse(
                    request, verdict, reservation_messages.deny_message(rel, holders, now), waiting
                )
        owned = owned or places.owns(hot, rel, owner, now)
        if strict_rel is None and request.strict(hot):
            strict_rel = rel
        if minutes > 0:
            claims.append((root, rel, directory, minutes, hot))
    if strict_rel is not None and not owned:
        from agent_hooks.reservations import reservation_messages

        return refuse(request, verdict, reservation_messages.strict_message(strict_rel))
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
    from agent_hooks.leases import lease_store

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
        from agent_hooks.leases import lease_messages

        holder = blockers[0]
        waiting = _waiting(request, root, rel, "lease", holder.get("writer"))
        reason = lease_messages.deny_message(
            rel, holder, request.now, lease_store.card(directory, holder.get("writer"))
        )
        refuse(request, verdict, reason, waiting)
        return True
    if outcome.elsewhere:
        from agent_hooks.leases import lease_messages

        verdict.context.append(lease_messages.elsewhere_note(rel, outcome.elsewhere, request.now))
    return False


def _judge_only(request: Request, verdict: Verdict, root: str, rel: str, directory: str) -> bool:
    """A writer that can hold nothing: refused by other writers' leases, takes none."""
    from agent_hooks.leases import lease, lease_messages, lease_store

    seen = lease.judge(
        lease_store.read(directory, rel), request.writer, root, request.now, liveness.alive
    )
    if not seen.blockers:
        return False
    holder = seen.blockers[0]
    reason = lease_messages.deny_message(
        rel, holder, request.now, lease_store.card(directory, holder.get("writer"))
    )
    refuse(request, verdict, reason)
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
