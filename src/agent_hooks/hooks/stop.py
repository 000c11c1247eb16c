"""Stop: the agent finished a turn. Record the activity; never block."""

from __future__ import annotations

from agent_hooks import hook_runtime, state, state_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "Stop"


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    state_file.update(ctx.agent, lambda doc: state.touch(doc, ctx.now), ctx.now, ctx.log)
    return None


def main() -> int:
    return hook_runtime.run(EVENT, handle)
