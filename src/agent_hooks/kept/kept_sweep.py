"""Keeping the store bounded: versions swept `KEEP_DAYS` after their lease ended,
at most `MAX_VERSIONS` per path, and the repository's size limit kept by
evicting the oldest versions of ended leases first (docs/adr/0024-kept-versions.md).
Never on the hot path: SessionStart and Stop sweep when `due`, and the CLI
(`agent-hooks cleanup`).

Invariants:

* The latest version of a live lease (its holder still counts: `lease.counts`)
  is never removed — not by age, count or size; a repository whose live leases'
  latest versions alone pass the limit stays over it (said in `Swept.over`).
* Eviction order: versions of ended leases, oldest first; then the earlier
  versions of live leases, oldest first. A version's lease ended at the latest
  end it recorded (`until`), or its lease file's when that is later.
* A version file is rewritten under `kept_store.LOCK` (re-read there, so an
  append made meanwhile is kept); one left with no version is removed. A line
  that is no version is dropped at a rewrite.
* An object is removed when no version names it and it is older than
  `OBJECT_GRACE` (a keep may have written it and not yet its line); an object
  written since the last sweep whose content does not match its name (a crash cut
  it short) is removed, and so are the versions naming a missing object. Only
  files of the store's own naming are removed; a temporary file only when older
  than `TEMP_AGE`.
"""

from __future__ import annotations

import os

from agent_hooks import liveness, storage
from agent_hooks import posix_fs as fs
from agent_hooks.kept import kept_store, kept_versions
from agent_hooks.leases import lease, lease_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any

MAX_VERSIONS = 100  # per path and work tree
OBJECT_GRACE = 10 * 60  # seconds an object no version names yet is spared
TEMP_AGE = 3600  # seconds after which a temporary file is a killed writer's


class Swept:
    """What a sweep removed (or, dry, would remove)."""

    __slots__ = ("bytes", "freed", "objects", "over", "problems", "versions")

    def __init__(self) -> None:
        self.versions = 0  # versions removed
        self.objects = 0  # objects removed
        self.freed = 0  # bytes of those objects
        self.bytes = 0  # bytes the store holds after the sweep
        self.over = False  # still over its limit: live leases' latest versions alone
        self.problems: list[str] = []


def _files(ledger: str) -> list[tuple[str, str, str]]:
    """(worktree id, its directory name, file name) of every version file."""
    base = fs.join(kept_store.store_dir(ledger), kept_store.VERSIONS)
    found = []
    try:
        worktrees = sorted(os.listdir(base))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for name in worktrees:
        directory = fs.join(base, name)
        if name.startswith(".") or not fs.isdir(directory) or fs.islink(directory):
            continue
        worktree, whole = lease.name_prefix(name)
        if not whole:
            continue  # a name cut short: no worktree id reads back from it
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        found += [(worktree, name, file) for file in names if not file.startswith(".")]
    return found


def _lines(path: str) -> list[bytes]:
    try:
        data = fs.read_file(path)
    except OSError:
        return []
    return [line for line in (data or b"").split(b"\n") if line.strip()]


def _entries(lines: list[bytes]) -> list[tuple[bytes, dict[str, Any]]]:
    """(the line, its version) of each line that is a version (of the path the
    first valid line names)."""
    from agent_hooks import jsonio

    found = []
    rel = None
    for line in lines:
        try:
            entry = jsonio.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        rel = entry.get("path") if rel is None else rel
        if isinstance(rel, str) and kept_versions.valid(entry, rel):
            found.append((line, entry))
    return found


def sweep(ledger: str, now: float, *, dry_run: bool = False) -> Swept:
    """Sweep the store of `ledger` (see the module); with `dry_run` only count."""
    result = Swept()
    store = kept_store.store_dir(ledger)
    if not fs.isdir(store) or fs.islink(store):
        return result
    limit = kept_store.read_settings(store)["kept_total_mib"] << 20  # bytes
    keep_for = kept_store.KEEP_DAYS * 86400
    files = _files(ledger)
    base = fs.join(store, kept_store.VERSIONS)
    # Read every version; decide what goes by age and count.
    table: dict[tuple[str, str], list[tuple[bytes, dict[str, Any]]]] = {}
    paths: dict[tuple[str, str], str] = {}
    protected: set[int] = set()  # id() of each live lease's latest version
    drop: dict[tuple[str, str], set[int]] = {}
    ended: list[tuple[float, tuple[str, str], tuple[bytes, dict[str, Any]]]] = []
    earlier: list[tuple[float, tuple[str, str], tuple[bytes, dict[str, Any]]]] = []
    sizes: dict[str, int] = {}
    for worktree, dirname, name in files:
        where = (dirname, name)
        path = fs.join(base, dirname, name)
        paths[where] = path
        entries = _entries(_lines(path))
        table[where] = entries
        drop[where] = set()
        if not entries:
            continue
        rel = entries[0][1]["path"]
        live: dict[str, float] = {}
        lease_end: dict[str, float] = {}
        for item in lease_store.read(ledger, rel):
            if item.get("worktree") != worktree:
                continue
            expires = item.get("expires")
            if isinstance(expires, int | float) and not isinstance(expires, bool):
                lease_end[str(item.get("writer"))] = float(expires)
            if lease.counts(item, now, liveness.alive):
                live[str(item.get("writer"))] = 1.0
        groups: dict[str, list[tuple[bytes, dict[str, Any]]]] = {}
        for pair in entries:
            groups.setdefault(pair[1]["holder"], []).append(pair)
        for holder, group in groups.items():
            if holder in live:
                content = [pair for pair in group if pair[1]["hash"] is not None]
                if content:
                    protected.add(id(content[-1]))
                earlier += [(p[1]["at"], where, p) for p in group if id(p) not in protected]
                continue
            until = [p[1].get("until") for p in group]
            last = max(
                [float(u) for u in until if isinstance(u, int | float) and not isinstance(u, bool)]
                + [float(p[1]["at"]) for p in group]
                + ([lease_end[holder]] if holder in lease_end else [])
            )
            if last + keep_for < now:
                drop[where].update(id(p) for p in group)
            else:
                ended += [(p[1]["at"], where, p) for p in group]
        alive = [p for p in entries if id(p) not in drop[where]]
        for pair in alive[: max(0, len(alive) - MAX_VERSIONS)]:
            if id(pair) not in protected:
                drop[where].add(id(pair))
    # Objects: their sizes, the versions naming missing or damaged ones.
    objects = _objects(store)
    last_swept = _last_swept(store)
    for name, (path, size, mtime) in objects.items():
        if (
            mtime >= last_swept
            and mtime < now - 1
            and kept_versions.read_object(ledger, name) is None
        ):
            result.problems.append(f"{path}: damaged (its content is not its name); removed")
            if not dry_run:
                lease_store.unlink(path)
            continue
        sizes[name] = size
    for where, entries in table.items():
        for pair in entries:
            name = pair[1]["hash"]
            if name is not None and name not in sizes:
                drop[where].add(id(pair))  # its content is lost: nothing to restore
    # The size limit: ended leases' versions, then live leases' earlier ones, oldest first.
    names: dict[str, int] = {}
    for where, entries in table.items():
        for pair in entries:
            if id(pair) not in drop[where] and pair[1]["hash"] is not None:
                names[pair[1]["hash"]] = names.get(pair[1]["hash"], 0) + 1
    total = sum(sizes[name] for name in names)
    for _, where, pair in sorted(ended, key=_oldest) + sorted(earlier, key=_oldest):
        if total <= limit:
            break
        if id(pair) in drop[where] or id(pair) in protected:
            continue
        drop[where].add(id(pair))
        name = pair[1]["hash"]
        if name is not None:
            names[name] -= 1
            if names[name] == 0:
                total -= sizes[name]
    result.over = total > limit
    result.bytes = total
    # Rewrite the version files that lose versions.
    for where, entries in table.items():
        gone = {pair[0] for pair in entries if id(pair) in drop[where]}
        if not gone:
            continue
        result.versions += len(gone)
        if not dry_run:
            problem = _rewrite(ledger, paths[where], gone)
            if problem is not None:
                result.problems.append(problem)
    # Objects no version names any more (read again: a keep may have added one).
    named = _named(ledger) if not dry_run else set(names)
    for name, (path, size, mtime) in objects.items():
        if name in named or names.get(name, 0) > 0 or name not in sizes:
            continue  # named, or removed above as damaged
        if not dry_run:
            try:  # its mtime now: a keep that found it moved it, and is about to name it
                mtime = os.stat(path, follow_symlinks=False).st_mtime
            except OSError:
                continue
        if mtime > now - OBJECT_GRACE:
            continue
        if not dry_run:
            lease_store.unlink(path)
        result.objects += 1
        result.freed += size
    if not dry_run:
        _tidy(store, now)
        _stamp(store, now)
    return result


def _oldest(item: tuple[float, tuple[str, str], tuple[bytes, dict[str, Any]]]) -> float:
    return item[0]


def _objects(store: str) -> dict[str, tuple[str, int, float]]:
    """name -> (path, size, mtime) of every object of the store's naming."""
    found = {}
    try:
        entries = list(os.scandir(fs.join(store, kept_store.OBJECTS)))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    for entry in entries:
        if len(entry.name) != 2 * kept_store.DIGEST_SIZE or not _hex(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if st.st_mode & fs.S_IFMT == fs.S_IFREG:
            found[entry.name] = (entry.path, st.st_size, st.st_mtime)
    return found


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _named(ledger: str) -> set[str]:
    """Every object name a version names now."""
    base = fs.join(kept_store.store_dir(ledger), kept_store.VERSIONS)
    named = set()
    for _, dirname, name in _files(ledger):
        for _, entry in _entries(_lines(fs.join(base, dirname, name))):
            if entry["hash"] is not None:
                named.add(entry["hash"])
    return named


def _rewrite(ledger: str, path: str, gone: set[bytes]) -> str | None:
    """Drop the lines `gone` from the version file at `path`, under the store's
    lock (re-read there: lines appended since stay); remove it when none is left."""
    lock = storage.Lock(fs.join(kept_store.store_dir(ledger), kept_store.LOCK))
    try:
        if not lock.acquire(kept_store.LOCK_TIMEOUT * 5):
            return f"{path}: not swept (the store's lock is busy)"
    except OSError as exc:
        return f"{path}: not swept ({exc})"
    try:
        kept = [pair[0] for pair in _entries(_lines(path)) if pair[0] not in gone]
        if kept:
            storage.write_bytes_atomic(path, b"".join(b"\n" + line for line in kept), durable=False)
        else:
            lease_store.unlink(path)
    except OSError as exc:
        return f"{path}: not swept ({exc})"
    finally:
        lock.release()
    return None


def _tidy(store: str, now: float) -> None:
    """Temporary files of killed writers (a version file's or an ignore answer's
    rewrite), remembered ignore answers of paths with no version left (an hour
    after their last check) or a week old, and empty directories, in the store."""
    worktrees = []
    for kind in (kept_store.VERSIONS, kept_store.IGNORES):
        try:
            worktrees += [
                entry
                for entry in os.scandir(fs.join(store, kind))
                if entry.is_dir(follow_symlinks=False)
            ]
        except OSError:
            continue
    for sub in worktrees:
        if fs.basename(fs.dirname(sub.path)) == kept_store.IGNORES:
            _tidy_answers(store, sub.path, sub.name, now)
        try:
            for entry in os.scandir(sub.path):
                temporary = entry.name.startswith(".") and entry.name.endswith(".tmp")
                if temporary and entry.stat(follow_symlinks=False).st_mtime < now - TEMP_AGE:
                    lease_store.unlink(entry.path)
            os.rmdir(sub.path)  # only when empty
        except OSError:
            continue
    storage.sweep_temp_files(store, lambda name: name == kept_store.SETTINGS, now - TEMP_AGE)


def _tidy_answers(store: str, directory: str, worktree: str, now: float) -> None:
    versions = fs.join(store, kept_store.VERSIONS, worktree)
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if entry.name.startswith("."):
            continue  # a temporary file: below
        if age > kept_store.KEEP_DAYS * 86400 or (
            age > TEMP_AGE and not fs.lexists(fs.join(versions, entry.name))
        ):
            lease_store.unlink(entry.path)


def _last_swept(store: str) -> float:
    try:
        return os.stat(fs.join(store, kept_store.SWEPT)).st_mtime
    except OSError:
        return 0.0


def _stamp(store: str, now: float) -> None:
    path = fs.join(store, kept_store.SWEPT)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)
        os.utime(path, (now, now))
    except OSError:
        pass


def after_turn(state_dir: str, project: str, now: float, log: Callable[[str], None]) -> None:
    """SessionStart and Stop, once `kept_versions.sweep_due`: sweep the store of
    `project`'s repository; log a line when anything was removed, it is still over
    its limit, or something failed."""
    from agent_hooks.ledger import ledger_location
    from agent_hooks.wording import plural

    ledger = ledger_location.directory(state_dir, project)
    try:
        swept = sweep(ledger, now)
    except OSError as exc:
        log(f"kept versions of {project} not swept: {exc}")
        return
    if not (swept.versions or swept.objects or swept.problems or swept.over):
        return
    text = (
        f"kept versions of {project}: swept {plural(swept.versions, 'version')} and "
        f"{plural(swept.objects, 'object')} ({swept.freed >> 10} KiB); the store holds "
        f"{swept.bytes >> 10} KiB"
    )
    if swept.over:
        text += ", over its limit (live leases' latest versions are never evicted)"
    log("; ".join([text, *swept.problems[:3]]))
