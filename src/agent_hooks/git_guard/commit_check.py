"""The git guard's check: which changed paths another agent holds, and what to say
about a commit (the changes it stages; branch updates are `ref_check`).

A finding is a staged path (both names of a rename, deletions too) covered by a
live exclusive reservation of an agent other than the committer (`AGENT_NAME`;
none is the shared identity), in the repository's resolved top level or in a
reservation project nested in it or containing it. A path may be found once per such
project; within one finding `message` names each reservation once. Reading the staged paths runs
git (`guard_hooks.git`, which keeps GIT_INDEX_FILE: inside the hook, the index being
committed); everything else only reads the reservation store.

What an agent is told names the ways forward that respect the holder (unstage,
ask, wait, ask the user) and never a way around the guard
(docs/adr/0017-trust-model.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import posix_fs as fs
from agent_hooks.git_guard.guard_hooks import git
from agent_hooks.leases import lease_minutes
from agent_hooks.ledger import ledger_location
from agent_hooks.reservations import (
    blocking,
    index_records,
    reservation,
    reservation_index,
    reservation_store,
)

_STATUS_WORDS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "T": "type changed",
    "C": "copied to",
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
    branch: str | None = None  # the branch update it was found in (None: the commit)


def _projects(state_dir: str, top: str) -> list[str]:
    """The top level plus every reservation project nested in it or containing it."""
    roots = [top]
    for root in reservation_store.known_projects(state_dir):
        if root != top and (root.startswith(top + "/") or top.startswith(root.rstrip("/") + "/")):
            roots.append(root)
    return roots


def findings(
    state_dir: str,
    top: str,
    owner: str,
    paths: list[Staged],
    now: float,
    branch: str | None = None,
) -> list[Finding]:
    """Each staged path covered by another owner's live exclusive reservation, in
    the ledger of the repository the work tree `top` belongs to (whichever of its
    worktrees the commit is made in), and of projects nested in it or containing it."""
    found: list[Finding] = []
    for root in _projects(state_dir, top):
        directory = ledger_location.directory(state_dir, root)
        hot = reservation_index.load_hot(directory)
        if hot is None or not hot.others_hold_exclusive(owner, now):
            continue
        minutes = lease_minutes.effective(os.environ, hot.settings)
        counts = blocking.holder_counts(directory, minutes, now)
        for item in paths:
            absolute = os.path.join(top, item.path)
            if not fs.is_within(absolute, root) or absolute == root:
                continue
            rel = absolute[len(root.rstrip("/")) + 1 :]
            holders = blocking.blocking_edit(hot, rel, owner, now, counts)
            if holders:
                found.append(
                    Finding(item, root, [index_records.as_dict(rec) for rec in holders], branch)
                )
    return found


def finding_lines(
    found: list[Finding], top: str, now: float, with_branch: bool = False
) -> list[str]:
    """One line per finding: the path, its change, where, and each holder once."""
    lines = []
    for item in found:
        described = "; ".join(
            reservation.describe(h, now) for h in reservation.unique(item.holders)
        )
        where = "" if item.project_root == top else f" [project {item.project_root}]"
        on = f"{item.branch}: " if with_branch and item.branch else ""
        lines.append(f"  - {on}{item.staged.path} ({item.staged.change}){where}: {described}")
    return lines


def common_choices(found: list[Finding], now: float, urgent: str) -> list[str]:
    """The choices every refusal offers: ask the holder, wait, or ask the user."""
    soonest = min(reservation.minutes_left(h, now) for item in found for h in item.holders)
    return [
        "- run `agent-hooks reservations` to see who holds what, and ask the holder to release it;",
        "- wait: a reservation ends when its holder releases it or it expires (the soonest"
        f" in {soonest} min);",
        f"- if {urgent} now, stop and ask the user how to proceed.",
    ]


def message(found: list[Finding], top: str, now: float, warn_only: bool) -> str:
    """Why the commit is refused (or, warn-only, would be) and what to do instead."""
    lines = finding_lines(found, top, now)
    if warn_only:
        head = "agent-hooks guard (warn-only): this commit stages files another agent holds:"
        tail = ["The commit goes ahead (warn-only mode); make sure the holders know."]
    else:
        head = "agent-hooks guard: commit refused: it stages files another agent holds:"
        tail = [
            "Choose one:",
            "- unstage them (`git restore --staged <file>`) and commit the rest;",
            *common_choices(found, now, "this commit must go in"),
        ]
    return "\n".join([head, *lines, *tail])
