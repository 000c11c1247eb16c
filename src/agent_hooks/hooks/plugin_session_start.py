"""SessionStart as the plugin form runs it (`hooks/run SessionStart`, Claude Code
only): first decide whether agent-hooks is also installed into settings
(`install_check`); if its installed SessionStart will run, stand aside and only
tell the person which copy runs; otherwise do what SessionStart does
(`session_start.handle`), adding that message when there is one.
"""

from __future__ import annotations

from agent_hooks.hooks import hook_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def handle(ctx: hook_runtime.HookContext) -> hook_runtime.Answer | None:
    from agent_hooks.install import install_check

    named = (ctx.environ.get(name) for name in ctx.client.PROJECT_VARIABLES)
    project = next((value for value in named if value), None) or ctx.cwd
    try:
        aside, message = install_check.plugin_session_start(ctx.environ, project, ctx.now)
    except Exception as exc:  # undecided: the plugin runs everything (fail open)
        ctx.log(f"could not tell whether agent-hooks is also installed: {exc}; the plugin runs")
        aside, message = [], None
    if message is not None:
        ctx.log(message)
    answer: hook_runtime.Answer | None = None
    if "SessionStart" not in aside:
        from agent_hooks.hooks import session_start

        answer = session_start.handle(ctx)
    if message is None:
        return answer
    answer = answer or hook_runtime.Answer()
    answer.message = message
    return answer


def main(client: ModuleType, event: str) -> int:
    return hook_runtime.run(client, "SessionStart", handle)
