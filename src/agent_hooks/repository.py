"""Which project an agent works in: the repository work tree that holds its files.

Invariants:

* A project is a resolved directory: the git top level (the nearest directory at
  or above the start holding `.git`, a directory or a worktree's file) of the
  directory the client's project variable names (`CLAUDE_PROJECT_DIR` for Claude
  Code), else of the payload's `cwd`; a named directory outside any repository is
  the project itself. Agents started in different
  subdirectories of one repository therefore share a project.
* A repository's worktrees share one common git directory (`common_dir`), read
  from the `.git` file and `commondir` exactly as git does, without running git;
  each is told apart by `worktree_id`, which no path to the checkout changes.
* Resolution is built-ins only (no subprocess, no `os`): it runs on every hook.
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping

WORKSPACES_DIR = ".tmp/sessions"  # the project's workspaces (docs/adr/0008)


def project_root(
    environ: Mapping[str, str], cwd: str | None, variables: tuple[str, ...] = ()
) -> str | None:
    """The project the agent works in, resolved: the git top level at or above the
    directory the first of `variables` names (the client's project variables,
    `PROJECT_VARIABLES`: Claude Code's `CLAUDE_PROJECT_DIR`, …), else above `cwd`; a
    named directory outside any git repository is the project itself. Normalizing to
    the top level gives agents started in different subdirectories of one repository
    the same project."""
    for name in variables:
        configured = environ.get(name, "")
        if configured and fs.isabs(configured):
            resolved = fs.realpath(configured)
            return git_top_level(resolved, resolved=True) or resolved
    if not cwd or not fs.isabs(cwd):
        return None
    return git_top_level(cwd)


def normalize_project(path: str) -> str:
    """A directory given as a project (`--project DIR`): resolved, then its git top level."""
    resolved = fs.realpath(path)
    return git_top_level(resolved, resolved=True) or resolved


def git_top_level(start: str, *, resolved: bool = False) -> str | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or the
    file of a worktree or submodule), resolved; None when there is none."""
    here = start if resolved else fs.realpath(start)
    while True:
        if fs.lexists(fs.join(here, ".git")):
            return here
        parent = fs.dirname(here)
        if parent == here:
            return None
        here = parent


def _read_small(path: str) -> str | None:
    """The first 4 KiB of a small git bookkeeping file, stripped; None if unreadable."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        return posix.read(fd, 4096).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return None
    finally:
        posix.close(fd)


def git_dir(top: str) -> str | None:
    """The work tree's own git directory: `<top>/.git` when it is a directory, else
    what a worktree's or submodule's `.git` file names (`gitdir: PATH`)."""
    marker = fs.join(top, ".git")
    if fs.isdir(marker):
        return marker
    text = _read_small(marker)
    if text is None or not text.startswith("gitdir:"):
        return None
    named = text[len("gitdir:") :].strip()
    return fs.normpath(fs.join(top, named)) if named else None


def layout(top: str) -> tuple[str | None, str | None, str]:
    """The git layout of the work tree `top`, read once: (its own git directory
    (`git_dir`), the repository's common git directory (`common_dir`; None outside
    git), which work tree of the repository it is (`worktree_id`)). It costs one
    look at `.git` (and a read when it is a worktree's file) and one read of
    `commondir`: the ledger's place and the leases' worktree both come from it, so
    a tool call reads them once. The common git dir is what `git rev-parse
    --git-common-dir` prints, resolved (a worktree's git dir names it in
    `commondir`), the same for every worktree of one repository."""
    own = git_dir(top)
    if own is None:
        return None, None, top
    pointer = _read_small(fs.join(own, "commondir"))
    common = fs.realpath(fs.normpath(fs.join(own, pointer) if pointer else own))
    if not pointer:
        return own, common, "."
    real = fs.realpath(fs.normpath(own))
    seen_from = fs.realpath(fs.normpath(fs.join(real, pointer)))
    return own, common, real[len(seen_from) + 1 :] if real.startswith(seen_from + "/") else real


def common_dir(top: str) -> str | None:
    """The repository's common git directory for the work tree `top` (`layout`)."""
    return layout(top)[1]


def superproject(top: str) -> str | None:
    """The work tree of the repository `top` is a submodule of (its git dir is
    `<superproject>/.git/modules/…`), or None."""
    if fs.isdir(fs.join(top, ".git")):
        return None  # a submodule's `.git` is a file
    own = git_dir(top)
    if own is None:
        return None
    marker = "/.git/modules/"
    cut = fs.realpath(own).find(marker)
    return fs.realpath(own)[:cut] if cut > 0 else None


def worktree_id(top: str) -> str:
    """Which work tree of its repository `top` is, the same whatever path reaches it
    (a container's mount, a bind mount, a renamed directory): "." for the main work
    tree, the git dir relative to the common git dir for a linked worktree
    (`worktrees/<name>`); a directory outside git is its own path."""
    return layout(top)[2]


def branch(top: str) -> str | None:
    """The work tree's checked-out branch (`main`), a short commit id when HEAD is
    detached, or None when it cannot be read."""
    return branch_in(git_dir(top))


def branch_in(own: str | None) -> str | None:
    """`branch` of the work tree whose own git directory is `own` (`git_dir`)."""
    head = _read_small(fs.join(own, "HEAD")) if own is not None else None
    if not head:
        return None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    return head[:12]
