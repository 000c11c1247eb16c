"""Which tracked files of a work tree may hold uncommitted work, as git's index
tells it, read without running git: the hot path starts no process (ADR-0005),
and a whole-tree rewrite (`git stash`, `git reset --hard`) is refused while it
would sweep away modified files another writer reserved (ADR-0020's amendment).

Invariants:

* A tracked file is *modified* as `git status` finds it: its index entry's stat
  data (ctime and mtime in ns, inode, size, file type and executable bit) is
  compared with `lstat` of the file, and where they differ — or the entry is
  racily clean (modified in the same instant as the index, or after it) — its
  content is hashed as git hashes a blob (SHA-1) and compared with the entry's
  object id. A missing file, an unmerged entry (a conflict) and an intent-to-add
  entry are modified, and so is any moved stat data where no hash can be compared
  (a SHA-256 repository, a Python without `_sha1`); a skip-worktree entry (outside a
  sparse checkout), a sparse index's directory and a submodule are not looked at.
* Staged work (the index unlike the last commit) is read from the index's cache
  of trees (its TREE extension): a directory whose cached tree git invalidated
  (a `git add` or `git rm` below it since the last commit, reset or checkout) may
  hold staged work, as a whole. Never fewer: a `git add` of an unchanged file
  invalidates too, and is counted.
* What cannot be told within the bounds is `unsure`, with why, never "unmodified":
  an index over MAX_INDEX_BYTES or MAX_ENTRIES, more than MAX_FILES tracked files
  under one area's literal path, more than MAX_READ bytes of content to hash, a
  split index (`core.splitIndex`), an index in no form git writes (damaged, cut
  short, an unknown version), no cached trees. Its checksum is not verified: git
  itself refuses an index whose checksum fails, so the rewrite would not run.
  `changes` raises nothing (random damage of each version is a test).
* It reads the index (once), `lstat`s each tracked file that lies in an area, and
  reads only the content of those whose stat data moved; it writes nothing.

Not seen: untracked files (the index does not list them: `git clean` and `git
stash -u` are the caller's to judge), cached trees that are not the last
commit's (after `git reset --soft` or `git read-tree` without `-u`), and a file
changed by another process while it is read. Built-ins only (and `_sha1`, loaded
only to hash a file whose stat data moved).
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable

    # (the area's literal leading directories or file, relative to the work tree and
    # "" for none; whether a path relative to the work tree lies in the area; whether
    # every path below the literal one does, unasked: `src/**`, `**`)
    Area = tuple[str, Callable[[str], bool], bool]

MAX_INDEX_BYTES = 8 << 20  # read at most: about 80,000 entries
MAX_ENTRIES = 10_000  # index entries walked at most (each ~1 µs)
MAX_FILES = 2_000  # files matched (~3 µs each, unless `below`) and `lstat`ed in one area at most
MAX_READ = 4 << 20  # bytes of content hashed at most, over every file
MAX_TREES = 10_000  # cached trees read at most

_FILE, _LINK, _GITLINK = 0o100000, 0o120000, 0o160000
_TYPE = 0o170000
_STAGE, _EXTENDED, _NAME_LENGTH = 0x3000, 0x4000, 0xFFF
_SKIP_WORKTREE, _INTENT_TO_ADD = 0x4000, 0x2000
_NS = 1_000_000_000
_U32 = 0xFFFFFFFF


class Finding:
    """What one area holds: `changed`, the modified files found (relative to the
    work tree, in the index's order); `staged`, the directory ("" the top) under
    which the index may hold staged work, or None; `unsure`, why it cannot be told
    (None: it was)."""

    __slots__ = ("changed", "staged", "unsure")

    def __init__(self) -> None:
        self.changed: list[str] = []
        self.staged: str | None = None
        self.unsure: str | None = None

    @property
    def clean(self) -> bool:
        """Nothing uncommitted found, and nothing left untold."""
        return not self.changed and self.staged is None and self.unsure is None


class _Unsure(Exception):
    """The index cannot be read within the bounds: the message says why."""


def changes(git_dir: str, common_dir: str | None, root: str, areas: list[Area]) -> list[Finding]:
    """A `Finding` for each area of the work tree `root`, whose own git directory is
    `git_dir` (its index) and whose repository's is `common_dir` (its object
    format)."""
    found = [Finding() for _ in areas]
    if not areas:
        return found
    try:
        _look(git_dir, common_dir, root, areas, found)
    except _Unsure as why:
        for finding in found:
            if finding.unsure is None:
                finding.unsure = str(why)
    return found


def _look(
    git_dir: str, common_dir: str | None, root: str, areas: list[Area], found: list[Finding]
) -> None:
    read = _index(fs.join(git_dir, "index"))
    if read is None:
        return  # no index: nothing is tracked, nothing staged
    data, stamp = read
    if len(data) < 12 or data[:4] != b"DIRC":
        raise _Unsure("git's index is not in a form git writes")
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        raise _Unsure(f"git's index is of version {version}, not read here")
    if count > MAX_ENTRIES:
        raise _Unsure(f"git's index lists {count} files, more than the {MAX_ENTRIES} read here")
    sha1 = _sha1_repository(common_dir)
    oid_len = 20 if sha1 else 32
    end = len(data) - oid_len  # the index's own checksum ends it
    flags_at = 40 + oid_len
    by_prefix: dict[bytes, list[int]] = {}
    wide: list[int] = []
    for k, (prefix, _, _) in enumerate(areas):
        if prefix:
            by_prefix.setdefault(prefix.encode("utf-8", "surrogateescape"), []).append(k)
        else:
            wide.append(k)
    top = root.encode("utf-8", "surrogateescape") + b"/"
    looked = [0] * len(areas)
    budget = [MAX_READ]
    p, prev, last_dir, here = 12, b"", b"", wide
    for _ in range(count):
        q = p + flags_at + 2
        if q > end:
            raise _Unsure("git's index ends early")
        flags = (data[q - 2] << 8) | data[q - 1]
        extra = 0
        if flags & _EXTENDED:
            if version < 3:
                raise _Unsure("git's index is damaged")
            extra = (data[q] << 8) | data[q + 1]
            q += 2
        if version == 4:  # the name after what it keeps of the one before
            byte = data[q]
            q += 1
            strip = byte & 0x7F
            while byte & 0x80:
                if q >= end or strip > len(prev):  # past the end, or more than there is
                    raise _Unsure("git's index is damaged")
                byte = data[q]
                q += 1
                strip = ((strip + 1) << 7) | (byte & 0x7F)
            stop = data.find(b"\0", q, end)
            if stop < 0 or strip > len(prev):
                raise _Unsure("git's index is damaged")
            name = prev[: len(prev) - strip] + data[q:stop]
            following = stop + 1
        else:
            length = flags & _NAME_LENGTH
            stop = q + length if length < _NAME_LENGTH else data.find(b"\0", q + length, end)
            if stop < 0 or stop >= end or data[stop] != 0 or data.find(b"\0", q, stop) >= 0:
                raise _Unsure("git's index is damaged")  # no NUL where the name ends, or one in it
            name = data[q:stop]
            following = p + ((stop - p + 8) & ~7)  # NULs pad each entry to 8 bytes
        prev = name
        cut = name.rfind(b"/") + 1
        if name[:cut] != last_dir:  # the areas that hold a directory's files, once for them all
            if all(finding.unsure is not None for finding in found):
                return  # nothing more to tell
            last_dir = name[:cut]
            here = wide
            j = last_dir.find(b"/")
            while j >= 0 and by_prefix:
                here = here + by_prefix.get(last_dir[:j], [])
                j = last_dir.find(b"/", j + 1)
        own = by_prefix.get(name) if by_prefix else None
        if here or own:
            _entry(data, p, name, flags, extra, stamp, oid_len, sha1, top,
                   here, own or [], areas, found, looked, budget)  # fmt: skip
        p = following
    trees = _trees(data, p, end, oid_len)
    if count and trees is None:
        raise _Unsure("git's index keeps no trees to compare with the last commit")
    for k, (prefix, _, _) in enumerate(areas):
        if trees is not None and found[k].unsure is None:
            found[k].staged = _staged(trees, prefix)


def _entry(
    data: bytes,
    p: int,
    name: bytes,
    flags: int,
    extra: int,
    stamp: int,
    oid_len: int,
    sha1: bool,
    top: bytes,
    below: list[int],
    at: list[int],
    areas: list[Area],
    found: list[Finding],
    looked: list[int],
    budget: list[int],
) -> None:
    """Judge the index entry at `p` for the areas that may hold it: those whose
    literal path lies above it (`below`) or is its name (`at`) — each file counted,
    at most MAX_FILES an area, before the area's pattern is asked (unless every path
    below its literal one lies in it)."""
    mode = (data[p + 26] << 8) | data[p + 27]  # the low half: type and permissions
    kind = mode & _TYPE
    if kind not in (_FILE, _LINK) or extra & _SKIP_WORKTREE:
        return  # a submodule (its own index), a sparse directory, a file not checked out
    text = None
    hits = []
    for group, under in ((below, True), (at, False)):
        for k in group:
            if found[k].unsure is not None:
                continue
            looked[k] += 1
            if looked[k] > MAX_FILES:
                found[k].unsure = f"more than {MAX_FILES} tracked files lie where it reaches"
            elif under and areas[k][2]:
                hits.append(k)
            else:
                if text is None:
                    text = name.decode("utf-8", "surrogateescape")
                if areas[k][1](text):
                    hits.append(k)
    if not hits:
        return
    if text is None:
        text = name.decode("utf-8", "surrogateescape")
    if flags & _STAGE or extra & _INTENT_TO_ADD:
        modified: bool | None = True  # a conflict, or a file added to be
    else:
        modified = _modified(top + name, data, p, mode, stamp, oid_len, sha1, budget)
    for k in hits:
        if modified is None:
            found[k].unsure = f"{text} is too large to compare with git's index here"
        elif modified and text not in found[k].changed[-1:]:  # a conflict's stages: once
            found[k].changed.append(text)


def _modified(
    path: bytes,
    data: bytes,
    p: int,
    mode: int,
    stamp: int,
    oid_len: int,
    sha1: bool,
    budget: list[int],
) -> bool | None:
    """Does the file at `path` differ from its index entry at `p` (None: its
    content cannot be compared within the budget)?"""
    try:
        st = posix.lstat(path)
    except OSError:
        return True  # gone (its deletion is work too), or not to be looked at: counted
    kind = st.st_mode & _TYPE
    if kind != mode & _TYPE or (kind == _FILE and (st.st_mode ^ mode) & 0o100):
        return True
    m = st.st_mtime_ns
    if (
        m < stamp  # else racily clean: written in the instant the index was, or after
        and int.from_bytes(data[p : p + 16], "big")  # ctime, mtime: 32-bit s, then ns
        == (int(st[9]) & _U32) << 96  # st[9], st[8]: ctime's and mtime's whole seconds
        | (st.st_ctime_ns % _NS) << 64
        | (int(st[8]) & _U32) << 32
        | m % _NS
        and int.from_bytes(data[p + 20 : p + 24], "big") == st.st_ino & _U32
        and int.from_bytes(data[p + 36 : p + 40], "big") == st.st_size & _U32
    ):
        return False
    if not sha1:
        return True  # a SHA-256 repository: no hash at hand to compare with, counted
    if st.st_size > budget[0]:
        return None
    budget[0] -= st.st_size
    content = _content(path, kind, st.st_size)
    if content is None:
        return True
    try:
        import _sha1  # hashlib's own C module, without hashlib (which loads OpenSSL)
    except ImportError:  # a Python built without it: no hash at hand, counted
        return True
    oid: bytes = _sha1.sha1(b"blob %d\0" % len(content) + content).digest()
    return oid != data[p + 40 : p + 40 + oid_len]


def _content(path: bytes, kind: int, size: int) -> bytes | None:
    """What git hashes of a file (a symlink: its target), or None when it cannot be
    read as it was looked at (it changed, or is no longer that kind of file)."""
    try:
        if kind == _LINK:
            return posix.readlink(path)
        fd = posix.open(
            path, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_NONBLOCK
        )
    except OSError:
        return None
    try:
        content = posix.read(fd, size + 1)
    except OSError:
        return None
    finally:
        posix.close(fd)
    return content if len(content) == size else None


def _index(path: str) -> tuple[bytes, int] | None:
    """The index's bytes and its mtime in ns; None when there is no index."""
    try:
        fd = posix.open(
            path, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_NONBLOCK
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Unsure(f"git's index cannot be read ({exc.strerror})") from None
    try:
        st = posix.fstat(fd)
        if st.st_mode & _TYPE != _FILE:
            raise _Unsure("git's index is not a regular file")
        if st.st_size > MAX_INDEX_BYTES:
            raise _Unsure(f"git's index is larger than the {MAX_INDEX_BYTES >> 20} MiB read here")
        data = posix.read(fd, st.st_size)
    except OSError as exc:
        raise _Unsure(f"git's index cannot be read ({exc.strerror})") from None
    finally:
        posix.close(fd)
    return data, st.st_mtime_ns


def _sha1_repository(common_dir: str | None) -> bool:
    """Are the repository's objects named by SHA-1 (not SHA-256: its config's
    `extensions.objectFormat`)?"""
    if common_dir is None:
        return True
    try:
        config = fs.read_file(fs.join(common_dir, "config"))
    except OSError:
        return True
    return config is None or b"sha256" not in config.lower()


def _trees(data: bytes, p: int, end: int, oid_len: int) -> dict[bytes, int] | None:
    """The index's cached trees (TREE extension): each directory ("" the top) and
    its entry count, -1 where git invalidated it; None when the index keeps none."""
    trees = None
    while p + 8 <= end:
        signature = data[p : p + 4]
        body = p + 8
        p = body + int.from_bytes(data[p + 4 : p + 8], "big")
        if p > end:
            raise _Unsure("git's index is damaged")
        if signature == b"link":
            raise _Unsure("git's index is split (core.splitIndex), not read here")
        if signature == b"TREE":
            trees = _tree_cache(data, body, p, oid_len)
    return trees


def _tree_cache(data: bytes, q: int, stop: int, oid_len: int) -> dict[bytes, int]:
    """The TREE extension's directories, written depth first: each a name (NUL), its
    entry count (-1: invalidated), a blank, its number of subtrees, a newline, and
    its tree's id when valid."""
    trees: dict[bytes, int] = {}
    paths: list[bytes] = []  # the directories whose subtrees are being read
    left: list[int] = []  # how many subtrees of each are still to come
    try:
        while q < stop:
            if len(trees) >= MAX_TREES:
                raise _Unsure(f"git's index caches more than {MAX_TREES} trees")
            nul = data.index(b"\0", q, stop)
            newline = data.index(b"\n", nul, stop)
            entries, subtrees = data[nul + 1 : newline].split(b" ")
            count = int(entries)
            while left and left[-1] == 0:
                paths.pop()
                left.pop()
            if left:
                left[-1] -= 1
                path = (paths[-1] + b"/" if paths[-1] else b"") + data[q:nul]
            elif not trees and nul == q:
                path = b""  # the top, first, its name empty
            else:
                raise _Unsure("git's index is damaged")
            trees[path] = count
            paths.append(path)
            left.append(int(subtrees))
            q = newline + 1 + (oid_len if count >= 0 else 0)
    except ValueError:
        raise _Unsure("git's index is damaged") from None
    return trees


def _staged(trees: dict[bytes, int], prefix: str) -> str | None:
    """The directory under which staged work may lie for an area whose literal
    leading path is `prefix` ("" the top), or None: the deepest cached tree on
    that path, when git invalidated it."""
    path = prefix.encode("utf-8", "surrogateescape")
    deepest = b""
    if path:
        for cut in [*_cuts(path), len(path)]:
            if path[:cut] not in trees:
                break
            deepest = path[:cut]
    if trees.get(deepest, -1) >= 0:
        return None
    return deepest.decode("utf-8", "surrogateescape")


def _cuts(path: bytes) -> list[int]:
    """Where each of the path's leading directories ends."""
    cuts = []
    j = path.find(b"/")
    while j >= 0:
        cuts.append(j)
        j = path.find(b"/", j + 1)
    return cuts
