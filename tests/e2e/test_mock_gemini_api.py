"""The mock Gemini API on its own, over real HTTP on loopback (no CLI needed): routing, the wire
format the CLI parses, recording, and thread safety."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from .mock_gemini_api import (
    MockGeminiAPI,
    agent_marker,
    calls,
    complete_task,
    exchanges,
    read_file,
    say,
    write_file,
)

if TYPE_CHECKING:
    from .conftest import MockGeminiFactory

STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
ROUTER = "/v1beta/models/gemini-3.5-flash-lite:generateContent"
TOOLS = [{"functionDeclarations": [{"name": "write_file"}, {"name": "read_file"}]}]
SUBAGENT_TOOLS = [{"functionDeclarations": [{"name": "write_file"}, {"name": "complete_task"}]}]


def _post(api: MockGeminiAPI, path: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(
        api.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _streamed(text: str) -> list[dict[str, Any]]:
    """The JSON documents of an SSE body, as the CLI's ``data: …\\r\\n\\r\\n`` parser reads them."""
    events = [e for e in text.split("\r\n\r\n") if e]
    assert all(e.startswith("data: ") for e in events)
    return [json.loads(e[len("data: ") :]) for e in events]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def test_turns_are_served_in_order_then_the_final_text(mock_gemini_api: MockGeminiFactory) -> None:
    api = mock_gemini_api([calls(write_file("/p/a", "x"), read_file("/p/a"), text="Two."), "Bye."])
    body = {"contents": [_user("go")], "tools": TOOLS}

    first = _streamed(_post(api, STREAM, body)[1])
    second = _streamed(_post(api, STREAM, body)[1])
    third = _streamed(_post(api, STREAM, body)[1])

    (doc,) = first
    candidate = doc["candidates"][0]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    assert candidate["content"]["parts"] == [
        {"text": "Two."},
        {"functionCall": {"name": "write_file", "args": {"file_path": "/p/a", "content": "x"}}},
        {"functionCall": {"name": "read_file", "args": {"file_path": "/p/a"}}},
    ]
    assert doc["usageMetadata"]["totalTokenCount"] > 0
    assert second[0]["candidates"][0]["content"]["parts"] == [{"text": "Bye."}]
    assert third[0]["candidates"][0]["content"]["parts"] == [{"text": "Done."}]
    assert api.unused_turns == 0
    assert [r.kind for r in api.requests] == ["main"] * 3


def test_the_router_gets_a_low_complexity_score(mock_gemini_api: MockGeminiFactory) -> None:
    api = mock_gemini_api()
    schema = {
        "type": "object",
        "properties": {"complexity_reasoning": {}, "complexity_score": {"type": "integer"}},
    }
    status, text = _post(
        api,
        ROUTER,
        {"contents": [_user("go")], "generationConfig": {"responseJsonSchema": schema}},
    )
    assert status == 200
    answer = json.loads(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer["complexity_score"] == 1
    assert api.requests[0].kind == "router" and api.unused_turns == 0


def test_a_subagent_is_served_from_its_markers_script_and_finishes_with_complete_task(
    mock_gemini_api: MockGeminiFactory,
) -> None:
    marker = agent_marker("A")
    api = mock_gemini_api(["main"], agents={marker: [write_file("/p/s", "s")]})
    sub = {"contents": [_user(f"{marker} do it")], "tools": SUBAGENT_TOOLS}

    first = _streamed(_post(api, STREAM, sub)[1])[0]
    last = _streamed(_post(api, STREAM, sub)[1])[0]

    assert first["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "write_file"
    assert last["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "complete_task", "args": {"result": {"response": "Done."}}}}
    ]
    assert api.unused_turns == 1  # the main script was not touched
    assert [r.conversation for r in api.requests] == [marker, marker]
    status, _ = _post(api, STREAM, {"contents": [_user("no marker")], "tools": SUBAGENT_TOOLS})
    assert status == 500 and "matches no scripted marker" in api.errors[0]


def test_function_responses_are_paired_with_their_calls_by_id() -> None:
    body = {
        "contents": [
            _user("go"),
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {
                            "id": "w1",
                            "name": "write_file",
                            "args": {"file_path": "a"},
                        }
                    },
                    {
                        "functionCall": {
                            "id": "w2",
                            "name": "write_file",
                            "args": {"file_path": "b"},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "w2",
                            "name": "write_file",
                            "response": {"output": "ok"},
                        }
                    },
                    {
                        "functionResponse": {
                            "id": "w1",
                            "name": "write_file",
                            "response": {"error": "Tool execution blocked: R"},
                        }
                    },
                ],
            },
        ]
    }
    first, second = exchanges(body)
    assert (first.args["file_path"], first.error, first.output) == ("b", None, "ok")
    assert (second.args["file_path"], second.error) == ("a", "Tool execution blocked: R")
    assert complete_task("x").args == {"result": {"response": "x"}}


def test_concurrent_requests_each_get_one_turn_and_are_all_recorded(
    mock_gemini_api: MockGeminiFactory,
) -> None:
    api = mock_gemini_api([say(f"turn {i}") for i in range(16)])
    body = {"contents": [_user("go")], "tools": TOOLS}
    texts: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        text = _streamed(_post(api, STREAM, body)[1])[0]["candidates"][0]["content"]["parts"][0]
        with lock:
            texts.append(text["text"])

    threads = [threading.Thread(target=one) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(texts) == sorted(f"turn {i}" for i in range(16))
    assert len(api.requests) == 16 and api.unused_turns == 0 and api.errors == []
