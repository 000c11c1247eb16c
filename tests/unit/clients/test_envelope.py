"""clients.envelope: the payload envelope every client's module reads into a HookEvent —
each field only of its type, paths only absolute, the conversation from the client's
session variable when the payload names none — and what each client's captured payloads
say through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import claude_code, codex, envelope, gemini, opencode, qwen_code

PAYLOADS = Path(__file__).resolve().parents[2] / "fixtures" / "payloads"


def stdin(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())["stdin"]
    return doc


def test_every_field_read_and_typed() -> None:
    hook = envelope.read(
        {
            "session_id": "s1",
            "agent_id": "a1",
            "agent_type": "Explore",
            "cwd": "/p",
            "transcript_path": "/t.jsonl",
            "agent_transcript_path": "/a.jsonl",
            "tool_use_id": "toolu_1",
            "duration_ms": 12.5,
            "source": "resume",
        },
        {},
        (),
    )
    assert (hook.session, hook.agent_id, hook.agent_type, hook.cwd) == ("s1", "a1", "Explore", "/p")
    assert (hook.transcript, hook.agent_transcript) == ("/t.jsonl", "/a.jsonl")
    assert (hook.tool_use_id, hook.duration_ms, hook.source) == ("toolu_1", 12.5, "resume")


@pytest.mark.parametrize(
    "bad",
    [
        {"session_id": 3, "cwd": "rel/dir", "transcript_path": "t.jsonl", "duration_ms": True},
        {"session_id": "", "agent_id": ["a"], "agent_type": {}, "tool_use_id": 7},
        {"source": None, "duration_ms": "12", "agent_transcript_path": "a.jsonl"},
    ],
)
def test_a_field_of_another_type_is_left_out(bad: dict[str, Any]) -> None:
    hook = envelope.read(bad, {}, ())
    assert [getattr(hook, name) for name in hook.__slots__] == [None] * len(hook.__slots__)


def test_the_conversation_falls_back_to_the_clients_session_variable() -> None:
    env = {"CLAUDE_CODE_SESSION_ID": "from-env", "CODEX_THREAD_ID": ""}
    assert envelope.read({}, env, claude_code.SESSION_VARIABLES).session == "from-env"
    assert envelope.read({"session_id": "given"}, env, claude_code.SESSION_VARIABLES).session == (
        "given"
    )
    assert envelope.read({}, env, codex.SESSION_VARIABLES).session is None  # empty: unset
    assert envelope.read({}, env, ()).session is None


@pytest.mark.parametrize(
    ("client", "fixture", "expected"),
    [
        (claude_code, "PostToolUse_Write_in_subagent", {"agent_id": "a4d71bd7a7301dabc"}),
        (claude_code, "SessionStart_resume", {"source": "resume"}),
        (claude_code, "PostToolUse_Bash", {"duration_ms": 104}),
        (codex, "codex/PreToolUse_apply_patch_subagent_patch_add_subagent", {"agent_type": "default"}),
        (gemini, "gemini/BeforeTool_write_file", {"agent_id": None}),
        (opencode, "opencode/tool.execute.before_write_subagent",
         {"agent_id": "ses_dda26cf55ffeLzRDdMXczemXPd", "agent_type": "general",
          "tool_use_id": "call_sub_write", "cwd": "/home/dev/myproject"}),
        (opencode, "opencode/session.created", {"source": "startup", "agent_id": None}),
        (qwen_code, "qwen/PostToolUse_write_file_in_subagent",
         {"agent_id": "general-purpose-call_t", "cwd": "/home/dev/myproject"}),
        (qwen_code, "qwen/SubagentStop", {"agent_type": "general-purpose",
                                          "agent_transcript": "/home/dev/.qwen/projects/"
                                          "-home-dev-myproject/subagents/059d2d06-3497-42f7-b4a6-"
                                          "321a932a60ac/agent-general-purpose-call_t.jsonl"}),
    ],
)  # fmt: skip
def test_what_each_clients_captured_payload_says(
    client: Any, fixture: str, expected: dict[str, object]
) -> None:
    payload = stdin(fixture)
    hook = client.hook_event(payload.get("hook_event_name", ""), payload, {})
    assert {name: getattr(hook, name) for name in expected} == expected
    assert hook.session == payload.get("session_id")
