"""The files a writer holds, as its agent's state remembers them (`held`): each
with its fingerprint after the writer's own last write, so that a change by
anyone else — a shell command the gate could not read, a script, git, a client
without hooks, a checkpoint rewind — is told to the holder at its next hook.
The net under the gate (issue 18): what cannot be refused before it runs is
detected after.

Invariants:

* `note` records a writer's own write (PostToolUse of its edit, or of its shell
  command with the files it changed): the file's fingerprint becomes the last
  write, in the state and on the writer's lease (`lease_store.note_written`),
  where other writers' hooks compare too.
* `check` compares each of this writer's held files with its last write: one
  whose content differs (`fingerprints.changed`) is reported once — the
  fingerprint then moves to the file as it is — naming who changed it when
  another writer's hook saw it (`changed` on the lease), and when: its mtime, or
  for a file that is gone the mtime of the nearest directory above it (a removal
  moves it) when that is after the writer's last write. A change during the
  writer's own shell command may be its own: it is told as such. Entries end
  with the lease: past its end as of the writer's last write.
* Linear in the writer's held files (at most `state.MAX_HELD`); one `stat` each
  while nothing changed, a read only when the mtime or size moved.

Built-ins only: every PostToolUse runs `check`.
"""

from __future__ import annotations

import posix

from agent_hooks import fingerprints
from agent_hooks.agents.state import MAX_HELD
from agent_hooks.tool_use import in_window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.tool_use import Window

    Doc = dict[str, Any]


class Change:
    """A held file found changed: what to tell the holder and mark on its lease."""

    __slots__ = ("at", "ledger", "path", "rel", "since", "worktree")

    def __init__(self, path: str, entry: dict[str, Any], at: float, since: object) -> None:
        self.path = path
        self.ledger = str(entry.get("ledger"))
        self.rel = str(entry.get("rel"))
        self.worktree = str(entry.get("worktree"))
        self.at = at  # when the file was changed (its mtime), as far as can be told
        self.since = since  # the writer's last write, epoch seconds


def note(
    doc: Doc,
    writer: str,
    path: str,
    fingerprint: str | None,
    place: tuple[str, str, str],
    until: float,
    now: float,
) -> None:
    """`writer` wrote `path` (absolute), which it holds in `place` = (ledger, rel,
    worktree) until `until` (its lease's end): its fingerprint (`fingerprint`) is the
    writer's last write."""
    held = doc["held"]
    held.pop(path, None)  # the newest last
    if fingerprint is None:  # gone (deleted by the writer): nothing to hold any more
        return
    ledger, rel, worktree = place
    held[path] = {
        "writer": writer,
        "ledger": ledger,
        "rel": rel,
        "worktree": worktree,
        "fp": fingerprint,
        "at": int(now),
        "until": int(until),
    }
    while len(held) > MAX_HELD:
        del held[next(iter(held))]


def moved(doc: Doc, writer: str, fingerprint_of: dict[str, str | None]) -> list[Change]:
    """Of the files a writer's own tool call just changed (path -> fingerprint now),
    those it held with another content before: their change may be its own or
    someone else's (a shell command the client blames for every change)."""
    found = []
    for path, fingerprint in fingerprint_of.items():
        entry = doc["held"].get(path)
        if (
            entry is None
            or entry.get("writer") != writer
            or fingerprints.read(entry.get("fp")) == fingerprint
        ):
            continue
        at = fingerprints.mtime_ns(fingerprint) / 1e9 if fingerprint else 0.0
        found.append(Change(path, entry, at, entry.get("at")))
    return found


def _removed_at(path: str, since: float, now: float) -> float:
    """When a held file found gone was removed, as far as can be told: the mtime of
    the nearest directory on its path still there (a removal moves it), when that
    moved after the holder's last write (`since`); else now."""
    here = path
    while True:
        parent = here.rpartition("/")[0] or "/"
        if parent == here:
            return now
        here = parent
        try:
            moved = posix.stat(here).st_mtime
        except OSError:
            continue
        return moved if since < moved <= now else now


def check(
    doc: Doc, writer: str, now: float, window: Window | None = None
) -> tuple[list[Change], list[Change]]:
    """This writer's held files changed by someone else since its last write:
    (changes, changes inside `window`, the writer's own shell command's time
    (`tool_use.in_window`), which may be its own). Both are reported once;
    entries past their lease are dropped."""
    held = doc["held"]
    foreign: list[Change] = []
    own: list[Change] = []
    for path in list(held):
        entry = held[path]
        if entry.get("writer") != writer:
            continue
        at, until = entry.get("at"), entry.get("until")
        if not isinstance(at, int | float) or not isinstance(until, int | float) or until <= now:
            del held[path]  # its lease is over: nothing held to watch
            continue
        fingerprint = fingerprints.read(entry.get("fp"))
        if fingerprint is None:
            del held[path]
            continue
        now_fingerprint = fingerprints.changed(path, fingerprint)
        if now_fingerprint is None:
            continue
        changed_at = (
            fingerprints.mtime_ns(now_fingerprint) / 1e9
            if now_fingerprint != fingerprints.GONE
            else _removed_at(path, at, now)
        )
        found = Change(path, entry, changed_at, at)
        if window is not None and in_window(window, changed_at):
            own.append(found)
        else:
            foreign.append(found)
        if now_fingerprint == fingerprints.GONE:
            del held[path]  # gone: told once
        else:
            entry["fp"] = now_fingerprint  # told once
    return foreign, own
