"""The manifest of a workspace (`<id>/.manifest.json`), as pure functions over
plain dicts: create, read forgivingly, track and untrack files, search them.
The file itself is read and written by workspace_store, under its lock.

The manifest has exactly the design document's structure::

    {"session_id": id, "created_at": ISO, "last_activity": ISO,
     "context_files": {relative path: {"created": ISO, "for": str, "keywords": [str]}},
     "context_index": {keyword: [relative path, ...]}}

Invariants:

* `context_index` is always rebuilt from `context_files` (`rebuild_index`), so
  the two never disagree.
* Every path in `context_files` passes `workspace.check_relative`:
  `normalize_manifest` drops an entry whose path does not, so nothing read from
  disk can name a file outside the workspace.
* Every change (`add_file`, `remove_file`) moves `last_activity`, which the 24 h
  sweep judges (`idle_since`).

Only built-in modules are imported: `after_write` runs inside PostToolUse.
"""

from __future__ import annotations

from agent_hooks.timestamps import iso, parse_iso
from agent_hooks.workspaces.workspace import (
    MAX_KEYWORD,
    MAX_KEYWORDS,
    WorkspaceError,
    check_relative,
    keyword_matches,
    keywords_from_path,
    merge_keywords,
    normalize_keyword,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterable
    from typing import Any


def new_manifest(workspace_id: str, now: float) -> dict[str, Any]:
    stamp = iso(now)
    return {
        "session_id": workspace_id,
        "created_at": stamp,
        "last_activity": stamp,
        "context_files": {},
        "context_index": {},
    }


def _clean_keywords(words: object) -> list[str]:
    if (
        isinstance(words, list)
        and all(
            isinstance(w, str)
            and w
            and w.islower()
            and len(w) <= MAX_KEYWORD
            and w == w.strip()
            and " " not in w
            for w in words
        )
        and len(set(words)) == len(words) <= MAX_KEYWORDS
    ):
        return words  # already normal: the common case, checked cheaply
    listed = words if isinstance(words, list) else ()
    return merge_keywords(w for w in listed if isinstance(w, str))


def normalize_manifest(raw: dict[str, Any] | None, workspace_id: str, now: float) -> dict[str, Any]:
    """A well-typed manifest from whatever was read; entries with unsafe paths are dropped.
    (An entry's `created` is kept if it is a string; only the top-level times are parsed.)"""
    doc = new_manifest(workspace_id, now)
    if not raw:
        return doc
    for field in ("created_at", "last_activity"):
        if parse_iso(raw.get(field)) is not None:
            doc[field] = raw[field]
    files = raw.get("context_files")
    for rel, entry in files.items() if isinstance(files, dict) else ():
        try:
            check_relative(rel)
        except WorkspaceError:
            continue
        entry = entry if isinstance(entry, dict) else {}
        created = entry.get("created")
        recipient = entry.get("for")
        doc["context_files"][rel] = {
            "created": created if isinstance(created, str) else doc["created_at"],
            "for": recipient if isinstance(recipient, str) else "",
            "keywords": _clean_keywords(entry.get("keywords")),
        }
    doc["context_index"] = rebuild_index(doc["context_files"])
    return doc


def rebuild_index(context_files: dict[str, Any]) -> dict[str, list[str]]:
    """keyword -> the paths carrying it, in `context_files` order."""
    index: dict[str, list[str]] = {}
    for rel, entry in context_files.items():
        for word in dict.fromkeys(entry.get("keywords") or ()):
            if word in index:
                index[word].append(rel)
            else:
                index[word] = [rel]
    return index


def touch(doc: dict[str, Any], now: float) -> None:
    doc["last_activity"] = iso(now)


def add_file(
    doc: dict[str, Any],
    rel: str,
    now: float,
    *,
    recipient: str | None = None,
    keywords: Iterable[str] = (),
    replace: bool = False,
) -> bool:
    """Track `rel`; return True when it was not tracked before. An entry already
    there keeps its `created`; its keywords grow (or, with `replace`, are replaced)
    and `recipient` overrides `for` when given."""
    check_relative(rel)
    files = doc["context_files"]
    entry = files.get(rel)
    derived = keywords_from_path(rel)
    if entry is None:
        files[rel] = {
            "created": iso(now),
            "for": recipient or "",
            "keywords": merge_keywords(keywords, derived),
        }
    else:
        base = [] if replace else entry.get("keywords") or []
        entry["keywords"] = merge_keywords(keywords, base, derived)
        if recipient is not None:
            entry["for"] = recipient
    doc["context_index"] = rebuild_index(files)
    touch(doc, now)
    return entry is None


def remove_file(doc: dict[str, Any], rel: str, now: float) -> bool:
    """Untrack `rel`; return whether it was tracked. Its index keys go with it."""
    found = doc["context_files"].pop(rel, None) is not None
    doc["context_index"] = rebuild_index(doc["context_files"])
    touch(doc, now)
    return found


def find(
    doc: dict[str, Any], queries: Iterable[str], category: str | None = None
) -> list[tuple[str, int]]:
    """(relative path, number of queries matched) for the files matching any query
    (every file when there is none) and lying in `category`; best first."""
    wanted = [q for q in (normalize_keyword(w) for w in queries) if q]
    ranked = []
    for rel, entry in doc["context_files"].items():
        if category is not None and rel.split("/", 1)[0] != category:
            continue
        keys = entry.get("keywords") or []
        score = sum(1 for q in wanted if any(keyword_matches(q, k) for k in keys))
        if wanted and not score:
            continue
        ranked.append((rel, score))
    ranked.sort(key=lambda item: -item[1])
    return ranked


def idle_since(doc: dict[str, Any]) -> float | None:
    return parse_iso(doc.get("last_activity"))
