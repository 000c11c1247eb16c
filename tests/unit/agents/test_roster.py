"""roster: which agents a state directory holds (`load_all`) and which of them are
still at work (`pid_alive`, `is_active`). Real files in tmp_path; time is passed in."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_hooks.agents import roster, state
from hook_runner import ROOT, write_state
from pids import dead_pid

NOW = 1_800_000_000.0
SRC = str(ROOT / "src")


# --- pid_alive --------------------------------------------------------------------


def test_our_own_pid_is_alive() -> None:
    assert roster.pid_alive(os.getpid()) is True


def test_the_pid_of_a_process_that_exited_is_dead() -> None:
    """Once a child has exited and been reaped, nothing answers to its pid."""
    child = subprocess.Popen(["true"])
    assert child.wait() == 0
    assert roster.pid_alive(child.pid) is False


@pytest.mark.parametrize(
    "pid", [None, True, False, -1, 0, 1 << 31, 1 << 64, "1", "123", 1.0, [1]], ids=repr
)
def test_no_usable_pid_means_unknown(pid: object) -> None:
    """Not a pid (bools, -1 and 0 would signal whole groups with kill): None, never a guess."""
    assert roster.pid_alive(pid) is None


@pytest.mark.parametrize(
    ("error", "expected"),
    [(PermissionError(errno.EPERM, "x"), True), (OSError(errno.EINVAL, "x"), None),
     (OverflowError("x"), None)],
)  # fmt: skip
def test_kill_errors(monkeypatch: pytest.MonkeyPatch, error: Exception, expected: bool) -> None:
    """EPERM: the process exists but is someone else's; any other failure: unknown."""

    def kill(pid: int, sig: int) -> None:
        raise error

    monkeypatch.setattr(roster.os, "kill", kill)
    assert roster.pid_alive(4242) is expected


# --- is_active --------------------------------------------------------------------


@pytest.mark.parametrize("active", [False, None, "true", 1])
def test_an_agent_whose_conversation_ended_is_inactive(active: object) -> None:
    """Only `active: true` counts, however alive the process or recent the activity."""
    assert not roster.is_active({"active": active, "pid": os.getpid(), "last_activity": NOW}, NOW)
    assert not roster.is_active({}, NOW)


def test_a_known_pid_decides() -> None:
    """A live pid keeps an agent active after long silence; a dead one ends it at once."""
    assert roster.is_active({"active": True, "pid": os.getpid(), "last_activity": 0}, NOW)
    assert not roster.is_active({"active": True, "pid": dead_pid(), "last_activity": NOW}, NOW)


@pytest.mark.parametrize("pid", [None, True, -5, "12"])
def test_without_a_pid_recent_activity_decides(pid: object) -> None:
    """No usable pid: active while last heard from less than ACTIVE_WINDOW ago."""
    window = roster.ACTIVE_WINDOW

    def active(last: object) -> bool:
        return roster.is_active({"active": True, "pid": pid, "last_activity": last}, NOW)

    assert active(NOW) and active(NOW - window + 1)
    assert not active(NOW - window) and not active(None) and not active(0)
    assert not roster.is_active({"active": True, "pid": pid}, NOW)


# --- load_all ---------------------------------------------------------------------


def names(records: list[roster.AgentRecord]) -> list[str | None]:
    return [r.agent.name for r in records]


def test_no_state_directory_means_no_agents(tmp_path: Path) -> None:
    assert roster.load_all(str(tmp_path / "missing"), NOW) == []
    (tmp_path / "file").write_text("{}")
    assert roster.load_all(str(tmp_path / "file"), NOW) == []


def test_agents_are_sorted_with_the_shared_agent_first(state_dir: Path) -> None:
    for name in ("zed", "alice", "Bob", "_x", None):
        write_state(state_dir, name, {"active": True})
    assert names(roster.load_all(str(state_dir), NOW)) == [None, "Bob", "_x", "alice", "zed"]


def test_files_that_are_not_state_files_are_skipped(state_dir: Path) -> None:
    """Only `agent-state.json` and `state-<valid name>.json`: not temp files, logs,
    other JSON, an empty name, or names check_agent_name refuses."""
    write_state(state_dir, "alice", {})
    for other in ("README", "settings.json", "state-.json", "state-a..b.json", "state-a\x01b.json",
                  "state-x.txt", "state-x.json.1", ".state-x.json.99.ab12.tmp", "agent-hooks.log",
                  "Agent-State.json", "xstate-y.json"):  # fmt: skip
        (state_dir / other).write_text("{}")
    (state_dir / "agent-hooks").mkdir()
    assert names(roster.load_all(str(state_dir), NOW)) == ["alice"]


def test_a_state_file_is_read_and_normalized(state_dir: Path) -> None:
    """The document is normalized (agent_name from the file name); mtime is the file's."""
    raw = {"active": True, "pid": 4242, "issue_id": "ISS-1", "agent_name": "mallory", "x": 1}
    write_state(state_dir, "alice", raw, mtime=NOW - 60)
    [record] = roster.load_all(str(state_dir), NOW)
    assert record.problem is None and record.mtime == NOW - 60
    assert record.doc == state.normalize(raw, "alice", NOW)
    assert record.doc["agent_name"] == "alice" and record.doc["issue_id"] == "ISS-1"


@pytest.mark.parametrize(
    ("content", "problem"), [("{not json", ""), ("[1, 2]", "found list"), ("", "")]
)
def test_a_corrupt_file_is_listed_with_its_problem(
    state_dir: Path, content: str, problem: str
) -> None:
    """Listed (with defaults) rather than hidden or fatal; the lock-free read moves nothing."""
    path = write_state(state_dir, "carol", content, mtime=NOW - 5)
    write_state(state_dir, "dave", {"active": True})
    records = roster.load_all(str(state_dir), NOW)
    assert names(records) == ["carol", "dave"]
    carol = records[0]
    assert carol.problem and problem in carol.problem
    assert carol.doc == state.normalize(None, "carol", NOW) and carol.mtime == NOW - 5
    assert path.read_text() == content and records[1].problem is None


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_named_like_a_state_file_is_not_followed(
    state_dir: Path, tmp_path: Path, dangling: bool
) -> None:
    """Its target is never read: the agent is listed with the refusal as its problem."""
    target = tmp_path / "elsewhere.json"
    if not dangling:
        target.write_text(json.dumps({"active": True, "pid": os.getpid(), "issue_id": "STOLEN"}))
    state_dir.mkdir()
    (state_dir / "state-mallory.json").symlink_to(target)
    [record] = roster.load_all(str(state_dir), NOW)
    assert record.agent.name == "mallory" and record.problem and "symlink" in record.problem
    assert record.doc == state.normalize(None, "mallory", NOW)
    assert not roster.is_active(record.doc, NOW)


def test_a_fifo_named_like_a_state_file_does_not_block(state_dir: Path) -> None:
    """SessionStart lists the roster: a FIFO planted as a state file must not hang it."""
    state_dir.mkdir()
    os.mkfifo(state_dir / "state-fifo.json")
    code = (
        f"import sys; sys.path.insert(0, {SRC!r}); from agent_hooks.agents import roster; "
        f"print([(r.agent.name, bool(r.problem)) for r in roster.load_all({str(state_dir)!r}, 0)])"
    )
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=3)
    except subprocess.TimeoutExpired:
        pytest.fail("load_all blocked on a FIFO")
    assert proc.stdout.decode().strip() == "[('fifo', True)]"


def test_a_state_file_a_write_is_moving_is_listed_once_from_its_aside_name(
    state_dir: Path,
) -> None:
    """A write moves the state to `.state-<name>.json.aside` for an instant (and a
    writer killed then leaves it there): the agent is still listed, once."""
    write_state(state_dir, "alice", {"active": True}, mtime=NOW - 60)
    (state_dir / "state-alice.json").rename(state_dir / ".state-alice.json.aside")
    write_state(state_dir, "bob", {"active": True})
    (state_dir / ".state-bob.json.aside").write_text('{"stale": true}')
    records = roster.load_all(str(state_dir), NOW)
    assert names(records) == ["alice", "bob"]
    alice, bob = records
    assert alice.doc["active"] is True and alice.mtime == NOW - 60 and alice.problem is None
    assert "stale" not in bob.doc
