"""Archived trails: when a conversation ends its trail is kept for later reading.

Layout: `<state dir>/agent-hooks/trails/<agent key>/<conversation id>.json`.
Invariants: a conversation id becomes a file name only if it is 1 to 128 characters
of `[A-Za-z0-9_-]` (Claude Code uses UUIDs); at most `KEEP_PER_AGENT` trails are
kept per agent, the oldest removed first, each with the paths kept beside its
window (`trail_spill`, `<conversation id>.more`); archives and kept paths older
than the sweep cutoff go.
"""

from __future__ import annotations

import os

from agent_hooks import identity, storage
from agent_hooks.agents.trail_spill import SUFFIX, agent_dir, safe_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KEEP_PER_AGENT = 20


def archive(agent: identity.Agent, trail: dict[str, Any], now: float) -> str | None:
    """Write `trail` to the agent's archive; return its path (None without a usable id)."""
    conversation = safe_id(trail.get("conversation_id")) or f"unknown-{int(now)}"
    directory = agent_dir(agent)
    storage.ensure_dir(directory)
    path = os.path.join(directory, conversation + ".json")
    storage.write_json_atomic(path, {**trail, "archived_at": int(now)})
    _prune(directory)
    return path


def load(agent: identity.Agent, conversation_id: object) -> dict[str, Any] | None:
    conversation = safe_id(conversation_id)
    if conversation is None:
        return None
    loaded = storage.load_json_object(os.path.join(agent_dir(agent), conversation + ".json"))
    return loaded.doc


def list_archived(agent: identity.Agent) -> list[dict[str, Any]]:
    """The agent's archived trails, newest first."""
    found = []
    for path in _files(agent_dir(agent)):
        doc = storage.load_json_object(path).doc
        if doc is not None:
            found.append(doc)
    found.sort(key=lambda d: d.get("archived_at") or 0, reverse=True)
    return found


def _files(directory: str, suffixes: tuple[str, ...] = (".json",)) -> list[str]:
    try:
        return [
            e.path
            for e in os.scandir(directory)
            if e.name.endswith(suffixes) and e.is_file(follow_symlinks=False)
        ]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _prune(directory: str) -> None:
    files = _files(directory)
    if len(files) <= KEEP_PER_AGENT:
        return
    files.sort(key=lambda p: os.stat(p, follow_symlinks=False).st_mtime_ns)
    for path in files[: len(files) - KEEP_PER_AGENT]:
        os.unlink(path)
        try:
            os.unlink(path.removesuffix(".json") + SUFFIX)
        except FileNotFoundError:
            pass


def sweep(state_dir: str, cutoff: float, *, dry_run: bool = False) -> list[str]:
    """Remove archived trails last written before `cutoff`, then empty agent folders."""
    removed = []
    root = os.path.join(identity.data_dir(state_dir), "trails")
    try:
        agents = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in agents:
        for path in _files(entry.path, (".json", SUFFIX)):
            if os.stat(path, follow_symlinks=False).st_mtime < cutoff:
                if not dry_run:
                    os.unlink(path)
                removed.append(path)
        if not dry_run:
            try:
                os.rmdir(entry.path)
            except OSError:
                pass  # not empty
    return removed
