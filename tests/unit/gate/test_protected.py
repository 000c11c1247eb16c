"""gate.protected: agent-hooks' own files (ledgers, agents' state files, the
log, `~/.claude/agent-hooks/`) are guarded against agents' writes; a directory
target is guarded when it holds one of them; everything else is none of our
business. Repositories are real (`git init`, `git worktree add`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks.gate import places, protected
from agent_hooks.ledger import ledger_location
from git_repo import init, worktree


@pytest.fixture
def repos(tmp_path: Path) -> tuple[str, str]:
    base = Path(os.path.realpath(tmp_path))
    main = init(base / "repo")
    return str(main), str(worktree(main, base / "wt", "feature"))


@pytest.fixture
def sd(state_dir: Path) -> str:
    return os.path.realpath(state_dir)


def guarded(path: str, sd: str, directory: bool = False) -> str | None:
    """As the gate asks: with the ledgers of the repositories the target lies in."""
    pairs = places.locate_write(path, None) if directory else places.places(path, None)
    ledgers = [ledger_location.directory(sd, root) for root, _ in pairs]
    return protected.guarded(path, sd, ledgers, directory)


@pytest.mark.parametrize("rel", ["reservations.json", "reservations.cache",
                                 "reservations.json.lock", "leases/src%2Fapp.py",
                                 "writers/alice", "leases.lock", "new-file"])  # fmt: skip
def test_the_repository_ledger_is_guarded_from_every_worktree(
    repos: tuple[str, str], sd: str, rel: str
) -> None:
    main, _ = repos
    path = os.path.join(main, ".git", ledger_location.SUBDIR, rel)
    what = guarded(path, sd)
    assert what is not None and "the repository's ledger" in what
    assert what.endswith(os.path.join(main, ".git", "agent-hooks"))


@pytest.mark.parametrize("name", ["state-x.json", "agent-state.json", "state-x.json.lock",
                                  "agent-state.json.lock", "state-x.json.corrupt-20260101T000000Z",
                                  "state-x.json.lock.corrupt-1", "agent-hooks.log",
                                  "agent-hooks.log.1", ".state-x.json.aside",
                                  ".agent-state.json.aside"])  # fmt: skip
def test_state_files_and_the_log_are_guarded(sd: str, name: str) -> None:
    what = guarded(os.path.join(sd, name), sd)
    assert what is not None and "state file" in what


@pytest.mark.parametrize("rel", ["agent-hooks/ledgers.json", "agent-hooks/projects/p-0123/x",
                                 "agent-hooks"])  # fmt: skip
def test_the_data_directory_is_guarded(sd: str, rel: str) -> None:
    what = guarded(os.path.join(sd, rel), sd)
    assert what is not None and "agent-hooks' data" in what


@pytest.mark.parametrize("name", ["settings.json", "CLAUDE.md", "state-.json", "state-x.txt",
                                  "mystate-x.json", "agents/state-x.json", "projects/p/a.jsonl",
                                  ".settings.json.aside", "state-x.json.aside"])  # fmt: skip
def test_other_files_in_the_claude_directory_are_not_ours(sd: str, name: str) -> None:
    assert guarded(os.path.join(sd, name), sd) is None


@pytest.mark.parametrize("rel", ["README.md", "src/app.py", ".git/config", ".git/HEAD",
                                 ".git/agent-hooks-notes", ".github/agent-hooks/x", "agent-hooks"])  # fmt: skip
def test_ordinary_project_files_are_not_guarded(repos: tuple[str, str], sd: str, rel: str) -> None:
    for top in repos:
        assert guarded(os.path.join(top, rel), sd) is None
        assert guarded(os.path.join(top, rel), sd, directory=True) is None


def test_a_path_in_no_repository_is_not_guarded(tmp_path: Path, sd: str) -> None:
    assert guarded(os.path.join(os.path.realpath(tmp_path), "plain", "x"), sd) is None


def test_a_directory_holding_a_ledger_is_guarded_only_as_a_directory(
    repos: tuple[str, str], sd: str
) -> None:
    """`rm -rf .git` takes the ledger with it; an Edit of a file named `.git` does not."""
    main, _ = repos
    git_dir = os.path.join(main, ".git")
    what = guarded(git_dir, sd, directory=True)
    assert what is not None and "the repository's ledger" in what
    assert guarded(git_dir, sd) is None
    worktrees = os.path.join(main, ".git", "worktrees")
    assert guarded(worktrees, sd, directory=True) is None  # holds no ledger file


def test_a_directory_holding_state_is_guarded_only_as_a_directory(sd: str) -> None:
    home = os.path.dirname(sd)
    for holder in (sd, home):
        what = guarded(holder, sd, directory=True)
        assert what is not None and "agent-hooks' data" in what  # the most precise name
        assert guarded(holder, sd) is None
    assert guarded(os.path.join(sd, "projects"), sd, directory=True) is None


WHOLE_REPO = (
    "protected.guarded (protected.py:41-46) looks for a ledger only in the repository "
    "*above* the target's parent: `rm -rf <repo>` (or its parent) holds the ledger, "
    "but is not guarded"
)


def test_a_directory_holding_a_whole_repository_is_guarded(repos: tuple[str, str], sd: str) -> None:
    main, _ = repos
    assert guarded(main, sd, directory=True) is not None


def test_the_message_points_to_the_cli() -> None:
    text = protected.message("the repository's ledger /r/.git/agent-hooks", ".git/agent-hooks/x")
    assert text.startswith("agent-hooks: .git/agent-hooks/x is the repository's ledger")
    assert "`agent-hooks" in text and "\n" not in text
