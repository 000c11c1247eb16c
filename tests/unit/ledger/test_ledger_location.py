"""ledger.ledger_location: where a repository's ledger lives (one for all its worktrees,
in the common git dir; the old per-HOME location outside git), the refusal of a
planted symlink, and the adoption of a ledger an earlier release left per HOME.

Repositories are real (`git init`, `git worktree add`); time is passed in.
"""

from __future__ import annotations

import glob
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import identity, repository, storage
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import index_records, reservation_index
from agent_hooks.writers import Writer
from git_repo import init, worktree
from hook_runner import HookRunner

NOW = 1_800_000_000.0
KEY = re.compile(r"[^/\x00\s.][^/\x00\s]{0,39}-[0-9a-f]{16}")


@pytest.fixture
def repos(tmp_path: Path) -> tuple[str, str]:
    base = Path(os.path.realpath(tmp_path))
    main = init(base / "repo")
    return str(main), str(worktree(main, base / "wt", "feature"))


def entry(rid: str, agent: str, pat: str) -> dict[str, Any]:
    return {"id": rid, "agent": agent, "pattern": pat, "mode": "exclusive",
            "expires_at": NOW + 3600, "created_at": NOW}  # fmt: skip


def legacy_truth(state_dir: str, root: str, doc: dict[str, Any]) -> Path:
    directory = ledger_location.legacy_directory(state_dir, root)
    storage.ensure_dir(directory)
    path = Path(directory) / index_records.TRUTH
    path.write_text(json.dumps(doc))
    return path


def ids(directory: str) -> list[str]:
    return [
        r["id"]
        for r in json.loads(Path(directory, index_records.TRUTH).read_text())["reservations"]
    ]


# --- legacy_key (the old reservation_index.project_key) ----------------------------------------------


def test_legacy_key_is_the_basename_and_the_fnv1a_of_the_root() -> None:
    """Pinned: the key names directories on disk, so a change would orphan every old ledger."""
    assert ledger_location.legacy_key("") == "root-cbf29ce484222325"  # FNV-1a 64 offset basis
    assert ledger_location.legacy_key("a") == "a-af63dc4c8601ec8c"


WEIRD = ["/", "/x/.hidden", "/x/...", "/x/my project!", "/x/ünï", "/x/" + "a" * 60,
         "/x/\udcff\udcfe", "/x/a\nb", "/x/-", "/x/a:b*c?", "/x/a/"]  # fmt: skip


@pytest.mark.parametrize("root", WEIRD, ids=repr)
def test_legacy_key_is_file_name_safe(root: str, tmp_path: Path) -> None:
    """One path component, not hidden, short, valid UTF-8 -- and a directory can bear it."""
    key = ledger_location.legacy_key(root)
    assert KEY.fullmatch(key), key
    key.encode("utf-8")
    (tmp_path / key).mkdir()


@given(st.text(max_size=80))
def test_any_root_gives_a_safe_key(tail: str) -> None:
    assert KEY.fullmatch(ledger_location.legacy_key("/" + tail))


def test_distinct_roots_get_distinct_keys() -> None:
    """Same basename elsewhere, case, and characters the basename part folds to "_" all differ."""
    roots = ["/a/x", "/b/x", "/a/X", "/p/a b", "/p/a_b", "/p/a!b", "/a/x/y", "/a/.x", "/a/x."]
    assert len({ledger_location.legacy_key(r) for r in roots}) == len(roots)


def test_legacy_directory_is_one_per_project_under_the_data_dir(state_dir: Path) -> None:
    parent = os.path.join(identity.data_dir(str(state_dir)), "projects")
    assert ledger_location.legacy_directory(str(state_dir), "/w/my proj") == os.path.join(
        parent, ledger_location.legacy_key("/w/my proj")
    )


# --- directory ------------------------------------------------------------------------------


def test_a_repository_and_its_worktrees_share_one_ledger(
    repos: tuple[str, str], state_dir: Path
) -> None:
    main, wt = repos
    expected = os.path.join(main, ".git", "agent-hooks")
    assert (
        ledger_location.directory(str(state_dir), main)
        == ledger_location.directory(str(state_dir), wt)
        == expected
    )
    assert ledger_location.is_repository_ledger(expected)


def test_a_directory_outside_git_keeps_the_legacy_location(tmp_path: Path, state_dir: Path) -> None:
    plain = str(tmp_path / "plain")
    os.mkdir(plain)
    assert ledger_location.directory(str(state_dir), plain) == ledger_location.legacy_directory(
        str(state_dir), plain
    )
    assert not ledger_location.is_repository_ledger(
        ledger_location.directory(str(state_dir), plain)
    )
    # it *is* the legacy location
    assert not ledger_location.has_legacy(str(state_dir), plain, repository.common_dir(plain))


# --- ensure -----------------------------------------------------------------------------------


def test_ensure_creates_a_private_directory_and_accepts_it_again(repos: tuple[str, str]) -> None:
    path = os.path.join(repos[0], ".git", ledger_location.SUBDIR)
    ledger_location.ensure(path)
    ledger_location.ensure(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700


@pytest.mark.parametrize("planted", ["symlink-to-dir", "dangling-symlink", "file"])
def test_ensure_refuses_what_is_not_a_real_directory(
    repos: tuple[str, str], tmp_path: Path, planted: str
) -> None:
    path = Path(repos[0], ".git", ledger_location.SUBDIR)
    elsewhere = tmp_path / "elsewhere"
    if planted == "symlink-to-dir":
        elsewhere.mkdir()
        path.symlink_to(elsewhere)
    elif planted == "dangling-symlink":
        path.symlink_to(elsewhere)
    else:
        path.write_text("")
    with pytest.raises(storage.StorageError, match="not a directory"):
        ledger_location.ensure(str(path))
    assert not elsewhere.exists() or list(elsewhere.iterdir()) == []


def test_a_store_write_through_a_planted_symlink_is_refused(
    repos: tuple[str, str], state_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    Path(repos[0], ".git", ledger_location.SUBDIR).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(storage.StorageError):
        reservation_store.set_strict(Repo(repos[1], str(state_dir)), True, NOW)
    assert list((tmp_path / "elsewhere").iterdir()) == []


# --- reservation_store.adopt_legacy ----------------------------------------------------------


def test_adoption_merges_once_keeps_ids_and_the_old_file(
    repos: tuple[str, str], state_dir: Path
) -> None:
    """Old entries join the repository's; ids kept; one already there is not doubled;
    the old file is kept renamed `.migrated-<UTC>`; a second call adopts nothing."""
    main, wt = repos
    state = str(state_dir)
    old = legacy_truth(state, wt, {"strict": True, "reservations": [
        entry("r-1", "alice", "src/**"), entry("r-2", "bob", "docs/**")]})  # fmt: skip
    target = ledger_location.directory(state, wt)
    ledger_location.ensure(target)
    storage.write_json_atomic(os.path.join(target, index_records.TRUTH), {"reservations": [
        entry("r-2", "bob", "docs/**"), entry("r-3", "carol", "lib/**")]})  # fmt: skip
    assert ledger_location.has_legacy(state, wt, repository.common_dir(wt))
    assert not ledger_location.has_legacy(state, main, repository.common_dir(main))
    notes = reservation_store.adopt_legacy(Repo(wt, state), NOW)
    assert notes == [f"adopted 1 reservation from {old}"]
    assert ids(target) == ["r-2", "r-3", "r-1"]
    assert json.loads(Path(target, index_records.TRUTH).read_text())["strict"] is True
    assert not old.exists() and not ledger_location.has_legacy(state, wt, repository.common_dir(wt))
    [kept] = glob.glob(f"{old}.migrated-*")
    assert kept == f"{old}.migrated-{storage.utc_stamp(NOW)}"
    assert [r["id"] for r in json.loads(Path(kept).read_text())["reservations"]] == ["r-1", "r-2"]
    assert reservation_store.adopt_legacy(Repo(wt, state), NOW + 60) == []
    assert ids(target) == ["r-2", "r-3", "r-1"]


def test_adoption_through_the_store_makes_old_reservations_bind(
    repos: tuple[str, str], state_dir: Path
) -> None:
    """The first write adopts: bob meets alice's old reservation, in every worktree."""
    main, wt = repos
    legacy_truth(str(state_dir), wt, {"reservations": [entry("r-1", "alice", "src/**")]})
    out = reservation_store.reserve(
        Repo(wt, str(state_dir)),
        Writer("bob", None),
        [("src/a.py", ["", "src", "a.py"])],
        NOW,
        reason="",
        ttl=600,
        shared=False,
        keep=False,
    )  # fmt: skip
    assert [held["id"] for _, held in out.conflicts] == ["r-1"]
    assert any("adopted 1" in note for note in out.notes)
    hot = reservation_index.load_hot(ledger_location.directory(str(state_dir), main))
    assert hot is not None and [r[index_records.RID] for r in hot.candidates("src")] == ["r-1"]


def test_nothing_to_adopt(repos: tuple[str, str], state_dir: Path, tmp_path: Path) -> None:
    """No old ledger, or a project outside git (its ledger *is* the old location)."""
    assert reservation_store.adopt_legacy(Repo(repos[0], str(state_dir)), NOW) == []
    plain = str(tmp_path / "plain")
    os.mkdir(plain)
    old = legacy_truth(str(state_dir), plain, {"reservations": [entry("r-1", "a", "x")]})
    assert reservation_store.adopt_legacy(Repo(plain, str(state_dir)), NOW) == [] and old.exists()


def test_adoption_never_overwrites_a_corrupt_ledger_unseen(
    repos: tuple[str, str], state_dir: Path
) -> None:
    """A corrupt repository ledger is quarantined (`.corrupt-*`) and said, as every write does."""
    main, _ = repos
    legacy_truth(str(state_dir), main, {"reservations": [entry("r-1", "alice", "src/**")]})
    target = ledger_location.directory(str(state_dir), main)
    ledger_location.ensure(target)
    Path(target, index_records.TRUTH).write_bytes(b'{"reservations": [{"id": "r-9", torn')
    out = reservation_store.adopt(Repo(main, str(state_dir)), NOW)
    assert any("not valid JSON" in note for note in out.notes)
    [moved] = glob.glob(os.path.join(target, index_records.TRUTH + ".corrupt-*"))
    assert Path(moved).read_bytes().endswith(b"torn")


CROSS_WORKTREE_BUG = (
    "decision.py:92-95 adopts an old ledger only when the repository's has no truth yet "
    "(`hot is None and ledger_location.has_legacy`): once another worktree wrote one, this worktree's "
    "old reservations are not enforced until a write is made from it"
)


@pytest.mark.parametrize(
    "other_first",
    [False, True],
)
def test_old_reservations_bind_at_once_after_the_upgrade(
    repos: tuple[str, str], home: Path, state_dir: Path, other_first: bool
) -> None:
    """Alice's old reservation in the main work tree refuses carol's edit there, whether
    or not an agent in another worktree wrote the repository's ledger first."""
    main, wt = repos
    old = {"reservations": [{**entry("r-1", "alice", "src/**"), "expires_at": time.time() + 3600}]}
    legacy_truth(str(state_dir), main, old)
    if other_first:
        reservation_store.set_setting(Repo(wt, str(state_dir)), "lease_minutes", 5, time.time())
    run = HookRunner(home, Path(main))
    payload = run.payload("PreToolUse_Write", cwd=main)
    payload["tool_input"]["file_path"] = os.path.join(main, "src", "a.py")
    out = run("PreToolUse", payload, agent="carol").out
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
