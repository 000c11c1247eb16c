"""Stop and SessionEnd through the real entry script."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from hook_runner import AGENT, HookRunner, context_of, write_state


def started(run_hook: HookRunner, session: str = "conv-1") -> None:
    payload = run_hook.payload("SessionStart_startup", session_id=session)
    context_of(run_hook("SessionStart", payload))


@pytest.mark.parametrize("active", [False, True])
def test_stop_updates_last_activity_and_never_blocks(run_hook: HookRunner, active: bool) -> None:
    write_state(
        run_hook.state_dir,
        AGENT,
        {
            "registered": True,
            "active": True,
            "last_activity": 1000,
            "files_read": ["/x"],
            "conversation_id": "c",
        },
    )
    payload = run_hook.payload("Stop", stop_hook_active=active)
    result = run_hook("Stop", payload)
    assert result.code == 0 and result.out is None and result.err == ""
    doc = run_hook.state()
    assert abs(doc["last_activity"] - time.time()) < 60
    assert doc["active"] is True and doc["files_read"] == ["/x"] and doc["conversation_id"] == "c"


def test_stop_without_a_state_file_creates_one(run_hook: HookRunner) -> None:
    result = run_hook("Stop", "Stop")
    assert result.code == 0 and result.out is None
    assert run_hook.state()["agent_name"] == AGENT


def test_session_end_marks_the_agent_inactive(run_hook: HookRunner) -> None:
    session = run_hook.payload("Stop")["session_id"]
    started(run_hook, session)
    assert run_hook.state()["active"] is True
    result = run_hook("SessionEnd", "SessionEnd")
    assert result.code == 0 and result.out is None and result.err == ""
    doc = run_hook.state()
    assert doc["active"] is False
    assert doc["registered"] is True and doc["conversation_id"] == session


def test_session_end_of_an_older_conversation_leaves_the_newer_one_active(
    run_hook: HookRunner,
) -> None:
    started(run_hook, "conv-new")
    payload = run_hook.payload("SessionEnd", session_id="conv-old")
    assert run_hook("SessionEnd", payload).code == 0
    doc = run_hook.state()
    assert doc["active"] is True and doc["conversation_id"] == "conv-new"


@pytest.mark.parametrize(
    "reason", ["clear", "resume", "logout", "prompt_input_exit", "other", "new"]
)
def test_session_end_for_every_reason(run_hook: HookRunner, reason: str) -> None:
    session = run_hook.payload("SessionEnd")["session_id"]
    started(run_hook, session)
    assert run_hook("SessionEnd", run_hook.payload("SessionEnd", reason=reason)).code == 0
    assert run_hook.state()["active"] is False


def test_clear_ends_then_starts_a_new_trail(run_hook: HookRunner) -> None:
    started(run_hook, "conv-1")
    edit = run_hook.payload("PostToolUse_Edit", session_id="conv-1")
    assert run_hook("PostToolUse", edit).code == 0
    assert (
        run_hook(
            "SessionEnd", run_hook.payload("SessionEnd", session_id="conv-1", reason="clear")
        ).code
        == 0
    )
    clear = run_hook.payload("SessionStart_startup", source="clear", session_id="conv-2")
    text = context_of(run_hook("SessionStart", clear))
    doc = run_hook.state()
    assert (
        doc["active"] is True and doc["conversation_id"] == "conv-2" and doc["files_modified"] == []
    )
    assert "archived" in text


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_bad_agent_name_fails_open_and_logs(
    run_hook: HookRunner, tmp_path: Path, event: str
) -> None:
    before = set(tmp_path.rglob("*"))
    result = run_hook(event, event, agent="a/../../b")
    assert result.code == 0 and result.out is None
    lines = run_hook.log_lines()
    assert len(lines) == 1 and f"event={event}" in lines[0] and "AGENT_NAME" in lines[0]
    assert set(tmp_path.rglob("*")) - before == {run_hook.state_dir, run_hook.log_file}


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_stop_and_session_end_stay_well_inside_the_budget(run_hook: HookRunner, event: str) -> None:
    """SessionEnd hooks share ~1.5 s; with a realistic state file ours must take a fraction."""
    started(run_hook, run_hook.payload(event)["session_id"])
    doc = run_hook.state()
    doc["files_read"] = [f"{run_hook.project}/src/file_{i}.py" for i in range(500)]
    doc["files_modified"] = [f"{run_hook.project}/src/mod_{i}.py" for i in range(200)]
    write_state(run_hook.state_dir, AGENT, doc)
    for i in range(30):
        write_state(run_hook.state_dir, f"other_{i}", {"active": True, "files_read": ["/x"] * 10})
    # The hook's CPU time (user + system), which a loaded machine does not stretch as it
    # stretches wall time (bench/budgets.py reports SessionEnd's wall time).
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert run_hook(event, event).code == 0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = min(best, cpu)
    assert best < 0.5, f"{event} took {best:.3f} s of CPU at best"
