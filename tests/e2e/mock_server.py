"""The loopback HTTP server and the bookkeeping every model-API mock shares.

``mock_api.MockAnthropicAPI`` (Claude Code), ``mock_responses_api.MockResponsesAPI`` (Codex) and
``mock_gemini_api.MockGeminiAPI`` (Gemini CLI) subclass :class:`MockServer`. A subclass says how
one request is classified, routed and answered (``_handle``); this module serves it, records it,
hands out the scripted turns (through a :class:`~.mock_routes.Routes`) and runs their
``wait_until`` steps. Stdlib only.

Invariants:

* The server listens on ``127.0.0.1:0`` (a free port) and is served from a daemon thread, one
  daemon thread per connection. ``stop()`` shuts it down and closes every connection still open
  (keep-alive ones too), so a test's server never outlives its test; it may be called twice.
* Every request is recorded, in arrival order, under one lock, before its turn is taken; readers
  get snapshots. A condition variable is notified at each request: ``wait_until`` steps and
  ``wait_for`` block on it, never on a fixed sleep.
* A conversation's turns are served strictly in order, each at most once. The ``wait_until`` steps
  in front of a turn run with no lock held (other requests keep being recorded and served); a wait
  that times out puts the turn back, is recorded in ``errors`` and fails its request with HTTP 500.
* An exception raised while answering is recorded in ``errors`` and answered with HTTP 500.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, cast

from .mock_routes import MAIN, Routes, Wait, WaitRecord, WaitTimeout, run_waits


@dataclass(frozen=True)
class Reply:
    """One answer. ``chunks`` are sent with chunked transfer-encoding when ``streamed``, else
    joined under a ``content-length``; ``close`` ends the connection after the answer."""

    status: int
    content_type: str
    chunks: Iterable[bytes]
    streamed: bool = False
    close: bool = False


def json_reply(doc: Any, status: int = 200) -> Reply:
    """``doc`` as a JSON answer."""
    return Reply(status, "application/json", [json.dumps(doc).encode()])


@dataclass
class HttpRequest:
    """One HTTP request as received; ``body`` is parsed JSON when possible."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def json(self) -> dict[str, Any]:
        """The body as a dict (empty when it was not a JSON object)."""
        return self.body if isinstance(self.body, dict) else {}


class Recorded(Protocol):
    """What :class:`MockServer` needs of a recorded request: the script it was served from."""

    conversation: str | None  # MAIN, a marker, or None (not served from a script)


RequestT = TypeVar("RequestT", bound=Recorded)
TurnT = TypeVar("TurnT")
ItemT = TypeVar("ItemT")


class MockServer(Generic[RequestT, TurnT, ItemT]):
    """A scripted model API on ``127.0.0.1``: ``RequestT`` is the mock's record of a request,
    ``TurnT`` a scripted turn, ``ItemT`` what a script may hold (``_step`` makes it a turn or a
    wait). Use as a context manager or ``start``/``stop``.

    ``script`` holds the steps of the main conversation (``MAIN``), ``agents`` maps a marker
    (``agent_marker("A")``) to the steps of the subagent whose prompt carries it.
    """

    thread_name: ClassVar[str] = "mock-api"
    serves_connect: ClassVar[bool] = False  # CONNECT goes to ``_handle`` (else: 501)

    def __init__(
        self,
        script: Iterable[ItemT] = (),
        agents: Mapping[str, Iterable[ItemT]] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified on each request received
        self._routes: Routes[TurnT] = Routes()
        self._requests: list[RequestT] = []
        self._errors: list[str] = []
        self._waits: list[WaitRecord] = []
        self._connections: set[socket.socket] = set()
        handler = _ProxyHandler if self.serves_connect else _Handler
        self._server = _LoopbackServer(self, handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True
        )
        self.add(*script)
        for marker, steps in (agents or {}).items():
            self.add(*steps, conversation=marker)

    # lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The server's base URL (``http://127.0.0.1:PORT``, no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=10)
        self._server.server_close()
        with self._lock:
            open_connections = list(self._connections)
            self._connections.clear()
        for conn in open_connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # script ----------------------------------------------------------------------------
    def add(self, *steps: ItemT, conversation: str = MAIN) -> None:
        """Append steps to the main script or to a marker's (see ``_step`` for what each is)."""
        self._routes.add(conversation, (self._step(s) for s in steps))

    def _step(self, item: ItemT) -> TurnT | Wait:
        """The turn (or wait) a script item stands for."""
        raise NotImplementedError

    @property
    def unused_turns(self) -> int:
        """How many turns of the main script have not been served yet (waits not counted)."""
        return self._routes.unused(MAIN)

    def unused_agent_turns(self) -> dict[str, int]:
        """Marker -> how many of its turns have not been served yet (waits not counted)."""
        return {m: self._routes.unused(m) for m in self._routes.markers}

    # recordings ------------------------------------------------------------------------
    @property
    def requests(self) -> list[RequestT]:
        """Snapshot of every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_in(self, conversation: str) -> list[RequestT]:
        """Snapshot of the requests served from ``conversation``'s script (``MAIN`` or a marker)."""
        return [r for r in self.requests if r.conversation == conversation]

    def was_notified(self, marker: str) -> bool:
        """Whether the main conversation was told that ``marker``'s agent finished (never, unless
        the mock knows how its client tells)."""
        return False

    @property
    def waits(self) -> list[WaitRecord]:
        """Every ``wait_until`` step passed so far, with how long it blocked, in order passed."""
        with self._lock:
            return list(self._waits)

    @property
    def errors(self) -> list[str]:
        """Exceptions raised while answering (each answered with HTTP 500)."""
        with self._lock:
            return list(self._errors)

    def wait_for(self, predicate: Callable[[Self], bool], timeout: float = 30.0) -> bool:
        """Block until ``predicate(self)`` holds (re-checked at every request); False on timeout."""
        deadline = time.monotonic() + timeout
        while not predicate(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with self._changed:
                self._changed.wait(min(remaining, 0.5))
        return True

    # request handling (the subclass answers; the handler thread calls these) -----------
    def _handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Reply:
        """The answer to one request; ``body`` is parsed JSON when possible. Record it first
        (``_record``); an exception is recorded in ``errors`` and answered with HTTP 500."""
        raise NotImplementedError

    def _error_document(self, exc: Exception) -> Any:
        """The body of the HTTP 500 answering ``exc``, in the API's error format."""
        return {"error": {"message": repr(exc)}}

    def _reply_headers(self) -> list[tuple[str, str]]:
        """Headers sent with every answer, besides ``content-type`` and the framing ones."""
        return []

    def _record(self, request: RequestT) -> None:
        """Append ``request`` to ``requests`` and wake whoever waits on a condition."""
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def _next_turn(self, conversation: str) -> TurnT | None:
        """The conversation's next turn after its ``wait_until`` steps hold (no lock held);
        ``None`` when its script is used up. A wait that times out puts the turn back and
        raises :class:`~.mock_routes.WaitTimeout`."""
        waits, turn = self._routes.take(conversation)
        if waits:
            try:
                passed = run_waits(conversation, waits, self, self._idle)
            except WaitTimeout:
                self._routes.put_back(conversation, turn)
                raise  # recorded in ``errors``, answered with HTTP 500
            with self._lock:
                self._waits.extend(passed)
        return turn

    def _idle(self, seconds: float) -> None:
        with self._changed:
            self._changed.wait(seconds)

    def _record_error(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    def _track(self, conn: socket.socket, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


class _LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, mock: MockServer[Any, Any, Any], handler: type[BaseHTTPRequestHandler]
    ) -> None:
        self.mock = mock
        super().__init__(("127.0.0.1", 0), handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def _mock(self) -> MockServer[Any, Any, Any]:
        return cast(_LoopbackServer, self.server).mock

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def setup(self) -> None:
        super().setup()
        self._mock._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self._mock._track(self.connection, False)

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        mock = self._mock
        try:
            reply = mock._handle(self.command, self.path, dict(self.headers.items()), body)
        except Exception as exc:  # surfaced through mock.errors
            mock._record_error(f"{self.command} {self.path}: {exc!r}")
            reply = json_reply(mock._error_document(exc), 500)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for name, value in self._mock._reply_headers():
            self.send_header(name, value)
        if reply.streamed:
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            payload = b"".join(reply.chunks)
            self.send_header("content-length", str(len(payload)))
            if reply.close or self.command == "CONNECT":
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve


class _ProxyHandler(_Handler):
    """Also answers ``CONNECT`` (a mock that stands in as the run's HTTPS proxy)."""

    do_CONNECT = _Handler._serve
