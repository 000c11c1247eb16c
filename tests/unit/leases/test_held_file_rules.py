"""leases.held_files over a state document and real files: `note` records a writer's
own write, `check` tells a held file changed by anyone else once, `moved` finds the
held files a writer's own tool call changed. The hooks that run them are tested in
tests/hooks/test_held_files.py; these pin each rule where it is decided."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import fingerprints
from agent_hooks.agents import state
from agent_hooks.leases import held_files
from agent_hooks.tool_use import SLACK

NOW = 1_800_000_000.0
PLACE = ("/ledger", "src/a.py", "wt")


def noted(tmp_path: Path, text: str = "mine\n", until: float = NOW + 600) -> tuple[Any, Path]:
    """A state in which writer `w` holds `a.py` as it wrote it."""
    doc = state.fresh("alice", NOW - 60)
    path = tmp_path / "a.py"
    path.write_text(text)
    held_files.note(doc, "w", str(path), fingerprints.of(str(path)), PLACE, until, NOW - 10)
    return doc, path


def rewrite(path: Path, text: str, mtime: float) -> None:
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def test_note_records_the_write_and_its_lease_end(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    assert doc["held"][str(path)] == {
        "writer": "w",
        "ledger": "/ledger",
        "rel": "src/a.py",
        "worktree": "wt",
        "fp": fingerprints.of(str(path)),
        "at": int(NOW - 10),
        "until": int(NOW + 600),
    }
    held_files.note(doc, "w", str(path), None, PLACE, NOW + 600, NOW)  # the writer deleted it
    assert doc["held"] == {}


def test_note_keeps_the_newest_last_and_at_most_max_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(held_files, "MAX_HELD", 3)
    doc = state.fresh("alice", NOW)
    for name in ["a", "b", "c", "a", "d"]:
        held_files.note(doc, "w", f"/p/{name}", "1:2:3", PLACE, NOW + 600, NOW)
    assert list(doc["held"]) == ["/p/c", "/p/a", "/p/d"]


def test_an_unchanged_held_file_is_not_told(tmp_path: Path) -> None:
    doc, _ = noted(tmp_path)
    assert held_files.check(doc, "w", NOW) == ([], [])


def test_a_change_by_someone_else_is_told_once_and_then_held_as_it_is(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    rewrite(path, "theirs\n", NOW - 5)
    foreign, own = held_files.check(doc, "w", NOW)
    assert own == [] and [c.path for c in foreign] == [str(path)]
    [change] = foreign
    assert (change.ledger, change.rel, change.worktree) == PLACE
    assert change.at == pytest.approx(NOW - 5) and change.since == int(NOW - 10)
    assert doc["held"][str(path)]["fp"] == fingerprints.of(str(path))  # told once
    assert held_files.check(doc, "w", NOW) == ([], [])


def test_a_change_inside_the_writers_own_command_may_be_its_own(tmp_path: Path) -> None:
    """Inside the command's time, `tool_use.SLACK` either side (an mtime in ns read as
    float seconds is exact to about 0.2 µs: the edges are tested 10 ms in)."""
    doc, path = noted(tmp_path)
    for mtime, inside in [
        (NOW - 3 - SLACK + 0.01, True),  # the command ran from NOW - 3 to NOW - 1
        (NOW - 3 - SLACK - 0.01, False),
        (NOW - 2, True),
        (NOW - 1 + SLACK - 0.01, True),
        (NOW - 1 + SLACK + 0.01, False),
    ]:
        rewrite(path, f"changed at {mtime}\n", mtime)
        foreign, own = held_files.check(doc, "w", NOW, window=(NOW - 3, NOW - 1))
        assert (len(own), len(foreign)) == ((1, 0) if inside else (0, 1)), mtime


def test_a_deleted_held_file_is_told_once_and_dropped(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    path.unlink()
    foreign, _ = held_files.check(doc, "w", NOW)
    assert [c.path for c in foreign] == [str(path)] and foreign[0].at == NOW
    assert doc["held"] == {}


def test_only_this_writers_entries_are_checked(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    rewrite(path, "theirs\n", NOW - 5)
    assert held_files.check(doc, "a subagent", NOW) == ([], [])
    assert str(path) in doc["held"]  # another writer's entry is left alone


@pytest.mark.parametrize("until", [NOW, NOW - 1, "soon", None])
def test_an_entry_ends_with_its_lease(tmp_path: Path, until: Any) -> None:
    doc, path = noted(tmp_path)
    doc["held"][str(path)]["until"] = until
    rewrite(path, "theirs\n", NOW - 5)
    assert held_files.check(doc, "w", NOW) == ([], [])
    assert doc["held"] == {}


def test_an_entry_without_a_fingerprint_is_dropped(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    doc["held"][str(path)]["fp"] = "not one"
    assert held_files.check(doc, "w", NOW) == ([], []) and doc["held"] == {}


def test_a_fingerprint_an_earlier_release_stored_still_holds(tmp_path: Path) -> None:
    """A held entry written as a list `[mtime_ns, size, checksum]` before the upgrade:
    the unchanged file is not told, a changed one is."""
    doc, path = noted(tmp_path)
    entry = doc["held"][str(path)]
    entry["fp"] = [int(x, 16) for x in entry["fp"].split(":")]
    assert held_files.check(doc, "w", NOW) == ([], [])
    assert held_files.moved(doc, "w", {str(path): fingerprints.of(str(path))}) == []
    rewrite(path, "theirs\n", NOW - 5)
    assert [c.path for c in held_files.check(doc, "w", NOW)[0]] == [str(path)]


def test_moved_finds_this_writers_held_files_its_call_changed(tmp_path: Path) -> None:
    doc, path = noted(tmp_path)
    mark = fingerprints.of(str(path))
    assert held_files.moved(doc, "w", {str(path): mark}) == []  # as it held it
    rewrite(path, "changed by the command\n", NOW - 2)
    now = fingerprints.of(str(path))
    [change] = held_files.moved(doc, "w", {str(path): now, "/p/not-held": now})
    assert change.path == str(path) and change.at == pytest.approx(NOW - 2)
    assert held_files.moved(doc, "someone else", {str(path): now}) == []
    [gone] = held_files.moved(doc, "w", {str(path): None})
    assert gone.at == 0.0
