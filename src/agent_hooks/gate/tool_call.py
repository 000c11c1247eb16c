"""One tool call to decide, and the verdict: what the gate's decisions share
(`edit_gate` for file edits, `shell_gate` for shell commands).

A `ToolCall` carries who writes, from where and when. Every repository a target
lies in is worked out once per call (`repo`): its ledger directory, its
reservation index (read at most once, adopting an earlier release's per-HOME
ledger on first use), its lease minutes (`lease_minutes.effective`), strict mode
and whether a lease in another worktree refuses. A `Place` is one target inside
one such repository; the decisions pass places down, never asking twice.

A `Verdict` carries a `Refusal` (the reason the model reads), context for an
allowed call, and problems to log. `AGENT_HOOKS_ENFORCE=off` never hides a
refusal: it comes back marked `overridden`. Built-ins only.
"""

from __future__ import annotations

from agent_hooks import repository, switches
from agent_hooks.leases import lease_minutes
from agent_hooks.ledger import ledger_location
from agent_hooks.reservations import reservation_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.gate.places import Pair
    from agent_hooks.reservations.index_records import HotIndex
    from agent_hooks.writers import Writer


class Repo:
    """One repository (work tree) as a tool call sees it."""

    __slots__ = ("deny_elsewhere", "index", "ledger", "minutes", "root", "strict", "worktree")

    def __init__(
        self, root: str, ledger: str, index: HotIndex | None, environ: Mapping[str, str]
    ) -> None:
        self.root = root  # the work tree, as this process reaches it
        self.worktree = repository.worktree_id(root)  # which work tree, whatever the path
        self.ledger = ledger  # its repository's ledger directory
        self.index = index  # its reservations (None: no reservations file)
        settings = index.settings if index is not None else None
        self.minutes = lease_minutes.effective(environ, settings)  # 0: leases off
        self.strict = switches.strict(environ, index is not None and index.strict)
        self.deny_elsewhere = index is not None and index.deny_elsewhere


class Place:
    """A target inside one repository: `rel` is relative to `repo.root` ("" is the
    whole work tree)."""

    __slots__ = ("rel", "repo")

    def __init__(self, repo: Repo, rel: str) -> None:
        self.repo = repo
        self.rel = rel


class ToolCall:
    """One tool call to decide: who writes, from where, and when."""

    __slots__ = (
        "_repos",
        "cwd",
        "environ",
        "holder_pid",
        "now",
        "project",
        "shell_command",
        "state_dir",
        "tool_use_id",
        "writer",
    )

    def __init__(
        self,
        *,
        writer: Writer,
        cwd: str | None,
        project: str | None,
        state_dir: str,
        environ: Mapping[str, str],
        now: float,
        tool_use_id: str | None = None,
        holder_pid: int | None = None,
        shell_command: str = "Bash command",  # Claude Code's (the default client's) words
    ) -> None:
        self.writer = writer
        self.cwd = cwd
        self.project = project
        self.state_dir = state_dir
        self.environ = environ
        self.now = now
        self.tool_use_id = tool_use_id
        self.holder_pid = holder_pid  # the client process the writer's claims live with
        self.shell_command = shell_command  # the client's words for it (`SHELL_COMMAND`)
        self._repos: dict[str, Repo] = {}

    def repo(self, root: str) -> Repo:
        """The repository of the work tree `root`, worked out once per call."""
        found = self._repos.get(root)
        if found is None:
            directory = ledger_location.directory(self.state_dir, root)
            index = reservation_index.load_hot(directory)
            if ledger_location.has_legacy(self.state_dir, root):  # one stat: gone once adopted
                index = _adopt(self.state_dir, root, self.now, directory) or index
            found = self._repos[root] = Repo(root, directory, index, self.environ)
        return found

    def places(self, pairs: list[Pair]) -> list[Place]:
        return [Place(self.repo(root), rel) for root, rel in pairs]


def _adopt(state_dir: str, project: str, now: float, directory: str) -> HotIndex | None:
    from agent_hooks.reservations import reservation_store

    try:
        reservation_store.adopt(state_dir, project, now)
    except Exception:  # the check goes on without the old ledger; the next write adopts it
        return None
    return reservation_index.load_hot(directory)


class Refusal:
    """Why a tool call may not run. `overridden`: AGENT_HOOKS_ENFORCE=off lets it run."""

    __slots__ = ("overridden", "reason", "waiting")

    def __init__(
        self, reason: str, overridden: bool, waiting: dict[str, Any] | None = None
    ) -> None:
        self.reason = reason
        self.overridden = overridden
        self.waiting = waiting  # what to tell the writer about once the target is free


class Verdict:
    __slots__ = ("context", "problems", "refusal")

    def __init__(self) -> None:
        self.refusal: Refusal | None = None
        self.context: list[str] = []
        self.problems: list[str] = []


def refuse(
    call: ToolCall, verdict: Verdict, reason: str, waiting: dict[str, Any] | None = None
) -> Verdict:
    verdict.refusal = Refusal(reason, switches.is_off(call.environ, switches.ENFORCE), waiting)
    return verdict
