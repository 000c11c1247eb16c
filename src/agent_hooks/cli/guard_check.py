"""`agent-hooks guard check`: what the guard's hooks run — the staged changes of a
commit (pre-commit), or with `--ref-updates` the branches a reference transaction
moves (`OLD NEW REF` lines on stdin) — and what a person runs to ask "would this
be refused?".

Invariants: exit 0 allows, `BLOCKED_EXIT` (with `--hook`; 1 without) refuses, any
other status makes the hook fail open. Every refusal, warning and bypass is one
line in the agent-hooks log (a trace for people: docs/adr/0017-trust-model.md).
pre-commit records the commit it let through (`ref_check.remember_judged`),
so the branch update of that same commit is not reported a second time.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agent_hooks import log, switches, writers
from agent_hooks.cli._common import Env, emit_json, get_env, json_option
from agent_hooks.git_guard import commit_check, guard_hooks, ref_check
from agent_hooks.leases import lease_messages
from agent_hooks.reservations import reservation
from agent_hooks.wording import plural

repo_option = click.option(
    "--repo", metavar="DIR", help="A directory inside the git work tree (default: the current one)."
)


def repo_path(given: str | None) -> str:
    path = os.path.abspath(given or os.getcwd())
    if not os.path.isdir(path):
        raise click.ClickException(f"--repo {given}: not a directory")
    return path


@click.command()
@repo_option
@click.option(
    "--mode",
    type=click.Choice(guard_hooks.MODES),
    default="block",
    show_default=True,
    help="warn: report, but exit 0.",
)
@click.option("--warn-only", is_flag=True, help="Same as --mode warn.")
@click.option(
    "--ref-updates",
    is_flag=True,
    help="Read `OLD NEW REF` lines on stdin (as git gives them to reference-transaction)"
    " and check the local branches they move, instead of the staged changes.",
)
@click.option("--hook", is_flag=True, hidden=True, help="Run by a hook: exit 9 when refused.")
@json_option
def check(
    repo: str | None, mode: str, warn_only: bool, ref_updates: bool, hook: bool, as_json: bool
) -> None:
    """Would the staged changes (or, with --ref-updates, the branch updates) be
    refused? Exit 1 if so (the hooks run this). AGENT_HOOKS_GUARD=off skips the
    check, =warn only reports."""
    env = get_env()
    where = repo_path(repo)
    bypassed = switches.is_off(env.environ, switches.GUARD)
    try:
        me, writer = env.agent().name, env.writer()
    except click.ClickException:
        if not bypassed:
            raise
        me, writer = None, writers.nobody()  # a bad AGENT_NAME does not stop a bypass
    setting = env.environ.get(switches.GUARD, "").strip().lower()
    warn = warn_only or mode == "warn" or setting == "warn"
    try:
        top = guard_hooks.top_level(where)
        if ref_updates:
            updates = ref_check.parse_updates(sys.stdin.read())
            moved = ref_check.changes(where, updates)
            paths = [p for change in moved for p in change.paths]
            what = ", ".join(f"branch {change.update.branch}" for change in moved)
        else:
            moved, paths, what = [], commit_check.staged(where), "commit"
    except guard_hooks.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    trace = _Trace(env, me, top) if hook else None
    if bypassed:
        if hook and not ref_updates:  # the branch update of this commit stays quiet
            ref_check.remember_judged(where, env.environ, env.now, "bypassed")
        _bypassed(as_json, what if paths else "", trace)
        return
    if ref_updates:
        here = ref_check.checked_out(where) if moved else ""
        found = [
            finding
            for change in moved
            for finding in commit_check.findings(
                env.state_dir,
                top,
                writer,
                change.paths,
                env.now,
                change.update.branch,
                environ=env.environ,
                leases=change.update.ref == here,  # the work tree's own branch
            )
        ]
    else:
        found = commit_check.findings(
            env.state_dir, top, writer, paths, env.now, environ=env.environ
        )
        if hook and (warn or not found):
            ref_check.remember_judged(where, env.environ, env.now, "warned" if found else "passed")
    branches = list(dict.fromkeys(f.branch for f in found if f.branch))
    if found and trace:
        held_in = ", ".join(f"branch {b}" for b in branches) if ref_updates else what
        trace.held("guard warned" if warn else "guard refused", held_in, found)
    if as_json:
        emit_json(_document(top, me, warn, len(paths), found, env.now))
    elif found and ref_updates:
        refs = [f"refs/heads/{b}" for b in branches]
        back = None if warn else ref_check.way_back(where, refs, env.environ)
        click.echo(ref_check.message(found, branches, top, env.now, warn, back), err=True)
    elif found:
        click.echo(commit_check.message(found, top, env.now, warn), err=True)
    elif not hook:
        counted = plural(len(paths), "path") + " changed by the branch updates"
        if not ref_updates:
            counted = plural(len(paths), "staged path")
        held = "it is not" if len(paths) == 1 else "none is"
        click.echo(f"ok: {counted}; {held} held exclusively by another agent")
    if found and not warn:
        raise SystemExit(guard_hooks.BLOCKED_EXIT if hook else 1)


class _Trace:
    """What a hook leaves in the agent-hooks log: refusals, warnings, bypasses."""

    def __init__(self, env: Env, agent: str | None, top: str) -> None:
        self.env, self.agent, self.top = env, agent or "-", top

    def write(self, event: str, text: str) -> None:
        log.log(self.env.state_dir, event, self.agent, text, self.env.now)

    def held(self, event: str, what: str, found: list[commit_check.Finding]) -> None:
        held = "; ".join(
            f"{f.staged.path} ({', '.join(sorted({str(h.get('agent') or '-') for h in f.holders + f.leases}))})"
            for f in found[:20]
        )
        more = f" and {len(found) - 20} more" if len(found) > 20 else ""
        self.write(event, f"{what} in {self.top}: held by others: {held}{more}")


def _bypassed(as_json: bool, what: str, trace: _Trace | None) -> None:
    """AGENT_HOOKS_GUARD=off: say so (a state, for the person who set it) and log it."""
    if what and trace:
        trace.write("guard bypassed", f"{switches.GUARD}=off: {what} in {trace.top} not checked")
    if as_json:
        emit_json({"allowed": True, "bypassed": True, "blocked": []})
    elif what:
        click.echo(f"agent-hooks guard: {switches.GUARD}=off: {what} not checked", err=True)


def _document(
    top: str,
    agent: str | None,
    warn: bool,
    checked: int,
    found: list[commit_check.Finding],
    now: float,
) -> dict[str, Any]:
    return {
        "repo": top,
        "agent": agent,
        "mode": "warn" if warn else "block",
        "checked": checked,
        "allowed": warn or not found,
        "bypassed": False,
        "blocked": [
            {
                "path": f.staged.path,
                "change": f.staged.change,
                "project_root": f.project_root,
                "branch": f.branch,
                "held_by": [_holder(h, now) for h in f.holders],
                "leased_by": [_leaser(held, now) for held in f.leases],
            }
            for f in found
        ],
    }


def _holder(res: dict[str, Any], now: float) -> dict[str, Any]:
    return {
        "agent": res["agent"],
        "pattern": res["pattern"],
        "reason": res["reason"],
        "id": res["id"],
        "expires_at": res["expires_at"],
        "minutes_left": reservation.minutes_left(res, now),
    }


def _leaser(held: dict[str, Any], now: float) -> dict[str, Any]:
    return {
        "writer": held.get("writer"),
        "agent": held.get("agent"),
        "conversation": held.get("conversation"),
        "agent_id": held.get("agent_id"),
        "label": held.get("label"),
        "written": held.get("written"),
        "expires": held.get("expires"),
        "minutes_left": lease_messages.minutes_until(held.get("expires"), now),
    }
