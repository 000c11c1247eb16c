"""storage's documents written aside (an agent's state, rewritten on every hook): two renames,
and readers between them, killed writers and failed renames never lose the document."""

from __future__ import annotations

import errno
import json
import os
import posix
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import storage

SRC = str(Path(storage.__file__).resolve().parents[1])
NOW = 1_800_000_000.0

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
