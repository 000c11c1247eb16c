"""storage: atomic writes, symlink refusal, quarantine, and the lock — across real processes."""

from __future__ import annotations

import errno
import json
import os
import posix
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# --- atomic writes


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_atomic_write_leaves_0600_and_no_temp_file(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "doc.json"
    target.write_text("old")
    target.chmod(0o644)
    old = os.umask(umask)
    try:
        storage.write_json_atomic(str(target), {"a": [1, "é"]})
        storage.write_json_atomic(str(tmp_path / "new.json"), {}, durable=False)
    finally:
        os.umask(old)
    assert json.loads(target.read_text("utf-8")) == {"a": [1, "é"]}
    for path in (target, tmp_path / "new.json"):
        assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "new.json"]


def test_a_failed_write_leaves_the_old_document_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    storage.write_json_atomic(str(target), {"v": 1})
    with pytest.raises(ValueError):
        storage.write_json_atomic(str(target), {"v": float("nan")})
    with pytest.raises(OSError):
        storage.write_bytes_atomic(str(tmp_path / "missing-dir" / "x.json"), b"{}")
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_a_document_holding_lone_surrogates_is_written_as_valid_utf8(tmp_path: Path) -> None:
    """A path from a non-UTF-8 file name (`\\udcff`) or a `"\\ud800"` escape read from
    a file must not make the write fail (it did: UnicodeEncodeError)."""
    target = tmp_path / "doc.json"
    doc = {"files_read": ["/p/x\udcff.py"], "reason": "why \ud800"}
    storage.write_json_atomic(str(target), doc)
    assert storage.load_json_object(str(target)).doc == doc
    assert json.loads(target.read_bytes().decode("utf-8")) == doc


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EROFS])
@pytest.mark.parametrize("durable", [True, False])
def test_a_write_failing_midway_leaves_the_old_document_and_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, durable: bool
) -> None:
    """A full disk fails in `write` (or `fsync`), with no file name: the old
    document stays whole, the temporary file goes, and the error names the
    temporary file being written (`temp_target` leads back to the document)."""
    target = tmp_path / "doc.json"
    storage.write_json_atomic(str(target), {"v": 1})
    real_write = posix.write
    calls: list[int] = []

    def failing_write(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) == 1:
            return real_write(fd, bytes(data[:3]))  # a partial write first
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(posix, "write", failing_write)
    with pytest.raises(OSError) as caught:
        storage.write_json_atomic(str(target), {"v": 2, "pad": "x" * 100}, durable=durable)
    monkeypatch.undo()
    assert caught.value.errno == code
    name = os.path.basename(str(caught.value.filename))
    assert storage.temp_target(name) == "doc.json"
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_after_write_runs_only_once_the_document_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "doc.json"
    ran: list[object] = []

    def after() -> None:
        ran.append(json.loads(target.read_text()))

    storage.locked_update(str(target), lambda loaded: {"v": 1}, now=NOW, after_write=after)
    assert ran == [{"v": 1}]
    storage.locked_update(str(target), lambda loaded: None, now=NOW, after_write=after)
    assert ran == [{"v": 1}]  # nothing written, nothing after

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(posix, "write", full)
    with pytest.raises(OSError):
        storage.locked_update(str(target), lambda loaded: {"v": 2}, now=NOW, after_write=after)
    monkeypatch.undo()
    assert ran == [{"v": 1}] and json.loads(target.read_text()) == {"v": 1}


def test_read_bytes_reads_large_files_whole(tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 17)
    storage.write_bytes_atomic(str(tmp_path / "big"), data, durable=False)
    assert storage.read_bytes(str(tmp_path / "big")) == data
    assert storage.read_bytes(str(tmp_path / "none")) is None


def test_ensure_dir_is_private(tmp_path: Path) -> None:
    storage.ensure_dir(str(tmp_path / "a" / "b"))
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700


# --- symlinks planted where our files belong


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.json"
    path.parent.mkdir()
    path.write_text('{"precious": true}')
    return path


def test_a_symlinked_data_file_is_refused_for_reading(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "state-a.json"
    os.symlink(victim, link)
    with pytest.raises(storage.StorageError, match="symlink"):
        storage.read_bytes(str(link))
    with pytest.raises(storage.StorageError):
        storage.load_json_object(str(link), recover_at=NOW)
    assert victim.read_text() == '{"precious": true}'
    assert link.is_symlink()


def test_locked_update_never_writes_through_a_symlink(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "state-a.json"
    os.symlink(victim, link)
    with pytest.raises(storage.StorageError):
        storage.locked_update(str(link), lambda loaded: {"overwritten": True}, now=NOW)
    assert victim.read_text() == '{"precious": true}'


def test_write_replaces_a_planted_symlink_instead_of_following_it(
    tmp_path: Path, victim: Path
) -> None:
    link = tmp_path / "state-a.json"
    os.symlink(victim, link)
    storage.write_json_atomic(str(link), {"mine": 1})
    assert victim.read_text() == '{"precious": true}'
    assert not link.is_symlink() and json.loads(link.read_text()) == {"mine": 1}


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlinked_lock_file_is_refused(tmp_path: Path, victim: Path, dangling: bool) -> None:
    target = tmp_path / "outside" / "created-by-lock" if dangling else victim
    link = tmp_path / "state-a.json.lock"
    os.symlink(target, link)
    with pytest.raises(storage.StorageError, match="symlink"):
        storage.Lock(str(link)).acquire(0.1)
    with pytest.raises(storage.StorageError):
        storage.locked_update(str(tmp_path / "state-a.json"), lambda loaded: {}, now=NOW)
    assert not (tmp_path / "outside" / "created-by-lock").exists()
    assert victim.read_text() == '{"precious": true}'
    assert not storage.remove_unused_lock(str(link))
    assert link.is_symlink()


# --- corrupt documents


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "not JSON"),
        (b"", "empty"),
        (b"[1, 2]", "JSON object"),
        (b'"x"', "JSON object"),
        (b'{"a": 1} {"b": 2}', "extra data"),
        (b"\xff\xfe", "UTF-8"),
        (b'{"a": NaN}', "strict"),
    ],
)
def test_a_corrupt_file_is_quarantined_under_recovery(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "state-a.json"
    path.write_bytes(content)
    loaded = storage.load_json_object(str(path))
    assert loaded.doc is None and problem in (loaded.problem or "") and loaded.moved_to is None
    assert path.read_bytes() == content  # a reader without the lock leaves it alone
    loaded = storage.load_json_object(str(path), recover_at=NOW)
    expected = f"{path}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(NOW))}"
    assert loaded.doc is None and problem in (loaded.problem or "")
    assert loaded.moved_to == expected
    assert not path.exists()
    assert Path(expected).read_bytes() == content


def test_quarantines_in_the_same_second_do_not_overwrite_each_other(tmp_path: Path) -> None:
    path = tmp_path / "state-a.json"
    moved = []
    for i in range(3):
        path.write_text(f"corrupt {i}")
        moved.append(storage.quarantine(str(path), NOW))
    assert len(set(moved)) == 3
    assert [Path(m).read_text() for m in moved] == ["corrupt 0", "corrupt 1", "corrupt 2"]


def test_locked_update_recovers_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "state-a.json"
    path.write_text("{{{")
    seen = []

    def mutate(loaded: storage.Loaded) -> dict[str, object]:
        seen.append((loaded.doc, loaded.problem is not None, loaded.moved_to))
        return {"fresh": True}

    assert storage.locked_update(str(path), mutate, now=NOW) is True
    assert seen[0][0] is None and seen[0][1] is True and seen[0][2] is not None
    assert json.loads(path.read_text()) == {"fresh": True}
    assert Path(seen[0][2]).read_text() == "{{{"


def test_locked_update_writes_nothing_when_mutate_says_none(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    assert storage.locked_update(str(path), lambda loaded: None, now=NOW)
    assert not path.exists()
    storage.write_json_atomic(str(path), {"a": 1})
    before = path.stat().st_ino
    storage.locked_update(str(path), lambda loaded: None, now=NOW)
    assert path.stat().st_ino == before


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


# --- temp files left by killed writers


@pytest.mark.parametrize(
    ("name", "target"),
    [
        (".state-a.json.123.abcdef01.tmp", "state-a.json"),
        (".a.b.c.1.00000000.tmp", "a.b.c"),
        (".state-a.json.123.abcdefg1.tmp", None),
        (".state-a.json.12x.abcdef01.tmp", None),
        (".state-a.json.123.abcdef0.tmp", None),
        ("state-a.json.123.abcdef01.tmp", None),
        (".state-a.json.123.abcdef01.tmp.bak", None),
        (".x.tmp", None),
        ("settings.json", None),
    ],
)
def test_temp_target(name: str, target: str | None) -> None:
    assert storage.temp_target(name) == target


def test_temp_file_names_are_recognized() -> None:
    captured: list[str] = []
    original = storage.posix.replace

    def spy(src: str, dst: str) -> None:
        captured.append(src)
        raise OSError("stop here")

    storage.posix.replace = spy  # type: ignore[assignment]
    try:
        with pytest.raises(OSError):
            storage.write_bytes_atomic("/tmp/state-a.json", b"{}", durable=False)
    finally:
        storage.posix.replace = original
    assert storage.temp_target(os.path.basename(captured[0])) == "state-a.json"
    assert not os.path.exists(captured[0])


def test_sweep_temp_files_removes_only_ours(tmp_path: Path) -> None:
    old = NOW - 7200
    names = {
        ".state-a.json.123.abcdef01.tmp": (old, True),
        ".agent-state.json.9.00ff00ff.tmp": (old, True),
        ".state-b.json.123.abcdef01.tmp": (NOW, False),  # a writer may still be busy
        ".settings.json.123.abcdef01.tmp": (old, False),  # not a file we write here
        ".state-a.json.123.abcdefg1.tmp": (old, False),
        "state-a.json": (old, False),
        "notes.tmp": (old, False),
    }
    for name, (mtime, _) in names.items():
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, (mtime, mtime))
    removed = storage.sweep_temp_files(
        str(tmp_path), lambda target: target.startswith(("state-", "agent-state")), NOW - 3600
    )
    expected = {str(tmp_path / n) for n, (_, gone) in names.items() if gone}
    assert set(removed) == expected
    assert {p.name for p in tmp_path.iterdir()} == {n for n, (_, gone) in names.items() if not gone}
    assert storage.sweep_temp_files(str(tmp_path / "missing"), lambda t: True, NOW) == []


def test_a_document_holding_a_lone_surrogate_is_rewritten_as_it_was(tmp_path: Path) -> None:
    """Found by tests/fuzz: a state file with `"\\ud800"` in it (valid JSON) made
    every later update raise UnicodeEncodeError, so nothing more was recorded."""
    path = tmp_path / "state.json"
    path.write_text('{"alerts": ["\\ud800"], "files_read": []}')

    def mutate(loaded: storage.Loaded) -> dict[str, object]:
        assert loaded.doc is not None
        return {**loaded.doc, "files_read": ["/p/a"]}

    assert storage.locked_update(str(path), mutate, now=1_800_000_000)
    assert json.loads(path.read_bytes()) == {"alerts": ["\ud800"], "files_read": ["/p/a"]}


# --- rules mutation testing found unpinned (docs/mutation-testing.md)


def test_create_new_makes_a_private_file_once_and_never_follows_a_link(
    tmp_path: Path, victim: Path
) -> None:
    """`create_new`: True and the data in a new 0600 file; False, nothing changed, when
    something is there already — a file, or a symlink planted there (never followed)."""
    path = tmp_path / "lease"
    old = os.umask(0o022)
    try:
        assert storage.create_new(str(path), b"first") is True
    finally:
        os.umask(old)
    assert path.read_bytes() == b"first" and path.stat().st_mode & 0o777 == 0o600
    assert storage.create_new(str(path), b"second") is False
    assert path.read_bytes() == b"first"
    link = tmp_path / "planted"
    os.symlink(victim, link)
    assert storage.create_new(str(link), b"through the link") is False
    assert victim.read_text() == '{"precious": true}'


def test_create_new_failing_midway_leaves_no_file_and_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails after a partial write (a full disk) removes the half-made
    file (a reader would take it for a lease) and raises the write's own error."""
    path = tmp_path / "lease"
    real_write = posix.write

    def failing_write(fd: int, data: bytes) -> int:
        if len(data) > 3:
            return real_write(fd, bytes(data[:3]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(posix, "write", failing_write)
    with pytest.raises(OSError) as caught:
        storage.create_new(str(path), b"0123456789")
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("call", "syncs"),
    [
        (lambda p: storage.write_bytes_atomic(p, b"{}"), 1),
        (lambda p: storage.write_bytes_atomic(p, b"{}", durable=False), 0),
        (lambda p: storage.write_json_atomic(p, {}), 1),
        (lambda p: storage.write_json_atomic(p, {}, durable=False), 0),
        (lambda p: storage.locked_update(p, lambda loaded: {}, now=NOW), 1),
        (lambda p: storage.locked_update(p, lambda loaded: {}, now=NOW, durable=False), 0),
    ],
)
def test_writes_are_durable_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: Any, syncs: int
) -> None:
    """Documents whose loss in a crash matters are fsynced before the rename (the
    default); trail updates say `durable=False` and skip it."""
    synced: list[int] = []
    real_fsync = posix.fsync
    monkeypatch.setattr(posix, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    call(str(tmp_path / "doc.json"))
    assert len(synced) == syncs


def test_the_temporary_file_is_made_beside_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the document's own directory (a rename never crosses file systems; a killed
    writer's leftover is found by the sweep of that directory)."""
    renamed: list[tuple[str, str]] = []
    real_replace = posix.replace

    def recording_replace(src: str, dst: str) -> None:
        renamed.append((src, dst))
        real_replace(src, dst)

    monkeypatch.setattr(posix, "replace", recording_replace)
    storage.write_bytes_atomic(str(tmp_path / "doc.json"), b"{}")
    [(src, dst)] = renamed
    assert os.path.dirname(src) == str(tmp_path) and dst == str(tmp_path / "doc.json")
    assert storage.temp_target(os.path.basename(src)) == "doc.json"


def test_a_symlink_planted_at_the_temporary_name_is_never_written_through(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even a guessed temporary name (its random part made known here) is created
    `O_EXCL | O_NOFOLLOW`: the write fails, the link's target stays as it was."""
    monkeypatch.setattr(posix, "urandom", lambda n: b"\x01" * n)
    planted = tmp_path / f".doc.json.{os.getpid()}.01010101.tmp"
    os.symlink(victim, planted)
    with pytest.raises(FileExistsError):
        storage.write_bytes_atomic(str(tmp_path / "doc.json"), b"{}")
    assert victim.read_text() == '{"precious": true}'
    assert not (tmp_path / "doc.json").exists()


def test_a_failed_rename_closes_only_the_temporary_file() -> None:
    """When the rename fails after the temporary file was closed (the target is a
    directory), nothing else is closed: the process's stdout still writes."""
    code = (
        f"import sys, os, tempfile\nsys.path.insert(0, {SRC!r})\n"
        "from agent_hooks import storage\n"
        "d = tempfile.mkdtemp()\nos.mkdir(os.path.join(d, 'doc.json'))\n"
        "try:\n    storage.write_bytes_atomic(os.path.join(d, 'doc.json'), b'{}')\n"
        "except OSError:\n    pass\nprint('still writing', flush=True)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout == "still writing\n", proc.stderr


def test_an_error_that_is_no_oserror_propagates_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an OSError without a file name is given the temporary file's name; any
    other error (an interrupt) propagates unchanged, and no temporary file stays."""

    def interrupted(fd: int, data: bytes) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(posix, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        storage.write_bytes_atomic(str(tmp_path / "doc.json"), b"{}")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_quarantined_copies_are_numbered_from_two_at_the_documents_time(tmp_path: Path) -> None:
    """`<path>.corrupt-<UTC of the time given>`, then `-2`, `-3`: never the clock's
    time, never a gap."""
    path = tmp_path / "state-a.json"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(NOW))
    moved = []
    for i in range(3):
        path.write_text(f"corrupt {i}")
        moved.append(storage.quarantine(str(path), NOW))
    assert moved == [
        f"{path}.corrupt-{stamp}",
        f"{path}.corrupt-{stamp}-2",
        f"{path}.corrupt-{stamp}-3",
    ]


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


def test_sweep_temp_files_judges_each_entry_by_its_own_age_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link named like a temp file is judged by its own age, never its target's; one
    exactly at the cutoff stays; a file removed by someone else meanwhile ends nothing."""
    cutoff = 1_700_000_000
    old = tmp_path / "old.json"
    old.write_text("x")
    os.utime(old, (cutoff - 100, cutoff - 100))
    names = [f".doc{k}.json.1.0000000{k}.tmp" for k in range(4)]
    for name in names[:3]:
        (tmp_path / name).write_text("")
    os.utime(tmp_path / names[0], (cutoff - 10, cutoff - 10))  # vanishes before its stat
    os.utime(tmp_path / names[1], (cutoff, cutoff))  # at the cutoff: not older
    os.utime(tmp_path / names[2], (cutoff - 10, cutoff - 10))  # older: removed
    os.symlink(old, tmp_path / names[3])  # a fresh link to an old file: stays
    real_scandir = posix.scandir

    def scandir_then_lose_the_first(path: str) -> Any:
        entries = sorted(real_scandir(path), key=lambda e: e.name)
        os.unlink(tmp_path / names[0])
        return iter(entries)

    monkeypatch.setattr(posix, "scandir", scandir_then_lose_the_first)
    removed = storage.sweep_temp_files(str(tmp_path), lambda target: True, cutoff)
    assert removed == [str(tmp_path / names[2])]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["old.json", names[1], names[3]])


# --- documents written aside (an agent's state: rewritten on every hook) ---------------


def test_an_aside_write_leaves_the_document_0600_and_nothing_beside_it(tmp_path: Path) -> None:
    path = str(tmp_path / "state-a.json")
    storage.write_json_atomic(path, {"n": 1}, durable=False, aside=True)
    storage.write_json_atomic(path, {"n": 2}, durable=False, aside=True)
    assert json.loads(Path(path).read_text()) == {"n": 2}
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["state-a.json"]


def test_an_aside_write_never_renames_onto_an_existing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule that makes it cheap (see `storage`): each rename lands on a free
    name, in order: the document aside, the new one in, the old one removed."""
    path = tmp_path / "state-a.json"
    path.write_text('{"n": 1}')
    steps: list[tuple[str, ...]] = []
    rename, unlink = posix.rename, posix.unlink

    def renaming(src: str, dst: str) -> None:
        steps.append(("rename", os.path.basename(src)[:8], os.path.basename(dst)))
        assert not os.path.lexists(dst), dst
        rename(src, dst)

    def unlinking(name: str) -> None:
        steps.append(("unlink", os.path.basename(name)))
        unlink(name)

    monkeypatch.setattr(posix, "rename", renaming)
    monkeypatch.setattr(posix, "unlink", unlinking)
    storage.write_json_atomic(str(path), {"n": 2}, durable=False, aside=True)
    monkeypatch.undo()
    assert steps == [
        ("rename", "state-a.", ".state-a.json.aside"),
        ("rename", ".state-a", "state-a.json"),
        ("unlink", ".state-a.json.aside"),
    ]
    assert json.loads(path.read_text()) == {"n": 2}


def test_between_the_renames_readers_find_the_document_aside(tmp_path: Path) -> None:
    """What a reader sees while a write has moved the document and not yet put the
    new one in (or after a writer was killed there): the old document, whole."""
    path = tmp_path / "state-a.json"
    Path(storage.aside_path(str(path))).write_text('{"n": 1}')
    assert storage.aside_path(str(path)) == str(tmp_path / ".state-a.json.aside")
    assert storage.load_json_object(str(path), aside=True).doc == {"n": 1}
    assert storage.exists(str(path), aside=True)
    assert storage.load_json_object(str(path)).doc is None  # a reader that does not look
    assert not storage.exists(str(path))


def test_the_document_is_preferred_to_what_a_killed_writer_left_aside(tmp_path: Path) -> None:
    """Killed after putting the new document in: the old one stays aside until the
    next write; readers never take it for the document."""
    path = tmp_path / "state-a.json"
    path.write_text('{"n": 2}')
    Path(storage.aside_path(str(path))).write_text('{"n": 1}')
    assert storage.load_json_object(str(path), aside=True).doc == {"n": 2}
    storage.write_json_atomic(str(path), {"n": 3}, durable=False, aside=True)
    assert os.listdir(tmp_path) == ["state-a.json"]


def test_an_update_after_a_writer_was_killed_between_its_renames_keeps_its_document(
    tmp_path: Path,
) -> None:
    """The document is only aside (and a temporary file holds the new one the killed
    writer never put in): the next update starts from the document and puts its own
    result in place of both."""
    path = tmp_path / "state-a.json"
    Path(storage.aside_path(str(path))).write_text('{"n": 1, "kept": true}')
    (tmp_path / ".state-a.json.4242.0badc0de.tmp").write_text('{"n": 2}')

    def add_one(loaded: storage.Loaded) -> dict[str, Any]:
        assert loaded.doc is not None
        return {**loaded.doc, "n": loaded.doc["n"] + 1}

    assert storage.locked_update(str(path), add_one, now=NOW, durable=False, aside=True)
    assert json.loads(path.read_text()) == {"n": 2, "kept": True}
    assert sorted(os.listdir(tmp_path)) == [
        ".state-a.json.4242.0badc0de.tmp",  # swept by age (`sweep_temp_files`)
        "state-a.json",
        "state-a.json.lock",
    ]


def test_a_corrupt_document_found_aside_is_quarantined_under_the_documents_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state-a.json"
    Path(storage.aside_path(str(path))).write_text("{half")
    assert storage.locked_update(str(path), lambda loaded: {"fresh": True}, now=NOW, aside=True)
    stamp = storage.utc_stamp(NOW)
    assert sorted(os.listdir(tmp_path)) == [
        "state-a.json",
        f"state-a.json.corrupt-{stamp}",
        "state-a.json.lock",
    ]
    assert (tmp_path / f"state-a.json.corrupt-{stamp}").read_text() == "{half"


def test_a_failed_second_rename_puts_the_old_document_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state-a.json"
    path.write_text('{"n": 1}')
    rename = posix.rename

    def failing(src: str, dst: str) -> None:
        if src.endswith(".tmp"):
            raise OSError(errno.EIO, "I/O error", src)
        rename(src, dst)

    monkeypatch.setattr(posix, "rename", failing)
    with pytest.raises(OSError, match="I/O error"):
        storage.write_json_atomic(str(path), {"n": 2}, durable=False, aside=True)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["state-a.json"]
    assert json.loads(path.read_text()) == {"n": 1}


# A process rewriting one document aside as fast as it can (under its lock), and
# processes reading it without a lock meanwhile: none may ever find it missing or
# half written. Started together by a file; the writer's last write ends the readers.
ASIDE_WRITER = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
path, count = sys.argv[1], int(sys.argv[2])
for n in range(1, count + 1):
    storage.locked_update(
        path, lambda loaded: {{"n": n, "pad": "x" * (n % 7 * 3000)}}, now=0, durable=False,
        aside=True,
    )
"""
ASIDE_READER = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
path, last, aside = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "aside"
reads = missing = 0
while True:
    loaded = storage.load_json_object(path, aside=aside)
    present = storage.exists(path, aside=aside)
    reads += 1
    if loaded.doc is None or loaded.problem or not present:
        missing += 1
    elif loaded.doc["n"] == last:
        break
print(reads, missing, flush=True)
"""


def test_readers_never_find_a_document_written_aside_missing(tmp_path: Path) -> None:
    path = str(tmp_path / "state-a.json")
    storage.write_json_atomic(path, {"n": 0}, durable=False, aside=True)
    count = 400
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", ASIDE_READER, path, str(count), "aside"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    writer = subprocess.run(
        [sys.executable, "-c", ASIDE_WRITER, path, str(count)], capture_output=True, timeout=300
    )
    assert writer.returncode == 0, writer.stderr
    for reader in readers:
        out, _ = reader.communicate(timeout=300)
        reads, missing = map(int, out.split())
        assert reads > 0 and missing == 0, out
    assert sorted(os.listdir(tmp_path)) == ["state-a.json", "state-a.json.lock"]
