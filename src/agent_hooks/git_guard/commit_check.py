"""The git guard's check: which changed paths another agent holds, and what to say
about a commit (the changes it stages; branch updates are `ref_check`).

A finding is a staged path (both names of a rename, deletions too) that is

* covered by a live exclusive reservation of an agent other than the committer
  (`AGENT_NAME`; without it the conversation, `CLAUDE_CODE_SESSION_ID`; neither
  is the shared identity), in the repository's resolved top level or in a
  reservation project nested in it or containing it — a holder that no longer
  counts (`blocking.holder_counts`: its process gone, unless `--keep`; on another
  host, silent for longer than a lease) refuses nothing; or
* leased *in this work tree* (`repository.worktree_id`, as leases record it) by
  another writer (`lease.judge`, leases on, `lease_minutes.effective`): that
  writer is changing the file, and the staged content may be its half-done edit.
  The committer's own leases never refuse — nor its subagents' in its own
  conversation: the CLI a subagent runs has its parent's environment, so the
  committer cannot be told apart from them (ADR-0014). Another conversation of
  the same `AGENT_NAME` (two panes launched with one name) is another writer, as
  at an edit. A lease in another worktree guards another copy of the file and
  never refuses.

A path may be found once per such project; within one finding `message` names
each reservation and each leasing writer once. Reading the staged paths runs git
(`guard_hooks.git`, which keeps GIT_INDEX_FILE: inside the hook, the index being
committed); everything else only reads the ledger: the reservation index, and
the lease files of the staged paths that have one (one listing of the leases).

What an agent is told names the ways forward that respect the holder (unstage,
ask, wait, ask the user) and never a way around the guard
(docs/adr/0017-trust-model.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import liveness, writers
from agent_hooks import posix_fs as fs
from agent_hooks.git_guard.guard_hooks import git
from agent_hooks.leases import lease, lease_messages, lease_store, writer_cards
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import blocking, index_records, reservation

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
    holders: list[dict[str, Any]] = field(default_factory=list)  # reservations
    branch: str | None = None  # the branch update it was found in (None: the commit)
    leases: list[dict[str, Any]] = field(default_factory=list)  # other writers', `leased_by`


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
    me: writers.Writer,
    paths: list[Staged],
    now: float,
    branch: str | None = None,
    *,
    environ: Mapping[str, str],
    leases: bool = True,
) -> list[Finding]:
    """Each staged path covered by another owner's live exclusive reservation, in
    the ledger of the repository the work tree `top` belongs to (whichever of its
    worktrees the commit is made in), and of projects nested in it or containing
    it; and, with `leases`, each one another owner's writer leases in `top`."""
    found: list[Finding] = []
    for root in _projects(state_dir, top):
        repo = Repo(root, state_dir, environ)
        hot, minutes = repo.index, repo.minutes
        reserved = hot if hot is not None and hot.others_hold_exclusive(me.owner, now) else None
        leased = (
            set(lease_store.all_paths(repo.ledger)) if leases and root == top and minutes else set()
        )
        if reserved is None and not leased:
            continue
        counts = blocking.holder_counts(repo.ledger, minutes, now)
        for item in paths:
            absolute = os.path.join(top, item.path)
            if not fs.is_within(absolute, root) or absolute == root:
                continue
            rel = absolute[len(root.rstrip("/")) + 1 :]
            holders = (
                blocking.blocking_edit(reserved, rel, me.owner, now, counts)
                if reserved is not None
                else []
            )
            others = _other_writers(repo, rel, me, now) if rel in leased else []
            if holders or others:
                held = [index_records.as_dict(rec) for rec in holders]
                found.append(Finding(item, root, held, branch, others))
    return found


def _other_writers(repo: Repo, rel: str, me: writers.Writer, now: float) -> list[dict[str, Any]]:
    """The leases on `rel` in the work tree of `repo` (`repository.worktree_id`)
    that count and are not the committer's own, each with its holder's name (`label`)."""
    directory = repo.ledger
    seen = lease.judge(lease_store.read(directory, rel), me, repo.worktree, now, liveness.alive)
    out = []
    for held in seen.blockers:
        key = held.get("writer")
        if me.relation(str(key)) != writers.OTHER and not lease.another_conversation(held, me):
            continue  # a subagent of the committer's own conversation
        label = lease_messages.holder_label(held, writer_cards.card(directory, key))
        out.append({**held, "label": label})
    return out


def describe_lease(held: Mapping[str, Any], now: float) -> str:
    """`being changed by agent "bob" (last write 2 min ago, lease ends in 8 min
    without a write)`."""
    ends = lease_messages.minutes_until(held.get("expires"), now)
    return (
        f"being changed by {held.get('label')} (last write "
        f"{lease_messages.ago(held.get('written'), now)}; its lease ends when it finishes"
        f" or after {ends} min without a write)"
    )


def finding_lines(
    found: list[Finding], top: str, now: float, with_branch: bool = False
) -> list[str]:
    """One line per finding: the path, its change, where, and each holder once."""
    lines = []
    for item in found:
        described = "; ".join(
            [reservation.describe(h, now) for h in reservation.unique(item.holders)]
            + list(dict.fromkeys(describe_lease(held, now) for held in item.leases))
        )
        where = "" if item.project_root == top else f" [project {item.project_root}]"
        on = f"{item.branch}: " if with_branch and item.branch else ""
        lines.append(f"  - {on}{item.staged.path} ({item.staged.change}){where}: {described}")
    return lines


def common_choices(found: list[Finding], now: float, urgent: str) -> list[str]:
    """The choices every refusal offers: other work, wait, or ask the user (never a
    holder the reader may have no way to reach)."""
    waits = []
    reserved = [reservation.minutes_left(h, now) for item in found for h in item.holders]
    if reserved:
        waits.append(
            "a reservation ends when its holder releases it or it expires (the soonest"
            f" in {min(reserved)} min)"
        )
    leased = [
        lease_messages.minutes_until(held.get("expires"), now)
        for item in found
        for held in item.leases
    ]
    if leased:
        waits.append(
            f"a lease ends when its holder finishes or after {min(leased)} min without a write"
        )
    return [
        "- run `agent-hooks reservations` to see who holds what, and work on something else"
        " meanwhile;",
        f"- wait: {'; '.join(waits)};",
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
