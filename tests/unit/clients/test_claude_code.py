"""clients.claude_code: what each captured Claude Code payload (2.1.328, and 2.1.332's skill
shell lines: tests/fixtures/payloads/) says a tool call does, and each answer as Claude
Code reads it — a skill shell line's refusal above all, which Claude Code honours only
under `hookEventName: "PreToolUse"` (measured with 2.1.332)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import claude_code
from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import CREATED, EDIT, LAUNCH, MODIFIED, READ, READING, SHELL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "payloads"
P = "/home/dev/myproject"


def payload(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())["stdin"]
    return doc


Expected = tuple[str, str | None, list[tuple[str, object]], str | None, bool]
# Every captured tool call: (tool name, kind, files, command, reported).
EXPECTED: dict[str, Expected] = {
    "PreToolUse_Write": ("Write", EDIT, [(MODIFIED, f"{P}/a.txt")], None, False),
    "PostToolUse_Write": ("Write", EDIT, [(CREATED, f"{P}/a.txt")], None, False),
    "PreToolUse_Write_in_subagent": ("Write", EDIT, [(MODIFIED, f"{P}/shared.txt")], None, False),
    "PostToolUse_Write_in_subagent": ("Write", EDIT, [(CREATED, f"{P}/shared.txt")], None, False),
    "PreToolUse_Edit": ("Edit", EDIT, [(MODIFIED, f"{P}/a.txt")], None, False),
    "PostToolUse_Edit": ("Edit", EDIT, [(MODIFIED, f"{P}/a.txt")], None, False),
    "PreToolUse_Bash": ("Bash", SHELL, [], "echo hi > b.txt", False),
    "PostToolUse_Bash": ("Bash", SHELL, [(CREATED, f"{P}/b.txt")], "echo hi > b.txt", True),
    "PostToolUse_Bash_in_subagent": (
        "Bash",
        SHELL,
        [(MODIFIED, f"{P}/shared.txt")],
        "sleep 1; echo B2 >> shared.txt",
        True,
    ),
    "PreSkillShellCommand": ("Bash", SHELL, [], "echo stamped > c.txt && echo ok", False),
    "PreSkillShellCommand_slash": ("Bash", SHELL, [], "echo stamped > c.txt && echo ok", False),
    "PreToolUse_Read": ("Read", READING, [(READ, f"{P}/a.txt")], None, False),
    "PostToolUse_Read": ("Read", READING, [(READ, f"{P}/a.txt")], None, False),
    "PreToolUse_Agent": ("Agent", LAUNCH, [], None, False),
    "PostToolUse_Agent": ("Agent", LAUNCH, [], None, False),
    "PreToolUse_Glob": ("Glob", None, [], None, False),
    "PostToolUse_Glob": ("Glob", None, [], None, False),
    "PreToolUse_Grep": ("Grep", None, [], None, False),
    "PostToolUse_Grep": ("Grep", None, [], None, False),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_captured_tool_call(name: str) -> None:
    doc = payload(name)
    use = claude_code.tool_use(doc["hook_event_name"], doc)
    assert use is not None
    assert (use.name, use.kind, use.files, use.command, use.reported) == EXPECTED[name]


def test_every_captured_event_is_handled_or_named_no_tool() -> None:
    """The events agent-hooks registers have an adapter; a payload names a tool exactly
    when it carries one."""
    for path in sorted(FIXTURES.glob("*.json")):
        doc = json.loads(path.read_text())["stdin"]
        use = claude_code.tool_use(doc["hook_event_name"], doc)
        assert (use is not None) == ("tool_name" in doc and "tool_input" in doc), path.name
    for event in ("SessionStart", "PreToolUse", "PreSkillShellCommand", "PostToolUse", "Stop"):
        assert event in claude_code.EVENTS
    assert claude_code.EVENTS["PreSkillShellCommand"] == claude_code.EVENTS["PreToolUse"]


def test_a_launch_names_the_subagent() -> None:
    use = claude_code.tool_use("PostToolUse", payload("PostToolUse_Agent"))
    assert use is not None and use.launched == {
        "agent_id": "a6a499d345698d83d",
        "agent_type": "Explore",
        "description": "sub task",
        "name": None,
        "output_file": "/tmp/claude-1000/notes",
    }


def test_bash_edit_diff_lists_each_file_once() -> None:
    doc = payload("PostToolUse_Bash")
    diff = doc["tool_response"]["bashEditDiff"]
    diff["files"].append({"filePath": f"{P}/b.txt", "created": False})  # again: ignored
    diff["files"].append({"filePath": 7})
    diff["changedFiles"] += [f"{P}/c.txt", f"{P}/c.txt", None]
    use = claude_code.tool_use("PostToolUse", doc)
    assert use is not None
    assert use.files == [(CREATED, f"{P}/b.txt"), (MODIFIED, f"{P}/c.txt")]
    doc["tool_response"] = {"stdout": ""}  # default mode: no report at all
    use = claude_code.tool_use("PostToolUse", doc)
    assert use is not None and (use.files, use.reported) == ([], False)


def test_a_payload_naming_no_tool() -> None:
    for bad in (
        {"tool_name": ["Write"], "tool_input": {}},
        {"tool_name": "Write", "tool_input": "x"},
        {},
    ):
        assert claude_code.tool_use("PreToolUse", bad) is None


def test_a_skill_shell_line_is_refused_under_pre_tool_use() -> None:
    """Claude Code 2.1.332 keeps a skill's line from running on a PreToolUse-shaped deny
    (measured); the event's own name is not what it reads."""
    out = claude_code.render("PreSkillShellCommand", Answer(deny="held by another agent"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "held by another agent",
        }
    }
    allowed = claude_code.render("PreSkillShellCommand", Answer(context="note"))
    assert allowed == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "note",
            "permissionDecision": "allow",
        }
    }


def test_render_each_event() -> None:
    assert claude_code.render("PreToolUse", Answer(deny="no", context="c", message="m")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        },
        "systemMessage": "m",
    }
    assert claude_code.render("PostToolUse", Answer(context="c")) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "c"}
    }
    assert claude_code.render("SessionStart", Answer(context="hi", message="m")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"},
        "systemMessage": "m",
    }
    assert claude_code.render("Stop", Answer(message="only for people")) == {
        "systemMessage": "only for people"
    }
    assert claude_code.render("Stop", Answer()) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("4242", 4242),
        ("1", 1),
        ("", None),
        ("0", None),
        ("12a", None),
        ("-3", None),
        ("١٢", None),
        ("123456789", 123456789),
        ("1234567890", None),
    ],
)
def test_the_holder_is_claude_pid(raw: str, expected: int | None) -> None:
    assert claude_code.holder_pid({"CLAUDE_PID": raw}) == expected


def test_an_mcp_tool_is_its_servers_own_tool() -> None:
    """`mcp__<server>__<tool>`: the interop sees the tool's own name, its arguments and
    its result, never Claude Code's naming."""
    doc = {"tool_name": "mcp__plugin_am_mcp-agent-mail__file_reservation_paths",
           "tool_input": {"paths": ["a.py"]}, "tool_response": [{"type": "text", "text": "{}"}]}  # fmt: skip
    use = claude_code.tool_use("PostToolUse", doc)
    assert use is not None and use.kind == "mcp"
    assert use.mcp == {
        "server": "plugin_am_mcp-agent-mail",
        "tool": "file_reservation_paths",
        "args": {"paths": ["a.py"]},
        "result": [{"type": "text", "text": "{}"}],
    }
    for name in ("mcp__x", "mcp____t", "Mcp__s__t"):
        other = claude_code.tool_use("PostToolUse", {**doc, "tool_name": name})
        assert other is not None and other.kind is None, name


def test_the_status_line_input() -> None:
    said = claude_code.status_line(
        {
            "workspace": {"project_dir": "/p", "current_dir": "/p/sub"},
            "cwd": "/p/sub",
            "session_id": "s1",
            "transcript_path": "/t.jsonl",
            "context_window": {"current_usage": {"input_tokens": 3}},
        }
    )
    assert said == {
        "project_dir": "/p",
        "cwd": "/p/sub",
        "session": "s1",
        "transcript": "/t.jsonl",
        "usage": {"input_tokens": 3},
    }
    assert claude_code.status_line({"workspace": "x", "context_window": 3}) == dict.fromkeys(
        ("project_dir", "cwd", "session", "transcript", "usage")
    )
