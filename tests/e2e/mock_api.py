"""Loopback mock of the Anthropic Messages API, as the real Claude Code client (2.1.328) uses it.

The server replays a scripted list of assistant turns for the MAIN conversation, one list per
scripted subagent (see "Subagents and teammates" below), and answers everything else harmlessly.
Stdlib only: a ``ThreadingHTTPServer`` on ``127.0.0.1:0`` served from a daemon thread, one thread
per connection (``mock_server.MockServer``, shared with the Codex and Gemini mocks). Typical use::

    with MockAnthropicAPI([call("Write", {"file_path": p, "content": "x"}), say("Done.")]) as api:
        run_claude("prompt", ..., server_url=api.url)
    assert not any(r.is_error for r in api.tool_results())

Wire protocol (observed)
------------------------
* ``POST /v1/messages?beta=true`` with ``"stream": true`` → Server-Sent Events: ``message_start``,
  ``ping``, per block ``content_block_start`` / ``content_block_delta`` (``text_delta`` or
  ``input_json_delta``, cut into 40-character pieces) / ``content_block_stop``, ``message_delta``
  (``stop_reason`` ``tool_use`` or ``end_turn``, with the full usage) and ``message_stop``.
  Without ``stream`` the same message is one JSON document.
* ``POST /v1/messages/count_tokens`` → ``{"input_tokens": N}``.
* Anything else (the ``HEAD /api/hello`` connectivity probe, sent unless
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``; GETs; telemetry posts) → ``200 {}``.
* Usage figures are copied verbatim into the client's transcript (``message.usage`` of each
  ``assistant`` line). The model has a 1M-token window: a turn reporting ~990k tokens
  (input + cache) makes the client auto-compact before its next request; ~197k does not.

Which requests belong to the main conversation
----------------------------------------------
Established by logging every request of real ``claude -p`` runs (plain, ``--continue``, an Agent
tool call, ``/compact``, auto-compaction, a ``type: "prompt"`` Stop hook). In ``-p`` mode with
non-essential traffic disabled no title-generation or other helper calls were seen. A
``POST /v1/messages`` request is classified, in this order:

1. ``subagent`` — it carries the ``x-claude-code-agent-id`` header. (Subagent requests also have
   ``cc_is_subagent=true;`` in the ``x-anthropic-billing-header`` line that is ``system[0]``, a
   different system prompt — "You are an agent for Claude Code, ..." — and a smaller tool list,
   but the same ``X-Claude-Code-Session-Id`` header and ``metadata`` as the parent, so those two
   do NOT distinguish them.) Background subagents run concurrently with the main conversation.
2. ``side`` — it has no ``tools`` (or an empty list): prompt/agent hooks and similar one-shot
   helper calls. When such a request asks for ``output_config.format`` of type ``json_schema``
   (a prompt hook asks for ``{ok, reason}``) the reply is a minimal conforming JSON document
   (``{"ok": true, "reason": "mock"}``), otherwise ``"OK."``.
3. ``compaction`` — its last user message asks for a summary (``"Respond with TEXT ONLY. Do NOT
   call any tools."`` and ``<summary>``). Compaction is a *fork* of the main conversation: same
   system prompt, same tools, same headers and metadata as a main request; only this appended
   instruction tells it apart. It is answered with an ``<analysis>``/``<summary>`` text, which the
   client requires (it retries once, with a sterner instruction, when ``<summary>`` is missing).
4. ``main`` — everything else. Only ``main`` requests consume a scripted turn.

Limitation: a main conversation run with every tool disabled (``--tools ""``) would send no
``tools`` and be taken for a side request.

Subagents and teammates
-----------------------
Established by logging every request (headers and body) of ``claude -p`` runs whose first turn
launches two background subagents, and again with ``CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1`` and
``name``/``team_name`` in the Agent calls:

* A subagent's requests carry ``x-claude-code-agent-id: <agent id>``: one id per subagent, the same
  on each of its requests, and the same id the hooks get as ``agent_id``, the Agent tool_result
  shows as ``agentId:`` and the completion notification as ``<task-id>``. Main requests have none.
* Everything else that differs is descriptive, not an identity: ``system[0]`` has
  ``cc_is_subagent=true;``, ``system[2]`` reads "You are an agent for Claude Code, ..." (main: "You
  are an agent working with the user ..."), and the tool list is shorter (no ``ListAgents``,
  ``ReportFindings``, ``ScheduleWakeup``, ``Workflow``). ``X-Claude-Code-Session-Id``,
  ``metadata.user_id`` (device and session id), ``model``, ``thinking``, ``output_config`` and
  ``context_management`` are the parent's, byte for byte.
* A subagent's conversation starts afresh: its first user message is a ``<system-reminder>`` block
  (git attribution), then the Agent ``prompt`` verbatim as its own text block, then (as for the
  main conversation) a ``role: "system"`` message with the environment. A named teammate's prompt
  block gets a trailing newline and is followed by a third block, ``<system-reminder>Other agents
  active in this session, addressable via SendMessage(...): main, alice.``. Every later request of
  the conversation repeats that first message, so a marker in the prompt identifies each request.
* The main conversation gets ``Async agent launched successfully ... agentId: <id>`` as the Agent
  tool_result, then one user message per completion: ``<task-notification><task-id>ID</task-id>
  ... <status>completed</status><summary>Agent "DESCRIPTION" finished</summary>
  <result>FINAL TEXT</result>``. Notifications that are pending together arrive in ONE request (two
  text blocks), otherwise one request each: a script that answers them one by one must make the
  second agent finish only after the first notification arrived (``wait_until(notified(A))``).
* Teammates: in ``-p`` mode they run in-process exactly like subagents (same header, same routing).
  The 2.1.328 schema describes ``team_name`` (and ``mode``) as "Deprecated; ignored. The session
  has a single implicit team."; ``name`` makes the agent addressable via ``SendMessage``. Without
  the environment variable the schema sent to the model lists neither (``additionalProperties:
  false``), yet the client still ran a call passing both, without complaint.

Routing: a ``subagent`` request that has tools and is no compaction is served from the script of
the marker its *first user message* contains (``MockAnthropicAPI(main, agents={marker: steps})``,
see ``mock_routes``); the first such request binds the marker to the ``x-claude-code-agent-id``.
Main requests are never routed by marker, so a ``-p`` prompt may quote markers. When no marker is
scripted, subagents get today's fixed answer (``side_text``). When any marker is scripted, a
subagent request matching none (or two) is an error: recorded in ``errors`` and answered with HTTP
500, so that subagent stops at once (the main conversation gets a ``<status>failed</status>``
notification quoting the error) and the test's ``api.errors == []`` names the prompt.
Limitation: a ``fork`` subagent inherits the parent's history, so its first user message is the
parent's prompt, not its own; it cannot be routed this way.

Script invariants
-----------------
* Turns are served strictly in order, one per ``main`` request; once the script is used up, every
  further ``main`` request gets ``final_text`` (``"Done."``) with ``end_turn``. The same holds for
  each marker's script and its own requests. A ``wait_until`` step holds the next turn back until
  its condition holds (no lock is held meanwhile: other conversations are served as usual).
* Tool-use ids are unique across all servers in the process (``toolu_`` + random hex), so a
  ``--continue`` run against a fresh server never reuses an id of the resumed conversation.
* Every request is recorded, in arrival order, under one lock; readers get snapshots.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .mock_routes import MAIN, Wait
from .mock_server import HttpRequest, MockServer, Reply, json_reply

RequestKind = Literal["main", "subagent", "compaction", "side", "count_tokens", "other"]

FINAL_TEXT = "Done."
SIDE_TEXT = "OK."
COMPACTION_TEXT = (
    "<analysis>Mock analysis of the conversation.</analysis>\n"
    "<summary>Mock summary: the user asked for scripted work and it was done.</summary>"
)
_COMPACTION_MARKERS = ("Respond with TEXT ONLY. Do NOT call any tools.", "<summary>")
_SUBAGENT_HEADER = "x-claude-code-agent-id"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_STREAM_CHUNK = 40  # characters per text_delta / input_json_delta


@dataclass(frozen=True)
class Usage:
    """Token usage reported for one assistant message (all figures non-negative)."""

    input_tokens: int = 2_154
    output_tokens: int = 87
    cache_creation_input_tokens: int = 1_024
    cache_read_input_tokens: int = 9_730

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


SIDE_USAGE = Usage(
    input_tokens=412, output_tokens=9, cache_creation_input_tokens=0, cache_read_input_tokens=0
)


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block; ``id`` is generated when left ``None``."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One scripted assistant message: optional text, then zero or more tool calls.

    ``stop_reason`` is ``tool_use`` iff ``tool_calls`` is non-empty, else ``end_turn``.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


def say(text: str, *, usage: Usage | None = None) -> Turn:
    """A text-only turn (ends the agent loop)."""
    return Turn(text=text, usage=usage or Usage())


def call(
    name: str, tool_input: Mapping[str, Any], *, text: str = "", usage: Usage | None = None
) -> Turn:
    """A turn with a single tool call."""
    return Turn(text=text, tool_calls=(ToolCall(name, tool_input),), usage=usage or Usage())


def calls(*tool_calls: ToolCall, text: str = "", usage: Usage | None = None) -> Turn:
    """A turn with several tool calls (run by the client in one batch)."""
    return Turn(text=text, tool_calls=tuple(tool_calls), usage=usage or Usage())


def agent_call(
    description: str,
    prompt: str,
    subagent_type: str = "general-purpose",
    run_in_background: bool = True,
    name: str | None = None,
    team_name: str | None = None,
) -> ToolCall:
    """An Agent tool call; put a marker (``agent_marker(X)``) in ``prompt`` to script the agent.

    ``name``/``team_name`` are in the tool's schema only with
    ``CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1``; they are left out of the input when ``None``.
    """
    tool_input: dict[str, Any] = {
        "description": description,
        "prompt": prompt,
        "subagent_type": subagent_type,
        "run_in_background": run_in_background,
    }
    if name is not None:
        tool_input["name"] = name
    if team_name is not None:
        tool_input["team_name"] = team_name
    return ToolCall("Agent", tool_input)


ScriptItem = Turn | str | Wait


@dataclass
class RecordedRequest(HttpRequest):
    """One HTTP request as received (``method``, ``path``, ``headers``, ``body``), classified."""

    kind: RequestKind = "other"
    conversation: str | None = None  # MAIN or a marker: the script it was served from
    agent_id: str | None = None  # the x-claude-code-agent-id header


@dataclass(frozen=True)
class ToolResult:
    """A ``tool_result`` block the client sent back; ``content`` is its text joined by newlines."""

    tool_use_id: str
    content: str
    is_error: bool
    tool_name: str | None = None


# --------------------------------------------------------------------------- classification


def classify(method: str, path: str, headers: Mapping[str, str], body: Any) -> RequestKind:
    """Tell which kind of request this is (see the module docstring for the rule)."""
    route = path.split("?", 1)[0].rstrip("/")
    if method != "POST" or not route.startswith("/v1/messages"):
        return "other"
    if route.endswith("/count_tokens"):
        return "count_tokens"
    if route != "/v1/messages":
        return "other"
    if any(k.lower() == _SUBAGENT_HEADER for k in headers):
        return "subagent"
    doc = body if isinstance(body, dict) else {}
    if not doc.get("tools"):
        return "side"
    if _is_compaction(doc):
        return "compaction"
    return "main"


def _is_compaction(body: Mapping[str, Any]) -> bool:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    if not users:
        return False
    last = _texts(users[-1].get("content"), include_tool_results=False)
    return all(marker in last for marker in _COMPACTION_MARKERS)


def first_user_text(body: Mapping[str, Any]) -> str:
    """The text of the request's first user message (a subagent's: its Agent prompt)."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            return _texts(message.get("content"), include_tool_results=False)
    return ""


def _texts(content: Any, *, include_tool_results: bool = True) -> str:
    """All text in a message ``content`` (string or list of blocks), newline-joined."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result" and include_tool_results:
            parts.append(_texts(block.get("content")))
    return "\n".join(parts)


# --------------------------------------------------------------------------- responses


def _message(turn: Turn) -> tuple[str, list[dict[str, Any]], str]:
    """(message id, content blocks, stop_reason) for a turn; tool ids are made unique here."""
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for tc in turn.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": tc.id or f"toolu_{uuid.uuid4().hex[:24]}",
                "name": tc.name,
                "input": dict(tc.input),
            }
        )
    stop = "tool_use" if turn.tool_calls else "end_turn"
    return f"msg_{uuid.uuid4().hex[:24]}", blocks, stop


def _message_reply(
    msg_id: str, blocks: list[dict[str, Any]], stop: str, usage: Usage, model: str
) -> Reply:
    doc = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage.as_dict(),
    }
    return json_reply(doc)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(text: str) -> list[str]:
    return [text[i : i + _STREAM_CHUNK] for i in range(0, len(text), _STREAM_CHUNK)] or [""]


def _sse_events(
    msg_id: str, blocks: list[dict[str, Any]], stop: str, usage: Usage, model: str
) -> Iterator[bytes]:
    """The standard event sequence; tool input is streamed as ``input_json_delta`` pieces."""
    start_usage = {**usage.as_dict(), "output_tokens": 1}
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
    )
    yield _sse("ping", {"type": "ping"})
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        else:
            opening = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(json.dumps(block["input"]))
            ]
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": usage.as_dict(),
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


# --------------------------------------------------------------------------- server


class MockAnthropicAPI(MockServer[RecordedRequest, Turn, ScriptItem]):
    """A scripted Messages API on ``127.0.0.1``. Use as a context manager or ``start``/``stop``;
    ``url`` is the value for ``ANTHROPIC_BASE_URL`` (no trailing slash).

    ``agents`` maps a marker (``agent_marker("A")``) to the steps of the subagent whose Agent prompt
    contains it. Invariant: ``requests`` holds every request received, in arrival order; only
    requests whose ``kind`` is ``main`` consume turns of the main script, and only requests of a
    marker's subagent consume that marker's.
    """

    thread_name = "mock-anthropic-api"

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        agents: Mapping[str, Iterable[ScriptItem]] | None = None,
        final_text: str = FINAL_TEXT,
        side_text: str = SIDE_TEXT,
    ) -> None:
        self._issued: dict[str, str] = {}  # tool_use id -> tool name
        self.final_text = final_text
        self.side_text = side_text
        super().__init__(script, agents)

    # script ----------------------------------------------------------------------------
    def _step(self, item: ScriptItem) -> Turn | Wait:
        """A ``str`` is a text-only turn."""
        return say(item) if isinstance(item, str) else item

    def agent_id(self, marker: str) -> str | None:
        """The subagent id (``x-claude-code-agent-id``) whose requests ``marker`` served."""
        return self._routes.agent_id(marker)

    # recordings ------------------------------------------------------------------------
    @property
    def main_requests(self) -> list[RecordedRequest]:
        """Snapshot of the requests classified ``main``."""
        return [r for r in self.requests if r.kind == "main"]

    def requests_of(self, kind: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == kind]

    def was_notified(self, marker: str) -> bool:
        """Whether a main request carried the ``<task-notification>`` of ``marker``'s subagent."""
        agent_id = self.agent_id(marker)
        tag = f"<task-id>{agent_id}</task-id>"
        return agent_id is not None and any(tag in request_text(r.json) for r in self.main_requests)

    def summary(self) -> str:
        """One line per request (kind, path, message count, last message tail), for failures."""
        lines = []
        for req in self.requests:
            messages = req.json.get("messages") or []
            tail = _texts(messages[-1].get("content"))[-120:] if messages else ""
            lines.append(
                f"{req.kind:<12} {req.conversation or '-':<14} {req.method} {req.path} "
                f"messages={len(messages)} last={tail!r}"
            )
        return "\n".join(lines)

    def tool_results(self, conversation: str = MAIN) -> list[ToolResult]:
        """Every distinct ``tool_result`` the client sent in ``conversation`` (main by default,
        or a marker's subagent), first-seen order.

        Each request repeats the whole history, so results are de-duplicated by id.
        """
        seen: dict[str, ToolResult] = {}
        with self._lock:
            issued = dict(self._issued)
        for req in self.requests_in(conversation):
            for msg in req.json.get("messages") or []:
                content = msg.get("content")
                if msg.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if not isinstance(block, dict) or block.get("type") != "tool_result":
                        continue
                    tid = str(block.get("tool_use_id"))
                    seen.setdefault(
                        tid,
                        ToolResult(
                            tool_use_id=tid,
                            content=_texts(block.get("content")),
                            is_error=bool(block.get("is_error", False)),
                            tool_name=issued.get(tid),
                        ),
                    )
        return list(seen.values())

    def first_main_request_text(self) -> str:
        """All text the first main request carried: system blocks, then every message."""
        mains = self.main_requests
        if not mains:
            raise AssertionError("no main-conversation request was received")
        return request_text(mains[0].json)

    # request handling --------------------------------------------------------------------
    def _handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        kind = classify(method, path, headers, body)
        doc = body if isinstance(body, dict) else {}
        agent_id = next((v for k, v in headers.items() if k.lower() == _SUBAGENT_HEADER), None)
        try:
            conversation, problem = self._route(kind, doc, agent_id), None
        except ValueError as exc:
            conversation, problem = None, str(exc)
        self._record(RecordedRequest(method, path, headers, body, kind, conversation, agent_id))
        if problem:
            raise ValueError(problem)  # recorded in ``errors``, answered with HTTP 500
        if kind == "count_tokens":
            return json_reply({"input_tokens": max(1, len(json.dumps(doc)) // 4)})
        if kind == "other":
            return json_reply({})
        if conversation is not None:
            turn = self._next_turn(conversation) or say(self.final_text)
        elif kind == "compaction" or (kind == "subagent" and _is_compaction(doc)):
            turn = say(COMPACTION_TEXT, usage=SIDE_USAGE)
        else:
            turn = say(self._side_text(doc), usage=SIDE_USAGE)
        return self._reply(turn, doc)

    def _route(
        self, kind: RequestKind, body: Mapping[str, Any], agent_id: str | None
    ) -> str | None:
        """The script a request is served from (``MAIN``, a marker) or ``None`` for a fixed answer.

        Raises ``ValueError`` for a subagent request no script claims while markers are scripted.
        """
        if kind == "main":
            return MAIN
        if kind != "subagent" or not body.get("tools") or _is_compaction(body):
            return None
        first = first_user_text(body)
        return self._routes.claim(first, agent_id, shown=_REMINDER.sub("", first))

    def _side_text(self, body: Mapping[str, Any]) -> str:
        """``side_text``, or a minimal JSON document when a ``json_schema`` output is requested."""
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            return json.dumps(schema_example(fmt["schema"]))
        return self.side_text

    def _reply(self, turn: Turn, body: Mapping[str, Any]) -> Reply:
        model = str(body.get("model") or "claude-mock")
        msg_id, blocks, stop = _message(turn)
        with self._lock:
            for b in blocks:
                if b["type"] == "tool_use":
                    self._issued[b["id"]] = b["name"]
        if not body.get("stream"):
            return _message_reply(msg_id, blocks, stop, turn.usage, model)
        return Reply(
            200,
            "text/event-stream",
            _sse_events(msg_id, blocks, stop, turn.usage, model),
            streamed=True,
        )

    def _error_document(self, exc: Exception) -> Any:
        return {"type": "error", "error": {"type": "api_error", "message": repr(exc)}}

    def _reply_headers(self) -> list[tuple[str, str]]:
        return [("request-id", f"req_{uuid.uuid4().hex[:24]}")]


def schema_example(schema: Mapping[str, Any]) -> Any:
    """A minimal value satisfying a simple JSON schema: required keys only, ``true`` for booleans.

    For a ``type: "prompt"`` hook (schema ``{ok, reason, impossible?}``) this is
    ``{"ok": true, "reason": "mock"}``: the hook lets the action go ahead.
    """
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return schema_example(schema[combinator][0])
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: schema_example(props.get(k) or {}) for k in schema.get("required") or []}
    return {
        "boolean": True,
        "string": "mock",
        "integer": 0,
        "number": 0,
        "array": [],
        "null": None,
    }.get(str(kind))


def request_text(body: Mapping[str, Any]) -> str:
    """All text of a Messages request: system (string or blocks), then each message's text."""
    system = body.get("system")
    parts = [_texts(system)] if system else []
    parts.extend(_texts(m.get("content")) for m in body.get("messages") or [])
    return "\n".join(parts)
