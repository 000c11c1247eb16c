"""The `agent-hooks` command line: for people, and for agents through their Bash tool.

Never imported by the hooks (click alone costs ~40 ms of start-up).
"""

from __future__ import annotations

import click

from agent_hooks import __version__
from agent_hooks.cli import (
    agents,
    brief,
    cleanup,
    context,
    demo,
    doctor,
    freshness,
    guard,
    launch,
    ledger_remote,
    ledger_settings,
    reservations,
    reserve,
    session,
    status,
    trail,
    watch,
    workspace,
)
from agent_hooks.cli._common import Env, Group
from agent_hooks.work_sessions import status_text


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agent-hooks")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Let many coding agents — Claude Code, Codex, Gemini CLI — and their subagents
    share one repository:
    per-agent state, file trails, leases and reservations, workspaces and work
    sessions.

    The agent is AGENT_NAME (unset: each conversation is an agent of its own, and
    all share the state file agent-state.json); state lives in CLAUDE_CONFIG_DIR or
    ~/.claude; a repository's reservations and leases live in its git directory.
    """
    ctx.ensure_object(Env)


for module in (
    status,
    agents,
    trail,
    cleanup,
    reserve,
    reservations,
    ledger_settings,
    ledger_remote,
    guard,
    context,
    workspace,
    brief,
    freshness,
    session,
    status_text,
    watch,
    demo,
    doctor,
    launch,
):
    module.register(main)
