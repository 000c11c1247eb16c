"""SessionEnd: the conversation is over. Release what it held — the leases of its
writers (main conversation and subagents) and the reservations it made without
`--keep` — then mark the agent inactive.

Claude Code gives all SessionEnd hooks about 1.5 s together, so this finishes
within `BUDGET` whatever any lock does: releasing comes first (it reads the
agent's state without its lock: files are replaced atomically), each lock is
waited for only as long as the budget has left, and the state update last.
"""

from __future__ import annotations

import time

from agent_hooks import identity, writers
from agent_hooks.agents import state, state_file
from agent_hooks.hooks import hook_runtime
from agent_hooks.leases import lease_release
from agent_hooks.wording import plural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

BUDGET = 0.9  # seconds for the whole hook


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    started = time.monotonic()

    def left(share: float = 1.0) -> float:
        return max(0.05, (BUDGET - (time.monotonic() - started)) * share)

    agent = ctx.agent
    conversation = writers.safe_id(ctx.hook.session)
    project = ctx.project_root()
    doc, _ = state_file.read(agent, ctx.now)
    # Without AGENT_NAME every conversation is an owner of its own, and the shared
    # state file names whichever started last: release this one's claims regardless.
    ending = conversation is None or doc["conversation_id"] in (None, conversation)
    if ending or agent.name is None:
        _release(ctx, agent, doc, conversation, project, left)

    def mutate(doc: dict[str, Any]) -> None:
        if conversation is None or doc["conversation_id"] in (None, conversation):
            state.end_conversation(doc, ctx.now)
        else:  # another conversation of this agent took over meanwhile: leave it be
            state.touch(doc, ctx.now)

    state_file.update(agent, mutate, ctx.now, ctx.log, timeout=left())
    return None


def _release(
    ctx: hook_runtime.HookContext,
    agent: identity.Agent,
    doc: dict[str, Any],
    conversation: str | None,
    project: str | None,
    left: Any,
) -> None:
    owner = writers.owner_of(agent.name, conversation)
    if project is not None:
        from agent_hooks.ledger import ledger_location

        try:
            lease_release.release_conversation(
                ledger_location.directory(ctx.state_dir, project),
                owner,
                conversation,
                ctx.client.holder_pid(ctx.environ),
                ctx.now,
                timeout=left(0.4),
            )
        except OSError as exc:  # routine releases are not logged; a failure is
            ctx.log(f"leases not released: {exc}")
    if project is None and not any(not r.get("keep") for r in doc["reservations"]):
        return
    from agent_hooks.ledger import reservation_store
    from agent_hooks.reservations import reservation

    try:
        count = reservation_store.release_at_session_end(
            ctx.state_dir,
            agent.name,
            doc,
            ctx.now,
            conversation_id=conversation,
            projects=[project] if project is not None else [],
            timeout=left(0.8),
        )
    except reservation.ReservationError as exc:
        ctx.log(f"reservations not released: {exc}")
        return
    if count:
        ctx.log(
            f"released {plural(count, 'reservation')} at the end of conversation {conversation}"
        )


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, event, handle)
