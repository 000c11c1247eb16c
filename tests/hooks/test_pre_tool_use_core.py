"""PreToolUse without reservations: it allows everything, writes nothing, and fails open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hook_runner import HookRunner

FIXTURES = [
    "PreToolUse_Write",
    "PreToolUse_Edit",
    "PreToolUse_Bash",
    "PreToolUse_Read",
    "PreToolUse_Glob",
    "PreToolUse_Grep",
    "PreToolUse_Agent",
]


def files_under(path: Path) -> set[Path]:
    return set(path.rglob("*"))


def only_the_ledger(written: set[Path], run_hook: HookRunner) -> bool:
    """Nothing but the repository's ledger (a lease) and, at the first lease in a
    repository, the record of known ledgers (`ledger.known_ledgers`)."""
    ledger = run_hook.project / ".git" / "agent-hooks"
    known = run_hook.state_dir / "agent-hooks"
    return all(
        p.is_relative_to(ledger) or p.is_relative_to(known) or p == run_hook.state_dir
        for p in written
    )


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("agent", ["proj__cc_1", None])
def test_real_payloads_are_allowed_silently(
    run_hook: HookRunner, tmp_path: Path, fixture: str, agent: str | None
) -> None:
    before = files_under(tmp_path)
    result = run_hook("PreToolUse", fixture, agent=agent)
    assert result.code == 0 and result.out is None and result.err == ""
    written = files_under(tmp_path) - before  # no log: at most the lease, in the ledger
    ledger = run_hook.project / ".git" / "agent-hooks"
    assert only_the_ledger(written, run_hook), written
    if fixture in ("PreToolUse_Write", "PreToolUse_Edit"):  # an edit leases its file
        lease = json.loads((ledger / "leases" / "a.txt").read_text())
        assert lease["path"] == "a.txt"
        assert [item["agent"] for item in lease["leases"]] == [agent]
    else:
        assert not written


EXTRA: list[tuple[str, dict[str, Any]]] = [
    ("MultiEdit", {"file_path": "{p}/m.py", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("NotebookEdit", {"notebook_path": "{p}/n.ipynb", "new_source": "x"}),
    ("Write", {"file_path": "relative/x.py", "content": ""}),
    ("Write", {"file_path": "/etc/outside", "content": ""}),
    ("Bash", {"command": "rm -rf src && echo x > a.txt"}),
    ("Bash", {"command": 42}),
    ("Write", {}),
    ("Write", {"file_path": None}),
    ("mcp__server__tool", {"anything": [1, 2]}),
    ("SomeFutureTool", {"file_path": "{p}/x"}),
    ("", {}),
]


@pytest.mark.parametrize(
    ("tool_name", "tool_input"), EXTRA, ids=[f"{t}-{i}" for i, (t, _) in enumerate(EXTRA)]
)
def test_other_and_unknown_tools_are_allowed(
    run_hook: HookRunner, tmp_path: Path, tool_name: str, tool_input: dict[str, Any]
) -> None:
    p = str(run_hook.project)
    filled = {k: v.replace("{p}", p) if isinstance(v, str) else v for k, v in tool_input.items()}
    payload = run_hook.payload("PreToolUse_Write", tool_name=tool_name, tool_input=filled)
    before = files_under(tmp_path)
    result = run_hook("PreToolUse", payload)
    assert result.code == 0 and result.out is None
    written = files_under(tmp_path) - before  # at most a lease: never a log line, a deny
    assert only_the_ledger(written, run_hook), written


@pytest.mark.parametrize("name", ["../x", "a/b", "a\x01b", "y" * 129])
def test_bad_agent_name_fails_open_and_logs(
    run_hook: HookRunner, tmp_path: Path, name: str
) -> None:
    result = run_hook("PreToolUse", "PreToolUse_Write", agent=name)
    assert result.code == 0 and result.out is None
    lines = run_hook.log_lines()
    assert len(lines) == 1
    assert "AGENT_NAME" in lines[0] and "event=PreToolUse" in lines[0]
    assert "checked as a writer that holds nothing" in lines[0]
    ledger = run_hook.project / ".git" / "agent-hooks"
    assert not (ledger / "leases").exists()  # such a writer never holds a lease
    created = files_under(tmp_path) - {run_hook.project, run_hook.project / ".git", run_hook.home}
    assert created == {run_hook.state_dir, run_hook.log_file}


def test_outside_any_project_is_allowed(run_hook: HookRunner, tmp_path: Path) -> None:
    payload = run_hook.payload("PreToolUse_Write", cwd="/")
    payload["tool_input"]["file_path"] = "/tmp/x"
    result = run_hook("PreToolUse", payload, env={"CLAUDE_PROJECT_DIR": ""}, cwd="/")
    assert result.code == 0 and result.out is None


def test_unknown_event_is_allowed_and_says_why(run_hook: HookRunner) -> None:
    for event in ("NoSuchEvent", ""):
        result = run_hook(event, "PreToolUse_Write")
        assert result.code == 0 and result.out is None
        assert "unknown Claude Code hook event" in result.err
