"""`agent-hooks reservations | check`: who holds what, and would an edit pass."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks import enforcement, reservation, reservation_store
from agent_hooks import reservation_index as index
from agent_hooks.cli._common import emit_json, get_env, json_option
from agent_hooks.cli.reserve import project_option, public, require_project, until


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
        place = enforcement.locate(path, base, root)
        if place is None:
            results.append({"path": path, "allowed": True, "why": "in no project"})
            continue
        target_root, rel = place
        hot = index.load_hot(env.state_dir, target_root)
        holders = enforcement.blocking_edit(hot, rel, me, env.now) if hot is not None else []
        if holders:
            held = [index.as_dict(rec) for rec in holders]
            results.append(
                {
                    "path": rel,
                    "project_root": target_root,
                    "allowed": False,
                    "held_by": [
                        {
                            "agent": h["agent"],
                            "pattern": h["pattern"],
                            "reason": h["reason"],
                            "until": until(h),
                            "minutes_left": reservation.minutes_left(h, env.now),
                        }
                        for h in held
                    ],
                }
            )
        elif hot is not None and hot.strict and not enforcement.owns(hot, rel, me, env.now):
            results.append(
                {
                    "path": rel,
                    "project_root": target_root,
                    "allowed": False,
                    "why": "strict mode: not reserved by you",
                }
            )
        else:
            results.append({"path": rel, "project_root": target_root, "allowed": True})
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


def register(group: click.Group) -> None:
    group.add_command(reservations)
    group.add_command(check)
