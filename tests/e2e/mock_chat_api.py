"""Loopback mock of the OpenAI Chat Completions API, as opencode (1.18.33, through its bundled
``@ai-sdk/openai-compatible`` provider) and Qwen Code (0.24.4, ``OPENAI_BASE_URL``) use it.

The server replays a scripted list of model turns: the main conversation's from ``script``, a
subagent's from the steps given under its marker (``agents={agent_marker("A"): [...]}``), the
marker being a word of the subagent's prompt. Every other request (a title, a summary, any
request without tools) gets ``side_text``. Stdlib only (``mock_server.MockServer``). Typical use::

    with MockChatAPI([write("/p/a.txt", "hi\\n", call_id="call_1"), "Done."]) as api:
        run_opencode("prompt", ..., server_url=api.url)
    assert api.tool_result("call_1") == "Wrote file successfully."

Wire protocol (``reference/opencode-1.18.33/PROTOCOL.md`` §1, ``OTHER-CLIENTS.md``)
-----------------------------------------------------------------------------------
* ``POST /v1/chat/completions`` with ``messages`` (``system``, ``user``, ``assistant`` with
  ``tool_calls``, ``tool`` with ``tool_call_id``) and ``tools``; ``"stream": true`` is answered
  with Server-Sent Events of ``chat.completion.chunk`` objects — the text, then each tool call
  whole in one delta (``{index, id, type: "function", function: {name, arguments}}``), a last
  chunk with ``finish_reason`` and ``usage``, then ``data: [DONE]`` — else with one
  ``chat.completion``. ``GET /v1/models`` lists ``mock-model``.
* A request is the main conversation's when it offers tools and none of its user messages holds
  a scripted marker; a subagent's when one does (its prompt is its first user message; the main
  conversation's own history holds the marker only in an assistant's tool call, never in a user
  message). A request without tools (opencode's title, Qwen's side questions) is a side request.

Invariants:

* Turns are served strictly in order, each at most once (``mock_routes.Routes``); a ``wait_until``
  step holds the next turn back without a lock held; a wait that times out fails that request
  with HTTP 500 (recorded in ``errors``) and puts the turn back.
* Call ids are unique within the server unless the script names them (``call_id=...``).
* The request body is read whole before it is parsed (``mock_server``): a body that is not JSON
  is recorded in ``errors`` with its size and answered with HTTP 400, never served a turn.
* Every request is recorded in arrival order; readers get snapshots. The server also stands in
  as the run's HTTP(S) proxy: every ``CONNECT`` (or absolute-URI request) is recorded in
  ``outbound_attempts`` and refused with 403, so no run reaches the internet.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .mock_routes import MAIN, Wait
from .mock_server import HttpRequest, MockServer, Reply, json_reply

RequestKind = Literal["turn", "side", "proxy", "other"]

FINAL_TEXT = "Done."
SIDE_TEXT = "Mock title"
MODEL = "mock-model"


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class ToolCall:
    """One function call of a model turn: the tool's name and its JSON arguments."""

    name: str
    arguments: Mapping[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One scripted model response: optional text, then zero or more tool calls (several run
    side by side)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


ScriptItem = Turn | ToolCall | str | Wait


def call(name: str, *, call_id: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, call_id)


def parallel(*tool_calls: ToolCall, text: str = "") -> Turn:
    """One response holding several tool calls."""
    return Turn(text=text, tool_calls=tuple(tool_calls))


def _as_turn(item: ScriptItem) -> Turn | Wait:
    if isinstance(item, Turn | Wait):
        return item
    if isinstance(item, str):
        return Turn(text=item)
    return Turn(tool_calls=(item,))


# --------------------------------------------------------------------------- recordings


@dataclass
class RecordedRequest(HttpRequest):
    """One HTTP request as received, classified."""

    kind: RequestKind = "other"
    conversation: str | None = None  # MAIN or a marker for a turn request
    served: Turn | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        found = self.json.get("messages")
        return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offers."""
        tools = self.json.get("tools")
        names = []
        for tool in tools if isinstance(tools, list) else ():
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.append(function["name"])
        return names


def text_of(content: Any) -> str:
    """A message's content as text (a string, or a list of ``{type: "text", text}`` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def user_texts(messages: Iterable[Mapping[str, Any]]) -> str:
    return "\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "user")


# --------------------------------------------------------------------------- responses


def _chunk(base: Mapping[str, Any], delta: Mapping[str, Any], finish: str | None = None) -> bytes:
    doc = {**base, "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}]}
    return f"data: {json.dumps(doc)}\n\n".encode()


USAGE = {"prompt_tokens": 1_200, "completion_tokens": 40, "total_tokens": 1_240}


def sse_stream(completion_id: str, model: str, text: str, calls: list[dict[str, Any]]) -> bytes:
    """The whole SSE body of one streamed completion."""
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 1_795_000_000,
        "model": model,
    }
    parts = [_chunk(base, {"role": "assistant", "content": ""})]
    if text:
        parts.append(_chunk(base, {"content": text}))
    for index, tool_call in enumerate(calls):
        parts.append(_chunk(base, {"tool_calls": [{"index": index, **tool_call}]}))
    parts.append(_chunk(base, {}, "tool_calls" if calls else "stop"))
    parts.append(f"data: {json.dumps({**base, 'choices': [], 'usage': USAGE})}\n\n".encode())
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def completion(completion_id: str, model: str, text: str, calls: list[dict[str, Any]]) -> Any:
    """One non-streamed completion."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 1_795_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": USAGE,
    }


# --------------------------------------------------------------------------- server


class MockChatAPI(MockServer[RecordedRequest, Turn, ScriptItem]):
    """A scripted Chat Completions API on ``127.0.0.1``; ``url`` is the provider's base URL
    (``.../v1``)."""

    thread_name = "mock-chat-api"
    serves_connect = True

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        agents: Mapping[str, Iterable[ScriptItem]] | None = None,
        *,
        final_text: str = FINAL_TEXT,
        side_text: str = SIDE_TEXT,
    ) -> None:
        self._ids = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]
        self.final_text = final_text
        self.side_text = side_text
        super().__init__(script, agents)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def proxy_url(self) -> str:
        """The value for ``HTTP(S)_PROXY``: this server, which refuses every CONNECT."""
        return f"http://127.0.0.1:{self.port}"

    def _step(self, item: ScriptItem) -> Turn | Wait:
        return _as_turn(item)

    # recordings ------------------------------------------------------------------------
    @property
    def turn_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "turn"]

    @property
    def outbound_attempts(self) -> list[str]:
        """``CONNECT host:port`` (or ``METHOD url``) for every attempt to reach the internet."""
        return [f"{r.method} {r.path}" for r in self.requests if r.kind == "proxy"]

    def tool_results(self) -> dict[str, str]:
        """``tool_call_id`` → the text the model received for it, first-seen (every later
        request repeats the history)."""
        seen: dict[str, str] = {}
        for req in self.requests:
            for msg in req.messages:
                if msg.get("role") == "tool":
                    seen.setdefault(str(msg.get("tool_call_id")), text_of(msg.get("content")))
        return seen

    def tool_result(self, call_id: str) -> str:
        """What the model received for ``call_id``; AssertionError (with a summary) if nothing."""
        results = self.tool_results()
        if call_id not in results:
            raise AssertionError(f"no result for {call_id!r}; requests:\n{self.summary()}")
        return results[call_id]

    def system_texts(self, conversation: str = MAIN) -> list[str]:
        """The system messages of each request of ``conversation``, in order."""
        return [
            "\n".join(text_of(m.get("content")) for m in r.messages if m.get("role") == "system")
            for r in self.requests_in(conversation)
        ]

    def summary(self) -> str:
        lines = []
        for req in self.requests:
            msgs = req.messages
            tail = json.dumps(msgs[-1])[-200:] if msgs else ""
            lines.append(
                f"{req.kind:<5} {req.conversation or '-':<14} {req.method} {req.path} "
                f"messages={len(msgs)} last={tail}"
            )
        return "\n".join(lines)

    # request handling ------------------------------------------------------------------
    def _new_id(self, kind: str) -> str:
        return f"{kind}_{self._prefix}_{next(self._ids):03d}"

    def _handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        route = path.split("?", 1)[0].rstrip("/")
        record = RecordedRequest(method, path, headers, body)
        if method == "CONNECT" or path.startswith(("http://", "https://")):
            record.kind = "proxy"
            self._record(record)
            return Reply(
                403, "text/plain", [b"agent-hooks e2e: no outbound connections\n"], close=True
            )
        if method == "GET" and route.endswith("/models"):
            self._record(record)
            return json_reply({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        if method != "POST" or not route.endswith("/chat/completions"):
            self._record(record)
            return Reply(404, "application/json", [b'{"error": {"message": "not mocked"}}'])
        if not isinstance(body, dict):
            self._record(record)
            size = len(body) if isinstance(body, str) else 0
            self._record_error(f"{method} {path}: a body that is not a JSON object ({size} chars)")
            return json_reply({"error": {"message": "the body is not a JSON object"}}, 400)
        if record.tool_names:
            record.kind = "turn"
            record.conversation = self._routes.route(user_texts(record.messages)) or MAIN
        else:
            record.kind = "side"
        self._record(record)
        if record.kind == "turn":
            assert record.conversation is not None
            record.served = self._next_turn(record.conversation)
            turn = record.served or Turn(text=self.final_text)
        else:
            turn = Turn(text=self.side_text)
        calls = [
            {
                "id": tc.call_id or self._new_id("call"),
                "type": "function",
                "function": {"name": tc.name, "arguments": json.dumps(dict(tc.arguments))},
            }
            for tc in turn.tool_calls
        ]
        model = str(body.get("model") or MODEL)
        if body.get("stream"):
            return Reply(
                200,
                "text/event-stream",
                [sse_stream(self._new_id("chatcmpl"), model, turn.text, calls)],
            )
        return json_reply(completion(self._new_id("chatcmpl"), model, turn.text, calls))
