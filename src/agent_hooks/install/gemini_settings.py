"""Gemini CLI's installer module: its hooks table, its settings files, its folder trust,
and what keeps it from running a hook (`hooksConfig`).

Gemini CLI (0.61.0, `reference/gemini-cli-0.61.0/PROTOCOL.md`) reads hooks from
`~/.gemini/settings.json` (user; `$GEMINI_CLI_HOME/.gemini` moves it) and
`<project>/.gemini/settings.json` (project), runs both lists, and runs one of our handlers
as `bash -c COMMAND` with the payload on stdin. Our handler for event `E` runs
`hooks_file.hook_command(python, entry, "gemini", E)`, is named `agent-hooks-E`, and has its
`timeout` in MILLISECONDS (Gemini's unit; Claude Code's is seconds). Tool events match
only the tools the gate reads, by an anchored regex: Gemini's matchers are unanchored
JavaScript regexes (`write` alone would also match `write_todos`). Which handlers are ours,
the merge, backups and writes are `hooks_file`'s; invariants here:

* `hooksConfig` is never written: when it disables hooks (all of them, or ours by name)
  that is reported (`status`, and a note at install), never overridden.
* Folder trust is the user's decision: a project whose folder Gemini does not trust
  runs no project hooks (and `gemini -p` there exits 55). Installing into a project
  reports what the user must do; only `--trust-project` adds the folder to
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_hooks.install import client_installer, hooks_file
from agent_hooks.install.client_installer import ClientStatus, Outcome, Setup

NAME = CLIENT = "gemini"
LABEL = "Gemini CLI"
PROJECT_DIR = ".gemini"
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

Block = hooks_file.Block
is_ours = hooks_file.is_ours
ours_block = hooks_file.ours_block
install = hooks_file.install
uninstall = hooks_file.uninstall


# --------------------------------------------------------------------------- the block


def hook_command(python: str, entry: str, event: str) -> str:
    """The command of our handler for `event` (`hooks_file.hook_command`)."""
    return hooks_file.hook_command(python, entry, CLIENT, event)


def hook_name(event: str) -> str:
    """The handler's `name`: what Gemini shows, and what `hooksConfig.disabled` lists."""
    return NAME_PREFIX + event


def hooks_block(python: str, entry: str) -> Block:
    """Our groups, by event, for the copy at `python` + `entry`."""
    return hooks_file.hooks_block(
        HOOKS, lambda event: hook_command(python, entry, event), lambda e: {"name": hook_name(e)}
    )


def _handlers(group: object) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


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


def folder_trust_enabled(user_settings: dict[str, Any], default: bool = True) -> bool:
    """`security.folderTrust.enabled` of the user's settings (Gemini CLI's default: on;
    Qwen Code's: off)."""
    security = user_settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    value = trust.get("enabled") if isinstance(trust, dict) else None
    return value if isinstance(value, bool) else default


def trust_problem(
    project: str,
    trusted_folders: str,
    user_settings: dict[str, Any],
    *,
    label: str = LABEL,
    command: str = CLIENT,
    trust_by_default: bool = True,
) -> str | None:
    """What the user must do so the client (Gemini CLI, or Qwen Code: the same rules and
    file) runs `project`'s hooks, or None when it will."""
    if not folder_trust_enabled(user_settings, trust_by_default):
        return None
    real = os.path.realpath(project)
    level = trust_of(project, trusted_folders)
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return None
    why = "is marked DO_NOT_TRUST" if level == "DO_NOT_TRUST" else "is not trusted"
    return (
        f"{real} {why} by {label}, so it runs no project hooks there: start `{command}` in it "
        f'once and trust the folder, or add "{real}": "{TRUST_FOLDER}" to {trusted_folders} '
        f"(fix: ./install.sh --clients {command} --project {real} --trust-project)"
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
        return hooks_file.read_document(path)
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
    current = hooks_file.read_document(settings_path)
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


def trust(project: str, trusted_folders: str, now: float) -> bool:
    """Mark `project` TRUST_FOLDER in `trusted_folders` (created 0600 when missing, every
    other rule kept, replaced atomically keeping its mode); False when it already was.
    ValueError for a file that is not a JSON object."""
    real = os.path.realpath(project)
    rules = hooks_file.read_document(trusted_folders)
    if rules.get(real) == TRUST_FOLDER:
        return False
    rules[real] = TRUST_FOLDER
    hooks_file.write_text(
        trusted_folders, json.dumps(rules, indent=2) + "\n", now, backup_first=False
    )
    return True


# --------------------------------------------------------------------------- paths


def default_gemini_home() -> str:
    """`$GEMINI_CLI_HOME/.gemini` (the variable moves Gemini's home) or `~/.gemini`."""
    return home(os.environ)


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


def _paths(gemini_home: str | None, project: str | None) -> _Paths:
    base = os.path.abspath(gemini_home or default_gemini_home())
    user = os.path.join(base, SETTINGS_NAME)
    trusted = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") if not gemini_home else None
    project = os.path.abspath(project) if project else None
    settings = os.path.join(project, PROJECT_DIR, SETTINGS_NAME) if project else user
    defaults, system = system_settings_paths()
    scopes = [defaults, user, *([settings] if project else []), system]
    return _Paths(
        settings, user, trusted or os.path.join(base, TRUSTED_FOLDERS_NAME), project, scopes
    )


# --------------------------------------------------------------------------- the interface


def home(environ: Mapping[str, str]) -> str:
    base = environ.get("GEMINI_CLI_HOME") or environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(base, PROJECT_DIR)


def detect(environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
    return client_installer.found_on_machine(CLIENT, home(environ), environ, which)


def target(home: str, project: str | None) -> str:
    if project is not None:
        return os.path.join(os.path.realpath(project), PROJECT_DIR, SETTINGS_NAME)
    return os.path.join(home, SETTINGS_NAME)


def add(setup: Setup) -> Outcome:
    paths = _paths(setup.home, setup.project)
    block = hooks_block(setup.python, setup.entry)
    if setup.trust_project:
        hooks_file.read_document(paths.trusted_folders)  # refused before anything changes
    change = hooks_file.plan_install(paths.settings, lambda doc: install(doc, block))
    hooks_file.commit(change, setup.now)
    lines = [hooks_file.describe(change, LABEL, installing=True)]
    if (
        setup.trust_project
        and paths.project
        and trust(paths.project, paths.trusted_folders, setup.now)
    ):
        lines.append(
            f"{paths.trusted_folders}: {os.path.realpath(paths.project)} trusted ({TRUST_FOLDER})"
        )
    found = status(
        paths.settings,
        scopes=paths.scopes,
        project=paths.project,
        trusted_folders=paths.trusted_folders if paths.project else None,
        user_settings=paths.user,
    )
    lines += [f"note: {problem}" for problem in found.problems]
    return Outcome(paths.settings, lines)


def remove(setup: Setup) -> Outcome:
    path = _paths(setup.home, setup.project).settings
    change = hooks_file.commit(hooks_file.plan_uninstall(path), setup.now)
    return Outcome(path, [hooks_file.describe(change, LABEL, installing=False)])


def commands(home: str, project: str | None) -> list[list[str]]:
    return hooks_file.our_argvs(hooks_file.read_document(target(home, project)))


def check(home: str, project: str | None, python: str | None, entry: str | None) -> ClientStatus:
    paths = _paths(home, project)
    found = status(
        paths.settings,
        scopes=paths.scopes,
        python=python,
        entry=entry,
        project=paths.project,
        trusted_folders=paths.trusted_folders if project else None,
        user_settings=paths.user,
    )
    again = "./install.sh" + (f" --project {project}" if project else "")
    problems = list(found.problems)
    if not found.installed:
        problems.insert(
            0, f"{paths.settings}: agent-hooks' {LABEL} hooks are missing (fix: {again})"
        )
    elif found.current is False:
        problems.insert(
            0, f"{paths.settings}: the hooks run another copy of agent-hooks (fix: {again})"
        )
    return ClientStatus(NAME, project, paths.settings, found.ok, found.lines(), problems)


# --------------------------------------------------------------------------- command line


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
    paths = _paths(args.gemini_home, args.project)
    setup = Setup(
        home=os.path.dirname(paths.user),
        project=paths.project,
        now=time.time(),
        python=args.python or "",
        entry=args.entry or "",
        trust_project=args.trust,
    )
    try:
        if args.action == "status":
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
        outcome = add(setup) if args.action == "install" else remove(setup)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_ERROR
    for line in outcome.lines:
        print(line)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
