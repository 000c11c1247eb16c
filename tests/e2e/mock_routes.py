"""Per-conversation scripts for the mock Messages API: which script a request is served from, each
script's cursor, and steps that wait for a condition before the next turn is served.

A *conversation* is the main one (:data:`MAIN`, the ``-p`` prompt) or one subagent/teammate,
named by the *marker* its Agent prompt carries (``agent_marker("A")`` is ``"[[agent:A]]"``). Each
conversation has its own list of steps and its own cursor; a step is a scripted turn or a
:class:`Wait`. This module knows nothing about HTTP: the mocks (``mock_server.MockServer``) ask
:class:`Routes` which conversation a request belongs to and which turn to serve next.

Invariants:

* Every method of :class:`Routes` is thread-safe (one lock); no lock is held while a
  :class:`Wait` blocks, so other conversations keep being served meanwhile.
* One marker belongs to one agent: the first request routed to a marker binds the subagent's id
  (the ``x-claude-code-agent-id`` header) to it; a second subagent with the same marker is an error,
  not a second reader of the same cursor.
* ``Routes.take`` hands out the leading waits and the next turn together, so a conversation's
  turns are served strictly in order, each at most once; a turn whose wait timed out is put back
  (unserved, it still counts in ``unused``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

MAIN: Final = "main"
DEFAULT_WAIT_TIMEOUT: Final = 20.0
_POLL: Final = 0.02  # seconds between two evaluations of a waiting predicate


def agent_marker(name: str) -> str:
    """The marker to put in an Agent prompt so its requests are served from ``name``'s steps."""
    return f"[[agent:{name}]]"


class ScriptState(Protocol):
    """What a predicate may look at: the mock's record of the requests so far."""

    def requests_in(self, conversation: str) -> Sequence[Any]:
        """Requests received so far in ``conversation`` (``MAIN`` or a marker), in order."""
        ...

    def was_notified(self, marker: str) -> bool:
        """Whether a main request carried the ``<task-notification>`` of ``marker``'s agent."""
        ...


@dataclass(frozen=True)
class Predicate:
    """A named condition over the mock's state (the name appears in timeout errors)."""

    test: Callable[[ScriptState], bool]
    description: str

    def __call__(self, state: ScriptState) -> bool:
        return self.test(state)


def file_exists(path: Path | str) -> Predicate:
    """True once ``path`` exists on disk."""
    target = Path(path)
    return Predicate(lambda _state: target.exists(), f"file_exists({target})")


def requested(conversation: str, n: int = 1) -> Predicate:
    """True once ``conversation`` has sent at least ``n`` requests (the request that is waiting
    counts as well)."""
    return Predicate(
        lambda state: len(state.requests_in(conversation)) >= n,
        f"requested({conversation!r}, {n})",
    )


def turns_done(conversation: str, n: int) -> Predicate:
    """True once the client came back after ``conversation``'s ``n``-th turn: every tool call of
    its first ``n`` turns ran (PreToolUse and PostToolUse hooks included) and the results were
    sent (its request number ``n + 1`` arrived)."""
    return Predicate(
        lambda state: len(state.requests_in(conversation)) >= n + 1,
        f"turns_done({conversation!r}, {n})",
    )


def notified(marker: str) -> Predicate:
    """True once the main conversation was sent the completion notification of ``marker``'s
    agent: the agent stopped and its SubagentStop hooks ran."""
    return Predicate(lambda state: state.was_notified(marker), f"notified({marker!r})")


def all_of(*predicates: Predicate) -> Predicate:
    """True once every one of ``predicates`` is."""
    names = ", ".join(p.description for p in predicates)
    return Predicate(lambda state: all(p(state) for p in predicates), f"all_of({names})")


@dataclass(frozen=True)
class Wait:
    """A step that serves nothing: the next turn of its conversation is held back until
    ``predicate`` holds (checked every 20 ms). After ``timeout`` seconds the request fails with
    HTTP 500 and the mock records the error."""

    predicate: Callable[[ScriptState], bool]
    timeout: float = DEFAULT_WAIT_TIMEOUT
    description: str = ""


def wait_until(
    predicate: Callable[[ScriptState], bool],
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    *,
    description: str | None = None,
) -> Wait:
    """A :class:`Wait` step. ``predicate`` gets the mock (a :class:`ScriptState`); use the
    helpers above (:func:`file_exists`, :func:`turns_done`, :func:`notified`, ...) or a lambda."""
    name = description or getattr(predicate, "description", None) or repr(predicate)
    return Wait(predicate, timeout, name)


class WaitTimeout(RuntimeError):
    """A :class:`Wait` step's predicate did not hold in time."""


@dataclass(frozen=True)
class WaitRecord:
    """A wait that was passed: in which conversation, for what, and how long it blocked."""

    conversation: str
    description: str
    seconds: float


def run_waits(
    conversation: str,
    waits: Iterable[Wait],
    state: ScriptState,
    idle: Callable[[float], object],
) -> list[WaitRecord]:
    """Block until each wait's predicate holds, in order; ``idle(seconds)`` sleeps (it may return
    early when something changed). Raises :class:`WaitTimeout` naming the conversation."""
    records = []
    for wait in waits:
        started = time.monotonic()
        deadline = started + wait.timeout
        while not wait.predicate(state):
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeout(
                    f"{conversation}: wait_until({wait.description}) still false after "
                    f"{wait.timeout:g}s"
                )
            idle(min(left, _POLL))
        records.append(WaitRecord(conversation, wait.description, time.monotonic() - started))
    return records


T = TypeVar("T")


@dataclass
class _Script(Generic[T]):
    steps: list[T | Wait] = field(default_factory=list)
    agent_id: str | None = None


class Routes(Generic[T]):
    """The scripts of one mock server: :data:`MAIN` plus one per marker (``T`` is a turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, _Script[T]] = {MAIN: _Script()}

    def add(self, conversation: str, steps: Iterable[T | Wait]) -> None:
        """Append steps to ``conversation``'s script (a new marker gets a new script)."""
        with self._lock:
            self._scripts.setdefault(conversation, _Script()).steps.extend(steps)

    @property
    def markers(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(name for name in self._scripts if name != MAIN)

    def route(self, first_user_text: str) -> str | None:
        """The marker ``first_user_text`` contains, or ``None``; two markers raise ``ValueError``."""
        found = [m for m in self.markers if m in first_user_text]
        if len(found) > 1:
            raise ValueError(f"first user message contains several markers: {found}")
        return found[0] if found else None

    def claim(
        self, prompt: str, agent_id: str | None = None, *, shown: str | None = None
    ) -> str | None:
        """The marker of the subagent whose first user text is ``prompt``, bound to ``agent_id``
        (see :meth:`bind`); ``None`` when it carries no marker and none is scripted.

        Raises ``ValueError`` when markers are scripted and ``prompt`` carries none (the message
        quotes ``shown``, by default ``prompt``), carries several, or names another agent's.
        """
        marker = self.route(prompt)
        if marker is not None:
            self.bind(marker, agent_id)
            return marker
        if self.markers:
            who = "subagent" if agent_id is None else f"subagent {agent_id}"
            quoted = (prompt if shown is None else shown).strip()[:300]
            raise ValueError(
                f"{who} matches no scripted marker {list(self.markers)}; its prompt: {quoted!r}"
            )
        return None

    def bind(self, marker: str, agent_id: str | None) -> None:
        """Record which subagent ``marker`` belongs to; a different one raises ``ValueError``."""
        if agent_id is None:
            return
        with self._lock:
            script = self._scripts[marker]
            if script.agent_id is None:
                script.agent_id = agent_id
            elif script.agent_id != agent_id:
                raise ValueError(
                    f"{marker} is used by two subagents ({script.agent_id} and {agent_id}): "
                    "give each Agent prompt its own marker"
                )

    def agent_id(self, marker: str) -> str | None:
        """The subagent id bound to ``marker`` (``None`` before its first request)."""
        with self._lock:
            script = self._scripts.get(marker)
            return script.agent_id if script else None

    def take(self, conversation: str) -> tuple[list[Wait], T | None]:
        """Pop the waits in front of ``conversation``'s next turn and that turn (``None`` when the
        script is used up)."""
        with self._lock:
            steps = self._scripts[conversation].steps
            waits: list[Wait] = []
            while steps:
                step = steps.pop(0)
                if isinstance(step, Wait):
                    waits.append(step)
                else:
                    return waits, step
            return waits, None

    def put_back(self, conversation: str, turn: T | None) -> None:
        """Return a taken turn to the front of ``conversation``'s script (its wait timed out)."""
        if turn is not None:
            with self._lock:
                self._scripts[conversation].steps.insert(0, turn)

    def unused(self, conversation: str) -> int:
        """How many turns (waits not counted) of ``conversation`` were not served yet."""
        with self._lock:
            script = self._scripts.get(conversation)
            return sum(not isinstance(s, Wait) for s in script.steps) if script else 0
