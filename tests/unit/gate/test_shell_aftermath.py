"""gate.shell_aftermath on its own: which changed files are this writer's, its
leases on them, and the warning for held ones — found from one listing of the
ledger's lease files (long paths, whose lease file names end in a hash, too), with
the warning's list capped."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.gate import shell_aftermath
from agent_hooks.leases import lease_store
from agent_hooks.ledger import ledger_location
from agent_hooks.ledger.repo import Repo
from agent_hooks.writers import Writer

NOW = float(int(time.time()))
ALIVE = os.getpid()  # this test process stands in for the client
ME, CAROL = Writer("bob", "c2"), Writer("carol", "c3")


@pytest.fixture
def project(tmp_path: Path) -> str:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return str(path)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return str(tmp_path / "home" / ".claude")


def lease_for(state_dir: str, project: str, rels: list[str], who: Writer, now: float) -> None:
    repo = Repo(project, state_dir, {"AGENT_HOOKS_LEASE_MINUTES": "10"}, branch="main")
    lease_store.claim_many(repo, rels, who, now, holder_pid=ALIVE)


def after(state_dir: str, project: str, rels: list[str]) -> shell_aftermath.Aftermath:
    return shell_aftermath.after_bash(
        Repo(project, state_dir, {}), ME, [f"{project}/{rel}" for rel in rels], NOW,
        window=(NOW - 1.0, NOW), holder_pid=ALIVE,
    )  # fmt: skip


def test_files_another_writer_leases_are_warned_about_long_paths_too(
    state_dir: str, project: str
) -> None:
    long = "deep/" * 60 + "file.txt"  # its lease file's name is cut and ends in a hash
    lease_for(state_dir, project, ["short.txt", long], CAROL, NOW - 120)
    result = after(state_dir, project, ["short.txt", long, "mine.txt"])
    assert result.warning is not None
    assert "short.txt (" in result.warning and f"{long} (" in result.warning
    assert "mine.txt" not in result.warning
    book = ledger_location.directory(state_dir, project)
    assert [item["writer"] for item in lease_store.read(book, "mine.txt")] == [ME.key]


def test_a_write_of_another_writer_during_the_command_is_not_attributed(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, ["theirs.txt"], CAROL, NOW - 0.5)
    result = after(state_dir, project, ["theirs.txt"])
    assert result.foreign == {f"{project}/theirs.txt"} and result.warning is None


def test_an_edit_stamped_in_the_second_before_the_command_began_is_inside_it(
    state_dir: str, project: str
) -> None:
    """A lease records its write in whole seconds: an edit made 0.9 s after a command
    began (NOW - 1) may be stamped NOW - 2 — still inside, by `tool_use.SLACK`; one
    stamped before that is not (the command overwrote it: warned about)."""
    lease_for(state_dir, project, ["theirs.txt"], CAROL, NOW - 1.9)
    lease_for(state_dir, project, ["before.txt"], CAROL, NOW - 2.1)
    result = after(state_dir, project, ["theirs.txt", "before.txt"])
    assert result.foreign == {f"{project}/theirs.txt"}
    assert result.warning is not None and "before.txt (" in result.warning


def test_the_warning_names_at_most_twenty_files_and_counts_the_rest(
    state_dir: str, project: str
) -> None:
    rels = [f"f{i}.txt" for i in range(25)]
    lease_for(state_dir, project, rels, CAROL, NOW - 120)
    result = after(state_dir, project, rels)
    assert result.warning is not None
    assert result.warning.count("is changing it)") == shell_aftermath.MAX_NOTES == 20
    assert ", and 5 more changed files in held paths." in result.warning


def test_without_a_lease_directory_every_file_is_this_writers(state_dir: str, project: str) -> None:
    result = after(state_dir, project, ["a.txt", "b/c.txt"])
    assert result.warning is None and result.foreign == set() and result.problems == []
    book = ledger_location.directory(state_dir, project)
    assert [item["writer"] for item in lease_store.read(book, "b/c.txt")] == [ME.key]


@pytest.mark.parametrize("setting", ["warn", "deny"])
def test_a_file_leased_in_another_worktree_is_held_there_only_under_the_deny_setting(
    state_dir: str, project: str, setting: str
) -> None:
    """`worktree_leases warn` (the default): the writer leases the file beside the other
    worktree's writer. `deny`: the other worktree's writer holds it — the command is
    warned about and takes no lease, which would lock that writer out of its file."""
    from agent_hooks.ledger import reservation_store

    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", setting, NOW - 300)
    book = ledger_location.directory(state_dir, project)
    elsewhere = Repo("/elsewhere/wt", state_dir, {"AGENT_HOOKS_LEASE_MINUTES": "10"},
                     ledger=book, worktree="worktrees/wt", branch="feature")  # fmt: skip
    lease_store.claim_many(elsewhere, ["shared.txt"], CAROL, NOW - 120, holder_pid=ALIVE)
    result = after(state_dir, project, ["shared.txt"])
    writers = sorted(item["writer"] for item in lease_store.read(book, "shared.txt"))
    if setting == "deny":
        assert result.warning is not None and "shared.txt (" in result.warning
        assert writers == [CAROL.key] and result.held == {}
    else:
        assert result.warning is None
        assert writers == sorted([CAROL.key, ME.key]) and "shared.txt" in result.held


def test_a_changed_files_leases_are_read_once_before_the_lock_and_once_under_it(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease_for(state_dir, project, ["theirs.txt"], CAROL, NOW - 120)
    real = lease_store.read_checked
    looked: list[str] = []

    def read_checked(ledger: str, rel: str) -> tuple[list[dict[str, Any]], str | None]:
        looked.append(rel)
        return real(ledger, rel)

    monkeypatch.setattr(lease_store, "read_checked", read_checked)
    result = after(state_dir, project, ["mine.txt", "theirs.txt"])
    assert "mine.txt" in result.held and result.warning is not None
    # each: one look; then mine.txt's claim, and theirs.txt's note of the change, under
    # the lease lock
    assert looked.count("mine.txt") == 2 and looked.count("theirs.txt") == 2
