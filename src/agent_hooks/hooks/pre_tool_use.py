"""PreToolUse: refuse an edit of a path another agent holds exclusively.

Write, Edit, MultiEdit (older clients) and NotebookEdit are checked against the
project's reservation index; Bash is parsed for the files it would visibly
write — but only when some other agent holds anything exclusive in the project,
so an unreserved project pays nothing. Reads are never blocked.

Settings: `AGENT_HOOKS_ENFORCE=off` turns enforcement off for this agent (each
edit it lets through that would have been denied is logged);
`AGENT_HOOKS_STRICT=1` (or `agent-hooks strict on` for the project) requires
the agent's own reservation for every edit.
"""

from __future__ import annotations

from agent_hooks import hook_runtime, identity
from agent_hooks.reservations import enforcement, index

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


def strict_setting(environ: Any, hot: index.HotIndex | None) -> bool:
    value = environ.get("AGENT_HOOKS_STRICT", "").strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    return hot is not None and hot.strict


class _Indexes:
    """Each project's reservation index, loaded at most once per hook run."""

    __slots__ = ("loaded", "state_dir")

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.loaded: dict[str, index.HotIndex | None] = {}

    def get(self, project: str) -> index.HotIndex | None:
        if project not in self.loaded:
            self.loaded[project] = index.load_hot(self.state_dir, project)
        return self.loaded[project]


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
    project = ctx.project_root()
    indexes = _Indexes(ctx.state_dir)
    if tool == "Bash":
        reason = _check_bash(ctx, tool_input, project, indexes, me)
    else:
        reason = _check_edit(ctx, tool_input.get(EDIT_TOOLS[tool]), project, indexes, me)
    if reason is None:
        return None
    if ctx.environ.get("AGENT_HOOKS_ENFORCE", "").strip().lower() in ("0", "off", "false", "no"):
        ctx.log(
            f"AGENT_HOOKS_ENFORCE=off: allowed {tool} that would be denied: {reason.splitlines()[0]}"
        )
        return None
    ctx.log(f"denied {tool}: {reason.splitlines()[0]}")
    return deny(reason)


def _check_edit(
    ctx: hook_runtime.HookContext,
    target: object,
    project: str | None,
    indexes: _Indexes,
    me: str | None,
) -> str | None:
    if not isinstance(target, str) or not target:
        return None
    return _check_places(ctx, indexes, me, enforcement.locate(target, ctx.cwd, project))


def _check_bash(
    ctx: hook_runtime.HookContext,
    tool_input: dict[str, Any],
    project: str | None,
    indexes: _Indexes,
    me: str | None,
) -> str | None:
    """Parse the command only when, in the agent's project, another agent holds
    something exclusive or strict mode is on (a command that `cd`s into another
    project is then checked against that project too)."""
    command = tool_input.get("command")
    if not isinstance(command, str) or project is None:
        return None
    hot = indexes.get(project)
    if not (
        (hot is not None and hot.others_hold_exclusive(me, ctx.now))
        or strict_setting(ctx.environ, hot)
    ):
        return None
    if not enforcement.bash_might_write(command):
        return None  # nothing the parser could see: do not pay for loading it
    from agent_hooks.reservations.bash import (
        writes as bash_writes,
    )  # only when someone else holds something

    analysis = bash_writes.analyze(command, ctx.cwd or project, ctx.environ.get("HOME"))
    for target in analysis.targets:
        if target.glob:
            places = enforcement.locate_glob(target.path, project)
        else:
            places = enforcement.locate_write(target.path, project)
        reason = _check_places(ctx, indexes, me, places, bash=True, glob=target.glob)
        if reason is not None:
            return reason
    return None


def _check_places(
    ctx: hook_runtime.HookContext,
    indexes: _Indexes,
    me: str | None,
    places: list[enforcement.Place],
    *,
    bash: bool = False,
    glob: bool = False,
) -> str | None:
    """Why a target may not be written, given every (project, relative path) it
    has: another agent's exclusive reservation in any of them, or strict mode in
    any of them without a reservation of one's own in one of them. A Bash target
    is a path and everything below it ("" is the whole project) or a glob."""
    strict_rel = None
    owned = False
    for root, rel in places:
        hot = indexes.get(root)
        if hot is not None:
            holders = (
                enforcement.blocking_write(hot, _compile_target(rel, glob), me, ctx.now)
                if bash
                else enforcement.blocking_edit(hot, rel, me, ctx.now)
            )
            if holders:
                return _deny_text(rel, holders, ctx.now, bash)
        if rel and not glob:
            owned = owned or enforcement.owns(hot, rel, me, ctx.now)
            if strict_rel is None and strict_setting(ctx.environ, hot):
                strict_rel = rel
    if strict_rel is not None and not owned:
        return enforcement.strict_message(strict_rel)
    return None


def _deny_text(rel: str, holders: list[Any], now: float, bash: bool) -> str:
    if not bash:
        return enforcement.deny_message(rel, holders, now)
    shown = rel or "the whole project"
    return enforcement.deny_message(shown, holders, now).replace(
        "Do not edit it now.", f"This Bash command would write {shown}; do not run it now.", 1
    )


def _compile_target(rel: str, glob: bool) -> list[Any]:
    """A Bash target as a pattern: the path and everything below it ("" is the
    whole project); a shell glob keeps its wildcards (one the pattern syntax
    refuses is taken literally)."""
    from agent_hooks.reservations import pattern

    if not rel:
        return pattern.compile("**")
    if glob:
        try:
            return pattern.compile(rel)
        except ValueError:
            pass
    return pattern.literal(rel)


def main() -> int:
    return hook_runtime.run(EVENT, handle)
