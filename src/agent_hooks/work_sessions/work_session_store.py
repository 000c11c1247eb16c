"""Work-session files: one document per work session, an active-session pointer,
and an archive for closed ones, all in one sessions directory.

Layout of the sessions directory (`<project>/.claude/sessions/` unless
`--sessions-dir DIR` or `AGENT_HOOKS_SESSIONS_DIR` names another; a relative
`AGENT_HOOKS_SESSIONS_DIR` is taken from the project root):

    <ID>.json              a live work session (active, paused or blocked)
    active-session.json    {"session_id": ID, "since": ISO}: the project's active one
    archive/<ID>.json      closed work sessions
    .sessions.lock         the lock every change takes
    .gitignore             `*`: the directory ignores itself in git (as workspaces do)

Invariants (docs/adr/0009-work-sessions.md):

* Every change runs under the directory's one lock (`storage.Lock`), and every
  file is replaced atomically, so a lock-free reader sees whole documents and
  concurrent hooks and commands lose no update.
* Files are located by a checked id only (`work_session.check_id`): nothing
  from outside names a path, and nothing escapes the directory.
* A document lives where its status says (closed: `archive/`, else the
  directory). `save` writes the new place first and only then removes the old
  copy, so a crash leaves two whole copies, never none; `find` then takes the
  one updated last.
* Documents are written with `jsonio` (the C `_json` codec the hooks already
  load; importing orjson costs ~30 ms, more than a hook's whole budget), one
  top-level field and one list item per line so a person can edit them.
* The directory ignores itself: before the first change a `.gitignore` holding
  `*` is written into it when none is there, so `git status` of the project stays
  clean and the user's own `.gitignore` is never touched. An existing one is left
  as it is (someone who wants work sessions in git replaces its content).
* A hand-made `<ID>.yaml`/`.yml` in the design document's format is read by
  `yaml_subset` (loaded only when such a file is read). The first write
  stores `<ID>.json` and renames the YAML file to `<ID>.yaml.imported`; nothing
  is deleted.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio, storage, timestamps
from agent_hooks import posix_fs as fs
from agent_hooks.work_sessions import work_session
from agent_hooks.work_sessions.location import POINTER, pointer_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

ARCHIVE = "archive"
LOCK_FILE = ".sessions.lock"
GITIGNORE = ".gitignore"
YAML_SUFFIXES = (".yaml", ".yml")


class StoreBusy(work_session.WorkSessionError):
    """The sessions directory's lock was not granted in time."""


class NoActiveSession(work_session.WorkSessionError):
    """No work session is active in this sessions directory."""


class ActiveSessionExists(work_session.WorkSessionError):
    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Active session found: {session_id}. Close it first (--yes), or "
            f"`agent-hooks session close`"
        )
        self.session_id = session_id


class Found:
    """A work session read from disk: its document and where it lives."""

    __slots__ = ("archived", "doc", "path")

    def __init__(self, doc: dict[str, Any], path: str, archived: bool) -> None:
        self.doc = doc
        self.path = path
        self.archived = archived


def encode(doc: Mapping[str, Any]) -> bytes:
    """JSON with one top-level field, list item or mapping entry per line."""
    fields = []
    for key, value in doc.items():
        name = jsonio.dumps(key)
        if isinstance(value, list) and value:
            inner = ",\n    ".join(jsonio.dumps(item) for item in value)
            fields.append(f"  {name}: [\n    {inner}\n  ]")
        elif isinstance(value, dict) and value:
            inner = ",\n    ".join(
                f"{jsonio.dumps(k)}: {jsonio.dumps(v)}" for k, v in value.items()
            )
            fields.append(f"  {name}: {{\n    {inner}\n  }}")
        else:
            fields.append(f"  {name}: {jsonio.dumps(value)}")
    return jsonio.to_bytes("{\n" + ",\n".join(fields) + "\n}\n")


class Store:
    """The files of one sessions directory."""

    __slots__ = ("archive", "directory", "durable")

    def __init__(self, directory: str, *, durable: bool = True) -> None:
        self.directory = directory
        self.archive = fs.join(directory, ARCHIVE)
        self.durable = durable

    # ---------------------------------------------------------------- reading

    def _read(self, path: str, archived: bool, session_id: str) -> Found | None:
        data = storage.read_bytes(path)
        if data is None:
            return None
        if path.endswith(YAML_SUFFIXES):
            from agent_hooks.work_sessions import yaml_subset

            raw: object = yaml_subset.parse_yaml(data.decode("utf-8", "replace"), path)
        else:
            try:
                raw = jsonio.loads(data)
            except ValueError as exc:
                raise work_session.WorkSessionError(f"{path} is not valid JSON: {exc}") from None
            if not isinstance(raw, dict):
                raise work_session.WorkSessionError(f"{path} does not hold a JSON object")
        doc = work_session.normalize(raw)
        doc["session_id"] = session_id  # the file name is the identity
        return Found(doc, path, archived)

    def find(self, session_id: str) -> Found | None:
        """The work session `session_id` (live or archived), or None."""
        session_id = work_session.check_id(session_id)
        found = []
        for folder, archived in ((self.directory, False), (self.archive, True)):
            for suffix in (".json", *YAML_SUFFIXES):
                item = self._read(fs.join(folder, session_id + suffix), archived, session_id)
                if item is not None:
                    found.append(item)
                    break
        if len(found) < 2:
            return found[0] if found else None
        return max(
            found, key=lambda f: (work_session.parse_time(f.doc["last_updated"]) or 0, f.archived)
        )

    def active_id(self) -> str | None:
        """The id the pointer names (unchecked pointer contents count as none)."""
        loaded = storage.load_json_object(pointer_path(self.directory))
        value = loaded.doc.get("session_id") if loaded.doc else None
        try:
            return work_session.check_id(value) if isinstance(value, str) else None
        except work_session.WorkSessionError:
            return None

    def active(self) -> Found | None:
        session_id = self.active_id()
        return self.find(session_id) if session_id else None

    def require_active(self) -> Found:
        found = self.active()
        if found is None or found.archived:
            named = self.active_id()
            why = (
                f" (the pointer names {named}, whose file is missing)"
                if named and found is None
                else ""
            )
            raise NoActiveSession(
                f"No active session in {self.directory}{why}. Start one with `agent-hooks session "
                "start --client C --code CODE`, or `agent-hooks session switch ID`"
            )
        return found

    def all(self) -> tuple[list[Found], list[str]]:
        """Every work session (one per id) and the files that could not be read."""
        best: dict[str, Found] = {}
        problems = []
        for folder, archived in ((self.directory, False), (self.archive, True)):
            try:
                names = sorted(posix.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for name in names:
                stem, dot, suffix = name.rpartition(".")
                if not dot or "." + suffix not in (".json", *YAML_SUFFIXES) or name == POINTER:
                    continue
                try:
                    item = self._read(fs.join(folder, name), archived, work_session.check_id(stem))
                except (work_session.WorkSessionError, OSError) as exc:
                    problems.append(f"{fs.join(folder, name)}: {exc}")
                    continue
                if item is None:
                    continue
                known = best.get(item.doc["session_id"])
                stamp = work_session.parse_time(item.doc["last_updated"]) or 0
                if known is None or stamp >= (
                    work_session.parse_time(known.doc["last_updated"]) or 0
                ):
                    best[item.doc["session_id"]] = item
        return sorted(best.values(), key=lambda f: f.doc["session_id"]), problems

    # ---------------------------------------------------------------- writing

    def locked(self, timeout: float = storage.LOCK_TIMEOUT) -> storage.Lock:
        ignore = fs.join(self.directory, GITIGNORE)
        if not fs.lexists(ignore):  # present: the directory exists too
            storage.ensure_dir(self.directory)
            storage.write_bytes_atomic(ignore, b"*\n", durable=False)
        lock = storage.Lock(fs.join(self.directory, LOCK_FILE))
        if not lock.acquire(timeout):
            raise StoreBusy(
                f"{self.directory} is locked by another process (waited {timeout:g} s); try again"
            )
        return lock

    def save(self, found: Found) -> str:
        """Write the document where its status belongs, then drop its other copies."""
        doc = found.doc
        archived = doc["status"] == "closed"
        folder = self.archive if archived else self.directory
        storage.ensure_dir(folder)
        path = fs.join(folder, doc["session_id"] + ".json")
        storage.write_bytes_atomic(path, encode(doc), durable=self.durable)
        for other in (self.directory, self.archive):
            for suffix in (".json", *YAML_SUFFIXES):
                old = fs.join(other, doc["session_id"] + suffix)
                if old == path or not fs.lexists(old):
                    continue
                if suffix == ".json":
                    posix.unlink(old)
                else:
                    posix.rename(old, old + ".imported")
        found.path, found.archived = path, archived
        return path

    def set_pointer(self, session_id: str | None, now: float) -> None:
        path = pointer_path(self.directory)
        if session_id is None:
            if fs.lexists(path):
                posix.unlink(path)
            return
        doc = {"session_id": session_id, "since": timestamps.iso(now)}
        storage.write_bytes_atomic(path, jsonio.encode(doc), durable=self.durable)

    # ------------------------------------------------------------- operations

    def start(self, doc: dict[str, Any], now: float, *, close_active: bool) -> Found | None:
        """Create `doc` and make it active; return the work session closed for it, if any."""
        with self.locked():
            existing = self.find(doc["session_id"])
            if existing is not None:
                where = "archived" if existing.archived else existing.doc["status"]
                raise work_session.WorkSessionError(
                    f"work session {doc['session_id']} already exists ({where}); continue it with "
                    f"`agent-hooks session switch {doc['session_id']}` or choose another --code"
                )
            closed = None
            current = self.active()
            if current is not None and not current.archived:
                if not close_active:
                    raise ActiveSessionExists(current.doc["session_id"])
                self._close(current, now)
                closed = current
            self.save(Found(doc, "", False))
            self.set_pointer(doc["session_id"], now)
            return closed

    def switch(self, session_id: str, now: float) -> tuple[Found, Found | None]:
        """Make `session_id` the active one (a closed one is reopened); the one it
        replaces is paused. Both files stay whole. Returns (new, previous)."""
        with self.locked():
            target = self.find(session_id)
            if target is None:
                raise work_session.WorkSessionError(
                    f"no work session {work_session.check_id(session_id)} in {self.directory} "
                    "(see `agent-hooks session list`)"
                )
            previous = self.active()
            if previous is not None and previous.doc["session_id"] != target.doc["session_id"]:
                if previous.doc["status"] == "active":
                    previous.doc["status"] = "paused"
                    work_session.touch(previous.doc, now)
                    self.save(previous)
            else:
                previous = None
            if target.doc["status"] in ("closed", "paused"):
                target.doc["status"] = "active"
            work_session.touch(target.doc, now)
            self.save(target)
            self.set_pointer(target.doc["session_id"], now)
            return target, previous

    def _close(self, found: Found, now: float) -> str:
        from agent_hooks.work_sessions import work_session_report

        if found.doc["pending_subagents"]:  # their figures belong in the closing summary
            from agent_hooks.work_sessions import subagents

            subagents.retry(found.doc, now)
        found.doc["closing_summary"] = work_session_report.closing_summary(found.doc, now)
        found.doc["closed"] = timestamps.iso(now)
        found.doc["status"] = "closed"
        work_session.touch(found.doc, now)
        path = self.save(found)
        if self.active_id() == found.doc["session_id"]:
            self.set_pointer(None, now)
        return path

    def close(self, now: float) -> Found:
        """Close the active work session: closing summary, archive, pointer cleared."""
        with self.locked():
            found = self.require_active()
            self._close(found, now)
            return found

    def update_active(
        self,
        mutate: Callable[[dict[str, Any]], bool],
        now: float,
        *,
        statuses: tuple[str, ...] = work_session.STATUSES,
        timeout: float = storage.LOCK_TIMEOUT,
    ) -> Found | None:
        """Apply `mutate` to the active work session under the lock and save it
        when `mutate` returns True. None when there is no active session or its
        status is not in `statuses` (the hooks pass ("active", "blocked"))."""
        with self.locked(timeout):
            found = self.active()
            if found is None or found.archived or found.doc["status"] not in statuses:
                return None
            if mutate(found.doc):
                work_session.touch(found.doc, now)
                self.save(found)
            return found
