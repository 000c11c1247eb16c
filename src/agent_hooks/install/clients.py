"""Which clients install.sh puts agent-hooks' hooks into, and doing it for Codex and Gemini
CLI (Claude Code's settings are `claude_settings`', which install.sh runs itself).

* `choose`: the clients asked for (`--clients claude,codex,gemini`, any subset), or else
  Claude Code plus each other client found on this machine — its command on PATH, or its
  own directory (`$CODEX_HOME` or `~/.codex`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`).
  Printed: the list on the first line, then each client with why it was chosen or left out.
* `install`: Codex (`codex_config`: hooks.json and the trust hashes in config.toml;
  reinstalling rewrites the hashes) and Gemini CLI (`gemini_settings`), user level, or with
  `--project DIR` the project's files — then what the user must do so each client trusts
  DIR is printed, never done on their behalf. Each install is recorded in
  `<AGENT_HOOKS_HOME>/clients.json`.
* `uninstall`: takes agent-hooks out of every client it went into for that scope (the
  record; at user level also a client's default files that still hold our handlers),
  exactly our handlers and trust entries, nothing else.
* `status`: per recorded install, whether the client will run our hooks (a stale Codex
  hash, a handler Gemini disables, an untrusted project): what `agent-hooks doctor` says.

Record invariants: `{"installs": [{"client", "project" (absolute, or null for the user
level), "home" (the client's directory), "created" (the directories that install made:
the client's home, a project's `.codex/` or `.gemini/`)}]}`; an entry is added when an
install succeeded and removed when its uninstall did, which also removes the directories
it made once nothing but what install left is in them (an empty `config.toml`, our
backups) and no other recorded install keeps its files there (that one inherits them);
a record left empty is deleted. A record
that cannot be read counts as empty (uninstall then still finds the user level's).

Standard library only: install.sh runs it from the clone, before any dependency exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import storage
from agent_hooks.install import claude_settings, codex_config, gemini_settings

CLIENTS = ("claude", "codex", "gemini")
LABELS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}
RECORD_NAME = "clients.json"


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
    """Each other client's own directory, where its user-level files live."""
    home = environ.get("HOME") or os.path.expanduser("~")
    return {
        "codex": environ.get("CODEX_HOME") or os.path.join(home, ".codex"),
        "gemini": os.path.join(environ.get("GEMINI_CLI_HOME") or home, ".gemini"),
    }


def detect(
    environ: Mapping[str, str], which: Callable[..., str | None] = shutil.which
) -> dict[str, str | None]:
    """For Codex and Gemini CLI: why it counts as present on this machine, or None."""
    found: dict[str, str | None] = {}
    path = environ.get("PATH", os.defpath)
    for client, directory in homes(environ).items():
        command = which(client, path=path)
        if command:
            found[client] = f"`{client}` is on PATH ({command})"
        elif os.path.isdir(directory):
            found[client] = f"{directory} exists"
        else:
            found[client] = None
    return found


def choose(asked: str | None, environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(the clients to install into, a line per client saying why)."""
    if asked is not None:
        chosen = parse_clients(asked)
        return chosen, [
            f"{LABELS[c]}: {'asked for' if c in chosen else 'not asked for'} (--clients)"
            for c in CLIENTS
        ]
    chosen, lines = ["claude"], ["Claude Code: always"]
    for client, why in detect(environ).items():
        if why is None:
            where = homes(environ)[client]
            lines.append(
                f"{LABELS[client]}: not found (no `{client}` on PATH, no {where}); "
                f"`--clients claude,{client}` installs it anyway"
            )
        else:
            chosen.append(client)
            lines.append(f"{LABELS[client]}: found ({why})")
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
        and i.get("client") in ("codex", "gemini")
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


# --------------------------------------------------------------------------- install, uninstall


def _project(project: str | None) -> str | None:
    return os.path.realpath(project) if project else None


def install(
    clients: Sequence[str],
    python: str,
    entry: str,
    *,
    project: str | None,
    record: str | None,
    environ: Mapping[str, str],
    trust_project: bool = False,
) -> int:
    """Install into each of `clients` other than Claude Code (`trust_project`: also mark
    the project trusted in each, as the user asked); 1 when any failed."""
    project = _project(project)
    installs = load_record(record)
    failed = 0
    for client in clients:
        if client == "claude":
            continue
        home = homes(environ)[client]
        own = os.path.join(project, f".{client}") if project else home
        missing = [d for d in dict.fromkeys((home, own)) if not os.path.lexists(d)]
        scope = ["--project", project] if project else []
        if project and trust_project:
            scope.append("--trust-project")
        print(f"{LABELS[client]}:")
        if client == "codex":
            code = codex_config.main(
                ["install", "--codex-home", home, "--python", python, "--entry", entry, *scope]
            )
        else:
            code = gemini_settings.main(
                ["install", "--gemini-home", home, "--python", python, "--entry", entry, *scope]
            )
        if code != 0:
            failed += 1
            continue
        earlier = [i for i in installs if _same(i, client, project)]
        created = [d for i in earlier for d in i.get("created") or () if isinstance(d, str)]
        installs = [i for i in installs if not _same(i, client, project)]
        created += [d for d in missing if d not in created and os.path.isdir(d)]
        installs.append({"client": client, "project": project, "home": home, "created": created})
    save_record(record, installs)
    return 1 if failed else 0


def _holds_ours(client: str, home: str, project: str | None) -> bool:
    """Whether the client's file for that scope holds one of our handlers."""
    try:
        if client == "codex":
            doc = codex_config.read_hooks(codex_config.hooks_path(home, project))
            return any(p.ours for p in codex_config.positions(doc))
        settings = (
            os.path.join(project, ".gemini", gemini_settings.SETTINGS_NAME)
            if project
            else os.path.join(home, gemini_settings.SETTINGS_NAME)
        )
        if not os.path.lexists(settings):
            return False
        return bool(gemini_settings.ours_block(claude_settings.read_settings(settings)))
    except (ValueError, OSError):
        return False


def uninstall(*, project: str | None, record: str | None, environ: Mapping[str, str]) -> int:
    """Take agent-hooks out of every client it went into at this scope; 1 when any failed."""
    project = _project(project)
    installs = load_record(record)
    targets = [(i["client"], i["home"]) for i in installs if i.get("project") == project]
    for client, home in homes(environ).items():
        if (client, home) not in targets and _holds_ours(client, home, project):
            targets.append((client, home))
    failed = 0
    for client, home in targets:
        scope = ["--project", project] if project else []
        if project and not os.path.isdir(project):
            continue
        print(f"{LABELS[client]}:")
        if client == "codex":
            code = codex_config.main(["uninstall", "--codex-home", home, *scope])
        else:
            code = gemini_settings.main(["uninstall", "--gemini-home", home, *scope])
        if code != 0:
            failed += 1
            continue
        done = [i for i in installs if _same(i, client, project) and i.get("home") == home]
        installs = [i for i in installs if i not in done]
        for made in sorted({d for i in done for d in _created(i)}, reverse=True):
            keeper = next((i for i in installs if made == i["home"] or made in _created(i)), None)
            if keeper is not None:  # another install still keeps its files there
                keeper["created"] = [*_created(keeper), made]
            elif _remove_made(made):
                print(f"removed {made}/ (install made it; nothing else is in it)")
    save_record(record, installs)
    return 1 if failed else 0


def _created(entry: Mapping[str, Any]) -> list[str]:
    made = entry.get("created")
    return [d for d in made if isinstance(d, str)] if isinstance(made, list) else []


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
        if blank or codex_config.BACKUP_INFIX in name:
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


@dataclass
class ClientStatus:
    """One install of agent-hooks into a client: whether the client will run it."""

    client: str
    project: str | None
    where: str  # the file holding our handlers
    ok: bool
    lines: list[str] = field(default_factory=list)  # what to tell a person
    problems: list[str] = field(default_factory=list)  # one line each, when not ok

    def as_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "project": self.project,
            "where": self.where,
            "ok": self.ok,
            "problems": self.problems,
        }


def status(
    installs: list[dict[str, Any]], *, python: str | None = None, entry: str | None = None
) -> list[ClientStatus]:
    """The status of each recorded install (see the module's invariants)."""
    found = []
    for item in installs:
        client, home, project = item["client"], item["home"], item.get("project")
        try:
            if client == "codex":
                found.append(_codex_status(home, project))
            else:
                found.append(_gemini_status(home, project, python, entry))
        except (ValueError, OSError) as exc:
            line = " ".join(str(exc).split())
            found.append(ClientStatus(client, project, home, False, [line], [line]))
    return found


def _codex_status(home: str, project: str | None) -> ClientStatus:
    if project is not None and not os.path.isdir(project):
        line = f"{project}: the project is gone (`./install.sh --uninstall` forgets it)"
        return ClientStatus("codex", project, project, False, [line], [line])
    report = codex_config.trust_status(home, project=project)
    again = "./install.sh --clients codex" + (f" --project {project}" if project else "")
    problems = [
        f"Codex's {h.event} hook is {h.status}: Codex silently skips it (install again: {again})"
        for h in report.handlers
        if h.status != "trusted"
    ]
    if report.project_root is not None and not report.project_trusted:
        problems.append(
            f"Codex runs no project hook in {report.project_root}: it is not trusted (add "
            f'[projects."{report.project_root}"] trust_level = "trusted" to '
            f"{report.config_path}, or run `codex exec --trust` there once)"
        )
    return ClientStatus(
        "codex",
        project,
        report.hooks_path,
        report.ok,
        list(codex_config.status_lines(report)),
        problems,
    )


def _gemini_status(
    home: str, project: str | None, python: str | None, entry: str | None
) -> ClientStatus:
    user = os.path.join(home, gemini_settings.SETTINGS_NAME)
    settings = os.path.join(project, ".gemini", gemini_settings.SETTINGS_NAME) if project else user
    defaults, system = gemini_settings.system_settings_paths()
    found = gemini_settings.status(
        settings,
        scopes=[defaults, user, *([settings] if project else []), system],
        python=python,
        entry=entry,
        project=project,
        trusted_folders=os.path.join(home, gemini_settings.TRUSTED_FOLDERS_NAME)
        if project
        else None,
        user_settings=user,
    )
    problems = list(found.problems)
    if not found.installed:
        problems.insert(0, f"{settings}: agent-hooks' Gemini CLI hooks are missing: install again")
    elif found.current is False:
        problems.insert(0, f"{settings}: the hooks run another copy of agent-hooks: install again")
    return ClientStatus("gemini", project, settings, found.ok, found.lines(), problems)


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


def claude_status(files: list[str]) -> list[ClientStatus]:
    """Each Claude Code settings file holding our hooks: can they run, is every event of
    this release registered (PreSkillShellCommand came later)?"""
    from agent_hooks.install import install_check

    found = []
    for path in files:
        installed = install_check.find_installed([path])
        if not installed.files and not installed.broken:
            continue
        problems = [f"{line}: install again" for line in installed.broken]
        events = dict.fromkeys(e for e, _, _ in claude_settings.HOOKS)
        missing = [e for e in events if not installed.covers(e)]
        if missing and not installed.broken:
            problems.append(
                f"{path}: no agent-hooks handler for {', '.join(missing)}: install again"
            )
        lines = [f"Claude Code hooks in {path}: " + ("ok" if not problems else "PROBLEM")]
        found.append(ClientStatus("claude", None, path, not problems, lines, problems))
    return found


def check(environ: Mapping[str, str]) -> list[ClientStatus]:
    """Every install of agent-hooks this HOME has — Claude Code's settings files (the
    user's, and those install.sh's record names), and Codex's and Gemini CLI's (the
    clients record, and the user level's files holding our handlers) — with whether its
    client will run it."""
    from agent_hooks import identity

    data = data_dir(environ)
    user = os.path.realpath(os.path.join(identity.state_dir(environ), "settings.json"))
    recorded = list(
        claude_settings.load_record(os.path.join(data, "install-record.json"))["settings"]
    )
    found = claude_status(list(dict.fromkeys([user, *recorded])))
    installs = load_record(os.path.join(data, RECORD_NAME))
    for client, home in homes(environ).items():
        listed = any(i["client"] == client and i["project"] is None for i in installs)
        if not listed and _holds_ours(client, home, None):
            installs.append({"client": client, "project": None, "home": home})
    return found + status(installs)


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 done, 1 a client's install or uninstall failed (its own line says why),
    2 a bad command line (one line), 3 status found a client that will not run our hooks."""
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.clients", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("action", choices=["choose", "install", "uninstall", "status"])
    parser.add_argument("--clients", help="Comma-separated: claude, codex, gemini.")
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter (install).")
    parser.add_argument("--entry", help="Absolute path of hooks/entry.py[c] (install).")
    parser.add_argument("--project", metavar="DIR", help="The project's files, not the user's.")
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="With install --project: also mark DIR trusted in Codex and Gemini CLI.",
    )
    parser.add_argument("--record", help=f"The record of installs ({RECORD_NAME}).")
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
            clients = parse_clients(args.clients or "codex,gemini")
            return install(
                clients,
                args.python,
                args.entry,
                project=args.project,
                record=args.record,
                environ=environ,
                trust_project=args.trust_project,
            )
        if args.action == "uninstall":
            return uninstall(project=args.project, record=args.record, environ=environ)
        failing = 0
        for found in status(load_record(args.record), python=args.python, entry=args.entry):
            for line in found.lines:
                print(line)
            failing += not found.ok
        return 3 if failing else 0
    except ValueError as exc:
        print(f"install.sh: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
