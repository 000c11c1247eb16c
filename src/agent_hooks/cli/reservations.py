"""`agent-hooks reservations | check`: who holds what, and would an edit pass."""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks import liveness, timestamps, writers
from agent_hooks.cli._common import (
    emit_json,
    get_env,
    json_option,
    project_option,
    require_project,
    styled,
    table,
)
from agent_hooks.cli.reserve import public, until
from agent_hooks.clients import client_table
from agent_hooks.gate import places
from agent_hooks.leases import (
    lease,
    lease_messages,
    lease_release,
    lease_store,
    writer_cards,
)
from agent_hooks.ledger import remote_grants, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import blocking, index_records, reservation


def holder_state(
    holder: dict[str, Any] | None,
    directory: str,
    owner: str,
    now: float,
    minutes: int,
    keep: bool = False,
) -> str:
    """`live`, `holder gone` (its process ended on this host: it blocks nobody),
    `silent` (on another host, not heard from within a lease's time: it blocks
    nobody), `kept` (made with --keep: it blocks until it expires, whatever its
    holder does), or `no process` (no holder process known: until it expires). A
    person's reservation (`writers.person`) is `person`: see `_reservation_rows`."""
    if holder is None or holder.get("pid") is None:
        return "no process"
    alive = liveness.alive(holder)
    if alive is True:
        return "live"
    if keep:
        return "kept"
    if alive is False:
        return "holder gone"
    if writer_cards.heard_from(directory, owner, now, minutes):
        return "live (other host)"
    return "silent"


def _reservation_rows(
    repo: Repo, found: reservation_store.Listing, now: float
) -> list[dict[str, Any]]:
    rows = []
    root, directory = repo.root, repo.ledger
    minutes = found.settings["lease_minutes"]
    here = _this_machine(directory) if repo.shared else None
    for res in found.live:
        row = public(res, now)
        row["kind"] = "reservation"
        row["client"] = res.get("client") if res.get("client") in client_table.CLIENTS else None
        row["holder_label"] = writers.describe(res)
        machine = res.get("machine")
        if here is not None:  # where the grant stands in the double-claim rule
            row["order"] = list(remote_grants.order_key(res, here))
        if here is not None and isinstance(machine, str) and machine != here:
            row["holder_label"] = reservation.holder_label(res)  # names the other machine
            row["state"] = _other_machine_state(res, directory, machine, now)
        elif writers.person(res) is not None:  # made at a terminal: until it expires or is released
            row["state"] = "person"
        else:
            row["state"] = holder_state(
                res.get("holder"), directory, reservation.owner(res), now, minutes, res["keep"]
            )
        row["project_root"] = root
        rows.append(row)
    return rows


def _this_machine(directory: str) -> str | None:
    from agent_hooks.reservations import index_build, reservation_index

    return index_build.this_machine(reservation_index.load_truth(directory).doc or {})


def _other_machine_state(res: dict[str, Any], directory: str, machine: str, now: float) -> str:
    """A reservation made on another machine sharing the ledger: its holder is
    judged by that machine's heartbeat at the last sync."""
    from agent_hooks.ledger import remote_view

    holder = res.get("holder")
    if res["keep"] or not isinstance(holder, dict) or holder.get("pid") is None:
        return "kept" if res["keep"] else "live"
    return "live (other machine)" if remote_view.holds(directory, machine, now) else "silent"


def _lease_rows(root: str, directory: str, now: float) -> list[dict[str, Any]]:
    rows = []
    for rel, item in lease_release.everything(directory):
        if not lease.counts(item, now, liveness.alive):
            continue
        card = writer_cards.card(directory, item.get("writer"))
        changed = item.get("changed")
        state = "live" if liveness.alive(item) is not False else "holder gone"
        restorable = False
        if isinstance(changed, dict):  # someone else changed the file after its holder
            by = changed.get("by")
            state += f"; changed by {by if isinstance(by, str) else 'someone else'}"
            restorable = _restorable(directory, rel, item)
            state += "; restorable" if restorable else ""  # `agent-hooks restore`
        rows.append(
            {
                "kind": "lease",
                "project_root": root,
                "pattern": rel,
                "mode": "exclusive",
                "agent": item.get("agent"),
                "writer": item.get("writer"),
                "client": item.get("client")
                if item.get("client") in client_table.CLIENTS
                else None,
                "holder_label": lease_messages.holder_label(item, card),
                "worktree": item.get("worktree_path") or item.get("worktree"),
                "branch": item.get("branch"),
                "written_at": item.get("written"),
                "expires_at": item.get("expires"),
                "minutes_left": lease_messages.minutes_until(item.get("expires"), now),
                "state": state,
                "changed": changed if isinstance(changed, dict) else None,
                "restorable": restorable,
                "reason": "",
                "id": None,
            }
        )
    return rows + _other_machines_leases(root, directory, now)


def _restorable(directory: str, rel: str, item: dict[str, Any]) -> bool:
    """Is the holder's own last version of a changed file kept (`agent-hooks restore`)?"""
    from agent_hooks.kept import kept_versions

    worktree, writer = item.get("worktree"), item.get("writer")
    if not isinstance(worktree, str) or not isinstance(writer, str):
        return False
    return kept_versions.kept_for(directory, worktree, rel, writer) is not None


def _other_machines_leases(root: str, directory: str, now: float) -> list[dict[str, Any]]:
    """The leases other machines sharing the ledger hold, as of the last sync."""
    from agent_hooks.ledger import remote_view

    view = remote_view.view_of(directory)
    if view is None:
        return []
    rows = []
    for rel in sorted(view.paths):
        for item in view.counting(rel, now):
            rows.append(
                {
                    "kind": "lease",
                    "project_root": root,
                    "pattern": rel,
                    "mode": "exclusive",
                    "agent": item.get("agent"),
                    "writer": item.get("writer"),
                    "holder_label": f"{lease_messages.holder_label(item)} on machine "
                    f"{item.get('machine')}",
                    "machine": item.get("machine"),
                    "worktree": item.get("worktree"),
                    "branch": item.get("branch"),
                    "written_at": item.get("written"),
                    "expires_at": item.get("expires"),
                    "minutes_left": lease_messages.minutes_until(item.get("expires"), now),
                    "state": "live (other machine)",
                    "reason": "",
                    "id": None,
                }
            )
    return rows


def rows_for(
    state_dir: str, root: str, now: float
) -> tuple[list[dict[str, Any]], reservation_store.Listing]:
    """Every live reservation and lease of `root`'s repository, as shown to people."""
    repo = Repo(root, state_dir)
    found = reservation_store.listing(repo, now)
    return _reservation_rows(repo, found, now) + _lease_rows(root, repo.ledger, now), found


def _local(moment: object) -> str:
    if isinstance(moment, bool) or not isinstance(moment, int | float):
        return "-"
    return timestamps.local(moment)


HEADER = ("HOLDER", "CLIENT", "KIND", "PATH", "MODE", "LEFT", "STATE", "REASON", "ID")


def state_tone(state: str) -> str | None:
    """How a holder's state is coloured for people: live green, one that no longer
    blocks dim, a silent one or a file someone else changed yellow."""
    if "changed by" in state or state == "silent":
        return "warn"
    if state.startswith("live"):
        return "ok"
    return "dim" if state == "holder gone" else None


def _table(rows: list[dict[str, Any]]) -> list[str]:
    body = []
    for row in rows:
        ident = row.get("id") or "-"
        if row.get("keep"):
            ident += " (keep)"
        body.append(
            (
                reservation.one_line(row["holder_label"], 60),
                row["client"] or "-",
                row["kind"],
                reservation.one_line(row["pattern"], 60),
                row["mode"],
                f"{row['minutes_left']} min",
                row["state"],
                reservation.one_line(row.get("reason"), 40) or "-",
                ident,
            )
        )
    return table(HEADER, body, right={5}, tones={6: state_tone})


@click.command()
@click.option(
    "--all-projects", is_flag=True, help="Every project with a ledger this HOME has used."
)
@click.option("--dropped", is_flag=True, help="Show what was dropped lately (and why) instead.")
@project_option
@json_option
def reservations(all_projects: bool, dropped: bool, project: str | None, as_json: bool) -> None:
    """List live reservations and leases: holder, the client it works in (claude,
    codex, gemini), path or pattern, mode, time left, whether the holder is alive,
    reason and id. Leases are the files writers are
    changing right now (a writer holds each file it edits)."""
    env = get_env()
    if all_projects:
        env.check_state_dir()
    roots = (
        reservation_store.known_projects(env.state_dir)
        if all_projects
        else [require_project(env, project)]
    )
    rows: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    problems: list[str] = []
    for root in roots:
        found_rows, found = rows_for(env.state_dir, root, env.now)
        rows += found_rows
        recent += [{**d, "project_root": root} for d in found.dropped]
        problems += found.problems
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if dropped:
        if as_json:
            emit_json(recent)
            return
        for item in recent or [{"why": None}]:
            if item["why"] is None:
                click.echo("nothing was dropped lately")
                break
            click.echo(
                f"{_local(item.get('at'))}  {item.get('pattern')} of {writers.describe(item)}: "
                f"{item.get('why')} [{item.get('id')}]"
            )
        return
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no live reservations or leases" + ("" if all_projects else f" in {roots[0]}"))
        return
    for root in roots:
        mine = [r for r in rows if r["project_root"] == root]
        if not mine:
            continue
        click.echo(f"# {root}")
        for line in _table(mine):
            click.echo(line)
        lately = [
            d for d in recent if d["project_root"] == root and env.now - (d.get("at") or 0) < 86400
        ]
        if lately:
            click.echo(
                f"({len(lately)} dropped in the last day: `agent-hooks reservations --dropped`)"
            )


@click.command()
@click.argument("paths", nargs=-1, required=True)
@project_option
@json_option
def check(paths: tuple[str, ...], project: str | None, as_json: bool) -> None:
    """Would this agent's edit of PATHS be allowed? Exit 1 if any would be denied.
    Reservations, leases and strict mode are all checked; nothing is claimed."""
    env = get_env()
    root = require_project(env, project)
    me = env.writer()
    results: list[dict[str, Any]] = []
    cwd = os.getcwd()
    base = cwd if cwd == root or cwd.startswith(root.rstrip("/") + "/") else root  # as `reserve`
    for path in paths:
        found = places.locate(path, base, root)
        if not found:
            results.append({"path": path, "allowed": True, "why": "in no project"})
            continue
        verdicts = [
            _verdict(env.state_dir, target_root, rel, me, env.now) for target_root, rel in found
        ]
        results.append(next((v for v in verdicts if not v["allowed"]), verdicts[0]))
    if as_json:
        emit_json(results)
    else:
        for item in results:
            if item["allowed"]:
                note = f" ({item['why']})" if "why" in item else ""
                click.echo(f"{styled('allowed', 'ok')}  {item['path']}{note}")
            elif "held_by" in item:
                who = "; ".join(
                    f"{h['holder']} holds {h['pattern']} "
                    f"({'reason: ' + h['reason'] if h['reason'] else 'no reason given'}, "
                    f"{h['minutes_left']} min left)"
                    for h in item["held_by"]
                )
                click.echo(f"{styled('denied', 'bad')}   {item['path']}: {who}")
            else:
                click.echo(f"{styled('denied', 'bad')}   {item['path']}: {item['why']}")
    if not all(item["allowed"] for item in results):
        raise SystemExit(1)


def _verdict(state_dir: str, root: str, rel: str, me: writers.Writer, now: float) -> dict[str, Any]:
    """Would `me`'s edit of `rel` in project `root` pass, and if not, why."""
    repo = Repo(root, state_dir, os.environ)
    directory, hot = repo.ledger, repo.index
    verdict: dict[str, Any] = {"path": rel, "project_root": root, "allowed": True}
    counts = blocking.holder_counts(directory, repo.minutes, now)
    holders = blocking.blocking_edit(hot, rel, me.owner, now, counts) if hot is not None else []
    if holders:
        verdict["allowed"] = False
        verdict["held_by"] = [
            {
                "kind": "reservation",
                "agent": h["agent"],
                "holder": writers.describe(h),
                "pattern": h["pattern"],
                "reason": reservation.one_line(h["reason"], 200),
                "until": until(h),
                "minutes_left": reservation.minutes_left(h, now),
            }
            for h in (index_records.as_dict(rec) for rec in holders)
        ]
        return verdict
    seen = lease.judge(lease_store.read(directory, rel), me, repo.worktree, now, liveness.alive)
    if seen.blockers:
        verdict["allowed"] = False
        verdict["held_by"] = [
            {
                "kind": "lease",
                "agent": item.get("agent"),
                "holder": lease_messages.holder_label(
                    item, writer_cards.card(directory, item.get("writer"))
                ),
                "pattern": rel,
                "reason": "",
                "until": until({"expires_at": item.get("expires") or 0}),
                "minutes_left": lease_messages.minutes_until(item.get("expires"), now),
            }
            for item in seen.blockers
        ]
    elif hot is not None and hot.strict and not blocking.owns(hot, rel, me.owner, now):
        verdict["allowed"] = False
        verdict["why"] = "strict mode: not reserved by you"
    elif seen.elsewhere:
        verdict["why"] = "also being changed in another worktree: " + "; ".join(
            f"{lease_messages.holder_label(item)} on {item.get('branch') or '?'}"
            for item in seen.elsewhere
        )
    return verdict


def register(group: click.Group) -> None:
    group.add_command(reservations)
    group.add_command(check)
