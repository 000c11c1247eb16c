"""What every hook adapter shares: read the payload, call the adapter, write its
answer in the client's own form, and never let a failure reach the client.

Adapters are client-neutral: each gets a `HookContext` (the payload, the
environment, the clock, and `client`, the module of `agent_hooks.clients` that
speaks this client's protocol) and returns an `Answer` or None; `run` has the
client render it.

Invariants (docs/adr/0004-fail-open.md):

* `run` always returns 0. Bad stdin (empty, not JSON, not an object, larger than
  `MAX_STDIN`), a bad `AGENT_NAME`, a lock timeout or any exception is logged to
  `<state dir>/agent-hooks.log` and the tool call proceeds. Only an adapter's
  deliberate deny blocks anything.
* Nothing is printed unless the adapter answers, and then exactly one JSON
  object, the shape the client expects; context is cut to the client's limit at
  a line boundary.
"""

from __future__ import annotations

import sys
import time

from agent_hooks import identity, jsonio, repository
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

    from agent_hooks.clients.client import Client
    from agent_hooks.tool_use import ToolUse

MAX_STDIN = 64 << 20
CONTEXT_LIMIT = 10_000  # the least any client allows (Claude Code caps additionalContext there)


class Answer:
    """What an adapter answers, whatever the client: a refusal the model reads
    (`deny`), text added to the model's context (`context`), a line shown to the
    person (`message`)."""

    __slots__ = ("context", "deny", "message")

    def __init__(
        self, *, deny: str | None = None, context: str | None = None, message: str | None = None
    ) -> None:
        self.deny = deny
        self.context = context
        self.message = message


class HookInputError(ValueError):
    """The payload on stdin is not something a hook can act on."""


class HookContext:
    """One hook invocation: its event and tool call as the client made them out
    (`hook`, `tool_use`: adapters and domain code read these, never `payload`'s
    keys), environment and clock."""

    __slots__ = (
        "_agent",
        "_tool",
        "client",
        "environ",
        "event",
        "hook",
        "now",
        "payload",
        "state_dir",
    )

    def __init__(
        self,
        client: Client,
        event: str,
        payload: dict[str, Any],
        environ: Mapping[str, str],
        now: float,
    ) -> None:
        self.client = client  # agent_hooks.clients.<name>: this client's protocol
        self.event = event  # as the client names it
        self.payload = payload  # the client's own: read by its module only
        self.environ = environ
        self.now = now
        self.state_dir = identity.state_dir(environ)
        self.hook = client.hook_event(event, payload, environ)
        self._agent: identity.Agent | None = None
        self._tool: list[ToolUse | None] = []

    @property
    def agent(self) -> identity.Agent:
        """The agent this hook runs for; raises IdentityError for a bad AGENT_NAME."""
        if self._agent is None:
            self._agent = identity.resolve_agent(self.environ)
        return self._agent

    @property
    def cwd(self) -> str | None:
        return self.hook.cwd

    def tool_use(self) -> ToolUse | None:
        """The tool call, as the client makes it out (once), or None for no tool."""
        if not self._tool:
            self._tool.append(self.client.tool_use(self.event, self.payload))
        return self._tool[0]

    def project_root(self) -> str | None:
        return repository.project_root(self.environ, self.cwd, self.client.PROJECT_VARIABLES)

    def log(self, message: str) -> None:
        from agent_hooks.log import log  # only when there is something to log

        label = self._agent.label if self._agent is not None else self.environ.get("AGENT_NAME", "")
        log(self.state_dir, self.event, repr(label)[1:-1] or "-", message, self.now)


def read_payload(stream: Any) -> dict[str, Any]:
    """The JSON object on `stream`; HookInputError with a one-line reason otherwise.
    Read in pieces of 64 KiB: asking for MAX_STDIN at once would map that much memory
    for a payload of a few hundred bytes, on every tool call."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_STDIN and (chunk := stream.read1(1 << 16)):
        chunks.append(chunk)
        size += len(chunk)
    raw = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if size > MAX_STDIN:
        raise HookInputError(f"stdin is larger than {MAX_STDIN >> 20} MiB; ignored")
    try:
        payload = jsonio.loads(raw)
    except ValueError as exc:
        raise HookInputError(f"stdin: {exc}") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"stdin is a JSON {type(payload).__name__}, not an object")
    return payload


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" at {fs.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def run(client: Client, event: str, handle: Callable[[HookContext], Answer | None]) -> int:
    """Run one hook adapter on stdin; write its answer as `client` reads it; return
    the exit code (always 0)."""
    environ = fs.environ()
    now = time.time()
    ctx: HookContext | None = None
    try:
        payload = read_payload(sys.stdin.buffer)
        ctx = HookContext(client, event, payload, environ, now)
        answer = handle(ctx)
        output = None if answer is None else client.render(event, trimmed(answer, client))
        if output is not None:  # UTF-8 whatever the locale: the client reads UTF-8 JSON
            sys.stdout.buffer.write(jsonio.encode(output))
            sys.stdout.buffer.flush()
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}{_where(exc)}; allowed (fail open)"
        if ctx is None:
            ctx = HookContext(client, event, {}, environ, now)
        ctx.log(message)
    return 0


def trimmed(answer: Answer, client: Client) -> Answer:
    """The answer with its context cut to the client's limit at a line boundary."""
    text = answer.context
    limit: int = getattr(client, "CONTEXT_LIMIT", CONTEXT_LIMIT)
    if text is not None and len(text) > limit:
        cut = text.rfind("\n", 0, limit - 40)
        answer.context = text[: cut if cut > 0 else limit - 40] + "\n[agent-hooks: context trimmed]"
    return answer
