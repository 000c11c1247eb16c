"""One tool call to decide, and the verdict: what the PreToolUse decisions
(`decision` for file edits, `bash_decision` for Bash) share.

A `Request` carries who writes, from where and when, and reads each ledger's
index at most once (adopting an earlier release's per-HOME ledger on first
use). A `Verdict` carries a `Refusal` (the reason the model reads), context
for an allowed call, and problems to log. `AGENT_HOOKS_ENFORCE=off` never
hides a refusal: it comes back marked `overridden`. Built-ins only.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import switches
from agent_hooks.ledger import ledger_location
from agent_hooks.reservations import reservation_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.writers import Writer

LEASE_MINUTES_ENV = "AGENT_HOOKS_LEASE_MINUTES"


class Request:
    """One tool call to decide: who writes, from where, and when."""

    __slots__ = (
        "_dirs",
        "cwd",
        "environ",
        "indexes",
        "now",
        "project",
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
    ) -> None:
        self.writer = writer
        self.cwd = cwd
        self.project = project
        self.state_dir = state_dir
        self.environ = environ
        self.now = now
        self.tool_use_id = tool_use_id
        self.indexes: dict[str, reservation_index.HotIndex | None] = {}
        self._dirs: dict[str, str] = {}

    def ledger(self, project: str) -> str:
        if project not in self._dirs:
            self._dirs[project] = ledger_location.directory(self.state_dir, project)
        return self._dirs[project]

    def index(self, project: str) -> reservation_index.HotIndex | None:
        """The project's reservation index, read at most once per request; an
        earlier release's ledger is adopted on first use."""
        directory = self.ledger(project)
        if directory not in self.indexes:
            hot = reservation_index.load_hot(directory)
            if ledger_location.has_legacy(self.state_dir, project):  # one stat: gone once adopted
                hot = _adopt(self.state_dir, project, self.now, directory) or hot
            self.indexes[directory] = hot
        return self.indexes[directory]

    def strict(self, hot: reservation_index.HotIndex | None) -> bool:
        return switches.strict(self.environ, hot is not None and hot.strict)

    def others_heard_from(self, project: str, minutes: int) -> bool:
        """Could another writer hold a lease in `project`'s ledger? One directory
        listing and a `stat` per other writer's card (the gate before parsing a
        Bash command): a card heard from within our lease minutes, or whose latest
        lease (its atime) runs longer, says yes."""
        import posix

        from agent_hooks.leases import lease

        directory = fs.join(self.ledger(project), "writers")
        try:
            names = posix.listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return False
        mine = lease.file_name(self.writer.key)
        window = minutes * 60 + lease.RESOLUTION
        for name in names:
            if name == mine or name.startswith("."):
                continue
            try:
                st = posix.stat(fs.join(directory, name), follow_symlinks=False)
                if st.st_mtime + window > self.now or st.st_atime + lease.RESOLUTION > self.now:
                    return True
            except OSError:
                continue
        return False

    def lease_minutes(self, hot: reservation_index.HotIndex | None) -> int:
        raw = self.environ.get(LEASE_MINUTES_ENV, "")
        if raw.isascii() and raw.isdigit() and len(raw) < 5:
            return int(raw)
        settings = hot.settings if hot is not None else reservation_index.SETTINGS_DEFAULTS
        minutes = settings.get("lease_minutes")
        return minutes if isinstance(minutes, int) else reservation_index.DEFAULT_LEASE_MINUTES


def _adopt(
    state_dir: str, project: str, now: float, directory: str
) -> reservation_index.HotIndex | None:
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
    request: Request, verdict: Verdict, reason: str, waiting: dict[str, Any] | None = None
) -> Verdict:
    verdict.refusal = Refusal(reason, switches.is_off(request.environ, switches.ENFORCE), waiting)
    return verdict
