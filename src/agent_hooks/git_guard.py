"""The git guard: a pre-commit hook that refuses a commit staging a path another
agent holds exclusively (docs/adr/0011-git-guard-and-mcp-interop.md).

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
* A finding is a staged path (both names of a rename, deletions too) covered by a
  live exclusive reservation of an agent other than the committer (`AGENT_NAME`;
  none is the shared identity), in the repository's resolved top level or in a
  reservation project nested in it or containing it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import enforcement, identity, reservation, reservation_store, storage
from agent_hooks import reservation_index as index

HOOK = "pre-commit"
CHAINED = "pre-commit.agent-hooks-chained"
MARKER = "# agent-hooks-guard: "
BLOCKED_EXIT = 9
BYPASS_ENV = "AGENT_HOOKS_GUARD"
MODES = ("block", "warn")
_STATUS_WORDS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "T": "type changed",
    "C": "copied to",
}


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
    echo "  Run 'agent-hooks guard install' again, or 'agent-hooks guard uninstall'." >&2
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


@dataclass(frozen=True)
class Staged:
    path: str
    change: str  # "added", "modified", "deleted", "renamed from", "renamed to", ...


def parse_name_status(raw: str) -> list[Staged]:
    """`git diff --cached --name-status -z -M` → every path the commit touches."""
    fields = raw.split("\0")
    out: list[Staged] = []
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i]
        if code[0] in "RC":
            old, new = fields[i + 1], fields[i + 2]
            if code[0] == "R":
                out.append(Staged(old, "renamed from"))
                out.append(Staged(new, "renamed to"))
            else:
                out.append(Staged(new, _STATUS_WORDS["C"]))
            i += 3
        else:
            out.append(Staged(fields[i + 1], _STATUS_WORDS.get(code[0], "changed")))
            i += 2
    return out


def staged(repo: str) -> list[Staged]:
    raw = git(repo, "diff", "--cached", "--name-status", "-z", "-M", "--no-color")
    return parse_name_status(raw)


@dataclass
class Finding:
    staged: Staged
    project_root: str
    holders: list[dict[str, Any]] = field(default_factory=list)


def _projects(state_dir: str, top: str) -> list[str]:
    """The top level plus every reservation project nested in it or containing it."""
    roots = [top]
    for root in reservation_store.known_projects(state_dir):
        if root != top and (root.startswith(top + "/") or top.startswith(root.rstrip("/") + "/")):
            roots.append(root)
    return roots


def findings(
    state_dir: str, top: str, me: str | None, paths: list[Staged], now: float
) -> list[Finding]:
    """Each staged path covered by another agent's live exclusive reservation."""
    found: list[Finding] = []
    for root in _projects(state_dir, top):
        hot = index.load_hot(state_dir, root)
        if hot is None or not hot.others_hold_exclusive(me, now):
            continue
        for item in paths:
            absolute = os.path.join(top, item.path)
            if not _within(absolute, root) or absolute == root:
                continue
            rel = absolute[len(root.rstrip("/")) + 1 :]
            holders = enforcement.blocking_edit(hot, rel, me, now)
            if holders:
                found.append(Finding(item, root, [index.as_dict(rec) for rec in holders]))
    return found


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def message(found: list[Finding], top: str, now: float, warn_only: bool) -> str:
    """Why the commit is refused (or, warn-only, would be) and what to do instead."""
    lines = []
    for item in found:
        described = "; ".join(reservation.describe(h, now) for h in _unique(item.holders))
        where = "" if item.project_root == top else f" [project {item.project_root}]"
        lines.append(f"  - {item.staged.path} ({item.staged.change}){where}: {described}")
    soonest = min(reservation.minutes_left(h, now) for item in found for h in item.holders)
    head = (
        "agent-hooks guard (warn-only): this commit stages files another agent holds:"
        if warn_only
        else "agent-hooks guard: commit refused: it stages files another agent holds:"
    )
    tail = (
        ["The commit goes ahead (warn-only mode); make sure the holders know."]
        if warn_only
        else [
            "Choose one:",
            "- unstage them (`git restore --staged <file>`) and commit the rest;",
            "- run `agent-hooks reservations` to see who holds what, and ask the holder to"
            " release it;",
            "- wait: a reservation ends when its holder releases it or it expires (the soonest"
            f" in {soonest} min).",
            f"To commit anyway (the holder agreed): {BYPASS_ENV}=off git commit ...,"
            " or git commit --no-verify.",
        ]
    )
    return "\n".join([head, *lines, *tail])


def _unique(holders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({h["id"]: h for h in holders}.values())


def installing_python() -> str:
    """The interpreter the hook will use: this one, as an absolute path."""
    return os.path.abspath(sys.executable)


def python_can_import(python: str) -> bool:
    command = [python, "-I", "-c", "import agent_hooks.cli.guard"]
    proc = subprocess.run(command, capture_output=True, check=False)
    return proc.returncode == 0


def agent_of(environ: dict[str, str]) -> str | None:
    """The committer: AGENT_NAME, validated (IdentityError when unusable)."""
    return identity.resolve_agent(environ).name
