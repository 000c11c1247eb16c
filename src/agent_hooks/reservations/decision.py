"""Whether one tool call may change what it targets: the PreToolUse decision.

Given who is writing, the target (a file path, or a Bash command line), the
project and the clock, `edit` and `bash` return a `Refusal` (the reason the
model reads) or None. The adapter only turns the payload into one of these
calls and a refusal into protocol output.

Invariants:

* A target is checked against the reservations of every project it lies in
  (`enforcement.locate*`); each project's index is read at most once per call.
* Only another agent's live exclusive reservation refuses an edit; strict mode
  also refuses one that no reservation of the writer's own covers.
* A Bash command is parsed only when, in the agent's project, another agent
  holds something exclusive or strict mode is on, and only when the prefilter
  says the parser could see a write: an unreserved project pays nothing.
* `AGENT_HOOKS_ENFORCE=off` never hides a refusal: it comes back marked
  `overridden`, for the adapter to log and let through.

Hot path: built-ins and agent_hooks' own modules only; the Bash parser and the
pattern compiler load only when a command must be parsed.
"""

from __future__ import annotations

from agent_hooks import switches
from agent_hooks.reservations import enforcement
from agent_hooks.reservations import index as reservation_index
from agent_hooks.reservations.bash import prefilter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any


class Request:
    """One tool call to decide: who writes, from where, and when."""

    __slots__ = ("cwd", "environ", "indexes", "me", "now", "project", "state_dir")

    def __init__(
        self,
        *,
        me: str | None,
        cwd: str | None,
        project: str | None,
        state_dir: str,
        environ: Mapping[str, str],
        now: float,
    ) -> None:
        self.me = me
        self.cwd = cwd
        self.project = project
        self.state_dir = state_dir
        self.environ = environ
        self.now = now
        self.indexes: dict[str, reservation_index.HotIndex | None] = {}

    def index(self, project: str) -> reservation_index.HotIndex | None:
        """The project's reservation index, read at most once per request."""
        if project not in self.indexes:
            self.indexes[project] = reservation_index.load_hot(self.state_dir, project)
        return self.indexes[project]

    def strict(self, hot: reservation_index.HotIndex | None) -> bool:
        return switches.strict(self.environ, hot is not None and hot.strict)


class Refusal:
    """Why a tool call may not run. `overridden`: AGENT_HOOKS_ENFORCE=off lets it run."""

    __slots__ = ("overridden", "reason")

    def __init__(self, reason: str, overridden: bool) -> None:
        self.reason = reason
        self.overridden = overridden


def _refusal(request: Request, reason: str | None) -> Refusal | None:
    if reason is None:
        return None
    return Refusal(reason, switches.is_off(request.environ, switches.ENFORCE))


def edit(request: Request, target: object) -> Refusal | None:
    """A file tool (Write, Edit, NotebookEdit, MultiEdit) writing `target`."""
    if not isinstance(target, str) or not target:
        return None
    places = enforcement.locate(target, request.cwd, request.project)
    return _refusal(request, _check_places(request, places))


def bash(request: Request, command: object) -> Refusal | None:
    """A Bash command line: refused when a write the parser can see is refused."""
    project = request.project
    if not isinstance(command, str) or project is None:
        return None
    hot = request.index(project)
    contended = hot is not None and hot.others_hold_exclusive(request.me, request.now)
    if not (contended or request.strict(hot)) or not prefilter.might_write(command):
        return None
    from agent_hooks.reservations.bash import writes  # only when someone else holds something

    analysis = writes.analyze(command, request.cwd or project, request.environ.get("HOME"))
    for target in analysis.targets:
        if target.glob:
            places = enforcement.locate_glob(target.path, project)
        else:
            places = enforcement.locate_write(target.path, project)
        reason = _check_places(request, places, bash=True, glob=target.glob)
        if reason is not None:
            return _refusal(request, reason)
    return None


def _check_places(
    request: Request,
    places: list[enforcement.Place],
    *,
    bash: bool = False,
    glob: bool = False,
) -> str | None:
    """Why a target may not be written, given every (project, relative path) it
    has: another agent's exclusive reservation in any of them, or strict mode in
    any of them without a reservation of one's own in one of them. A Bash target
    is a path and everything below it ("" is the whole project) or a glob."""
    me, now = request.me, request.now
    strict_rel = None
    owned = False
    for root, rel in places:
        hot = request.index(root)
        if hot is not None:
            holders = (
                enforcement.blocking_write(hot, _compile_target(rel, glob), me, now)
                if bash
                else enforcement.blocking_edit(hot, rel, me, now)
            )
            if holders:
                return _deny_text(rel, holders, now, bash)
        if rel and not glob:
            owned = owned or enforcement.owns(hot, rel, me, now)
            if strict_rel is None and request.strict(hot):
                strict_rel = rel
    if strict_rel is not None and not owned:
        return enforcement.strict_message(strict_rel)
    return None


def _deny_text(rel: str, holders: list[Any], now: float, bash: bool) -> str:
    if not bash:
        return enforcement.deny_message(rel, holders, now)
    shown = rel or "the whole project"
    return enforcement.deny_message(shown, holders, now).replace(
        "Do not edit it now.", f"This Bash command would write {shown}; do not run it now.", 1
    )


def _compile_target(rel: str, glob: bool) -> list[Any]:
    """A Bash target as a pattern: the path and everything below it ("" is the
    whole project); a shell glob keeps its wildcards (one the pattern syntax
    refuses is taken literally)."""
    from agent_hooks.reservations import pattern

    if not rel:
        return pattern.compile("**")
    if glob:
        try:
            return pattern.compile(rel)
        except ValueError:
            pass
    return pattern.literal(rel)
