"""Qwen Code's installer module (0.24.4): its hooks table, its settings files, its folder
trust, and what keeps it from running a hook (`disableAllHooks`).

Qwen Code reads Claude Code-shaped hooks from `~/.qwen/settings.json` (user; `$QWEN_HOME`
moves the directory) and `<project>/.qwen/settings.json` (project), runs one of our
handlers through bash with the payload on stdin, and reads Claude Code's deny
(`reference/OTHER-CLIENTS.md`). Our handler for event `E` runs
`hooks_file.hook_command(python, entry, "qwen", E)`; its `timeout` is in seconds. A tool
matcher that is a `|`-separated list is compared entry by entry, exactly (Qwen Code's
hooks documentation), so `edit` does not also catch `notebook_edit`. Which handlers are
ours, the merge, backups and writes are `hooks_file`'s; invariants here:

* `disableAllHooks` is never written: when it turns hooks off that is reported, never
  overridden.
* Folder trust is the user's decision, as for Gemini CLI (Qwen Code keeps the same
  `trustedFolders.json`, but with folder trust off unless `security.folderTrust.enabled`):
  a project whose folder is not trusted runs no project hooks; only `--trust-project` adds
  the folder, and uninstall never takes trust away.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from agent_hooks.install import client_installer, gemini_settings, hooks_file
from agent_hooks.install.client_installer import ClientStatus, Outcome, Setup

NAME = "qwen"
LABEL = "Qwen Code"
PROJECT_DIR = ".qwen"
SETTINGS_NAME = "settings.json"
TRUSTED_FOLDERS_NAME = "trustedFolders.json"
EDIT_TOOLS = "write_file|edit|notebook_edit"
SHELL_TOOL = "run_shell_command"
# (event, matcher or None for "every", timeout in seconds)
HOOKS: list[tuple[str, str | None, int]] = [
    ("SessionStart", None, 30),
    ("PreToolUse", f"{EDIT_TOOLS}|{SHELL_TOOL}", 10),
    ("PostToolUse", f"{EDIT_TOOLS}|{SHELL_TOOL}|read_file|agent", 10),
    ("Stop", None, 10),
    ("SubagentStart", None, 10),
    ("SubagentStop", None, 30),
    ("SessionEnd", None, 5),
]
EVENTS = tuple(dict.fromkeys(event for event, _, _ in HOOKS))


def hooks_block(python: str, entry: str) -> hooks_file.Block:
    return hooks_file.hooks_block(
        HOOKS, lambda event: hooks_file.hook_command(python, entry, NAME, event)
    )


def home(environ: Mapping[str, str]) -> str:
    """`$QWEN_HOME`, else `~/.qwen`."""
    base = environ.get("HOME") or os.path.expanduser("~")
    return environ.get("QWEN_HOME") or os.path.join(base, PROJECT_DIR)


def detect(environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
    return client_installer.found_on_machine(NAME, home(environ), environ, which)


def target(home: str, project: str | None) -> str:
    if project is not None:
        return os.path.join(os.path.realpath(project), PROJECT_DIR, SETTINGS_NAME)
    return os.path.join(home, SETTINGS_NAME)


def _problems(home: str, project: str | None) -> list[str]:
    """Why Qwen Code will not run the hooks of that scope: `disableAllHooks`, an untrusted
    project."""
    problems = []
    user = os.path.join(home, SETTINGS_NAME)
    for path in dict.fromkeys([user, target(home, project)]):
        try:
            doc = hooks_file.read_document(path)
        except (ValueError, OSError) as exc:
            problems.append(f"cannot check {path} ({str(exc).splitlines()[0]})")
            continue
        if doc.get("disableAllHooks") is True:
            problems.append(
                f"hooks disabled in settings: disableAllHooks is true in {path}, so {LABEL} runs "
                "no hook at all (fix: remove it, or set it to false)"
            )
    if project is not None:
        try:
            user_settings: dict[str, Any] = hooks_file.read_document(user)
            problem = gemini_settings.trust_problem(
                project,
                os.path.join(home, TRUSTED_FOLDERS_NAME),
                user_settings,
                label=LABEL,
                command=NAME,
                trust_by_default=False,
            )
        except (ValueError, OSError) as exc:
            problem = f"cannot check whether {project} is trusted: {str(exc).splitlines()[0]}"
        if problem:
            problems.append(problem)
    return problems


def add(setup: Setup) -> Outcome:
    path = target(setup.home, setup.project)
    trusted_folders = os.path.join(setup.home, TRUSTED_FOLDERS_NAME)
    if setup.trust_project:
        hooks_file.read_document(trusted_folders)  # refused before anything changes
    block = hooks_block(setup.python, setup.entry)
    change = hooks_file.commit(
        hooks_file.plan_install(path, lambda doc: hooks_file.install(doc, block)), setup.now
    )
    lines = [hooks_file.describe(change, LABEL, installing=True)]
    if (
        setup.trust_project
        and setup.project
        and gemini_settings.trust(setup.project, trusted_folders, setup.now)
    ):
        lines.append(f"{trusted_folders}: {setup.project} trusted ({gemini_settings.TRUST_FOLDER})")
    lines += [f"note: {problem}" for problem in _problems(setup.home, setup.project)]
    return Outcome(path, lines)


def remove(setup: Setup) -> Outcome:
    path = target(setup.home, setup.project)
    change = hooks_file.commit(hooks_file.plan_uninstall(path), setup.now)
    return Outcome(path, [hooks_file.describe(change, LABEL, installing=False)])


def commands(home: str, project: str | None) -> list[list[str]]:
    return hooks_file.our_argvs(hooks_file.read_document(target(home, project)))


def check(home: str, project: str | None, python: str | None, entry: str | None) -> ClientStatus:
    path = target(home, project)
    block = hooks_file.ours_block(hooks_file.read_document(path))
    again = f"./install.sh --clients {NAME}" + (f" --project {project}" if project else "")
    problems = []
    missing = [e for e in EVENTS if e not in block]
    if missing:
        problems.append(f"{path}: no agent-hooks handler for {', '.join(missing)} (fix: {again})")
    elif python and entry and block != hooks_block(python, entry):
        problems.append(f"{path}: the hooks run another copy of agent-hooks (fix: {again})")
    problems += _problems(home, project)
    lines = [f"{LABEL} hooks in {path}: " + ("ok" if not problems else "PROBLEM")]
    return ClientStatus(NAME, project, path, not problems, lines, problems)
