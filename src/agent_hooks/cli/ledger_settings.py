"""`agent-hooks settings | overlaps`: a repository's ledger settings, and the files
its worktrees' agents are changing at once."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks import posix_fs as fs
from agent_hooks import storage
from agent_hooks.cli._common import emit_json, get_env, json_option, project_option, require_project
from agent_hooks.kept import kept_store
from agent_hooks.leases import overlaps
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import reservation

SETTINGS = {
    "lease-minutes": "lease_minutes",
    "worktree-leases": "worktree_leases",
}


def _kept_value(name: str, raw: str) -> object:
    if name == "kept_exclude":
        if len(raw) > kept_store.MAX_EXCLUDE:
            raise click.BadParameter(f"at most {kept_store.MAX_EXCLUDE} characters of patterns")
        return " ".join(raw.split())
    if not (raw.isascii() and raw.isdigit()) or int(raw) > kept_store.MAX_MIB:
        raise click.BadParameter(f"{raw!r}: MiB from 0 to {kept_store.MAX_MIB}")
    return int(raw)


def save_kept(store: str, name: str, value: object, now: float) -> dict[str, Any]:
    """Set a kept-versions setting (`kept_store.SETTING_NAMES`) of the store in `store`,
    under its lock; the kept settings as they are then."""
    result: list[dict[str, Any]] = []

    def mutate(loaded: storage.Loaded) -> dict[str, Any]:
        doc = {**(loaded.doc or {}), kept_store.SETTING_NAMES[name]: value}
        result.append(kept_store.settings_of(doc))
        return doc

    storage.ensure_dir(store)
    storage.locked_update(fs.join(store, kept_store.SETTINGS), mutate, now=now)
    return result[0]


def _value(name: str, raw: str) -> object:
    if name == "lease_minutes":
        if not (raw.isascii() and raw.isdigit()) or int(raw) > 1440:
            raise click.BadParameter(f"{raw!r}: minutes from 0 (leases off) to 1440")
        return int(raw)
    if raw not in ("warn", "deny"):
        raise click.BadParameter(f"{raw!r}: warn or deny")
    return raw


@click.command("settings")
@click.argument(
    "name", required=False, type=click.Choice(sorted([*SETTINGS, *kept_store.SETTING_NAMES]))
)
@click.argument("value", required=False)
@project_option
@json_option
def settings(name: str | None, value: str | None, project: str | None, as_json: bool) -> None:
    """Show or change the repository's ledger settings (shared by all its worktrees).

    \b
    lease-minutes N     a lease ends after N minutes without a write (default 10;
                        0 turns leases off; AGENT_HOOKS_LEASE_MINUTES overrides it
                        for one agent)
    worktree-leases M   warn (default): an edit of a file another worktree is
                        changing is allowed, with a note on the conflict ahead;
                        deny: such an edit is refused
    kept-file-mib N     a held file larger than N MiB is not kept for
                        `agent-hooks restore` (default 4; 0 turns keeping off)
    kept-total-mib N    the kept versions hold at most N MiB once swept (default
                        256; the latest version of a live lease is never evicted)
    kept-exclude P      gitignore patterns never kept, separated by blanks, besides
                        what git ignores and secrets' names (.env, *.pem, id_rsa*…)
    Strict mode has its own command: `agent-hooks strict`.
    """
    env = get_env()
    root = require_project(env, project)
    store = kept_store.store_dir(ledger_location.directory(env.state_dir, root))
    if name in kept_store.SETTING_NAMES and value is not None:
        key = kept_store.SETTING_NAMES[name]
        save_kept(store, name, _kept_value(key, value), env.now)
    elif name is not None and value is not None:
        key = SETTINGS[name]
        try:
            reservation_store.set_setting(
                Repo(root, env.state_dir), key, _value(key, value), env.now
            )
        except reservation.ReservationError as exc:
            raise click.ClickException(str(exc)) from None
    elif name is not None:
        raise click.UsageError(f"give a value for {name}")
    current = reservation_store.listing(Repo(root, env.state_dir), env.now).settings
    kept = kept_store.read_settings(store)
    if as_json:
        emit_json({"project_root": root, **current, **kept})
        return
    click.echo(f"lease-minutes    {current['lease_minutes']}")
    click.echo(f"worktree-leases  {current['worktree_leases']}")
    click.echo(f"strict           {'on' if current['strict'] else 'off'}")
    click.echo(f"kept-file-mib    {kept['kept_file_mib']}")
    click.echo(f"kept-total-mib   {kept['kept_total_mib']}")
    click.echo(f"kept-exclude     {kept['kept_exclude'] or '(none)'}")


@click.command("overlaps")
@click.option("--all", "everything", is_flag=True, help="Every file two worktrees are changing.")
@project_option
@json_option
def overlaps_command(everything: bool, project: str | None, as_json: bool) -> None:
    """Files this worktree's branch changed (uncommitted, or committed since the
    default branch) that agents in other worktrees are changing now: merge
    conflicts ahead. With --all: every file leased in two or more worktrees."""
    env = get_env()
    root = require_project(env, project)
    ledger = Repo(root, env.state_dir).ledger
    found = (
        overlaps.everywhere(ledger, env.now)
        if everything
        else overlaps.for_worktree(ledger, root, env.now)
    )
    if as_json:
        emit_json([{"path": rel, "also_changed_by": who} for rel, who in found.items()])
        return
    if not found:
        click.echo("no overlaps" + ("" if everything else f" for {root}"))
        return
    for rel, who in found.items():
        click.echo(f"{rel}: {'; '.join(who)}")


def register(group: click.Group) -> None:
    group.add_command(settings)
    group.add_command(overlaps_command)
