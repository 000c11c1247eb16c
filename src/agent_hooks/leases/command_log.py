"""When each writer's shell commands ran, as its own hooks write it down: one small
log a writer (and client) in the repository's ledger, read back as windows by
`command_windows` when a held file is found changed
(docs/adr/0027-changes-put-down-to-commands.md). This half runs on the hot path of
every shell command (PreToolUse, PostToolUse, Stop); the reading half does not.

One file a writer (and client), `<ledger>/commands/<escaped writer key@client>`
(`lease.file_name`), appended to by that writer's own hooks only, one line a write:

    # {"writer": …, "agent": …, "client": …}        who the writer is (its first line)
    s <start> <call id> <worktree>                   a shell command starts (PreToolUse)
    e <start> <end> <call id> <worktree>             one ended (PostToolUse; its start is
                                                     `-` where the client gives no duration)
    x <time>                                         the writer's turn ended (Stop)

A call id the client does not give is `-`; times are epoch seconds.

Invariants:

* A line is one `O_APPEND` write (a few hundred bytes): lines of one writer's
  concurrent hooks never interleave, and no lock is taken. The file is created
  0600 in a 0700 directory, never through a symlink (the directory is opened
  once, `O_NOFOLLOW`, and every name written and rotated relative to it, as
  `command_windows` reads and sweeps them: a `commands` that is a symlink is
  neither written, read nor swept); only a regular file is written (`O_NONBLOCK`:
  a FIFO in a writer's place never holds the hook); nothing is written where the
  ledger does not exist (no one holds anything there).
* A file past `ROTATE_BYTES` is renamed to `<name>~old` (replacing the one before)
  at the writer's next line: a writer's last hundred or more commands are kept
  whatever its pace. Two concurrent rotations of one writer may lose its older
  file: a change then goes unattributed, never wrongly attributed.

Built-ins only: a shell command's PreToolUse and PostToolUse write here.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, writers
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_hooks.tool_use import Window

COMMANDS = "commands"  # the directory in a ledger
OLD = "~old"  # a rotated file's suffix (an escaped writer key ends so never: `lease.file_name`)
ROTATE_BYTES = 16 << 10  # a writer's file past this is rotated at its next line
_OPEN = (
    posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT | posix.O_NOFOLLOW | posix.O_CLOEXEC
) | posix.O_NONBLOCK  # a FIFO planted in a writer's place: ENXIO, never a hook that waits
_DIRECTORY = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC


def writer_file(ledger: str, me: writers.Writer) -> str:
    """The writer's file: one per writer and client (an agent's name may be used in
    two clients; its header names the one it ran in)."""
    return fs.join(ledger, COMMANDS, lease.file_name(f"{me.key}@{me.client or '-'}"))


def started(
    ledger: str, me: writers.Writer, worktree: str, call_id: str | None, now: float
) -> None:
    """The writer's shell command `call_id` starts now in `worktree`."""
    _append(ledger, me, f"s {now:.3f} {call_id or '-'} {_field(worktree)}\n")


def ended(
    ledger: str,
    me: writers.Writer,
    worktree: str,
    call_id: str | None,
    window: Window | None,
    now: float,
) -> None:
    """The writer's shell command `call_id` ended now; `window`: when it ran, where the
    client says (its duration), else its start is the one `started` recorded."""
    start = f"{window[0]:.3f}" if window is not None else "-"
    _append(ledger, me, f"e {start} {now:.3f} {call_id or '-'} {_field(worktree)}\n")


def stopped(ledger: str, me: writers.Writer, now: float) -> None:
    """The writer's turn ended: none of its commands runs on."""
    _append(ledger, me, f"x {now:.3f}\n", create=False)


def _field(worktree: str) -> str:
    """The worktree id as the last field of one line."""
    return worktree.replace("\n", "?").replace("\r", "?") or "."


def _append(ledger: str, me: writers.Writer, line: str, *, create: bool = True) -> None:
    """One line into the writer's file, its header first in a new one; rotated when
    past ROTATE_BYTES. Raises OSError (the caller logs it; a `commands` that is a
    symlink among them); nothing at all when the ledger does not exist (or, `create`
    False, when the writer has no file yet)."""
    name = fs.basename(writer_file(ledger, me))
    directory = open_directory(ledger)
    if directory is None:
        if not create:
            return
        try:
            posix.mkdir(fs.join(ledger, COMMANDS), 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            return  # no ledger: no one holds anything in this repository
        directory = posix.open(fs.join(ledger, COMMANDS), _DIRECTORY)
    fd = -1
    try:
        try:
            fd = posix.open(
                name, _OPEN if create else _OPEN & ~posix.O_CREAT, 0o600, dir_fd=directory
            )
        except FileNotFoundError:
            if create:
                raise
            return
        st = posix.fstat(fd)
        if st.st_mode & fs.S_IFMT != fs.S_IFREG:
            raise OSError(f"{name} in {COMMANDS} is not a regular file")
        size = st.st_size
        if size > ROTATE_BYTES:
            posix.close(fd)
            fd = -1
            try:
                posix.rename(name, name + OLD, src_dir_fd=directory, dst_dir_fd=directory)
            except FileNotFoundError:
                pass  # another hook of this writer rotated it just now
            fd = posix.open(name, _OPEN, 0o600, dir_fd=directory)
            size = posix.fstat(fd).st_size
        data = line if size else f"# {jsonio.dumps(me.as_dict())}\n{line}"
        posix.write(fd, jsonio.to_bytes(data))
    finally:
        if fd >= 0:
            posix.close(fd)
        posix.close(directory)


def open_directory(ledger: str) -> int | None:
    """The ledger's `commands` directory, opened (never through a symlink: every
    name in it is then read, written and removed relative to it); None when it is
    missing, OSError when it is no directory or a symlink."""
    try:
        return posix.open(fs.join(ledger, COMMANDS), _DIRECTORY)
    except FileNotFoundError:
        return None
