"""The git guard: a pre-commit hook that refuses a commit staging a path another
agent holds exclusively (docs/adr/0011-git-guard-and-mcp-interop.md). This module
installs, removes and describes the hook; what it checks is `git_guard_check`.

Invariants:

* The hook lives where git looks for hooks (`git rev-parse --git-path hooks`:
  honours `core.hooksPath`, relative or absolute, and worktrees whose `.git` is a
  file). An existing `pre-commit` is never overwritten: it is renamed to
  `pre-commit.agent-hooks-chained` (same inode, so bytes and mode survive) and the
  guard runs it FIRST — it may restage files, and the guard must judge what will
  really be committed. Its non-zero exit status ends the commit with that status.
* `install` is idempotent and `uninstall` puts the original back by renaming it,
  byte for byte. Anything ambiguous (a chained file without our hook) is refused,
  never guessed.
* The hook fails open: a missing interpreter or a check that crashes prints a
  warning and lets the commit through; only a real finding blocks (exit
  `BLOCKED_EXIT` from the check, mapped to 1 by the script).
* The rendered script calls `agent_hooks.cli.guard.main` (`guard check --hook`), so
  scripts installed by any version keep working as long as that entry point does.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from agent_hooks import storage, switches

HOOK = "pre-commit"
CHAINED = "pre-commit.agent-hooks-chained"
MARKER = "# agent-hooks-guard: "
BLOCKED_EXIT = 9
BYPASS_ENV = switches.GUARD
MODES = ("block", "warn")


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


def render(python: str, mode: str) -> str:
    """The hook script. The check runs `python -I` (no cwd, no PYTHON* variables on
    sys.path: a repository cannot plant modules into it)."""
    meta = json.dumps({"version": 1, "python": python, "mode": mode}, sort_keys=True)
    code = 'from agent_hooks.cli.guard import main; main(prog_name="agent-hooks guard")'
    return f"""#!/bin/sh
# agent-hooks git guard: refuses a commit that stages files another agent holds
# exclusively. Installed by `agent-hooks guard install`; `agent-hooks guard uninstall`
# removes it and puts back the hook it chained. Bypass: {BYPASS_ENV}=off (or --no-verify).
{MARKER}{meta}
python={shlex.quote(python)}
mode={shlex.quote(mode)}
chained="$(dirname -- "$0")/{CHAINED}"
if [ -f "$chained" ] && [ -x "$chained" ]; then
    "$chained" "$@" || exit $?
fi
case "${{{BYPASS_ENV}:-}}" in
    off|0|false|no)
        echo "agent-hooks guard: {BYPASS_ENV}=off: reservations not checked" >&2
        exit 0 ;;
    warn) mode=warn ;;
esac
if [ ! -x "$python" ]; then
    echo "agent-hooks guard: $python is missing: reservations not checked" >&2
    hook="$(cd -- "$(dirname -- "$0")" && pwd -P)/$(basename -- "$0")"
    echo "  If agent-hooks is uninstalled, remove this guard by hand:" >&2
    if [ -f "$chained" ]; then
        echo "    rm -f -- \\"$hook\\" && mv -- \\"$(dirname -- "$hook")/{CHAINED}\\" \\"$hook\\"" >&2
    else
        echo "    rm -f -- \\"$hook\\"" >&2
    fi
    echo "  Otherwise run 'agent-hooks guard install' again (or 'agent-hooks guard uninstall')." >&2
    exit 0
fi
"$python" -I -c {shlex.quote(code)} check --hook --mode "$mode"
status=$?
case $status in
    0) exit 0 ;;
    {BLOCKED_EXIT}) exit 1 ;;
esac
echo "agent-hooks guard: the reservation check failed (exit $status): commit allowed" >&2
exit 0
"""


def read_meta(path: str) -> dict[str, Any] | None:
    """The guard's settings if `path` is a guard script, else None."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        if line.startswith(MARKER):
            try:
                meta = json.loads(line[len(MARKER) :])
            except ValueError:
                return {}
            return meta if isinstance(meta, dict) else {}
    return None


@dataclass
class Layout:
    top: str
    hooks: str
    hook: str
    chained: str
    hooks_path_config: str | None

    @classmethod
    def of(cls, repo: str) -> Layout:
        top = top_level(repo)
        hooks = hooks_dir(repo)
        try:
            configured: str | None = git(repo, "config", "--get", "core.hooksPath").strip() or None
        except GuardError:
            configured = None
        return cls(top, hooks, os.path.join(hooks, HOOK), os.path.join(hooks, CHAINED), configured)


def install(repo: str, python: str, mode: str) -> tuple[Layout, str]:
    """Install (or update) the guard; return the layout and what was done:
    `installed`, `installed, chaining the existing hook`, `updated` or `unchanged`."""
    if mode not in MODES:
        raise GuardError(f"unknown mode {mode!r}")
    layout = Layout.of(repo)
    script = render(python, mode).encode()
    hook_exists = os.path.lexists(layout.hook)
    ours = hook_exists and read_meta(layout.hook) is not None
    if ours:
        with open(layout.hook, "rb") as handle:
            if handle.read() == script and os.access(layout.hook, os.X_OK):
                return layout, "unchanged"
        _write_hook(layout.hook, script)
        return layout, "updated"
    if os.path.lexists(layout.chained):
        raise GuardError(
            f"{layout.chained} exists but {layout.hook} is not the guard; move one of them "
            "yourself (nothing was changed)"
        )
    storage.ensure_dir(layout.hooks)
    if not hook_exists:
        _write_hook(layout.hook, script)
        return layout, "installed"
    os.rename(layout.hook, layout.chained)
    try:
        _write_hook(layout.hook, script)
    except BaseException:
        os.rename(layout.chained, layout.hook)
        raise
    return layout, "installed, chaining the existing hook"


def _write_hook(path: str, script: bytes) -> None:
    storage.write_bytes_atomic(path, script, durable=True)
    os.chmod(path, 0o755)


def uninstall(repo: str) -> tuple[Layout, str]:
    """Remove the guard and rename the chained hook back; return what was done."""
    layout = Layout.of(repo)
    ours = os.path.lexists(layout.hook) and read_meta(layout.hook) is not None
    chained = os.path.lexists(layout.chained)
    if not ours:
        if chained:
            raise GuardError(
                f"{layout.hook} is not the guard, yet {layout.chained} exists; "
                "nothing was changed (restore it yourself)"
            )
        return layout, "not installed"
    os.unlink(layout.hook)
    if chained:
        os.rename(layout.chained, layout.hook)
        return layout, "removed; the original hook is back"
    return layout, "removed"


def status(repo: str) -> dict[str, Any]:
    layout = Layout.of(repo)
    meta = read_meta(layout.hook) if os.path.lexists(layout.hook) else None
    python = meta.get("python") if meta else None
    return {
        "repo": layout.top,
        "hooks_dir": layout.hooks,
        "core_hooks_path": layout.hooks_path_config,
        "hook": layout.hook,
        "installed": meta is not None,
        "other_hook": os.path.lexists(layout.hook) and meta is None,
        "mode": meta.get("mode") if meta else None,
        "python": python,
        "python_ok": bool(isinstance(python, str) and os.access(python, os.X_OK)),
        "chained": layout.chained if os.path.lexists(layout.chained) else None,
    }


def installing_python() -> str:
    """The interpreter the hook will use: this one, as an absolute path."""
    return os.path.abspath(sys.executable)


def python_can_import(python: str) -> bool:
    command = [python, "-I", "-c", "import agent_hooks.cli.guard"]
    proc = subprocess.run(command, capture_output=True, check=False)
    return proc.returncode == 0
