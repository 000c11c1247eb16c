"""A workspace's files, reached and removed without ever following a symlink.

Invariants: every step below the project is opened with `O_NOFOLLOW |
O_DIRECTORY` relative to the previous directory's descriptor, so neither a
symlinked `.tmp`, `.tmp/sessions` or workspace, nor a symlinked directory inside
it, is ever passed through; only regular files are unlinked, and directories are
removed only when empty. Built-ins only.
"""

from __future__ import annotations

import errno
import posix

from agent_hooks import posix_fs as fs
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.workspaces.workspace import WorkspaceError

_DIR_FLAGS = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC


def open_workspace(project: str, ws_id: str) -> int:
    """A descriptor on the workspace directory, reached without following any
    symlink below the project."""
    fd = posix.open(project, _DIR_FLAGS & ~posix.O_NOFOLLOW)
    where = project
    try:
        for part in (*WORKSPACES_DIR.split("/"), ws_id):
            where = fs.join(where, part)
            try:
                nxt = posix.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise WorkspaceError(
                        f"{where} is a symlink or not a directory; left alone"
                    ) from None
                raise
            posix.close(fd)
            fd = nxt
    except BaseException:
        posix.close(fd)
        raise
    return fd


def remove_tracked(ws_fd: int, rel: str) -> str:
    """Delete the tracked regular file `rel` below the workspace descriptor `ws_fd`,
    never through a symlink: "removed", "already gone" or "left: <why>"."""
    parts = rel.split("/")
    fd = posix.dup(ws_fd)
    try:
        for part in parts[:-1]:
            try:
                nxt = posix.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                return "already gone"
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    return f"left: {part}/ is a symlink or not a directory"
                raise
            posix.close(fd)
            fd = nxt
        try:
            st = posix.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return "already gone"
        kind = st.st_mode & fs.S_IFMT
        if kind != fs.S_IFREG:
            return "left: a symlink" if kind == fs.S_IFLNK else "left: not a regular file"
        posix.unlink(parts[-1], dir_fd=fd)
        return "removed"
    finally:
        posix.close(fd)


def prune_empty_dirs(fd: int) -> None:
    """Remove the empty directories below `fd` (depth first, never through a symlink)."""
    for entry in list(posix.scandir(fd)):
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            sub = posix.open(entry.name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue
        try:
            prune_empty_dirs(sub)
        finally:
            posix.close(sub)
        try:
            posix.rmdir(entry.name, dir_fd=fd)
        except OSError:
            pass  # not empty: something untracked is in it
