"""The one place that reads, locks and writes agent-hooks files.

Invariants (docs/adr/0003-locking-and-stale-locks.md):

* Data files are never locked themselves. Each has a sibling lock file
  (`<data>.lock`) that is never replaced, so every waiter queues on the same
  inode. The lock is a POSIX fcntl record lock taken through `posix.lockf`
  (built in: no extension module to load on the hot path). Such locks belong to
  the process, so one process never locks the same file twice (a second
  descriptor's close would drop the first's lock).
* After a lock is granted its inode is compared with what the path names now;
  if the lock file was removed or replaced meanwhile the lock is retried on the
  new file. That makes removing a lock file *while holding it* safe, and it is
  the only way a lock file is ever removed (`remove_unused_lock`).
* Writes go to a unique temporary file in the same directory and then replace
  the target (`rename`): a reader sees the old or the new document, never half
  of one, and a writer killed at any point leaves one of the two behind (plus, at
  worst, a stray `.*.tmp` that `sweep_temp_files` removes). `durable=True` also
  fsyncs before the rename, for documents whose loss in a machine crash matters
  (reservations); trail updates skip it (a crash may lose the last entries, and a
  file a crash left empty is quarantined like any corrupt one).
* A document rewritten on every hook (an agent's state) can be written `aside`:
  the old file is renamed to `.<name>.aside`, the new one renamed to the free
  name, the old one removed. No rename lands on an existing file, which on ext4
  makes the rename start writing the new file out and free the old one's blocks
  at once (most of a hook's write; ten times more on a busy disk). For an instant
  the document is only under its aside name: readers of such a document read it
  with `aside=True`, which also looks there, and a writer killed between the two
  renames leaves the aside file, which is then the document (the next write
  replaces it). Such a file is not written out before the kernel's own writeback
  (~30 s): a machine crash within that time may leave it empty.
  A write that fails (a full or read-only disk) leaves the old document and no
  temporary file. JSON is encoded by `jsonio.encode`: valid UTF-8 even when a
  string is not valid Unicode (a lone surrogate is written as its escape).
* Files are created 0600 and opened with O_NOFOLLOW: a symlink planted where a
  data or lock file belongs is refused, never followed.
* A document that does not parse as a JSON object is moved aside as
  `<name>.corrupt-<UTC timestamp>` (only when the caller holds the lock) and
  reported, so nothing is silently lost.

Only built-in modules are imported (no `os`, no `fcntl` extension): this runs
on the hook hot path.
"""

from __future__ import annotations

import _signal
import posix
import time

from agent_hooks import jsonio
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False  # mypy treats this name as True; typing is never imported at run time
if TYPE_CHECKING:
    from _collections_abc import Callable, Collection
    from typing import Any

LOCK_TIMEOUT = 5.0
FILE_MODE = 0o600
DIR_MODE = 0o700
_OPEN_FLAGS = posix.O_NOFOLLOW | posix.O_CLOEXEC


class StorageError(OSError):
    """A file agent-hooks owns cannot be used (symlink, not a regular file, …)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise TimeoutError  # a built-in: a class of our own costs ~90 k instructions per hook


def _flock_nonblocking(fd: int) -> bool:
    try:
        posix.lockf(fd, posix.F_TLOCK, 0)
    except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: held elsewhere
        return False
    return True


def _flock_wait(fd: int, timeout: float) -> bool:
    """Block on the lock for at most `timeout` seconds; True when granted.

    In the main thread a one-shot SIGALRM interrupts the blocking call, so a
    waiter wakes the moment the holder releases (no polling delay). Elsewhere it
    polls with a short back-off.
    """
    if _flock_nonblocking(fd):
        return True
    if timeout <= 0:
        return False
    try:
        previous = _signal.signal(_signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main thread
        return _flock_poll(fd, timeout)
    try:
        _signal.setitimer(_signal.ITIMER_REAL, timeout)
        posix.lockf(fd, posix.F_LOCK, 0)
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        return True
    except TimeoutError:  # the alarm
        # The timer is one-shot and has fired; the lock may have been granted
        # in the instant before it did.
        return _flock_nonblocking(fd)
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous)


def _flock_poll(fd: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        if _flock_nonblocking(fd):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


def _same_file(fd: int, path: str) -> bool:
    try:
        st = posix.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = posix.fstat(fd)
    return (st.st_ino, st.st_dev) == (held.st_ino, held.st_dev)


class Lock:
    """An exclusive lock on `path` (a dedicated lock file), held until `release`.

    `acquire` returns False after `timeout` seconds instead of raising, because
    the callers on the hook path go on without the lock (fail open) and log it.
    """

    __slots__ = ("fd", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self, timeout: float = LOCK_TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            fd = _open_lock_file(self.path)
            try:
                if not _flock_wait(fd, max(0.0, deadline - time.monotonic())):
                    posix.close(fd)
                    return False
                if _same_file(fd, self.path):
                    self.fd = fd
                    return True
            except BaseException:
                posix.close(fd)
                raise
            posix.close(fd)  # the lock file was swept while we waited: lock the new one

    def unlink_while_held(self) -> None:
        """Remove the lock file while holding it (waiters re-validate and move on)."""
        if self.fd is not None and _same_file(self.fd, self.path):
            posix.unlink(self.path)

    def release(self) -> None:
        if self.fd is not None:
            posix.close(self.fd)  # closing the last descriptor drops the flock
            self.fd = None

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open_lock_file(path: str) -> int:
    try:
        return posix.open(path, posix.O_RDWR | posix.O_CREAT | _OPEN_FLAGS, FILE_MODE)
    except OSError as exc:
        import errno  # error path only: the module costs ~0.03x of a hook's start-up

        if exc.errno == errno.ELOOP:  # a symlink stands where the lock file belongs
            raise StorageError(f"{path} is a symlink; refusing to use it as a lock") from None
        raise


def remove_unused_lock(path: str) -> bool:
    """Remove a lock file nobody holds or waits on; True when it was removed.

    The file is removed only while we hold its lock, so a process that was
    already waiting on it re-validates the inode and moves to a fresh file.
    """
    try:
        fd = posix.open(path, posix.O_RDWR | _OPEN_FLAGS)
    except OSError:
        return False
    try:
        if not _flock_nonblocking(fd) or not _same_file(fd, path):
            return False
        posix.unlink(path)
        return True
    finally:
        posix.close(fd)


def ensure_dir(path: str) -> None:
    """Create `path` (and parents) private to the user if it does not exist."""
    fs.makedirs(path, DIR_MODE)


def read_bytes(path: str) -> bytes | None:
    """The file's content, or None when it does not exist. Refuses symlinks."""
    try:
        return fs.read_file(path)
    except OSError as exc:
        import errno  # error path only

        if exc.errno == errno.ELOOP:
            raise StorageError(f"{path} is a symlink; refusing to follow it") from None
        raise


ASIDE_SUFFIX = ".aside"
# A reader misses a document written aside only if each round of its look (the
# document, then its aside name) straddles a whole write; one round alone missed
# about one read in 5,000 under a writer rewriting it without pause.
_ASIDE_ROUNDS = 3


def aside_name(name: str) -> str:
    """The name under which an `aside` write keeps the document named `name` while
    it moves the new one in (a hidden name: listings of documents skip it)."""
    return f".{name}{ASIDE_SUFFIX}"


def aside_path(path: str) -> str:
    directory, name = fs.split(path)
    return fs.join(directory, aside_name(name))


def aside_target(name: str) -> str | None:
    """The name whose document a file named `name` holds aside, or None if it is none."""
    if name.startswith(".") and name.endswith(ASIDE_SUFFIX) and len(name) > len(ASIDE_SUFFIX) + 1:
        return name[1 : -len(ASIDE_SUFFIX)]
    return None


def listed_document(name: str, listed: Collection[str]) -> str | None:
    """What a directory entry named `name` stands for in a listing of documents
    written aside (`listed`: every name listed): itself; for an aside file, its
    document — or None when that is listed too (it is read under its own name)."""
    target = aside_target(name)
    if target is None:
        return name
    return None if target in listed else target


def _looks(path: str, aside: bool) -> tuple[str, ...]:
    """The names a document is looked for under, in order (see `_ASIDE_ROUNDS`)."""
    return (path, aside_path(path)) * _ASIDE_ROUNDS if aside else (path,)


def read_current(path: str, *, aside: bool = False) -> tuple[str, bytes] | None:
    """(the file read, its content) of the document at `path`, None when there is
    none. With `aside`, a document an `aside` write is moving is found under its
    aside name: both names are tried in turn, a few rounds (a missing document
    costs six failed opens)."""
    for name in _looks(path, aside):
        data = read_bytes(name)
        if data is not None:
            return name, data
    return None


def stat_current(path: str, *, aside: bool = False) -> posix.stat_result | None:
    """The file status (not following a symlink) of the document at `path`, None
    when there is none: the same rounds as `read_current`."""
    for name in _looks(path, aside):
        try:
            return posix.stat(name, follow_symlinks=False)
        except FileNotFoundError:
            continue
    return None


def exists(path: str, *, aside: bool = False) -> bool:
    """Whether the document at `path` exists (see `stat_current`)."""
    return stat_current(path, aside=aside) is not None


def create_new(path: str, data: bytes) -> bool:
    """Create `path` holding `data` when nothing is there yet (0600, O_EXCL, no
    symlink followed); False when something already is. Cheaper than a replace
    (no temp file, no rename: a rename is most of a small write's cost), at the
    price of a reader possibly seeing the file empty for an instant — for callers
    that serialize writers under a lock and take an unreadable file as absent."""
    try:
        fd = posix.open(
            path, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | _OPEN_FLAGS, FILE_MODE
        )
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[posix.write(fd, view) :]
    except BaseException:
        posix.close(fd)
        posix.unlink(path)
        raise
    posix.close(fd)
    return True


def write_bytes_atomic(
    path: str, data: bytes, *, durable: bool = True, aside: bool = False, mode: int = FILE_MODE
) -> None:
    """Replace `path` with `data` atomically; the file ends up 0600 (or `mode`, set
    before it takes the name: a user's settings file keeps its own). When it fails
    (a full or read-only disk) `path` is left as it was and the temporary file is
    removed; an error without a file name (ENOSPC from `write`) is given the
    temporary file's (`temp_target` maps it back to `path`). `aside`: by two
    renames onto free names (see the module), for documents read with `aside`."""
    directory, name = fs.split(path)
    tmp = fs.join(directory, f".{name}.{posix.getpid()}.{posix.urandom(4).hex()}.tmp")
    fd = posix.open(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | _OPEN_FLAGS, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[posix.write(fd, view) :]
        if mode != FILE_MODE:
            posix.fchmod(fd, mode)
        if durable:
            posix.fsync(fd)
        closing, fd = fd, -1
        posix.close(closing)
        if aside:
            _move_in(tmp, path)
        else:
            posix.replace(tmp, path)
    except BaseException as exc:
        if fd >= 0:
            _close_quietly(fd)
        _discard(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = tmp  # the file being written when it failed
        raise


def _move_in(tmp: str, path: str) -> None:
    """Put `tmp` at `path` with no rename onto an existing file: `path` to its aside
    name, `tmp` to `path`, the aside file removed. If the second rename fails the
    old document goes back; if that fails too, its aside file is the document."""
    side = aside_path(path)
    try:
        posix.rename(path, side)
        moved = True
    except FileNotFoundError:
        moved = False  # a first write, or a writer killed between its renames
    try:
        posix.rename(tmp, path)
    except BaseException:
        if moved:
            try:
                posix.rename(side, path)
            except OSError:
                pass
        raise
    try:
        posix.unlink(side)  # the old document, or what a killed writer left aside
    except OSError:
        pass  # FileNotFoundError mostly; anything else leaves a file no reader prefers


def _close_quietly(fd: int) -> None:
    try:
        posix.close(fd)
    except OSError:
        pass


def _discard(tmp: str) -> None:
    """Remove a temporary file after a failed write; never hides the failure."""
    try:
        posix.unlink(tmp)
    except OSError:
        pass


def write_json_atomic(path: str, doc: object, *, durable: bool = True, aside: bool = False) -> None:
    write_bytes_atomic(path, jsonio.encode(doc), durable=durable, aside=aside)


def utc_stamp(now: float) -> str:
    """`20261129T054540Z`: UTC to the second, for the names of files kept aside (a
    quarantined document, an adopted ledger, a settings backup); documents and logs
    write `timestamps.iso`."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def quarantine(path: str, now: float, *, source: str | None = None) -> str:
    """Move a corrupt file (`path`, or `source`: the file its document was read from)
    aside as `<path>.corrupt-<UTC timestamp>`; return the new path."""
    target = f"{path}.corrupt-{utc_stamp(now)}"
    n = 1
    while fs.lexists(target):
        n += 1
        target = f"{path}.corrupt-{utc_stamp(now)}-{n}"
    posix.rename(source or path, target)
    return target


class Loaded:
    """A JSON object read from disk. `doc` is None when the file was missing or
    corrupt; `problem` says why it could not be used and `moved_to` where a
    corrupt file went."""

    __slots__ = ("doc", "moved_to", "problem")

    def __init__(
        self, doc: dict[str, Any] | None, problem: str | None = None, moved_to: str | None = None
    ) -> None:
        self.doc = doc
        self.problem = problem
        self.moved_to = moved_to


def load_json_object(path: str, *, recover_at: float | None = None, aside: bool = False) -> Loaded:
    """Read a JSON object (`aside`: written aside, see `read_current`). With
    `recover_at` (a time; only under the lock) a corrupt file is quarantined so a
    fresh document can replace it."""
    found = read_current(path, aside=aside)
    if found is None:
        return Loaded(None)
    source, data = found
    try:
        doc = jsonio.loads(data)
        if not isinstance(doc, dict):
            raise ValueError(f"expected a JSON object, found {type(doc).__name__}")
    except ValueError as exc:
        moved = quarantine(path, recover_at, source=source) if recover_at is not None else None
        return Loaded(None, str(exc), moved)
    return Loaded(doc)


def locked_update(
    path: str,
    mutate: Callable[[Loaded], dict[str, Any] | None],
    *,
    now: float,
    timeout: float = LOCK_TIMEOUT,
    durable: bool = True,
    aside: bool = False,
    after_write: Callable[[], None] | None = None,
) -> bool:
    """Read-modify-write `path` under its lock; return whether the lock was held.

    `mutate` gets what was on disk and returns the document to write, or None to
    leave the file as it is. When the lock cannot be had within `timeout` the
    update still happens (fail open: the caller logs it), except that a corrupt
    file is never overwritten without first being quarantined under the lock.
    `after_write` runs once the document is written, still under the lock: a
    change elsewhere that must follow the document's (deleting a file it stops
    naming) never happens when the write fails.
    """
    lock = Lock(path + ".lock")
    held = lock.acquire(timeout)
    try:
        loaded = load_json_object(path, recover_at=now if held else None, aside=aside)
        doc = mutate(loaded)
        if doc is not None and not (loaded.problem and loaded.moved_to is None):
            write_json_atomic(path, doc, durable=durable, aside=aside)
            if after_write is not None:
                after_write()
    finally:
        lock.release()
    return held


def temp_target(name: str) -> str | None:
    """The file a temp file named `name` was going to replace, or None if `name`
    is not one of ours (`.<target>.<pid>.<8 hex digits>.tmp`)."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name[1:-4].rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit() or len(parts[2]) != 8:
        return None
    try:
        int(parts[2], 16)
    except ValueError:
        return None
    return parts[0]


def sweep_temp_files(
    directory: str, is_ours: Callable[[str], bool], older_than: float
) -> list[str]:
    """Remove temp files left by killed writers: only ours (their target passes
    `is_ours`) and only those last modified before `older_than`."""
    removed: list[str] = []
    try:
        entries = list(posix.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        target = temp_target(entry.name)
        if target is None or not is_ours(target):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < older_than:
                posix.unlink(entry.path)
                removed.append(entry.path)
        except FileNotFoundError:
            continue
    return removed
