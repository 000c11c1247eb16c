"""What the click commands share: the environment, the clock, the agent, and
output (human text or `--json`).

Invariants: every user error is a `click.ClickException` — one line on stderr,
exit status 1; `--json` output is one JSON document on stdout (orjson, indented).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

from agent_hooks import identity, repository

if TYPE_CHECKING:
    from agent_hooks.writer import Writer

F = TypeVar("F", bound=Callable[..., Any])


class Env:
    """The outside world a command sees; tests build one with their own values."""

    def __init__(self, environ: Mapping[str, str] | None = None, now: float | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.now = time.time() if now is None else now
        self.state_dir = identity.state_dir(self.environ)

    def agent(self, name: str | None = None) -> identity.Agent:
        """The named agent, else this process's (`AGENT_NAME`); a bad name is a clean error."""
        try:
            if name is not None:
                if not name:
                    raise identity.IdentityError("the agent name is empty")
                return identity.Agent(identity.check_agent_name(name), self.state_dir)
            return identity.resolve_agent(self.environ)
        except identity.IdentityError as exc:
            raise click.ClickException(str(exc)) from None

    def writer(self) -> Writer:
        """Who this command acts for: the agent, in its conversation when run by an
        agent's Bash tool (Claude Code sets `CLAUDE_CODE_SESSION_ID` there)."""
        from agent_hooks import writer

        return writer.from_environ(self.agent().name, self.environ)

    def project_root(self, given: str | None = None) -> str | None:
        """`--project DIR`, else `CLAUDE_PROJECT_DIR`, else the git top level of the cwd."""
        if given is not None:
            if not os.path.isdir(given):
                raise click.ClickException(f"--project {given}: not a directory")
            return repository.normalize_project(os.path.abspath(given))
        return repository.project_root(self.environ, os.getcwd())


def get_env() -> Env:
    ctx = click.get_current_context()
    env = ctx.find_object(Env)
    if env is None:
        env = ctx.ensure_object(Env)
    return env


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(func)


project_option = click.option(
    "--project",
    metavar="DIR",
    help="The project (default: CLAUDE_PROJECT_DIR, else the git top level of the working "
    "directory).",
)


def require_project(env: Env, given: str | None) -> str:
    """The project a command works on, or a one-line error when there is none."""
    root = env.project_root(given)
    if root is None:
        raise click.ClickException(
            "not inside a project: run in a git repository or pass --project DIR"
        )
    return root


def emit_json(data: object) -> None:
    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())


def relative(path: str, root: str | None) -> str:
    """`path` relative to `root` when it lies inside it, else unchanged."""
    if root and (path == root or path.startswith(root.rstrip("/") + "/")):
        return os.path.relpath(path, root)
    return path
