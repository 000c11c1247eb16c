"""Which project an agent works in: the repository work tree that holds its files.

Invariants:

* A project is a resolved directory: the git top level (the nearest directory at
  or above the start holding `.git`, a directory or a worktree's file) of
  `CLAUDE_PROJECT_DIR`, else of the payload's `cwd`; a `CLAUDE_PROJECT_DIR`
  outside any repository is the project itself. Agents started in different
  subdirectories of one repository therefore share a project.
* Resolution is built-ins only (no subprocess, no `os`): it runs on every hook.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping

WORKSPACES_DIR = ".tmp/sessions"  # the project's workspaces (docs/adr/0008)


def project_root(environ: Mapping[str, str], cwd: str | None) -> str | None:
    """The project the agent works in, resolved: the git top level at or above
    `CLAUDE_PROJECT_DIR` (else above `cwd`); a `CLAUDE_PROJECT_DIR` outside any git
    repository is the project itself. Normalizing to the top level gives agents
    started in different subdirectories of one repository the same project."""
    configured = environ.get("CLAUDE_PROJECT_DIR", "")
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
