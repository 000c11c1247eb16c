"""Loopback mock of the Gemini API, as the real Gemini CLI (0.61.0) uses it.

The server replays a scripted list of model turns (function calls, then a final text) for the MAIN
conversation and one list per scripted subagent, and answers the CLI's helper requests (the model
router, JSON-schema side questions, token counts) harmlessly. Stdlib only: a
``ThreadingHTTPServer`` on ``127.0.0.1:0`` served from a daemon thread, one thread per connection
(``mock_server.MockServer``). Typical use::

    with MockGeminiAPI([write_file(p, "x\\n"), say("Done.")]) as api:
        run_gemini("prompt", ..., server_url=api.url)
    assert api.tool_results()[0].error is None

Wire protocol (``PROTOCOL.md`` §1 of ``reference/gemini-cli-0.61.0``, and this module's own runs)
-------------------------------------------------------------------------------------------------
* ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` — one per model turn of the main
  agent and of each subagent. Answered with Server-Sent Events: one ``data: <GenerateContentResponse
  JSON>`` event holding the whole turn (text part, then one ``functionCall`` part per call, no ids:
  the CLI makes its own), ``finishReason: "STOP"`` and ``usageMetadata``.
* ``POST /v1beta/models/<model>:generateContent`` — one-shot helper calls. The model router's asks
  for a JSON object with ``complexity_score``: answered ``complexity_score: 1`` (simple), which sends
  the main turns to the flash model. Any other request for JSON output gets a minimal document
  conforming to its schema; a plain one gets ``side_text``.
* ``POST …:countTokens`` → ``{"totalTokens": N}``; anything else → ``200 {}``.
* The CLI sends back each call's result as a ``functionResponse`` part (``{name, response, id?}``)
  of the next user turn; a call a BeforeTool hook refused comes back as
  ``response == {"error": "Tool execution blocked: <reason>"}``.

Which streamed requests belong to which conversation
----------------------------------------------------
A subagent's requests declare the tool ``complete_task`` (the main agent's never do), and its first
user message carries the ``invoke_agent`` prompt: a subagent request is served from the script of the
marker (``agent_marker("A")``) that message contains. A subagent request that matches no marker
while markers are scripted is an error (recorded in ``errors``, answered with HTTP 500). Every other
streamed request is ``main``. A subagent whose script is used up (or that has none) is answered
with ``complete_task`` (``final_text``), the only way a Gemini subagent may finish.

Script invariants
-----------------
* Turns are served strictly in order, one per request of their conversation; once the main script
  is used up every further main request gets ``final_text``. A ``wait_until`` step (``mock_routes``)
  holds the next turn back until its condition holds, without holding any lock.
* Every request is recorded, in arrival order, under one lock; readers get snapshots. The server is
  started by ``start`` (or ``with``) and stopped by ``stop``; both are safe to call from any thread.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .mock_api import schema_example
from .mock_routes import MAIN, Wait, agent_marker
from .mock_server import HttpRequest, MockServer, Reply, json_reply

__all__ = [
    "MAIN",
    "FunctionCall",
    "MockGeminiAPI",
    "RecordedRequest",
    "ScriptItem",
    "ToolResult",
    "Turn",
    "agent_marker",
    "call",
    "calls",
    "complete_task",
    "exchanges",
    "invoke_agent",
    "read_file",
    "replace",
    "request_text",
    "run_shell_command",
    "say",
    "user_text",
    "write_file",
]

RequestKind = Literal["main", "subagent", "router", "side", "count_tokens", "other"]

FINAL_TEXT = "Done."
SIDE_TEXT = "OK."
ROUTER_REPLY = {"complexity_reasoning": "mock: a scripted, simple task", "complexity_score": 1}
SUBAGENT_FINISH_TOOL = "complete_task"


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class FunctionCall:
    """One ``functionCall`` part: a tool name and its arguments, as the model writes them."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    """One scripted model turn: optional text, then zero or more function calls (run in order)."""

    text: str = ""
    calls: tuple[FunctionCall, ...] = ()
    prompt_tokens: int = 1_500
    output_tokens: int = 40


ScriptItem = Turn | FunctionCall | str | Wait


def say(text: str) -> Turn:
    """A text-only turn: it ends the agent loop."""
    return Turn(text=text)


def call(name: str, args: Mapping[str, Any], *, text: str = "") -> Turn:
    """A turn with a single function call."""
    return Turn(text=text, calls=(FunctionCall(name, dict(args)),))


def calls(*function_calls: FunctionCall, text: str = "") -> Turn:
    """A turn with several function calls (the CLI runs them one after the other)."""
    return Turn(text=text, calls=tuple(function_calls))


def write_file(file_path: str, content: str) -> FunctionCall:
    return FunctionCall("write_file", {"file_path": file_path, "content": content})


def replace(
    file_path: str, old_string: str, new_string: str, instruction: str = ""
) -> FunctionCall:
    return FunctionCall(
        "replace",
        {
            "file_path": file_path,
            "instruction": instruction or f"Replace {old_string!r} with {new_string!r}.",
            "old_string": old_string,
            "new_string": new_string,
        },
    )


def run_shell_command(command: str, description: str = "") -> FunctionCall:
    return FunctionCall(
        "run_shell_command", {"command": command, "description": description or command}
    )


def read_file(file_path: str) -> FunctionCall:
    return FunctionCall("read_file", {"file_path": file_path})


def invoke_agent(prompt: str, agent_name: str = "generalist") -> FunctionCall:
    """Start a subagent; put ``agent_marker(X)`` in ``prompt`` to script it with ``agents={X: …}``."""
    return FunctionCall("invoke_agent", {"agent_name": agent_name, "prompt": prompt})


def complete_task(response: str) -> FunctionCall:
    """The call that ends a subagent (subagents only)."""
    return FunctionCall(SUBAGENT_FINISH_TOOL, {"result": {"response": response}})


def _as_turn(item: ScriptItem) -> Turn | Wait:
    if isinstance(item, str):
        return say(item)
    if isinstance(item, FunctionCall):
        return Turn(calls=(item,))
    return item


# --------------------------------------------------------------------------- records


@dataclass
class RecordedRequest(HttpRequest):
    """One HTTP request as received (``method``, ``path``, ``headers``, ``body``), classified."""

    kind: RequestKind = "other"
    model: str | None = None
    conversation: str | None = None  # MAIN or a marker: the script it was served from

    @property
    def tool_names(self) -> list[str]:
        """Names of the function declarations the request offered the model."""
        return declared_tools(self.json)


@dataclass(frozen=True)
class ToolResult:
    """One function call the model made and the ``functionResponse`` the CLI sent back for it.

    ``response`` is the ``functionResponse.response`` object (``{"output": …}`` on success,
    ``{"error": "Tool execution blocked: R"}`` when a BeforeTool hook refused the call).
    """

    name: str
    args: Mapping[str, Any]
    response: Mapping[str, Any]

    @property
    def error(self) -> str | None:
        value = self.response.get("error")
        return None if value is None else str(value)

    @property
    def output(self) -> str:
        """The response as text: its ``output`` when it has one, else the whole object."""
        value = self.response.get("output")
        return value if isinstance(value, str) else json.dumps(self.response, sort_keys=True)


def declared_tools(body: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            for decl in tool.get("functionDeclarations") or []:
                if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                    names.append(decl["name"])
    return names


def _parts(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, dict):
        return []
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


def text_of(content: Any) -> str:
    """All ``text`` parts of one ``Content`` joined by newlines."""
    return "\n".join(str(p["text"]) for p in _parts(content) if isinstance(p.get("text"), str))


def user_text(body: Mapping[str, Any]) -> str:
    """The text parts of every user turn of a request (a subagent's hold its ``invoke_agent``
    prompt; function responses are left out), joined by newlines."""
    return "\n".join(
        text_of(content)
        for content in body.get("contents") or []
        if isinstance(content, dict) and content.get("role") == "user"
    )


def request_text(body: Mapping[str, Any]) -> str:
    """All text of a request: system instruction, then every turn's text and function responses."""
    parts = [text_of(body.get("systemInstruction"))]
    for content in body.get("contents") or []:
        parts.append(text_of(content))
        for part in _parts(content):
            if isinstance(part.get("functionResponse"), dict):
                parts.append(json.dumps(part["functionResponse"].get("response")))
    return "\n".join(p for p in parts if p)


def exchanges(body: Mapping[str, Any]) -> list[ToolResult]:
    """Every function call in a request's history paired with the response sent back for it,
    in the order the responses appear.

    A response is paired with the call of the same ``id`` (the CLI gives each call one and echoes
    it), else with the oldest unanswered call of the same name.
    """
    results: list[ToolResult] = []
    pending: list[dict[str, Any]] = []
    for content in body.get("contents") or []:
        for part in _parts(content):
            if isinstance(part.get("functionCall"), dict):
                pending.append(part["functionCall"])
            elif isinstance(part.get("functionResponse"), dict):
                answer = part["functionResponse"]
                name = str(answer.get("name"))
                index = next(
                    (
                        i
                        for i, c in enumerate(pending)
                        if answer.get("id") and c.get("id") == answer["id"]
                    ),
                    None,
                )
                if index is None:
                    index = next((i for i, c in enumerate(pending) if c.get("name") == name), None)
                made: dict[str, Any] = (
                    pending.pop(index) if index is not None else {"name": name, "args": {}}
                )
                response = answer.get("response")
                results.append(
                    ToolResult(
                        name=name,
                        args=made.get("args") or {},
                        response=response if isinstance(response, dict) else {"output": response},
                    )
                )
    return results


# --------------------------------------------------------------------------- classification


def _route_of(path: str) -> tuple[str | None, str]:
    """(model, method) of ``/v1beta/models/<model>:<method>?…``; (None, "") for other paths."""
    route = path.split("?", 1)[0]
    prefix = "/v1beta/models/"
    if not route.startswith(prefix) or ":" not in route:
        return None, ""
    model, _, method = route[len(prefix) :].rpartition(":")
    return model, method


def _wants_json(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema a generateContent request asks its answer to follow, if any."""
    config = body.get("generationConfig") or body.get("config") or {}
    if not isinstance(config, dict):
        return None
    for key in ("responseJsonSchema", "responseSchema", "response_json_schema"):
        schema = config.get(key)
        if isinstance(schema, dict):
            return schema
    return {} if config.get("responseMimeType") == "application/json" else None


def classify(method: str, path: str, body: Any) -> RequestKind:
    """Tell which kind of request this is (see the module docstring for the rule)."""
    model, action = _route_of(path)
    doc = body if isinstance(body, dict) else {}
    if method != "POST" or model is None:
        return "other"
    if action == "countTokens":
        return "count_tokens"
    if action == "streamGenerateContent":
        return "subagent" if SUBAGENT_FINISH_TOOL in declared_tools(doc) else "main"
    if action == "generateContent":
        schema = _wants_json(doc)
        if schema is not None and "complexity_score" in json.dumps(schema):
            return "router"
        return "side"
    return "other"


# --------------------------------------------------------------------------- responses


def _response(turn: Turn, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    parts.extend({"functionCall": {"name": c.name, "args": dict(c.args)}} for c in turn.calls)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": turn.prompt_tokens,
            "candidatesTokenCount": turn.output_tokens,
            "totalTokenCount": turn.prompt_tokens + turn.output_tokens,
        },
        "modelVersion": model,
        "responseId": uuid.uuid4().hex[:22],
    }


def _sse(doc: Mapping[str, Any]) -> Iterator[bytes]:
    yield f"data: {json.dumps(doc)}\r\n\r\n".encode()


# --------------------------------------------------------------------------- server


class MockGeminiAPI(MockServer[RecordedRequest, Turn, ScriptItem]):
    """A scripted Gemini API on ``127.0.0.1``. Use as a context manager or ``start``/``stop``;
    ``url`` is the value for ``GOOGLE_GEMINI_BASE_URL`` (no trailing slash).

    ``agents`` maps a marker (``agent_marker("A")``) to the steps of the subagent whose
    ``invoke_agent`` prompt contains it. Invariant: ``requests`` holds every request received, in
    arrival order; only ``main`` requests consume turns of the main script, and only requests of a
    marker's subagent consume that marker's.
    """

    thread_name = "mock-gemini-api"

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        agents: Mapping[str, Iterable[ScriptItem]] | None = None,
        final_text: str = FINAL_TEXT,
        side_text: str = SIDE_TEXT,
    ) -> None:
        self.final_text = final_text
        self.side_text = side_text
        super().__init__(script, agents)

    # script ----------------------------------------------------------------------------
    def _step(self, item: ScriptItem) -> Turn | Wait:
        """A ``str`` is a text-only turn, a ``FunctionCall`` a turn with that one call."""
        return _as_turn(item)

    # recordings ------------------------------------------------------------------------
    def requests_of(self, kind: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == kind]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.requests_of("main")

    def was_notified(self, marker: str) -> bool:
        """Whether the main conversation got the result of the ``invoke_agent`` call whose prompt
        carries ``marker`` (the subagent finished)."""
        return any(
            r.name == "invoke_agent" and marker in str(r.args.get("prompt", ""))
            for r in self.tool_results()
        )

    def tool_results(self, conversation: str = MAIN) -> list[ToolResult]:
        """Every function call of ``conversation`` with the response the CLI sent back for it,
        in order. Each request repeats the whole history, so the one holding most answers is read.
        """
        best: list[ToolResult] = []
        for req in self.requests_in(conversation):
            found = exchanges(req.json)
            if len(found) >= len(best):
                best = found
        return best

    def summary(self) -> str:
        """One line per request (kind, conversation, path, turn count, last text), for failures."""
        lines = []
        for req in self.requests:
            contents = req.json.get("contents") or []
            tail = text_of(contents[-1])[-120:] if contents else ""
            lines.append(
                f"{req.kind:<12} {req.conversation or '-':<14} {req.method} {req.path} "
                f"turns={len(contents)} last={tail!r}"
            )
        return "\n".join(lines)

    # request handling --------------------------------------------------------------------
    def _handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        kind = classify(method, path, body)
        doc = body if isinstance(body, dict) else {}
        model, _ = _route_of(path)
        try:
            conversation, problem = self._route(kind, doc), None
        except ValueError as exc:
            conversation, problem = None, str(exc)
        self._record(RecordedRequest(method, path, headers, body, kind, model, conversation))
        if problem:
            raise ValueError(problem)  # recorded in ``errors``, answered with HTTP 500
        if kind == "count_tokens":
            return json_reply({"totalTokens": max(1, len(json.dumps(doc)) // 4)})
        if kind == "other":
            return json_reply({})
        if kind == "router":
            return json_reply(_response(say(json.dumps(ROUTER_REPLY)), model or "router"))
        if kind == "side":
            schema = _wants_json(doc)
            text = self.side_text if schema is None else json.dumps(schema_example(schema))
            return json_reply(_response(say(text), model or "side"))
        turn = self._next_turn(conversation) if conversation is not None else None
        if turn is None:
            turn = (
                Turn(calls=(complete_task(self.final_text),))
                if kind == "subagent"
                else say(self.final_text)
            )
        return Reply(200, "text/event-stream", _sse(_response(turn, model or "mock")), True)

    def _route(self, kind: RequestKind, body: Mapping[str, Any]) -> str | None:
        """The script a streamed request is served from (``MAIN`` or a marker); ``None`` for the
        other kinds and for an unscripted subagent while no marker is scripted."""
        if kind == "main":
            return MAIN
        if kind != "subagent":
            return None
        return self._routes.claim(user_text(body))

    def _error_document(self, exc: Exception) -> Any:
        return {"error": {"code": 500, "message": repr(exc), "status": "INTERNAL"}}
