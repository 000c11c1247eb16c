"""Which ledgers this HOME has used: for `reservations --all-projects`, the git
guard's nested projects, and `install.sh --uninstall --purge`.

`<state dir>/agent-hooks/ledgers.json` maps each ledger directory to the last
work tree it was used from. Ledgers of projects outside git (the old per-HOME
location) are found by listing that directory. Nothing here is on the hot path.
"""

from __future__ import annotations

import os
from typing import Any

from agent_hooks import identity, storage
from agent_hooks.ledger import ledger_location
from agent_hooks.reservations import reservation_index

FILE = "ledgers.json"


def path(state_dir: str) -> str:
    return os.path.join(identity.data_dir(state_dir), FILE)


def remember(state_dir: str, project_root: str, directory: str, now: float) -> None:
    """Record that `directory` is the ledger of `project_root` (best effort)."""

    def mutate(loaded: storage.Loaded) -> dict[str, Any] | None:
        doc = loaded.doc or {}
        known = doc.get("ledgers")
        known = known if isinstance(known, dict) else {}
        entry = known.get(directory)
        if isinstance(entry, dict) and entry.get("project_root") == project_root:
            seen = entry.get("seen")
            if isinstance(seen, int | float) and now - seen < 86400:
                return None
        known[directory] = {"project_root": project_root, "seen": int(now)}
        return {"ledgers": known}

    try:
        storage.ensure_dir(identity.data_dir(state_dir))
        storage.locked_update(path(state_dir), mutate, now=now, timeout=1.0, durable=False)
    except OSError:
        pass


def ledgers(state_dir: str) -> dict[str, str]:
    """Ledger directory -> a work tree it serves (ledgers that still exist)."""
    found: dict[str, str] = {}
    try:
        doc = storage.load_json_object(path(state_dir)).doc or {}
    except OSError:
        doc = {}
    known = doc.get("ledgers")
    for directory, entry in (known if isinstance(known, dict) else {}).items():
        root = entry.get("project_root") if isinstance(entry, dict) else None
        if isinstance(root, str) and os.path.isdir(directory):
            found[directory] = root
    legacy = os.path.join(identity.data_dir(state_dir), "projects")
    try:
        entries = sorted(os.scandir(legacy), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        try:
            truth = reservation_index.load_truth(entry.path).doc
        except OSError:
            continue
        if truth and isinstance(truth.get("project_root"), str):
            root = truth["project_root"]
            if ledger_location.directory(state_dir, root) == entry.path:
                found[entry.path] = root
    return found


def project_roots(state_dir: str) -> list[str]:
    return sorted(set(ledgers(state_dir).values()))
