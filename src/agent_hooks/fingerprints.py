"""What a file looked like: its fingerprint, and whether it changed since one was
taken. The one owner of file identity: the trail (what an agent last saw),
freshness (has a resumed conversation's context moved?) and held files (has
someone else changed what a writer holds?) all ask here.

Invariants:

* A fingerprint is one string, `"<mtime_ns>:<size>:<checksum>"` in lower-case hex
  (`GONE`, "0:0:0", for a file that is no more). One string, not a list of three
  numbers: the agent's state keeps one per trail file (300 in a long session) and
  every hook parses that state, every writing hook encodes it — as a string a
  fingerprint costs a third of the instructions (docs/measurements.md § 1).
  Stored values are read back through `read`, which also accepts the
  `[mtime_ns, size, checksum]` lists of earlier releases, so an upgrade changes
  nothing that was recorded.
* One name: in code a fingerprint is a `fingerprint`, and files' fingerprints by path
  a `fingerprint_of`; on disk it is stored as `fp` beside a lease and a held file
  and under `fingerprints` in an agent's trail (field names other tools read,
  which stay).
* A fingerprint is taken of a regular file only; None when there is none (missing,
  a directory, a FIFO, unreadable). The checksum covers the whole file up to 2 MiB
  and the first and last MiB beyond that: the content read as one integer modulo
  the Mersenne prime 2**61-1, XOR its length (a polynomial hash computed in C by
  `int.from_bytes`, a chunk at a time: 1.1 ms a MiB), free of the `zlib`
  extension's load time.
* `changed` decides with the cheapest test that can: the same mtime and size is
  unchanged (nothing read); else the same size and checksum (`content`) is
  unchanged (touched, or rewritten with the same content: a formatter that changed
  nothing); else, or when the file is gone, changed.

Built-ins only: every PostToolUse fingerprints what its tool touched.
"""

from __future__ import annotations

import posix

FULL_HASH_LIMIT = 2 << 20
_PART = 1 << 20
_MERSENNE_61 = (1 << 61) - 1
_CHUNK = 61 * 64  # bytes: 8 * 61 * 64 bits, a multiple of 61
S_IFMT, S_IFREG = 0o170000, 0o100000
GONE = "0:0:0"
_HEX = frozenset("0123456789abcdef")


def checksum(data: bytes) -> int:
    """A 61-bit content checksum (see the module docstring): the content as one
    little-endian integer modulo 2**61 - 1, summed a chunk at a time. A chunk's bits
    are a multiple of 61 and 2**61 is 1 modulo 2**61 - 1, so each chunk counts as its
    own value; one integer of the whole file would cost a division a digit at a time
    (9 ms a MiB here, against 1.1)."""
    view = memoryview(data)
    total = 0
    for start in range(0, len(view), _CHUNK):
        total += int.from_bytes(view[start : start + _CHUNK], "little")
    return total % _MERSENNE_61 ^ len(data)


def of(path: str) -> str | None:
    """The fingerprint of the regular file at `path`, or None."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC | posix.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        st = posix.fstat(fd)
        if (st.st_mode & S_IFMT) != S_IFREG:
            return None
        if st.st_size <= FULL_HASH_LIMIT:
            data = posix.read(fd, st.st_size + 1)  # not the limit: that maps 2 MiB
        else:
            data = posix.read(fd, _PART)
            posix.lseek(fd, -_PART, 2)  # from the end
            data += posix.read(fd, _PART)
        return f"{st.st_mtime_ns:x}:{st.st_size:x}:{checksum(data):x}"
    except OSError:
        return None
    finally:
        posix.close(fd)


def read(recorded: object) -> str | None:
    """The fingerprint a stored value holds: the string form when well formed, an
    earlier release's `[mtime_ns, size, checksum]` (non-negative integers) in the
    string form; None for anything else."""
    if isinstance(recorded, str):
        parts = recorded.split(":")
        if len(parts) == 3 and all(p and len(p) <= 20 and _HEX.issuperset(p) for p in parts):
            return recorded
        return None
    if (
        isinstance(recorded, list)
        and len(recorded) == 3
        and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in recorded)
    ):
        return "{:x}:{:x}:{:x}".format(*recorded)
    return None


def mtime_ns(fingerprint: str) -> int:
    """When the file was last modified, as `fingerprint` saw it (0 for `GONE`)."""
    return int(fingerprint.partition(":")[0], 16)


def content(fingerprint: str) -> str:
    """What a fingerprint says of the content alone (size and checksum)."""
    return fingerprint.partition(":")[2]


def same(current: str | None, recorded: str) -> bool:
    """Is a file whose fingerprint is `current` (taken just now; None: it has none,
    gone or no regular file) as `recorded` saw it? Decided as `changed` decides: the
    same mtime and size, else the same size and checksum."""
    if current is None:
        return False
    if current.rpartition(":")[0] == recorded.rpartition(":")[0]:
        return True
    return content(current) == content(recorded)


def changed(path: str, recorded: str) -> str | None:
    """The file's fingerprint now when it differs in content from `recorded`
    (`GONE` when it is gone), else None (see the module docstring)."""
    try:
        st = posix.stat(path)
    except (OSError, ValueError):
        return GONE
    if recorded.startswith(f"{st.st_mtime_ns:x}:{st.st_size:x}:"):
        return None
    now = of(path)
    if now is None:
        return GONE
    return None if content(now) == content(recorded) else now


def version_key(path: str) -> tuple[int, int, int, int] | None:
    """What tells one version of a regular file from the next without reading it:
    (inode, size, mtime, ctime in ns) — a replaced, rewritten or touched file has
    another; None when there is no regular file there, OSError when it cannot be
    looked at (a symlink loop, a directory on its way that cannot be searched)."""
    try:
        st = posix.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if (st.st_mode & S_IFMT) != S_IFREG:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
