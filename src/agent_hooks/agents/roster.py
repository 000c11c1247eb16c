"""All agents known in a state directory, read without locks (each file is
replaced atomically, so a lock-free read sees a whole document; one that a write
is moving is found under its aside name: `storage`, `aside`).

This scans every state file: it serves SessionStart and the CLI, never the
PreToolUse/PostToolUse hot path.
"""

from __future__ import annotations

import os

from agent_hooks import identity, storage
from agent_hooks.agents import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ACTIVE_WINDOW = 3600  # seconds of silence after which an agent without a known pid counts as gone


class AgentRecord:
    """One agent's state file as found on disk."""

    __slots__ = ("agent", "doc", "mtime", "problem")

    def __init__(
        self, agent: identity.Agent, doc: dict[str, Any], mtime: float, problem: str | None
    ) -> None:
        self.agent = agent
        self.doc = doc
        self.mtime = mtime
        self.problem = problem


def load_all(state_dir: str, now: float) -> list[AgentRecord]:
    """Every agent with a state file in `state_dir`, sorted by name."""
    records = []
    try:
        entries = list(os.scandir(state_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = {entry.name for entry in entries}
    for entry in entries:
        name = storage.listed_document(entry.name, names)  # a write may be moving it
        agent = identity.agent_from_state_file(state_dir, name) if name is not None else None
        if agent is None:
            continue
        try:
            found = storage.stat_current(agent.state_path, aside=True)
            if found is None:
                continue  # swept meanwhile
            mtime = found.st_mtime
            loaded = storage.load_json_object(agent.state_path, aside=True)
        except OSError as exc:
            records.append(AgentRecord(agent, state.normalize(None, agent.name, now), 0, str(exc)))
            continue
        doc = state.normalize(loaded.doc, agent.name, now)
        records.append(AgentRecord(agent, doc, mtime, loaded.problem))
    records.sort(key=lambda r: (r.agent.name is not None, r.agent.name or ""))
    return records


def ever_ran(record: AgentRecord) -> bool:
    """Did a conversation ever start on this state file (or can it not be read)? One
    that never did holds only what an earlier release's CLI mirrored into it from
    a shell (its reservations): it is no agent, and listings leave it out."""
    doc = record.doc
    return record.problem is not None or doc["registered"] or bool(doc["conversations"])


def pid_alive(pid: object) -> bool | None:
    """True/False when the process can be checked, None when no pid is known."""
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 1 << 31:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return None
    return True


def is_active(doc: dict[str, Any], now: float) -> bool:
    """An agent is active while its conversation has not ended and its claude
    process lives (or, with no pid known, it was heard from within the hour)."""
    if doc.get("active") is not True:
        return False
    alive = pid_alive(doc.get("pid"))
    if alive is not None:
        return alive
    return now - float(doc.get("last_activity") or 0) < ACTIVE_WINDOW
