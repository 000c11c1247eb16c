"""The `agent-hooks` command line: for people, and for agents through their Bash tool.

Never imported by the hooks (click alone costs ~40 ms of start-up). `MENU` is the
one line each top-level command shows in `agent-hooks --help`: whole, short enough
for an 80-column terminal (click would cut a docstring's first sentence mid-phrase).
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
    restore,
    session,
    status,
    statusline,
    trail,
    watch,
    workspace,
)
from agent_hooks.cli._common import Env, Group


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
    restore,
    ledger_settings,
    ledger_remote,
    guard,
    context,
    workspace,
    brief,
    freshness,
    session,
    statusline,
    watch,
    demo,
    doctor,
    launch,
):
    module.register(main)

MENU = {
    "agents": "Every agent: its client, state, last activity.",
    "brief": "The briefing your next conversation starts from.",
    "check": "Would an edit of PATHS be allowed here?",
    "cleanup": "Remove the state of agents long gone.",
    "context": "Context files to hand to subagents.",
    "demo": "Two simulated agents share a project.",
    "doctor": "Will every client run agent-hooks' hooks?",
    "freshness": "Which files you relied on changed since.",
    "guard": "Git hooks that keep held files out of commits.",
    "launch": "Start a client in this tmux pane, its agent named.",
    "ledger": "Share the ledger with other machines via git.",
    "overlaps": "Files other worktrees are changing too.",
    "release": "Release your reservations (or, --force, another's).",
    "renew": "Extend your live reservations.",
    "reservations": "Who holds what: reservations and leases.",
    "reserve": "Claim paths ahead of your edits.",
    "restore": "Put back your last kept version of a file.",
    "session": "Work sessions: milestones, tokens, resume.",
    "settings": "Show or change the repository's settings.",
    "status": "An agent's state: who, where, its trail.",
    "statusline": "One status line for Claude Code's statusLine.",
    "strict": "Strict mode: every edit needs a reservation.",
    "trail": "The files an agent created, modified and read.",
    "watch": "A live view of agents, holds and denials.",
    "workspace": "Your context hand-off workspace.",
}
for name, line in MENU.items():
    main.commands[name].short_help = line
