"""When each writer's shell commands ran, read back from their logs
(`command_log`) as windows: a held file found changed by someone else
(`held_files.check`, at its holder's next hook) is put down to the commands that
were running at that moment — in every client and permission mode, whether or not
the client reported the files a command changed
(docs/adr/0027-changes-put-down-to-commands.md).

Invariants:

* A command's window is (start, end). Start and end are paired by the call id,
  else in order (the oldest open start: Gemini CLI gives no id). A start without
  its end is running until the writer's next start more than `PARALLEL` seconds
  later (the writer had seen it finish: refused by the person, failed where the
  client sends no PostToolUse for a failure), its turn's end, `MAX_OPEN` after it,
  or now, whichever is first. An end whose start is unknown is a window of its
  moment alone. A window whose end is before its start (the clock stepped back)
  holds no moment.
* `load` reads a ledger's files once (the directory listed, only files written
  since `MAX_OPEN` before the earliest moment asked about, at most `MAX_READ`
  bytes each); `Commands.running_at` names the writers whose command in a work tree
  was running at a moment (`tool_use.in_window`: give or take `tool_use.SLACK`).
  What it reads is outside input: a line that does not parse is skipped, a writer
  described only by what is safe to show; a `commands` that is a symlink, and a
  file that is not regular, are not read.
* A writer's file untouched for `KEEP_SECONDS` goes at the ledger's sweep (`sweep`).

Loaded only when a held file was found changed, and at the ledger's tidying.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, writers
from agent_hooks import posix_fs as fs
from agent_hooks.clients import client_table
from agent_hooks.leases.command_log import OLD, ROTATE_BYTES, open_directory, writer_file
from agent_hooks.tool_use import in_window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_READ = 2 * ROTATE_BYTES  # bytes read of one file (its end): a file grown past it by hand
PARALLEL = 2.0  # seconds: starts closer than this are one batch of calls, run side by side
MAX_OPEN = 600.0  # seconds a command without a recorded end counts as running, at most
KEEP_SECONDS = 86400  # a writer's file untouched this long is swept
_READ = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_NONBLOCK


class Running:
    """A writer whose shell command was running at a moment: who (its header, as
    safe to show), and when that command ran."""

    __slots__ = ("end", "start", "writer")

    def __init__(self, writer: dict[str, Any], start: float, end: float) -> None:
        self.writer = writer
        self.start = start
        self.end = end


class Commands:
    """The windows of every writer's recent shell commands in one ledger, read once
    (`load`), asked for each changed file (`running_at`)."""

    __slots__ = ("writers",)

    def __init__(self, found: list[tuple[dict[str, Any], list[tuple[float, float, str]]]]) -> None:
        self.writers = found  # (writer, its windows as (start, end, worktree)) a file

    def running_at(self, worktree: str, moment: float, skip: str | None = None) -> list[Running]:
        """The writers (but `skip`, a writer key) whose shell command in `worktree`
        was running at `moment`, give or take `tool_use.SLACK`: each once, with the
        first window that held it."""
        found: dict[str, Running] = {}
        for writer, windows in self.writers:
            key = writer["writer"]
            if key == skip or key in found:
                continue
            for start, end, where in windows:
                if where == worktree and in_window((start, end), moment):
                    found[key] = Running(writer, start, end)
                    break
        return list(found.values())


def load(ledger: str, since: float, now: float) -> Commands:
    """Every writer's shell commands in `ledger` that may have run after `since`:
    the files written since `since - MAX_OPEN` (a command then may still have been
    running), ordered by file name (by writer key, then client). Nothing from a
    `commands` that is not a directory of its own (a symlink)."""
    try:
        directory = open_directory(ledger)
    except OSError:
        return Commands([])
    if directory is None:
        return Commands([])
    try:
        names = posix.listdir(directory)
        cutoff = since - MAX_OPEN - 1.0
        found = []
        for name in sorted(names):
            if name.endswith(OLD) or name.startswith("."):
                continue
            current = _tail(name, cutoff, directory)
            if current is None:
                continue
            older = _tail(name + OLD, cutoff, directory) or b""
            writer, windows = parse(older + current, now)
            if writer is not None:
                found.append((writer, windows))
    except OSError:
        return Commands([])
    finally:
        posix.close(directory)
    return Commands(found)


def began(ledger: str, me: writers.Writer, call_id: str | None) -> float | None:
    """When the writer's shell command `call_id` started, as `started` recorded it
    (without an id: its latest start without one); None when it is not recorded."""
    try:
        directory = open_directory(ledger)
    except OSError:
        return None
    if directory is None:
        return None
    try:
        data = _tail(fs.basename(writer_file(ledger, me)), 0.0, directory)
    finally:
        posix.close(directory)
    wanted = call_id or "-"
    found = None
    for raw in (data or b"").decode("utf-8", "replace").split("\n"):
        kind, _, rest = raw.partition(" ")
        at, _, more = rest.partition(" ")
        if kind == "s" and more.partition(" ")[0] == wanted:
            try:
                found = float(at)
            except ValueError:
                continue
    return found


def _tail(name: str, since: float, directory: int) -> bytes | None:
    """The last MAX_READ bytes of file `name` in `directory`, when it is a regular
    file written after `since`; else None."""
    try:
        fd = posix.open(name, _READ, dir_fd=directory)
    except OSError:
        return None
    try:
        st = posix.fstat(fd)
        if st.st_mode & fs.S_IFMT != fs.S_IFREG or st.st_mtime < since:
            return None
        if st.st_size > MAX_READ:
            posix.lseek(fd, st.st_size - MAX_READ, 0)
        return posix.read(fd, MAX_READ)
    except OSError:
        return None
    finally:
        posix.close(fd)


class _Command:
    """One command while a writer's file is read: when it started, when it ended
    (None: not yet known; `ruled`: an end the rules gave it, which its own end line
    replaces), where it ran, its call id."""

    __slots__ = ("call", "end", "ruled", "start", "where")

    def __init__(self, start: float, end: float | None, where: str, call: str) -> None:
        self.start = start
        self.end = end
        self.where = where
        self.call = call
        self.ruled = False


def parse(data: bytes, now: float) -> tuple[dict[str, Any] | None, list[tuple[float, float, str]]]:
    """(the writer, as its first header says and safe to show; its commands' windows
    as (start, end, worktree)) from the lines of a writer's file (see the module)."""
    writer: dict[str, Any] | None = None
    commands: list[_Command] = []
    running: list[_Command] = []  # those without an end yet, oldest first
    by_id: dict[str, _Command] = {}
    for raw in data.decode("utf-8", "replace").split("\n"):
        kind, _, rest = raw.partition(" ")
        if kind == "#":
            writer = writer or _writer(rest)
            continue
        try:
            if kind == "s":
                at, call, where = rest.split(" ", 2)
                _started(commands, running, by_id, _time(at), call, where)
            elif kind == "e":
                begun, at, call, where = rest.split(" ", 3)
                start = None if begun == "-" else _time(begun)
                _ended(commands, running, by_id, start, _time(at), call, where)
            elif kind == "x":
                _close(running, _time(rest))
        except ValueError:
            continue  # a line cut short, or not ours
    found = [
        (item.start, min(item.start + MAX_OPEN, now) if item.end is None else item.end, item.where)
        for item in commands
    ]
    return writer, found


def _time(text: str) -> float:
    """An epoch time written by this module; ValueError for anything else."""
    value = float(text)
    if not 0 <= value < 1e11:  # NaN and infinities too
        raise ValueError(text)
    return value


def _started(
    commands: list[_Command],
    running: list[_Command],
    by_id: dict[str, _Command],
    start: float,
    call: str,
    where: str,
) -> None:
    """A start line: a new command, and those begun more than PARALLEL before it
    are over (the writer saw them finish before it started this one). Only the
    commands still `running` are looked at: a file is read in time linear in it."""
    still = []
    for item in running:
        if start > item.start + PARALLEL:
            item.end, item.ruled = start, True
        else:
            still.append(item)
    item = _Command(start, None, where, call)
    commands.append(item)
    running[:] = [*still, item]
    if call != "-":
        by_id[call] = item


def _ended(
    commands: list[_Command],
    running: list[_Command],
    by_id: dict[str, _Command],
    start: float | None,
    end: float,
    call: str,
    where: str,
) -> None:
    """An end line: its command's start line found by its call id, else (no id) the
    oldest one open in the same work tree; a command of its own when there is none."""
    item = by_id.pop(call, None) if call != "-" else _oldest_open(running, where)
    if item is None or item.where != where:
        commands.append(_Command(end if start is None else start, end, where, call))
        return
    if item.end is None:
        running.remove(item)
    if start is not None:
        item.start = min(item.start, start)
    item.end = end if item.end is None or item.ruled else max(item.end, end)
    item.ruled = False


def _close(running: list[_Command], end: float) -> None:
    """A turn's end: no command without an end runs on."""
    for item in running:
        item.end, item.ruled = end, True
    running.clear()


def _oldest_open(running: list[_Command], where: str) -> _Command | None:
    """The oldest start without an id and without an end in `where` (Gemini CLI's)."""
    for item in running:
        if item.call == "-" and item.where == where:
            return item
    return None


def _writer(text: str) -> dict[str, Any] | None:
    """A header's writer, keeping only what is safe to show and to tell."""
    try:
        doc = jsonio.loads(text)
    except ValueError:
        return None
    key = doc.get("writer") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(key, str) or writers.short_text(key, 300) != key:
        return None
    agent = doc.get("agent")
    if agent is not None:
        from agent_hooks import identity

        try:
            agent = identity.check_agent_name(agent) if isinstance(agent, str) else None
        except identity.IdentityError:
            agent = None
    agent_id = writers.safe_id(doc.get("agent_id"))
    client = doc.get("client")
    return {
        "writer": key,
        "agent": agent,
        "conversation": writers.safe_id(doc.get("conversation")),
        "agent_id": agent_id,
        "agent_type": writers.short_text(doc.get("agent_type"), writers.MAX_TYPE)
        if agent_id
        else None,
        "client": client if isinstance(client, str) and client in client_table.CLIENTS else None,
    }


def sweep(ledger: str, now: float) -> int:
    """Remove writers' files untouched for KEEP_SECONDS; how many went. Nothing
    from a `commands` that is not a directory of its own (a symlink)."""
    try:
        directory = open_directory(ledger)
    except OSError:
        return 0
    if directory is None:
        return 0
    gone = 0
    try:
        for name in posix.listdir(directory):
            try:
                moved = posix.stat(name, dir_fd=directory, follow_symlinks=False).st_mtime
                if now - moved > KEEP_SECONDS:
                    posix.unlink(name, dir_fd=directory)
                    gone += 1
            except OSError:
                continue
    except OSError:
        pass
    finally:
        posix.close(directory)
    return gone
