"""The clients agent-hooks installs into, in one table, and what install.sh, purge and
`agent-hooks doctor` do with them.

`INSTALLERS` lists one installer module per client (Claude Code, Codex, Gemini CLI, Qwen
Code, opencode), each held to `client_installer.ClientInstaller`; nothing here asks which
client it is. Run by install.sh as `python -m agent_hooks.install.clients ACTION`:

* `choose`: the clients asked for (`--clients claude,codex,…`, any subset), or else Claude
  Code plus each other client found on this machine (its command on PATH, or its own
  directory). Printed: the list on the first line, then each client with why it was
  chosen or left out.
* `install`: first every chosen client's hook command is run as the client will run it
  (the installed copy must answer an empty payload with nothing); then each client's
  files, user level or with `--project DIR` the project's (and what the user must do so
  the client trusts DIR is printed; `--trust-project` does it). Each install is recorded.
* `uninstall`: with `--project DIR`, takes agent-hooks out of every client it went into
  for DIR; without, out of every install it recorded — the user level's and every
  project's — so no hook is left running an interpreter or entry script that uninstall
  is about to delete. Exit 1 (and the record keeps it) for any it could not take out:
  install.sh then keeps the installed copy and says which.
* `status`: per install, whether the client will run our hooks (`check`, which doctor
  prints).

Record invariants (`<AGENT_HOOKS_HOME>/clients.json`): `{"installs": [{"client", "project"
(absolute, or null for the user level), "home" (the client's directory), "created" (the
directories that install made)}]}`; an entry is added when an install succeeded and
removed when its uninstall did, which also removes the directories it made once nothing
but what install left is in them (an empty `config.toml`, our backups) and no other
recorded install keeps its files there (that one inherits them); a record left empty is
deleted. A directory install made that still holds something else when its install is
taken out (agents' state) is handed to install.sh's `created-dirs`, which removes it once
empty. A record that cannot be read counts as empty (uninstall then still finds the
user level's files holding our hooks). Claude Code's settings files named by its own
record (`install-record.json`, of releases before this one too) count as installs.

Standard library only: install.sh runs it from the clone, before any dependency exists
(Codex's `config.toml` edit loads tomlkit, which the installed venv has).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_hooks import storage
from agent_hooks.install import (
    claude_settings,
    codex_config,
    gemini_settings,
    hooks_file,
    opencode_plugin,
    qwen_settings,
)
from agent_hooks.install.client_installer import ClientInstaller, ClientStatus, Setup

# The table: every client, in the order install goes through them.
INSTALLERS: dict[str, ClientInstaller] = {
    module.NAME: module
    for module in (claude_settings, codex_config, gemini_settings, qwen_settings, opencode_plugin)
}
CLIENTS = tuple(INSTALLERS)
LABELS = {name: module.LABEL for name, module in INSTALLERS.items()}
RECORD_NAME = "clients.json"
SETTINGS_RECORD_NAME = "install-record.json"  # Claude Code's: the permission rules it added
CREATED_DIRS_NAME = "created-dirs"  # install.sh's: directories it made, removed once empty

Install = tuple[str, str, str | None]  # (client, its home, project or None)


# --------------------------------------------------------------------------- choosing


def parse_clients(text: str) -> list[str]:
    """`claude,codex` -> the clients in CLIENTS' order; ValueError naming an unknown one."""
    asked = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [name for name in asked if name not in CLIENTS]
    if unknown or not asked:
        raise ValueError(
            f"--clients takes a comma-separated list of {', '.join(CLIENTS)}"
            + (f", not {', '.join(map(repr, unknown))}" if unknown else "")
        )
    return [name for name in CLIENTS if name in asked]


def homes(environ: Mapping[str, str]) -> dict[str, str]:
    """Each client's own directory, where its user-level files live."""
    return {name: module.home(environ) for name, module in INSTALLERS.items()}


def detect(
    environ: Mapping[str, str], which: Callable[..., str | None] = shutil.which
) -> dict[str, str | None]:
    """For each client: why it counts as present on this machine, or None."""
    return {name: module.detect(environ, which) for name, module in INSTALLERS.items()}


def choose(
    asked: str | None, environ: Mapping[str, str], which: Callable[..., str | None] = shutil.which
) -> tuple[list[str], list[str]]:
    """(the clients to install into, a line per client saying why)."""
    if asked is not None:
        chosen = parse_clients(asked)
        return chosen, [
            f"{LABELS[c]}: {'asked for' if c in chosen else 'not asked for'} (--clients)"
            for c in CLIENTS
        ]
    chosen, lines = [], []
    for client, why in detect(environ, which).items():
        if why is None:
            module = INSTALLERS[client]
            lines.append(
                f"{LABELS[client]}: not found (no `{client}` on PATH, no "
                f"{module.home(environ)}); `--clients claude,{client}` installs it anyway"
            )
        else:
            chosen.append(client)
            lines.append(
                f"{LABELS[client]}: " + ("always" if why == "always" else f"found ({why})")
            )
    return chosen, lines


# --------------------------------------------------------------------------- the record


def load_record(path: str | None) -> list[dict[str, Any]]:
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        return []
    installs = doc.get("installs") if isinstance(doc, dict) else None
    return [
        i
        for i in (installs if isinstance(installs, list) else [])
        if isinstance(i, dict)
        and i.get("client") in INSTALLERS
        and isinstance(i.get("home"), str)
        and (i.get("project") is None or isinstance(i.get("project"), str))
    ]


def save_record(path: str | None, installs: list[dict[str, Any]]) -> None:
    if not path:
        return
    if not installs:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    data = (json.dumps({"installs": installs}, indent=2) + "\n").encode("utf-8")
    storage.write_bytes_atomic(path, data)


def _same(entry: Mapping[str, Any], client: str, project: str | None) -> bool:
    return entry.get("client") == client and entry.get("project") == project


def _created(entry: Mapping[str, Any]) -> list[str]:
    made = entry.get("created")
    return [d for d in made if isinstance(d, str)] if isinstance(made, list) else []


def _missing_dirs(directory: str) -> list[str]:
    """`directory` and its parents up to the first that exists: what creating it makes."""
    missing = []
    while directory and not os.path.lexists(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return missing


def _holds_ours(client: str, home: str, project: str | None) -> bool:
    """Whether the client's file for that scope holds one of our hooks."""
    try:
        return bool(INSTALLERS[client].commands(home, project))
    except (ValueError, OSError):
        return False


def _claude_recorded(settings_record: str | None, environ: Mapping[str, str]) -> list[Install]:
    """Claude Code's installs its own record names (releases before this one recorded
    Claude Code's settings files there only)."""
    home = claude_settings.home(environ)
    user = os.path.realpath(claude_settings.target(home, None))
    found: list[Install] = []
    for path in claude_settings.load_record(settings_record)["settings"]:
        project = None if os.path.realpath(path) == user else claude_settings.project_of(path)
        if project is not None or os.path.realpath(path) == user:
            found.append(("claude", home, project))
    return found


def installs(
    record: str | None,
    environ: Mapping[str, str],
    *,
    settings_record: str | None = None,
    project: str | None = None,
    everywhere: bool = False,
) -> list[Install]:
    """The installs of that scope (`project`, or the user level; `everywhere`: every scope
    recorded): the record's, Claude Code's record's, and each client's files of that scope
    (the user level's when `everywhere`) that hold our hooks without a record of it."""
    found: list[Install] = [(i["client"], i["home"], i.get("project")) for i in load_record(record)]
    found += _claude_recorded(settings_record, environ)
    if not everywhere:
        found = [i for i in found if i[2] == project]
    for client, home in homes(environ).items():
        scope = None if everywhere else project
        if (client, home, scope) not in found and _holds_ours(client, home, scope):
            found.append((client, home, scope))
    return list(dict.fromkeys(found))


# --------------------------------------------------------------------------- install, uninstall


def _project(project: str | None) -> str | None:
    return os.path.realpath(project) if project else None


def check_commands(clients: Sequence[str], python: str, entry: str) -> list[str]:
    """Run each client's hook command as the client will (the shell form through `sh -c`,
    opencode's argv as its plugin does) on an empty payload, from `/`: one line per client
    whose hook does not start cleanly (exit 0, nothing printed). A client this copy's
    hooks do not know yet (`agent_hooks.hooks.CLIENTS`) is skipped."""
    from agent_hooks.hooks import CLIENTS as RUNTIME

    problems = []
    for client in clients:
        module = RUNTIME.get(client)
        if module is None:
            print(
                f"note: this copy's hooks do not handle {LABELS[client]} yet: its hooks are "
                "installed and let every call through"
            )
            continue
        events = importlib.import_module(f"agent_hooks.clients.{module}").EVENTS
        event = next(
            (e for e, adapter in events.items() if adapter == "pre_tool_use"), next(iter(events))
        )
        args = [event] if client == claude_settings.NAME else [client, event]
        if client == opencode_plugin.NAME:
            command = hooks_file.hook_argv(python, entry, *args)
        else:
            command = ["/bin/sh", "-c", hooks_file.hook_command(python, entry, *args)]
        try:
            done = subprocess.run(
                command, input=b"{}", capture_output=True, cwd="/", timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"the installed {LABELS[client]} hook does not start: {exc}")
            continue
        said = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
        if done.returncode != 0 or said:
            problems.append(
                f"the installed {LABELS[client]} hook does not start (exit {done.returncode}): "
                + " ".join(said.split())
            )
    return problems


def install(
    clients: Sequence[str],
    python: str,
    entry: str,
    *,
    project: str | None,
    record: str | None,
    environ: Mapping[str, str],
    trust_project: bool = False,
    cli: str | None = None,
    settings_record: str | None = None,
    statusline: bool = False,
    now: float | None = None,
) -> int:
    """Install into each of `clients` (`trust_project`: also mark the project trusted in
    each, as the user asked); 1 when any failed (its line says why)."""
    project = _project(project)
    if project is not None and not os.path.isdir(project):
        raise ValueError(f"--project {project}: not a directory")
    entries = load_record(record)
    failed = 0
    for client in clients:
        module = INSTALLERS[client]
        home = module.home(environ)
        setup = Setup(
            home=home,
            project=project,
            now=time.time() if now is None else now,
            python=python,
            entry=entry,
            trust_project=trust_project and project is not None,
            cli=cli,
            rules_record=settings_record,
            statusline=statusline,
        )
        target = module.target(home, project)
        missing = _missing_dirs(os.path.dirname(target)) + _missing_dirs(home)
        print(f"{LABELS[client]}:")
        try:
            outcome = module.add(setup)
        except (ValueError, OSError) as exc:
            print(f"  could not install: {' '.join(str(exc).split())}", file=sys.stderr)
            failed += 1
            continue
        for line in outcome.lines:
            print(f"  {line}")
        earlier = [i for i in entries if _same(i, client, project)]
        created = [d for i in earlier for d in _created(i)]
        entries = [i for i in entries if not _same(i, client, project)]
        created += [d for d in dict.fromkeys(missing) if d not in created and os.path.isdir(d)]
        entries.append({"client": client, "project": project, "home": home, "created": created})
    save_record(record, entries)
    return 1 if failed else 0


def uninstall(
    *,
    project: str | None,
    record: str | None,
    environ: Mapping[str, str],
    settings_record: str | None = None,
    everywhere: bool = False,
    now: float | None = None,
) -> int:
    """Take agent-hooks out of every client it went into at this scope (`everywhere`: at
    every scope recorded); 1 when any failed (the record keeps it)."""
    project = _project(project)
    entries = load_record(record)
    failed = 0
    kept: list[str] = []
    targets = installs(
        record, environ, settings_record=settings_record, project=project, everywhere=everywhere
    )
    for client, home, scope in targets:
        module = INSTALLERS[client]
        where = f"{LABELS[client]}" + (f" in {scope}" if scope else "")
        if scope is not None and not os.path.isdir(scope):
            print(f"{where}: the project is gone; forgotten")
            failed_here = False
        else:
            setup = Setup(
                home=home,
                project=scope,
                now=time.time() if now is None else now,
                rules_record=settings_record,
            )
            print(f"{where}:")
            try:
                outcome = module.remove(setup)
                failed_here = False
                for line in outcome.lines:
                    print(f"  {line}")
            except (ValueError, OSError) as exc:
                print(f"  could not uninstall: {' '.join(str(exc).split())}", file=sys.stderr)
                failed_here = True
        if failed_here:
            failed += 1
            continue
        if client == claude_settings.NAME:
            _forget_settings(settings_record, module.target(home, scope))
        done = [i for i in entries if _same(i, client, scope) and i.get("home") == home]
        entries = [i for i in entries if i not in done]
        for made in sorted({d for i in done for d in _created(i)}, reverse=True):
            keeper = next((i for i in entries if made == i["home"] or made in _created(i)), None)
            if keeper is not None:  # another install still keeps its files there
                keeper["created"] = [*_created(keeper), made]
            elif _remove_made(made):
                print(f"  removed {made}/ (install made it; nothing else is in it)")
            elif os.path.isdir(made):
                kept.append(made)
    save_record(record, entries)
    _remember_created(record, kept)
    return 1 if failed else 0


def _remember_created(record: str | None, directories: list[str]) -> None:
    """Hand directories install made that still hold something (agents' state) to
    install.sh's `<AGENT_HOOKS_HOME>/created-dirs` (one a line, sorted), which removes them
    once empty — at the end of this uninstall, or of a later `--purge`."""
    if not record or not directories:
        return
    path = os.path.join(os.path.dirname(record), CREATED_DIRS_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            known = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        known = []
    lines = sorted({d for d in [*known, *directories] if d})
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    storage.write_bytes_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"), mode=0o644)


def _forget_settings(settings_record: str | None, path: str) -> None:
    """Claude Code's record without `path` (a project gone, or uninstalled)."""
    saved = claude_settings.load_record(settings_record)
    real = os.path.realpath(path)
    if saved["settings"].pop(real, None) is not None:
        claude_settings.save_record(settings_record, saved)


def _remove_made(directory: str) -> bool:
    """Remove a directory install made, once only what install left there remains: an
    empty `config.toml` (Codex's, written for the trust entries) and backups of our
    own naming. Anything else keeps it (and is kept)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for name in names:
        path = os.path.join(directory, name)
        blank = name == "config.toml" and os.path.isfile(path) and not _read(path).strip()
        if blank or hooks_file.BACKUP_INFIX in name:
            try:
                os.unlink(path)
            except OSError:
                return False
    try:
        os.rmdir(directory)
    except OSError:
        return False
    return True


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, ValueError):
        return "?"


# --------------------------------------------------------------------------- status


def leftover_problems(client: str, home: str, project: str | None) -> list[str]:
    """One line per hook of ours in that scope that points at nothing (its interpreter or
    entry script gone): it runs and lets everything through, guarding nothing."""
    try:
        found = INSTALLERS[client].commands(home, project)
    except (ValueError, OSError):
        return []
    fix = "./install.sh" + (f" --clients {client} --project {project}" if project else "")
    undo = "./install.sh --uninstall" + (f" --project {project}" if project else "")
    problems = []
    for argv in found:
        gone = hooks_file.missing_part(argv)
        if gone is not None:
            target = INSTALLERS[client].target(home, project)
            problems.append(
                f"{target}: a hook points at nothing ({gone}), so it guards nothing "
                f"(fix: {fix}, or {undo})"
            )
            break
    return problems


def status(
    entries: Sequence[Install], *, python: str | None = None, entry: str | None = None
) -> list[ClientStatus]:
    """The status of each install: the client's own check and hooks that point at nothing."""
    found = []
    for client, home, project in entries:
        module = INSTALLERS[client]
        try:
            if project is not None and not os.path.isdir(project):
                line = f"{project}: the project is gone (fix: ./install.sh --uninstall)"
                found.append(ClientStatus(client, project, project, False, [line], [line]))
                continue
            result = module.check(home, project, python, entry)
        except (ValueError, OSError) as exc:
            line = " ".join(str(exc).split())
            found.append(ClientStatus(client, project, home, False, [line], [line]))
            continue
        leftovers = leftover_problems(client, home, project)
        if leftovers:
            result.problems[:0] = leftovers
            result.ok = False
        found.append(result)
    return found


def data_dir(environ: Mapping[str, str]) -> str:
    """install.sh's `AGENT_HOOKS_HOME`: the variable, else the installed copy this runs
    from (its venv is `<data>/venv`), else `${XDG_DATA_HOME:-~/.local/share}/agent-hooks`."""
    configured = environ.get("AGENT_HOOKS_HOME")
    if configured:
        return configured
    venv = os.path.realpath(sys.prefix)
    if os.path.basename(venv) == "venv" and os.path.isdir(os.path.join(venv, "..", "hooks")):
        return os.path.dirname(venv)
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(
        environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "agent-hooks"
    )


def check(environ: Mapping[str, str], projects: Sequence[str] = ()) -> list[ClientStatus]:
    """Every install of agent-hooks this HOME has — recorded, and each client's user-level
    files holding our hooks — and each client's files in `projects` that hold our hooks
    (a settings file committed with another user's paths), with whether its client will
    run it."""
    data = data_dir(environ)
    found = installs(
        os.path.join(data, RECORD_NAME),
        environ,
        settings_record=os.path.join(data, SETTINGS_RECORD_NAME),
        everywhere=True,
    )
    for project in map(os.path.realpath, projects):
        for client, home in homes(environ).items():
            if (client, home, project) not in found and _holds_ours(client, home, project):
                found.append((client, home, project))
    return status(found)


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 done, 1 a client's install or uninstall failed (its own line says why),
    2 a bad command line (one line), 3 status found a client that will not run our hooks."""
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.clients", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("action", choices=["choose", "install", "uninstall", "status"])
    parser.add_argument("--clients", help=f"Comma-separated: {', '.join(CLIENTS)}.")
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter (install).")
    parser.add_argument("--entry", help="Absolute path of hooks/entry.py[c] (install).")
    parser.add_argument("--project", metavar="DIR", help="The project's files, not the user's.")
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="With install --project: also mark DIR trusted in the clients that ask for it.",
    )
    parser.add_argument("--record", help=f"The record of installs ({RECORD_NAME}).")
    parser.add_argument(
        "--settings-record", help=f"Claude Code's record of its rules ({SETTINGS_RECORD_NAME})."
    )
    parser.add_argument("--cli", help="Absolute path of the agent-hooks command (its link).")
    parser.add_argument(
        "--statusline", action="store_true", help="Also set Claude Code's status line."
    )
    args = parser.parse_args(argv)
    environ = os.environ
    try:
        if args.action == "choose":  # the list on the first line, then why, one client a line
            chosen, lines = choose(args.clients, environ)
            print(" ".join(chosen))
            for line in lines:
                print(f"  {line}")
            return 0
        if args.action == "install":
            if not (args.python and args.entry):
                parser.error("install needs --python and --entry")
            clients = parse_clients(args.clients or ",".join(CLIENTS))
            problems = check_commands(clients, args.python, args.entry)
            if problems:
                for line in problems:
                    print(f"install.sh: {line}", file=sys.stderr)
                return 1
            return install(
                clients,
                args.python,
                args.entry,
                project=args.project,
                record=args.record,
                environ=environ,
                trust_project=args.trust_project,
                cli=args.cli,
                settings_record=args.settings_record,
                statusline=args.statusline,
            )
        if args.action == "uninstall":
            return uninstall(
                project=args.project,
                record=args.record,
                environ=environ,
                settings_record=args.settings_record,
                everywhere=args.project is None,
            )
        failing = 0
        found = installs(
            args.record, environ, settings_record=args.settings_record, everywhere=True
        )
        for item in status(found, python=args.python, entry=args.entry):
            for line in item.lines:
                print(line)
            failing += not item.ok
        return 3 if failing else 0
    except ValueError as exc:
        print(f"install.sh: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
