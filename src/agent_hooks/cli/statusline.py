"""`agent-hooks statusline`: the status line of `work_sessions.status_text`, as a
command (the `statusLine` setting runs the tiny entry, `hooks/status_line.py`,
which needs no click)."""

from __future__ import annotations

import sys

import click

from agent_hooks.cli._common import emit_json, get_env, json_option
from agent_hooks.work_sessions import status_text


def register(group: click.Group) -> None:
    @click.command()
    @json_option
    def statusline(as_json: bool) -> None:
        """Print one status line (work session, indicator, context used/max, agent)
        from Claude Code's status-line JSON on stdin; for the `statusLine` setting."""
        env = get_env()
        payload = {} if sys.stdin.isatty() else status_text.read_payload(sys.stdin.buffer)
        if as_json:
            emit_json(
                {
                    "figures": status_text.figures(payload, env.environ),
                    "agent": env.environ.get("AGENT_NAME") or None,
                }
            )
            return
        click.echo(status_text.line(payload, env.environ))

    group.add_command(statusline)
