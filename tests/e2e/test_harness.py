"""Smoke tests of the e2e harness itself: real ``claude -p`` runs against the mock API.

Each test runs in its own temp HOME and project, and asserts both on files on disk and on what
the client sent to the model. None of them depends on agent-hooks' own hooks.
"""

from __future__ import annotations

import json
import shlex
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .claude_cli import ClaudeResult, command_hooks, write_user_settings
from .mock_api import MockAnthropicAPI, Usage, call, request_text, say

if TYPE_CHECKING:
    from .conftest import ClaudeRunner, MockApiFactory

LIFECYCLE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
)

# Appends {"stdin": <payload>, "env": {...}} as one JSON line to the file named by argv[1].
_RECORDER = """\
import json, os, sys
payload = json.load(sys.stdin)
env = {k: os.environ.get(k) for k in ("AGENT_NAME", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID")}
with open(sys.argv[1], "a", encoding="utf-8") as log:
    log.write(json.dumps({"stdin": payload, "env": env}) + "\\n")
"""


def _script_hook(tmp: Path, name: str, body: str, *args: str) -> str:
    """Write a Python hook script and return the shell command that runs it."""
    script = tmp / f"{name}.py"
    script.write_text(body, encoding="utf-8")
    return shlex.join([sys.executable, "-I", str(script), *args])


def _recorder(tmp: Path) -> tuple[str, Path]:
    """(hook command, log path): the command appends every payload it gets to the log."""
    log = tmp / "hook-events.jsonl"
    return _script_hook(tmp, "record_hook", _RECORDER, str(log)), log


def _printer(tmp: Path, name: str, output: dict[str, Any]) -> str:
    """A hook command that ignores stdin and prints ``output`` as JSON."""
    return _script_hook(
        tmp, name, f"import json, sys\nsys.stdin.read()\nprint(json.dumps({output!r}))\n"
    )


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _events(log: Path) -> list[str]:
    """``Event`` or ``Event(detail)`` per recorded payload: source, tool name or reason."""
    out = []
    for rec in _records(log):
        stdin = rec["stdin"]
        detail = stdin.get("source") or stdin.get("tool_name") or stdin.get("reason")
        out.append(f"{stdin['hook_event_name']}({detail})" if detail else stdin["hook_event_name"])
    return out


def _ok(result: ClaudeResult, api: MockAnthropicAPI) -> None:
    """The run exited 0 and the mock answered every request without an internal error."""
    print(f"claude -p took {result.duration:.2f}s")
    assert result.returncode == 0, (
        f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}"
    )
    assert api.errors == []


# --------------------------------------------------------------------------- tools


def test_scripted_tools_run_and_results_return(
    claude: ClaudeRunner, mock_api: MockApiFactory, project_dir: Path
) -> None:
    a, b = project_dir / "a.txt", project_dir / "b.txt"
    api = mock_api(
        [
            call("Write", {"file_path": str(a), "content": "alpha\nline two\n"}),
            call("Read", {"file_path": str(a)}),
            call("Edit", {"file_path": str(a), "old_string": "alpha", "new_string": "beta"}),
            call("Bash", {"command": "echo hi > b.txt", "description": "Write b.txt"}),
            say("All four tools ran."),
        ]
    )

    result = claude("Exercise the file tools.", api)

    _ok(result, api)
    assert result.stdout.strip() == "All four tools ran."
    assert a.read_text() == "beta\nline two\n"
    assert b.read_text() == "hi\n"
    results = api.tool_results()
    assert [r.tool_name for r in results] == ["Write", "Read", "Edit", "Bash"]
    assert [r.is_error for r in results] == [False] * 4
    assert "alpha" in results[1].content  # what Read returned before the Edit
    assert api.unused_turns == 0
    assert len(api.main_requests) == 5
    assert "Exercise the file tools." in api.first_main_request_text()


# --------------------------------------------------------------------------- hooks


def test_hooks_receive_lifecycle_events_in_order(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    claude_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    command, log = _recorder(tmp_path)
    write_user_settings(claude_home, {"hooks": command_hooks(command, LIFECYCLE_EVENTS)})
    target = project_dir / "hooked.txt"
    api = mock_api([call("Write", {"file_path": str(target), "content": "x\n"}), say("Wrote it.")])

    result = claude("Write one file.", api, agent_name="agent-7")

    _ok(result, api)
    assert target.read_text() == "x\n"
    assert _events(log) == [
        "SessionStart(startup)",
        "UserPromptSubmit",
        "PreToolUse(Write)",
        "PostToolUse(Write)",
        "Stop",
        "SessionEnd(other)",
    ]
    records = _records(log)
    session_id = records[0]["env"]["CLAUDE_CODE_SESSION_ID"]
    assert {r["stdin"]["session_id"] for r in records} == {session_id}
    assert {r["env"]["AGENT_NAME"] for r in records} == {"agent-7"}
    assert {r["env"]["CLAUDE_PROJECT_DIR"] for r in records} == {str(project_dir)}
    pre = records[2]["stdin"]
    assert pre["tool_input"] == {"file_path": str(target), "content": "x\n"}
    assert pre["tool_use_id"] == api.tool_results()[0].tool_use_id
    assert records[4]["stdin"]["last_assistant_message"] == "Wrote it."


def test_pretooluse_deny_blocks_write_and_reaches_model(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    claude_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    deny = _printer(
        tmp_path,
        "deny_write",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "held by X",
            }
        },
    )
    hooks = command_hooks(deny, ["PreToolUse"], matcher="Write")
    write_user_settings(claude_home, {"hooks": hooks})
    target = project_dir / "blocked.txt"
    api = mock_api([call("Write", {"file_path": str(target), "content": "no\n"}), say("Blocked.")])

    result = claude("Try to write.", api)

    _ok(result, api)
    assert not target.exists()
    (denied,) = api.tool_results()
    assert denied.tool_name == "Write"
    assert denied.is_error
    assert "held by X" in denied.content


def test_sessionstart_additional_context_reaches_first_request(
    claude: ClaudeRunner, mock_api: MockApiFactory, claude_home: Path, tmp_path: Path
) -> None:
    marker = "E2E-CONTEXT-MARKER 4f1c: agent-7 holds src/app.py"
    context = _printer(
        tmp_path,
        "session_context",
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": marker}},
    )
    write_user_settings(claude_home, {"hooks": command_hooks(context, ["SessionStart"])})
    api = mock_api([say("Noted.")])

    result = claude("Hello.", api)

    _ok(result, api)
    assert marker in api.first_main_request_text()


def test_continue_resumes_the_session(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    claude_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    command, log = _recorder(tmp_path)
    write_user_settings(claude_home, {"hooks": command_hooks(command, ["SessionStart"])})
    first_api = mock_api([call("Bash", {"command": "echo one > one.txt"}), say("First done.")])
    _ok(claude("First prompt.", first_api), first_api)

    second_api = mock_api([say("Second done.")])
    second = claude("Second prompt.", second_api, args=["--continue"])

    _ok(second, second_api)
    assert second.stdout.strip() == "Second done."
    assert _events(log) == ["SessionStart(startup)", "SessionStart(resume)"]
    resumed = second_api.first_main_request_text()
    assert "First prompt." in resumed and "First done." in resumed
    assert "Second prompt." in resumed
    assert (project_dir / "one.txt").read_text() == "one\n"


# --------------------------------------------------------------------------- classification


def test_subagent_requests_do_not_consume_the_script(
    claude: ClaudeRunner, mock_api: MockApiFactory
) -> None:
    api = mock_api(
        [
            call(
                "Agent",
                {
                    "description": "Say OK",
                    "prompt": "Reply OK.",
                    "subagent_type": "general-purpose",
                },
            ),
            say("Launched."),
            say("Subagent finished."),
        ]
    )

    result = claude("Delegate.", api)

    _ok(result, api)
    assert [r.kind for r in api.requests_of("subagent")] == ["subagent"]
    assert api.unused_turns == 0
    assert "Subagent finished." in result.stdout


def test_compaction_is_not_a_main_turn(claude: ClaudeRunner, mock_api: MockApiFactory) -> None:
    first_api = mock_api([call("Bash", {"command": "echo hi"}), say("Before compaction.")])
    _ok(claude("Start.", first_api), first_api)

    api = mock_api(["must stay unused"])
    result = claude("/compact", api, args=["--continue"])

    _ok(result, api)
    assert [r.kind for r in api.requests] == ["compaction"]
    assert api.unused_turns == 1


# --------------------------------------------------------------------------- plugins


def test_plugin_dir_hooks_run(
    claude: ClaudeRunner, mock_api: MockApiFactory, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "e2e-probe"}\n')
    (plugin / "hooks").mkdir()
    (plugin / "record.py").write_text(_RECORDER, encoding="utf-8")
    log = tmp_path / "plugin-events.jsonl"
    command = f'{shlex.quote(sys.executable)} -I "${{CLAUDE_PLUGIN_ROOT}}/record.py" {log}'
    hooks = command_hooks(command, ["SessionStart", "PreToolUse"])
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    api = mock_api([call("Bash", {"command": "true"}), say("Plugin ran.")])

    result = claude("Use the plugin.", api, args=["--plugin-dir", str(plugin)])

    _ok(result, api)
    assert _events(log) == ["SessionStart(startup)", "PreToolUse(Bash)"]


# --------------------------------------------------------------------------- mock only
# These talk to the mock over HTTP directly; they need no claude binary.


def _post(
    api: MockAnthropicAPI, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[str, bytes]:
    request = urllib.request.Request(
        api.url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["content-type"], response.read()


def _sse_data(raw: bytes) -> list[dict[str, Any]]:
    events = []
    for frame in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if "data" in lines:
            data = json.loads(lines["data"])
            assert data["type"] == lines["event"]
            events.append(data)
    return events


_TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]


def _main_body(text: str = "hi", *, stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "stream": stream,
        "tools": _TOOLS,
        "system": [{"type": "text", "text": "SYSTEM-TEXT"}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }


def test_mock_streams_tool_use_as_input_json_deltas(mock_api: MockApiFactory) -> None:
    long_content = "x" * 200
    usage = Usage(
        input_tokens=11,
        output_tokens=22,
        cache_creation_input_tokens=33,
        cache_read_input_tokens=44,
    )
    api = mock_api(
        [call("Write", {"file_path": "/a", "content": long_content}, text="Writing.", usage=usage)]
    )

    content_type, raw = _post(api, "/v1/messages?beta=true", _main_body())

    assert content_type == "text/event-stream"
    events = _sse_data(raw)
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["message_start", "ping"]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["name"] == "Write" and starts[1]["id"].startswith("toolu_")
    partial = "".join(
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["index"] == 1
    )
    assert json.loads(partial) == {"file_path": "/a", "content": long_content}
    assert sum(e["type"] == "content_block_delta" and e["index"] == 1 for e in events) > 1
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"] == usage.as_dict()
    assert events[0]["message"]["usage"]["cache_read_input_tokens"] == 44


def test_mock_json_reply_and_script_exhaustion(mock_api: MockApiFactory) -> None:
    api = mock_api(["only turn"])

    first = json.loads(_post(api, "/v1/messages", _main_body(stream=False))[1])
    second = json.loads(_post(api, "/v1/messages", _main_body(stream=False))[1])

    assert first["content"] == [{"type": "text", "text": "only turn"}]
    assert first["stop_reason"] == "end_turn" and first["usage"]["input_tokens"] > 0
    assert second["content"] == [{"type": "text", "text": "Done."}]
    assert api.unused_turns == 0


def test_mock_side_requests_keep_the_script(mock_api: MockApiFactory) -> None:
    api = mock_api(["scripted"])
    compaction = _main_body("Respond with TEXT ONLY. Do NOT call any tools. ... a <summary> block")
    hook_prompt = {
        **_main_body(stream=False),
        "tools": [],
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {
                    "type": "object",
                    "required": ["ok", "reason"],
                    "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}},
                },
            }
        },
    }

    _post(api, "/v1/messages?beta=true", _main_body(), {"x-claude-code-agent-id": "a1"})
    _post(api, "/v1/messages?beta=true", compaction)
    verdict = json.loads(_post(api, "/v1/messages?beta=true", hook_prompt)[1])
    _post(api, "/v1/messages/count_tokens?beta=true", _main_body())
    _post(api, "/api/event_logging/batch", {})

    assert [r.kind for r in api.requests] == [
        "subagent",
        "compaction",
        "side",
        "count_tokens",
        "other",
    ]
    assert json.loads(verdict["content"][0]["text"]) == {"ok": True, "reason": "mock"}
    assert api.unused_turns == 1
    assert "SYSTEM-TEXT" in request_text(api.requests[0].json)
