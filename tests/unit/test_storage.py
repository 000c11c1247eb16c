"""storage, its documents: atomic writes, symlink refusal, quarantine of corrupt files, temp
files left by killed writers. The lock: test_storage_lock.py; documents written aside:
test_storage_aside.py."""

from __future__ import annotations

import errno
import json
import os
import posix
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import storage

SRC = str(Path(storage.__file__).resolve().parents[1])
NOW = 1_800_000_000.0

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
