"""state_file: updates under the agent's lock, and `tell` for an agent's next hook."""

from __future__ import annotations

import json
from pathlib import Path

from agent_hooks.agents import state_file
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
