"""clients.qwen_code: what each captured Qwen Code 0.24.4 payload
(tests/fixtures/payloads/qwen/) says a tool call does, and the answers as Qwen Code reads
them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import qwen_code
from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import CREATED, EDIT, LAUNCH, MODIFIED, READ, READING, SHELL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "payloads" / "qwen"
P = "/home/dev/myproject"
SUB = "general-purpose-call_t"  # the captured subagent's id


def fixture(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return doc


def payload(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = fixture(name)["stdin"]
    return doc


Expected = tuple[str, str | None, list[tuple[str, object]], str | None, str | None]
EXPECTED: dict[str, Expected] = {
    "PreToolUse_write_file": ("write_file", EDIT, [(MODIFIED, f"{P}/new.txt")], None, None),
    "PostToolUse_write_file": ("write_file", EDIT, [(CREATED, f"{P}/new.txt")], None, None),
    "PreToolUse_write_file_overwrite": (
        "write_file",
        EDIT,
        [(MODIFIED, f"{P}/existing.txt")],
        None,
        None,
    ),
    "PostToolUse_write_file_overwrite": (
        "write_file",
        EDIT,
        [(MODIFIED, f"{P}/existing.txt")],
        None,
        None,
    ),
    "PreToolUse_write_file_in_subagent": (
        "write_file",
        EDIT,
        [(MODIFIED, f"{P}/sub.txt")],
        None,
        None,
    ),
    "PostToolUse_write_file_in_subagent": (
        "write_file",
        EDIT,
        [(CREATED, f"{P}/sub.txt")],
        None,
        None,
    ),
    "PreToolUse_edit": ("edit", EDIT, [(MODIFIED, f"{P}/existing.txt")], None, None),
    "PostToolUse_edit": ("edit", EDIT, [(MODIFIED, f"{P}/existing.txt")], None, None),
    "PreToolUse_read_file": ("read_file", READING, [(READ, f"{P}/new.txt")], None, None),
    "PostToolUse_read_file": ("read_file", READING, [(READ, f"{P}/new.txt")], None, None),
    "PreToolUse_read_file_before_edit": (
        "read_file",
        READING,
        [(READ, f"{P}/existing.txt")],
        None,
        None,
    ),
    "PostToolUse_read_file_before_edit": (
        "read_file",
        READING,
        [(READ, f"{P}/existing.txt")],
        None,
        None,
    ),
    "PreToolUse_run_shell_command_directory": (
        "run_shell_command",
        SHELL,
        [],
        "pwd > wd.txt",
        f"{P}/sub",
    ),
    "PostToolUse_run_shell_command_directory": (
        "run_shell_command",
        SHELL,
        [],
        "pwd > wd.txt",
        f"{P}/sub",
    ),
    "PreToolUse_agent": ("agent", LAUNCH, [], None, None),
    "PostToolUse_agent": ("agent", LAUNCH, [], None, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_captured_tool_call(name: str) -> None:
    doc = payload(name)
    use = qwen_code.tool_use(doc["hook_event_name"], doc)
    assert use is not None
    assert (use.name, use.kind, use.files, use.command, use.workdir) == EXPECTED[name]


def test_the_shell_command_as_captured() -> None:
    for name in ("PreToolUse_run_shell_command", "PostToolUse_run_shell_command"):
        use = qwen_code.tool_use(name.partition("_")[0], payload(name))
        assert use is not None and (use.kind, use.workdir, use.reported) == (SHELL, None, False)
        assert use.command is not None and use.command.startswith("echo $QWEN_CODE_SESSION_ID")


def test_every_captured_payload_translates() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        doc = json.loads(path.read_text())["stdin"]
        assert doc["hook_event_name"] in qwen_code.EVENTS, path.name
        use = qwen_code.tool_use(doc["hook_event_name"], doc)
        assert (use is not None) == ("tool_name" in doc), path.name


def test_the_agent_tool_names_the_subagent_it_launched() -> None:
    use = qwen_code.tool_use("PostToolUse", payload("PostToolUse_agent"))
    assert use is not None and use.launched == {
        "agent_id": SUB,
        "agent_type": "general-purpose",
        "description": "sub",
        "name": None,
        "output_file": None,
    }
    inside = payload("PreToolUse_write_file_in_subagent")
    assert inside["agent_id"] == SUB  # its calls carry the same id: one writer
    assert payload("SubagentStart")["agent_id"] == SUB


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("task_id: a-b_1 (internal)", "a-b_1"),
        ("x\ntask_id: z\n", "z"),
        ("task_id: ", None),
        ("no id here", None),
    ],
)
def test_the_launched_id_in_the_result(said: str, expected: str | None) -> None:
    doc = {
        "tool_name": "agent",
        "tool_input": {"subagent_type": "t"},
        "tool_response": {"llmContent": said},
    }
    use = qwen_code.tool_use("PostToolUse", doc)
    assert use is not None and use.launched is not None
    assert use.launched["agent_id"] == expected


def test_a_relative_directory_is_not_trusted() -> None:
    """Qwen Code refuses a `directory` that is not absolute before any hook runs: such a
    payload names no place of its own (the command is judged in `cwd`)."""
    doc = payload("PreToolUse_run_shell_command_directory")
    doc["tool_input"]["directory"] = "sub"
    use = qwen_code.tool_use("PreToolUse", doc)
    assert use is not None and use.workdir is None


def test_qwen_sets_claude_and_gemini_variables_too() -> None:
    """Why the client is told by the entry's argument, never by these variables."""
    env = fixture("PreToolUse_write_file")["env"]
    assert env["QWEN_PROJECT_DIR"] == env["CLAUDE_PROJECT_DIR"] == env["GEMINI_PROJECT_DIR"] == P
    assert env["QWEN_CODE_SESSION_ID"] == payload("PreToolUse_write_file")["session_id"]


def test_render_deny_context_and_message() -> None:
    assert qwen_code.render("PreToolUse", Answer(deny="held", context="c", message="m")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "held",
        },
        "systemMessage": "m",
    }
    # Before a tool runs, no decision but a deny is ever sent: `allow` would skip the
    # user's approval, and context alone there is not delivered.
    assert qwen_code.render("PreToolUse", Answer(context="note")) is None
    assert qwen_code.render("PostToolUse", Answer(context="note")) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "note"}
    }
    assert qwen_code.render("SessionStart", Answer(context="hi", message="m")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"},
        "systemMessage": "m",
    }
    assert qwen_code.render("Stop", Answer()) is None


def test_the_holder_is_the_hooks_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qwen_code.posix, "getppid", lambda: 4321)
    assert qwen_code.holder_pid({"CLAUDE_PID": "1", "QWEN_CODE_LAUNCHER_PID": "7"}) == 4321
    monkeypatch.setattr(qwen_code.posix, "getppid", lambda: 1)
    assert qwen_code.holder_pid({}) is None
