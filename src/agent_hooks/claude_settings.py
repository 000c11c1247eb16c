"""The hooks agent-hooks adds to a Claude Code settings file, and the merge that
adds or removes them while keeping everything else.

Invariants:

* Only handlers whose command runs agent-hooks' entry script
  (`…/hooks/entry.py <one of our events>`) are ever added, changed or removed; every other
  setting and hook of the user stays exactly as it was. The status line is set
  only when asked and only when the user has none (or it is already ours).
* `install` is idempotent: on a file that already holds the current block it
  returns the document unchanged, so a second run writes nothing.
* A file is backed up before it is changed, then replaced atomically (keeping its
  mode); a file that is not a JSON object is refused, never overwritten.
* Uninstall restores the user's file exactly when nothing else changed since
  the install: if the file is what installing into the latest backup gives, that
  backup (which holds nothing of ours) is put back byte for byte. Otherwise only
  our handlers are removed (and containers left empty by that); a file we created
  and that is left holding nothing is removed.
* `hooks/hooks.json` (the plugin form) and `settings.example.json` are generated
  from `HOOKS` too (tests keep them in step).

Run as `python -m agent_hooks.claude_settings install|uninstall|print …` (install.sh does);
it needs only the standard library, so it also works before dependencies exist.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any

from agent_hooks import storage

ENTRY_NAME = "/hooks/entry.py"
PLUGIN_COMMAND = '"${CLAUDE_PLUGIN_ROOT}/hooks/run" '
EDIT_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
# (event, matcher or None for "every", timeout in seconds)
HOOKS: list[tuple[str, str | None, int]] = [
    ("SessionStart", None, 30),
    ("PreToolUse", f"{EDIT_TOOLS}|Bash", 10),
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


def hooks_block(command: Callable[[str], str]) -> dict[str, list[dict[str, Any]]]:
    block: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout in HOOKS:
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
        head.rstrip("'\"").endswith(ENTRY_NAME) or head.startswith(PLUGIN_COMMAND.rstrip())
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
    settings: dict[str, Any], block: dict[str, list[dict[str, Any]]], statusline: str | None = None
) -> dict[str, Any]:
    """`settings` with exactly our `block` in it (unchanged if it is already there),
    and our status line `statusline` when given and the user has none of their own."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
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


def uninstall(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without any agent-hooks handler (events left empty are dropped)."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
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


def latest_backup(path: str) -> str | None:
    """The newest `<path>.agent-hooks-backup-*` next to the (resolved) settings file."""
    real = os.path.realpath(path)
    directory, name = os.path.split(real)
    try:
        found = [f for f in os.listdir(directory) if f.startswith(name + ".agent-hooks-backup-")]
    except OSError:
        return None
    return os.path.join(directory, max(found, key=_backup_order)) if found else None


def _backup_order(name: str) -> tuple[str, int]:
    stamp, _, n = name.rpartition(".agent-hooks-backup-")[2].partition("-")
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


def restorable_backup(path: str, current: dict[str, Any]) -> str | None:
    """The backup to put back on uninstall, if the file is exactly our install into it."""
    block = ours_block(current)
    backup = latest_backup(path)
    if backup is None:
        return None
    try:
        saved = read_settings(backup)
    except (ValueError, OSError):
        return None
    statusline = (
        current.get("statusLine", {}).get("command") if is_ours(current.get("statusLine")) else None
    )
    if _has_ours(saved) or install(saved, block, statusline) != current:
        return None
    return backup


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
) -> str | None:
    """Write `after` if it differs from `before`; return the backup's path (if any).

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
    if os.path.exists(path):
        backup = f"{path}.agent-hooks-backup-{storage.utc_stamp(now)}"
        n = 1
        while os.path.lexists(backup):
            n += 1
            backup = f"{path}.agent-hooks-backup-{storage.utc_stamp(now)}-{n}"
        with open(path, "rb") as src, open(backup, "xb") as dst:
            dst.write(src.read())
        os.chmod(backup, os.stat(path).st_mode & 0o777)
    text = json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    storage.write_bytes_atomic(path, text.encode("utf-8"))
    if backup is not None:
        os.chmod(path, os.stat(backup).st_mode & 0o777 | 0o600)  # keep the user's mode
    return backup


def restore(path: str, backup: str) -> None:
    """Put `backup`'s bytes (and mode) back at the resolved `path`, atomically."""
    real = os.path.realpath(path)
    with open(backup, "rb") as handle:
        storage.write_bytes_atomic(real, handle.read())
    os.chmod(real, os.stat(backup).st_mode & 0o777)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.claude_settings", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=["install", "uninstall", "print", "plugin"])
    parser.add_argument("--settings", help="The settings.json to change.")
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter.")
    parser.add_argument("--entry", help="Absolute path of hooks/entry.py.")
    parser.add_argument(
        "--statusline",
        action="store_true",
        help="Also set Claude Code's statusLine (only if none is set).",
    )
    args = parser.parse_args(argv)
    if args.action == "plugin":
        print(json.dumps({"hooks": hooks_block(plugin_command)}, indent=2))
        return 0
    if args.action in ("install", "print") and not (args.python and args.entry):
        parser.error("--python and --entry are required")
    block = hooks_block(installed_command(args.python, args.entry)) if args.python else {}
    if args.action == "print":
        print(json.dumps({"hooks": block}, indent=2))
        return 0
    if not args.settings:
        parser.error("--settings is required")
    try:
        before = read_settings(args.settings)
        if args.action == "uninstall" and _has_ours(before):
            saved = restorable_backup(args.settings, before)
            if saved is not None:
                restore(args.settings, saved)
                print(f"{args.settings}: agent-hooks removed (restored exactly as before: {saved})")
                return 0
        line = (
            f"{installed_command(args.python, args.entry)('StatusLine')}"
            if args.statusline
            else None
        )
        after = install(before, block, line) if args.action == "install" else uninstall(before)
        if line is not None and after.get("statusLine") != status_line(line):
            print(f"{args.settings}: a statusLine of your own is set; left as it is")
        created_by_us = args.action == "uninstall" and latest_backup(args.settings) is None
        backup = write_settings(
            args.settings, before, after, time.time(), remove_if_empty=created_by_us
        )
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {exc}", file=sys.stderr)
        return 1
    if after == before:
        print(
            f"{args.settings}: already {'up to date' if args.action == 'install' else 'without agent-hooks'}; unchanged"
        )
    else:
        print(
            f"{args.settings}: agent-hooks {'installed' if args.action == 'install' else 'removed'}"
            + (f" (backup: {backup})" if backup else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
