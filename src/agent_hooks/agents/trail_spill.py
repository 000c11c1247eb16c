"""The trail before the state's window, kept beside it for one conversation.

Layout: `<state dir>/agent-hooks/trails/<agent key>/<conversation id>.more`, one
line per entry, `["<field>","<path>"]` (JSON: any path, newlines included), appended, created 0600 and never through a
symlink (`O_NOFOLLOW`). Invariants:

* A conversation id becomes a file name only if it is 1 to 128 characters of
  `[A-Za-z0-9_-]` (Claude Code, Codex and Gemini CLI use UUIDs); without one
  nothing is kept.
* Appending is one `write` of whole lines, so concurrent writers of one state
  file interleave lines, never parts of them; a line without a tab (a torn tail,
  a damaged file) is skipped by the reader.
* A path may be appended more than once (a file that left the window, written
  again and leaving it again); `spilled` returns each path once per field, in the
  order first kept. A path may be both here and in the window: readers merge the
  two, these first (they were seen first).
* Kept until the conversation's trail is swept (`trail_archive.sweep`).

Hot path: PostToolUse appends here when a path leaves the window; built-ins and
agent_hooks' own modules only.
"""

from __future__ import annotations

import posix

from agent_hooks import identity, jsonio, storage
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
SUFFIX = ".more"


def safe_id(conversation_id: object) -> str | None:
    """`conversation_id` when it may name a file, else None."""
    if (
        isinstance(conversation_id, str)
        and 0 < len(conversation_id) <= 128
        and _ID_CHARS.issuperset(conversation_id)
    ):
        return conversation_id
    return None


def agent_dir(agent: identity.Agent) -> str:
    """The folder of the agent's archived trails and kept paths."""
    return fs.join(identity.data_dir(agent.state_dir), "trails", agent.key)


def spill_path(agent: identity.Agent, conversation_id: object) -> str | None:
    """Where the paths that left the state's window are kept for one conversation."""
    conversation = safe_id(conversation_id)
    return fs.join(agent_dir(agent), conversation + SUFFIX) if conversation else None


def spill(agent: identity.Agent, conversation_id: object, items: list[tuple[str, str]]) -> None:
    """Append (trail field, path) pairs that left the window to the conversation's file."""
    path = spill_path(agent, conversation_id)
    if path is None or not items:
        return
    storage.ensure_dir(agent_dir(agent))
    data = "".join(jsonio.dumps([field, item]) + "\n" for field, item in items)
    flags = posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT | posix.O_NOFOLLOW | posix.O_CLOEXEC
    fd = posix.open(path, flags, 0o600)
    try:
        posix.write(fd, jsonio.to_bytes(data))
    finally:
        posix.close(fd)


def spilled(agent: identity.Agent, conversation_id: object) -> dict[str, list[str]]:
    """The paths kept beside a conversation's trail window, by field, each once."""
    path = spill_path(agent, conversation_id)
    found: dict[str, dict[str, None]] = {}
    data = None
    if path is not None:
        try:
            data = fs.read_file(path)
        except OSError:
            data = None
    for line in (data or b"").split(b"\n"):
        try:
            pair = jsonio.loads(line) if line else None
        except ValueError:
            continue
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair):
            found.setdefault(pair[0], {})[pair[1]] = None
    return {field: list(items) for field, items in found.items()}


def counts(agent: identity.Agent, doc: dict[str, Any]) -> dict[str, int]:
    """How many files the current conversation's trail holds per field, the window
    in the state document (`doc`) and the paths kept beside it together."""
    kept = spilled(agent, doc.get("conversation_id"))
    return {
        field: len({*(doc.get(field) or ()), *kept.get(field, ())})
        for field in ("files_created", "files_modified", "files_read")
    }
