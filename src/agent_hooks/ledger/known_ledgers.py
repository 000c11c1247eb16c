"""Every ledger this HOME knows of: the one list `install.sh --uninstall --purge`,
`agent-hooks reservations --all-projects` and the git guard's nested projects read.

`<state dir>/agent-hooks/ledgers.json` maps each ledger directory to the last
work tree it was used from. A ledger is recorded when it is first written: its
first reservation (`reservation_store`), its first lease (the gate, once the claim
created the ledger's lease directory), a git guard installed. Besides the record,
`ledgers` asks the repositories named by agents' state files and by the guard
record for their ledgers (ledgers made before the record existed), and lists the
old per-HOME location (projects outside git).

Invariants: remembering is best effort and never raises (a hook calls it);
`ledgers` names only ledger directories that exist. Built-ins only, so the gate
may remember a new ledger without leaving the hot path's allowlist.
"""

from __future__ import annotations

import posix

from agent_hooks import identity
from agent_hooks import posix_fs as fs
from agent_hooks.ledger import ledger_location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE = "ledgers.json"
FRESH = 86400  # seconds: an entry seen more recently than this is not rewritten


def path(state_dir: str) -> str:
    return fs.join(identity.data_dir(state_dir), FILE)


def remember(state_dir: str, project_root: str, directory: str, now: float) -> None:
    """Record that `directory` is the ledger of `project_root` (best effort)."""
    from agent_hooks import storage

    def mutate(loaded: storage.Loaded) -> dict[str, Any] | None:
        doc = loaded.doc or {}
        known = doc.get("ledgers")
        known = known if isinstance(known, dict) else {}
        entry = known.get(directory)
        if isinstance(entry, dict) and entry.get("project_root") == project_root:
            seen = entry.get("seen")
            if isinstance(seen, int | float) and now - seen < FRESH:
                return None
        known[directory] = {"project_root": project_root, "seen": int(now)}
        return {"ledgers": known}

    try:
        storage.ensure_dir(identity.data_dir(state_dir))
        storage.locked_update(path(state_dir), mutate, now=now, timeout=1.0, durable=False)
    except OSError:
        pass


def ledgers(state_dir: str) -> dict[str, str]:
    """Ledger directory -> a work tree it serves, for every ledger that exists."""
    from agent_hooks import jsonio
    from agent_hooks.reservations import index_records

    found: dict[str, str] = {}
    doc = jsonio.read_object(path(state_dir)) or {}
    known = doc.get("ledgers")
    for directory, entry in (known if isinstance(known, dict) else {}).items():
        root = entry.get("project_root") if isinstance(entry, dict) else None
        if isinstance(directory, str) and isinstance(root, str) and fs.isdir(directory):
            found[directory] = root
    for root in _named_repositories(state_dir):
        directory = ledger_location.directory(state_dir, root)
        if directory not in found and fs.isdir(directory):
            found[directory] = root
    legacy = fs.join(identity.data_dir(state_dir), "projects")
    for name in _listdir(legacy):
        entry_dir = fs.join(legacy, name)
        truth = jsonio.read_object(fs.join(entry_dir, index_records.TRUTH)) or {}
        root = truth.get("project_root")
        if isinstance(root, str) and ledger_location.directory(state_dir, root) == entry_dir:
            found.setdefault(entry_dir, root)
    return found


def project_roots(state_dir: str) -> list[str]:
    return sorted(set(ledgers(state_dir).values()))


def _named_repositories(state_dir: str) -> list[str]:
    """Work trees agents' state files and the git guard's record name."""
    from agent_hooks import storage
    from agent_hooks.git_guard import guard_record

    roots: set[object] = {entry.get("repo") for entry in guard_record.load(state_dir)}
    names = _listdir(state_dir)
    listed = set(names)
    for name in names:
        document = storage.listed_document(name, listed)  # a write may be moving it
        if document is not None and identity.agent_from_state_file(state_dir, document) is not None:
            try:
                doc = storage.load_json_object(fs.join(state_dir, document), aside=True).doc
            except OSError:
                continue  # a symlink in its place, or unreadable: no repository named
            roots.add((doc or {}).get("project_root"))
    return sorted(r for r in roots if isinstance(r, str) and fs.isabs(r) and fs.isdir(r))


def _listdir(directory: str) -> list[str]:
    try:
        return sorted(posix.listdir(directory))
    except OSError:
        return []
