"""fingerprints: what counts as a change of a file (the rules of its module docstring).
`of` and `checksum` on real files are also tested with the trail (tests/unit/agents/test_trail.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks import fingerprints

GONE = [0, 0, 0]


def test_a_file_with_the_same_mtime_and_size_is_unchanged_without_being_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    st = path.stat()
    # a checksum that cannot be the content's: only mtime and size were compared
    assert fingerprints.changed(str(path), [st.st_mtime_ns, st.st_size, -1]) is None


def test_a_touched_file_with_the_same_content_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    os.utime(path, ns=(mark[0] + 10**9, mark[0] + 10**9))
    assert fingerprints.changed(str(path), mark) is None


def test_new_content_is_a_change_and_the_new_fingerprint_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    path.write_text("beta!\n")  # the same size
    os.utime(path, ns=(mark[0] + 10**9, mark[0] + 10**9))
    now = fingerprints.changed(str(path), mark)
    assert now == fingerprints.of(str(path)) and now is not None and now[2] != mark[2]


def test_the_same_checksum_at_another_size_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    assert fingerprints.changed(str(path), [mark[0] - 1, mark[1] + 1, mark[2]]) == mark


@pytest.mark.parametrize("what", ["missing", "directory", "fifo"])
def test_a_file_gone_or_no_longer_regular_is_changed_to_nothing(tmp_path: Path, what: str) -> None:
    path = tmp_path / "a.txt"
    if what == "directory":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)
    mark = [1764000000123456789, 6, 12345]
    assert fingerprints.changed(str(path), mark) == GONE
    assert fingerprints.of(str(path)) is None


def test_a_path_python_cannot_pass_to_the_system_is_gone() -> None:
    assert fingerprints.changed("bad\x00path", [1, 2, 3]) == GONE
    assert fingerprints.of("bad\x00path") is None


@pytest.mark.parametrize(
    ("recorded", "valid"),
    [
        ([1, 2, 3], True),
        ([0, 0, 0], True),
        ([1, 2], False),
        ([1, 2, 3, 4], False),
        ((1, 2, 3), False),
        ([1, 2, "3"], False),
        ([1, 2.0, 3], False),
        ([True, 2, 3], False),
        ([1, 2, None], False),
        (None, False),
        ("123", False),
    ],
)
def test_only_a_list_of_three_integers_is_a_fingerprint(recorded: object, valid: bool) -> None:
    assert fingerprints.valid(recorded) is valid


def test_the_checksum_tells_lengths_apart() -> None:
    """Leading zero bytes read as the same integer: the length, XORed in, tells them apart."""
    assert fingerprints.checksum(b"a") != fingerprints.checksum(b"a\x00")
    assert fingerprints.checksum(b"") == 0
    assert fingerprints.checksum(b"\x01") == 1 ^ 1
    # little-endian, so that a fingerprint stored by one release matches the next one's
    assert fingerprints.checksum(b"\x01\x02") == 0x0201 ^ 2
