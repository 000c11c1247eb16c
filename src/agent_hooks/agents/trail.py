"""Trail rules: which files a finished tool call created, modified or read.

Pure except for the fingerprints it takes (`fingerprints.of`) of the files it records.

Invariants:

* Only what a finished tool call did is recorded (the client layer says which
  files, `ToolUse.files`; a failed call fires no PostToolUse in Claude Code and
  records nothing). Paths come out absolute and normalized, relative ones
  resolved against the payload's `cwd`, and as the client wrote them
  (`posix_fs.as_written`: a lone surrogate becomes U+FFFD).
* Files inside the project's workspaces (`<project>/.tmp/sessions/`) go to
  `workspace_files` instead, kept apart from the project's own files.
* The state document is a window on the trail, not the whole of it: every hook
  parses it and every writing hook re-encodes it, at about 12,000 instructions a
  path with its fingerprint (a bare interpreter starts in 26 million), so its
  size must not grow with the session (one Bash command can report 200,000
  files). `files_created`, `files_modified` and `workspace_files` keep the last
  `MAX_TRAIL_FILES` paths first seen, in first-seen order; the ones seen before
  are kept beside it (`trail_spill.spill`), where `agent-hooks trail`, `status`
  and `agents` find them. `files_read` keeps the last `read_limit` paths; older
  reads are dropped.
* A fingerprint (`fingerprints.of`) is kept for every path in the window.
"""

from __future__ import annotations

from agent_hooks import fingerprints
from agent_hooks import posix_fs as fs
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.tool_use import CREATED, MODIFIED, READ

WORKSPACE = "workspace_files"
DEFAULT_READ_LIMIT = 100
MAX_FINGERPRINTS = 1000
MAX_TRAIL_FILES = 50
READ_LIMIT_ENV = "AGENT_HOOKS_READ_LIMIT"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any


def _absolute(path: object, cwd: str) -> str | None:
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    return fs.normpath(fs.as_written(fs.join(cwd, path)))


def absolute(files: list[tuple[str, object]], cwd: object) -> list[tuple[str, str]]:
    """(trail field, absolute path) for a tool call's files (`ToolUse.files`): relative
    paths resolved against the payload's `cwd`, every path normalized and as the
    client wrote it; what is not a usable path is left out."""
    base = cwd if isinstance(cwd, str) and fs.isabs(cwd) else "/"
    out = []
    for field, raw in files:
        path = _absolute(raw, base)
        if path is not None:
            out.append((field, path))
    return out


def read_limit(environ: Mapping[str, str]) -> int:
    """`AGENT_HOOKS_READ_LIMIT` when it is a positive integer, else `DEFAULT_READ_LIMIT`."""
    raw = environ.get(READ_LIMIT_ENV, "")
    if raw.isascii() and raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_READ_LIMIT


def workspace_prefix(project_root: str | None) -> str | None:
    return fs.join(project_root, WORKSPACES_DIR) + "/" if project_root else None


def record(
    doc: dict[str, Any],
    found: list[tuple[str, str]],
    read_limit: int,
    workspaces: str | None = None,
    writer: str | None = None,
    fingerprint_of: dict[str, str | None] | None = None,
    overflow: list[tuple[str, str]] | None = None,
) -> bool:
    """Add `found` to the document's trail lists and refresh their fingerprints;
    paths under `workspaces` (a prefix ending in "/") go to `workspace_files`;
    `writer` (a subagent's or teammate's key) is noted in `trail_writers` for each
    path; `fingerprint_of` holds fingerprints the caller took already. Each list is a window
    of the files seen last: past `MAX_TRAIL_FILES` (or `read_limit` for reads) the
    ones seen first leave it, created, modified and workspace files into
    `overflow`, which the caller keeps beside the state (`trail_spill.spill`), so
    the document every hook reads stays small; a path that left every list loses
    its fingerprint and writers. True when the document changed (a new path, or a
    file whose content moved). Linear in the number of paths: at most
    `MAX_FINGERPRINTS` files are read per call (a Bash command can report hundreds
    of thousands), only files still in the window."""
    recorded = doc["fingerprints"]
    changed = False
    present = {field: set(doc[field]) for field in (CREATED, MODIFIED, READ, WORKSPACE)}
    seen: list[str] = []  # paths of `found` outside the workspaces, each once
    for field, path in found:
        if workspaces is not None and path.startswith(workspaces):
            field = WORKSPACE
        if path not in present[field]:
            present[field].add(path)
            doc[field].append(path)
            changed = True
        if field != WORKSPACE:
            seen.append(path)
    left: list[str] = []
    for field in (CREATED, MODIFIED, WORKSPACE, READ):
        limit = read_limit if field == READ else MAX_TRAIL_FILES
        extra = len(doc[field]) - limit
        if extra > 0:  # the first seen leave the window (an earlier release kept them all)
            gone = doc[field][:extra]
            del doc[field][:extra]
            present[field].difference_update(gone)
            left += gone
            if overflow is not None and field != READ:
                overflow.extend((field, path) for path in gone)
            changed = True
    created, modified, read = present[CREATED], present[MODIFIED], present[READ]
    for path in left:
        if path not in created and path not in modified and path not in read:
            recorded.pop(path, None)
            doc["trail_writers"].pop(path, None)
    budget = MAX_FINGERPRINTS
    for path in dict.fromkeys(seen):
        if path not in created and path not in modified and path not in read:
            continue  # already out of the window
        if writer is not None:
            writers = doc["trail_writers"].setdefault(path, [])
            if writer not in writers and len(writers) < 8:
                writers.append(writer)
                changed = True
        if budget > 0:
            budget -= 1
            fingerprint = (
                fingerprint_of[path]
                if fingerprint_of is not None and path in fingerprint_of
                else fingerprints.of(path)
            )
            if fingerprint is not None and recorded.get(path) != fingerprint:
                recorded[path] = fingerprint
                changed = True
    return changed
