"""The shape of a ledger's reservation index: its files, the compact record a
check reads, and `HotIndex`, the grouped records PreToolUse asks. Read by
`reservation_index` (loading it) and `index_build` (making it); imports nothing
but built-ins, so neither needs the other to know the shape.

Invariant: a record is a tuple whose fields are named by the constants below;
the cache's `CACHE_VERSION` changes whenever they or the snapshot change.
"""

from __future__ import annotations

import marshal
import posix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TRUTH = "reservations.json"
CACHE = "reservations.cache"
CACHE_VERSION = 6  # 4: the machine of another machine's reservation, the remote setting; 5: client; 6: a person's name in the holder
GLOB_GROUP = ""

# A cached record: (owner, exclusive, expires_at, compiled, id, pattern, reason,
#                   agent, conversation_id, holder, keep, machine, client)
# `machine` names the other machine a reservation was made on when the ledger is
# shared (docs/adr/0016), else None; such a reservation's owner is `<owner>@<machine>`,
# so an agent of the same name on this machine is never taken for its owner.
# `client`: the client its agent ran in (`clients.client_table.CLIENTS`), None when unknown.
(
    OWNER,
    EXCLUSIVE,
    EXPIRES,
    COMPILED,
    RID,
    PATTERN,
    REASON,
    AGENT,
    CONVERSATION,
    HOLDER,
    KEEP,
    MACHINE,
    CLIENT,
) = range(13)


def stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = posix.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class HotIndex:
    """What a check needs: records grouped by leading directory, each owner's
    latest exclusive expiry, and the repository's settings. A group read from the
    cache stays marshalled bytes until a check asks for it, so a check decodes
    the one or two groups that can apply, not the whole ledger."""

    __slots__ = ("exclusive_until", "groups", "problems", "settings")

    def __init__(
        self,
        groups: dict[str, list[tuple[Any, ...]] | bytes],
        exclusive_until: dict[str, float],
        settings: dict[str, Any],
        problems: list[str] | None = None,
    ) -> None:
        self.groups = groups
        self.exclusive_until = exclusive_until
        self.settings = settings
        self.problems = problems or []

    @property
    def strict(self) -> bool:
        return self.settings.get("strict") is True

    @property
    def deny_elsewhere(self) -> bool:
        """`worktree_leases deny`: a lease in another worktree refuses like one here."""
        return self.settings.get("worktree_leases") == "deny"

    @property
    def shared(self) -> bool:
        """Is the ledger shared with other machines (its `remote` setting: the git
        remote it is shared through, docs/adr/0016)?"""
        return self.settings.get("remote") is not None

    def others_hold_exclusive(self, owner: str, now: float) -> bool:
        return any(key != owner and until > now for key, until in self.exclusive_until.items())

    def group(self, key: str) -> list[tuple[Any, ...]]:
        records = self.groups.get(key, [])
        if isinstance(records, bytes):
            records = self.groups[key] = marshal.loads(records)
        return records

    def candidates(self, first_segment: str | None) -> list[tuple[Any, ...]]:
        """Records whose pattern could match a path starting with `first_segment`
        (None: any path, e.g. a target that is itself a glob)."""
        if first_segment is None:
            return [rec for key in list(self.groups) for rec in self.group(key)]
        return self.group(first_segment) + self.group(GLOB_GROUP)


def as_dict(record: tuple[Any, ...]) -> dict[str, Any]:
    """A cached record in the shape `reservation.describe` reads (`machine` only
    for another machine's)."""
    found = {
        "agent": record[AGENT],
        "conversation_id": record[CONVERSATION],
        "mode": "exclusive" if record[EXCLUSIVE] else "shared",
        "expires_at": record[EXPIRES],
        "compiled": record[COMPILED],
        "id": record[RID],
        "pattern": record[PATTERN],
        "reason": record[REASON],
        "holder": record[HOLDER],
        "keep": record[KEEP],
    }
    if record[MACHINE] is not None:
        found["machine"] = record[MACHINE]
    if record[CLIENT] is not None:
        found["client"] = record[CLIENT]
    return found
