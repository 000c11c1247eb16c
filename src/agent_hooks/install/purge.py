"""`./install.sh --uninstall --purge`: everything agent-hooks left on the machine,
listed first, then removed (docs/adr/0010-installer-and-plugin.md).

install.sh runs `python -I -m agent_hooks.install.purge plan|run|kept` from the clone:

* `plan` prints every thing `--purge` will remove — every client's file it installed
  into (`install.clients.installs`: the records, and at user level any client's file
  still holding our hooks), the CLI link, the installed copy, recorded git guards,
  ledgers, agents' state, the log, agent-hooks' data, the backups install made — and
  what stays, then asks for
  confirmation (exit 0: go on; 2: not confirmed, nothing was changed). Without a
  terminal and without `--yes` it refuses in one line.
* `run` takes agent-hooks out of every client and project it went into
  (`install.clients.uninstall`) and removes the guards, ledgers and state files,
  printing each as it goes; install.sh then removes the CLI link and the installed
  copy itself, and the data directory whole.
* `kept` (a plain `--uninstall`) lists what stays and how `--purge` removes it.

Invariants:

* Only files of agent-hooks' own naming are removed from the state directory
  (`CLAUDE_CONFIG_DIR`, else `~/.claude`): `state-<valid name>.json`,
  `agent-state.json`, their `.lock`, `.corrupt-*` and temp files, `agent-hooks.log*`,
  the `agent-hooks/` directory and `settings.json.agent-hooks-backup-*`. Nothing
  else of Claude Code's or the user's is touched.
* Inside repositories only what a record names is touched: a guard listed in
  `guards.json` is removed only while its file still is a guard (its chained hook
  renamed back); a ledger (`<git common dir>/agent-hooks/`) only when agent-hooks
  knows it (`known_ledgers`: every ledger ever written from this HOME, and those
  of the repositories agents' state and the guards name).
* Work sessions and workspaces inside projects are the user's work: listed, never
  removed. Kept versions of held work (`<ledger>/kept/`) go with their ledger, and
  a plain uninstall removes them too (`kept`): no hook would sweep them any more.

Standard library only: it must run when the installed copy is gone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from agent_hooks import identity, repository, storage
from agent_hooks.git_guard import guard_hooks, guard_record
from agent_hooks.install import clients, hooks_file
from agent_hooks.ledger import known_ledgers
from agent_hooks.wording import plural
from agent_hooks.work_sessions import location


@dataclass(frozen=True)
class Item:
    """One thing to remove: `path`, and what it is, for a person."""

    path: str
    what: str
    is_dir: bool = False


def _state_file_base(name: str) -> str | None:
    """The state file `name` belongs to (itself, its lock, corrupt copy, temp file or
    aside file)."""
    for candidate in (
        name,
        name[:-5] if name.endswith(".lock") else "",
        name.partition(".corrupt-")[0] if ".corrupt-" in name else "",
        storage.temp_target(name) or "",
        storage.aside_target(name) or "",
    ):
        if candidate and identity.agent_from_state_file("", candidate) is not None:
            return candidate
    return None


def state_items(state_dir: str) -> list[Item]:
    """agent-hooks' files directly in the state directory, and its data directory."""
    try:
        names = sorted(os.listdir(state_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    items = []
    for name in names:
        path = os.path.join(state_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            if name == identity.DATA_SUBDIR:
                items.append(
                    Item(
                        path,
                        "agent-hooks' data: archived trails, briefings, reservation indexes, "
                        "records",
                        is_dir=True,
                    )
                )
            continue
        base = _state_file_base(name)
        if base is not None:
            items.append(Item(path, "agent state" if base == name else f"belongs to {base}"))
        elif name == identity.LOG_FILE or name.startswith(identity.LOG_FILE + "."):
            items.append(Item(path, "the hook log"))
    return items


def client_items(installs: list[clients.Install]) -> list[Item]:
    """Every install of agent-hooks into a client: the file it is taken out of."""
    items = []
    for client, home, project in installs:
        module = clients.INSTALLERS[client]
        where = f" (project {project})" if project else ""
        items.append(
            Item(
                module.target(home, project), f"agent-hooks' {module.LABEL} hooks taken out{where}"
            )
        )
    return items


def backup_items(installs: list[clients.Install], environ: Mapping[str, str]) -> list[Item]:
    """The backups agent-hooks made of the clients' files: beside every file installed into,
    in each client's own directory (Codex's `config.toml`), and the user level's (a plain
    uninstall may leave the newest)."""
    scopes = [*installs, *((c, h, None) for c, h in clients.homes(environ).items())]
    directories = {
        d
        for client, home, project in scopes
        for d in (os.path.dirname(clients.INSTALLERS[client].target(home, project)), home)
    }
    found: set[str] = set()
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        found.update(os.path.join(directory, n) for n in names if hooks_file.BACKUP_INFIX in n)
    return [Item(b, "a settings backup agent-hooks made") for b in sorted(found)]


def guard_items(state_dir: str) -> list[Item]:
    items = []
    for entry in guard_record.load(state_dir):
        hook = entry["hook"]
        if guard_hooks.read_meta(hook) is None:
            continue  # removed (or replaced) since: not ours any more
        chained = guard_hooks.chained_path(hook)
        back = f"; {chained} is put back in its place" if os.path.lexists(chained) else ""
        items.append(Item(hook, f"the git guard of {entry.get('repo', '?')}{back}"))
    return items


def ledger_items(found: dict[str, str]) -> list[Item]:
    """Every ledger agent-hooks knows of (`known_ledgers.ledgers`: directory -> work tree)."""
    return [
        Item(directory, f"the reservation ledger of {root}, with its kept versions", is_dir=True)
        for directory, root in sorted(found.items())
    ]


def kept_store_items(found: dict[str, str]) -> list[Item]:
    """The kept versions of held work in every ledger agent-hooks knows: a plain
    uninstall removes them too, as nothing sweeps them once the hooks are gone."""
    from agent_hooks.kept import kept_store

    return [
        Item(kept_store.store_dir(directory), f"kept versions of held work in {root}", True)
        for directory, root in sorted(found.items())
        if os.path.isdir(kept_store.store_dir(directory))
    ]


def project_work(repos: list[str]) -> list[str]:
    """Work sessions and workspaces in known projects: the user's, never removed."""
    return [
        os.path.join(repo, sub)
        for repo in repos
        for sub in (location.DEFAULT_SUBDIR, repository.WORKSPACES_DIR)
        if os.path.isdir(os.path.join(repo, sub))
    ]


class Plan:
    def __init__(self, args: argparse.Namespace) -> None:
        self.state_dir = args.state_dir
        self.record = args.record
        self.clients_record = getattr(args, "clients_record", None)
        self.installs = clients.installs(
            self.clients_record, os.environ, settings_record=self.record, everywhere=True
        )
        self.settings = client_items(self.installs)
        self.guards = guard_items(self.state_dir)
        known = known_ledgers.ledgers(self.state_dir)
        self.ledgers = ledger_items(known)
        self.repos = sorted(set(known.values()))
        self.state = state_items(self.state_dir)
        self.backups = backup_items(self.installs, os.environ)
        self.installed: list[Item] = []
        link = getattr(args, "link", None)
        if link and os.path.islink(link):
            self.installed.append(
                Item(link, f"the agent-hooks command, a link to {os.readlink(link)}")
            )
        data = getattr(args, "data", None)
        if data and os.path.isdir(data):
            self.installed.append(
                Item(data, "the installed copy: venv, hooks/entry.py, records", is_dir=True)
            )

    def removable(self) -> list[Item]:
        return [*self.guards, *self.ledgers, *self.state, *self.backups]

    def print(self) -> None:
        everything = [*self.settings, *self.installed, *self.removable()]
        if not everything:
            print("Nothing of agent-hooks is left to remove.")
        else:
            print("./install.sh --uninstall --purge removes:")
            for item in everything:
                print(f"  {item.path}{'/' if item.is_dir else ''}: {item.what}")
        kept = project_work(self.repos)
        if kept:
            print("Kept (your work; remove it yourself when you no longer need it):")
            for path in kept:
                print(f"  {path}/")


def plan(args: argparse.Namespace) -> int:
    Plan(args).print()
    if args.yes:
        return 0
    if not sys.stdin.isatty():
        print(
            "install.sh: --purge asks before removing anything; run it in a terminal or add "
            "--yes (nothing was removed)",
            file=sys.stderr,
        )
        return 2
    try:
        answer = input("Remove all of the above? [y/N] ")
    except EOFError:
        answer = ""
    if not answer.strip().lower().startswith("y"):
        print("Nothing was removed.")
        return 2
    return 0


def remove_guard(hook: str) -> str:
    """Remove the guard at `hook` (still one?) and rename its chained hook back."""
    if guard_hooks.read_meta(hook) is None:
        return "not a guard any more; left alone"
    return guard_hooks.remove_hook(hook)


def _remove(item: Item) -> None:
    if item.is_dir and not os.path.islink(item.path):
        shutil.rmtree(item.path)
    else:
        os.unlink(item.path)


def run(args: argparse.Namespace) -> int:
    current = Plan(args)
    failed = clients.uninstall(
        project=None,
        record=current.clients_record,
        environ=os.environ,
        settings_record=current.record,
        everywhere=True,
    )
    for item in current.guards:
        try:
            print(f"{item.path}: {remove_guard(item.path)}")
        except OSError as exc:
            print(f"{item.path}: could not be removed ({exc})", file=sys.stderr)
            failed += 1
    backups = backup_items(current.installs, os.environ)  # uninstall may have made or removed one
    for item in [*current.ledgers, *current.state, *backups]:
        try:
            _remove(item)
        except FileNotFoundError:
            continue
        except OSError as exc:
            print(f"{item.path}: could not be removed ({exc})", file=sys.stderr)
            failed += 1
            continue
        print(f"removed {item.path}{'/' if item.is_dir else ''}")
    return 1 if failed else 0


def kept(args: argparse.Namespace) -> int:
    """After a plain uninstall: the kept versions go (nothing would sweep them);
    what stays, and how to remove it."""
    for item in kept_store_items(known_ledgers.ledgers(args.state_dir)):
        try:
            _remove(item)
            print(f"removed {item.path}/: {item.what} (nothing sweeps them once uninstalled)")
        except OSError as exc:
            print(f"{item.path}: could not be removed ({exc})", file=sys.stderr)
    current = Plan(args)
    items = current.removable()
    if items:
        print(
            f"Kept: {plural(len(items), 'file')} of agents' state, logs and data "
            f"(in {current.state_dir}, and guards or ledgers in repositories); "
            "`./install.sh --uninstall --purge` lists and removes them."
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.purge", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=["plan", "run", "kept"])
    parser.add_argument(
        "--state-dir", help="Claude Code's directory (default: as the hooks find it)."
    )
    parser.add_argument("--settings", help="The user-level settings.json.")
    parser.add_argument("--record", help="install.sh's record of the settings files it changed.")
    parser.add_argument("--link", help="The agent-hooks command's link.")
    parser.add_argument("--data", help="The installed copy (AGENT_HOOKS_HOME).")
    parser.add_argument(
        "--clients-record", help="install.sh's record of its Codex and Gemini CLI installs."
    )
    parser.add_argument("--yes", action="store_true", help="Do not ask.")
    args = parser.parse_args(argv)
    if not args.state_dir:
        args.state_dir = identity.state_dir(os.environ)
    if not args.settings:
        args.settings = os.path.join(args.state_dir, "settings.json")
    try:
        return {"plan": plan, "run": run, "kept": kept}[args.action](args)
    except OSError as exc:
        print(f"install.sh: {exc}; stopped there", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
