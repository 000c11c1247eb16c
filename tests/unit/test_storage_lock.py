"""storage's lock across real processes: timeouts, waiters, killed holders, lock files
unlinked, replaced or swept while held or waited on, and updates that go on without it."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_hooks import storage

SRC = str(Path(storage.__file__).resolve().parents[1])
NOW = 1_800_000_000.0

# A process that takes the lock on argv[1] and obeys commands read from stdin:
# "unlink" (unlink_while_held), "release", "exit". It reports each step on stdout.
HOLDER = f"""
import sys, os
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock = storage.Lock(sys.argv[1])
timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 10
print("waiting", flush=True)
if not lock.acquire(timeout):
    print("timeout", flush=True)
    sys.exit(3)
print("held", os.fstat(lock.fd).st_ino, flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "unlink":
        lock.unlink_while_held()
        print("unlinked", flush=True)
    elif cmd == "release":
        lock.release()
        print("released", flush=True)
    elif cmd == "exit":
        break
"""


class Holder:
    """A helper process that holds (or waits for) a lock."""

    def __init__(self, lock_path: Path, timeout: float = 10) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(lock_path), str(timeout)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.line() == "waiting"

    def line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def send(self, cmd: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.line()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    started: list[Holder] = []
    yield started
    for holder in started:
        holder.close()


def hold(holders: list[Holder], lock_path: Path) -> Holder:
    holder = Holder(lock_path)
    holders.append(holder)
    assert holder.line().startswith("held")
    return holder


def wait_until_blocked(inode: int, deadline: float = 30) -> None:
    """Until a process is blocked waiting for a lock on the file `inode`: the kernel
    lists such a waiter in /proc/locks as a `->` line. What orders a test's steps
    after "the waiter is waiting", instead of a sleep."""
    give_up = time.monotonic() + deadline
    while time.monotonic() < give_up:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields and fields[fields.index("->") + 5].endswith(f":{inode}"):
                return
        time.sleep(0.002)
    raise AssertionError(f"no process waited for a lock on inode {inode} in {deadline} s")


# Bounds on how long a lock call takes: wide, because on two shared cores a process may be
# stalled for seconds; they only tell a call that returned on its own terms (granted, or at
# its timeout) from one that waited for something else (a whole longer timeout, forever).
SLACK = 5.0

# --- the lock across processes


def test_lock_times_out_while_another_process_holds_it(
    tmp_path: Path, holders: list[Holder]
) -> None:
    lock_path = tmp_path / "x.lock"
    hold(holders, lock_path)
    lock = storage.Lock(str(lock_path))
    start = time.monotonic()
    assert lock.acquire(0.6) is False
    waited = time.monotonic() - start
    assert 0.6 <= waited < 0.6 + SLACK, waited  # the whole timeout, and then gives up
    assert lock.fd is None
    start = time.monotonic()
    assert lock.acquire(0) is False  # no timeout: no wait (the default would be 5 s)
    # Not even a second (a floor of 1 s on the wait, a mutant, took that); the call
    # itself takes microseconds, so the bound is wide for a loaded machine.
    assert time.monotonic() - start < 0.9


def test_waiter_gets_the_lock_the_moment_it_is_released(
    tmp_path: Path, holders: list[Holder]
) -> None:
    """Released while the waiter is blocked on it (seen in /proc/locks): granted then,
    long before its timeout of 4 x SLACK runs out."""
    lock_path = tmp_path / "x.lock"
    holder = hold(holders, lock_path)
    inode = lock_path.stat().st_ino

    def release_once_waited_for() -> None:
        wait_until_blocked(inode)
        holder.send("release")

    releaser = threading.Thread(target=release_once_waited_for, daemon=True)
    releaser.start()
    lock = storage.Lock(str(lock_path))
    start = time.monotonic()
    assert lock.acquire(4 * SLACK) is True
    assert time.monotonic() - start < 2 * SLACK
    lock.release()
    releaser.join(SLACK)


def test_lock_of_a_killed_holder_is_free(tmp_path: Path, holders: list[Holder]) -> None:
    lock_path = tmp_path / "x.lock"
    holder = hold(holders, lock_path)
    holder.proc.send_signal(signal.SIGKILL)
    holder.proc.wait()
    lock = storage.Lock(str(lock_path))
    assert lock.acquire(2) is True
    lock.release()


def test_lock_outside_the_main_thread_polls(tmp_path: Path, holders: list[Holder]) -> None:
    lock_path = tmp_path / "x.lock"
    holder = hold(holders, lock_path)
    results: list[tuple[bool, float]] = []

    def worker() -> None:
        lock = storage.Lock(str(lock_path))
        start = time.monotonic()
        results.append((lock.acquire(0.4), time.monotonic() - start))
        threading.Timer(0.2, holder.send, ("release",)).start()  # before or during: either way
        start = time.monotonic()
        results.append((lock.acquire(4 * SLACK), time.monotonic() - start))
        lock.release()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(8 * SLACK)
    assert results[0][0] is False and results[0][1] >= 0.4
    assert results[1][0] is True and results[1][1] < 2 * SLACK  # granted, not timed out


def test_a_lock_file_unlinked_while_a_waiter_waits_keeps_mutual_exclusion(
    tmp_path: Path, holders: list[Holder]
) -> None:
    lock_path = tmp_path / "x.lock"
    first = hold(holders, lock_path)
    old_inode = lock_path.stat().st_ino
    waiter = Holder(lock_path, timeout=60)  # blocks on the first file's inode
    holders.append(waiter)
    wait_until_blocked(old_inode)
    assert first.send("unlink") == "unlinked"
    assert not lock_path.exists()
    newcomer = hold(holders, lock_path)  # creates and locks a new lock file
    new_inode = lock_path.stat().st_ino
    assert new_inode != old_inode or not Path(f"/proc/{first.proc.pid}").exists()
    assert first.send("release") == "released"
    # The waiter is granted the old inode, sees it is gone, and queues on the new one.
    wait_until_blocked(new_inode)
    assert waiter.proc.poll() is None
    import select

    assert waiter.proc.stdout is not None
    ready, _, _ = select.select([waiter.proc.stdout], [], [], 0)
    assert not ready, "the waiter got a lock while the newcomer held the current lock file"
    assert newcomer.send("release") == "released"
    got = waiter.line().split()
    assert got[0] == "held"
    assert int(got[1]) == lock_path.stat().st_ino == new_inode


# A worker that increments a counter file under the lock; a lost update means two
# processes were inside at once.
COUNTER = f"""
import sys, time
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock_path, counter, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(n):
    lock = storage.Lock(lock_path)
    assert lock.acquire(20)
    value = int(open(counter).read())
    time.sleep(0.0005)
    with open(counter + ".new", "w") as f:
        f.write(str(value + 1))
    __import__("os").replace(counter + ".new", counter)
    lock.release()
"""

SWEEPER = f"""
import sys, time
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock_path, stop = sys.argv[1], sys.argv[2]
removed = 0
while True:
    try:
        open(stop).close()
        break
    except FileNotFoundError:
        pass
    removed += storage.remove_unused_lock(lock_path)
    time.sleep(0.0002)
print(removed)
"""


def test_sweeping_lock_files_under_contention_loses_no_update(tmp_path: Path) -> None:
    lock_path, counter, stop = tmp_path / "c.lock", tmp_path / "counter", tmp_path / "stop"
    counter.write_text("0")
    workers, per_worker = 4, 60
    sweeper = subprocess.Popen(
        [sys.executable, "-c", SWEEPER, str(lock_path), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER, str(lock_path), str(counter), str(per_worker)]
        )
        for _ in range(workers)
    ]
    try:
        codes = [p.wait(120) for p in procs]
    finally:
        stop.write_text("")
        removed = int(sweeper.communicate(timeout=30)[0])
    assert codes == [0] * workers
    assert int(counter.read_text()) == workers * per_worker
    assert removed > 0, "the sweeper never removed the lock file: the test proved nothing"


def test_remove_unused_lock_never_removes_a_held_lock(
    tmp_path: Path, holders: list[Holder]
) -> None:
    lock_path = tmp_path / "x.lock"
    holder = hold(holders, lock_path)
    assert storage.remove_unused_lock(str(lock_path)) is False
    assert lock_path.exists()
    waiter = Holder(lock_path)  # another process queued behind the holder
    holders.append(waiter)
    assert storage.remove_unused_lock(str(lock_path)) is False
    holder.send("release")
    assert waiter.line().startswith("held")
    assert storage.remove_unused_lock(str(lock_path)) is False
    waiter.send("release")
    assert storage.remove_unused_lock(str(lock_path)) is True
    assert not lock_path.exists()
    assert storage.remove_unused_lock(str(lock_path)) is False


def test_locked_update_goes_on_without_the_lock_after_the_timeout(
    tmp_path: Path, holders: list[Holder]
) -> None:
    path = tmp_path / "state-a.json"
    storage.write_json_atomic(str(path), {"n": 1})
    hold(holders, Path(str(path) + ".lock"))
    start = time.monotonic()
    held = storage.locked_update(
        str(path), lambda loaded: {"n": loaded.doc["n"] + 1}, now=NOW, timeout=0.3
    )
    assert held is False and time.monotonic() - start >= 0.25
    assert json.loads(path.read_text()) == {"n": 2}


def test_a_corrupt_file_is_never_overwritten_without_the_lock(
    tmp_path: Path, holders: list[Holder]
) -> None:
    path = tmp_path / "state-a.json"
    path.write_text("garbage")
    hold(holders, Path(str(path) + ".lock"))
    assert (
        storage.locked_update(str(path), lambda loaded: {"fresh": 1}, now=NOW, timeout=0.2) is False
    )
    assert path.read_text() == "garbage"
    assert [p.name for p in tmp_path.iterdir() if "corrupt" in p.name] == []


# --- rules mutation testing found unpinned (docs/mutation-testing.md)


def test_a_lock_file_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        lock = storage.Lock(str(tmp_path / "x.lock"))
        assert lock.acquire(1)
    finally:
        os.umask(old)
    assert (tmp_path / "x.lock").stat().st_mode & 0o777 == 0o600
    lock.release()
    lock.release()  # a second release is harmless
    assert lock.fd is None


def test_an_error_while_waiting_closes_the_lock_file_and_propagates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock call that fails (ENOLCK) raises that error and leaks no descriptor."""

    def no_locks(fd: int, timeout: float) -> bool:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(storage, "_flock_wait", no_locks)
    with pytest.raises(OSError) as caught:
        storage.Lock(str(tmp_path / "x.lock")).acquire(1)
    assert caught.value.errno == errno.ENOLCK
    assert len(os.listdir("/proc/self/fd")) == before


def test_unlink_while_held_never_removes_a_lock_file_that_replaced_ours(tmp_path: Path) -> None:
    """Our lock file was swept and another made in its place: unlinking "ours" now
    would remove theirs, so nothing is removed."""
    path = tmp_path / "x.lock"
    lock = storage.Lock(str(path))
    assert lock.acquire(1)
    newer = tmp_path / "newer"
    newer.write_text("")
    os.replace(newer, path)
    lock.unlink_while_held()
    assert path.exists()
    lock.release()
    assert storage.Lock(str(path)).acquire(0)  # and it was unlinked when it was ours
    lock2 = storage.Lock(str(path))
    assert lock2.acquire(1)
    lock2.unlink_while_held()
    assert not path.exists()
    lock2.release()


def test_a_lock_file_replaced_by_a_symlink_while_waited_on_is_refused(
    tmp_path: Path, holders: list[Holder]
) -> None:
    """The waiter is granted the old file, finds a symlink at the lock's path (to that
    very file) and refuses it — it never takes a lock through a link."""
    lock_path = tmp_path / "x.lock"
    first = hold(holders, lock_path)
    inode = lock_path.stat().st_ino
    waiter = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path), "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert waiter.stdout is not None and waiter.stdout.readline().strip() == "waiting"
        wait_until_blocked(inode)
        os.rename(lock_path, tmp_path / "x.real")
        os.symlink(tmp_path / "x.real", lock_path)
        assert first.send("release") == "released"
        out, err = waiter.communicate(timeout=60)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert "held" not in out and waiter.returncode != 0
    assert "symlink" in err


def test_a_lock_outside_the_main_thread_is_taken_soon_after_it_frees(
    tmp_path: Path, holders: list[Holder]
) -> None:
    """Off the main thread a waiter polls, at most 10 ms apart, from the first
    millisecond: freed early or late, the lock is taken well within a second of its
    release (bound wide for a loaded machine; a poll growing past 10 ms, or starting at
    a second, takes longer)."""
    gaps: list[float] = []
    for freed_after in (0.1, 1.5):
        lock_path = tmp_path / f"x{freed_after}.lock"
        holder = hold(holders, lock_path)
        got: list[float] = []

        def worker(path: Path = lock_path, into: list[float] = got) -> None:
            lock = storage.Lock(str(path))
            assert lock.acquire(4 * SLACK)
            into.append(time.monotonic())
            lock.release()

        thread = threading.Thread(target=worker)
        thread.start()
        time.sleep(freed_after)
        assert holder.send("release") == "released"
        released = time.monotonic()
        thread.join(4 * SLACK)
        gaps.append(got[0] - released)
    assert max(gaps) < 0.4, gaps
