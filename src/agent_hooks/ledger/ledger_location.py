"""Where a repository's ledger (its reservations and leases) lives.

For a git work tree the ledger is `<common git dir>/agent-hooks/`: every
worktree of the repository, and every container or VM that mounts it, finds
the same directory, so they share reservations and leases; fcntl locks on its
lock files work across containers on one kernel. A directory outside any git
repository keeps the location of earlier releases,
`<state dir>/agent-hooks/projects/<name>-<hash>/` (docs/adr/0015-one-ledger-per-repository.md).

Invariants:

* Paths inside a ledger are relative to the work tree they were made in, so a
  reservation made in one worktree applies to the same repository path in all.
* `directory` reads two small files at most (a worktree's `.git` file and its
  `commondir`: `repository.layout`) and runs nothing: it is on the hot path.
* The ledger directory is created 0700 and must be a real directory: a symlink
  planted at `<common>/agent-hooks` is refused (`StorageError`), never followed.
* A ledger written by an earlier release at the old location (`has_legacy`) is
  merged into the repository's ledger on first use
  (`reservation_store.adopt_legacy`), nothing lost.
"""

from __future__ import annotations

import posix

from agent_hooks import identity, repository
from agent_hooks import posix_fs as fs

SUBDIR = "agent-hooks"


def legacy_key(project_root: str) -> str:
    """`<basename>-<64-bit hash of the root path>` (`posix_fs.name_hash`): stable and
    file-name safe."""
    base = "".join(c if c.isalnum() or c in "._-" else "_" for c in fs.basename(project_root))
    return f"{base.lstrip('.')[:40] or 'root'}-{fs.name_hash(project_root)}"


def legacy_directory(state_dir: str, project_root: str) -> str:
    """Where earlier releases kept a project's reservations (and where a project
    outside any git repository still keeps them)."""
    return fs.join(identity.data_dir(state_dir), "projects", legacy_key(project_root))


def directory(state_dir: str, project_root: str) -> str:
    """The ledger of the repository holding the work tree `project_root`."""
    return in_common(state_dir, project_root, repository.common_dir(project_root))


def in_common(state_dir: str, project_root: str, common: str | None) -> str:
    """`directory` of the work tree `project_root` whose common git dir is known
    (`repository.layout`; None outside git)."""
    if common is None:
        return legacy_directory(state_dir, project_root)
    return fs.join(common, SUBDIR)


def is_repository_ledger(path: str) -> bool:
    return fs.basename(path) == SUBDIR


def ensure(path: str) -> None:
    """Create the ledger directory (0700) unless it exists; refuse a symlink there."""
    from agent_hooks import storage

    try:
        mode = posix.stat(path, follow_symlinks=False).st_mode & fs.S_IFMT
    except FileNotFoundError:
        storage.ensure_dir(path)
        return
    if mode != fs.S_IFDIR:
        raise storage.StorageError(f"{path} is not a directory (a symlink?); refusing to use it")


def has_legacy(state_dir: str, project_root: str, common: str | None) -> bool:
    """Does an earlier release's ledger wait at the old location for the work tree
    `project_root` of a repository whose common git dir is `common`? (one `stat`)"""
    from agent_hooks.reservations.index_records import TRUTH  # the gate has it loaded

    old_dir = legacy_directory(state_dir, project_root)
    return common is not None and fs.lexists(fs.join(old_dir, TRUTH))
