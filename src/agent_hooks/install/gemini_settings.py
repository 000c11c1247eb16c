"""The hooks agent-hooks adds to a Gemini CLI settings file, and the merge that adds or
removes them while keeping everything else.

Gemini CLI (0.61.0, `reference/gemini-cli-0.61.0/PROTOCOL.md`) reads hooks from
`~/.gemini/settings.json` (user) and `<project>/.gemini/settings.json` (project),
runs both lists, and runs one of our handlers as `bash -c COMMAND` with the payload
on stdin. Our handler for event `E` is

    "<python>" -IS "<…/hooks/entry.pyc>" gemini E

named `agent-hooks-E`, of `"type": "command"`, with its `timeout` in MILLISECONDS
(Gemini's unit; Claude Code's is seconds). Tool events match only the tools the gate
reads, by an anchored regex: Gemini's matchers are unanchored JavaScript regexes
(`write` alone would also match `write_todos`).

Invariants:

* Only handlers whose command runs agent-hooks' entry script for the `gemini` client
  (`…/hooks/entry.py` or `…/hooks/entry.pyc`, then ` gemini <Event>`) are ever added,
  changed or removed; every other setting and every other tool's hooks stay exactly as
  they were. `hooksConfig` is never written: when it disables hooks (all of them, or
  ours by name) that is reported (`status`, and a note at install), never overridden.
* `install` is idempotent: on a file that already holds the current block it returns the
  document unchanged, so a second run writes nothing.
* A file is backed up before it is changed (`claude_settings`' backups: at most one per
  settings file), then replaced atomically keeping its mode; a file that is not a JSON
  object (Gemini also accepts comments in it; we do not) is refused with a one-line
  error, never overwritten.
* Uninstall restores the user's file byte for byte when nothing else changed since the
  install (the file is what installing into the kept backup gives); otherwise only our
  handlers are removed (and groups and events left empty by that). A file we created
  (no backup of it exists) and that is left holding nothing is removed.
* Folder trust is the user's decision: a project whose folder Gemini does not trust
  runs no project hooks (and `gemini -p` there exits 55). Installing into a project
  reports what the user must do; only `--trust` adds the folder to
  `trustedFolders.json`, and uninstall never takes trust away.

Run as `python -m agent_hooks.install.gemini_settings install|uninstall|status
--gemini-home DIR --python P --entry E [--project DIR] [--trust]`; standard library only.
Exit codes: 0 done (status: installed and able to run), 1 error (one line on stderr),
2 usage, 3 status found a problem (not installed, disabled, folder not trusted).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import storage
from agent_hooks.install import claude_settings

CLIENT = "gemini"
ENTRY_NAMES = claude_settings.ENTRY_NAMES
NAME_PREFIX = "agent-hooks-"
TOOLS = ("write_file", "replace", "run_shell_command", "read_file")
TOOL_MATCHER = "^(" + "|".join(TOOLS) + ")$"
# (event, matcher or None for "every", timeout in MILLISECONDS). SessionEnd is awaited by
# `gemini -p` before it exits, so its bound stays short; 5 s also covers one lock wait.
HOOKS: list[tuple[str, str | None, int]] = [
    ("SessionStart", None, 30_000),
    ("BeforeTool", TOOL_MATCHER, 10_000),
    ("AfterTool", TOOL_MATCHER, 10_000),
    ("AfterAgent", None, 10_000),
    ("SessionEnd", None, 5_000),
]
EVENTS = tuple(event for event, _, _ in HOOKS)
SETTINGS_NAME = "settings.json"
TRUSTED_FOLDERS_NAME = "trustedFolders.json"
TRUST_FOLDER = "TRUST_FOLDER"
HOOKS_DISABLED = "hooks disabled in settings"
EXIT_OK, EXIT_ERROR, EXIT_PROBLEM = 0, 1, 3

Block = dict[str, list[dict[str, Any]]]


# --------------------------------------------------------------------------- the block


def _shell_word(text: str) -> str:
    """`text` as one double-quoted bash word (`"`, `\\`, `$` and backquote escaped)."""
    for char in ("\\", '"', "$", "`"):
        text = text.replace(char, "\\" + char)
    return f'"{text}"'


def hook_command(python: str, entry: str, event: str) -> str:
    """The command of our handler for `event`: absolute interpreter, -IS, absolute entry."""
    return f"{_shell_word(python)} -IS {_shell_word(entry)} {CLIENT} {event}"


def hook_name(event: str) -> str:
    """The handler's `name`: what Gemini shows, and what `hooksConfig.disabled` lists."""
    return NAME_PREFIX + event


def hooks_block(python: str, entry: str) -> Block:
    """Our groups, by event, for the copy at `python` + `entry`."""
    block: Block = {}
    for event, matcher, timeout in HOOKS:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [
            {
                "name": hook_name(event),
                "type": "command",
                "command": hook_command(python, entry, event),
                "timeout": timeout,
            }
        ]
        block.setdefault(event, []).append(group)
    return block


def is_ours(handler: object) -> bool:
    """A handler whose command runs our entry script for the gemini client, whatever the
    event and wherever the copy was installed (quoted or not)."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    words = command.rstrip().rsplit(" ", 2)
    if len(words) != 3:
        return False
    head, client, event = words
    return (
        client == CLIENT
        and event.isascii()
        and event.isalpha()
        and head.rstrip("'\"").endswith(ENTRY_NAMES)
    )


def _handlers(group: object) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _holds_ours(group: object) -> bool:
    return any(is_ours(h) for h in _handlers(group))


def _without_ours(groups: list[Any]) -> list[Any]:
    """`groups` without our handlers; a group left with no handler is dropped (only when it
    held ours: a group the user left empty stays)."""
    kept = []
    for group in groups:
        if not _holds_ours(group):
            kept.append(group)
            continue
        handlers = [h for h in _handlers(group) if not is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
    return kept


def ours_block(settings: dict[str, Any]) -> Block:
    """The groups of `settings` that hold our handlers, by event (what install added)."""
    hooks = settings.get("hooks")
    block: Block = {}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if _holds_ours(group):
                block.setdefault(event, []).append(group)
    return block


def install(settings: dict[str, Any], block: Block) -> dict[str, Any]:
    """`settings` with exactly our `block` in it (unchanged if it is already there): our
    groups of an event are replaced by the block's, at the end of that event's list, and
    our groups of events the block no longer has are removed. ValueError for a `hooks`
    that is not an object, or an event of ours whose value is not a list."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" in the settings file is not an object')
    for event in list(hooks):
        groups = hooks[event]
        if event not in block and isinstance(groups, list) and any(map(_holds_ours, groups)):
            hooks[event] = _without_ours(groups)
            if not hooks[event]:
                del hooks[event]
    for event, wanted in block.items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise ValueError(f'"hooks.{event}" in the settings file is not a list')
        if [g for g in current if _holds_ours(g)] == wanted:
            continue
        hooks[event] = _without_ours(current) + wanted
    return result


def uninstall(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without any handler of ours; events and a `hooks` object left empty by
    that are dropped (ones that were empty before stay)."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
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


# --------------------------------------------------------------------------- backups


def reproduces(backup: str, current: dict[str, Any]) -> bool:
    """Whether `backup` holds nothing of ours and installing our part of `current` into it
    gives `current` exactly."""
    try:
        saved = claude_settings.read_settings(backup)
        return not ours_block(saved) and install(saved, ours_block(current)) == current
    except (ValueError, OSError):
        return False


def restorable_backup(path: str, current: dict[str, Any]) -> str | None:
    """The backup to put back on uninstall: the latest, if `current` is exactly our install
    into it."""
    backup = claude_settings.latest_backup(path)
    return backup if backup is not None and reproduces(backup, current) else None


def _mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None


def write_settings(
    path: str,
    before: dict[str, Any],
    after: dict[str, Any],
    now: float,
    *,
    remove_if_empty: bool = False,
    backup_first: bool = True,
) -> str | None:
    """`claude_settings.write_settings` (backup, atomic replace through a symlink, removal of
    a file left empty) that also keeps the file's exact mode; returns the backup's path."""
    real = os.path.realpath(path)
    mode = _mode(real)
    backup = claude_settings.write_settings(
        path, before, after, now, remove_if_empty=remove_if_empty, backup_first=backup_first
    )
    if mode is not None and os.path.exists(real):
        os.chmod(real, mode)
    return backup


# --------------------------------------------------------------------------- status


def _hooks_config(settings: dict[str, Any]) -> dict[str, Any]:
    config = settings.get("hooksConfig")
    return config if isinstance(config, dict) else {}


def hooks_disabled(scopes: list[tuple[str, dict[str, Any]]], block: Block) -> list[str]:
    """Why Gemini will not run our handlers, from the settings it merges (`(path, settings)`
    in increasing precedence: system defaults, user, project, system): the last
    `hooksConfig.enabled` given wins; `hooksConfig.disabled` (hook names, merged as a union)
    switches single handlers off. One line per finding, each starting with HOOKS_DISABLED."""
    found = []
    enabled: tuple[str, bool] | None = None
    for path, settings in scopes:
        value = _hooks_config(settings).get("enabled")
        if isinstance(value, bool):
            enabled = (path, value)
    if enabled is not None and not enabled[1]:
        found.append(
            f"{HOOKS_DISABLED}: hooksConfig.enabled is false in {enabled[0]}, so Gemini CLI "
            "runs no hook at all (set it to true, or remove it)"
        )
    names = {
        handler.get("name") or handler.get("command")
        for groups in block.values()
        for group in groups
        for handler in _handlers(group)
    }
    for path, settings in scopes:
        disabled = _hooks_config(settings).get("disabled")
        ours = sorted(n for n in disabled if n in names) if isinstance(disabled, list) else []
        if ours:
            found.append(
                f"{HOOKS_DISABLED}: hooksConfig.disabled in {path} lists {', '.join(ours)} "
                "(take them out of that list)"
            )
    return found


def _is_subpath(parent: str, child: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def trust_of(project: str, trusted_folders: str) -> str | None:
    """Gemini's rule for a folder: the longest rule path in `trusted_folders` that covers
    `project` (a `TRUST_PARENT` rule covers its parent) decides; "DO_NOT_TRUST",
    "TRUST_FOLDER"/"TRUST_PARENT", or None (no rule: not trusted, folder trust being on by
    default). ValueError for a file that is not a JSON object."""
    try:
        with open(trusted_folders, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    try:
        rules = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ValueError(f"{trusted_folders} is not valid JSON ({exc})") from None
    if not isinstance(rules, dict):
        raise ValueError(f"{trusted_folders} does not hold a JSON object")
    target = os.path.realpath(project)
    best: tuple[int, str] | None = None
    for rule, level in rules.items():
        covered = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        if _is_subpath(os.path.realpath(covered), target) and (best is None or len(rule) > best[0]):
            best = (len(rule), str(level))
    return best[1] if best else None


def folder_trust_enabled(user_settings: dict[str, Any]) -> bool:
    """`security.folderTrust.enabled` of the user's settings (default: on)."""
    security = user_settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    value = trust.get("enabled") if isinstance(trust, dict) else None
    return value is not False


def trust_problem(project: str, trusted_folders: str, user_settings: dict[str, Any]) -> str | None:
    """What the user must do so Gemini runs `project`'s hooks, or None when it will."""
    if not folder_trust_enabled(user_settings):
        return None
    real = os.path.realpath(project)
    level = trust_of(project, trusted_folders)
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return None
    why = "is marked DO_NOT_TRUST" if level == "DO_NOT_TRUST" else "is not trusted"
    return (
        f"{real} {why} by Gemini CLI, so it runs no project hooks there (and `gemini -p` "
        f'exits 55): start `gemini` in it once and trust the folder, or add "{real}": '
        f'"{TRUST_FOLDER}" to {trusted_folders} (or install again with --trust-project)'
    )


@dataclass(frozen=True)
class Status:
    """What a settings file holds of ours and whether Gemini CLI will run it."""

    settings: str
    events: tuple[str, ...]  # our events present
    missing: tuple[str, ...]  # events of HOOKS not present
    current: bool | None  # the block of the given copy exactly (None: no copy given)
    problems: tuple[str, ...] = field(default=())

    @property
    def installed(self) -> bool:
        return not self.missing

    @property
    def ok(self) -> bool:
        return self.installed and self.current is not False and not self.problems

    def lines(self) -> list[str]:
        """One line per fact, for people (`agent-hooks doctor`)."""
        if not self.events:
            head = f"{self.settings}: agent-hooks not installed for Gemini CLI"
        elif self.missing:
            head = (
                f"{self.settings}: agent-hooks partly installed (missing: "
                f"{', '.join(self.missing)})"
            )
        elif self.current is False:
            head = f"{self.settings}: agent-hooks installed, but not for this copy (reinstall)"
        else:
            head = f"{self.settings}: agent-hooks installed ({', '.join(self.events)})"
        return [head, *self.problems]


def _read_other(path: str, problems: list[str]) -> dict[str, Any]:
    """Another file Gemini reads (a settings scope, `trustedFolders.json`): its object, or `{}`
    and a problem line when it cannot be read here (Gemini also accepts comments in them)."""
    try:
        return claude_settings.read_settings(path)
    except (ValueError, OSError) as exc:
        problems.append(f"cannot check {path} ({str(exc).splitlines()[0]})")
        return {}


def status(
    settings_path: str,
    *,
    scopes: list[str] | None = None,
    python: str | None = None,
    entry: str | None = None,
    project: str | None = None,
    trusted_folders: str | None = None,
    user_settings: str | None = None,
) -> Status:
    """The Status of `settings_path`. `scopes` are every settings file Gemini merges, in
    increasing precedence (default: `settings_path` alone); with `python` and `entry` the
    block is compared with that copy's; with `project` (and `trusted_folders`, the user's
    `trustedFolders.json`; `user_settings` for `security.folderTrust`) the folder's trust is
    checked. ValueError when `settings_path` is not a JSON object; another file that cannot be
    read is a problem line, not an error."""
    current = claude_settings.read_settings(settings_path)
    block = ours_block(current)
    events = tuple(e for e in EVENTS if e in block)
    missing = tuple(e for e in EVENTS if e not in block)
    same = None if not (python and entry) else block == hooks_block(python, entry)
    problems: list[str] = []
    if events:
        here = os.path.realpath(settings_path)
        docs = [
            (p, current if os.path.realpath(p) == here else _read_other(p, problems))
            for p in (scopes or [settings_path])
        ]
        problems += hooks_disabled(docs, block)
    if project is not None and trusted_folders is not None:
        user = _read_other(user_settings, problems) if user_settings else {}
        try:
            problem = trust_problem(project, trusted_folders, user)
        except ValueError as exc:
            problem = f"cannot check whether {project} is trusted: {exc}"
        if problem:
            problems.append(problem)
    return Status(settings_path, events, missing, same, tuple(problems))


def trust(project: str, trusted_folders: str) -> bool:
    """Mark `project` TRUST_FOLDER in `trusted_folders` (created 0600 when missing, every
    other rule kept, replaced atomically keeping its mode); False when it already was.
    ValueError for a file that is not a JSON object."""
    real = os.path.realpath(project)
    rules = claude_settings.read_settings(trusted_folders)
    if rules.get(real) == TRUST_FOLDER:
        return False
    mode = _mode(os.path.realpath(trusted_folders))
    rules[real] = TRUST_FOLDER
    target = os.path.realpath(trusted_folders)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    storage.write_bytes_atomic(target, (json.dumps(rules, indent=2) + "\n").encode("utf-8"))
    if mode is not None:
        os.chmod(target, mode)
    return True


# --------------------------------------------------------------------------- command line


def default_gemini_home() -> str:
    """`$GEMINI_CLI_HOME/.gemini` (the variable moves Gemini's home) or `~/.gemini`."""
    base = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(base, ".gemini")


def system_settings_paths() -> list[str]:
    """Gemini's system files, lowest and highest precedence: (system defaults, system)."""
    system = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json"
    defaults = os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or os.path.join(
        os.path.dirname(system), "system-defaults.json"
    )
    return [defaults, system]


@dataclass(frozen=True)
class _Paths:
    settings: str
    user: str
    trusted_folders: str
    project: str | None
    scopes: list[str]


def _paths(args: argparse.Namespace) -> _Paths:
    home = os.path.abspath(args.gemini_home or default_gemini_home())
    user = os.path.join(home, SETTINGS_NAME)
    trusted = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") if not args.gemini_home else None
    project = os.path.abspath(args.project) if args.project else None
    settings = os.path.join(project, ".gemini", SETTINGS_NAME) if project else user
    defaults, system = system_settings_paths()
    scopes = [defaults, user, *([settings] if project else []), system]
    return _Paths(
        settings, user, trusted or os.path.join(home, TRUSTED_FOLDERS_NAME), project, scopes
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.gemini_settings",
        description=(__doc__ or "").splitlines()[0],
    )
    parser.add_argument("action", choices=["install", "uninstall", "status"])
    parser.add_argument(
        "--gemini-home",
        metavar="DIR",
        help="Gemini CLI's own directory, the one holding settings.json and "
        "trustedFolders.json (default: $GEMINI_CLI_HOME/.gemini, else ~/.gemini).",
    )
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter.")
    parser.add_argument(
        "--entry", help="Absolute path of hooks/entry.py, or of it compiled (entry.pyc)."
    )
    parser.add_argument(
        "--project",
        metavar="DIR",
        help="Use DIR/.gemini/settings.json (the project's) instead of the user's.",
    )
    parser.add_argument(
        "--trust",
        "--trust-project",
        dest="trust",
        action="store_true",
        help="With install --project: also mark DIR trusted (TRUST_FOLDER) in "
        "trustedFolders.json. Without it the folder's trust is only reported.",
    )
    args = parser.parse_args(argv)
    if args.action == "install" and not (args.python and args.entry):
        parser.error("--python and --entry are required")
    if args.trust and not (args.action == "install" and args.project):
        parser.error("--trust goes with install --project")
    paths = _paths(args)
    try:
        if args.action == "install":
            return _install(args, paths)
        if args.action == "uninstall":
            return _uninstall(paths)
        return _status(args, paths)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {str(exc).splitlines()[0]}", file=sys.stderr)
        return EXIT_ERROR


def _install(args: argparse.Namespace, paths: _Paths) -> int:
    path = paths.settings
    block = hooks_block(args.python, args.entry)
    before = claude_settings.read_settings(path)
    after = install(before, block)
    if args.trust:
        claude_settings.read_settings(paths.trusted_folders)  # refused before anything changes
    # A backup our earlier install came from, that our new install into it still
    # reproduces, stays the one to restore: no second copy of the same file.
    kept = None
    if after != before and ours_block(before):
        kept = restorable_backup(path, before)
        if kept is not None and not reproduces(kept, after):
            kept = None
    backup = write_settings(path, before, after, time.time(), backup_first=kept is None)
    if backup is not None:
        claude_settings.prune_backups(path, keep=backup)
    if after == before:
        print(f"{path}: already up to date; unchanged")
    else:
        print(f"{path}: agent-hooks installed" + (f" (backup: {backup})" if backup else ""))
    if args.trust and paths.project and trust(paths.project, paths.trusted_folders):
        print(
            f"{paths.trusted_folders}: {os.path.realpath(paths.project)} trusted ({TRUST_FOLDER})"
        )
    found = status(
        path,
        scopes=paths.scopes,
        project=paths.project,
        trusted_folders=paths.trusted_folders if paths.project else None,
        user_settings=paths.user,
    )
    for problem in found.problems:
        print(f"note: {problem}")
    return EXIT_OK


def _uninstall(paths: _Paths) -> int:
    path = paths.settings
    before = claude_settings.read_settings(path)
    if ours_block(before):
        saved = restorable_backup(path, before)
        if saved is not None:
            claude_settings.restore(path, saved)
            claude_settings.prune_backups(path, keep=None)  # the file is that copy now
            print(f"{path}: agent-hooks removed (restored exactly as before from {saved})")
            return EXIT_OK
    after = uninstall(before)
    created = claude_settings.latest_backup(path) is None
    backup = write_settings(path, before, after, time.time(), remove_if_empty=created)
    if backup is not None:
        claude_settings.prune_backups(path, keep=backup)
    if after == before:
        print(f"{path}: already without agent-hooks; unchanged")
    elif not os.path.lexists(path):
        print(f"{path}: agent-hooks removed (the file held nothing else: removed)")
    else:
        print(f"{path}: agent-hooks removed" + (f" (backup: {backup})" if backup else ""))
    return EXIT_OK


def _status(args: argparse.Namespace, paths: _Paths) -> int:
    found = status(
        paths.settings,
        scopes=paths.scopes,
        python=args.python,
        entry=args.entry,
        project=paths.project,
        trusted_folders=paths.trusted_folders if paths.project else None,
        user_settings=paths.user,
    )
    for line in found.lines():
        print(line)
    return EXIT_OK if found.ok else EXIT_PROBLEM


if __name__ == "__main__":
    raise SystemExit(main())
