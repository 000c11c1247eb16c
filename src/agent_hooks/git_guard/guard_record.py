"""The record of the git guards `agent-hooks guard install` put in place, so that
`./install.sh --uninstall --purge` can find and remove them (and list the
repositories' ledgers) after the CLI itself is gone.

Layout: `<state dir>/agent-hooks/guards.json` =
`{"version": 1, "guards": [{"repo": TOP, "hook": PATH, "installed_at": ISO}]}`,
one entry per hook file (`pre-commit` and `reference-transaction` each; a repository
whose `core.hooksPath` changed may have them in two places).

Invariants: every change is a read-modify-write under the file's lock
(`storage.locked_update`), so concurrent installs lose no entry; the record only
says where to look: whoever removes a guard checks first that the file still is
one (`guard_hooks.read_meta`). Standard library only (install.sh's Python runs it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from agent_hooks import identity, storage, timestamps

FILE = "guards.json"


def path(state_dir: str) -> str:
    return os.path.join(identity.data_dir(state_dir), FILE)


def load(state_dir: str) -> list[dict[str, str]]:
    """The recorded guards (entries without a usable hook path are skipped)."""
    doc = storage.load_json_object(path(state_dir)).doc or {}
    guards = doc.get("guards")
    return [
        g
        for g in (guards if isinstance(guards, list) else ())
        if isinstance(g, dict) and isinstance(g.get("hook"), str) and os.path.isabs(g["hook"])
    ]


def _update(state_dir: str, change: Any) -> None:
    storage.ensure_dir(identity.data_dir(state_dir))

    def mutate(loaded: storage.Loaded) -> dict[str, Any]:
        guards = (loaded.doc or {}).get("guards")
        kept = [g for g in guards if isinstance(g, dict)] if isinstance(guards, list) else []
        return {"version": 1, "guards": change(kept)}

    storage.locked_update(path(state_dir), mutate, now=time.time())


def add(state_dir: str, repo: str, hooks: Sequence[str], now: float) -> None:
    """Record the hook files of one repository's guard (one locked update)."""
    entries = [{"repo": repo, "hook": hook, "installed_at": timestamps.iso(now)} for hook in hooks]
    _update(state_dir, lambda guards: [g for g in guards if g.get("hook") not in hooks] + entries)


def remove(state_dir: str, hooks: Sequence[str]) -> None:
    if os.path.exists(path(state_dir)):
        _update(state_dir, lambda guards: [g for g in guards if g.get("hook") not in hooks])
