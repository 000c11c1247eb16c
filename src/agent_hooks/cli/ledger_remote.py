"""`agent-hooks ledger remote | sync | status | repair`: share a repository's
reservations and leases with agents on other machines through a git remote
(docs/adr/0016)."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks import durations, repository
from agent_hooks.cli._common import (
    Env,
    emit_json,
    get_env,
    json_option,
    project_option,
    require_project,
)
from agent_hooks.ledger import ledger_location, ledger_sync, remote_git, remote_ledger, remote_view
from agent_hooks.reservations import reservation, reservation_index


class Place:
    """The repository a command works on: its ledger and common git directory."""

    def __init__(self, env: Env, project: str | None) -> None:
        self.root = require_project(env, project)
        common = repository.common_dir(self.root)
        if common is None:
            raise click.ClickException(
                f"{self.root} is not a git work tree: a shared ledger lives on a git remote"
            )
        self.common = common
        self.ledger = ledger_location.directory(env.state_dir, self.root)
        self.env = env

    def host(self) -> str:
        try:
            return remote_ledger.host_name(self.env.environ)
        except remote_ledger.HostNameError as exc:
            raise click.ClickException(str(exc)) from None

    def git(self) -> remote_git.Git:
        return remote_git.Git(self.common, self.ledger, self.env.environ)

    def remote(self) -> str | None:
        return remote_ledger.remote_of(reservation_index.load_truth(self.ledger).doc)


def _ago(moment: object, now: float) -> str:
    if isinstance(moment, bool) or not isinstance(moment, int | float):
        return "never"
    if moment > now + 60:
        return f"in {durations.duration(moment - now)} (its clock is ahead)"
    return (
        durations.ago(now - moment) if now - moment >= 60 else f"{max(0, int(now - moment))}s ago"
    )


@click.group("ledger")
def ledger_group() -> None:
    """Share this repository's ledger with agents on other machines through a git
    remote: reservations exact across machines, leases synced every 15 s."""


@ledger_group.command("remote")
@click.argument("name", required=False)
@click.option("--off", is_flag=True, help="Stop sharing: this machine works alone again.")
@project_option
@json_option
def remote_command(name: str | None, off: bool, project: str | None, as_json: bool) -> None:
    """Share the ledger through the git remote NAME (`git remote -v` lists them), or
    stop with --off; without either, say which remote it is shared through.

    The ledger lives at refs/agent-hooks/v2/ledger on the remote, a ref that clones
    do not fetch. Switching on pushes this machine's reservations (all or none: a
    conflict with one already there refuses it) and runs a first sync. Git runs
    without prompts: credentials must work non-interactively (an ssh agent or a
    credential helper). AGENT_HOOKS_HOST names this machine (default: its host name).
    """
    env = get_env()
    place = Place(env, project)
    if name is not None and off:
        raise click.UsageError("give a remote NAME or --off, not both")
    if off:
        _switch_off(place, as_json)
    elif name is not None:
        _switch_on(place, name, as_json)
    else:
        current = place.remote()
        if as_json:
            emit_json({"project_root": place.root, "remote": current, "ref": remote_git.REF})
        elif current is None:
            click.echo("the shared ledger is off: this machine works alone")
        else:
            click.echo(f"the ledger is shared through remote {current} ({remote_git.REF})")


def _switch_on(place: Place, name: str, as_json: bool) -> None:
    env = place.env
    if not name or name.startswith("-") or any(c.isspace() or not c.isprintable() for c in name):
        raise click.BadParameter(f"{name!r} is not a remote name", param_hint="NAME")
    host = place.host()
    git = place.git()
    url = git.remote_url(name)
    if url is None:
        raise click.ClickException(
            f"this repository has no remote named {name!r} (`git remote -v` lists them)"
        )
    try:
        switched = remote_ledger.switch_on(place.ledger, git, name, host, env.now)
    except (remote_ledger.RemoteUnavailable, reservation.ReservationError) as exc:
        raise click.ClickException(str(exc)) from None
    except remote_git.GitFailure as exc:
        raise click.ClickException(f"cannot use remote {name!r}: {exc}") from None
    if switched.conflicts:
        mine, theirs = switched.conflicts[0]
        more = len(switched.conflicts) - 1
        raise click.ClickException(
            f"not switched on: {reservation.describe(mine, env.now)} here conflicts with "
            f"{reservation.describe(theirs, env.now)} on {name}"
            + (f" (and {more} more)" if more else "")
            + "; release one of them and try again"
        )
    result = ledger_sync.sync(place.ledger, git, name, host, env.now, state_dir=env.state_dir)
    for note in switched.notes:
        click.echo(f"warning: {note}", err=True)
    if as_json:
        emit_json(
            {
                "project_root": place.root,
                "remote": name,
                "url": url,
                "ref": remote_git.REF,
                "host": host,
                "pushed": [r["id"] for r in switched.pushed],
                "sync": _sync_json(result),
            }
        )
        return
    click.echo(
        f"the ledger is shared through remote {name} ({url}, {remote_git.REF}); "
        f"this machine is host {host}"
    )
    click.echo(f"pushed {len(switched.pushed)} reservation(s) made on this machine")
    click.echo(_sync_line(name, result))


def _switch_off(place: Place, as_json: bool) -> None:
    current = place.remote()
    if current is None:
        if as_json:
            emit_json({"project_root": place.root, "remote": None, "kept": 0, "dropped": 0})
        else:
            click.echo("the shared ledger is already off")
        return
    try:
        kept, dropped = remote_ledger.switch_off(place.ledger, place.host(), place.env.now)
    except reservation.ReservationError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(
            {
                "project_root": place.root,
                "remote": None,
                "was": current,
                "kept": kept,
                "dropped": dropped,
            }
        )
        return
    click.echo(
        f"the ledger is no longer shared through {current}; {kept} reservation(s) of this "
        f"machine stay here (and on the remote until they end); {dropped} of other machines "
        "are no longer enforced here"
    )


def _sync_json(result: ledger_sync.SyncResult) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "skipped": result.skipped,
        "error": result.error,
        "pushed": result.pushed,
        "attempts": result.attempts,
        "elapsed_ms": round(result.elapsed * 1000, 1),
        "double_claims": result.double_claims,
        "reservation_double_claims": result.reservation_claims,
        "blocked": result.blocked,
        "notes": result.notes,
    }


def _sync_line(remote: str, result: ledger_sync.SyncResult) -> str:
    if result.skipped:
        return f"no sync: {result.skipped}"
    report = result.report
    hosts = report.get("hosts") or {}
    others = [h for h, info in hosts.items() if isinstance(info, dict) and not info.get("this")]
    leases = sum(len(v) for v in (report.get("leases") or {}).values())
    claims = len(result.double_claims) + len(result.reservation_claims)
    pushed = "pushed this host's files; " if result.pushed else ""
    return (
        f"synced with {remote} in {result.elapsed * 1000:.0f} ms: {pushed}"
        f"{len(others)} other host(s), {leases} lease(s) of theirs, "
        + (f"{claims} double claim(s)" if claims else "no double claim")
    )


@ledger_group.command("sync")
@project_option
@json_option
def sync_command(project: str | None, as_json: bool) -> None:
    """Sync once with the remote now: push this machine's leases and heartbeat,
    pull the other machines' leases and the remote reservations. (Hooks also start
    a sync in the background every 15 s while agents work.)"""
    env = get_env()
    place = Place(env, project)
    remote = place.remote()
    if remote is None:
        raise click.ClickException(
            "the shared ledger is off for this repository; switch it on with "
            "`agent-hooks ledger remote NAME`"
        )
    result = ledger_sync.sync(
        place.ledger, place.git(), remote, place.host(), env.now, state_dir=env.state_dir
    )
    if as_json:
        emit_json({"project_root": place.root, "remote": remote, **_sync_json(result)})
        if result.error:
            raise SystemExit(1)
        return
    if result.error:
        raise click.ClickException(f"sync with {remote} failed: {result.error}")
    for note in result.notes:
        click.echo(f"warning: {note}", err=True)
    click.echo(_sync_line(remote, result))
    _print_double_claims(result.double_claims, env.now)
    _print_reservation_claims(result.reservation_claims)


def _print_double_claims(claims: list[dict[str, Any]], now: float) -> None:
    for claim in claims:
        found = claim.get("holders")
        holders: list[Any] = found if isinstance(found, list) else []
        names = "; ".join(
            f"{reservation.one_line(h.get('writer'), 80)} on {h.get('machine')} "
            f"(claimed {_ago(h.get('claimed'), now)})"
            for h in holders
            if isinstance(h, dict)
        )
        click.echo(
            f"double claim: {reservation.one_line(claim.get('path'), 200)} is leased by {names}; "
            f"{claim.get('winner')} claimed it first"
        )


def _print_reservation_claims(claims: list[dict[str, Any]]) -> None:
    for claim in claims:
        winner, loser = claim.get("winner") or {}, claim.get("loser") or {}
        click.echo(
            "double claim: "
            f"{reservation.one_line(loser.get('pattern'), 200)} ({loser.get('id')}) of "
            f"{reservation.one_line(loser.get('agent'), 80) or '?'} on {loser.get('machine')} "
            f"overlaps {reservation.one_line(winner.get('pattern'), 200)} ({winner.get('id')}) "
            f"of {reservation.one_line(winner.get('agent'), 80) or '?'} on "
            f"{winner.get('machine')}, granted earlier: {winner.get('machine')}'s stands, "
            f"{loser.get('machine')} drops its own at its sync and tells its holder"
        )


def _lost_lately(ledger: str, now: float) -> list[dict[str, Any]]:
    """This machine's grants dropped in the last day because another machine's
    stood (a double claim lost, a tombstone)."""
    doc = reservation_index.load_truth(ledger).doc or {}
    dropped = doc.get("dropped")
    return [
        d
        for d in (dropped if isinstance(dropped, list) else [])
        if isinstance(d, dict)
        and isinstance(d.get("machine"), str)
        and isinstance(d.get("at"), int | float)
        and now - d["at"] < 86400
    ]


def _silent(info: dict[str, Any], now: float) -> bool:
    """Has this host been silent for longer than its lease minutes, as of `now`?"""
    heartbeat, minutes = info.get("heartbeat"), info.get("lease_minutes")
    if info.get("this") or not isinstance(heartbeat, int | float):
        return False
    window = (minutes if isinstance(minutes, int) and minutes > 0 else 10) * 60
    return heartbeat + window <= now


@ledger_group.command("status")
@project_option
@json_option
def status_command(project: str | None, as_json: bool) -> None:
    """Say which remote the ledger is shared through, how long ago the last sync
    ran and how it went, the hosts seen with their last heartbeat, and any double
    claim (one file leased on two machines). Reads only local files."""
    env = get_env()
    place = Place(env, project)
    remote = place.remote()
    report = ledger_sync.read_report(place.ledger) if remote is not None else {}
    if report.get("remote") not in (None, remote):
        report = {}  # a report of the remote used before
    now = env.now
    view_stale = remote is not None and (
        not isinstance(report.get("synced_at"), int | float)
        or now - report["synced_at"] > remote_view.STALE_INTERVALS * remote_view.INTERVAL
    )
    if as_json:
        emit_json(
            {
                "project_root": place.root,
                "remote": remote,
                "ref": remote_git.REF,
                "host": report.get("host"),
                "attempted_at": report.get("attempted_at"),
                "synced_at": report.get("synced_at"),
                "ok": report.get("ok"),
                "error": report.get("error"),
                "stale": view_stale,
                "generation": report.get("generation"),
                "hosts": {
                    name: {**info, "silent": _silent(info, now)}
                    for name, info in (report.get("hosts") or {}).items()
                    if isinstance(info, dict)
                },
                "double_claims": report.get("double_claims") or [],
                "reservation_double_claims": report.get("reservation_double_claims") or [],
                "blocked": report.get("blocked"),
                "unreadable": report.get("unreadable") or {},
                "dropped_here": _lost_lately(place.ledger, now) if remote else [],
            }
        )
        return
    if remote is None:
        click.echo(
            "the shared ledger is off: this machine works alone "
            "(`agent-hooks ledger remote NAME` shares it through a git remote)"
        )
        return
    click.echo(
        f"shared through remote {remote} ({remote_git.REF}); this machine is host {report.get('host') or place.host()}"
    )
    if not report:
        click.echo("last sync: never (`agent-hooks ledger sync` runs one)")
        return
    if report.get("ok"):
        click.echo(
            f"last sync: {_ago(report.get('attempted_at'), now)}, ok (generation {report.get('generation')})"
        )
    else:
        click.echo(
            f"last sync: {_ago(report.get('attempted_at'), now)}, failed: {report.get('error')}; "
            f"last good sync {_ago(report.get('synced_at'), now)}"
        )
    if report.get("blocked"):
        click.echo(
            f"the shared ledger cannot be read ({report['blocked']}): this machine pushes nothing "
            "and reservation changes are refused until `agent-hooks ledger repair`"
        )
    unreadable = report.get("unreadable") or {}
    for path, why in sorted(unreadable.items() if isinstance(unreadable, dict) else []):
        click.echo(
            f"unreadable on the remote: {path} ({why}); it is left as it is, what was read of it "
            "before stands, and `reserve` is refused until its machine writes it again or "
            "`agent-hooks ledger repair` removes it"
        )
    if view_stale:
        click.echo(
            "what this machine knows of the others is older than "
            f"{remote_view.STALE_INTERVALS * remote_view.INTERVAL} s"
        )
    hosts = report.get("hosts") or {}
    if hosts:
        click.echo("hosts:")
        for host, info in sorted(hosts.items()):
            if not isinstance(info, dict):
                continue
            if info.get("problem"):
                click.echo(f"  {host}: unreadable host file ({info['problem']})")
                continue
            mark = " (this machine)" if info.get("this") else ""
            silent = "; silent: holds nothing" if _silent(info, now) else ""
            ahead = info.get("ahead")
            if isinstance(ahead, int) and ahead > 0:
                silent += f"; its clock is {durations.duration(ahead)} ahead of this one"
            click.echo(
                f"  {host}{mark}: heartbeat {_ago(info.get('heartbeat'), now)}, "
                f"{info.get('leases', 0)} lease(s), lease minutes {info.get('lease_minutes')}{silent}"
            )
    claims = report.get("double_claims") or []
    reserved = report.get("reservation_double_claims") or []
    lost = [d for d in _lost_lately(place.ledger, now) if "double claim" in str(d.get("why"))]
    _print_double_claims(claims, now)
    _print_reservation_claims(reserved)
    for item in lost:
        click.echo(
            f"dropped here {_ago(item.get('at'), now)}: {reservation.one_line(item.get('pattern'), 200)} "
            f"({item.get('id')}) of {reservation.one_line(item.get('agent'), 80) or '?'}: "
            f"{reservation.one_line(item.get('why'), 300)}"
        )
    if not claims and not reserved and not lost:
        click.echo("double claims: none")


@ledger_group.command("repair")
@click.option(
    "--yes", is_flag=True, help="Replace without asking (after reading what it replaces)."
)
@project_option
@json_option
def repair_command(yes: bool, project: str | None, as_json: bool) -> None:
    """Make a shared ledger that cannot be read usable again: a person's command.

    Nothing that cannot be read is ever written over by a sync or a reservation
    change; this is the way out. It fetches the ledger, says what it would
    replace — a ledger that cannot be read at all (a ref naming no commit, a
    damaged or unknown ledger.json) is started anew; a machine's file that cannot
    be read (too large, damaged, an unknown format) is removed — and asks first.
    Every machine writes its own reservations and leases again at its next sync,
    from its own ledger; those of a machine that never syncs again are lost.
    """
    env = get_env()
    place = Place(env, project)
    remote = place.remote()
    if remote is None:
        raise click.ClickException(
            "the shared ledger is off for this repository; there is nothing to repair"
        )
    git, host = place.git(), place.host()
    try:
        state = remote_ledger.parse(git.fetch(remote))
    except remote_git.GitFailure as exc:
        raise click.ClickException(f"cannot read the shared ledger on {remote}: {exc}") from None
    plan = remote_ledger.repair_plan(state)
    lines = (
        [f"start the shared ledger anew: {plan.restart}"] if plan.restart is not None else []
    ) + [f"remove {path}: {why}" for path, why in sorted(plan.remove.items())]
    if not plan.needed():
        if as_json:
            emit_json({"project_root": place.root, "remote": remote, "repaired": []})
        else:
            click.echo(f"nothing to repair: the shared ledger on {remote} can be read")
        return
    if not as_json:
        for line in lines:
            click.echo(f"would {line}")
    if not yes:
        try:
            agreed = click.confirm(
                "replace it? every machine writes its own again at its next sync", err=True
            )
        except click.Abort:  # no answer (stdin closed): never taken as yes
            agreed = False
        if not agreed:
            raise click.ClickException(
                "nothing was changed: repair replaces what cannot be read on the remote only "
                "when confirmed (answer y, or add --yes)"
            )
    try:
        remote_ledger.repair(git, remote, plan, host, env.now)
    except remote_git.LostRace:
        raise click.ClickException(
            f"the shared ledger on {remote} changed since it was read; nothing was changed: "
            "run `agent-hooks ledger repair` again"
        ) from None
    except (remote_git.GitFailure, remote_ledger.RemoteUnavailable, remote_ledger.TooLarge) as exc:
        raise click.ClickException(f"repair failed, nothing was changed: {exc}") from None
    result = ledger_sync.sync(place.ledger, git, remote, host, env.now, state_dir=env.state_dir)
    if as_json:
        emit_json(
            {
                "project_root": place.root,
                "remote": remote,
                "repaired": lines,
                "sync": _sync_json(result),
            }
        )
        return
    click.echo(f"repaired the shared ledger on {remote}")
    click.echo(_sync_line(remote, result) if not result.error else f"sync failed: {result.error}")


def register(group: click.Group) -> None:
    group.add_command(ledger_group)
