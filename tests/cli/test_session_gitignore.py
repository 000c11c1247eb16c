"""`agent-hooks session start` in a real git repository leaves `git status` clean:
the sessions directory ignores itself (a `.gitignore` holding `*`, as workspaces do),
and the user's own `.gitignore` is never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agent_hooks.cli import session
from agent_hooks.cli._common import Env
from git_repo import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
NOW = 1_800_000_000.0


@click.group()
def cli() -> None:
    """The session commands as the CLI registers them."""


session.register(cli)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "README").write_text("hello\n")
    (path / ".gitignore").write_text("build/\n")
    git(path, "add", "README", ".gitignore")
    git(path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    return path


def session(repo: Path, *args: str, environ: dict[str, str] | None = None) -> None:
    env = {"HOME": str(repo.parent / "home"), "AGENT_NAME": "cc_1", "CLAUDE_PROJECT_DIR": str(repo)}
    env.update(environ or {})
    result = CliRunner().invoke(cli, ["session", *args], obj=Env(environ=env, now=NOW))
    assert result.exit_code == 0, result.output


def test_session_start_leaves_git_status_clean(repo: Path) -> None:
    session(repo, "start", "--client", "ACME", "--code", "AUDIT")
    session(repo, "milestone", "add", "Requirements complete")
    session(repo, "close")  # archive/ too
    sessions = repo / ".claude" / "sessions"
    assert any(sessions.iterdir())
    assert (sessions / ".gitignore").read_text() == "*\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert (repo / ".gitignore").read_text() == "build/\n"  # the user's own, untouched


def test_an_edited_gitignore_is_respected(repo: Path) -> None:
    """Someone who wants work sessions in git replaces the file's content; it stays."""
    sessions = repo / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / ".gitignore").write_text("!*\n")
    session(repo, "start", "--client", "ACME", "--code", "AUDIT")
    assert (sessions / ".gitignore").read_text() == "!*\n"
    assert "?? .claude/" in git(repo, "status", "--porcelain")


def test_a_moved_sessions_directory_ignores_itself_too(repo: Path) -> None:
    session(
        repo,
        "start",
        "--client",
        "ACME",
        "--code",
        "AUDIT",
        environ={"AGENT_HOOKS_SESSIONS_DIR": "notes/sessions"},
    )
    assert (repo / "notes" / "sessions" / ".gitignore").read_text() == "*\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
