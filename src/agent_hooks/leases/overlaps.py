"""Overlap before merge: files a worktree's branch changed that agents in other
worktrees of the same repository are also changing (from the ledger's leases).

A worktree's changes are what git reports (`git status` for uncommitted work,
plus the commits of its branch since it left the repository's default branch);
other worktrees' work is their live leases. Runs git, so never on the hot path:
SessionStart and `agent-hooks overlaps` only.
"""

from __future__ import annotations

import os
import subprocess

from agent_hooks import liveness, repository
from agent_hooks.leases import lease, lease_messages, lease_release

GIT_TIMEOUT = 5.0


def _git(top: str, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", top, *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


def default_branch(top: str) -> str | None:
    """The repository's default branch: origin's HEAD, else main or master."""
    head = _git(top, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if head and head.strip():
        return head.strip()
    for name in ("main", "master"):
        if _git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}") is not None:
            return name
    return None


def changed_files(top: str) -> set[str]:
    """Paths (relative to the work tree) this worktree changed: uncommitted, and
    committed on its branch since the default branch."""
    found: set[str] = set()
    status = _git(top, "status", "--porcelain", "-z", "--untracked-files=all")
    if status:
        fields = status.split("\0")
        i = 0
        while i < len(fields):
            entry = fields[i]
            if len(entry) > 3:
                found.add(entry[3:])
                if entry[0] in "RC":
                    i += 1  # the rename's source follows
            i += 1
    base = default_branch(top)
    branch = repository.branch(top)
    if base and branch and base.rpartition("/")[2] != branch:
        diff = _git(top, "diff", "--name-only", "-z", f"{base}...HEAD")
        if diff:
            found.update(p for p in diff.split("\0") if p)
    return found


def leased_elsewhere(directory: str, top: str, now: float) -> dict[str, list[dict[str, object]]]:
    """Live leases held in worktrees other than `top`, by path."""
    worktree = repository.worktree_id(top)
    found: dict[str, list[dict[str, object]]] = {}
    for rel, item in lease_release.everything(directory):
        if item.get("worktree") != worktree and lease.counts(item, now, liveness.alive):
            found.setdefault(rel, []).append(item)
    return found


def _who(item: dict[str, object]) -> str:
    branch = item.get("branch")
    return f"{lease_messages.holder_label(item)} on {branch if isinstance(branch, str) else 'an unknown branch'}"


def for_worktree(ledger: str, top: str, now: float) -> dict[str, list[str]]:
    """Files `top`'s branch changed that other worktrees are changing (their leases in
    the repository's `ledger`): path -> who."""
    elsewhere = leased_elsewhere(ledger, top, now)
    if not elsewhere:
        return {}
    mine = changed_files(top)
    return {
        rel: [_who(item) for item in items]
        for rel, items in sorted(elsewhere.items())
        if rel in mine
    }


def everywhere(ledger: str, now: float) -> dict[str, list[str]]:
    """Files leased in two or more worktrees of the repository whose ledger is
    `ledger`: path -> who."""
    by_path: dict[str, list[dict[str, object]]] = {}
    for rel, item in lease_release.everything(ledger):
        if lease.counts(item, now, liveness.alive):
            by_path.setdefault(rel, []).append(item)
    return {
        rel: [
            f"{_who(item)} in {item.get('worktree_path') or item.get('worktree')}" for item in items
        ]
        for rel, items in sorted(by_path.items())
        if len({item.get("worktree") for item in items}) > 1
    }
