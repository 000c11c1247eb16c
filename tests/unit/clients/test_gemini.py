"""clients.gemini: what each captured Gemini CLI 0.61.0 payload says a tool call does, and
the answers as Gemini reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import gemini
from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import CREATED, EDIT, MODIFIED, READ, READING, SHELL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "payloads" / "gemini"
P = "/home/dev/myproject"


def payload(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())["stdin"]
    return doc


EXPECTED: dict[str, tuple[str, str | None, list[tuple[str, object]], str | None]] = {
    "BeforeTool_write_file": ("write_file", EDIT, [(MODIFIED, f"{P}/new.txt")], None),
    "AfterTool_write_file": ("write_file", EDIT, [(CREATED, f"{P}/new.txt")], None),
    "AfterTool_write_file_in_subagent": ("write_file", EDIT, [(CREATED, f"{P}/sub.txt")], None),
    "BeforeTool_replace": ("replace", EDIT, [(MODIFIED, f"{P}/existing.txt")], None),
    "AfterTool_replace": ("replace", EDIT, [(MODIFIED, f"{P}/existing.txt")], None),
    "AfterTool_replace_error": ("replace", EDIT, [], None),
    "BeforeTool_run_shell_command": ("run_shell_command", SHELL, [], "echo hi > a.txt"),
    "AfterTool_run_shell_command_error": (
        "run_shell_command",
        SHELL,
        [],
        "echo partial > shell_fail.txt; exit 3",
    ),
    "BeforeTool_read_file": ("read_file", READING, [(READ, f"{P}/new.txt")], None),
    "AfterTool_read_file_error": ("read_file", READING, [], None),
    "BeforeTool_invoke_agent": ("invoke_agent", None, [], None),
    "AfterTool_complete_task": ("complete_task", None, [], None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_captured_tool_call(name: str) -> None:
    doc = payload(name)
    use = gemini.tool_use(doc["hook_event_name"], doc)
    assert use is not None
    assert (use.name, use.kind, use.files, use.command) == EXPECTED[name]


def test_every_captured_payload_translates() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        doc = json.loads(path.read_text())["stdin"]
        use = gemini.tool_use(doc["hook_event_name"], doc)
        assert (use is not None) == ("tool_name" in doc), path.name


def test_a_relative_path_stays_as_the_model_wrote_it() -> None:
    doc = payload("BeforeTool_write_file")
    doc["tool_input"]["file_path"] = "rel_dir/rel.txt"
    use = gemini.tool_use("BeforeTool", doc)
    assert use is not None and use.files == [(MODIFIED, "rel_dir/rel.txt")]


@pytest.mark.parametrize(
    ("dir_path", "workdir"),
    [
        (None, None),
        ("sub", f"{P}/sub"),
        ("sub/../x", f"{P}/sub/../x"),
        ("/abs/dir", "/abs/dir"),
        ("", None),
        (3, None),
    ],
)
def test_a_shell_command_runs_in_dir_path(dir_path: object, workdir: str | None) -> None:
    doc = payload("BeforeTool_run_shell_command")
    if dir_path is not None:
        doc["tool_input"]["dir_path"] = dir_path
    use = gemini.tool_use("BeforeTool", doc)
    assert use is not None and use.workdir == workdir


def test_render_deny_in_geminis_own_form() -> None:
    assert gemini.render("BeforeTool", Answer(deny="held")) == {
        "decision": "deny",
        "reason": "held",
    }


def test_render_context_only_where_it_reaches_the_model() -> None:
    assert gemini.render("SessionStart", Answer(context="hi", message="m")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"},
        "systemMessage": "m",
    }
    assert gemini.render("AfterTool", Answer(context="c")) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "c"}
    }
    assert gemini.render("BeforeTool", Answer(context="lost")) is None
    assert gemini.render("AfterAgent", Answer()) is None
