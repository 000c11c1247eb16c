"""Putting a kept version back (`agent-hooks restore`): which version, the checks
before the write, the write, and what is recorded after it
(docs/adr/0024-kept-versions.md).

Invariants:

* Nothing is written unless: the version's content is whole (its digest is its
  name); the path is a regular file or nothing (a deleted file is recreated, its
  missing directories too, never through a symlink out of the work tree); no
  other live writer holds the file (`lease.judge`; a running subagent of the
  restoring agent holding its own version's file does not count); the file's
  current content is kept first, as a version of kind `replaced` (so a restore
  can itself be undone) — when it cannot be kept (git ignores it, its name is
  excluded, it is too large) nothing is written; the restoring writer takes the
  file's lease; and, checked again just before the write, the file is as it was
  when read and no other live writer holds it. `force` writes over a live holder,
  a change meanwhile and content that cannot be kept; it is logged, and the
  holder's lease records who changed the file (its next hook says so).
* The write is atomic: a temporary file beside the path, holding the version's
  content with its mode bits (the permission bits: set-id bits are not put
  back), renamed onto the path. A refusal leaves the file, the store and the
  ledger as they were (a `replaced` version already kept stays: it is the file's
  content, worth keeping).
* After the write the restore is a version itself (kind `restore`), the lease
  records the file's fingerprint and the restoring agent's held files note it:
  no hook takes the restore for someone else's change.
* `write_copy` (`--to FILE`) only creates a new file; it never replaces one.
"""

from __future__ import annotations

import os

from agent_hooks import fingerprints, liveness, log, writers
from agent_hooks import posix_fs as fs
from agent_hooks.kept import kept_store, kept_versions
from agent_hooks.leases import lease, lease_messages, lease_store, writer_cards

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

    from agent_hooks import identity

PERMISSIONS = 0o777  # the mode bits put back (set-id and sticky bits are not)
LOOK_LIMIT = 64 << 20  # bytes of a file read to be compared or shown; a larger one is not


class Refused(Exception):
    """A restore that cannot or must not happen: one line saying why (nothing written)."""


def writer_owner(entry: Mapping[str, Any]) -> str | None:
    """The agent a version's writer belongs to (None: unknown, content a restore replaced)."""
    writer = entry.get("writer")
    return writer.partition("#")[0] if isinstance(writer, str) else None


def by(entry: Mapping[str, Any], name: str) -> bool:
    """Did the writer `name` (a writer key, or an agent's name) write this version?"""
    writer = entry.get("writer")
    return isinstance(writer, str) and name in (
        writer,
        writer.partition("#")[0],
        entry.get("agent"),
    )


def writer_label(entry: Mapping[str, Any], ledger: str) -> str:
    """Who wrote a version, as people read it."""
    writer = entry.get("writer")
    if not isinstance(writer, str):
        return "someone else (content a restore replaced)"
    return lease_messages.holder_label(entry, writer_cards.card(ledger, writer))


def choose(
    entries: list[dict[str, Any]],
    rel: str,
    me: writers.Writer,
    *,
    from_writer: str | None,
    version: str | None,
    ledger: str,
) -> dict[str, Any]:
    """The version to put back: `version` (the first hex digits of its id), else the
    newest that `from_writer` wrote, else the newest the restoring agent wrote (its
    own, or one of its subagents'). A restore's version is not its restorer's work
    (it may put back anyone's content): only writes count as someone's. Refused
    with what is kept instead."""
    content = [e for e in entries if e["hash"] is not None]
    if version is not None:
        wanted = version.lower()
        if not 4 <= len(wanted) <= 2 * kept_store.DIGEST_SIZE or not all(
            c in "0123456789abcdef" for c in wanted
        ):
            raise Refused(
                f"--version {version}: not a version id (the hex digits `--list` shows, 4 at least)"
            )
        found = [e for e in content if e["hash"].startswith(wanted)]
        if from_writer is not None:
            found = [e for e in found if by(e, from_writer)]
        if not found:
            raise Refused(f"no version {version} of {rel} is kept{_see_list(rel)}")
        if len({e["hash"] for e in found}) > 1:
            raise Refused(f"--version {version}: more than one version of {rel} starts so; "
                          "give more digits")  # fmt: skip
        return found[-1]
    ours = [e for e in content if e["kind"] == kept_store.WRITE]  # what each writer wrote
    if from_writer is not None:
        found = [e for e in ours if by(e, from_writer)]
        whose = f"{from_writer}'s"
    else:
        found = [e for e in ours if writer_owner(e) == me.owner]
        whose = f"nothing of yours ({me.label()})"
    if found:
        return found[-1]
    others = sorted({writer_label(e, ledger) for e in ours})
    kept = f"; kept are versions by {', '.join(others[:3])} (`--from NAME`)" if others else ""
    if from_writer is not None:
        raise Refused(f"no version {whose} is kept for {rel}{kept}{_see_list(rel)}")
    raise Refused(f"{whose} is kept for {rel}{kept}{_see_list(rel)}")


def _see_list(rel: str) -> str:
    return f" (`agent-hooks restore {rel} --list` shows what is)"


def content_of(ledger: str, entry: Mapping[str, Any], rel: str) -> bytes:
    """The whole content of a version, or Refused when it is missing or damaged."""
    data = kept_versions.read_object(ledger, str(entry["hash"]))
    if data is None:
        raise Refused(
            f"the kept content of version {kept_versions.version_id(entry)} of {rel} is "
            f"missing or damaged; nothing was written{_see_list(rel)}"
        )
    return data


def look(path: str, limit: int = LOOK_LIMIT) -> tuple[str, bytes | None, int, str | None]:
    """What is at `path` now: (`file`, its content — None when larger than `limit`
    bytes: not read —, its mode bits, its fingerprint), (`missing`, None, 0, None),
    or (what else is there, None, 0, None)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return "missing", None, 0, None
    except NotADirectoryError:
        return "a file where a directory on its path should be", None, 0, None
    kind = st.st_mode & fs.S_IFMT
    if kind == fs.S_IFLNK:
        return "a symlink", None, 0, None
    if kind != fs.S_IFREG:
        return "a directory" if kind == fs.S_IFDIR else "not a regular file", None, 0, None
    data = fs.read_file(path) if st.st_size <= limit else None
    return "file", data, st.st_mode & 0o7777, fingerprints.of(path)


def _blockers(
    ledger: str, rel: str, me: writers.Writer, worktree: str, now: float, entry: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(the live leases of other writers on `rel` in this work tree, the lease of a
    subagent of the restoring agent that holds the file and wrote the version, if
    one does: that one restores its own work and blocks nothing)."""
    judged = lease.judge(lease_store.read(ledger, rel), me, worktree, now, liveness.alive)
    child = None
    blockers = []
    for item in judged.blockers:
        key = item.get("writer")
        if (
            isinstance(key, str)
            and me.relation(key) == writers.CHILD
            and key == entry.get("holder")
        ):
            child = item
        else:
            blockers.append(item)
    return blockers, child


def _held_by(ledger: str, blockers: list[dict[str, Any]], now: float) -> str:
    item = blockers[0]
    card = writer_cards.card(ledger, item.get("writer"))
    written = item.get("written")
    when = ""
    if isinstance(written, int | float):
        from agent_hooks import durations

        when = f", who wrote it {durations.ago(now - written)}"
    return f"{lease_messages.holder_label(item, card)}{when}"


def _make_parents(root: str, path: str) -> None:
    """Make the missing directories of `path` inside the work tree `root`; refuse
    when an existing one on the way leads out of it (a symlink)."""
    parent = fs.dirname(path)
    existing = parent
    while not fs.lexists(existing) and existing != root:
        existing = fs.dirname(existing)
    real_root = fs.realpath(root)
    if not fs.is_within(fs.realpath(existing), real_root) or not fs.isdir(existing):
        raise Refused(f"{path}: {existing} is no directory of the work tree; nothing was written")
    os.makedirs(parent, exist_ok=True)


def _write_temp(directory: str, name: str, data: bytes, mode: int) -> str:
    """A temporary file beside the target holding `data` with `mode`; its path."""
    tmp = fs.join(directory, f".{name}.agent-hooks-restore.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        _discard(tmp)
        raise
    os.close(fd)
    return tmp


def _discard(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_copy(ledger: str, entry: Mapping[str, Any], rel: str, target: str) -> dict[str, Any]:
    """`--to FILE`: the version written to `target`, a new file (never one replaced)."""
    data = content_of(ledger, entry, rel)
    if fs.lexists(target):
        raise Refused(f"--to {target}: it exists; nothing was written (name a new file)")
    directory, name = fs.split(target)
    if not fs.isdir(directory or "."):
        raise Refused(f"--to {target}: {directory} is not a directory; nothing was written")
    mode = int(entry["mode"]) & PERMISSIONS
    tmp = _write_temp(directory or ".", name, data, mode)
    try:
        os.link(tmp, target)  # fails when something took the name meanwhile
    except FileExistsError:
        raise Refused(f"--to {target}: it exists; nothing was written") from None
    finally:
        _discard(tmp)
    return {"to": target, "size": len(data), "mode": mode}


def restore(
    state_dir: str,
    root: str,
    rel: str,
    entry: dict[str, Any],
    me: writers.Writer,
    *,
    agent: identity.Agent | None,
    environ: Mapping[str, str],
    now: float,
    force: bool,
    before_write: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Put `entry` (a version of `rel` in the work tree `root`) back (see the
    module); what was done. `before_write` runs just before the last check (tests
    change the file there, as another writer would)."""
    from agent_hooks.ledger.repo import Repo

    repo = Repo(root, state_dir, environ)
    ledger, worktree = repo.ledger, repo.worktree
    path = fs.join(root, rel)
    data = content_of(ledger, entry, rel)
    mode = int(entry["mode"]) & PERMISSIONS
    ident = kept_versions.version_id(entry)
    store = kept_store.store_dir(ledger)
    settings = kept_store.read_settings(store)
    kind, current, current_mode, mark = look(path, kept_store.file_limit(settings))
    if kind not in ("file", "missing"):
        raise Refused(f"{rel} is {kind} now; nothing was written")
    result: dict[str, Any] = {"path": rel, "version": ident, "mode": mode, "size": len(data)}
    if current is not None and kept_store.digest(current) == entry["hash"] and current_mode == mode:
        return {**result, "restored": False, "why": "the file is already as this version"}
    blockers, child = _blockers(ledger, rel, me, worktree, now, entry)
    if blockers and not force:
        raise Refused(
            f"{rel} is held by {_held_by(ledger, blockers, now)}, a live writer; nothing "
            "was written. Ask them (or the user) first; `--force` writes anyway (logged, "
            "and they are told)"
        )
    holder = str(child.get("writer")) if child is not None else me.key
    replaced = None
    if kind == "file":
        why = kept_store.skipped(ledger, worktree, root, rel, settings, environ)
        if why is None and current is None:  # not read: larger than the limit
            why = f"larger than the limit of {settings['kept_file_mib']} MiB"
        if why is not None and not force:
            raise Refused(
                f"the current content of {rel} cannot be kept ({why}), so this restore "
                "could not be undone; nothing was written (`--force` restores anyway)"
            )
        if why is None and current is not None:
            name = kept_store.digest(current)
            kept_store.put_object(ledger, name, current)
            kept = kept_store.entry_for(
                rel, kept_store.REPLACED, name, len(current), current_mode, None, holder, now, now
            )
            if not kept_store.append(ledger, worktree, rel, kept):
                raise Refused(f"the store of {ledger} is busy; nothing was written (try again)")
            replaced = kept_versions.version_id(kept)
    until = now
    if child is None and repo.minutes > 0:
        claim = lease_store.claim(repo, rel, me, now, holder_pid=liveness.agent_process(environ))
        if claim.blockers and not force:
            raise Refused(
                f"{rel} was taken meanwhile by {_held_by(ledger, claim.blockers, now)}; "
                "nothing was written"
            )
        if claim.problem is not None and not claim.blockers:
            raise Refused(f"{claim.problem}; nothing was written")
        until = claim.expires or now
    elif child is not None:
        expires = child.get("expires")
        until = float(expires) if isinstance(expires, int | float) else now
    _make_parents(root, path)
    tmp = _write_temp(fs.dirname(path), fs.basename(path), data, mode)
    try:
        if before_write is not None:
            before_write()
        again = look(path, 0)  # its fingerprint is enough
        if (again[0] != kind or again[3] != mark) and not force:
            raise Refused(
                f"{rel} changed while it was being restored; nothing was written "
                f"(look at it again: `agent-hooks restore {rel} --diff`)"
            )
        late, _ = _blockers(ledger, rel, me, worktree, now, entry)
        if late and not blockers and not force:
            raise Refused(
                f"{rel} was taken meanwhile by {_held_by(ledger, late, now)}; nothing was written"
            )
        os.rename(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    after = fingerprints.of(path)
    restored = kept_store.entry_for(
        rel,
        kept_store.RESTORE,
        str(entry["hash"]),
        len(data),
        mode,
        me.as_dict(),
        holder,
        now,
        until,
    )
    kept_store.append(ledger, worktree, rel, restored)
    lease_store.note_written(ledger, {rel: after}, holder, worktree, now)
    _note_held(agent, holder, path, after, (ledger, rel, worktree), until, now)
    who = me.label()
    text = f"{who} restored {rel} in {root} to version {ident}"
    if replaced is not None:
        text += f" (the content it replaced is kept as {replaced})"
    if blockers or force:
        held = _held_by(ledger, blockers, now) if blockers else None
        if held is not None:
            text += f", over {held}"
            lease_store.mark_changed(ledger, rel, worktree, f"{who}'s restore", now)
        log.log(state_dir, "restore --force", me.agent or "-", text, now)
    else:
        log.log(state_dir, "restore", me.agent or "-", text, now)
    return {
        **result,
        "restored": True,
        "replaced": replaced,
        "forced": bool(force),
        "over": [lease_messages.holder_label(item) for item in blockers],
        "lease_until": until if until > now else None,
    }


def _note_held(
    agent: identity.Agent | None,
    key: str,
    path: str,
    mark: str | None,
    place: tuple[str, str, str],
    until: float,
    now: float,
) -> None:
    """The restoring agent's state notes the file as its writer's last write (its
    next hook does not take the restore for someone else's change). An agent with
    no state file here (a person at a terminal) gets none."""
    from agent_hooks.agents import state_file
    from agent_hooks.leases import held_files

    if agent is None or until <= now or not state_file.exists(agent):
        return

    def mutate(doc: dict[str, Any]) -> bool:
        held_files.note(doc, key, path, mark, place, until, now)
        return True

    state_file.update(agent, mutate, now, lambda message: None)
