"""opencode's installer module (1.18.33): a plugin file, since opencode has no command hooks.

opencode loads every `*.js` in `~/.config/opencode/plugin/` (`$XDG_CONFIG_HOME` moves it)
and in `<project>/.opencode/plugin/` (`reference/opencode-1.18.33/PROTOCOL.md` §2) into its
own process; the plugin runs the same entry as every client, asynchronously. Installing is
writing `agent-hooks.js` there: the template `hooks/opencode/agent-hooks.js` of this
release with its one placeholder `__AGENT_HOOKS_COMMAND__` replaced by the JSON array of
the hook's argv prefix (`hooks_file.hook_argv(python, entry, "opencode")`; the plugin
appends the event). `opencode --pure` runs no plugin, so no hook either.

Invariants:

* Ours is the file named `agent-hooks.js` whose first line is `MARKER`. A file of that
  name that is not ours is never overwritten or removed (install refuses in one line).
* Install is idempotent (the same text writes nothing) and atomic; uninstall removes
  exactly our file. Directories install made are in `install.clients`' record.
* The plugin spawns the interpreter itself (no shell), so when agent-hooks is gone the
  spawn fails or the interpreter exits without an answer; the plugin lets the call through
  in both cases (its contract), and uninstall removes the file from every recorded project.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping

from agent_hooks.install import client_installer, hooks_file
from agent_hooks.install.client_installer import ClientStatus, Outcome, Setup

NAME = "opencode"
LABEL = "opencode"
PROJECT_DIR = ".opencode"
PLUGIN_DIR = "plugin"
FILE_NAME = "agent-hooks.js"
MARKER = "// agent-hooks plugin (installed by agent-hooks; do not edit)"
PLACEHOLDER = "__AGENT_HOOKS_COMMAND__"
FILE_MODE = 0o644  # code opencode loads, not a secret
# the template in a clone (install.sh runs this module from one), else beside the entry
CLONE_TEMPLATE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "hooks", "opencode", FILE_NAME
)


def template_path(entry: str) -> str:
    """The template of this release: the clone's, else the installed copy's (beside the
    entry script: `<data>/hooks/opencode/agent-hooks.js`)."""
    beside = os.path.join(os.path.dirname(entry), "opencode", FILE_NAME)
    return os.path.normpath(CLONE_TEMPLATE) if os.path.isfile(CLONE_TEMPLATE) else beside


def render(template: str, argv: list[str]) -> str:
    """`template` with its placeholder replaced by `argv` as a JSON array; ValueError when
    it is not agent-hooks' template (no marker first, or not exactly one placeholder)."""
    if template.split("\n", 1)[0].rstrip() != MARKER:
        raise ValueError(f"the opencode plugin template does not start with {MARKER!r}")
    if template.count(PLACEHOLDER) != 1:
        raise ValueError(f"the opencode plugin template must hold {PLACEHOLDER} exactly once")
    return template.replace(PLACEHOLDER, json.dumps(argv, ensure_ascii=False))


def is_ours(path: str) -> bool:
    """Whether the file at `path` is agent-hooks' plugin (its first line is `MARKER`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except OSError:
        return False
    return first.rstrip() == MARKER


def installed_argv(text: str) -> list[str] | None:
    """The hook's argv prefix an installed plugin holds: the JSON array of strings in it
    whose third item is agent-hooks' entry script."""
    start = text.find('["')
    while start >= 0:
        end = text.find("]", start)
        while end >= 0:
            try:
                value = json.loads(text[start : end + 1])
            except ValueError:
                end = text.find("]", end + 1)
                continue
            if (
                isinstance(value, list)
                and len(value) >= 3
                and all(isinstance(word, str) for word in value)
                and value[2].endswith(hooks_file.ENTRY_NAMES)
            ):
                return value
            break
        start = text.find('["', start + 2)
    return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; left as it is") from None


# --------------------------------------------------------------------------- the interface


def home(environ: Mapping[str, str]) -> str:
    """`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`."""
    base = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(base, ".config"), NAME)


def detect(environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
    return client_installer.found_on_machine(NAME, home(environ), environ, which)


def target(home: str, project: str | None) -> str:
    if project is not None:
        return os.path.join(os.path.realpath(project), PROJECT_DIR, PLUGIN_DIR, FILE_NAME)
    return os.path.join(home, PLUGIN_DIR, FILE_NAME)


def add(setup: Setup) -> Outcome:
    path = target(setup.home, setup.project)
    with open(template_path(setup.entry), encoding="utf-8") as handle:
        text = render(handle.read(), hooks_file.hook_argv(setup.python, setup.entry, NAME))
    if os.path.lexists(path) and not is_ours(path):
        raise ValueError(
            f"{path} exists and is not agent-hooks' plugin; left as it is (move it away and "
            "install again)"
        )
    if _read(path) == text:
        return Outcome(path, [f"{path}: already up to date; unchanged"])
    hooks_file.write_text(path, text, setup.now, backup_first=False, new_mode=FILE_MODE)
    lines = [f"{path}: agent-hooks installed for {LABEL} (a plugin; `opencode --pure` runs none)"]
    return Outcome(path, lines)


def remove(setup: Setup) -> Outcome:
    path = target(setup.home, setup.project)
    if not os.path.lexists(path):
        return Outcome(path, [f"{path}: already without agent-hooks; unchanged"])
    if not is_ours(path):
        return Outcome(path, [f"{path}: not agent-hooks' plugin; left as it is"])
    os.unlink(path)
    return Outcome(path, [f"{path}: agent-hooks removed"])


def commands(home: str, project: str | None) -> list[list[str]]:
    path = target(home, project)
    if not is_ours(path):
        return []
    argv = installed_argv(_read(path))
    return [argv] if argv is not None else []


def check(home: str, project: str | None, python: str | None, entry: str | None) -> ClientStatus:
    path = target(home, project)
    again = f"./install.sh --clients {NAME}" + (f" --project {project}" if project else "")
    problems = []
    if not is_ours(path):
        problems.append(f"{path}: agent-hooks' {LABEL} plugin is missing (fix: {again})")
    elif installed_argv(_read(path)) is None:
        problems.append(f"{path}: the plugin holds no hook command (fix: {again})")
    elif (
        python
        and entry
        and installed_argv(_read(path)) != hooks_file.hook_argv(python, entry, NAME)
    ):
        problems.append(f"{path}: the plugin runs another copy of agent-hooks (fix: {again})")
    lines = [
        f"{LABEL} plugin {path}: " + ("ok" if not problems else "PROBLEM"),
        "  (`opencode --pure` runs no plugin: agent-hooks does not guard such a run)",
    ]
    return ClientStatus(NAME, project, path, not problems, lines, problems)
