"""SessionEnd: the conversation is over. Mark the agent inactive and release the
reservations it made without `--keep`.

Claude Code gives all SessionEnd hooks about 1.5 s together; this is one locked
state update plus, only when the agent holds reservations, one locked index
update per project it holds them in.
"""

from __future__ import annotations

from agent_hooks import hook_runtime, state, state_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "SessionEnd"


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    conversation = ctx.text("session_id")
    ended: list[bool] = []

    def mutate(doc: dict[str, Any]) -> None:
        if conversation is None or doc["conversation_id"] in (None, conversation):
            state.end_conversation(doc, ctx.now)
            ended.append(True)
        else:  # another conversation of this agent took over meanwhile: leave it be
            state.touch(doc, ctx.now)

    agent = ctx.agent
    doc = state_file.update(agent, mutate, ctx.now, ctx.log)
    if ended and any(not r.get("keep") for r in doc["reservations"]):
        from agent_hooks.reservations import store as reservation_store

        released = reservation_store.release_at_session_end(ctx.state_dir, agent.name, doc, ctx.now)
        if released:
            ctx.log(f"released {released} reservation(s) at the end of conversation {conversation}")
    return None


def main() -> int:
    return hook_runtime.run(EVENT, handle)
