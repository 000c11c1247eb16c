"""gate.places: locating a directory entry a command acts on itself
(`resolve_entry`): its parent's symlinks resolved, its own name kept; a work tree as
a whole in the projects around it (`enclosing`, `locate_write`); a repository's linked
work trees (`worktrees`). (Blocking and owning are tested with the index, in
test_blocking.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from agent_hooks import repository
from agent_hooks.gate import places


def test_an_entry_keeps_its_name_and_resolves_its_parent(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "proj" / "src").mkdir(parents=True)
    (real / "elsewhere").mkdir()
    (real / "proj" / "src" / "out").symlink_to(real / "elsewhere")
    (real / "alias").symlink_to(real / "proj" / "src")
    assert places.resolve_entry(f"{real}/proj/src/out") == f"{real}/proj/src/out"
    assert places.resolve_entry(f"{real}/alias/out") == f"{real}/proj/src/out"
    assert places.resolve_entry(f"{real}/alias/new") == f"{real}/proj/src/new"
    assert places.resolve_entry(f"{real}/proj/src/out/f") == f"{real}/elsewhere/f"


def test_dot_names_and_the_root_resolve_whole(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "d").mkdir()
    (real / "l").symlink_to(real / "d")
    assert places.resolve_entry(f"{real}/l/.") == f"{real}/d"
    assert places.resolve_entry("/") == "/"


# ====== a work tree as a whole in the projects around it; a repository's linked work trees
# (issue 33)


def _submodule(real: Path) -> tuple[Path, Path]:
    top = real / "sup"
    (top / ".git").mkdir(parents=True)
    sub = top / "lib" / "sub"
    sub.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib/sub\n")
    return top, sub


def test_a_submodule_as_a_whole_is_its_path_in_the_superproject(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    top, sub = _submodule(real)
    assert places.enclosing(str(sub)) == [(str(sub), ""), (str(top), "lib/sub")]
    assert places.enclosing(str(top)) == [(str(top), "")]
    # removing it, from the superproject or from inside it: judged in both
    assert places.locate_write(str(sub), str(top)) == [(str(sub), ""), (str(top), "lib/sub")]
    assert places.locate_write(str(sub), str(sub)) == [(str(sub), ""), (str(top), "lib/sub")]
    assert places.locate_write(f"{top}/lib", str(sub)) == [(str(sub), ""), (str(top), "lib")]
    assert places.locate_write(str(top), str(top)) == [(str(top), "")]


def test_a_submodule_outside_its_superprojects_tree_is_not_its_path(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "sup" / ".git").mkdir(parents=True)
    away = real / "away"
    away.mkdir()
    (away / ".git").write_text(f"gitdir: {real}/sup/.git/modules/away\n")
    assert places.enclosing(str(away)) == [(str(away), "")]


def test_linked_work_trees_are_read_from_the_common_git_dir(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    main = real / "main"
    records = main / ".git" / "worktrees"
    for name, tree in [("here", real / "here"), ("gone", real / "gone"), ("kept", real / "kept")]:
        (records / name).mkdir(parents=True)
        (records / name / "gitdir").write_text(f"{tree}/.git\n")
    (real / "here").mkdir()
    (real / "here" / ".git").write_text(f"gitdir: {records}/here\n")
    (records / "here" / "commondir").write_text("../..\n")
    (records / "kept" / "locked").write_text("on a stick\n")
    (records / "relative").mkdir()
    (records / "relative" / "gitdir").write_text("../../../../here/.git\n")  # git 2.48
    (records / "empty").mkdir()
    (records / "empty" / "gitdir").write_text("")
    (records / "none").mkdir()
    assert places.worktrees(repository.common_dir(str(main))) == [
        ("", "worktrees/empty", True),
        (f"{real}/gone", "worktrees/gone", True),
        (f"{real}/here", "worktrees/here", False),
        (f"{real}/kept", "worktrees/kept", False),
        ("", "worktrees/none", True),
        (f"{real}/here", "worktrees/relative", False),
    ]
    here = repository.common_dir(str(real / "here"))
    assert places.worktrees(here) == places.worktrees(repository.common_dir(str(main)))


def test_a_repository_without_linked_work_trees_has_none(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "r" / ".git").mkdir(parents=True)
    assert places.worktrees(repository.common_dir(str(real / "r"))) == []
    assert places.worktrees(None) == []  # no repository
