"""Loopback mock of the OpenAI Responses API, as the real Codex CLI (0.169.0) uses it.

The server replays a scripted list of model turns for the main agent's ``turn`` requests, and
answers everything else harmlessly. It also stands in as the HTTPS proxy of the run (Codex gets
``HTTPS_PROXY`` pointing here): every ``CONNECT`` is logged in ``outbound_attempts`` and refused,
so no run ever reaches the internet. Stdlib only: a ``ThreadingHTTPServer`` on ``127.0.0.1:0``
served from a daemon thread, one thread per connection (``mock_server.MockServer``). Typical use::

    with MockResponsesAPI([exec_command("echo hi > a.txt", call_id="call_1"), "Done."]) as api:
        run_codex("prompt", ..., server_url=api.url)
    assert api.tool_output("call_1") == ""

Wire protocol (``reference/codex-0.169.0/PROTOCOL.md`` §1, and re-observed here)
------------------------------------------------------------------------------
* ``POST /v1/responses`` (``"stream": true``) → Server-Sent Events: ``response.created``, per
  output item ``response.output_item.added`` / ``response.output_item.done``, then
  ``response.completed`` with ``{response: {id, usage}}``. The whole stream is sent at once with a
  ``content-length`` (Codex reads SSE from any body).
* Output items: ``message`` (assistant text), ``function_call`` (``exec_command`` with JSON
  ``arguments``) and ``custom_tool_call`` (``apply_patch``; the raw patch is ``input``).
* A tool's result comes back in a later request's ``input`` as ``function_call_output`` /
  ``custom_tool_call_output`` with the same ``call_id``; every later request repeats the history,
  so results are read first-seen, by ``call_id``.
* The ``x-codex-turn-metadata`` header (JSON) says what a request is: ``request_kind`` ``turn`` or
  ``compaction``, ``thread_source`` ``user`` or ``guardian_review``, ``agent_name`` ``/root`` for
  the main agent, ``/root/<task>`` for a subagent.

Which requests consume the script
---------------------------------
Only ``turn`` requests of the main agent (``agent_name`` ``/root`` or absent, ``thread_source``
not ``guardian_review``) take the next scripted turn; once the script is used up they get
``final_text``. Compaction requests get a summary; every other model request (subagents, the
guardian reviewer) gets ``final_text``. Other paths get ``404`` and are logged in ``requests``.

Invariants:

* Turns are served strictly in order, each at most once, under one lock. A ``wait_until``
  step (``mock_routes``) holds the next turn back until its condition holds, without holding
  the lock (the request that waits is recorded first, so it counts in ``requests_in``); a
  wait that times out fails that request with HTTP 500 (recorded in ``errors``) and puts the
  turn back.
* Call ids are unique within the server unless the script names them (``call_id=...``).
* Every request (proxy attempts included) is recorded in arrival order; readers get snapshots;
  ``wait_for`` blocks on a condition variable notified at each request, never on a fixed sleep.
* ``stop()`` shuts the server down and closes every connection still open (keep-alive ones too),
  so a test's server never outlives its test.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .mock_routes import MAIN, Wait
from .mock_server import HttpRequest, MockServer, Reply

RequestKind = Literal["turn", "compaction", "side", "proxy", "other"]

FINAL_TEXT = "Done."
COMPACTION_TEXT = "Mock summary: the user asked for scripted work and it was done."
TURN_METADATA_HEADER = "x-codex-turn-metadata"
MAIN_AGENT = "/root"


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class FunctionCall:
    """A ``function_call`` item (``exec_command`` and other JSON-argument tools)."""

    name: str
    arguments: Mapping[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class CustomToolCall:
    """A ``custom_tool_call`` item (the freeform ``apply_patch`` tool): ``input`` is raw text."""

    name: str
    input: str
    call_id: str | None = None


ToolCall = FunctionCall | CustomToolCall


@dataclass(frozen=True)
class Turn:
    """One scripted model response: optional assistant text, then zero or more tool calls."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


ScriptItem = Turn | FunctionCall | CustomToolCall | str | Wait


def exec_command(cmd: str, *, call_id: str | None = None, **extra: Any) -> FunctionCall:
    """An ``exec_command`` call (Codex's shell tool; hooks see it as ``Bash``)."""
    return FunctionCall("exec_command", {"cmd": cmd, **extra}, call_id)


def apply_patch(patch: str, *, call_id: str | None = None) -> CustomToolCall:
    """An ``apply_patch`` custom tool call with the raw patch text (grammar: PROTOCOL §7)."""
    return CustomToolCall("apply_patch", patch, call_id)


def add_file_patch(path: str, *lines: str) -> str:
    """A patch that creates ``path`` holding ``lines``."""
    body = "".join(f"+{line}\n" for line in lines or ("",))
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def message(text: str) -> Turn:
    """A text-only turn (ends the agent loop)."""
    return Turn(text=text)


def parallel(*tool_calls: ToolCall, text: str = "") -> Turn:
    """One response holding several tool calls (Codex may run them concurrently)."""
    return Turn(text=text, tool_calls=tuple(tool_calls))


def _as_turn(item: ScriptItem) -> Turn | Wait:
    if isinstance(item, Turn | Wait):
        return item
    if isinstance(item, str):
        return message(item)
    return Turn(tool_calls=(item,))


# --------------------------------------------------------------------------- recordings


@dataclass
class RecordedRequest(HttpRequest):
    """One HTTP request as received (``method``, ``path``, ``headers``, ``body``), classified."""

    kind: RequestKind = "other"
    metadata: dict[str, Any] = field(default_factory=dict)  # x-codex-turn-metadata
    served: Turn | None = None  # the scripted turn this request consumed
    conversation: str | None = None  # MAIN for a turn request: the script it is served from

    @property
    def input_items(self) -> list[dict[str, Any]]:
        items = self.json.get("input")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def turn_metadata(headers: Mapping[str, str]) -> dict[str, Any]:
    """The parsed ``x-codex-turn-metadata`` header (empty when absent or not a JSON object)."""
    raw = _header(headers, TURN_METADATA_HEADER)
    try:
        doc = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def classify(method: str, path: str, headers: Mapping[str, str]) -> RequestKind:
    """``turn`` (consumes the script), ``compaction``, ``side`` (another model request: subagent,
    guardian, the interactive client's thread title), ``proxy`` (a CONNECT or absolute-URI request meant for the internet) or ``other``."""
    if method == "CONNECT" or path.startswith(("http://", "https://")):
        return "proxy"
    if method != "POST" or path.split("?", 1)[0].rstrip("/") != "/v1/responses":
        return "other"
    meta = turn_metadata(headers)
    if meta.get("request_kind") == "compaction":
        return "compaction"
    main = str(meta.get("agent_name") or MAIN_AGENT) == MAIN_AGENT
    # the interactive client also asks for a thread's title, in a thread of its own
    if main and meta.get("thread_source") not in ("guardian_review", "thread_title"):
        return "turn"
    return "side"


def output_text(output: Any) -> str:
    """A tool output as text: a string as is, a list of content items joined by newlines."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        parts = [str(p.get("text", "")) for p in output if isinstance(p, dict)]
        return "\n".join(parts)
    if isinstance(output, dict) and "content" in output:  # {"content": ..., "success": ...}
        return output_text(output["content"])
    return json.dumps(output)


# --------------------------------------------------------------------------- responses


def _sse(data: Mapping[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _items(turn: Turn, new_id: Callable[[str], str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for tc in turn.tool_calls:
        call_id = tc.call_id or new_id("call")
        if isinstance(tc, FunctionCall):
            items.append(
                {
                    "type": "function_call",
                    "id": new_id("fc"),
                    "status": "completed",
                    "call_id": call_id,
                    "name": tc.name,
                    "arguments": json.dumps(dict(tc.arguments)),
                }
            )
        else:
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": new_id("ctc"),
                    "status": "completed",
                    "call_id": call_id,
                    "name": tc.name,
                    "input": tc.input,
                }
            )
    return items


def sse_stream(response_id: str, items: list[dict[str, Any]], model: str) -> bytes:
    """The whole SSE body of one response holding ``items``."""
    usage = {
        "input_tokens": 1_200,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1_240,
    }
    base = {"id": response_id, "object": "response", "model": model}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}}
    ]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": items, "usage": usage},
        }
    )
    return b"".join(_sse({**e, "sequence_number": n}) for n, e in enumerate(events))


# --------------------------------------------------------------------------- server


class MockResponsesAPI(MockServer[RecordedRequest, Turn, ScriptItem]):
    """A scripted Responses API (and refusing HTTPS proxy) on ``127.0.0.1``.

    Use as a context manager or ``start``/``stop``. ``url`` is the provider's ``base_url``
    (``.../v1``), ``proxy_url`` the value for ``HTTPS_PROXY``. Only the main agent is scripted
    (``MAIN``): ``requests_in(MAIN)`` are its turn requests.
    """

    thread_name = "mock-responses-api"
    serves_connect = True

    def __init__(self, script: Iterable[ScriptItem] = (), *, final_text: str = FINAL_TEXT) -> None:
        self._ids = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]
        self.final_text = final_text
        super().__init__(script)

    # lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The provider ``base_url`` (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def proxy_url(self) -> str:
        """The value for ``HTTPS_PROXY``: this server, which refuses every CONNECT."""
        return f"http://127.0.0.1:{self.port}"

    # script ----------------------------------------------------------------------------
    def _step(self, item: ScriptItem) -> Turn | Wait:
        """A ``str`` is a text-only turn, a call a one-call turn."""
        return _as_turn(item)

    # recordings ------------------------------------------------------------------------
    def requests_of(self, kind: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == kind]

    @property
    def turn_requests(self) -> list[RecordedRequest]:
        """The main agent's ``turn`` requests (the ones that consume the script)."""
        return self.requests_of("turn")

    @property
    def outbound_attempts(self) -> list[str]:
        """``CONNECT host:port`` (or ``METHOD url``) for every attempt to reach the internet."""
        return [f"{r.method} {r.path}" for r in self.requests_of("proxy")]

    def tool_outputs(self) -> dict[str, str]:
        """``call_id`` → the text the model received for it (``function_call_output`` or
        ``custom_tool_call_output``), first-seen; every later request repeats the history."""
        seen: dict[str, str] = {}
        for req in self.requests:
            for item in req.input_items:
                if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    seen.setdefault(str(item.get("call_id")), output_text(item.get("output")))
        return seen

    def tool_output(self, call_id: str) -> str:
        """What the model received for ``call_id``; AssertionError (with a summary) if nothing."""
        outputs = self.tool_outputs()
        if call_id not in outputs:
            raise AssertionError(f"no output for {call_id!r}; requests:\n{self.summary()}")
        return outputs[call_id]

    def summary(self) -> str:
        """One line per request (kind, method, path, input size, last input item), for failures."""
        lines = []
        for req in self.requests:
            items = req.input_items
            tail = json.dumps(items[-1])[-160:] if items else ""
            lines.append(f"{req.kind:<10} {req.method} {req.path} input={len(items)} last={tail}")
        return "\n".join(lines)

    # request handling ------------------------------------------------------------------
    def _new_id(self, kind: str) -> str:
        return f"{kind}_{self._prefix}_{next(self._ids):03d}"

    def _handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        kind = classify(method, path, headers)
        conversation = MAIN if kind == "turn" else None
        record = RecordedRequest(
            method, path, headers, body, kind, turn_metadata(headers), conversation=conversation
        )
        self._record(record)
        if kind == "proxy":
            return Reply(
                403, "text/plain", [b"agent-hooks e2e: no outbound connections\n"], close=True
            )
        if kind == "other":
            return Reply(404, "application/json", [b'{"error": {"message": "not mocked"}}'])
        doc = body if isinstance(body, dict) else {}
        if kind == "turn":
            record.served = self._next_turn(MAIN)
            turn = record.served or message(self.final_text)
        elif kind == "compaction":
            turn = message(COMPACTION_TEXT)
        else:
            turn = message(self.final_text)
        model = str(doc.get("model") or "mock-model")
        payload = sse_stream(self._new_id("resp"), _items(turn, self._new_id), model)
        return Reply(200, "text/event-stream", [payload])
