"""`agent-hooks doctor`: what the first hour trips on, each with the one line that fixes it.

Checks, each `ok` or a `PROBLEM` with one line per finding ending in `(fix: …)`:

* every install of agent-hooks into a client (`install.clients.check`: the recorded ones,
  each client's user-level files, and the current project's): will the client run it — a
  stale Codex trust hash, hooks Gemini CLI or Qwen Code switched off, an untrusted project
  folder, a copy of another release — and does any hook point at nothing (its interpreter
  or entry script gone: it fails open, so it guards nothing);
* the login shell's PATH: does a login shell (what a new tmux pane starts) find the
  `agent-hooks` link install.sh made (only when install.sh made one);
* the state directory: can agent-hooks write its agents' state there.

Exit 1 when any check finds a problem; `--json` gives the same as one object.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import click

from agent_hooks import identity
from agent_hooks.cli._common import emit_json, get_env, json_option, styled
from agent_hooks.install import clients, login_path


@dataclass
class Check:
    """One check other than a client's: its name, where, and what is wrong."""

    name: str
    where: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "where": self.where, "ok": self.ok, "problems": self.problems}


def login_path_check(environ: Mapping[str, str]) -> Check | None:
    """Does a login shell find the link install.sh made? None when it made none."""
    try:
        with open(os.path.join(clients.data_dir(environ), "cli-link"), encoding="utf-8") as handle:
            link = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not os.path.isabs(link):
        return None
    bin_dir = os.path.dirname(link)
    finding = login_path.check(link, bin_dir, environ)
    problem = finding.problem(link, bin_dir)
    return Check("login shell PATH", finding.shell or "PATH", [problem] if problem else [])


def _writable(directory: str) -> str | None:
    """Why agent-hooks cannot keep files in `directory` (created when missing), or None."""
    if os.path.lexists(directory):
        if not os.path.isdir(directory):
            return f"{directory} is not a directory (fix: mv {directory} {directory}.bak)"
        if not os.access(directory, os.W_OK | os.X_OK):
            owner = os.stat(directory).st_uid
            fix = (
                f"chmod u+rwx {directory}"
                if owner == os.getuid()
                else (f"sudo chown {os.getuid()} {directory}")
            )
            return f"{directory} is not writable by you, so no agent state is kept (fix: {fix})"
        return None
    parent = os.path.dirname(directory)
    if parent == directory:
        return f"{directory} cannot be created"
    return _writable(parent)


def state_dir_check(environ: Mapping[str, str]) -> Check:
    """Can agent-hooks write its agents' state (the state directory and its data
    directory)?"""
    state = identity.state_dir(environ)
    check = Check("state directory", state)
    for directory in (state, identity.data_dir(state)):
        problem = _writable(directory)
        if problem is not None:
            check.problems.append(problem)
            break
    return check


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check what the first hour trips on: every install of agent-hooks in this HOME and
    this project (will each client run its hooks: Codex's trust hashes, Gemini CLI's and
    Qwen Code's switches and folder trust, hooks that point at nothing), whether a login
    shell finds `agent-hooks`, and whether the state directory can be written. Exit 1 when
    something is wrong; each problem is one line ending in the fix."""
    env = get_env()
    project = env.project_root()
    found = clients.check(env.environ, projects=[project] if project else [])
    checks = [c for c in (login_path_check(env.environ), state_dir_check(env.environ)) if c]
    ok = all(item.ok for item in found) and all(c.ok for c in checks)
    if as_json:
        emit_json(
            {
                "ok": ok,
                "clients": [item.as_dict() for item in found],
                "checks": [c.as_dict() for c in checks],
            }
        )
    else:
        if not found:
            click.echo("agent-hooks is installed into no client here (./install.sh installs it)")
        for item in found:
            where = f" (project {item.project})" if item.project else ""
            click.echo(f"{clients.LABELS[item.client]}{where}: {_verdict(item.ok)} — {item.where}")
            for line in item.problems:
                click.echo(f"  {line}")
        for c in checks:
            click.echo(f"{c.name}: {_verdict(c.ok)} — {c.where}")
            for line in c.problems:
                click.echo(f"  {line}")
    if not ok:
        raise SystemExit(1)


def _verdict(ok: bool) -> str:
    """`ok` in green, `PROBLEM` in red, on a terminal (`styled`)."""
    return styled("ok", "ok") if ok else styled("PROBLEM", "bad")


def problems(environ: dict[str, str]) -> list[str]:
    """One line per install a client will not run (for `agent-hooks status`)."""
    try:
        found = clients.check(environ)
    except (OSError, ValueError) as exc:
        return [f"cannot check the clients' hooks: {' '.join(str(exc).split())}"]
    return [item.problems[0] if item.problems else item.where for item in found if not item.ok]


def register(group: click.Group) -> None:
    group.add_command(doctor)
