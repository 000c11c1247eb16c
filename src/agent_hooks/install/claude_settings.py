"""The hooks agent-hooks adds to a Claude Code settings file, and the merge that
adds or removes them while keeping everything else.

Invariants:

* Only handlers whose command runs agent-hooks' entry script (`…/hooks/entry.py`, or
  it compiled, `entry.pyc`, then one of our events) are ever added, changed or removed;
  every other setting and hook of the user stays exactly as it was. The status line is set
  only when asked and only when the user has none (or it is already ours).
* The `permissions.allow` rules that let agents run the `agent-hooks` command
  without a prompt (`Bash(agent-hooks *)`, and the same for the CLI link's absolute
  path) are added only when missing. Which ones install added is kept in a record
  (`--record`, install.sh's `<AGENT_HOOKS_HOME>/install-record.json`, by resolved
  settings path); uninstall removes exactly those, so a rule the user had before
  stays. Without a record no rule is removed.
* `install` is idempotent: on a file that already holds the current block it
  returns the document unchanged, so a second run writes nothing.
* A file is backed up before it is changed, then replaced atomically (keeping its
  mode); a file that is not a JSON object is refused, never overwritten. At most
  one backup per settings file is kept: a change that installing into the kept
  backup reproduces needs no new one, a new one replaces the older, and a backup
  put back by uninstall is removed (the file itself is now that copy).
* Uninstall restores the user's file exactly when nothing else changed since
  the install: if the file is what installing into the latest backup gives, that
  backup (which holds nothing of ours) is put back byte for byte. Otherwise only
  our handlers and recorded rules are removed (and containers left empty by
  that); a file we created and that is left holding nothing is removed.
* `hooks/hooks.json` (the plugin form) and `settings.example.json` are generated
  from `HOOKS` too (tests keep them in step).

Run as `python -m agent_hooks.install.claude_settings install|uninstall|print …` (install.sh does);
it needs only the standard library, so it also works before dependencies exist.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_hooks import storage

ENTRY_NAMES = ("/hooks/entry.py", "/hooks/entry.pyc")  # the script, or it compiled (install.sh)
CLI_NAME = "agent-hooks"
BACKUP_INFIX = ".agent-hooks-backup-"
PLUGIN_COMMAND = '"${CLAUDE_PLUGIN_ROOT}/hooks/run" '
EDIT_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
# (event, matcher or None for "every", timeout in seconds)
HOOKS: list[tuple[str, str | None, int]] = [
    ("SessionStart", None, 30),
    ("PreToolUse", f"{EDIT_TOOLS}|Bash", 10),
    # a skill's or slash command's inline shell line (2.1.332; 2.1.328 ignores the key
    # with a warning and runs the other hooks)
    ("PreSkillShellCommand", None, 10),
    ("PostToolUse", f"{EDIT_TOOLS}|Read|Bash|Agent|Task", 10),
    # mcp_agent_mail's reservation tools, under any server name (a regex matcher)
    (
        "PostToolUse",
        "^mcp__.+__(file_reservation_paths|release_file_reservations|renew_file_reservations"
        "|macro_start_session|macro_file_reservation_cycle)$",
        10,
    ),
    ("Stop", None, 10),
    ("SubagentStart", None, 10),
    ("SubagentStop", None, 30),
    ("SessionEnd", None, 5),
]


OUR_EVENTS = frozenset({event for event, _, _ in HOOKS} | {"StatusLine"})


def installed_command(python: str, entry: str) -> Callable[[str], str]:
    """Hook commands for an installed copy: absolute interpreter, -IS, absolute entry."""
    return lambda event: f"{shlex.quote(python)} -IS {shlex.quote(entry)} {event}"


def plugin_command(event: str) -> str:
    return PLUGIN_COMMAND + event


def cli_rules(cli: str | None = None) -> list[str]:
    """`permissions.allow` rules for the `agent-hooks` command run through Bash, by
    name and (given the CLI link's absolute path) by that path. `Bash(cmd *)` is the
    form Claude Code 2.1 documents; it also matches `cmd` alone (measured with
    2.1.328, as the legacy `Bash(cmd:*)`)."""
    rules = [f"Bash({CLI_NAME} *)"]
    if cli and cli != CLI_NAME:
        rules.append(f"Bash({cli} *)")
    return rules


def hooks_block(
    command: Callable[[str], str], hooks: Sequence[tuple[str, str | None, int]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Our groups by event: one group (one handler) per entry of `hooks` (default:
    Claude Code's `HOOKS`; Codex reads the same shape)."""
    block: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout in HOOKS if hooks is None else hooks:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command(event), "timeout": timeout}]
        block.setdefault(event, []).append(group)
    return block


def is_ours(handler: object) -> bool:
    """A handler (or status line) whose command runs our entry script for one of
    our events, wherever it was installed (AGENT_HOOKS_HOME may move it)."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    head, _, event = command.rstrip().rpartition(" ")
    return event in OUR_EVENTS and (
        head.rstrip("'\"").endswith(ENTRY_NAMES) or head.startswith(PLUGIN_COMMAND.rstrip())
    )


def _without_ours(groups: list[Any]) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(is_ours(h) for h in group["hooks"]):
            kept.append(group)
    return kept


def status_line(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "padding": 0}


def install(
    settings: dict[str, Any],
    block: dict[str, list[dict[str, Any]]],
    statusline: str | None = None,
    rules: list[str] | tuple[str, ...] = (),
    stale_rules: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """`settings` with exactly our `block` in it (unchanged if it is already there),
    our status line `statusline` when given and the user has none of their own, the
    `rules` in `permissions.allow` (added at its end when missing) and the
    `stale_rules` (ours from an earlier install, no longer wanted) out of it."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    _set_rules(result, rules, [r for r in stale_rules if r not in rules])
    if statusline is not None and ("statusLine" not in result or is_ours(result["statusLine"])):
        result["statusLine"] = status_line(statusline)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" in the settings file is not an object')
    for event, wanted in block.items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise ValueError(f'"hooks.{event}" in the settings file is not a list')
        ours = [
            g
            for g in current
            if isinstance(g, dict) and any(is_ours(h) for h in g.get("hooks", []))
        ]
        if ours == wanted:
            continue
        hooks[event] = _without_ours(current) + wanted
    return result


def _allow_list(settings: dict[str, Any], create: bool) -> list[Any] | None:
    """`permissions.allow` of `settings` (created when `create`); ValueError for odd shapes."""
    if "permissions" not in settings and not create:
        return None
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ValueError('"permissions" in the settings file is not an object')
    if "allow" not in permissions and not create:
        return None
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ValueError('"permissions.allow" in the settings file is not a list')
    return allow


def _set_rules(settings: dict[str, Any], add: Any, remove: Any) -> None:
    """Add the rules `add` that are missing and take out every rule in `remove`;
    `allow` and `permissions` emptied by that are dropped."""
    if not add and not remove:
        return
    allow = _allow_list(settings, create=bool(add))
    if allow is None:
        return
    had = len(allow)
    allow[:] = [r for r in allow if r not in remove]
    allow.extend(r for r in add if r not in allow)
    if not allow and had:
        permissions = settings["permissions"]
        del permissions["allow"]
        if not permissions:
            del settings["permissions"]


def rules_in(settings: dict[str, Any], rules: list[str]) -> list[str]:
    """Those of `rules` that `settings` allows."""
    permissions = settings.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [r for r in rules if isinstance(allow, list) and r in allow]


def uninstall(settings: dict[str, Any], rules: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """`settings` without any agent-hooks handler (events left empty are dropped)
    and without the `permissions.allow` entries in `rules` (the ones install added)."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    try:
        _set_rules(result, (), rules)
    except ValueError:
        pass  # not ours to repair: the rules cannot be there
    if is_ours(result.get("statusLine")):
        del result["statusLine"]
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        if isinstance(hooks[event], list):
            kept = _without_ours(hooks[event])
            if kept != hooks[event]:
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def backups(path: str) -> list[str]:
    """Every `<path>.agent-hooks-backup-*` next to the (resolved) settings file, oldest first."""
    real = os.path.realpath(path)
    directory, name = os.path.split(real)
    try:
        found = [f for f in os.listdir(directory) if f.startswith(name + BACKUP_INFIX)]
    except OSError:
        return []
    return [os.path.join(directory, f) for f in sorted(found, key=_backup_order)]


def latest_backup(path: str) -> str | None:
    """The newest `<path>.agent-hooks-backup-*` next to the (resolved) settings file."""
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


def _backup_order(name: str) -> tuple[str, int]:
    stamp, _, n = name.rpartition(BACKUP_INFIX)[2].partition("-")
    return stamp, int(n) if n.isdigit() else 1


def _has_ours(settings: dict[str, Any]) -> bool:
    return bool(ours_block(settings)) or is_ours(settings.get("statusLine"))


def ours_block(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The groups of `settings` that hold our handlers, by event (what install added)."""
    hooks = settings.get("hooks")
    block: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if isinstance(group, dict) and any(is_ours(h) for h in group.get("hooks", []) or ()):
                block.setdefault(event, []).append(group)
    return block


def restorable_backup(
    path: str, current: dict[str, Any], rules: list[str] | tuple[str, ...] = ()
) -> str | None:
    """The backup to put back on uninstall, if the file is exactly our install (our
    handlers, status line and the `rules` install added) into it."""
    backup = latest_backup(path)
    return backup if backup is not None and reproduces(backup, current, rules) else None


def reproduces(backup: str, current: dict[str, Any], rules: list[str] | tuple[str, ...]) -> bool:
    """Whether `backup` holds nothing of ours and installing our part of `current`
    (handlers, status line, `rules`) into it gives `current` exactly."""
    try:
        saved = read_settings(backup)
    except (ValueError, OSError):
        return False
    statusline = (
        current.get("statusLine", {}).get("command") if is_ours(current.get("statusLine")) else None
    )
    try:
        return (
            not _has_ours(saved)
            and install(saved, ours_block(current), statusline, rules) == current
            and not [r for r in rules_in(saved, list(rules))]
        )
    except ValueError:
        return False


def read_settings(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} does not hold a JSON object; nothing was changed")
    settings: dict[str, Any] = doc
    return settings


def write_settings(
    path: str,
    before: dict[str, Any],
    after: dict[str, Any],
    now: float,
    *,
    remove_if_empty: bool = False,
    backup_first: bool = True,
) -> str | None:
    """Write `after` if it differs from `before`; return the backup's path (if any:
    `backup_first=False` writes none).

    A settings file that is a symlink (dotfiles setups) is written through: its
    target is replaced, the link stays."""
    if after == before:
        return None
    path = os.path.realpath(path)
    if not after and remove_if_empty and os.path.exists(path):
        os.unlink(path)
        return None
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    backup = None
    if os.path.exists(path) and backup_first:
        backup = f"{path}{BACKUP_INFIX}{storage.utc_stamp(now)}"
        n = 1
        while os.path.lexists(backup):
            n += 1
            backup = f"{path}{BACKUP_INFIX}{storage.utc_stamp(now)}-{n}"
        with open(path, "rb") as src, open(backup, "xb") as dst:
            dst.write(src.read())
        os.chmod(backup, os.stat(path).st_mode & 0o777)
    text = json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    storage.write_bytes_atomic(path, text.encode("utf-8"))
    if backup is not None:
        os.chmod(path, os.stat(backup).st_mode & 0o777 | 0o600)  # keep the user's mode
    return backup


# --- the record of what install did to each settings file


def load_record(path: str | None) -> dict[str, Any]:
    """`{"version": 1, "settings": {<resolved settings path>: {"allow": [rules install
    added], "created": bool}}}`; an unreadable record counts as empty (nothing of the
    user's is then removed: only rules a record names are)."""
    empty: dict[str, Any] = {"version": 1, "settings": {}}
    if not path:
        return empty
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        return empty
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), dict):
        return empty
    return doc


def save_record(path: str | None, record: dict[str, Any]) -> None:
    """Write the record atomically; a record left naming nothing is removed."""
    if not path:
        return
    if not record.get("settings"):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    storage.write_bytes_atomic(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))


def _entry(record: dict[str, Any], real: str) -> dict[str, Any]:
    entry = record["settings"].get(real)
    if not isinstance(entry, dict):
        return {}
    allow = entry.get("allow")
    entry["allow"] = [r for r in allow if isinstance(r, str)] if isinstance(allow, list) else []
    return entry


def restore(path: str, backup: str) -> None:
    """Put `backup`'s bytes (and mode) back at the resolved `path`, atomically."""
    real = os.path.realpath(path)
    with open(backup, "rb") as handle:
        storage.write_bytes_atomic(real, handle.read())
    os.chmod(real, os.stat(backup).st_mode & 0o777)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.claude_settings", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=["install", "uninstall", "print", "plugin"])
    parser.add_argument("--settings", help="The settings.json to change.")
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter.")
    parser.add_argument(
        "--entry", help="Absolute path of hooks/entry.py, or of it compiled (entry.pyc)."
    )
    parser.add_argument(
        "--statusline",
        action="store_true",
        help="Also set Claude Code's statusLine (only if none is set).",
    )
    parser.add_argument("--cli", help="Absolute path of the agent-hooks command (its link).")
    parser.add_argument(
        "--record",
        help="The JSON record of what install added (with it, install also allows the "
        "agent-hooks command in permissions.allow, and uninstall takes exactly that out).",
    )
    args = parser.parse_args(argv)
    if args.action == "plugin":
        print(json.dumps({"hooks": hooks_block(plugin_command)}, indent=2))
        return 0
    if args.action in ("install", "print") and not (args.python and args.entry):
        parser.error("--python and --entry are required")
    block = hooks_block(installed_command(args.python, args.entry)) if args.python else {}
    if args.action == "print":
        doc = {"permissions": {"allow": cli_rules(args.cli)}, "hooks": block}
        print(json.dumps(doc, indent=2))
        return 0
    if not args.settings:
        parser.error("--settings is required")
    try:
        if args.action == "install":
            return _install(args, block)
        return _uninstall(args)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {exc}", file=sys.stderr)
        return 1


def _install(args: argparse.Namespace, block: dict[str, list[dict[str, Any]]]) -> int:
    path = args.settings
    real = os.path.realpath(path)
    record = load_record(args.record)
    entry = _entry(record, real)
    recorded: list[str] = entry.get("allow", [])
    before = read_settings(path)
    rules = cli_rules(args.cli) if args.record else []
    present = rules_in(before, rules)
    ours = [r for r in rules if r in recorded or r not in present]
    line = (
        f"{installed_command(args.python, args.entry)('StatusLine')}" if args.statusline else None
    )
    after = install(before, block, line, rules, [r for r in recorded if r not in rules])
    if line is not None and after.get("statusLine") != status_line(line):
        print(f"{path}: a statusLine of your own is set; left as it is")
    # A backup that our earlier install came from, and that our new install into it
    # still reproduces, stays the one to restore: no second copy of the same file.
    kept = None
    if after != before and (_has_ours(before) or rules_in(before, recorded)):
        kept = restorable_backup(path, before, [r for r in recorded if r in present])
        if kept is not None and not reproduces(kept, after, ours):
            kept = None
    created = entry.get("created", not os.path.lexists(real)) is True
    backup = write_settings(path, before, after, time.time(), backup_first=kept is None)
    if backup is not None:
        prune_backups(path, keep=backup)
    if args.record:
        record["settings"] = {  # files gone since (a project deleted) are forgotten
            p: e for p, e in record["settings"].items() if p != real and os.path.lexists(p)
        }
        record["settings"][real] = {"allow": ours, "created": created}
        save_record(args.record, record)
    if after == before:
        print(f"{path}: already up to date; unchanged")
    else:
        print(f"{path}: agent-hooks installed" + (f" (backup: {backup})" if backup else ""))
    return 0


def _uninstall(args: argparse.Namespace) -> int:
    path = args.settings
    real = os.path.realpath(path)
    record = load_record(args.record)
    entry = _entry(record, real)
    record["settings"].pop(real, None)
    rules: list[str] = entry.get("allow", [])
    before = read_settings(path)
    if _has_ours(before) or rules_in(before, rules):
        saved = restorable_backup(path, before, rules)
        if saved is not None:
            restore(path, saved)
            prune_backups(path, keep=None)  # the file is that copy now
            save_record(args.record, record)
            print(f"{path}: agent-hooks removed (restored exactly as before from {saved})")
            return 0
    after = uninstall(before, rules)
    created = entry["created"] if "created" in entry else latest_backup(path) is None
    backup = write_settings(path, before, after, time.time(), remove_if_empty=created is True)
    if backup is not None:
        prune_backups(path, keep=backup)
    save_record(args.record, record)
    if after == before:
        print(f"{path}: already without agent-hooks; unchanged")
    else:
        print(f"{path}: agent-hooks removed" + (f" (backup: {backup})" if backup else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
