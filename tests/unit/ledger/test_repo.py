"""ledger.repo: a repository as the rules see it, worked out once per tool call —
its ledger, worktree id and branch from one read of the git layout, its index and
the rules that follow from it read when first asked, the environment before the
repository's settings; `Repos`, one `Repo` per work tree and one walk per directory.
Real `git init` / `git worktree add` repositories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks import repository
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo, Repos
from agent_hooks.reservations import reservation_index
from git_repo import with_worktree

NOW = 1_790_000_000.0


@pytest.fixture
def repos(tmp_path: Path) -> tuple[str, str]:
    """(main work tree on `main`, linked worktree on `feature`), symlinks resolved."""
    main, wt = with_worktree(tmp_path)
    return str(main), str(wt)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return str(tmp_path / "home" / ".claude")


def test_a_work_tree_and_its_linked_worktree_share_one_ledger(
    repos: tuple[str, str], state_dir: str
) -> None:
    main, wt = (Repo(top, state_dir) for top in repos)
    assert main.ledger == wt.ledger == ledger_location.directory(state_dir, repos[0])
    assert (main.worktree, wt.worktree) == (".", "worktrees/wt")
    assert (main.worktree, wt.worktree) == tuple(repository.worktree_id(t) for t in repos)
    assert (main.branch, wt.branch) == ("main", "feature")
    assert (main.root, wt.root) == repos


def test_a_directory_outside_git_keeps_the_ledger_of_earlier_releases(
    tmp_path: Path, state_dir: str
) -> None:
    plain = str(tmp_path / "plain")
    os.makedirs(plain)
    repo = Repo(plain, state_dir)
    assert repo.ledger == ledger_location.legacy_directory(state_dir, plain)
    assert repo.worktree == plain and repo.branch is None and repo.common_dir is None


def test_the_git_layout_is_read_once(
    repos: tuple[str, str], state_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger, the worktree id and the branch come from one reading of `.git` and
    `commondir` (a Codex deny once read `.git` 10 times and `commondir` 3 times)."""
    real = repository._read_small
    read: list[str] = []

    def counted(path: str) -> str | None:
        read.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(repository, "_read_small", counted)
    repo = Repo(repos[1], state_dir)
    assert (repo.worktree, repo.branch, repo.branch) == ("worktrees/wt", "feature", "feature")
    assert sorted(read) == [".git", "HEAD", "commondir"]


def test_the_index_is_read_when_first_asked_and_again_after_a_write(
    repos: tuple[str, str], state_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []
    real = reservation_index.load_hot
    monkeypatch.setattr(
        reservation_index,
        "load_hot",
        lambda d: loads.append(d) or real(d),  # type: ignore[func-returns-value]
    )
    repo = Repo(repos[0], state_dir, {})
    assert loads == []  # a PostToolUse that only notes its own writes never reads it
    assert repo.index is None and repo.minutes == 10 and not repo.strict
    assert len(loads) == 1
    reservation_store.set_setting(repo, "lease_minutes", 3, NOW)  # written through it
    assert repo.minutes == 3 and repo.index is not None and len(loads) == 2


def test_the_rules_follow_the_settings_and_the_environment_first(
    repos: tuple[str, str], state_dir: str
) -> None:
    root = repos[0]
    for name, value in (
        ("lease_minutes", 0),
        ("worktree_leases", "deny"),
        ("remote", "origin"),
    ):
        reservation_store.set_setting(Repo(root, state_dir), name, value, NOW)
    reservation_store.set_strict(Repo(root, state_dir), True, NOW)
    repo = Repo(root, state_dir, {})
    assert (repo.minutes, repo.strict, repo.deny_elsewhere, repo.shared) == (0, True, True, True)
    environ = {"AGENT_HOOKS_LEASE_MINUTES": "7", "AGENT_HOOKS_STRICT": "off"}
    assert (Repo(root, state_dir, environ).minutes, Repo(root, state_dir, environ).strict) == (
        7,
        False,
    )
    fresh = Repo(repos[1], str(Path(state_dir).parent / "other"), {})  # another worktree
    assert fresh.shared and fresh.deny_elsewhere  # the repository's settings, not the tree's


def test_without_a_reservations_file_nothing_is_shared_or_denied(
    repos: tuple[str, str], state_dir: str
) -> None:
    repo = Repo(repos[0], state_dir, {"AGENT_HOOKS_STRICT": "1"})
    assert repo.index is None
    assert (repo.shared, repo.deny_elsewhere, repo.strict, repo.minutes) == (False, False, True, 10)


def test_a_given_ledger_and_worktree_are_taken_as_they_are(tmp_path: Path) -> None:
    repo = Repo("/nowhere/wt", str(tmp_path), {}, ledger=str(tmp_path / "book"),
                worktree="worktrees/wt", branch="feature")  # fmt: skip
    assert (repo.ledger, repo.worktree, repo.branch) == (
        str(tmp_path / "book"),
        "worktrees/wt",
        "feature",
    )
    assert repo.git_dir is None and repo.common_dir is None and repo.index is None


def test_repos_work_each_repository_out_once_and_meet_it_once(
    repos: tuple[str, str], state_dir: str
) -> None:
    met: list[str] = []
    found = Repos(state_dir, {}, lambda repo: met.append(repo.root))
    main = found.repo(repos[0])
    assert found.repo(repos[0]) is main
    inside = os.path.join(repos[0], "src", "a.py")
    os.makedirs(os.path.dirname(inside))
    assert found.of_file(inside) is main
    assert found.of_file(os.path.join(repos[1], "b.py")) is found.repo(repos[1])
    assert met == list(repos)
    assert found.top(os.path.dirname(inside)) == repos[0]
    assert found.of_file("/b.py") is None  # in no repository
