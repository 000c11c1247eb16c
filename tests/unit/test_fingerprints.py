"""fingerprints: what counts as a change of a file (the rules of its module docstring).
`of` and `checksum` on real files are also tested with the trail (tests/unit/agents/test_trail.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks import fingerprints

GONE = "0:0:0"


def mark_of(mtime_ns: int, size: int, checksum: int) -> str:
    return f"{mtime_ns:x}:{size:x}:{checksum:x}"


def test_a_fingerprint_is_mtime_size_and_checksum_in_hex(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"\x01\x02")
    st = path.stat()
    assert fingerprints.of(str(path)) == mark_of(st.st_mtime_ns, 2, 0x0201 ^ 2)
    assert fingerprints.mtime_ns(mark_of(st.st_mtime_ns, 2, 7)) == st.st_mtime_ns
    assert fingerprints.content(mark_of(st.st_mtime_ns, 2, 7)) == "2:7"
    assert fingerprints.GONE == GONE and fingerprints.mtime_ns(GONE) == 0


def test_a_file_with_the_same_mtime_and_size_is_unchanged_without_being_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    st = path.stat()
    # a checksum that cannot be the content's: only mtime and size were compared
    assert fingerprints.changed(str(path), f"{st.st_mtime_ns:x}:{st.st_size:x}:zz") is None


def test_the_mtime_and_size_compared_are_whole_fields(tmp_path: Path) -> None:
    """A recorded mtime that merely begins like the file's is not the same mtime."""
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    st = path.stat()
    mark = fingerprints.of(str(path))
    assert mark is not None
    longer = f"{st.st_mtime_ns:x}0:{st.st_size:x}:1"  # 16 times the mtime: another time
    assert fingerprints.changed(str(path), longer) == mark
    larger = f"{st.st_mtime_ns:x}:{st.st_size:x}a:1"  # the same mtime, another size
    assert fingerprints.changed(str(path), larger) == mark


def test_a_touched_file_with_the_same_content_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    later = fingerprints.mtime_ns(mark) + 10**9
    os.utime(path, ns=(later, later))
    assert fingerprints.changed(str(path), mark) is None


def test_new_content_is_a_change_and_the_new_fingerprint_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    path.write_text("beta!\n")  # the same size
    later = fingerprints.mtime_ns(mark) + 10**9
    os.utime(path, ns=(later, later))
    now = fingerprints.changed(str(path), mark)
    assert now == fingerprints.of(str(path)) and now is not None
    assert fingerprints.content(now) != fingerprints.content(mark)


def test_the_same_checksum_at_another_size_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    _, size, checksum = (int(part, 16) for part in mark.split(":"))
    other = mark_of(fingerprints.mtime_ns(mark) - 1, size + 1, checksum)
    assert fingerprints.changed(str(path), other) == mark


@pytest.mark.parametrize("what", ["missing", "directory", "fifo"])
def test_a_file_gone_or_no_longer_regular_is_changed_to_nothing(tmp_path: Path, what: str) -> None:
    path = tmp_path / "a.txt"
    if what == "directory":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)
    mark = mark_of(1764000000123456789, 6, 12345)
    assert fingerprints.changed(str(path), mark) == GONE
    assert fingerprints.of(str(path)) is None


def test_a_path_python_cannot_pass_to_the_system_is_gone() -> None:
    assert fingerprints.changed("bad\x00path", "1:2:3") == GONE
    assert fingerprints.of("bad\x00path") is None


@pytest.mark.parametrize(
    ("recorded", "read"),
    [
        ("1:2:3", "1:2:3"),
        ("18b2f3c4d5e6f7a8:4d2:1fffffffffffffff", "18b2f3c4d5e6f7a8:4d2:1fffffffffffffff"),
        (GONE, GONE),
        # an earlier release's lists, read as the same fingerprint in today's form
        ([1, 2, 3], "1:2:3"),
        ([1764000000123456789, 1234, 2**61 - 2], mark_of(1764000000123456789, 1234, 2**61 - 2)),
        ([0, 0, 0], GONE),
        # anything else is no fingerprint
        ("1:2", None),
        ("1:2:3:4", None),
        ("1::3", None),
        ("1:2:3 ", None),
        ("1:2:G", None),
        ("1:2:A", None),
        ("-1:2:3", None),
        ("1" * 21 + ":2:3", None),
        ("", None),
        ([1, 2], None),
        ([1, 2, 3, 4], None),
        ((1, 2, 3), None),
        ([1, 2, "3"], None),
        ([1, 2.0, 3], None),
        ([True, 2, 3], None),
        ([1, -2, 3], None),
        ([1, 2, None], None),
        (None, None),
        (123, None),
    ],
)
def test_a_stored_fingerprint_is_read_in_todays_form_or_not_at_all(
    recorded: object, read: str | None
) -> None:
    assert fingerprints.read(recorded) == read


def test_a_fingerprint_read_from_an_earlier_release_matches_the_file_it_was_taken_of(
    tmp_path: Path,
) -> None:
    """An upgrade changes nothing recorded: the list an earlier release stored for a
    file is unchanged against that file."""
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    mark = fingerprints.of(str(path))
    assert mark is not None
    legacy = [int(part, 16) for part in mark.split(":")]
    read = fingerprints.read(legacy)
    assert read == mark and fingerprints.changed(str(path), read) is None


def test_the_checksum_tells_lengths_apart() -> None:
    """Leading zero bytes read as the same integer: the length, XORed in, tells them apart."""
    assert fingerprints.checksum(b"a") != fingerprints.checksum(b"a\x00")
    assert fingerprints.checksum(b"") == 0
    assert fingerprints.checksum(b"\x01") == 1 ^ 1
    # little-endian, so that a fingerprint stored by one release matches the next one's
    assert fingerprints.checksum(b"\x01\x02") == 0x0201 ^ 2


CHUNK = 61 * 64
LENGTHS = [0, 1, 7, 8, 61, 488, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 65_536, 100_003]


@pytest.mark.parametrize("length", LENGTHS)
def test_the_checksum_is_the_content_modulo_the_mersenne_prime_at_every_length(length: int) -> None:
    """The checksum is summed a chunk at a time, not divided whole: the value every release
    stored, `int.from_bytes(content) % (2**61 - 1) ^ length`, for any content — random,
    and the largest (every byte 0xff) and smallest (0x00) of its length — on either side
    of a chunk's end."""
    for data in (os.urandom(length), b"\xff" * length, b"\x00" * length, b"\x01" * length):
        expected = int.from_bytes(data, "little") % ((1 << 61) - 1) ^ length
        assert fingerprints.checksum(data) == expected


def test_a_content_that_is_the_modulus_itself_folds_to_zero() -> None:
    """2**61 - 1 (61 one bits) and its multiples are 0, whole or spread over chunks."""
    mersenne = (1 << 61) - 1
    for value in (mersenne, mersenne * 2, mersenne << 61, mersenne * ((1 << 40_000) + 1)):
        data = value.to_bytes((value.bit_length() + 7) // 8, "little")
        assert fingerprints.checksum(data) == 0 ^ len(data)


def test_a_fingerprint_taken_just_now_is_judged_as_changed_judges_the_file(
    tmp_path: Path,
) -> None:
    """`same(of(path), recorded)` is `changed(path, recorded) is None`, for each case
    above: the shell aftermath judges with the fingerprint it took, not another look."""
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    now = fingerprints.of(str(path))
    assert now is not None
    mtime, size, checksum = (int(part, 16) for part in now.split(":"))
    recorded = [
        now,
        mark_of(mtime, size, 0xBAD),  # the same mtime and size: not read
        mark_of(mtime - 10**9, size, checksum),  # touched, the same content
        mark_of(mtime - 10**9, size, checksum + 1),  # new content of the same size
        mark_of(mtime - 1, size + 1, checksum),  # the same checksum at another size
        mark_of(mtime * 16, size, 0xBAD),  # an mtime that merely begins like it
        GONE,
    ]
    for mark in recorded:
        assert fingerprints.same(now, mark) is (fingerprints.changed(str(path), mark) is None)
    assert [fingerprints.same(now, mark) for mark in recorded] == [
        True, True, True, False, False, False, False,
    ]  # fmt: skip
    assert not fingerprints.same(None, now)  # gone, or no regular file


def test_a_version_key_moves_with_any_new_version_and_tells_absence_from_trouble(
    tmp_path: Path,
) -> None:
    """`version_key`: the same for an untouched file; another for a replacement that kept
    its size and mtime; None for nothing, a directory or a FIFO; OSError for a symlink
    loop (what it holds cannot be known)."""
    path = tmp_path / "f"
    assert fingerprints.version_key(str(path)) is None
    path.write_text("abc")
    first = fingerprints.version_key(str(path))
    assert first is not None and fingerprints.version_key(str(path)) == first
    st = path.stat()
    other = tmp_path / "g"
    other.write_text("xyz")
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
    os.replace(other, path)  # a replacement (another inode: both existed at once)
    assert fingerprints.version_key(str(path)) != first
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "p")
    assert fingerprints.version_key(str(tmp_path / "d")) is None
    assert fingerprints.version_key(str(tmp_path / "p")) is None
    assert fingerprints.version_key(str(path / "under-a-file")) is None
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError):
        fingerprints.version_key(str(tmp_path / "loop"))
