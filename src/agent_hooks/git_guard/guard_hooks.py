"""The git guard: hooks that refuse to let a change to a path another agent holds
exclusively land on a local branch (docs/adr/0011-git-guard-and-mcp-interop.md).
This module installs, removes and describes them; the scripts are
`guard_script`, what they check `commit_check` (commits) and
`ref_check` (branch updates).

Invariants:

* The hooks live where git looks for hooks (`git rev-parse --git-path hooks`:
  honours `core.hooksPath`, relative or absolute, and worktrees whose `.git` is a
  file). An existing hook is never overwritten: it is renamed to
  `<hook>.agent-hooks-chained` (same inode, so bytes and mode survive) and the
  guard runs it FIRST.
* `install` and `uninstall` handle every hook of `HOOKS` or none: anything
  ambiguous (a chained file without our hook in front of it) is refused before
  a file is touched, never guessed. `install` is idempotent; `uninstall` puts
  each original back by renaming it, byte for byte.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from agent_hooks import storage, switches
from agent_hooks.git_guard.guard_script import (
    BLOCKED_EXIT,
    CHAINED_SUFFIX,
    HOOKS,
    PRE_COMMIT,
    REFERENCE_TRANSACTION,
    read_meta,
    render,
)

__all__ = ["BLOCKED_EXIT", "HOOKS", "PRE_COMMIT", "REFERENCE_TRANSACTION", "read_meta", "render"]

BYPASS_ENV = switches.GUARD
MODES = ("block", "warn")
REFERENCE_TRANSACTION_SINCE = (2, 28)  # the first git that runs reference-transaction


class GuardError(Exception):
    """The guard cannot be installed, removed or run here; the message says why."""


def git(repo: str, *args: str) -> str:
    """Run git in `repo` (the environment is kept: inside a hook, GIT_INDEX_FILE
    names the index being committed)."""
    try:
        proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
    except FileNotFoundError:
        raise GuardError("git is not installed") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GuardError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def top_level(repo: str) -> str:
    """The work tree's top level, symlinks resolved (the reservation index's key)."""
    try:
        out = git(repo, "rev-parse", "--show-toplevel").strip()
    except GuardError as exc:
        raise GuardError(f"{repo} is not inside a git work tree ({exc})") from None
    if not out:
        raise GuardError(f"{repo} is not inside a git work tree")
    return os.path.realpath(out)


def hooks_dir(repo: str) -> str:
    """Where git runs this work tree's hooks from, as an absolute path."""
    relative = git(repo, "rev-parse", "--git-path", "hooks").strip()
    return os.path.normpath(os.path.join(repo, relative))


def git_version(repo: str) -> tuple[int, ...] | None:
    """`git --version` as numbers ((2, 39, 5)); None when it cannot be read."""
    try:
        found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", git(repo, "--version"))
    except GuardError:
        return None
    return tuple(int(part) for part in found.groups() if part is not None) if found else None


def runs_reference_transaction(version: tuple[int, ...] | None) -> bool:
    return version is not None and version[:2] >= REFERENCE_TRANSACTION_SINCE


def chained_path(hook: str) -> str:
    """Where the hook the guard replaced at `hook` waits (and is run from)."""
    return hook + CHAINED_SUFFIX


@dataclass
class Layout:
    top: str
    hooks: str
    hooks_path_config: str | None

    @classmethod
    def of(cls, repo: str) -> Layout:
        top = top_level(repo)
        try:
            configured: str | None = git(repo, "config", "--get", "core.hooksPath").strip() or None
        except GuardError:
            configured = None
        return cls(top, hooks_dir(repo), configured)

    def hook(self, name: str) -> str:
        return os.path.join(self.hooks, name)

    @property
    def hook_paths(self) -> list[str]:
        return [self.hook(name) for name in HOOKS]


def _ours(path: str) -> bool:
    return os.path.lexists(path) and read_meta(path) is not None


def _refuse_ambiguous(layout: Layout) -> None:
    """A chained file with something else than the guard in front of it: whose is it?"""
    for hook in layout.hook_paths:
        if os.path.lexists(chained_path(hook)) and not _ours(hook):
            raise GuardError(
                f"{chained_path(hook)} exists but {hook} is not the guard; move one of them "
                "yourself (nothing was changed)"
            )


def install(repo: str, python: str, mode: str) -> tuple[Layout, list[tuple[str, str]]]:
    """Install (or update) every guard hook; return the layout and, per hook file, what
    was done: `installed`, `installed, chaining the existing hook`, `updated` or
    `unchanged`."""
    if mode not in MODES:
        raise GuardError(f"unknown mode {mode!r}")
    layout = Layout.of(repo)
    _refuse_ambiguous(layout)
    storage.ensure_dir(layout.hooks)
    return layout, [
        (layout.hook(name), _install_one(layout.hook(name), render(name, python, mode).encode()))
        for name in HOOKS
    ]


def _install_one(hook: str, script: bytes) -> str:
    if _ours(hook):
        with open(hook, "rb") as handle:
            if handle.read() == script and os.access(hook, os.X_OK):
                return "unchanged"
        _write_hook(hook, script)
        return "updated"
    if not os.path.lexists(hook):
        _write_hook(hook, script)
        return "installed"
    os.rename(hook, chained_path(hook))
    try:
        _write_hook(hook, script)
    except BaseException:
        os.rename(chained_path(hook), hook)
        raise
    return "installed, chaining the existing hook"


def _write_hook(path: str, script: bytes) -> None:
    storage.write_bytes_atomic(path, script, durable=True)
    os.chmod(path, 0o755)


def uninstall(repo: str) -> tuple[Layout, list[tuple[str, str]]]:
    """Remove every guard hook and rename each chained hook back; return, per hook
    file, what was done."""
    layout = Layout.of(repo)
    _refuse_ambiguous(layout)
    return layout, [(hook, remove_hook(hook)) for hook in layout.hook_paths]


def remove_hook(hook: str) -> str:
    """Remove the guard at `hook` (if it still is one) and rename its chained hook back."""
    if not _ours(hook):
        return "not installed"
    os.unlink(hook)
    if os.path.lexists(chained_path(hook)):
        os.rename(chained_path(hook), hook)
        return "removed; the original hook is back"
    return "removed"


def status(repo: str) -> dict[str, Any]:
    layout = Layout.of(repo)
    version = git_version(repo)
    hooks = []
    for name in HOOKS:
        hook = layout.hook(name)
        meta = read_meta(hook) if os.path.lexists(hook) else None
        python = meta.get("python") if meta else None
        hooks.append(
            {
                "name": name,
                "hook": hook,
                "installed": meta is not None,
                "other_hook": os.path.lexists(hook) and meta is None,
                "mode": meta.get("mode") if meta else None,
                "python": python,
                "python_ok": bool(isinstance(python, str) and os.access(python, os.X_OK)),
                "chained": chained_path(hook) if os.path.lexists(chained_path(hook)) else None,
                "git_runs_it": name != REFERENCE_TRANSACTION or runs_reference_transaction(version),
            }
        )
    return {
        "repo": layout.top,
        "hooks_dir": layout.hooks,
        "core_hooks_path": layout.hooks_path_config,
        "git_version": ".".join(map(str, version)) if version else None,
        "installed": all(h["installed"] for h in hooks),
        "hooks": hooks,
    }


def installing_python() -> str:
    """The interpreter the hook will use: this one, as an absolute path."""
    return os.path.abspath(sys.executable)


def python_can_import(python: str) -> bool:
    command = [python, "-I", "-c", "import agent_hooks.cli.guard"]
    proc = subprocess.run(command, capture_output=True, check=False)
    return proc.returncode == 0
