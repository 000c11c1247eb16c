"""Kept versions of held work: the store, its settings, and keeping a version
(the hot part; docs/adr/0024-kept-versions.md).

Whenever a writer's own write to a file it holds is seen, PostToolUse keeps that
content, so that `agent-hooks restore` can put it back after anything changed
the file unseen. Layout, inside the repository's ledger directory:

    kept/                           0700, the store
      objects/<64 hex>              content, named by its BLAKE2b-256 digest (0600)
      versions/<worktree>/<path>    one JSON line per version of that path in that
                                    work tree (names escaped as lease files' are)
      settings.json                 the repository's settings (below)
      kept.lock                     serializes appends and the sweep's rewrites
      ignores/<worktree>/<path>     whether git ignores that path, remembered (below)
      swept                         its mtime: when the store was last swept

Settings (`agent-hooks settings`; this module is their one owner, names,
defaults and reading; the command writes them): `kept-file-mib
N` — a larger file is not kept (default `FILE_MIB`; 0 turns keeping off);
`kept-total-mib N` — the store holds at most N MiB once swept (default
`TOTAL_MIB`; `kept_sweep` evicts); `kept-exclude PATTERNS` — gitignore patterns
never kept, besides files named like secrets (`SECRETS`, never kept unless a
`!pattern` there brings one back). Versions last `KEEP_DAYS` after their lease
ended. A stored value that is not valid counts as its default.

Invariants:

* A version is kept only of a file its writer holds, after its own write was
  recorded on its lease; only of a regular file within the size limit whose name
  is not excluded and that git does not ignore (`ignore_rules`, remembered in
  `IGNORES`, one small file a path, with the files the answer was read from keyed
  by inode, size, mtime and ctime: it counts while none of them changed). Its mode bits
  are kept with it; a held file its writer deleted is kept as a deletion.
* Content is stored once per digest, created under its name (no rename: the
  costliest part of a small write); an object whose size is not the content's is
  written again. Readers check the digest: content being written, or cut short
  by a crash, is found damaged and never restored.
* Each version is one line appended to its path's version file (after a newline,
  so a line a crash cut short is never joined to the next) under `kept.lock`,
  held for that one write: the sweep rewrites a version file under the same
  lock, so no append is lost to it. A line that does not parse is skipped by
  every reader: one damaged line loses one version, nothing else.
* Nothing here evicts or sweeps (`kept_sweep`, off the hot path). A store that
  cannot be written is reported to the caller, which logs it and goes on.
* Directories are 0700 and files 0600; nothing is followed through a symlink.

Built-ins only, and `_blake2` (the C module behind `hashlib.blake2b`, loaded only
when a version is kept): PostToolUse keeps what its writer wrote.
"""

from __future__ import annotations

import marshal
import posix
import sys

from agent_hooks import fingerprints, jsonio
from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

STORE = "kept"
OBJECTS = "objects"
VERSIONS = "versions"
SETTINGS = "settings.json"
IGNORES = "ignores"
LOCK = "kept.lock"
SWEPT = "swept"
LOCK_TIMEOUT = 1.0
DIGEST_SIZE = 32  # bytes of BLAKE2b: 64 hex digits name an object
WRITE, DELETE, RESTORE, REPLACED = "write", "delete", "restore", "replaced"
_OPEN = posix.O_NOFOLLOW | posix.O_CLOEXEC
_WRITER_FIELDS = ("writer", "agent", "conversation", "agent_id", "agent_type", "client")

FILE_MIB = 4
TOTAL_MIB = 256
MAX_MIB = 1 << 20  # a TiB: beyond any disk a ledger sits on
KEEP_DAYS = 7
MAX_EXCLUDE = 4096  # characters of the exclusion setting
SETTING_NAMES = {
    "kept-file-mib": "kept_file_mib",
    "kept-total-mib": "kept_total_mib",
    "kept-exclude": "kept_exclude",
}
# Names that hold secrets: never copied where they would outlive their deletion,
# whether or not git ignores them; a directory so named holds none either.
SECRET_NAMES = (".env", ".netrc", ".npmrc", ".pypirc", ".git-credentials")
SECRET_PREFIXES = (".env.", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".keystore", ".kdbx")
SECRETS = (  # the same, as gitignore patterns (tests/unit/kept/test_kept_store.py agrees)
    ".env", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
    ".env.*", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.kdbx",
)  # fmt: skip


def store_dir(ledger: str) -> str:
    return fs.join(ledger, STORE)


def object_path(ledger: str, digest: str) -> str:
    return fs.join(ledger, STORE, OBJECTS, digest)  # one directory: no mkdir per object


def versions_path(ledger: str, worktree: str, rel: str) -> str:
    """The version file of `rel` in the work tree `worktree` (`repository.worktree_id`)."""
    return fs.join(ledger, STORE, VERSIONS, lease.file_name(worktree), lease.file_name(rel))


# --------------------------------------------------------------------------- settings


def mib(value: object, default: int) -> int:
    """A stored size setting as MiB: a whole number 0..MAX_MIB, else `default`."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MIB:
        return value
    return default


def settings_of(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings a stored document holds, each valid or its default."""
    raw = raw or {}
    exclude = raw.get("kept_exclude")
    return {
        "kept_file_mib": mib(raw.get("kept_file_mib"), FILE_MIB),
        "kept_total_mib": mib(raw.get("kept_total_mib"), TOTAL_MIB),
        "kept_exclude": exclude if isinstance(exclude, str) and len(exclude) <= MAX_EXCLUDE else "",
    }


def read_settings(store: str) -> dict[str, Any]:
    """The settings of the store in the directory `store` (defaults when it has none)."""
    path = fs.join(store, SETTINGS)
    return settings_of(jsonio.read_object(path) if posix.access(path, posix.F_OK) else None)


def file_limit(settings: Mapping[str, Any]) -> int:
    """Bytes: the largest file kept (0: keeping is off)."""
    return int(settings["kept_file_mib"]) << 20


def secret(rel: str) -> bool:
    """Does a part of `rel` have a secret's name (`SECRETS`)?"""
    for part in rel.split("/"):
        if (
            part in SECRET_NAMES
            or part.startswith(SECRET_PREFIXES)
            or part.endswith(SECRET_SUFFIXES)
        ):
            return True
    return False


def excluded(rel: str, settings: Mapping[str, Any]) -> bool:
    """Is `rel` never kept by its name: a secret's, or one the setting excludes?"""
    patterns = str(settings["kept_exclude"]).split()
    if not patterns:
        return secret(rel)
    from agent_hooks.kept import ignore_rules  # only with the setting

    return ignore_rules.matched([*SECRETS, *patterns], rel)


# --------------------------------------------------------------------------- keeping


def digest(data: bytes) -> str:
    """The content's name: its BLAKE2b digest of DIGEST_SIZE bytes, in hex."""
    import _blake2  # hashlib's own C module, without hashlib (which loads OpenSSL)

    return _blake2.blake2b(data, digest_size=DIGEST_SIZE).hexdigest()


def read_held(path: str, limit: int) -> tuple[bytes | None, int, str | None]:
    """(the content of the regular file at `path`, its mode bits, None), or
    (None, 0, None) when it is gone, or (None, 0, why) when it cannot be kept: not
    a regular file (a symlink is not followed), larger than `limit` bytes, unreadable."""
    try:
        st = posix.stat(path, follow_symlinks=False)
        if st.st_mode & fs.S_IFMT != fs.S_IFREG:
            return None, 0, "not a regular file"
        if st.st_size > limit:
            return None, 0, f"larger than the limit of {limit >> 20} MiB"
        return fs.read_file(path), st.st_mode & 0o7777, None
    except FileNotFoundError:
        return None, 0, None
    except OSError as exc:
        return None, 0, f"cannot be read ({exc.strerror or exc})"


def put_object(ledger: str, name: str, data: bytes) -> None:
    """Store `data` under its digest `name`, unless an object of its size is there
    already (then only its mtime moves: the sweep spares what is fresh); one of
    another size (cut short by a crash) is written again. Created in place
    (`storage.create_new`): a reader in that instant finds it damaged, as the digest
    check tells, never wrong."""
    from agent_hooks import storage

    target = object_path(ledger, name)
    if posix.access(target, posix.F_OK):  # asked without raising: most objects are new
        st = posix.stat(target, follow_symlinks=False)
        if st.st_size == len(data) and st.st_mode & fs.S_IFMT == fs.S_IFREG:
            posix.utime(target, follow_symlinks=False)
            return
        posix.unlink(target)
    try:
        storage.create_new(target, data)
    except FileNotFoundError:
        fs.makedirs(fs.dirname(target), 0o700)
        storage.create_new(target, data)


def entry_for(
    rel: str,
    kind: str,
    name: str | None,
    size: int,
    mode: int,
    writer: Mapping[str, Any] | None,
    holder: str,
    now: float,
    until: float,
) -> dict[str, Any]:
    """One version's line: the path, what happened (`kind`), its content's digest
    (`hash`, None for a deletion), size and mode, who wrote it (`writer` and the
    fields that name it; none for content a restore replaced, whose writer is not
    known), the writer whose lease it belongs to (`holder`), when, and the end of
    that lease as of then (`until`)."""
    entry: dict[str, Any] = {
        "path": rel,
        "kind": kind,
        "hash": name,
        "size": size,
        "mode": mode,
        "at": round(now, 3),
        "until": int(until),
        "holder": holder,
    }
    if writer is not None:
        for field in _WRITER_FIELDS:
            value = writer.get(field)
            if value is not None:
                entry[field] = value
    return entry


def append(ledger: str, worktree: str, rel: str, entry: dict[str, Any]) -> bool:
    """Add `entry` to the versions of `rel` in `worktree` (one write, under the store's
    lock); False when the lock could not be had (nothing added)."""
    from agent_hooks import storage

    path = versions_path(ledger, worktree, rel)
    fs.makedirs(fs.dirname(path), 0o700)  # the store too; a `stat` when they are there
    lock = storage.Lock(fs.join(ledger, STORE, LOCK))
    if not lock.acquire(LOCK_TIMEOUT):
        return False
    try:
        fd = posix.open(path, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT | _OPEN, 0o600)
        try:
            posix.write(fd, b"\n" + jsonio.encode(entry))
        finally:
            posix.close(fd)
    finally:
        lock.release()
    return True


def keep_held(
    held: list[tuple[str, str, str, str, float]],
    writer: Mapping[str, Any],
    now: float,
    environ: Mapping[str, str],
) -> list[str]:
    """Keep each file the writer holds after its own write, as it left it — its
    content and mode, or its deletion when it is gone: `held` lists (its absolute
    path, its ledger, its path relative to the work tree, the worktree id, the end of
    the writer's lease). Settings and the ignore cache are read once per ledger. A
    file never kept (`skipped`) or too large is passed over in silence; returns one
    line per file the store failed to keep, for the log."""
    problems: list[str] = []
    settings_of_ledger: dict[str, dict[str, Any]] = {}
    holder = str(writer.get("writer"))
    for path, ledger, rel, worktree, until in held:
        if ledger not in settings_of_ledger:
            settings_of_ledger[ledger] = read_settings(store_dir(ledger))
        settings = settings_of_ledger[ledger]
        top = path[: len(path) - len(rel) - 1]
        if skipped(ledger, worktree, top, rel, settings, environ) is not None:
            continue
        data, mode, why = read_held(path, file_limit(settings))
        try:
            if data is not None:
                name = digest(data)
                put_object(ledger, name, data)
                entry = entry_for(rel, WRITE, name, len(data), mode, writer, holder, now, until)
            elif why is None:  # gone: its writer deleted it
                entry = entry_for(rel, DELETE, None, 0, 0, writer, holder, now, until)
            if why is None and not append(ledger, worktree, rel, entry):
                why = "the store's lock was busy"
        except OSError as exc:
            why = f"the store cannot be written ({exc.strerror or exc})"
        if why is not None and not why.startswith("larger than"):
            problems.append(f"{rel}: not kept: {why}")
    return problems


def skipped(
    ledger: str,
    worktree: str,
    top: str,
    rel: str,
    settings: Mapping[str, Any],
    environ: Mapping[str, str],
) -> str | None:
    """Why `rel` of the work tree `top` (`worktree`) is never kept (keeping is off;
    its name is a secret's or the exclusion setting's; git ignores it, or what git
    ignores there cannot be known), or None."""
    from agent_hooks import repository
    from agent_hooks.ledger import ledger_location

    if file_limit(settings) <= 0:
        return "keeping is off in this repository (kept-file-mib 0)"
    if excluded(rel, settings):
        return "its name marks a secret, or the kept-exclude setting excludes it"
    own = repository.git_dir(top)
    if own is None or not ledger_location.is_repository_ledger(ledger):
        return "it lies in no git work tree"
    if ignored(ledger, worktree, top, own, rel, environ):
        return "git ignores it (or its ignore files cannot be read)"
    return None


# --------------------------------------------------------------------------- what git ignores
# Whether git ignores a path, remembered in one small marshal file a path (derived:
# one that cannot be read counts as none): the answer `ignore_rules.decide` gave,
# with every file it was read from (config files, excludes files, `info/exclude`,
# each `.gitignore` on the way, absent ones too) and its key, and the environment
# that chose the config files. It counts while that environment is the same and
# none of those files changed; then a check reads one file and asks each of them.

_IGNORES_TAG = ("kept-ignores", 2)
_ENVIRON = (  # what chooses the config files git reads (and GIT_CONFIG_KEY_n / _VALUE_n)
    "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL",
)  # fmt: skip


def ignores_path(ledger: str, worktree: str, rel: str) -> str:
    """Where whether git ignores `rel` of `worktree` is remembered."""
    return fs.join(ledger, STORE, IGNORES, lease.file_name(worktree), lease.file_name(rel))


def ignores_key(environ: Mapping[str, str]) -> tuple[object, ...]:
    """What an answer was read under: this format, this Python, and the environment
    that chooses git's config files."""
    pairs: tuple[tuple[str, str], ...] = ()
    if "GIT_CONFIG_COUNT" in environ:  # `git -c`'s pairs, as git's children see them
        pairs = tuple(sorted((k, v) for k, v in environ.items() if k[:11] == "GIT_CONFIG_"))
    return (_IGNORES_TAG, sys.version_info[:2], tuple(map(environ.get, _ENVIRON)), pairs)


def _same(path: str, key: object) -> bool:
    """Is the file at `path` still the version `key` (None: still absent — asked with
    `access`, which raises nothing: most ignore files are absent, and an exception costs
    a hook more than the check)? OSError when a file that was there cannot be looked at."""
    if key is None:
        return not posix.access(path, posix.F_OK)
    return fingerprints.version_key(path) == key


def ignored(
    ledger: str, worktree: str, top: str, git_dir: str, rel: str, environ: Mapping[str, str]
) -> bool:
    """Whether git ignores the file `rel` of the work tree `top` (`worktree`, its own
    git directory `git_dir`), or may: remembered, else decided by `ignore_rules` and
    remembered. True when a file on the way cannot be read."""
    path = ignores_path(ledger, worktree, rel)
    where = ignores_key(environ)
    try:
        try:
            data = fs.read_file(path) if posix.access(path, posix.F_OK) else None
            known = marshal.loads(data) if data else None
        except (ValueError, EOFError, TypeError):
            known = None  # damaged: decided again
        if (
            isinstance(known, tuple)
            and len(known) == 3
            and known[0] == where
            and all(_same(source, key) for source, key in known[2])
        ):
            return bool(known[1])
        from agent_hooks.kept import ignore_rules  # something changed, or a new file

        return ignore_rules.remember(path, where, top, git_dir, fs.dirname(ledger), environ, rel)
    except OSError:
        return True
