"""A project's reservation index on disk, and the fast read PreToolUse does.

Layout: `<state dir>/agent-hooks/projects/<name>-<hash>/` holding
`reservations.json` (the truth: every reservation of the project, JSON, written
atomically and durably under `reservations.json.lock`) and `reservations.cache`
(a `marshal` snapshot of the same, grouped by each pattern's leading literal
directory, each group marshalled on its own, so a check decodes only the compact
tuples of the groups that can apply and matches only those patterns —
docs/adr/0006-reservations.md).

Invariants:

* The cache is derived: it records the (inode, size, mtime) of the truth file it
  was built from and is used only while they still match; otherwise the truth is
  parsed. A crash between the two writes therefore costs speed, never correctness.
* Reading needs no lock: both files are replaced atomically.
* Expired reservations are ignored when read and pruned at the next write.

Hot-path clean: built-in modules and agent_hooks' own; `storage` and `pattern`
are imported only when the cache cannot be used or the index is written, so a
check in a project without reservations costs one `stat`.
"""

from __future__ import annotations

import marshal
import posix
import sys

from agent_hooks import identity
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks import storage

TRUTH = "reservations.json"
CACHE = "reservations.cache"
_CACHE_VERSION = 2  # 2: each group marshalled on its own, decoded only when asked for
_GLOB_GROUP = ""

# A cached record: (agent, exclusive, expires_at, compiled, id, pattern, reason)
AGENT, EXCLUSIVE, EXPIRES, COMPILED, RID, PATTERN, REASON = range(7)


def project_key(project_root: str) -> str:
    """`<basename>-<64-bit FNV-1a of the root path>`: stable and file-name safe."""
    h = 0xCBF29CE484222325
    for byte in project_root.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    base = "".join(c if c.isalnum() or c in "._-" else "_" for c in fs.basename(project_root))
    return f"{base.lstrip('.')[:40] or 'root'}-{h:016x}"


def index_dir(state_dir: str, project_root: str) -> str:
    return fs.join(identity.data_dir(state_dir), "projects", project_key(project_root))


def _stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = posix.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class HotIndex:
    """What a check needs: records grouped by leading directory, each agent's
    latest exclusive expiry, and the project's strict-mode setting. A group read
    from the cache stays marshalled bytes until a check asks for it, so a check
    decodes the one or two groups that can apply, not the whole project."""

    __slots__ = ("exclusive_until", "groups", "strict")

    def __init__(
        self,
        groups: dict[str, list[tuple[Any, ...]] | bytes],
        exclusive_until: dict[str | None, float],
        strict: bool,
    ) -> None:
        self.groups = groups
        self.exclusive_until = exclusive_until
        self.strict = strict

    def others_hold_exclusive(self, me: str | None, now: float) -> bool:
        return any(agent != me and until > now for agent, until in self.exclusive_until.items())

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
        return self.group(first_segment) + self.group(_GLOB_GROUP)


def _first_literal(compiled: list[Any]) -> str | None:
    from agent_hooks.reservations import pattern

    return pattern.first_literal(compiled)


def build_hot(doc: dict[str, Any]) -> HotIndex:
    groups: dict[str, list[tuple[Any, ...]] | bytes] = {}
    until: dict[str | None, float] = {}
    for res in doc.get("reservations", []):
        exclusive = res.get("mode") != "shared"
        record = (
            res.get("agent"),
            exclusive,
            float(res["expires_at"]),
            res["compiled"],
            res["id"],
            res["pattern"],
            res.get("reason", ""),
        )
        key = _first_literal(res["compiled"])
        group = groups.setdefault(_GLOB_GROUP if key is None else key, [])
        assert isinstance(group, list)
        group.append(record)
        if exclusive:
            until[res.get("agent")] = max(until.get(res.get("agent"), 0.0), record[EXPIRES])
    return HotIndex(groups, until, doc.get("strict") is True)


def load_hot(state_dir: str, project_root: str) -> HotIndex | None:
    """The project's index for a check, or None when it has no reservations file."""
    directory = index_dir(state_dir, project_root)
    key = _stat_key(fs.join(directory, TRUTH))
    if key is None:
        return None
    try:
        data = fs.read_file(fs.join(directory, CACHE))
        if data is not None:
            version, pyver, built_from, strict, until, groups = marshal.loads(data)
            if version == _CACHE_VERSION and pyver == sys.version_info[:2] and built_from == key:
                return HotIndex(groups, until, strict)
    except (OSError, ValueError, EOFError, TypeError):
        pass  # unusable cache: fall back to the truth
    return build_hot(load_truth(directory).doc or {})


def load_truth(directory: str, *, recover_at: float | None = None) -> storage.Loaded:
    from agent_hooks import storage

    return storage.load_json_object(fs.join(directory, TRUTH), recover_at=recover_at)


def write(directory: str, doc: dict[str, Any]) -> None:
    """Replace the truth (durably) and then its cache. Caller holds the lock."""
    from agent_hooks import storage

    truth = fs.join(directory, TRUTH)
    storage.write_json_atomic(truth, doc, durable=True)
    key = _stat_key(truth)
    hot = build_hot(doc)
    snapshot = (
        _CACHE_VERSION,
        sys.version_info[:2],
        key,
        hot.strict,
        hot.exclusive_until,
        {key: marshal.dumps(records) for key, records in hot.groups.items()},
    )
    storage.write_bytes_atomic(fs.join(directory, CACHE), marshal.dumps(snapshot), durable=False)


def lock_path(directory: str) -> str:
    return fs.join(directory, TRUTH + ".lock")


def as_dict(record: tuple[Any, ...]) -> dict[str, Any]:
    """A cached record in the shape `reservation.describe` reads."""
    return {
        "agent": record[AGENT],
        "mode": "exclusive" if record[EXCLUSIVE] else "shared",
        "expires_at": record[EXPIRES],
        "compiled": record[COMPILED],
        "id": record[RID],
        "pattern": record[PATTERN],
        "reason": record[REASON],
    }
