"""Bad stdin never blocks Claude Code: exit 0, one log line, and the state left intact."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hook_runner import AGENT, HookRunner, context_of, write_state

EVENTS = ["SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
TEN_MB = 10 * 1024 * 1024

BAD_STDIN: list[tuple[str, bytes, str]] = [
    ("empty", b"", "empty input"),
    ("whitespace", b"  \n\t ", "empty input"),
    ("not json", b"this is not json", "not JSON"),
    ("truncated", b'{"tool_name": "Write", "tool_input": {"file_pa', "not JSON"),
    ("array", b'[{"tool_name": "Write"}]', "JSON list"),
    ("string", b'"PostToolUse"', "JSON str"),
    ("number", b"42", "JSON int"),
    ("null", b"null", "JSON NoneType"),
    ("two objects", b'{"a": 1}{"b": 2}', "extra data"),
    ("nan", b'{"a": NaN}', "strict"),
    ("bad utf-8", b'{"cwd": "\xff\xfe"}', "UTF-8"),
    ("deep nesting", b"[" * 200_000 + b"]" * 200_000, "not JSON"),
    ("10 MB of junk", bytes(range(256)) * (TEN_MB // 256), "stdin"),
]


@pytest.fixture
def existing_state(run_hook: HookRunner) -> bytes:
    path = write_state(
        run_hook.state_dir,
        AGENT,
        {
            "registered": True,
            "active": True,
            "conversation_id": "c0",
            "last_activity": 1234,
            "files_modified": [f"{run_hook.project}/kept.py"],
            "files_read": ["/r"],
        },
    )
    return path.read_bytes()


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize(
    ("data", "reason"), [(d, r) for _, d, r in BAD_STDIN], ids=[n for n, _, _ in BAD_STDIN]
)
def test_bad_stdin_exits_0_logs_and_keeps_state(
    run_hook: HookRunner, existing_state: bytes, event: str, data: bytes, reason: str
) -> None:
    result = run_hook(event, data)
    assert result.code == 0
    assert result.out is None
    assert "Traceback" not in result.err
    lines = run_hook.log_lines()
    assert len(lines) == 1, lines
    assert f"event={event}" in lines[0] and reason in lines[0] and "fail open" in lines[0]
    assert len(lines[0]) < 2000  # one readable line, not the junk echoed back
    assert run_hook.state_path().read_bytes() == existing_state


WRONG_SHAPES: list[tuple[str, dict[str, Any]]] = [
    (
        "tool_input a string",
        {"tool_name": "Write", "tool_input": "file_path=/x", "tool_response": {}},
    ),
    ("tool_input a list", {"tool_name": "Edit", "tool_input": ["/x"]}),
    (
        "tool_response a string",
        {"tool_name": "Bash", "tool_input": {"command": "x"}, "tool_response": "ok"},
    ),
    (
        "bashEditDiff junk",
        {
            "tool_name": "Bash",
            "tool_input": {},
            "tool_response": {"bashEditDiff": {"files": "x", "changedFiles": 3}},
        },
    ),
    ("tool_name a number", {"tool_name": 7, "tool_input": {"file_path": "/x"}}),
    # found by tests/fuzz: a list or an object is unhashable, and the tool lookup raised
    ("tool_name a list", {"tool_name": [], "tool_input": {"file_path": "/x"}}),
    ("tool_name an object", {"tool_name": {"Write": 1}, "tool_input": {"file_path": "/x"}}),
    ("cwd a number", {"tool_name": "Read", "tool_input": {"file_path": "rel"}, "cwd": 5}),
    ("source a list", {"source": ["startup"], "session_id": {"x": 1}}),
    ("session_id a number", {"session_id": 12, "source": "resume"}),
    ("no fields", {}),
]


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("payload", [p for _, p in WRONG_SHAPES], ids=[n for n, _ in WRONG_SHAPES])
def test_json_of_the_wrong_shape_never_blocks_or_corrupts(
    run_hook: HookRunner, existing_state: bytes, event: str, payload: dict[str, Any]
) -> None:
    result = run_hook(event, payload)
    assert result.code == 0
    assert "Traceback" not in result.err
    if result.out is not None:  # only SessionStart speaks, and only in the protocol's shape
        assert event == "SessionStart"
        assert result.out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    doc = run_hook.state()
    assert doc["files_modified"] == [f"{run_hook.project}/kept.py"]
    for field in ("files_created", "files_modified", "files_read"):
        assert all(isinstance(p, str) and p.startswith("/") for p in doc.get(field, []))
    for line in run_hook.log_lines():
        assert "Error" not in line, line  # a wrong shape is not a crash


def test_a_10_mb_valid_write_payload_is_recorded(
    run_hook: HookRunner, existing_state: bytes
) -> None:
    payload = run_hook.payload("PostToolUse_Write")
    content = "x" * TEN_MB
    payload["tool_input"]["content"] = content
    payload["tool_response"]["content"] = content
    data = json.dumps(payload).encode()
    assert len(data) > 2 * TEN_MB
    result = run_hook("PostToolUse", data)
    assert result.code == 0 and result.out is None and result.err == ""
    assert run_hook.state()["files_created"] == [f"{run_hook.project}/a.txt"]
    assert run_hook.log_lines() == []


def test_stdin_above_the_limit_is_refused_without_reading_it_all(run_hook: HookRunner) -> None:
    from agent_hooks.hooks import hook_runtime

    data = b"{" + b" " * (hook_runtime.MAX_STDIN + 10) + b"}"
    result = run_hook("PostToolUse", data)
    assert result.code == 0 and result.out is None
    (line,) = run_hook.log_lines()
    assert "larger than" in line


def test_a_state_file_that_is_a_directory_fails_open(run_hook: HookRunner) -> None:
    run_hook.state_path().mkdir(parents=True)
    for event in ("PostToolUse", "Stop", "SessionEnd"):
        fixture = "PostToolUse_Write" if event == "PostToolUse" else event
        result = run_hook(event, fixture)
        assert result.code == 0 and result.out is None
    assert len(run_hook.log_lines()) == 3
    assert run_hook.state_path().is_dir()


def test_an_unwritable_state_dir_fails_open(run_hook: HookRunner) -> None:
    if os.geteuid() == 0:
        run_hook.state_dir.parent.mkdir(exist_ok=True)
        run_hook.state_dir.write_text("a file where the directory belongs")
    else:
        run_hook.state_dir.mkdir()
        run_hook.state_dir.chmod(0o500)
    result = run_hook("PostToolUse", "PostToolUse_Write")
    assert result.code == 0 and result.out is None and "Traceback" not in result.err


def test_a_broken_package_still_allows(tmp_path: Path, run_hook: HookRunner) -> None:
    """The entry script itself fails open when the package cannot be imported."""
    import shutil
    import subprocess
    import sys

    from hook_runner import ENTRY

    hooks = tmp_path / "copy" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(ENTRY, hooks / "entry.py")
    (tmp_path / "copy" / "src" / "agent_hooks").mkdir(parents=True)
    (tmp_path / "copy" / "src" / "agent_hooks" / "__init__.py").write_text(
        "raise ImportError('boom')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-IS", str(hooks / "entry.py"), "PreToolUse"],
        input=b"{}",
        capture_output=True,
        env=run_hook.env(),
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"boom" in proc.stderr and b"allowed" in proc.stderr


def test_context_holding_text_that_is_not_valid_unicode_still_reaches_the_model(
    run_hook: HookRunner,
) -> None:
    """A notice naming a file whose name is not UTF-8 (a lone surrogate once
    decoded) made the hook's own output fail to encode, and SessionStart said
    nothing at all; now it is written as a `\\udcff` escape."""
    write_state(
        run_hook.state_dir,
        AGENT,
        {"registered": True, "notices": ["agent-hooks: /p/caf\udcff.py changed under you"]},
    )
    text = context_of(run_hook("SessionStart", "SessionStart_startup"))
    assert "/p/caf\udcff.py changed under you" in text
    assert not any("UnicodeEncodeError" in line for line in run_hook.log_lines())
