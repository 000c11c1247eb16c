"""PostToolUse: add what the tool touched to the agent's trail; register files
written into a workspace; after a Bash command, warn the model if it changed a
file another agent holds; keep the active work session's figures current; record
the reservations mcp_agent_mail's tools granted."""

from __future__ import annotations

from agent_hooks import hook_runtime, identity, state, state_file, trail
from agent_hooks.work_sessions import events as work_session_events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "PostToolUse"


def handle(ctx: hook_runtime.HookContext) -> dict[str, Any] | None:
    tool = ctx.payload.get("tool_name")
    if type(tool) is str and tool.startswith("mcp__"):
        from agent_hooks.interop import mcp_agent_mail_hook  # only for MCP tools

        warning = mcp_agent_mail_hook.handle(ctx)
        return None if warning is None else hook_runtime.context_output(EVENT, warning)
    found = trail.entries(ctx.payload)
    project = ctx.project_root()
    told: list[str] = []
    if found:
        told += _record(ctx, tool, found, project)
    try:
        name = ctx.agent.name
    except identity.IdentityError:
        name = None
    session = work_session_events.post_tool_use(ctx, name, project, found)
    if session is not None:
        told.append(session["additionalContext"])
    if not told:
        return None
    output = hook_runtime.context_output(EVENT, "\n\n".join(told))
    if session is not None:
        output["systemMessage"] = session["systemMessage"]
    return output


def _record(
    ctx: hook_runtime.HookContext, tool: object, found: list[tuple[str, str]], project: str | None
) -> list[str]:
    limit = trail.read_limit(ctx.environ)
    agent = ctx.agent
    workspaces = trail.workspace_prefix(project)

    def mutate(doc: dict[str, Any]) -> bool:
        recorded = trail.record(doc, found, limit, workspaces)
        return state.touch(doc, ctx.now, state.ACTIVITY_RESOLUTION) or recorded

    state_file.update(agent, mutate, ctx.now, ctx.log)
    if workspaces is not None and project is not None and tool == "Write":
        for _, path in found:
            if path.startswith(workspaces):
                # only for a file written into a workspace
                from agent_hooks.workspaces import events as workspace_events

                workspace_events.after_write(ctx, agent, project, path)
    if tool == "Bash" and project is not None:
        from agent_hooks.reservations import bash_warning

        changed = [path for _, path in found]
        warning = bash_warning.after_bash(ctx.state_dir, project, agent.name, changed, ctx.now)
        if warning is not None:
            ctx.log(warning)
            return [warning]
    return []


def main() -> int:
    return hook_runtime.run(EVENT, handle)
