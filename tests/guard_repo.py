"""Real git repositories for the git guard's tests: one work tree, a private HOME
(its `.claude` is the state directory the guard reads), git with no system or
global configuration, and the committing agent as AGENT_NAME in git's environment.
Reservations are made through reservation_store, as `agent-hooks reserve` makes them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import agent_hooks
import agent_hooks.ledger.repo
from agent_hooks import writers
from agent_hooks.git_guard import guard_hooks
from agent_hooks.leases import lease_store
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.reservations import pattern
from hook_runner import mutant_under_test

PYTHON = os.path.abspath(sys.executable)
BYPASS_WORDS = ("--no-verify", "AGENT_HOOKS_GUARD", "AGENT_HOOKS_ENFORCE", "hooksPath")


class Repo:
    """One work tree, its private HOME, and helpers to stage, commit and reserve."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.home = home
        self.state_dir = str(home / ".claude")

    def env(self, agent: str | None = None, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
        if agent is not None:
            env["AGENT_NAME"] = agent
        env.update(mutant_under_test())
        env.update(extra)
        return env

    def git(
        self, *args: str, agent: str | None = None, check: bool = True, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=self.env(agent, **extra),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {args}: {proc.stderr}")
        return proc

    def out(self, *args: str) -> str:
        return self.git(*args).stdout.strip()

    def write(self, rel: str, text: str = "x\n") -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def add(self, *rels: str) -> None:
        for rel in rels:
            self.write(rel, f"{rel}\n")
        self.git("add", "-A")

    def commit(
        self, agent: str | None = None, *extra_args: str, **env: str
    ) -> subprocess.CompletedProcess[str]:
        args = ("commit", "-q", "-m", "change", *extra_args)
        return self.git(*args, agent=agent, check=False, **env)

    def commit_files(self, message: str, files: dict[str, str]) -> str:
        """Commit `files` (rel → text) without any guard in the way; the new commit id."""
        for rel, text in files.items():
            self.write(rel, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--no-verify", "-m", message, AGENT_HOOKS_GUARD="off")
        return self.head()

    def commits(self) -> int:
        proc = self.git("rev-list", "--count", "HEAD", check=False)
        return int(proc.stdout.strip()) if proc.returncode == 0 else 0

    def head(self, ref: str = "HEAD") -> str:
        return self.out("rev-parse", ref)

    def clean(self) -> bool:
        return self.out("status", "--porcelain") == ""

    def reserve(
        self,
        agent: str | None,
        *patterns: str,
        shared: bool = False,
        root: str | None = None,
        reason: str = "farmhand-42",
        holder: dict[str, Any] | None = None,
        keep: bool = False,
    ) -> None:
        outcome = reservation_store.reserve(
            self.rules(root),
            writers.Writer(agent, None),
            [(p, pattern.compile(p)) for p in patterns],
            time.time(),
            reason=reason,
            ttl=3600,
            shared=shared,
            keep=keep,
            holder=holder,
        )
        assert not outcome.conflicts

    def rules(self, root: str | None = None, **given: Any) -> agent_hooks.ledger.repo.Repo:
        """This work tree (or the project `root`) as the rules see it (`ledger.repo`)."""
        return agent_hooks.ledger.repo.Repo(root or str(self.path), self.state_dir, **given)

    @property
    def ledger(self) -> str:
        return ledger_location.directory(self.state_dir, str(self.path))

    def lease(
        self,
        agent: str | None,
        rel: str,
        conversation: str = "c-1",
        agent_id: str | None = None,
        holder_pid: int | None = None,
    ) -> None:
        """`agent` (in `conversation`; a subagent with `agent_id`) leases `rel` in this
        work tree, as its edit would, held by `holder_pid` (default: this process)."""
        me = writers.Writer(agent, conversation, agent_id)
        repo = self.rules(environ={"AGENT_HOOKS_LEASE_MINUTES": "10"}, branch="main")
        outcome = lease_store.claim(
            repo,
            rel,
            me,
            time.time(),
            holder_pid=os.getpid() if holder_pid is None else holder_pid,
        )
        assert outcome.written and not outcome.blockers

    def release(self, agent: str | None) -> None:
        reservation_store.release(
            self.rules(), writers.Writer(agent, None), time.time(), everything=True
        )

    @property
    def hooks(self) -> Path:
        return self.path / ".git" / "hooks"

    @property
    def hook(self) -> Path:
        return self.hooks / "pre-commit"


def init_repo(path: Path, home: Path) -> Repo:
    path.mkdir(parents=True)
    repo = Repo(Path(os.path.realpath(path)), home)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", "Test")
    repo.git("config", "user.email", "test@example.com")
    repo.git("config", "commit.gpgsign", "false")
    return repo


def install(repo: Repo, mode: str = "block", where: Path | None = None) -> list[str]:
    """Install the guard; what was done to each hook file."""
    _, done = guard_hooks.install(str(where or repo.path), guard_python(repo.home), mode)
    return [result for _, result in done]


def guard_python(home: Path) -> str:
    """The interpreter the installed guard runs: PYTHON — or, while mutmut runs a
    mutant, a wrapper that puts the tests' own source tree (mutmut's mutated copy) first
    on `sys.path`: the guard's `python -I` would otherwise import the installed package,
    and no real-git test could see a guard mutant."""
    if not mutant_under_test():
        return PYTHON
    src = str(Path(agent_hooks.__file__).resolve().parents[1])
    wrapper = home / "guard-python"
    if not wrapper.exists():
        prelude = f"import sys; sys.path.insert(0, {src!r}); exec(sys.argv.pop(1))"
        write_hook(
            wrapper,
            f'[ "$1" = -I ] && [ "$2" = -c ] || exec "{PYTHON}" "$@"\n'
            f'code="$3"; shift 3\n'
            f'exec "{PYTHON}" -I -c "{prelude}" "$code" "$@"',
        )
    return str(wrapper)


def write_hook(path: Path, body: str, mode: int = 0o755) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = f"#!/bin/sh\n{body}\n".encode()
    path.write_bytes(data)
    path.chmod(mode)
    return data
