"""Helpers for the `agent-hooks guard` CLI tests: a real git repository, staging,
reservations through reservation_store, and the guard group run through click's
CliRunner with HOME, AGENT_NAME and the clock given through Env."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from agent_hooks.cli._common import Env
from agent_hooks.cli.guard import guard
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer

NOW = 1_800_000_000.0


def make_repo(tmp_path: Path, home: Path) -> Path:
    """A git repository (no commit yet) with a user, symlinks resolved."""
    path = tmp_path / "repo"
    path.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "T"], ["config", "user.email", "t@e"]):
        subprocess.run(
            ["git", *args],
            cwd=path,
            check=True,
            env={"PATH": os.environ["PATH"], "HOME": str(home)},
        )
    return Path(os.path.realpath(path))


def stage(repo: Path, home: Path, *rels: str) -> None:
    for rel in rels:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(rel)
    subprocess.run(
        ["git", "add", "-A"],
        cwd=repo,
        check=True,
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
    )


def reserve(
    home: Path,
    repo: Path,
    agent: str,
    *patterns: str,
    ttl: int = 3600,
    holder: dict[str, Any] | None = None,
    keep: bool = False,
) -> None:
    """`agent` reserves `patterns` at NOW; `holder`: the Claude Code process that made
    it (ADR-0014; None: made outside Claude Code, counts until it expires)."""
    outcome = reservation_store.reserve(
        Repo(str(repo), str(home / ".claude")),
        Writer(agent, None),
        [(p, pattern.compile(p)) for p in patterns],
        NOW,
        reason="farmhand-7",
        ttl=ttl,
        shared=False,
        keep=keep,
        holder=holder,
    )
    assert not outcome.conflicts


def run(
    home: Path,
    *args: str,
    agent: str | None = "alice",
    now: float = NOW,
    input: str | None = None,
    **environ: str,
) -> Result:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], **environ}
    if agent is not None:
        env["AGENT_NAME"] = agent
    return CliRunner().invoke(guard, list(args), obj=Env(environ=env, now=now), input=input)


def git(repo: Path, home: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "AGENT_HOOKS_GUARD": "off",
    }
    proc = subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    return proc.stdout.decode().strip()


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)
