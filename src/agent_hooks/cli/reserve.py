"""`agent-hooks reserve | release | renew | strict`: change a project's reservations."""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks import liveness, timestamps, writers
from agent_hooks.cli import reserve_hints
from agent_hooks.cli._common import (
    emit_json,
    get_env,
    json_option,
    project_option,
    require_project,
    styled,
)
from agent_hooks.leases import lease_messages, writer_cards
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern, pattern_input, reservation


def until(res: dict[str, Any]) -> str:
    """When a reservation ends, in the person's local time."""
    return timestamps.local(float(res["expires_at"]))


MAX_TTL_TEXT = 24  # characters: longer than any TTL within 7 days, however written


def ttl_seconds(text: str) -> int:
    """`--ttl` in seconds, or a one-line error. What `reservation.parse_ttl` cannot
    take is refused first: digits that are not ASCII (`²`, Arabic-Indic digits)
    and numbers too long for `int()` (Python refuses more than 4,300 digits)."""
    shown = text if len(text) <= MAX_TTL_TEXT else text[:MAX_TTL_TEXT] + "…"
    raw = text.strip()
    if not raw.isascii() or not raw.isprintable():
        raise click.ClickException(
            f"--ttl {shown!a}: expected a number with s, m, h or d (e.g. 90s, 30m, 2h, 1d)"
        )
    if len(raw) > MAX_TTL_TEXT:
        raw = raw.lstrip("0") or "0"
        if len(raw) > MAX_TTL_TEXT:
            raise click.ClickException(f"--ttl {shown!r}: the maximum is 7d")
    try:
        return reservation.parse_ttl(raw)
    except reservation.ReservationError as exc:
        raise click.ClickException(str(exc)) from None


def checked_reason(reason: str) -> str:
    """A reason other agents will read: one line, printable, at most 2,000 characters."""
    if len(reason) > reservation.MAX_REASON:
        raise click.BadParameter(
            f"is {len(reason)} characters long; the limit is {reservation.MAX_REASON}",
            param_hint="--reason",
        )
    bad = next((c for c in reason if not c.isprintable()), None)
    if bad is not None:
        raise click.BadParameter(
            f"holds the control character {bad!r}; give one line of plain text",
            param_hint="--reason",
        )
    return reason


def granted_line(res: dict[str, Any], now: float, verb: str) -> str:
    """`reserved src/** (exclusive, id r-…, reason: …, 60 min left)`: the time left
    in minutes, as every listing and refusal gives it."""
    keep = ", kept after the session ends" if res.get("keep") else ""
    reason = f", reason: {res['reason']}" if res.get("reason") else ""
    return (
        f"{verb} {res['pattern']} ({res['mode']}, id {res['id']}{reason}, "
        f"{reservation.minutes_left(res, now)} min left{keep})"
    )


def public(res: dict[str, Any], now: float) -> dict[str, Any]:
    """A reservation as shown to people and in --json (no compiled form)."""
    out = {k: v for k, v in res.items() if k != "compiled"}
    out["minutes_left"] = reservation.minutes_left(res, now)
    out["until"] = until(res)
    return out


def _fail_on(outcome: reservation.Outcome) -> None:
    for note in outcome.notes:
        click.echo(f"{styled('warning', 'warn')}: {note}", err=True)


@click.command()
@click.argument("patterns", nargs=-1, required=True)
@click.option(
    "--reason",
    default="",
    help="Why: free text; an issue id such as farmhand-42 also "
    "becomes the agent's issue_id when it has none.",
)
@click.option(
    "--ttl", default="1h", show_default=True, help="How long: 90s, 30m, 2h, 1d (60s to 7d)."
)
@click.option(
    "--shared",
    is_flag=True,
    help="Shared: other shared holders may coexist; blocks nobody's edits.",
)
@click.option("--keep", is_flag=True, help="Keep after this conversation ends (until the TTL).")
@click.option(
    "--local",
    is_flag=True,
    help="In a ledger shared with other machines: reserve on this machine only, without "
    "the remote (agents on other machines are not held off).",
)
@project_option
@json_option
def reserve(
    patterns: tuple[str, ...],
    reason: str,
    ttl: str,
    shared: bool,
    keep: bool,
    local: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Claim PATTERNS (globs relative to the project root) for this agent.

    `*` and `?` stay within a directory, `**` spans directories, a directory name
    or trailing `/` covers everything below. All patterns are granted or none:
    if another agent holds an overlapping reservation (and either is exclusive)
    nothing is reserved and the holders are named.
    """
    env = get_env()
    root = require_project(env, project)
    agent = env.agent()
    me = env.writer()
    reason = checked_reason(reason)
    try:
        seconds = ttl_seconds(ttl)
        normalized = []
        notes: list[str] = []  # how brackets were read (a name on disk, or a class)
        for text in patterns:
            norm = pattern_input.normalize(text, root, os.getcwd(), notes)
            normalized.append((norm, pattern.compile(norm)))
        client = liveness.agent_client(env.environ)[1]
        outcome = reservation_store.reserve(
            Repo(root, env.state_dir, env.environ),
            writers.Writer(agent.name, me.conversation, client=client),
            normalized,
            env.now,
            reason=reason,
            ttl=seconds,
            shared=shared,
            keep=keep,
            holder=_holder(env.environ),
            local=local,
        )
    except (pattern.PatternError, reservation.ReservationError) as exc:
        raise click.ClickException(str(exc)) from None
    _fail_on(outcome)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    nothing_there = _matching_nothing(root, normalized) if outcome.changed else []
    if outcome.changed:
        _heartbeat(env.state_dir, root, me, env.environ, env.now)
    if as_json:
        emit_json(
            {
                "unmatched": nothing_there,
                "granted": [public(r, env.now) for r in outcome.changed],
                "conflicts": [
                    {"requested": req["pattern"], "held": public(held, env.now)}
                    for req, held in outcome.conflicts
                ]
                + [
                    {"requested": req["pattern"], "leased": rel, "writer": item.get("writer")}
                    for req, rel, item in outcome.leased
                ],
            }
        )
        if outcome.conflicts or outcome.leased:
            raise SystemExit(1)
        return
    if outcome.conflicts or outcome.leased:
        for req, held in outcome.conflicts:
            click.echo(
                f"{styled('conflict', 'bad')}: {req['pattern']} overlaps: "
                f"{reservation.describe(held, env.now)}",
                err=True,
            )
        for req, rel, item in outcome.leased:
            click.echo(
                f"{styled('conflict', 'bad')}: {req['pattern']} covers {rel}, which "
                f"{lease_messages.holder_label(item)} is changing (a lease)",
                err=True,
            )
        _quoting_hint(patterns)
        raise click.ClickException(
            "nothing was reserved; see `agent-hooks reservations`, reserve something else, or wait"
        )
    if agent.name is None and me.conversation:
        click.echo(
            f"warning: AGENT_NAME is unset: this belongs to this conversation ({me.conversation})",
            err=True,
        )
    for res in outcome.changed:
        click.echo(granted_line(res, env.now, "reserved"))
    for line in reserve_hints.unmatched_lines(nothing_there):
        click.echo(f"{styled('warning', 'warn')}: {line}", err=True)


def _matching_nothing(root: str, normalized: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The patterns just reserved that match no file of the project (a typo protects
    nothing), each with the nearest existing path when one is close."""
    return reserve_hints.unmatched(normalized, reserve_hints.project_files(root))


def _quoting_hint(typed: tuple[str, ...]) -> None:
    """A refused list that the shell expanded from an unquoted glob: say so."""
    glob = reserve_hints.expanded_by_shell(typed, os.getcwd())
    if glob is not None:
        click.echo(
            f"hint: the shell expanded an unquoted pattern into these {len(typed)} paths; "
            f"quote it to reserve the pattern itself, e.g. agent-hooks reserve {glob}",
            err=True,
        )


@click.command()
@click.argument("patterns", nargs=-1)
@click.option("--id", "ids", multiple=True, metavar="ID", help="A reservation id (repeatable).")
@click.option(
    "--all", "everything", is_flag=True, help="All of this agent's reservations in the project."
)
@click.option(
    "--lease",
    "leases",
    multiple=True,
    metavar="PATH",
    help="With --force: the file another writer is changing (repeatable).",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --id or --lease: release another agent's reservation or lease (for people; "
    "the holder is named, it is logged, and the holder is told).",
)
@click.option(
    "--local",
    is_flag=True,
    help="In a ledger shared with other machines: release here now, and on the remote at "
    "this machine's next sync that reaches it (when the remote does not answer).",
)
@project_option
@json_option
def release(
    patterns: tuple[str, ...],
    ids: tuple[str, ...],
    leases: tuple[str, ...],
    everything: bool,
    force: bool,
    local: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Release exactly the named reservations: PATTERNS (as reserved), --id, or --all.
    A person can also free a file a writer is changing: --force --lease PATH."""
    if leases and not force:
        raise click.UsageError("--lease goes with --force (a lease ends by itself otherwise)")
    if leases and (patterns or ids or everything):
        raise click.UsageError("--lease goes alone: release leases or reservations, not both")
    if not (patterns or ids or everything or leases):
        raise click.UsageError("name PATTERNS, --id ID or --all")
    env = get_env()
    root = require_project(env, project)
    agent = env.agent()
    if leases:
        from agent_hooks.cli import release_lease

        user = env.environ.get("USER") or env.environ.get("LOGNAME")
        by = f'agent "{agent.name}"' if agent.name else (user or "a person")
        released = release_lease.force(env, root, leases, agent.name, by)
        if as_json:
            emit_json({"released_leases": released})
        else:
            for item in released:
                click.echo(f"released the lease on {item['path']} of {item['holder']}")
        return
    me = env.writer()
    try:
        names = [pattern_input.normalize(text, root, os.getcwd()) for text in patterns]
        outcome = reservation_store.release(
            Repo(root, env.state_dir, env.environ),
            writers.Writer(agent.name, me.conversation),
            env.now,
            patterns=names,
            ids=list(ids),
            everything=everything,
            force=force,
            forced_by=_person(env.environ, agent.name),
            offline=local,
        )
    except (pattern.PatternError, reservation.ReservationError) as exc:
        raise click.ClickException(str(exc)) from None
    _fail_on(outcome)
    freed = _release_own_leases(env.state_dir, root, me, env.now) if everything else []
    for res in outcome.changed:
        if reservation.owner(res) != me.owner:
            _tell_holder(env.state_dir, res, agent.name, env.now)
            from agent_hooks import log

            log.log(
                env.state_dir,
                "release --force",
                agent.name or "-",
                f"released {res['id']} ({res['pattern']}) of {writers.describe(res)} in {root}",
                env.now,
            )
    if as_json:
        emit_json(
            {
                "released": [public(r, env.now) for r in outcome.changed],
                "released_leases": freed,
                "not_held": outcome.unmatched,
            }
        )
    else:
        for res in outcome.changed:
            click.echo(f"released {res['pattern']} (id {res['id']})")
        for rel in freed:
            click.echo(f"released the lease on {rel}")
        if not outcome.changed and not freed and everything:
            click.echo("nothing to release")
    if outcome.unmatched:
        person = liveness.agent_process(env.environ) is None
        raise click.ClickException(
            _not_held(env.state_dir, root, outcome.unmatched, env.now, person)
        )


@click.command()
@click.argument("patterns", nargs=-1)
@click.option("--ttl", default="1h", show_default=True, help="Extend to at least now + TTL.")
@click.option(
    "--local",
    is_flag=True,
    help="In a ledger shared with other machines: renew here now, and on the remote at "
    "this machine's next sync that reaches it (when the remote does not answer).",
)
@project_option
@json_option
def renew(
    patterns: tuple[str, ...], ttl: str, local: bool, project: str | None, as_json: bool
) -> None:
    """Extend this agent's live reservations (PATTERNS, or all). An expired one is
    gone: reserve it again."""
    env = get_env()
    root = require_project(env, project)
    agent = env.agent()
    try:
        seconds = ttl_seconds(ttl)
        names = [pattern_input.normalize(text, root, os.getcwd()) for text in patterns]
        outcome = reservation_store.renew(
            Repo(root, env.state_dir, env.environ),
            writers.Writer(agent.name, None),
            env.now,
            patterns=names,
            ttl=seconds,
            offline=local,
        )
    except (pattern.PatternError, reservation.ReservationError) as exc:
        raise click.ClickException(str(exc)) from None
    _fail_on(outcome)
    if as_json:
        emit_json(
            {
                "renewed": [public(r, env.now) for r in outcome.changed],
                "not_held": outcome.unmatched,
            }
        )
    else:
        for res in outcome.changed:
            click.echo(granted_line(res, env.now, "renewed"))
        if not outcome.changed and not patterns:
            click.echo("no live reservation to renew")
    if outcome.unmatched:
        raise click.ClickException(
            "not held (expired reservations cannot be renewed; reserve again): "
            + ", ".join(outcome.unmatched)
        )


@click.command()
@click.argument("setting", type=click.Choice(["on", "off", "show"]), default="show")
@project_option
@json_option
def strict(setting: str, project: str | None, as_json: bool) -> None:
    """Strict mode for the project: every edit needs the editing agent's own
    reservation. AGENT_HOOKS_STRICT=1/0 in an agent's environment overrides it."""
    env = get_env()
    root = require_project(env, project)
    if setting != "show":
        try:
            reservation_store.set_strict(Repo(root, env.state_dir), setting == "on", env.now)
        except reservation.ReservationError as exc:
            raise click.ClickException(str(exc)) from None
    _, value = reservation_store.live(Repo(root, env.state_dir), env.now)
    if as_json:
        emit_json({"project_root": root, "strict": value})
    else:
        click.echo(f"strict mode is {'on' if value else 'off'} for {root}")


def _person(environ: Any, agent: str | None) -> str:
    user = environ.get("USER") or environ.get("LOGNAME") or "a person"
    return f'agent "{agent}"' if agent else f"{user} (release --force)"


def _not_held(state_dir: str, root: str, names: list[str], now: float, person: bool) -> str:
    """Why release let go of nothing under these names, in one line: a name another
    holder holds names that holder and what can be done (a person at a terminal:
    `release --force` with its ids; an agent: wait, or ask the user); any other
    was never reserved here, has expired, or was released."""
    live = reservation_store.listing(Repo(root, state_dir), now).live
    parts, ids, nobodys = [], [], []
    for name in names:
        other = next((r for r in live if name in (r["id"], r["pattern"])), None)
        if other is None:
            nobodys.append(name)
            continue
        shown = name if name == other["pattern"] else f"{name} ({other['pattern']})"
        parts.append(f"{shown} is held by {writers.describe(other)}, not by you")
        ids.append(other["id"])
    if nobodys:
        parts.append(
            ", ".join(nobodys) + " is not held (never reserved here, expired, or released)"
        )
    if ids and person:
        parts.append(
            "to take it from its holder: `agent-hooks release --force "
            + " ".join(f"--id {rid}" for rid in dict.fromkeys(ids))
            + "`"
        )
    elif ids:
        parts.append("only its holder releases it: wait for it, or ask the user")
    return "; ".join(parts)


def _tell_holder(state_dir: str, res: dict[str, Any], by: str | None, now: float) -> None:
    """A force-released holder hears of it at its next hook (same state directory);
    the ledger's `dropped` list tells it anywhere at its next SessionStart."""
    from agent_hooks.agents import state_file

    text = (
        f"agent-hooks: your reservation {res['pattern']} ({res['id']}) was released by "
        f"{f'agent {by}' if by else 'a person'} with `release --force`; do not edit there "
        "before reserving it again."
    )
    state_file.tell(state_dir, res.get("agent"), text, now)


def _heartbeat(state_dir: str, root: str, me: Any, environ: Any, now: float) -> None:
    """A reservation's owner is heard from now (how other hosts judge it)."""
    from agent_hooks import writers
    from agent_hooks.ledger import ledger_location

    owner = writers.Writer(me.agent, me.conversation)
    pid = liveness.agent_process(environ)
    writer_cards.heartbeat(ledger_location.directory(state_dir, root), owner, pid, now)


def _release_own_leases(state_dir: str, root: str, me: Any, now: float) -> list[str]:
    """`release --all` frees the caller's leases too (issue 18): the files its
    writers (its conversation, and its subagents in it) are changing in this
    work tree, so others need not wait for them to lapse."""
    from agent_hooks import repository
    from agent_hooks.leases import lease_release
    from agent_hooks.ledger import ledger_location

    worktree = repository.worktree_id(root)

    def mine(item: dict[str, Any]) -> bool:
        return (
            str(item.get("writer")).partition("#")[0] == me.owner
            and item.get("worktree") == worktree
            and (me.conversation is None or item.get("conversation") == me.conversation)
        )

    try:
        dropped = lease_release.release(ledger_location.directory(state_dir, root), mine, now)
    except OSError as exc:
        click.echo(f"warning: leases not released: {exc}", err=True)
        return []
    return sorted({rel for rel, _ in dropped})


def _holder(environ: Any) -> dict[str, Any]:
    """The client process a reservation made now lives with (`--keep` aside); from
    a plain shell (no agent process above the command) the person at it, by user
    name: a person's reservation lives by its expiry alone, or until released."""
    pid = liveness.agent_process(environ)
    if pid is not None:
        return liveness.process(pid)
    return {"person": user_name(environ)}


def user_name(environ: Any) -> str:
    """The person at this terminal, as people know them: USER, LOGNAME, else the
    password database's name for this uid (one line, at most 64 characters)."""
    name = environ.get("USER") or environ.get("LOGNAME")
    if not name:
        import pwd

        try:
            name = pwd.getpwuid(os.getuid()).pw_name
        except KeyError:
            name = str(os.getuid())
    return reservation.one_line(name, 64)


def register(group: click.Group) -> None:
    for command in (reserve, release, renew, strict):
        group.add_command(command)
