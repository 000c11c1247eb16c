"""One client's hooks file: the command agent-hooks' handlers run, which handlers are
agent-hooks', merging them in and taking them out, and the file's backups and writes.

Shared by every client whose hooks live in a JSON file of Claude Code's shape,
`{"hooks": {Event: [{"matcher"?: M, "hooks": [handler, …]}, …]}}`: Claude Code's and Qwen
Code's `settings.json`, Gemini CLI's `settings.json`, Codex's `hooks.json`. What only a
client knows (its table of events, its paths, its trust step) is its own module's; the
table of those modules is `install.clients.INSTALLERS`.

Invariants:

* **The command fails open.** A handler runs
  `[ -x PY ] && [ -f ENTRY ] && exec PY -IS ENTRY [CLIENT] EVENT || exit 0` (every path
  one shell word): when the interpreter or the entry script is gone (an uninstall, a
  clone of a committed project settings file naming another user's paths) it exits 0
  and prints nothing, which every client reads as "allow". The shell the client starts
  anyway (`sh -c`, `bash -c`) runs the two tests as built-ins and then `exec`s Python,
  so the hook is still the client's child (liveness reads its parent) and costs two
  `stat`s more (docs/adr/0025-installer-family.md).
* **Ours is one rule**, for every client and every event, of this release or any other:
  a handler whose command runs agent-hooks' entry script (a shell word, not the last,
  ending in `/hooks/entry.py` or `/hooks/entry.pyc`), or the plugin form's runner.
  A handler of an event dropped since is still ours, so install and uninstall take it out.
* Only our handlers are ever added, changed or removed; every other handler, group,
  event and setting stays as it was, in its order. `install` is idempotent: a document
  that already holds exactly the block is returned unchanged (no write follows).
* A file is backed up before it is changed (`<file>.agent-hooks-backup-<UTC stamp>[-n]`,
  the one spelling of a backup's name, `backup_name`) and replaced atomically through
  `storage.write_bytes_atomic`, keeping its mode; a symlinked file is written through.
  At most one backup per file is kept: a change that putting our part into the kept
  backup reproduces makes none, a new one replaces the older, and one put back by
  uninstall is removed (the file is that copy now).
* Uninstall gives the user's file back byte for byte when nothing else changed since the
  install (the file is our part put into the kept backup); otherwise only our part is
  taken out. A file install created that is left holding nothing is removed.
* A file that is not a JSON object is refused with one line, never overwritten.

Standard library only: install.sh runs it from the clone.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_hooks import storage

ENTRY_NAMES = ("/hooks/entry.py", "/hooks/entry.pyc")  # the script, or it compiled (install.sh)
PLUGIN_RUNNER = "${CLAUDE_PLUGIN_ROOT}/hooks/run"  # the Claude Code plugin form's launcher
BACKUP_INFIX = ".agent-hooks-backup-"

Document = dict[str, Any]
Block = dict[str, list[dict[str, Any]]]
# (event, matcher or None for "every", timeout in the client's unit)
Table = Sequence[tuple[str, str | None, int]]


# --------------------------------------------------------------------------- the command


def hook_argv(python: str, entry: str, *args: str) -> list[str]:
    """The process a hook starts: absolute interpreter, `-IS`, absolute entry, then
    `args` (the client's name, unless Claude Code, and the event)."""
    return [python, "-IS", entry, *args]


def hook_command(python: str, entry: str, *args: str) -> str:
    """The shell command of a handler: `hook_argv`, run only while the interpreter and the
    entry script are there; otherwise exit 0 with nothing on stderr (see the invariants)."""
    py, script = shlex.quote(python), shlex.quote(entry)
    argv = " ".join(shlex.quote(word) for word in hook_argv(python, entry, *args))
    return f"[ -x {py} ] && [ -f {script} ] && exec {argv} || exit 0"


def command_argv(command: str) -> list[str] | None:
    """The process a command of ours starts — `hook_argv` from the guarded form, or the
    whole command from an earlier release's plain one (`PY -IS ENTRY EVENT`, or the entry
    script run by itself) — else None: a command is ours when one of its words, not the
    last (the event follows), is agent-hooks' entry script."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "exec" in words:
        words = words[words.index("exec") + 1 :]
    if "||" in words:
        words = words[: words.index("||")]
    if any(word.endswith(ENTRY_NAMES) for word in words[:-1]):
        return words
    return None


def runs_entry(command: object) -> bool:
    """Whether a command runs agent-hooks: its entry script, or the plugin's runner."""
    if not isinstance(command, str):
        return False
    return command.lstrip().startswith(f'"{PLUGIN_RUNNER}"') or command_argv(command) is not None


def is_ours(handler: object) -> bool:
    """A handler (or Claude Code's status line) whose command runs agent-hooks."""
    return isinstance(handler, dict) and runs_entry(handler.get("command"))


def missing_part(argv: Sequence[str]) -> str | None:
    """What of agent-hooks the process `argv` (`command_argv`) runs is gone — its
    interpreter or its entry script — or None when both are there."""
    at = next((n for n, word in enumerate(argv) if word.endswith(ENTRY_NAMES)), None)
    if at is None:
        return "it names no entry script"
    if at > 0 and not (os.path.isabs(argv[0]) and os.access(argv[0], os.X_OK)):
        return f"its interpreter {argv[0]} is missing"
    if not os.path.isfile(argv[at]):
        return f"its entry script {argv[at]} is missing"
    return None


# --------------------------------------------------------------------------- the merge


def hooks_block(
    table: Table,
    command: Callable[[str], str],
    extra: Callable[[str], Mapping[str, Any]] | None = None,
) -> Block:
    """Our groups by event: one group (one handler) per row of `table`; `extra(event)`
    adds keys to a handler (Gemini CLI's `name`)."""
    block: Block = {}
    for event, matcher, timeout in table:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        handler: dict[str, Any] = dict(extra(event)) if extra else {}
        handler.update({"type": "command", "command": command(event), "timeout": timeout})
        group["hooks"] = [handler]
        block.setdefault(event, []).append(group)
    return block


def _handlers(group: object) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def holds_ours(group: object) -> bool:
    return any(is_ours(h) for h in _handlers(group))


def _without_ours(groups: list[Any]) -> list[Any]:
    """`groups` without our handlers; a group left empty by that is dropped (one the user
    left empty stays)."""
    kept = []
    for group in groups:
        if not holds_ours(group):
            kept.append(group)
            continue
        handlers = [h for h in _handlers(group) if not is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
    return kept


def ours_block(doc: Mapping[str, Any]) -> Block:
    """The groups of `doc` that hold our handlers, by event (what install added)."""
    hooks = doc.get("hooks")
    block: Block = {}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if holds_ours(group):
                block.setdefault(event, []).append(group)
    return block


def our_argvs(doc: Mapping[str, Any]) -> list[list[str]]:
    """The process each handler of ours in `doc` starts (the plugin's runner aside)."""
    found = []
    for groups in ours_block(doc).values():
        for group in groups:
            for handler in _handlers(group):
                argv = command_argv(handler["command"]) if is_ours(handler) else None
                if argv is not None:
                    found.append(argv)
    return found


def install(doc: Mapping[str, Any], block: Block) -> Document:
    """`doc` with exactly our `block` in it: an event whose groups of ours already are the
    block's is left alone (nothing moves); otherwise ours are taken out and the block's
    groups put after the user's. Ours of events the block lacks are taken out. ValueError
    for a `hooks` that is not an object, or an event of ours that is not a list."""
    result: Document = json.loads(json.dumps(doc))
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" in the file is not an object')
    for event in list(hooks):
        groups = hooks[event]
        if event not in block and isinstance(groups, list) and any(map(holds_ours, groups)):
            hooks[event] = _without_ours(groups)
            if not hooks[event]:
                del hooks[event]
    for event, wanted in block.items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise ValueError(f'"hooks.{event}" in the file is not a list')
        if [g for g in current if holds_ours(g)] == wanted:
            continue
        hooks[event] = _without_ours(current) + json.loads(json.dumps(wanted))
    if not hooks and "hooks" not in doc:
        del result["hooks"]
    return result


def uninstall(doc: Mapping[str, Any]) -> Document:
    """`doc` without any handler of ours; events and a `hooks` object left empty by that are
    dropped (ones that were empty before stay)."""
    result: Document = json.loads(json.dumps(doc))
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    changed = False
    for event in list(hooks):
        if isinstance(hooks[event], list):
            kept = _without_ours(hooks[event])
            if kept != hooks[event]:
                changed = True
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
    if changed and not hooks:
        del result["hooks"]
    return result


class Part:
    """What of a document is agent-hooks': `held` says whether a document holds any of
    it, `put(into, source)` puts `source`'s part into `into`, `take` takes it out. The
    plain part is our handlers (`HANDLERS`); Claude Code's adds its status line and the
    permission rules install added. (A plain class, like `Change`: the plugin form's
    SessionStart loads this module, and `dataclasses` would bring `copy` with it.)"""

    def __init__(
        self,
        held: Callable[[Mapping[str, Any]], bool],
        put: Callable[[Mapping[str, Any], Mapping[str, Any]], Document],
        take: Callable[[Mapping[str, Any]], Document],
    ) -> None:
        self.held, self.put, self.take = held, put, take


HANDLERS = Part(
    held=lambda doc: bool(ours_block(doc)),
    put=lambda into, source: install(into, ours_block(source)),
    take=uninstall,
)


# --------------------------------------------------------------------------- files


def read_document(path: str) -> Document:
    """The JSON object at `path` (`{}` when missing or blank); ValueError (one line) when
    it is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; fix it first, nothing was changed") from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it first, nothing was changed")
    return doc


def json_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def backup_name(path: str, now: float) -> str:
    """A free backup name for the (resolved) `path`: `<path>.agent-hooks-backup-<UTC
    stamp>`, then `-2`, `-3`, … within one second."""
    stamp = storage.utc_stamp(now)
    backup, n = f"{path}{BACKUP_INFIX}{stamp}", 1
    while os.path.lexists(backup):
        n += 1
        backup = f"{path}{BACKUP_INFIX}{stamp}-{n}"
    return backup


def _backup_order(name: str) -> tuple[str, int]:
    stamp, _, n = name.rpartition(BACKUP_INFIX)[2].partition("-")
    return stamp, int(n) if n.isdigit() else 1


def backups(path: str) -> list[str]:
    """Every backup of the (resolved) `path`, oldest first."""
    directory, name = os.path.split(os.path.realpath(path))
    try:
        found = [f for f in os.listdir(directory) if f.startswith(name + BACKUP_INFIX)]
    except OSError:
        return []
    return [os.path.join(directory, f) for f in sorted(found, key=_backup_order)]


def latest_backup(path: str) -> str | None:
    found = backups(path)
    return found[-1] if found else None


def prune_backups(path: str, keep: str | None) -> list[str]:
    """Remove every backup of `path` but `keep`; return what was removed."""
    removed = []
    for backup in backups(path):
        if backup != keep:
            try:
                os.unlink(backup)
            except FileNotFoundError:
                continue
            removed.append(backup)
    return removed


def mode_of(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None


def write_text(
    path: str,
    text: str,
    now: float,
    *,
    backup_first: bool = True,
    new_mode: int = storage.FILE_MODE,
) -> str | None:
    """Replace the (resolved) file at `path` with `text`, keeping its mode (a new file gets
    `new_mode`), after backing it up when it exists and `backup_first`; return the backup."""
    real = os.path.realpath(path)
    os.makedirs(os.path.dirname(real) or ".", exist_ok=True)
    mode = mode_of(real)
    backup = None
    if mode is not None and backup_first:
        backup = backup_name(real, now)
        with open(real, "rb") as handle:
            storage.write_bytes_atomic(backup, handle.read(), mode=mode)
    storage.write_bytes_atomic(real, text.encode("utf-8"), mode=new_mode if mode is None else mode)
    return backup


def restore(path: str, backup: str) -> None:
    """Put `backup`'s bytes (and mode) back at the resolved `path`, atomically."""
    with open(backup, "rb") as handle:
        data = handle.read()
    storage.write_bytes_atomic(os.path.realpath(path), data, mode=os.stat(backup).st_mode & 0o7777)


def reproduces(backup: str, current: Mapping[str, Any], part: Part) -> bool:
    """Whether `backup` holds nothing of ours and putting our part of `current` into it
    gives `current` exactly."""
    try:
        saved = read_document(backup)
        return not part.held(saved) and part.put(saved, current) == current
    except (ValueError, OSError):
        return False


def restorable_backup(path: str, current: Mapping[str, Any], part: Part) -> str | None:
    """The backup to put back: the latest, when `current` is exactly our part put into it."""
    backup = latest_backup(path)
    return backup if backup is not None and reproduces(backup, current, part) else None


class Change:
    """What one file is to become (`plan_install`, `plan_uninstall`) and, once `commit`
    ran, what was done: `restore_from` a backup whose bytes become the file, `backup` the
    backup `commit` made, `removed` whether it removed the file (left holding nothing)."""

    def __init__(
        self,
        path: str,
        before: Document,
        after: Document,
        *,
        restore_from: str | None = None,
        backup_first: bool = True,
        remove_if_empty: bool = False,
    ) -> None:
        self.path, self.before, self.after = path, before, after
        self.restore_from = restore_from
        self.backup_first = backup_first
        self.remove_if_empty = remove_if_empty
        self.backup: str | None = None
        self.removed = False

    @property
    def changed(self) -> bool:
        return self.after != self.before or self.restore_from is not None


def plan_install(path: str, after: Callable[[Document], Document], part: Part = HANDLERS) -> Change:
    """The file at `path` with our part as `after(before)` makes it. A backup our earlier
    install came from, which the new install into it still reproduces, stays the one to
    restore: no second copy of the same file."""
    before = read_document(path)
    wanted = after(before)
    kept = None
    if wanted != before and part.held(before):
        kept = restorable_backup(path, before, part)
        if kept is not None and not reproduces(kept, wanted, part):
            kept = None
    return Change(path, before, wanted, backup_first=kept is None)


def plan_uninstall(path: str, part: Part = HANDLERS, *, created: bool | None = None) -> Change:
    """The file at `path` without our part: the kept backup's bytes when it reproduces the
    file, else the file with our part taken out (removed when it is left empty and install
    created it; `created` None: when no backup of it exists)."""
    before = read_document(path)
    if part.held(before):
        saved = restorable_backup(path, before, part)
        if saved is not None:
            return Change(path, before, read_document(saved), restore_from=saved)
    if created is None:
        created = latest_backup(path) is None
    return Change(path, before, part.take(before), remove_if_empty=created)


def commit(change: Change, now: float) -> Change:
    """Carry `change` out (nothing when nothing changes); keeps at most one backup."""
    path = change.path
    if change.restore_from is not None:
        restore(path, change.restore_from)
        prune_backups(path, keep=None)  # the file is that copy now
        return change
    if change.after == change.before:
        return change
    real = os.path.realpath(path)
    if not change.after and change.remove_if_empty and os.path.lexists(real):
        os.unlink(real)
        change.removed = True
        return change
    change.backup = write_text(path, json_text(change.after), now, backup_first=change.backup_first)
    if change.backup is not None:
        prune_backups(path, keep=change.backup)
    return change


def describe(change: Change, label: str, installing: bool) -> str:
    """One line for a person: what happened to the file."""
    path = change.path
    if not change.changed:
        return f"{path}: already {'up to date' if installing else 'without agent-hooks'}; unchanged"
    if change.restore_from is not None:
        return (
            f"{path}: agent-hooks removed (restored exactly as before from {change.restore_from})"
        )
    if change.removed:
        return f"{path}: agent-hooks removed (the file held nothing else: removed)"
    verb = "installed" if installing else "removed"
    return f"{path}: agent-hooks {verb} for {label}" + (
        f" (backup: {change.backup})" if change.backup else ""
    )
