"""Lease rules, pure: who may edit a file another writer is changing
(docs/adr/0014-writers-and-leases.md).

A lease is the implicit claim a writer holds on one file it is changing. It is
a dict: `writer` (its key), `agent`, `conversation`, `agent_id`, `agent_type`,
the holder process (`pid`, `start`, `host`), `worktree` (which work tree it was
taken in: `repository.worktree_id`, the same through any path to the checkout),
`worktree_path` (that work tree as the holder reached it, for people) and `branch`, `claimed`, `written` and `expires` (epoch seconds),
`tool_use_id`, and `source` (`edit` or `bash`). A file's leases are a list,
one per worktree at most: worktrees hold separate copies of a file.

Invariants:

* A lease counts while it has not expired (`expires` = last write + the
  repository's lease minutes) and its holder is not known to be dead
  (`liveness.alive` is not False). A holder on another host is judged by time
  alone, so a silent one stops counting when its lease runs out.
* In the writer's own worktree: its own lease and its parent's never block
  (the parent delegated the work; the lease moves to the subagent when it
  writes); a subagent's lease blocks its parent and its siblings; another
  agent's lease blocks — and so does one of the same agent in another
  conversation (one AGENT_NAME in two panes: told apart by conversation). A lease in another worktree never blocks: it is a merge
  conflict ahead, told, not refused (unless the repository says `deny`).
* Names of lease files are the worktree-relative path, escaped so that it is
  one file name (`/` → `%2F`); a path too long for a name is cut and ends in
  `~<hash>`, and `~` appears nowhere else, so a name's prefix is the path's.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import writers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

    Lease = dict[str, Any]

RESOLUTION = 60  # seconds: a renewal of one's own fresh lease needs no write
DEFAULT_MINUTES = 10
MAX_NAME_BYTES = 180


def escape(text: str) -> str:
    out = text.replace("%", "%25").replace("/", "%2F").replace("~", "%7E")
    return "%2E" + out[1:] if out.startswith(".") else out


def unescape(name: str) -> str:
    return name.replace("%2E", ".").replace("%7E", "~").replace("%2F", "/").replace("%25", "%")


def file_name(key: str) -> str:
    """A file name for a path or a writer key: escaped, or cut with a hash."""
    name = escape(key)
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= MAX_NAME_BYTES:
        return name
    end = 120
    while end > 117 and 0x80 <= raw[end] < 0xC0:  # never cut a character (≤ 4 bytes) in half
        end -= 1
    cut = raw[:end].decode("utf-8", "surrogateescape")  # a byte no UTF-8 kept as it was
    while "%" in cut[-2:]:  # never cut an escape in half
        cut = cut[:-1]
    return f"{cut}~{fs.name_hash(key)}"


def name_prefix(name: str) -> tuple[str, bool]:
    """(what a lease file's name says of its path, whether that is the whole path)."""
    head, cut, _ = name.partition("~")
    return unescape(head), not cut


def counts(
    lease: Mapping[str, Any], now: float, alive: Callable[[Mapping[str, Any]], bool | None]
) -> bool:
    expires = lease.get("expires")
    if isinstance(expires, bool) or not isinstance(expires, int | float) or expires <= now:
        return False
    return alive(lease) is not False


class Judgement:
    """What a writer's edit of one file meets: its own lease (or its parent's),
    the leases that block it, and the leases held in other worktrees."""

    __slots__ = ("blockers", "elsewhere", "own")

    def __init__(self) -> None:
        self.own: Lease | None = None
        self.blockers: list[Lease] = []
        self.elsewhere: list[Lease] = []


def judge(
    leases: list[Lease],
    me: writers.Writer,
    worktree: str,
    now: float,
    alive: Callable[[Mapping[str, Any]], bool | None],
) -> Judgement:
    found = Judgement()
    for lease in leases:
        if not isinstance(lease, dict) or not counts(lease, now, alive):
            continue
        if lease.get("worktree") != worktree:
            found.elsewhere.append(lease)
            continue
        relation = me.relation(str(lease.get("writer")))
        if relation != writers.OTHER and another_conversation(lease, me):
            relation = writers.OTHER  # one AGENT_NAME in two running conversations
        if relation == writers.SELF:
            found.own = lease
        elif relation == writers.PARENT:
            found.own = found.own or lease  # delegated: it moves to this subagent
        else:
            found.blockers.append(lease)
    return found


def another_conversation(lease: Mapping[str, Any], me: writers.Writer) -> bool:
    """Is the lease held by another conversation than the writer's (for a lease of
    the same owner: two panes launched with one AGENT_NAME, another writer)? Only
    when both conversations are known. The one rule: the gate (`judge`) and the git
    guard's commit check ask it."""
    theirs = lease.get("conversation")
    return bool(
        me.conversation and isinstance(theirs, str) and theirs and theirs != me.conversation
    )


def new(
    me: writers.Writer,
    holder: Mapping[str, Any],
    worktree: str,
    branch: str | None,
    now: float,
    minutes: int,
    *,
    source: str,
    tool_use_id: str | None = None,
    claimed: float | None = None,
    worktree_path: str | None = None,
    fingerprint: str | None = None,
) -> Lease:
    noted = {"fp": fingerprint, "fp_at": int(now)} if fingerprint is not None else {}
    return {
        **noted,
        **me.as_dict(),
        "pid": holder.get("pid"),
        "start": holder.get("start"),
        "host": holder.get("host"),
        "worktree": worktree,
        "worktree_path": worktree_path or worktree,
        "branch": branch,
        "claimed": int(now if claimed is None else claimed),
        "written": int(now),
        "expires": int(now) + minutes * 60,
        "tool_use_id": tool_use_id,
        "source": source,
    }


def fresh(lease: Mapping[str, Any], me: writers.Writer, now: float, minutes: int) -> bool:
    """Is `lease` this writer's own, written within RESOLUTION and not cut short by
    a change of the lease minutes? Then a renewal need not be written."""
    written, expires = lease.get("written"), lease.get("expires")
    return (
        lease.get("writer") == me.key
        and isinstance(written, int | float)
        and isinstance(expires, int | float)
        and now - written < RESOLUTION
        and expires == int(written) + minutes * 60
    )
