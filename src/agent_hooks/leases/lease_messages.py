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
    rel: str,
    lease: Mapping[str, Any],
    now: float,
    card: Mapping[str, Any] | None,
    me: writers.Writer | None = None,
) -> str:
    """Why an edit of `rel` is refused, and what the model can do instead. When the
    holder runs under the refused writer's own AGENT_NAME in another conversation
    (`me`: one name given to two panes), it is told so, and how that is mended."""
    who = holder_label(lease, card)
    ends = minutes_until(lease.get("expires"), now)
    twin = _same_name_elsewhere(lease, me)
    if twin is not None:
        return (
            f"agent-hooks: {rel} is being changed by another conversation ({twin}) that runs "
            f'under your own AGENT_NAME "{lease.get("agent")}" ({who} there): two conversations '
            f"share one name. It last wrote the file {ago(lease.get('written'), now)}; its "
            f"lease ends when it finishes or after {ends} min without a write.\n"
            "Do not edit it now. Choose one:\n"
            "- work on other files or another part of the task, and come back to this one later"
            " (you will be told when it is free);\n"
            "- tell the user that two conversations run as the same agent, and ask them to "
            "relaunch one of them with a name of its own (e.g. `agent-hooks launch --name "
            "NAME <client>`)."
        )
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


def _same_name_elsewhere(lease: Mapping[str, Any], me: writers.Writer | None) -> str | None:
    """The holder's conversation (its first 8 characters) when it is another
    conversation of the refused writer's own agent name, else None."""
    theirs = lease.get("conversation")
    if me is None or me.agent is None or lease.get("agent") != me.agent:
        return None
    if not isinstance(theirs, str) or not me.conversation or theirs == me.conversation:
        return None
    return theirs[:8]


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


def _named(held: list[str]) -> str:
    """The first MAX_TREE_FILES of `held` (each one line), and how many more."""
    from agent_hooks.wording import one_line

    named = ", ".join(one_line(item, 200) for item in held[:MAX_TREE_FILES])
    more = len(held) - MAX_TREE_FILES
    if more > 0:
        named += f" and {more} more"
    return named


def tree_rewrite_message(what: str, held: list[str], unsure: list[str] | None = None) -> str:
    """Why a git command that rewrites the whole work tree is refused while other
    writers hold files in it (each item of `held`: `path (holder)`), or reserved
    parts of it where their uncommitted work cannot be told (each of `unsure`:
    `pattern (holder: why)`), and the safe forms."""
    from agent_hooks.wording import one_line

    command = one_line(what, 80)
    if held:
        said = (
            f"agent-hooks: `{command}` would change or sweep away files other writers "
            f"are changing in this work tree, whose work is not committed yet: {_named(held)}."
        )
        if unsure:
            said += (
                " It may also sweep away work not committed yet in what others reserved, "
                f"which cannot be checked here: {_named(unsure)}."
            )
    else:
        said = (
            f"agent-hooks: `{command}` may change or sweep away work other writers have not "
            "committed yet in what they reserved in this work tree, which cannot be checked "
            f"here: {_named(unsure or [])}."
        )
    return (
        f"{said}\n"
        "Do not run it now. Choose one:\n"
        "- touch only your own files: `git stash push -- <your paths>`, "
        "`git checkout -- <your files>`, `git restore <your files>`;\n"
        "- wait until they are done (`agent-hooks reservations` shows who holds what);\n"
        "- if the whole work tree must change now, stop and ask the user how to proceed."
    )


def worktree_message(what: str, tree: str, held: list[str], prune: bool) -> str:
    """Why `git worktree remove --force` (or, `prune`, `git worktree prune`) is
    refused while other writers hold files in the linked work tree `tree` (each
    item: `path (holder)`), and what to do instead."""
    from agent_hooks.wording import one_line

    command, named = one_line(what, 80), _named(held)
    if prune:
        return (
            f"agent-hooks: `{command}` would drop git's record of the work tree {tree}, "
            "which is not where git recorded it (moved, unmounted or deleted), while other "
            f"writers are changing files there, whose work is not committed yet: {named}. "
            "Its index and checked-out branch would be lost for good (`git worktree repair` "
            "cannot bring them back).\n"
            "Do not run it now. Choose one:\n"
            "- `git worktree prune -n` shows what it would drop; if the tree moved, "
            "`git worktree repair <its new path>` keeps it;\n"
            "- wait until they are done (`agent-hooks reservations` shows who holds what);\n"
            "- if the record must go now, stop and ask the user how to proceed."
        )
    return (
        f"agent-hooks: `{command}` would delete the work tree {tree} with the work other "
        f"writers are doing there, not committed yet: {named}.\n"
        "Do not run it now. Choose one:\n"
        "- `git worktree remove` without --force: git refuses a tree holding changes;\n"
        "- wait until they are done (`agent-hooks reservations` shows who holds what);\n"
        "- if the tree must go now, stop and ask the user how to proceed."
    )
