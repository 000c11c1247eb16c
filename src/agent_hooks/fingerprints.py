"""What a file looked like: its fingerprint `[mtime_ns, size, checksum]`, and
whether it changed since one was taken. The one owner of file identity: the
trail (what an agent last saw), freshness (has a resumed conversation's context
moved?) and held files (has someone else changed what a writer holds?) all ask
here.

Invariants:

* A fingerprint is taken of a regular file only; None when there is none (missing,
  a directory, a FIFO, unreadable). The checksum covers the whole file up to 2 MiB
  and the first and last MiB beyond that: the content read as one integer modulo
  the Mersenne prime 2**61-1, XOR its length (a polynomial hash computed in C by
  `int.from_bytes`), free of the `zlib` extension's load time.
* `changed` decides with the cheapest test that can: the same mtime and size is
  unchanged (nothing read); else the same size and checksum is unchanged (touched,
  or rewritten with the same content: a formatter that changed nothing); else, or
  when the file is gone, changed.

Built-ins only: every PostToolUse fingerprints what its tool touched.
"""

from __future__ import annotations

import posix

FULL_HASH_LIMIT = 2 << 20
_PART = 1 << 20
_MERSENNE_61 = (1 << 61) - 1
S_IFMT, S_IFREG = 0o170000, 0o100000


def checksum(data: bytes) -> int:
    """A 61-bit content checksum (see the module docstring)."""
    return int.from_bytes(data, "little") % _MERSENNE_61 ^ len(data)


def of(path: str) -> list[int] | None:
    """`[mtime_ns, size, checksum]` of the regular file at `path`, or None."""
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
        return [st.st_mtime_ns, st.st_size, checksum(data)]
    except OSError:
        return None
    finally:
        posix.close(fd)


def valid(recorded: object) -> bool:
    return (
        isinstance(recorded, list)
        and len(recorded) == 3
        and all(isinstance(x, int) and not isinstance(x, bool) for x in recorded)
    )


def changed(path: str, recorded: list[int]) -> list[int] | None:
    """The file's fingerprint now when it differs in content from `recorded`
    (`[0, 0, 0]` when it is gone), else None (see the module docstring)."""
    try:
        st = posix.stat(path)
    except (OSError, ValueError):
        return [0, 0, 0]
    if st.st_mtime_ns == recorded[0] and st.st_size == recorded[1]:
        return None
    now = of(path)
    if now is None:
        return [0, 0, 0]
    return None if now[1:] == recorded[1:] else now
