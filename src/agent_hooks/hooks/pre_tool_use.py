"""PreToolUse: refuse an edit of a file another writer holds, and lease what it may edit.

The adapter reads the writer (the agent, plus `agent_id` inside a subagent or
teammate) and the tool's target from the payload (Write, Edit, MultiEdit of
older clients, NotebookEdit's `notebook_path`, or a Bash command line), asks
`reservations.decision`, and turns the verdict into protocol output: a deny, or
an allow carrying context (a file another worktree is changing). Reads are
never blocked. `AGENT_HOOKS_ENFORCE=off` lets a refused call through (logged).
A refused writer is noted in its agent's state, to be told when the file frees.
"""

from __future__ import annotations

from agent_hooks import identity, writers
from agent_hooks.gate import tool_call
from agent_hooks.hooks import hook_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "PreToolUse"
# What a file edit always loads (after the event's preload: agent_hooks.hooks.PRELOAD).
EDIT_MODULES = (
    "agent_hooks.liveness",
    "agent_hooks.gate.places",
    "agent_hooks.gate.protected",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_store",
    "agent_hooks.gate.edit_gate",
)
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


def allow_with(context: str) -> dict[str, Any]:
    out = hook_runtime.context_output(EVENT, context)
    out["hookSpecificOutput"]["permissionDecision"] = "allow"
    return out


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    tool = ctx.payload.get("tool_name")
    tool_input = ctx.payload.get("tool_input")
    if type(tool) is not str or not isinstance(tool_input, dict):
        return None  # a `tool_name` that is a list or an object names no tool
    if tool not in EDIT_TOOLS and tool != "Bash":
        return None
    try:
        me = writers.from_payload(ctx.agent.name, ctx.payload, ctx.environ)
    except identity.IdentityError as exc:
        # Such a writer can never hold anything, so checking it against everyone
        # else's claims is safe: it cannot walk around them by a bad name.
        ctx.log(f"{exc}; checked as a writer that holds nothing")
        me = writers.nobody()
    request = tool_call.ToolCall(
        writer=me,
        cwd=ctx.cwd,
        project=ctx.project_root(),
        state_dir=ctx.state_dir,
        environ=ctx.environ,
        now=ctx.now,
        tool_use_id=writers.safe_id(ctx.payload.get("tool_use_id")),
    )
    if tool == "Bash":
        from agent_hooks.gate import shell_gate

        verdict = shell_gate.decide(request, tool_input.get("command"))
    else:
        from agent_hooks import preload

        preload(EDIT_MODULES)
        from agent_hooks.gate import edit_gate

        verdict = edit_gate.decide(request, tool_input.get(EDIT_TOOLS[tool]))
    for problem in verdict.problems:
        ctx.log(problem)
    refusal = verdict.refusal
    if refusal is None:
        return allow_with("\n".join(verdict.context)) if verdict.context else None
    first_line = refusal.reason.splitlines()[0]
    if refusal.overridden:
        ctx.log(f"AGENT_HOOKS_ENFORCE=off: allowed {tool} that would be denied: {first_line}")
        return None
    ctx.log(f"denied {tool}: {first_line}")
    if refusal.waiting is not None:
        from agent_hooks.gate import waiting  # only on a deny

        if me.conversation != writers.NOBODY:
            waiting.note(ctx.agent, refusal.waiting, ctx.now, ctx.log)
    return deny(refusal.reason)


def main() -> int:
    return hook_runtime.run(EVENT, handle)
