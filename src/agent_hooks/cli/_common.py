"""What the click commands share: the environment, the clock, the agent, and
output (human text or `--json`).

Invariants:

* Every user error is a `click.ClickException` — one line on stderr, exit status
  1 (2 for a usage error). `Group` (the `agent-hooks` group and every group run
  on its own) turns whatever OSError or UnicodeError a command lets through — a
  full or read-only disk, a symlink planted where a file belongs, a state
  directory that is a file — into such a line: no command prints a traceback.
* `--json` output is one JSON document on stdout (orjson, indented); text that is
  not valid Unicode (a lone surrogate: bytes of a file name that are not UTF-8)
  is written as a `\\udXXX` escape there, and as the same escape in text output.
* Times are shown to people in local time; `--json` keeps epoch seconds or UTC.
* Colour (`styled`) only on a terminal: `click.echo` drops it when the output is
  piped or captured, and none is made at all while `NO_COLOR` is set (no-color.org).
  A table is aligned on its text, never on the escapes around it.
"""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

from agent_hooks import identity, jsonio, repository, storage
from agent_hooks import posix_fs as fs
from agent_hooks.agents import state_file
from agent_hooks.clients import client_table

if TYPE_CHECKING:
    from agent_hooks.writers import Writer

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

    def known_agent(self, name: str | None = None) -> identity.Agent:
        """Like `agent`, for commands that show an agent's state: one that has no
        state file here is a one-line error, not an empty report."""
        agent = self.agent(name)
        self.check_state_dir()
        if state_file.exists(agent):
            return agent
        if name is not None:
            raise click.ClickException(
                f"no agent named {name}: {agent.state_path} does not exist "
                "(`agent-hooks agents` lists the agents)"
            )
        raise click.ClickException(
            f"no state yet for {agent.label}: {agent.state_path} does not exist (its "
            "SessionStart hook has not run; name another agent, or see `agent-hooks agents`)"
        )

    def check_state_dir(self) -> None:
        """For commands that list the state directory: a file standing where it
        belongs is a one-line error, not an empty listing (a missing one is fine)."""
        if fs.lexists(self.state_dir) and not fs.isdir(self.state_dir):
            raise click.ClickException(f"the state directory {self.state_dir} is not a directory")

    def writer(self) -> Writer:
        """Who this command acts for: the agent, in its conversation when run by an
        agent's Bash tool (Claude Code sets `CLAUDE_CODE_SESSION_ID` there)."""
        from agent_hooks import writers

        return writers.from_environ(self.agent().name, self.environ)

    def project_root(self, given: str | None = None) -> str | None:
        """`--project DIR`, else the directory a client's project variable names (Claude
        Code's `CLAUDE_PROJECT_DIR`, …), else the git top level of the cwd."""
        if given is not None:
            if not os.path.isdir(given):
                raise click.ClickException(f"--project {given}: not a directory")
            return repository.normalize_project(os.path.abspath(given))
        return repository.project_root(self.environ, os.getcwd(), client_table.project_variables())


def os_error_text(exc: OSError) -> str:
    """One line for an OSError: the file it concerns and why, in words."""
    if isinstance(exc, storage.StorageError) or exc.strerror is None:
        return str(exc)  # a sentence of ours (a symlink refused, not a regular file)
    if not exc.filename:
        return exc.strerror
    path = str(exc.filename)
    reason = exc.strerror
    directory, name = fs.split(path)
    target = storage.temp_target(name)
    if target is not None:  # the temporary file a write goes through: name the file written
        return f"cannot write {fs.join(directory, target)}: {reason}"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = _not_a_directory(path)
        if blocker == path:
            return f"{path} is not a directory"
        if blocker is not None:
            return f"{path}: {blocker} is not a directory"
    if exc.filename2:
        return f"{path} -> {exc.filename2}: {reason}"
    if name.endswith(".lock") and exc.errno != errno.ENOENT:
        return f"cannot lock {path[: -len('.lock')]}: {reason}"
    return f"{path}: {reason}"


def _not_a_directory(path: str) -> str | None:
    """The first of `path`'s ancestors (or `path` itself) that exists and is not a directory."""
    parts = path.split("/")
    for i in range(2, len(parts) + 1):
        candidate = "/".join(parts[:i])
        if candidate and fs.lexists(candidate) and not fs.isdir(candidate):
            return candidate
    return None


def printable(text: str) -> str:
    """`text` on one line: a character that is not printable (a newline in a file
    name, a lone surrogate) is written as its escape (`\\n`, `\\udcff`)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def unicode_error_text(exc: UnicodeError) -> str:
    """One line for text that is not valid Unicode (or not UTF-8)."""
    if isinstance(exc, UnicodeEncodeError | UnicodeDecodeError):
        bad = exc.object[exc.start : exc.end]
        return f"text that is not valid UTF-8 ({bad!a} at position {exc.start}): {exc.reason}"
    return f"text that is not valid UTF-8: {exc}"


def tolerant_output() -> None:
    """Let stdout write text that is not valid Unicode as `\\udXXX` escapes (stderr
    already does), instead of failing halfway through a listing. (Under the C
    locale Python's stdout takes `\\udcff` back to its byte, but fails on `\\ud800`.)"""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "surrogateescape"):
            stream.reconfigure(errors="backslashreplace")


class Group(click.Group):
    """A click group whose commands fail in one line (`Error: …`, exit 1), never
    with a traceback: OSError and UnicodeError are turned into ClickException
    here, once for every command below it."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        tolerant_output()
        return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # `agent-hooks … | head`: click's own handling
                raise
            raise click.ClickException(printable(os_error_text(exc))) from None
        except UnicodeError as exc:
            raise click.ClickException(printable(unicode_error_text(exc))) from None


def get_env() -> Env:
    ctx = click.get_current_context()
    env = ctx.find_object(Env)
    if env is None:
        env = ctx.ensure_object(Env)
    return env


def agent_choice(func: F) -> F:
    """The agent a command is about, as `[AGENT]` or `--agent NAME` (either; both
    must agree), passed on as `agent_name` (None: this process's `AGENT_NAME`)."""

    @functools.wraps(func)
    def wrapper(
        *args: Any, agent_argument: str | None, agent_option: str | None, **kwargs: Any
    ) -> Any:
        if None not in (agent_argument, agent_option) and agent_argument != agent_option:
            raise click.UsageError(
                f"two agents named ({agent_argument} and --agent {agent_option}): give one"
            )
        name = agent_argument if agent_argument is not None else agent_option
        return func(*args, agent_name=name, **kwargs)

    wrapper = click.option(
        "--agent",
        "agent_option",
        metavar="NAME",
        help="Another agent (the same as giving AGENT; default: AGENT_NAME).",
    )(wrapper)
    wrapper = click.argument("agent_argument", metavar="[AGENT]", required=False)(wrapper)
    return wrapper  # type: ignore[return-value]


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
    try:
        text = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        # orjson refuses lone surrogates; the standard library writes them raw, and
        # they become `\\udXXX` escapes (valid JSON, read back to the same text).
        import json

        text = jsonio.to_bytes(
            json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        ).decode()
    click.echo(text)


# What each tone looks like on a terminal: a verdict that passed, one that did not, one
# to look at, and what no longer counts.
TONES: dict[str, dict[str, Any]] = {
    "ok": {"fg": "green"},
    "bad": {"fg": "red", "bold": True},
    "warn": {"fg": "yellow"},
    "dim": {"dim": True},
}


def styled(text: str, tone: str | None) -> str:
    """`text` in the colour of `tone` (`TONES`), unless NO_COLOR is set (then as it
    is). `click.echo` writes the colour only to a terminal."""
    if tone is None or get_env().environ.get("NO_COLOR"):
        return text
    return click.style(text, **TONES[tone])


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    right: Collection[int] = (),
    tones: Mapping[int, Callable[[str], str | None]] | None = None,
) -> list[str]:
    """Lines of a table under a header, columns two spaces apart, each as wide as
    its widest cell; the columns in `right` (numbers) are right-aligned; a column
    in `tones` has each body cell coloured by the tone its text gets (`styled`),
    the padding left plain. Every listing for people (`agents`, `reservations`)
    is printed by this."""
    grid = [[str(cell) for cell in header]] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(header))]
    tones = tones or {}

    def cell_text(row: int, i: int, cell: str, width: int) -> str:
        pad = " " * (width - len(cell))
        tone = tones[i](cell) if row and i in tones else None
        shown = styled(cell, tone) if tone is not None else cell
        return pad + shown if i in right else shown + pad

    return [
        "  ".join(
            cell_text(n, i, cell, w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for n, r in enumerate(grid)
    ]


def relative(path: str, root: str | None) -> str:
    """`path` relative to `root` when it lies inside it, else unchanged."""
    if root and (path == root or path.startswith(root.rstrip("/") + "/")):
        return os.path.relpath(path, root)
    return path
