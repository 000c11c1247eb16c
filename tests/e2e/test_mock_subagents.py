"""The mock's scripted subagents and teammates, driven by the real ``claude -p`` with NO agent-hooks
installed: each Agent prompt carries a marker, each marker has its own steps and cursor, and
``wait_until`` steps force one interleaving of the concurrent background agents.

Every run is made deterministic the same way: the main script answers the launch and then each
completion notification separately. That holds only when no agent finishes before the main
conversation asked about the launch (``LAUNCH_ANSWERED`` before A's first tool call) and the second
agent finishes after the first notification reached the main conversation
(``wait_until(notified(A))`` before B's last turn): notifications pending together arrive in one
request.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .claude_cli import ClaudeResult
from .mock_api import (
    MockAnthropicAPI,
    RecordedRequest,
    ScriptItem,
    Turn,
    agent_call,
    call,
    calls,
    first_user_text,
    say,
)
from .mock_routes import (
    MAIN,
    agent_marker,
    all_of,
    file_exists,
    notified,
    requested,
    turns_done,
    wait_until,
)

if TYPE_CHECKING:
    from .conftest import ClaudeRunner, MockApiFactory

A, B = agent_marker("A"), agent_marker("B")
TEAMS_ENV = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}
MAIN_REPLIES = ("Launched.", "A reported.", "B reported.")
# The main conversation's second request (the Agent tool results) has arrived.
LAUNCH_ANSWERED = requested(MAIN, 2)


def _ok(result: ClaudeResult, api: MockAnthropicAPI) -> None:
    """Exit 0, no mock error, every step of every script used."""
    print(f"claude -p took {result.duration:.2f}s; waits: {api.waits}")
    context = f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}"
    assert result.returncode == 0, context
    assert api.errors == [], context
    assert api.unused_turns == 0, context
    assert api.unused_agent_turns() == {A: 0, B: 0}, context


def _write(path: Path, content: str) -> Turn:
    return call("Write", {"file_path": str(path), "content": content})


def _main_script(names: tuple[str, str] | None = None, team: str | None = None) -> list[ScriptItem]:
    """Launch A and B in one turn (as named teammates when ``names`` is given), then one reply per
    completion notification."""
    a_name, b_name = names or (None, None)
    launch = calls(
        agent_call("writer A", f"{A} Write a file.", name=a_name, team_name=team),
        agent_call("writer B", f"{B} Write a file.", name=b_name, team_name=team),
    )
    return [launch, *MAIN_REPLIES]


def _agent_inputs(api: MockAnthropicAPI) -> list[dict[str, Any]]:
    """The inputs of the Agent calls the main conversation made, as the client sent them back."""
    return [
        block["input"]
        for message in api.main_requests[-1].json["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use" and block.get("name") == "Agent"
    ]


def _position(api: MockAnthropicAPI, request: RecordedRequest) -> int:
    return next(i for i, r in enumerate(api.requests) if r is request)


def _assert_two_writers(api: MockAnthropicAPI, result: ClaudeResult, a: Path, b: Path) -> None:
    """Shared checks of the A-then-B scripts: files, per-marker conversations, order, main."""
    _ok(result, api)
    assert a.read_text() == "from A\n"
    assert b.read_text() == "from B\n"
    assert result.stdout.strip() == "\n\n".join(MAIN_REPLIES)
    ids = {api.agent_id(A), api.agent_id(B)}
    assert None not in ids and len(ids) == 2
    for marker, path in ((A, a), (B, b)):
        requests = api.requests_in(marker)
        assert len(requests) == 2  # the Write turn, then the final text
        assert {r.agent_id for r in requests} == {api.agent_id(marker)}
        assert {r.kind for r in requests} == {"subagent"}
        assert f"{marker} Write a file." in first_user_text(requests[0].json)
        (written,) = api.tool_results(marker)
        assert (written.tool_name, written.is_error) == ("Write", False)
        assert str(path) in written.content
        assert api.was_notified(marker)
    assert len(api.main_requests) == 1 + len(MAIN_REPLIES)
    # A's Write was held back until B's first request arrived; B's until a.txt existed.
    assert _position(api, api.requests_in(B)[0]) < _position(api, api.requests_in(A)[1])
    assert [(w.conversation, w.description) for w in api.waits] == [
        (A, f"all_of(requested({B!r}, 1), requested({MAIN!r}, 2))"),
        (B, f"file_exists({a})"),
        (B, f"notified({A!r})"),
    ]
    assert a.stat().st_mtime_ns <= b.stat().st_mtime_ns


def _writer_scripts(a: Path, b: Path) -> dict[str, list[ScriptItem]]:
    """A writes a.txt only once B is waiting; B writes b.txt only once a.txt exists."""
    return {
        A: [
            wait_until(all_of(requested(B), LAUNCH_ANSWERED)),
            _write(a, "from A\n"),
            say("A done."),
        ],
        B: [
            wait_until(file_exists(a)),
            _write(b, "from B\n"),
            wait_until(notified(A)),
            say("B done."),
        ],
    }


# --------------------------------------------------------------------------- real client


def test_two_background_subagents_follow_their_own_scripts(
    claude: ClaudeRunner, mock_api: MockApiFactory, project_dir: Path
) -> None:
    a, b = project_dir / "a.txt", project_dir / "b.txt"
    api = mock_api(_main_script(), agents=_writer_scripts(a, b))

    result = claude("Delegate two writes.", api)

    _assert_two_writers(api, result, a, b)
    assert [i["run_in_background"] for i in _agent_inputs(api)] == [True, True]


def test_named_teammates_follow_their_own_scripts(
    claude: ClaudeRunner, mock_api: MockApiFactory, project_dir: Path
) -> None:
    """With agent teams enabled, ``name`` and ``team_name`` are accepted in ``-p`` mode and the
    teammates run in-process like background subagents: same header, same routing."""
    a, b = project_dir / "a.txt", project_dir / "b.txt"
    api = mock_api(_main_script(("alice", "bob"), "writers"), agents=_writer_scripts(a, b))

    result = claude("Delegate two writes to teammates.", api, extra_env=TEAMS_ENV)

    _assert_two_writers(api, result, a, b)
    agent_tools = [t for t in api.main_requests[0].json["tools"] if t["name"] == "Agent"]
    properties = agent_tools[0]["input_schema"]["properties"]
    assert {"name", "team_name"} <= set(properties)
    assert [(i["name"], i["team_name"]) for i in _agent_inputs(api)] == [
        ("alice", "writers"),
        ("bob", "writers"),
    ]
    # The names reach the teammates: the one started second is told about the other (seen: B's
    # first user message ends "Other agents active in this session, ...: main, alice.").
    a_first, b_first = (first_user_text(api.requests_in(m)[0].json) for m in (A, B))
    assert "Other agents active" in a_first + b_first
    assert "alice" in b_first or "bob" in a_first


def test_baseline_second_background_write_silently_replaces_the_first(
    claude: ClaudeRunner, mock_api: MockApiFactory, project_dir: Path
) -> None:
    """DOCUMENTS CLIENT BEHAVIOUR (no agent-hooks): two background subagents Write one file; the
    client lets the second Write replace the first without a word (no read-before-write check,
    no error). This is the problem agent-hooks' reservations must solve for subagents."""
    shared = project_dir / "shared.txt"
    api = mock_api(
        _main_script(),
        agents={
            A: [wait_until(LAUNCH_ANSWERED), _write(shared, "from A\n"), say("A done.")],
            B: [
                wait_until(turns_done(A, 1)),
                _write(shared, "from B\n"),
                wait_until(notified(A)),
                say("B done."),
            ],
        },
    )

    result = claude("Delegate two writes of one file.", api)

    _ok(result, api)
    assert shared.read_text() == "from B\n"
    (first,), (second,) = api.tool_results(A), api.tool_results(B)
    assert (first.is_error, second.is_error) == (False, False)
    assert first.content.startswith("File created successfully")
    assert "has been updated successfully" in second.content


# --------------------------------------------------------------------------- mock only
# These talk to the mock over HTTP directly; they need no claude binary.


def _subagent_body(prompt: str, *tool_results: str) -> dict[str, Any]:
    """A subagent request as the client shapes it: a reminder block, then the prompt."""
    first = {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>attribution</system-reminder>"},
            {"type": "text", "text": prompt},
        ],
    }
    later = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": t, "content": "ok"}]}
        for t in tool_results
    ]
    return {
        "model": "claude-test",
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
        "messages": [first, *later],
    }


def _post(api: MockAnthropicAPI, body: dict[str, Any], agent_id: str | None) -> tuple[int, Any]:
    headers = {"content-type": "application/json"}
    if agent_id:
        headers["x-claude-code-agent-id"] = agent_id
    request = urllib.request.Request(
        api.url + "/v1/messages", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _text(reply: Any) -> str:
    return "".join(b.get("text", "") for b in reply["content"])


def test_mock_routes_by_marker_with_a_cursor_each(mock_api: MockApiFactory) -> None:
    api = mock_api(["main turn"], agents={A: ["A one", "A two"], B: ["B one"]})

    replies = [
        _post(api, _subagent_body(f"{B} go"), "id-b"),
        _post(api, _subagent_body(f"{A} go"), "id-a"),
        _post(api, _subagent_body(f"{A} go", "toolu_1"), "id-a"),
        _post(api, _subagent_body(f"{B} go", "toolu_2"), "id-b"),
        _post(api, _subagent_body(f"Answer {A} in the main conversation"), None),
    ]

    assert [(status, _text(reply)) for status, reply in replies] == [
        (200, "B one"),
        (200, "A one"),
        (200, "A two"),
        (200, "Done."),
        (200, "main turn"),
    ]
    assert [r.conversation for r in api.requests] == [B, A, A, B, MAIN]
    assert (api.agent_id(A), api.agent_id(B)) == ("id-a", "id-b")
    assert api.unused_agent_turns() == {A: 0, B: 0}
    assert [r.tool_use_id for r in api.tool_results(A)] == ["toolu_1"]
    assert api.errors == []


def test_mock_unmatched_or_reused_marker_is_an_error(mock_api: MockApiFactory) -> None:
    api = mock_api(agents={A: ["A one", "A two"]})

    unmatched = _post(api, _subagent_body("no marker here"), "id-x")
    _post(api, _subagent_body(f"{A} go"), "id-a")
    reused = _post(api, _subagent_body(f"{A} again"), "id-other")

    assert (unmatched[0], reused[0]) == (500, 500)
    assert "matches no scripted marker" in api.errors[0] and "no marker here" in api.errors[0]
    assert "used by two subagents (id-a and id-other)" in api.errors[1]
    assert api.unused_agent_turns() == {A: 1}


def test_mock_unscripted_subagents_keep_the_fixed_answer(mock_api: MockApiFactory) -> None:
    api = mock_api(["main turn"])

    status, reply = _post(api, _subagent_body("Reply OK."), "id-x")

    assert (status, _text(reply), api.errors, api.unused_turns) == (200, "OK.", [], 1)


def test_mock_wait_holds_the_turn_and_times_out_visibly(
    mock_api: MockApiFactory, tmp_path: Path
) -> None:
    flag = tmp_path / "flag"
    api = mock_api(
        agents={
            A: [wait_until(file_exists(flag), timeout=5), "A after flag"],
            B: [wait_until(lambda _state: False, timeout=0.2, description="never"), "B never"],
        }
    )

    threading.Timer(0.3, flag.touch).start()
    a_status, a_reply = _post(api, _subagent_body(f"{A} go"), "id-a")
    b_status, _ = _post(api, _subagent_body(f"{B} go"), "id-b")

    assert (a_status, _text(a_reply)) == (200, "A after flag")
    (passed,) = api.waits
    assert passed.conversation == A and passed.seconds >= 0.25
    assert b_status == 500
    assert api.errors and "wait_until(never) still false after 0.2s" in api.errors[0]
    assert api.unused_agent_turns() == {A: 0, B: 1}  # the held-back turn was not served
