"""Claude Code's installer module: its hooks table, its settings files, the permission
rules that let agents run the `agent-hooks` command, and its status line.

Claude Code reads hooks from `$CLAUDE_CONFIG_DIR/settings.json` (else
`~/.claude/settings.json`) and, with `--project DIR`, `DIR/.claude/settings.json`. Our
handler for event `E` runs `hooks_file.hook_command(python, entry, E)` (Claude Code's is
the entry's default client, so no client argument). Which handlers are ours, the merge,
backups and writes are `hooks_file`'s; invariants here:

* The `permissions.allow` rules that let agents run the `agent-hooks` command
  without a prompt (`Bash(agent-hooks *)`, and the same for the CLI link's absolute
  path) are added only when missing. Which ones install added is kept in a record
  (`Setup.rules_record`, install.sh's `<AGENT_HOOKS_HOME>/install-record.json`, by resolved
  settings path, with whether install created the file); uninstall removes exactly
  those, so a rule the user had before stays. Without a record no rule is removed.
* The status line is set only when asked and only when the user has none (or it is
  already ours).
* `hooks/hooks.json` (the plugin form) and `settings.example.json` are generated
  from `HOOKS` too (tests keep them in step).

Run as `python -m agent_hooks.install.claude_settings install|uninstall|print|plugin …`;
it needs only the standard library, so it also works before dependencies exist.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_hooks import storage
from agent_hooks.install import hooks_file

TYPE_CHECKING = False  # the plugin form's SessionStart loads this module: no dataclasses
if TYPE_CHECKING:
    from agent_hooks.install.client_installer import ClientStatus, Outcome, Setup

NAME = "claude"
LABEL = "Claude Code"
PROJECT_DIR = ".claude"
SETTINGS_NAME = "settings.json"
CLI_NAME = "agent-hooks"
PLUGIN_COMMAND = f'"{hooks_file.PLUGIN_RUNNER}" '
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
EVENTS = tuple(dict.fromkeys(event for event, _, _ in HOOKS))

Block = hooks_file.Block
is_ours = hooks_file.is_ours
ours_block = hooks_file.ours_block
read_settings = hooks_file.read_document
backups = hooks_file.backups


def installed_command(python: str, entry: str) -> Callable[[str], str]:
    """Hook commands for an installed copy (`hooks_file.hook_command`)."""
    return lambda event: hooks_file.hook_command(python, entry, event)


def plugin_command(event: str) -> str:
    return PLUGIN_COMMAND + event


def hooks_block(
    command: Callable[[str], str], hooks: Sequence[tuple[str, str | None, int]] | None = None
) -> Block:
    """Our groups by event: one group (one handler) per entry of `hooks` (default: `HOOKS`)."""
    return hooks_file.hooks_block(HOOKS if hooks is None else hooks, command)


def cli_rules(cli: str | None = None) -> list[str]:
    """`permissions.allow` rules for the `agent-hooks` command run through Bash, by
    name and (given the CLI link's absolute path) by that path. `Bash(cmd *)` is the
    form Claude Code 2.1 documents; it also matches `cmd` alone (measured with
    2.1.328, as the legacy `Bash(cmd:*)`)."""
    rules = [f"Bash({CLI_NAME} *)"]
    if cli and cli != CLI_NAME:
        rules.append(f"Bash({cli} *)")
    return rules


def status_line(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "padding": 0}


# --------------------------------------------------------------------------- the document


def install(
    settings: Mapping[str, Any],
    block: Block,
    statusline: str | None = None,
    rules: Sequence[str] = (),
    stale_rules: Sequence[str] = (),
) -> dict[str, Any]:
    """`settings` with exactly our `block` in it (unchanged if it is already there),
    our status line `statusline` when given and the user has none of their own, the
    `rules` in `permissions.allow` (added at its end when missing) and the
    `stale_rules` (ours from an earlier install, no longer wanted) out of it."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    _set_rules(result, rules, [r for r in stale_rules if r not in rules])
    if statusline is not None and ("statusLine" not in result or is_ours(result["statusLine"])):
        result["statusLine"] = status_line(statusline)
    return hooks_file.install(result, block)


def uninstall(settings: Mapping[str, Any], rules: Sequence[str] = ()) -> dict[str, Any]:
    """`settings` without any agent-hooks handler (events left empty are dropped), without
    our status line and without the `permissions.allow` entries in `rules` (the ones
    install added)."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    try:
        _set_rules(result, (), rules)
    except ValueError:
        pass  # not ours to repair: the rules cannot be there
    if is_ours(result.get("statusLine")):
        del result["statusLine"]
    return hooks_file.uninstall(result)


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


def _set_rules(settings: dict[str, Any], add: Sequence[str], remove: Sequence[str]) -> None:
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


def rules_in(settings: Mapping[str, Any], rules: Sequence[str]) -> list[str]:
    """Those of `rules` that `settings` allows."""
    permissions = settings.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [r for r in rules if isinstance(allow, list) and r in allow]


def part(rules: Sequence[str]) -> hooks_file.Part:
    """Our part of a settings file: handlers, our status line, and of `rules` (those
    install added) the ones the document allows."""

    def held(doc: Mapping[str, Any]) -> bool:
        return bool(ours_block(doc)) or is_ours(doc.get("statusLine")) or bool(rules_in(doc, rules))

    def put(into: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
        line = source.get("statusLine")
        statusline = line.get("command") if is_ours(line) and isinstance(line, dict) else None
        return install(into, ours_block(source), statusline, rules_in(source, rules))

    return hooks_file.Part(held=held, put=put, take=lambda doc: uninstall(doc, rules))


# --------------------------------------------------------------------------- the record


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


def project_of(settings: str) -> str | None:
    """The project whose `.claude/settings.json` `settings` is, by its path."""
    directory, name = os.path.split(settings)
    if name == SETTINGS_NAME and os.path.basename(directory) == PROJECT_DIR:
        return os.path.dirname(directory)
    return None


# --------------------------------------------------------------------------- the interface


def home(environ: Mapping[str, str]) -> str:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    base = environ.get("HOME") or os.path.expanduser("~")
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(base, PROJECT_DIR)


def detect(environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
    return "always"


def target(home: str, project: str | None) -> str:
    if project is not None:
        return os.path.join(os.path.realpath(project), PROJECT_DIR, SETTINGS_NAME)
    return os.path.join(home, SETTINGS_NAME)


def install_file(
    path: str,
    python: str,
    entry: str,
    now: float,
    *,
    cli: str | None = None,
    record_path: str | None = None,
    statusline: bool = False,
) -> list[str]:
    """Install into the settings file `path`; the lines to tell a person."""
    real = os.path.realpath(path)
    record = load_record(record_path)
    recorded: list[str] = _entry(record, real).get("allow", [])
    created = _entry(record, real).get("created", not os.path.lexists(real)) is True
    before = read_settings(path)
    rules = cli_rules(cli) if record_path else []
    present = rules_in(before, rules)
    ours = [r for r in rules if r in recorded or r not in present]
    command = installed_command(python, entry)
    line = command("StatusLine") if statusline else None
    block = hooks_block(command)
    stale = [r for r in recorded if r not in rules]
    change = hooks_file.plan_install(
        path, lambda doc: install(doc, block, line, rules, stale), part([*recorded, *ours])
    )
    hooks_file.commit(change, now)
    lines = []
    if line is not None and change.after.get("statusLine") != status_line(line):
        lines.append(f"{path}: a statusLine of your own is set; left as it is")
    if record_path:
        record["settings"] = {  # files gone since (a project deleted) are forgotten
            p: e for p, e in record["settings"].items() if p != real and os.path.lexists(p)
        }
        record["settings"][real] = {"allow": ours, "created": created}
        save_record(record_path, record)
    lines.append(hooks_file.describe(change, LABEL, installing=True))
    return lines


def uninstall_file(path: str, now: float, *, record_path: str | None = None) -> list[str]:
    """Take agent-hooks out of the settings file `path`; the lines to tell a person."""
    real = os.path.realpath(path)
    record = load_record(record_path)
    entry = _entry(record, real)
    record["settings"].pop(real, None)
    created = entry["created"] is True if "created" in entry else None
    change = hooks_file.plan_uninstall(path, part(entry.get("allow", [])), created=created)
    hooks_file.commit(change, now)
    save_record(record_path, record)
    return [hooks_file.describe(change, LABEL, installing=False)]


def add(setup: Setup) -> Outcome:
    from agent_hooks.install.client_installer import Outcome

    path = target(setup.home, setup.project)
    lines = install_file(
        path,
        setup.python,
        setup.entry,
        setup.now,
        cli=setup.cli,
        record_path=setup.rules_record,
        statusline=setup.statusline,
    )
    return Outcome(path, lines)


def remove(setup: Setup) -> Outcome:
    from agent_hooks.install.client_installer import Outcome

    path = target(setup.home, setup.project)
    return Outcome(path, uninstall_file(path, setup.now, record_path=setup.rules_record))


def commands(home: str, project: str | None) -> list[list[str]]:
    return hooks_file.our_argvs(read_settings(target(home, project)))


def check(home: str, project: str | None, python: str | None, entry: str | None) -> ClientStatus:
    """Whether every event of this release has a handler of ours (PreSkillShellCommand
    came later) and, given the copy, whether they are that copy's."""
    from agent_hooks.install.client_installer import ClientStatus

    path = target(home, project)
    doc = read_settings(path)
    block = ours_block(doc)
    problems = []
    again = "./install.sh" + (f" --project {project}" if project else "")
    missing = [e for e in EVENTS if e not in block]
    if missing:
        problems.append(f"{path}: no agent-hooks handler for {', '.join(missing)} (fix: {again})")
    elif python and entry and block != hooks_block(installed_command(python, entry)):
        problems.append(f"{path}: the hooks run another copy of agent-hooks (fix: {again})")
    lines = [f"{LABEL} hooks in {path}: " + ("ok" if not problems else "PROBLEM")]
    return ClientStatus(NAME, project, path, not problems, lines, problems)


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.claude_settings",
        description=(__doc__ or "").splitlines()[0],
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
    if args.action == "print":
        block = hooks_block(installed_command(args.python, args.entry))
        print(json.dumps({"permissions": {"allow": cli_rules(args.cli)}, "hooks": block}, indent=2))
        return 0
    if not args.settings:
        parser.error("--settings is required")
    try:
        if args.action == "install":
            lines = install_file(
                args.settings,
                args.python,
                args.entry,
                time.time(),
                cli=args.cli,
                record_path=args.record,
                statusline=args.statusline,
            )
        else:
            lines = uninstall_file(args.settings, time.time(), record_path=args.record)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
