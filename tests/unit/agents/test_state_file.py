"""state_file: updates under the agent's lock, and `tell` for an agent's next hook."""

from __future__ import annotations

import json
import os
import posix
from pathlib import Path

import pytest

from agent_hooks import identity
from agent_hooks.agents import state, state_file
from hook_runner import write_state

NOW = 1_800_000_000.0


def test_tell_queues_an_alert_only_for_an_agent_with_a_state_file(tmp_path: Path) -> None:
    write_state(tmp_path, "bob", {"agent_name": "bob"})
    assert state_file.tell(str(tmp_path), "bob", "agent-hooks: hello", NOW)
    assert state_file.tell(str(tmp_path), "bob", "agent-hooks: hello", NOW)  # kept once
    doc = json.loads((tmp_path / "state-bob.json").read_text())
    assert doc["alerts"] == ["agent-hooks: hello"]
    before = sorted(p.name for p in tmp_path.iterdir())
    for name in ("carol", "../evil", "", 7, "a\nb"):
        assert not state_file.tell(str(tmp_path), name, "x", NOW)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created


def test_tell_reaches_the_shared_agent_when_the_holder_had_no_name(tmp_path: Path) -> None:
    assert not state_file.tell(str(tmp_path), None, "x", NOW)  # no shared file yet
    write_state(tmp_path, None, {})
    assert state_file.tell(str(tmp_path), None, "agent-hooks: freed", NOW)
    assert json.loads((tmp_path / "agent-state.json").read_text())["alerts"] == [
        "agent-hooks: freed"
    ]


def test_the_state_is_written_aside_never_renamed_onto_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADR-0021: every update lands its renames on free names (on ext4 a rename onto
    the old file wrote the new one out and freed the old one's blocks in the hook)."""
    agent = identity.Agent("bob", str(tmp_path))
    state_file.update(agent, lambda doc: None, NOW, lambda message: None)
    rename = posix.rename
    landed: list[bool] = []

    def renaming(src: str, dst: str) -> None:
        landed.append(os.path.lexists(dst))
        rename(src, dst)

    monkeypatch.setattr(posix, "rename", renaming)
    monkeypatch.setattr(posix, "replace", renaming)
    logged: list[str] = []
    doc = state_file.update(agent, lambda doc: state.add_alert(doc, "x"), NOW, logged.append)
    monkeypatch.undo()
    assert landed == [False, False] and doc["alerts"] == ["x"] and logged == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state-bob.json", "state-bob.json.lock"]


def test_a_state_a_write_is_moving_is_read_and_told(tmp_path: Path) -> None:
    """Between a write's two renames the state is only under its aside name: it is
    still read, still exists, still gets alerts."""
    write_state(tmp_path, "bob", {"agent_name": "bob", "issue_id": "ISS-7"})
    (tmp_path / "state-bob.json").rename(tmp_path / ".state-bob.json.aside")
    agent = identity.Agent("bob", str(tmp_path))
    assert state_file.exists(agent)
    doc, problem = state_file.read(agent, NOW)
    assert problem is None and doc["issue_id"] == "ISS-7"
    assert state_file.tell(str(tmp_path), "bob", "agent-hooks: hello", NOW)
    assert json.loads((tmp_path / "state-bob.json").read_text())["alerts"] == ["agent-hooks: hello"]
    assert not (tmp_path / ".state-bob.json.aside").exists()
