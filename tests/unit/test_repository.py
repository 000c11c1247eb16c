"""repository.git_dir / common_dir / branch: git's bookkeeping read without running
git, checked against real `git init` and `git worktree add` repositories (and
against what `git rev-parse` prints)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks import repository
from git_repo import git, init, worktree


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path]:
    """(main work tree on `main`, linked worktree on `feature`), symlinks resolved."""
    base = Path(os.path.realpath(tmp_path))
    main = init(base / "repo")
    return main, worktree(main, base / "wt", "feature")


def test_git_dir_of_the_main_work_tree_and_of_a_worktree(repos: tuple[Path, Path]) -> None:
    main, wt = repos
    assert repository.git_dir(str(main)) == str(main / ".git")
    assert repository.git_dir(str(wt)) == str(main / ".git" / "worktrees" / "wt")
    for top in repos:
        assert repository.git_dir(str(top)) == os.path.realpath(
            top / git(top, "rev-parse", "--git-dir")
        )


def test_common_dir_is_the_same_for_every_worktree(repos: tuple[Path, Path]) -> None:
    """What `git rev-parse --git-common-dir` prints, resolved: one per repository."""
    main, wt = repos
    expected = str(main / ".git")
    assert repository.common_dir(str(main)) == repository.common_dir(str(wt)) == expected
    for top in repos:
        printed = git(top, "rev-parse", "--git-common-dir")
        assert os.path.realpath(top / printed) == expected


def test_common_dir_is_resolved_through_symlinks(repos: tuple[Path, Path], tmp_path: Path) -> None:
    main, wt = repos
    (tmp_path / "via-main").symlink_to(main)
    (tmp_path / "via-wt").symlink_to(wt)
    assert repository.common_dir(str(tmp_path / "via-main")) == str(main / ".git")
    assert repository.common_dir(str(tmp_path / "via-wt")) == str(main / ".git")


def test_a_second_repository_has_another_common_dir(
    repos: tuple[Path, Path], tmp_path: Path
) -> None:
    other = init(Path(os.path.realpath(tmp_path)) / "other")
    assert repository.common_dir(str(other)) != repository.common_dir(str(repos[0]))


def test_branch_named_and_detached(repos: tuple[Path, Path]) -> None:
    """A named branch by its name (slashes kept); a detached HEAD by a 12-character id."""
    main, wt = repos
    assert repository.branch(str(main)) == "main"
    assert repository.branch(str(wt)) == "feature"
    git(wt, "checkout", "-q", "-b", "fix/login-bug")
    assert repository.branch(str(wt)) == "fix/login-bug"
    assert repository.branch(str(main)) == "main"  # each worktree has its own HEAD
    git(wt, "checkout", "-q", "--detach")
    head = git(wt, "rev-parse", "HEAD")
    assert repository.branch(str(wt)) == head[:12] and len(head) == 40


def test_a_submodule_style_git_file_without_commondir(tmp_path: Path) -> None:
    """A `.git` file naming a git dir (relative, as submodules write it) that has no
    `commondir`: that git dir is both the work tree's own and the common one."""
    top = Path(os.path.realpath(tmp_path))
    modules = top / "super" / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "HEAD").write_text("ref: refs/heads/trunk\n")
    sub = top / "super" / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert repository.git_dir(str(sub)) == str(modules)
    assert repository.common_dir(str(sub)) == str(modules)
    assert repository.branch(str(sub)) == "trunk"


def test_a_real_submodule(repos: tuple[Path, Path], tmp_path: Path) -> None:
    main, _ = repos
    lib = init(Path(os.path.realpath(tmp_path)) / "lib")
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    sub = main / "lib"
    printed = os.path.realpath(sub / git(sub, "rev-parse", "--git-common-dir"))
    assert repository.common_dir(str(sub)) == printed == str(main / ".git" / "modules" / "lib")
    assert repository.common_dir(str(main)) == str(main / ".git")


@pytest.mark.parametrize("marker", [None, "", "gitdir:", "not a git file\n", "gitdir:   \n"])
def test_no_repository_means_none(tmp_path: Path, marker: str | None) -> None:
    """A plain directory, or a `.git` file that names no git dir: all three are None."""
    top = tmp_path / "plain"
    top.mkdir()
    if marker is not None:
        (top / ".git").write_text(marker)
    assert repository.git_dir(str(top)) is None
    assert repository.common_dir(str(top)) is None
    assert repository.branch(str(top)) is None
    assert repository.git_dir(str(tmp_path / "absent")) is None


def test_a_git_dir_without_head_has_no_branch(project: Path) -> None:
    """The conftest project (an empty `.git/`): its own common dir, no branch."""
    assert repository.common_dir(str(project)) == str(project / ".git")
    assert repository.branch(str(project)) is None
