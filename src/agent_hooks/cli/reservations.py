"""`agent-hooks reservations | check`: who holds what, and would an edit pass."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks.cli._common import emit_json, get_env, json_option, project_option, require_project
from agent_hooks.cli.reserve import public, until
from agent_hooks.reservations import enforcement, index, reservation
from agent_hooks.reservations import store as reservation_store


@click.command()
@click.option("--all-projects", is_flag=True, help="Every project with reservations.")
@project_option
@json_option
def reservations(all_projects: bool, project: str | None, as_json: bool) -> None:
    """List live reservations: holder, pattern, mode, reason and time left."""
    env = get_env()
    roots = (
        reservation_store.known_projects(env.state_dir)
        if all_projects
        else [require_project(env, project)]
    )
    rows = []
    for root in roots:
        held, _ = reservation_store.live(env.state_dir, root, env.now)
        rows += [public(r, env.now) for r in held]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no live reservations" + ("" if all_projects else f" in {roots[0]}"))
        return
    for root in roots:
        mine = [r for r in rows if r["project_root"] == root]
        if not mine:
            continue
        click.echo(f"# {root}")
        for res in mine:
            holder = res["agent"] or "(no AGENT_NAME)"
            keep = " keep" if res.get("keep") else ""
            click.echo(
                f"{holder:<24} {res['pattern']:<32} {res['mode']:<9} "
                f"{res['minutes_left']:>4} min left  {res.get('reason') or '-'}  "
                f"[{res['id']}{keep}]"
            )


@click.command()
@click.argument("paths", nargs=-1, required=True)
@project_option
@json_option
def check(paths: tuple[str, ...], project: str | None, as_json: bool) -> None:
    """Would this agent's edit of PATHS be allowed? Exit 1 if any would be denied."""
    import os

    env = get_env()
    root = require_project(env, project)
    me = env.agent().name
    results: list[dict[str, Any]] = []
    cwd = os.getcwd()
    base = (
        cwd if cwd == root or cwd.startswith(root.rstrip("/") + "/") else root
    )  # as `reserve` reads it
    for path in paths:
        places = enforcement.locate(path, base, root)
        if not places:
            results.append({"path": path, "allowed": True, "why": "in no project"})
            continue
        verdicts = [
            _verdict(env.state_dir, target_root, rel, me, env.now) for target_root, rel in places
        ]
        results.append(next((v for v in verdicts if not v["allowed"]), verdicts[0]))
    if as_json:
        emit_json(results)
    else:
        for item in results:
            if item["allowed"]:
                click.echo(
                    f"allowed  {item['path']}" + (f" ({item['why']})" if "why" in item else "")
                )
            elif "held_by" in item:
                who = "; ".join(
                    f"{h['agent'] or '(no AGENT_NAME)'} holds {h['pattern']} "
                    f"(reason {h['reason'] or '-'}, {h['minutes_left']} min left)"
                    for h in item["held_by"]
                )
                click.echo(f"denied   {item['path']}: {who}")
            else:
                click.echo(f"denied   {item['path']}: {item['why']}")
    if not all(item["allowed"] for item in results):
        raise SystemExit(1)


def _verdict(state_dir: str, root: str, rel: str, me: str | None, now: float) -> dict[str, Any]:
    """Would `me`'s edit of `rel` in project `root` pass, and if not, why."""
    hot = index.load_hot(state_dir, root)
    verdict: dict[str, Any] = {"path": rel, "project_root": root, "allowed": True}
    holders = enforcement.blocking_edit(hot, rel, me, now) if hot is not None else []
    if holders:
        verdict["allowed"] = False
        verdict["held_by"] = [
            {
                "agent": h["agent"],
                "pattern": h["pattern"],
                "reason": h["reason"],
                "until": until(h),
                "minutes_left": reservation.minutes_left(h, now),
            }
            for h in (index.as_dict(rec) for rec in holders)
        ]
    elif hot is not None and hot.strict and not enforcement.owns(hot, rel, me, now):
        verdict["allowed"] = False
        verdict["why"] = "strict mode: not reserved by you"
    return verdict


def register(group: click.Group) -> None:
    group.add_command(reservations)
    group.add_command(check)
