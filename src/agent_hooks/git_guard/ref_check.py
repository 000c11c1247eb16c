"""The git guard's check of branch updates (the `reference-transaction` hook, state
`prepared`): which paths each moved local branch changes, which commit `pre-commit`
already judged, and how to get back from a refused operation.

A branch update is `OLD NEW refs/heads/NAME` as git writes it. Its paths are those
that differ between the branch's *current* commit and NEW (`git diff-tree -M`):
git writes OLD as zeros whenever its caller gave no expected value (`update-ref
REF NEW`, `rebase --abort`), so OLD is not trusted. A branch that does not exist
yet (created: nothing lands on it), a ref set to the commit it already has, and
the commit `pre-commit` has just judged are skipped.

The judged commit: `pre-commit` writes `<git dir>/agent-hooks-guard-commit` (the
worktree's own git dir: worktrees commit independently): HEAD, the tree of the
index it judged, the time, what it concluded; then whose it is
(`guard_script.judged_identity`: AGENT_NAME and the conversation a client's session
variable names, as git's environment has them); the branch HEAD is on (`HEAD` when detached); and
HEAD's parents. The reference-transaction script (not this module) skips one update
only: that branch moved from that HEAD to a commit with that tree whose parents are
HEAD (or HEAD's, an amend), by the same identity within `guard_script.JUDGED_FOR`
seconds — and removes the record, so it skips at most once. The paths such an
update changes are exactly the ones pre-commit judged (HEAD's tree against the
judged tree). A forged record is a deliberate bypass like `AGENT_HOOKS_GUARD=off`
(docs/adr/0017-trust-model.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from agent_hooks import storage
from agent_hooks.git_guard import commit_check
from agent_hooks.git_guard.commit_check import Finding, Staged, parse_name_status
from agent_hooks.git_guard.guard_hooks import GuardError, git
from agent_hooks.git_guard.guard_script import JUDGED_FILE, judged_identity


@dataclass(frozen=True)
class RefUpdate:
    old: str
    new: str
    ref: str

    @property
    def branch(self) -> str:
        return self.ref[len("refs/heads/") :]


def parse_updates(text: str) -> list[RefUpdate]:
    """`OLD NEW REF` lines → the updates that set a local branch to an object."""
    out = []
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) != 3:
            continue
        old, new, ref = parts
        if ref.startswith("refs/heads/") and new.strip("0"):
            out.append(RefUpdate(old, new, ref))
    return out


@dataclass
class BranchChange:
    update: RefUpdate
    paths: list[Staged] = field(default_factory=list)


def _current(repo: str, ref: str) -> str | None:
    try:
        return git(repo, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}").strip() or None
    except GuardError:
        return None  # no such branch yet: being created


def changes(repo: str, updates: list[RefUpdate]) -> list[BranchChange]:
    """Each update that changes a branch's files, with the paths it changes."""
    out = []
    for update in updates:
        current = _current(repo, update.ref)
        if current is None or current == update.new:
            continue
        raw = git(
            repo,
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "--name-status",
            "--no-commit-id",
            current,
            update.new,
        )
        paths = parse_name_status(raw)
        if paths:
            out.append(BranchChange(update, paths))
    return out


def judged_path(repo: str) -> str:
    return os.path.normpath(
        os.path.join(repo, git(repo, "rev-parse", "--git-path", JUDGED_FILE).strip())
    )


def remember_judged(repo: str, environ: Mapping[str, str], now: float, outcome: str) -> None:
    """pre-commit: the commit about to be made (HEAD and the index's tree, on the
    branch HEAD is on) was judged."""
    try:
        where, head, *parents, branch = git(
            repo,
            "rev-parse",
            "--git-path",
            JUDGED_FILE,
            "HEAD^{commit}",
            "HEAD^@",
            "--symbolic-full-name",
            "HEAD",
        ).splitlines()
    except (GuardError, ValueError):
        return  # no commit yet: the first commit creates its branch, which is never checked
    who = judged_identity(environ)
    try:
        tree = git(repo, "write-tree").strip()  # GIT_INDEX_FILE: the index being committed
        text = f"{head} {tree} {int(now)} {outcome}\n{who}\n{branch}\n{' '.join(parents)}\n"
        path = os.path.normpath(os.path.join(repo, where))
        storage.write_bytes_atomic(path, text.encode(), durable=False)
    except (GuardError, OSError, UnicodeEncodeError):
        pass  # then the branch update is checked again: a second report, nothing missed


def forget_judged(repo: str) -> None:
    try:
        os.unlink(judged_path(repo))
    except (GuardError, OSError):
        pass


def way_back(repo: str, refs: list[str], environ: Mapping[str, str]) -> str | None:
    """The choice that takes the work tree back to where the refused operation
    started, or None when the operation changed nothing there (the index still is
    HEAD's). Measured with git 2.39: each `undo it` command leaves HEAD, the index
    and the files as they were before the operation. Where no operation can be named
    (`commit --no-verify`, `revert`, `reset --hard`, `checkout -B`), nothing is undone
    for the agent — what the index holds may be its own work — it is told to look."""
    git_dir = _git_or(repo, "", "rev-parse", "--git-dir")
    here = checked_out(repo)

    def there(name: str) -> bool:
        return bool(git_dir) and os.path.lexists(os.path.join(repo, git_dir, name))

    undo = None
    if there("rebase-apply/applying"):
        undo = "git am --abort"
    elif there("rebase-merge") or there("rebase-apply"):
        undo = "git rebase --abort"
    else:
        undo = next((command for name, command in _IN_PROGRESS if there(name)), None)
    fast_forward = environ.get("GIT_REFLOG_ACTION", "").startswith(("merge", "pull"))
    if undo is None and here in refs and fast_forward:
        undo = "git reset --merge"  # the files moved, the branch did not
    if undo is not None:
        return f"- undo it: `{undo}` puts HEAD, the index and your files back as they were;"
    if not _git_or(repo, "", "diff-index", "--cached", "--name-only", "HEAD", "--"):
        return None
    return (
        "- `git status` shows what the command left in the index and the work tree;"
        " unstage the held files (`git restore --staged <file>`) before you commit again;"
    )


def checked_out(repo: str) -> str:
    """The branch checked out in this work tree (`refs/heads/…`); "" when HEAD is
    detached (a rebase in progress too)."""
    return _git_or(repo, "", "symbolic-ref", "-q", "HEAD")


def _git_or(repo: str, default: str, *args: str) -> str:
    try:
        return git(repo, *args).strip()
    except GuardError:
        return default


_IN_PROGRESS = (
    ("MERGE_HEAD", "git merge --abort"),
    ("CHERRY_PICK_HEAD", "git cherry-pick --abort"),
    ("REVERT_HEAD", "git revert --abort"),
)


def message(
    found: list[Finding],
    branches: list[str],
    top: str,
    now: float,
    warn_only: bool,
    back: str | None,
) -> str:
    """Why the branch update is refused (or, warn-only, would be) and what to do instead."""
    several = len(branches) > 1
    moved = ("branches " if several else "branch ") + ", ".join(branches)
    lines = commit_check.finding_lines(found, top, now, with_branch=several)
    if warn_only:
        return "\n".join(
            [
                f"agent-hooks guard (warn-only): moving {moved} changes files another agent holds:",
                *lines,
                "The update goes ahead (warn-only mode); make sure the holders know.",
            ]
        )
    head = [f"agent-hooks guard: {moved} not moved: the update changes files another agent holds:"]
    if back is None:
        kept = "they keep the commits they had" if several else "it keeps the commit it had"
        head.append(f"(nothing else changed: {kept})")
    choices = [back] if back else []
    choices += commit_check.common_choices(found, now, "this change must land")
    return "\n".join([*head, *lines, "Choose one:", *choices])
