"""clients.opencode: what each payload agent-hooks' plugin sent from opencode 1.18.33
(captured: tests/fixtures/payloads/opencode/) says a tool call does, and the answers as
the plugin reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import opencode
from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import CREATED, EDIT, LAUNCH, MODIFIED, READ, READING, SHELL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "payloads" / "opencode"
P = "/home/dev/myproject"
CHILD = "ses_dda26cf55ffeLzRDdMXczemXPd"  # the captured subagent's session


def payload(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())["stdin"]
    return doc


Expected = tuple[str, str | None, list[tuple[str, object]], str | None, str | None]
# Every captured tool call: (tool name, kind, files, command, workdir).
EXPECTED: dict[str, Expected] = {
    "tool.execute.before_write": ("write", EDIT, [(MODIFIED, f"{P}/new.txt")], None, None),
    "tool.execute.after_write": ("write", EDIT, [(CREATED, f"{P}/new.txt")], None, None),
    "tool.execute.before_write_subagent": ("write", EDIT, [(MODIFIED, f"{P}/sub.txt")], None, None),
    "tool.execute.after_write_subagent": ("write", EDIT, [(CREATED, f"{P}/sub.txt")], None, None),
    "tool.execute.before_edit": ("edit", EDIT, [(MODIFIED, f"{P}/existing.txt")], None, None),
    "tool.execute.after_edit": ("edit", EDIT, [(MODIFIED, f"{P}/existing.txt")], None, None),
    "tool.execute.before_bash": ("bash", SHELL, [], "echo hi > a.txt", None),
    "tool.execute.after_bash": ("bash", SHELL, [], "echo hi > a.txt", None),
    "tool.execute.before_bash_subagent": ("bash", SHELL, [], "echo sub > subsh.txt", None),
    "tool.execute.after_bash_subagent": ("bash", SHELL, [], "echo sub > subsh.txt", None),
    "tool.execute.before_bash_workdir": (
        "bash",
        SHELL,
        [],
        "echo in-workdir > wd.txt",
        f"{P}/sub",
    ),
    "tool.execute.after_bash_workdir": ("bash", SHELL, [], "echo in-workdir > wd.txt", f"{P}/sub"),
    "tool.execute.after_read": ("read", READING, [(READ, f"{P}/new.txt")], None, None),
    "tool.execute.after_task": ("task", LAUNCH, [], None, None),
    "tool.execute.before_apply_patch_add": (
        "apply_patch",
        EDIT,
        [(CREATED, "added.txt")],
        None,
        None,
    ),
    "tool.execute.after_apply_patch_add": (
        "apply_patch",
        EDIT,
        [(CREATED, "added.txt")],
        None,
        None,
    ),
    "tool.execute.before_apply_patch_move_delete": (
        "apply_patch",
        EDIT,
        [(MODIFIED, "keep.txt"), (CREATED, "moved/dst.txt"), (MODIFIED, "old.txt")],
        None,
        None,
    ),
    "tool.execute.after_apply_patch_move_delete": (
        "apply_patch",
        EDIT,
        [(MODIFIED, "keep.txt"), (CREATED, "moved/dst.txt"), (MODIFIED, "old.txt")],
        None,
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_captured_tool_call(name: str) -> None:
    doc = payload(name)
    use = opencode.tool_use(doc["hook_event_name"], doc)
    assert use is not None
    assert (use.name, use.kind, use.files, use.command, use.workdir) == EXPECTED[name]


def test_every_captured_payload_translates() -> None:
    """A tool event names its tool; a session event none. Each fixture is pinned above."""
    names = set()
    for path in sorted(FIXTURES.glob("*.json")):
        doc = json.loads(path.read_text())["stdin"]
        use = opencode.tool_use(doc["hook_event_name"], doc)
        assert (use is not None) == doc["hook_event_name"].startswith("tool."), path.name
        assert doc["hook_event_name"] in opencode.EVENTS, path.name
        if use is not None:
            names.add(path.stem)
    assert names == set(EXPECTED)


def test_the_envelope_names_the_conversation_and_the_subagent() -> None:
    """The plugin's envelope: the root session is the conversation; a child session's own
    id and agent say it is a subagent (a writer of its own)."""
    main, sub = payload("tool.execute.before_write"), payload("tool.execute.before_write_subagent")
    assert main["session_id"] == sub["session_id"] != CHILD
    assert "agent_id" not in main
    assert (sub["agent_id"], sub["agent_type"]) == (CHILD, "general")
    assert main["cwd"] == P and main["tool_use_id"] == "call_write"
    started = payload("subagent.created")
    assert (started["agent_id"], started["agent_type"]) == (CHILD, "general")


def test_a_task_names_the_subagent_it_launched() -> None:
    use = opencode.tool_use("tool.execute.after", payload("tool.execute.after_task"))
    assert use is not None and use.launched == {
        "agent_id": CHILD,
        "agent_type": "general",
        "description": "write a file",
        "name": None,
        "output_file": None,
    }
    before = {**payload("tool.execute.after_task"), "tool_response": None}
    launched = opencode.tool_use("tool.execute.before", before)
    assert launched is not None and launched.launched is not None
    assert launched.launched["agent_id"] is None  # nothing to name before it ran


def test_write_created_only_when_the_file_did_not_exist() -> None:
    doc = payload("tool.execute.after_write")
    doc["tool_response"]["metadata"]["exists"] = True
    use = opencode.tool_use("tool.execute.after", doc)
    assert use is not None and use.files == [(MODIFIED, f"{P}/new.txt")]
    doc["tool_response"] = "not an object"
    use = opencode.tool_use("tool.execute.after", doc)
    assert use is not None and use.files == [(MODIFIED, f"{P}/new.txt")]


@pytest.mark.parametrize(
    ("workdir", "cwd", "expected"),
    [
        ("/abs/dir", None, "/abs/dir"),
        ("sub/dir", "/p/", "/p/sub/dir"),
        ("sub", "relative", None),
        ("sub", None, None),
        ("", "/p", None),
        ("a\x00b", "/p", None),
        (3, "/p", None),
    ],
)
def test_where_bash_runs(workdir: object, cwd: object, expected: str | None) -> None:
    doc = {
        "tool_name": "bash",
        "tool_input": {"command": "echo > x", "workdir": workdir},
        "cwd": cwd,
    }
    use = opencode.tool_use("tool.execute.before", doc)
    assert use is not None and use.workdir == expected


@pytest.mark.parametrize(
    "bad",
    [
        {"tool_name": ["write"], "tool_input": {"filePath": "/x"}},
        {"tool_name": "write", "tool_input": "x"},
        {"tool_name": "write"},
        {},
    ],
)
def test_a_payload_naming_no_tool(bad: dict[str, Any]) -> None:
    assert opencode.tool_use("tool.execute.before", bad) is None


def test_a_patch_that_is_not_text_and_other_tools_are_nothing_to_judge() -> None:
    for doc in (
        {"tool_name": "apply_patch", "tool_input": {"patchText": ["*** Begin Patch"]}},
        {"tool_name": "glob", "tool_input": {"pattern": "*"}},
        {"tool_name": "bash", "tool_input": {"command": 3}},
    ):
        use = opencode.tool_use("tool.execute.before", doc)
        assert use is not None
        assert use.kind is None or (use.kind == SHELL and use.command is None)


def test_render_deny_context_and_message() -> None:
    assert opencode.render("tool.execute.before", Answer(deny="held", context="c")) == {
        "deny": "held"
    }
    # context before a tool runs reaches nowhere: not sent (the adapter keeps it)
    assert opencode.render("tool.execute.before", Answer(context="c")) is None
    assert opencode.render("tool.execute.after", Answer(context="c", message="m")) == {
        "context": "c",
        "message": "m",
    }
    assert opencode.render("session.created", Answer(context="hi")) == {"context": "hi"}
    assert opencode.render("session.idle", Answer()) is None


def test_the_holder_is_opencode(monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENCODE_PID (opencode's own, passed on by the plugin), else the hook's parent."""
    monkeypatch.setattr(opencode.posix, "getppid", lambda: 4321)
    assert opencode.holder_pid({"OPENCODE_PID": "1234"}) == 1234
    for bad in ("", "0", "1", "12a", "-5", "١٢", "12345678901"):
        assert opencode.holder_pid({"OPENCODE_PID": bad}) == 4321, bad
    assert opencode.holder_pid({}) == 4321
    monkeypatch.setattr(opencode.posix, "getppid", lambda: 1)
    assert opencode.holder_pid({}) is None  # orphaned: nobody to wait for
