"""The hook side of the remote ledger: what the last sync saw of other machines,
and starting the next sync without waiting for it (docs/adr/0016).

Files in the ledger directory, all written by `ledger_sync` (atomically):
`remote.view`, a `marshal` snapshot for hooks (the leases other machines hold,
grouped by path and each path marshalled on its own, the hosts' heartbeats,
double claims, when the last sync ran and how it went); `remote.json`, the
same for people (`agent-hooks ledger status`); `remote.stamp`, whose mtime is
when the last sync was started.

Invariants:

* Hot-path clean: built-in modules only (`posix`, `sys`, `marshal`), no `os`,
  no `subprocess`, no `json`; nothing here touches the network or waits for a
  process. A hook pays one `stat` (`due`) and one small read (`load`).
* A view that cannot be used (missing, truncated, another Python's marshal
  format, a newer layout) is no view: `load` returns None, never raises.
* Another machine's lease names its worktree `<host>:<worktree>`, so
  `lease.judge` can never take it for a lease in the reader's own worktree: it is
  told like a lease held in another worktree (ADR-0015).
* What hooks call is a no-op unless the repository's index says the ledger is
  shared (`shared`): PreToolUse `on_tool_call` (start the sync when due; the
  stale note only when the syncs are not keeping up: `behind`), the gate
  `elsewhere` / `lease_under` / `any_lease` and `holds` (another machine's
  holder counts while that machine was heard from), Stop `turn_ended`. The view
  is read once per version of its file in a process (`view_of`).
* `start_sync` touches the stamp first, so the hooks of one burst start one sync
  (the sync's own non-blocking lock turns away a second one that slips through),
  and starts it detached: a new session, stdio on /dev/null, never waited for.
  It runs through `/bin/sh`, which waits 50 ms and then runs the sync under
  `nice -n 10`: on two busy cores an interpreter started at once competed with
  the hook that started it for the CPU and made that hook 0.25-0.37x of a bare
  interpreter slower; deferred, 0.11-0.12x (`bench/ledger_remote.py`).
"""

from __future__ import annotations

import marshal
import posix
import sys

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VIEW = "remote.view"
REPORT = "remote.json"
STAMP = "remote.stamp"
VIEW_VERSION = 1
INTERVAL = 15  # seconds between syncs while hooks run (ADR-0016)
STALE_INTERVALS = 2  # a view older than this many intervals is said to be stale
SHELL = "/bin/sh"
# Run by /bin/sh with the sync's argv: wait until the hook that started it has ended,
# then run it at a lower priority (nice exits 127 where there is none: run it as is).
DEFER = 'sleep 0.05; command -v nice >/dev/null 2>&1 && exec nice -n 10 "$0" "$@"; exec "$0" "$@"'
DEFAULT_LEASE_MINUTES = 10

_CODE = (
    "import sys;sys.path.insert(0,sys.argv[1]);"
    "from agent_hooks.ledger import ledger_sync;sys.exit(ledger_sync.main(sys.argv[2:]))"
)


class View:
    """One sync's picture of the other machines. `header` holds `remote`, `host`
    (this machine), `interval`, `attempted_at`, `synced_at` (the last sync that
    reached the remote; None if none did), `ok`, `error`, `hosts` (name ->
    (heartbeat, lease minutes)) and `double_claims`; `paths` maps a path to its
    marshalled list of other machines' leases."""

    __slots__ = ("header", "paths")

    def __init__(self, header: dict[str, Any], paths: dict[str, bytes]) -> None:
        self.header = header
        self.paths = paths

    @property
    def synced_at(self) -> float | None:
        value = self.header.get("synced_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def interval(self) -> int:
        value = self.header.get("interval")
        return value if isinstance(value, int) and value > 0 else INTERVAL

    def leases_on(self, rel: str) -> list[dict[str, Any]]:
        """Other machines' leases on `rel` that counted at the last sync (a caller
        still checks `expires` against its own clock: `lease.counts`)."""
        data = self.paths.get(rel)
        if data is None:
            return []
        try:
            found = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return []
        return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []

    def counting(self, rel: str, now: float) -> list[dict[str, Any]]:
        """Other machines' leases on `rel` that count now: not expired, and their
        host heard from within its lease minutes. What PreToolUse adds to the
        leases held in other worktrees (`lease.Judgement.elsewhere`)."""
        found = []
        for item in self.leases_on(rel):
            expires, machine = item.get("expires"), item.get("machine")
            if isinstance(expires, bool) or not isinstance(expires, int | float) or expires <= now:
                continue
            if isinstance(machine, str) and self.heard_from(machine, now):
                found.append(item)
        return found

    def stale(self, now: float) -> bool:
        """Is what this machine knows of the others older than two intervals?"""
        synced = self.synced_at
        return synced is None or now - synced > STALE_INTERVALS * self.interval

    def heard_from(self, host: str, now: float) -> bool:
        """Was `host` heard from (its heartbeat) within its lease minutes? A host
        silent for longer holds nothing: neither its leases nor its reservations
        whose holder process only it can judge."""
        hosts = self.header.get("hosts")
        found = hosts.get(host) if isinstance(hosts, dict) else None
        if not isinstance(found, tuple | list) or len(found) < 2:
            return False
        heartbeat, minutes = found[0], found[1]
        if not isinstance(heartbeat, int | float):
            return False
        window = (
            minutes if isinstance(minutes, int) and minutes > 0 else DEFAULT_LEASE_MINUTES
        ) * 60
        return heartbeat + window > now

    def double_claims(self) -> list[dict[str, Any]]:
        found = self.header.get("double_claims")
        return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def load(ledger: str) -> View | None:
    """The last sync's view, or None (no remote, or no usable view yet)."""
    try:
        data = fs.read_file(fs.join(ledger, VIEW))
        if data is None:
            return None
        version, pyver, header, paths = marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if version != VIEW_VERSION or pyver != tuple(sys.version_info[:2]):
        return None
    if not isinstance(header, dict) or not isinstance(paths, dict):
        return None
    return View(header, paths)


def encode(header: dict[str, Any], leases: dict[str, list[dict[str, Any]]]) -> bytes:
    """The bytes of `remote.view` (written by the sync, read by `load`)."""
    paths = {rel: marshal.dumps(items) for rel, items in leases.items()}
    return marshal.dumps((VIEW_VERSION, tuple(sys.version_info[:2]), header, paths))


def stale_note(view: View | None, now: float) -> str | None:
    """PreToolUse context when what this machine knows of the others is old."""
    if view is None or not view.stale(now):
        return None
    synced = view.synced_at
    age = "never" if synced is None else f"{int((now - synced) // 60)} min ago"
    error = view.header.get("error")
    why = f" ({error})" if isinstance(error, str) and error else ""
    refused = (
        " Reservation changes are refused until its remote answers."
        if view.header.get("ok") is False
        else ""
    )
    return (
        f"agent-hooks: note: this machine last synced the shared ledger {age}{why}; "
        "leases and reservations of agents on other machines may be missing from what "
        f"you are told.{refused}"
    )


def behind(view: View | None, started: float | None, now: float) -> bool:
    """Should a hook say the view is stale? When it is older than two intervals
    and the syncs meant to refresh it are not doing so: the last one failed, or
    one started after it has run (or died) for longer than an interval. A view
    that is old only because no hook ran for a while is not: the hook that finds
    the sync due starts one, which is done well within an interval."""
    if view is None or not view.stale(now):
        return False
    if view.header.get("ok") is False:
        return True
    synced = view.synced_at
    return started is not None and started > (synced or 0.0) + 1 and now - started > view.interval


# --- what hooks ask (each a no-op unless the ledger is shared: `shared`) ----------------

_VIEWS: dict[str, tuple[tuple[int, int, int], View | None]] = {}


def shared(index: Any) -> bool:
    """Is the ledger of this reservation index (`index_records.HotIndex`, or None)
    shared with other machines (its `remote` setting)?"""
    return index is not None and bool(index.shared)


def view_of(ledger: str) -> View | None:
    """`load`, read once per version of the file in a process (one `stat` after)."""
    try:
        st = posix.stat(fs.join(ledger, VIEW), follow_symlinks=False)
    except (OSError, ValueError):
        return None
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _VIEWS.get(ledger)
    if cached is not None and cached[0] == key:
        return cached[1]
    view = load(ledger)
    _VIEWS[ledger] = (key, view)
    return view


def holds(ledger: str, machine: str, now: float) -> bool:
    """Does a reservation whose holder process runs on `machine` (another host)
    still count here? While that host was heard from at the last sync; before any
    sync, until it expires."""
    view = view_of(ledger)
    return True if view is None else view.heard_from(machine, now)


def elsewhere(ledger: str, index: Any, rel: str, now: float) -> list[dict[str, Any]]:
    """Other machines' leases on `rel` that count now, for the gate to tell like
    leases held in other worktrees ([] unless the ledger is shared)."""
    if not shared(index):
        return []
    view = view_of(ledger)
    return [] if view is None else view.counting(rel, now)


def lease_under(
    ledger: str, index: Any, compiled: list[Any], now: float
) -> tuple[str, dict[str, Any]] | None:
    """(path, lease) for the first path `compiled` (a shell target: `pattern`)
    covers that another machine leases, counting now; None if none."""
    if not shared(index):
        return None
    view = view_of(ledger)
    if view is None:
        return None
    from agent_hooks.reservations import pattern

    for rel in sorted(view.paths):
        if pattern.matches(compiled, rel):
            found = view.counting(rel, now)
            if found:
                return rel, found[0]
    return None


def any_lease(ledger: str, index: Any, now: float) -> bool:
    """Does another machine lease anything here, counting now?"""
    if not shared(index):
        return False
    view = view_of(ledger)
    return view is not None and any(view.counting(rel, now) for rel in view.paths)


def started_at(ledger: str) -> float | None:
    """When the last sync was started (the stamp's mtime), or None."""
    try:
        return posix.stat(fs.join(ledger, STAMP), follow_symlinks=False).st_mtime
    except (OSError, ValueError):
        return None


def on_tool_call(ledger: str, index: Any, now: float) -> str | None:
    """What PreToolUse does for a shared ledger: start the detached sync when due,
    and return the note to add to the context when the view is behind (`behind`),
    else None. One `stat` of the stamp and the view; nothing waits."""
    if not shared(index):
        return None
    started = started_at(ledger)
    if started is None or started + INTERVAL <= now or started > now + INTERVAL:
        start_sync(ledger, now)
    view = view_of(ledger)
    return stale_note(view, now) if behind(view, started, now) else None


def due(ledger: str, now: float, interval: float = INTERVAL) -> bool:
    """Should a hook start a sync? Yes when none was started within `interval`."""
    try:
        started = posix.stat(fs.join(ledger, STAMP), follow_symlinks=False).st_mtime
    except (OSError, ValueError):
        return True
    return started + interval <= now or started > now + interval  # a clock set back: start


def touch_stamp(ledger: str, now: float) -> None:
    path = fs.join(ledger, STAMP)
    fd = posix.open(
        path, posix.O_WRONLY | posix.O_CREAT | posix.O_NOFOLLOW | posix.O_CLOEXEC, 0o600
    )
    posix.close(fd)
    posix.utime(path, (now, now), follow_symlinks=False)


def start_sync(ledger: str, now: float, environ: Any = None) -> int | None:
    """Start `ledger_sync` for `ledger` detached (new session, stdio on /dev/null)
    and return its pid without waiting; None when it could not be started. It runs
    with `environ` (default: this process's): HOME, AGENT_HOOKS_HOST, git's."""
    exe = sys.executable
    package = sys.modules.get("agent_hooks")
    source = getattr(package, "__file__", None)
    if not exe or not isinstance(source, str):
        return None
    base = source.rpartition("/")[0].rpartition("/")[0]
    null = "/dev/null"
    actions = [
        (posix.POSIX_SPAWN_OPEN, 0, null, posix.O_RDONLY, 0),
        (posix.POSIX_SPAWN_OPEN, 1, null, posix.O_WRONLY, 0),
        (posix.POSIX_SPAWN_OPEN, 2, null, posix.O_WRONLY, 0),
    ]
    argv = [exe, "-I", "-S", "-c", _CODE, base, ledger]
    try:
        touch_stamp(ledger, now)
    except OSError:
        return None
    for program, args in ((SHELL, ["sh", "-c", DEFER, *argv]), (exe, argv)):
        try:
            return posix.posix_spawn(
                program,
                args,
                posix.environ if environ is None else environ,
                file_actions=actions,
                setsid=True,
            )
        except (OSError, ValueError, NotImplementedError):
            continue  # no /bin/sh: start the interpreter at once
    return None


def at_session(ledger: str, index: Any, now: float) -> int | None:
    """SessionStart and Stop: start the detached sync of a shared ledger at once,
    due or not (a turn's last leases reach the other machines now, not at the next
    tool call; one still running runs again: `ledger_sync.asked_again`). Returns
    its pid, or None."""
    return start_sync(ledger, now) if shared(index) else None


LEASES = "leases"  # lease_store.LEASES: a claim or release renames in it (its mtime moves)


def turn_ended(state_dir: str, project: str, now: float) -> int | None:
    """Stop: start the detached sync of `project`'s shared ledger when a lease was
    taken or given up since the last sync started (the turn's last edits reach the
    other machines now, not at the next tool call), or when one is due; returns
    its pid, or None. Two `stat`s otherwise (one when the repository has no
    reservations file)."""
    from agent_hooks.ledger import ledger_location
    from agent_hooks.reservations import reservation_index

    ledger = ledger_location.directory(state_dir, project)
    if not shared(reservation_index.load_hot(ledger)):
        return None
    started = started_at(ledger)
    try:
        changed: float | None = posix.stat(fs.join(ledger, LEASES)).st_mtime
    except (OSError, ValueError):
        changed = None
    quiet = changed is None or started is None or changed < started
    if quiet and started is not None and started <= now < started + INTERVAL:
        return None
    return start_sync(ledger, now)


def maybe_start(ledger: str, now: float, interval: float = INTERVAL) -> int | None:
    """`start_sync` when `due`."""
    return start_sync(ledger, now) if due(ledger, now, interval) else None
