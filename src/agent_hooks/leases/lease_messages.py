"""What people and models are told about a lease: who holds it, when it last
wrote, when it ends, and what to do instead of editing.

Loaded only when a lease refuses an edit or must be described (the hot path
of an allowed edit never pays for it). Holders are named by `writer.describe`;
every name and description is one printable line.
"""

from __future__ import annotations

from agent_hooks import writers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    Lease = dict[str, Any]


def minutes_until(moment: object, now: float) -> int:
    if isinstance(moment, bool) or not isinstance(moment, int | float):
        return 0
    return max(0, int((moment - now + 59) // 60))


def ago(moment: object, now: float) -> str:
    if isinstance(moment, bool) or not isinstance(moment, int | float):
        return "at an unknown time"
    seconds = max(0, int(now - moment))
    if seconds < 60:
        return f"{seconds} s ago"
    return f"{seconds // 60} min ago"


def holder_label(lease: Mapping[str, Any], card: Mapping[str, Any] | None = None) -> str:
    card = card or {}
    description = card.get("description")
    name = card.get("name")
    return writers.describe(
        lease,
        description=description if isinstance(description, str) else None,
        name=name if isinstance(name, str) else None,
    )


def deny_message(
    rel: str, lease: Mapping[str, Any], now: float, card: Mapping[str, Any] | None
) -> str:
    """Why an edit of `rel` is refused, and what the model can do instead."""
    who = holder_label(lease, card)
    ends = minutes_until(lease.get("expires"), now)
    return (
        f"agent-hooks: {rel} is being changed by {who}: it last wrote the file "
        f"{ago(lease.get('written'), now)}, and its lease ends when it finishes "
        f"or after {ends} min without a write.\n"
        "Do not edit it now. Choose one:\n"
        "- work on other files or another part of the task, and come back to this one later"
        " (you will be told when it is free);\n"
        "- wait for the holder to finish;\n"
        "- if this file must change now, stop and ask the user how to proceed."
    )


def elsewhere_note(rel: str, leases: list[Lease], now: float) -> str:
    """The context given with an allowed edit of a file other worktrees are changing."""
    parts = []
    for lease in leases:
        branch = lease.get("branch")
        where = f"on branch {branch}" if isinstance(branch, str) and branch else "elsewhere"
        parts.append(
            f"{holder_label(lease)} in worktree {lease.get('worktree_path') or lease.get('worktree')} ({where}), "
            f"last write {ago(lease.get('written'), now)}"
        )
    return (
        f"agent-hooks: note: {rel} is also being changed in another worktree of this "
        f"repository by {'; '.join(parts)}. Expect a merge conflict on this file; "
        "keep your change small or coordinate with that agent."
    )


MAX_TREE_FILES = 5  # held files a refused git command names; the rest are counted


def tree_rewrite_message(what: str, held: list[str]) -> str:
    """Why a git command that rewrites the whole work tree is refused while other
    writers hold files in it (each item: `path (holder)`), and the safe forms."""
    from agent_hooks.reservations.reservation import one_line

    named = ", ".join(one_line(item, 200) for item in held[:MAX_TREE_FILES])
    more = len(held) - MAX_TREE_FILES
    if more > 0:
        named += f" and {more} more"
    return (
        f"agent-hooks: `{one_line(what, 80)}` would change or sweep away files other writers "
        f"are changing in this work tree, whose work is not committed yet: {named}.\n"
        "Do not run it now. Choose one:\n"
        "- touch only your own files: `git stash push -- <your paths>`, "
        "`git checkout -- <your files>`, `git restore <your files>`;\n"
        "- wait until they are done (`agent-hooks reservations` shows who holds what);\n"
        "- if the whole work tree must change now, stop and ask the user how to proceed."
    )
