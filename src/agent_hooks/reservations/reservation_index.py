"""A ledger's reservations on disk, and the fast read PreToolUse does.

Layout, inside the ledger directory (`ledger.ledger_location.directory`):
`reservations.json` (the truth: every reservation and the repository's settings,
JSON, written atomically and durably under `reservations.json.lock`) and
`reservations.cache` (a `marshal` snapshot of the same, grouped by each
pattern's leading literal directory, each group marshalled on its own, so a
check decodes only the compact tuples of the groups that can apply —
docs/adr/0006-reservations.md).

Invariants:

* The cache is derived: it records the (inode, size, mtime) of the truth file it
  was built from and is used only while they still match; otherwise the truth is
  parsed, and the reader writes a fresh cache (best effort, atomically: any
  process may, it holds nothing but what the truth says).
* One bad entry never hides the others: each entry is `reservation.checked`
  on its own; an entry that fails is left out of the index and reported in
  `problems` (once per truth file: the next reader finds the fresh cache).
* Reading needs no lock: both files are replaced atomically.
* Expired reservations are ignored when read and pruned at the next write.

Hot-path clean: built-in modules and agent_hooks' own; `storage`, `pattern` and
`reservation` are imported only when the cache cannot be used or the index is
written, so a check in a repository without reservations costs one `stat`.
"""

from __future__ import annotations

import marshal
import sys

from agent_hooks import posix_fs as fs
from agent_hooks.reservations.index_records import CACHE, CACHE_VERSION, TRUTH, HotIndex, stat_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_hooks import storage


def load_hot(directory: str) -> HotIndex | None:
    """The ledger's index for a check, or None when it has no reservations file."""
    truth = fs.join(directory, TRUTH)
    key = stat_key(truth)
    if key is None:
        return None
    try:
        data = fs.read_file(fs.join(directory, CACHE))
        if data is not None:
            version, pyver, built_from, settings, until, groups = marshal.loads(data)
            if version == CACHE_VERSION and pyver == sys.version_info[:2] and built_from == key:
                return HotIndex(groups, until, settings)
    except (OSError, ValueError, EOFError, TypeError):
        pass  # unusable cache: fall back to the truth
    from agent_hooks.reservations import index_build  # the cache cannot be used

    loaded = load_truth(directory)
    hot = index_build.build_hot(loaded.doc or {})
    if loaded.problem is not None:
        hot.problems.append(f"{truth} is not valid JSON ({loaded.problem}); no reservation read")
    elif stat_key(truth) == key:
        try:
            index_build.write_cache(directory, key, hot)  # the next reader need not parse again
        except OSError:
            pass
    return hot


def load_truth(directory: str, *, recover_at: float | None = None) -> storage.Loaded:
    from agent_hooks import storage

    return storage.load_json_object(fs.join(directory, TRUTH), recover_at=recover_at)


def lock_path(directory: str) -> str:
    return fs.join(directory, TRUTH + ".lock")
