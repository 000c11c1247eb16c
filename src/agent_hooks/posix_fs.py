"""Path arithmetic and environment access over the built-in `posix` module.

Importing `os` (with `posixpath` and `_collections_abc`) costs about a fifth of
a bare interpreter's start-up, which a hook pays on every tool call of every
agent (docs/adr/0005-hot-path-budget.md). Modules on the hook path therefore use
`posix` directly for system calls and this module for the few path functions
they need. The functions behave like their `os.path` namesakes for `str` paths
on POSIX (the tests compare them); nothing here imports a module.
"""

from __future__ import annotations

import posix

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000


def environ() -> dict[str, str]:
    """The process environment decoded as `os.environ` decodes it."""
    return {
        key.decode("utf-8", "surrogateescape"): value.decode("utf-8", "surrogateescape")
        for key, value in posix.environ.items()
    }


def as_written(path: str) -> str:
    """A path from a hook payload as the client writes it: Claude Code (Node.js)
    turns a path into UTF-8 with each lone surrogate (a JSON `\\ud800` escape,
    which has no UTF-8 form) replaced by U+FFFD, so the file it touches is that one."""
    if path.isascii():
        return path
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return path


def isabs(path: str) -> bool:
    return path.startswith("/")


def join(base: str, *parts: str) -> str:
    path = base
    for part in parts:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def split(path: str) -> tuple[str, str]:
    i = path.rfind("/") + 1
    head, tail = path[:i], path[i:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def dirname(path: str) -> str:
    return split(path)[0]


def basename(path: str) -> str:
    return path[path.rfind("/") + 1 :]


def name_hash(text: str) -> str:
    """A stable 64-bit hash of `text` (FNV-1a of its UTF-8 bytes, a lone surrogate
    kept as the byte it stands for) as 16 lower-case hex digits: for names that
    must be short, safe in a file name, and the same in every process and release
    (a cut lease file name, an earlier release's ledger directory, a double claim's
    id). Not a checksum of content (`fingerprints`) and not for secrets."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def _normpath(path: str) -> str:
    if not path:
        return "."
    initial = (
        2 if path.startswith("//") and not path.startswith("///") else int(path.startswith("/"))
    )
    parts: list[str] = []
    for comp in path.split("/"):
        if comp in ("", "."):
            continue
        if comp != ".." or (not initial and not parts) or (parts and parts[-1] == ".."):
            parts.append(comp)
        elif parts:
            parts.pop()
    return ("/" * initial + "/".join(parts)) or "."


_c_normpath = getattr(posix, "_path_normpath", None)


def normpath(path: str) -> str:
    """Like `os.path.normpath` (the C implementation when there is one)."""
    return (_c_normpath(path) or ".") if _c_normpath is not None else _normpath(path)


def abspath(path: str) -> str:
    return normpath(path if path.startswith("/") else join(posix.getcwd(), path))


def expanduser(path: str, home: str | None) -> str:
    """`~` and `~/…` expanded with `home` (other forms are returned unchanged)."""
    if home and (path == "~" or path.startswith("~/")):
        return home.rstrip("/") + path[1:] if home != "/" else path[1:] or "/"
    return path


def _mode(path: str, follow: bool) -> int | None:
    try:
        return int(posix.stat(path, follow_symlinks=follow).st_mode) & S_IFMT
    except (OSError, ValueError):
        return None


def lexists(path: str) -> bool:
    return _mode(path, False) is not None


def isdir(path: str) -> bool:
    return _mode(path, True) == S_IFDIR


def isfile(path: str) -> bool:
    return _mode(path, True) == S_IFREG


def islink(path: str) -> bool:
    return _mode(path, False) == S_IFLNK


def makedirs(path: str, mode: int = 0o700) -> None:
    """Create `path` and missing parents; an existing directory is fine."""
    if isdir(path):
        return
    parent = dirname(path)
    if parent and parent != path:
        makedirs(parent, mode)
    try:
        posix.mkdir(path, mode)
    except FileExistsError:
        if not isdir(path):
            raise


def realpath(path: str) -> str:
    """The path with every symlink resolved (non-strict, like `os.path.realpath`)."""
    resolved, _ = _join_real("", path, {})
    return abspath(resolved)


def _join_real(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    """`posixpath._joinrealpath`, for str paths and without `os`."""
    if rest.startswith("/"):
        rest = rest[1:]
        path = "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path:
                path, name = split(path)
                if name == "..":
                    path = join(path, "..", "..")
            else:
                path = ".."
            continue
        candidate = join(path, name)
        if _mode(candidate, False) != S_IFLNK:
            path = candidate
            continue
        if candidate in seen:
            known = seen[candidate]
            if known is not None:
                path = known
                continue
            return join(candidate, rest), False  # a symlink loop: stop resolving here
        seen[candidate] = None
        path, ok = _join_real(path, posix.readlink(candidate), seen)
        if not ok:
            return join(path, rest), False
        seen[candidate] = path
    return path, True


def read_file(path: str) -> bytes | None:
    """A regular file's content, or None when it does not exist. A symlink in
    its place raises OSError(ELOOP): it is refused, never followed; anything
    else that is not a regular file (a FIFO, a device, a directory) raises
    OSError too, at once: opening never blocks."""
    try:
        fd = posix.open(
            path, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_NONBLOCK
        )
    except FileNotFoundError:
        return None
    try:
        st = posix.fstat(fd)
        if st.st_mode & S_IFMT != S_IFREG:
            raise OSError(f"{path} is not a regular file")
        # Ask for the size it has (and 1 more, to see it grew): a fixed large request
        # maps that much memory for every small file read.
        data = posix.read(fd, st.st_size + 1)
        if len(data) <= st.st_size:
            return data
        chunks = [data]
        while chunk := posix.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        posix.close(fd)


def is_within(path: str, root: str) -> bool:
    """`path` is `root` or lies below it (both absolute and normalized)."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")
