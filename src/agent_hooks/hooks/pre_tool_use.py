"""PreToolUse: refuse an edit of a path another agent holds exclusively.

The adapter reads the tool's target from the payload (Write, Edit, MultiEdit of
older clients, NotebookEdit's `notebook_path`, or a Bash command line), asks
`reservations.decision`, and turns a refusal into the protocol's deny. Reads are
never blocked. `AGENT_HOOKS_ENFORCE=off` lets a refused call through (logged).
"""

from __future__ import annotations

from agent_hooks import hook_runtime, identity
from agent_hooks.reservations import decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "PreToolUse"
EDIT_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    tool = ctx.payload.get("tool_name")
    tool_input = ctx.payload.get("tool_input")
    if (tool not in EDIT_TOOLS and tool != "Bash") or not isinstance(tool_input, dict):
        return None
    try:
        me = ctx.agent.name
    except identity.IdentityError as exc:
        ctx.log(f"{exc}; edit allowed unchecked (fail open)")
        return None
    request = decision.Request(
        me=me,
        cwd=ctx.cwd,
        project=ctx.project_root(),
        state_dir=ctx.state_dir,
        environ=ctx.environ,
        now=ctx.now,
    )
    if tool == "Bash":
        refusal = decision.bash(request, tool_input.get("command"))
    else:
        refusal = decision.edit(request, tool_input.get(EDIT_TOOLS[tool]))
    if refusal is None:
        return None
    first_line = refusal.reason.splitlines()[0]
    if refusal.overridden:
        ctx.log(f"AGENT_HOOKS_ENFORCE=off: allowed {tool} that would be denied: {first_line}")
        return None
    ctx.log(f"denied {tool}: {first_line}")
    return deny(refusal.reason)


def main() -> int:
    return hook_runtime.run(EVENT, handle)
