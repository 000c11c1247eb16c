"""`agent-hooks guard install | uninstall | status | check`: the pre-commit guard
that applies reservations at commit time (docs/adr/0011-git-guard-and-mcp-interop.md).

The hook script calls `main` of this module directly (not the whole CLI), so the
check starts fast and works whichever other commands exist.
"""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks import switches
from agent_hooks.cli._common import Group, emit_json, get_env, json_option, os_error_text
from agent_hooks.interop import git_guard, git_guard_check, guard_record
from agent_hooks.reservations import reservation
from agent_hooks.wording import plural

repo_option = click.option(
    "--repo", metavar="DIR", help="A directory inside the git work tree (default: the current one)."
)


def _repo(given: str | None) -> str:
    path = os.path.abspath(given or os.getcwd())
    if not os.path.isdir(path):
        raise click.ClickException(f"--repo {given}: not a directory")
    return path


@click.group(cls=Group)
def guard() -> None:
    """A git pre-commit hook that refuses commits staging files another agent
    holds exclusively (warn-only mode available; bypass one commit with
    AGENT_HOOKS_GUARD=off or git commit --no-verify)."""


@guard.command()
@repo_option
@click.option(
    "--warn-only", is_flag=True, help="Print what would be refused, but let the commit through."
)
@json_option
def install(repo: str | None, warn_only: bool, as_json: bool) -> None:
    """Install the hook where git looks for it (core.hooksPath honoured). An existing
    pre-commit hook is kept: renamed to pre-commit.agent-hooks-chained and run
    first; its failure still stops the commit. Running install again is harmless."""
    python = git_guard.installing_python()
    if not git_guard.python_can_import(python):
        raise click.ClickException(
            f"{python} -I cannot import agent_hooks; the hook could not run it"
        )
    try:
        layout, done = git_guard.install(_repo(repo), python, "warn" if warn_only else "block")
    except git_guard.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    env = get_env()
    try:  # so that ./install.sh --uninstall --purge finds it
        guard_record.add(env.state_dir, layout.top, layout.hook, env.now)
    except OSError as exc:
        click.echo(
            f"warning: could not record the guard in {guard_record.path(env.state_dir)}: "
            f"{os_error_text(exc)}",
            err=True,
        )
    if as_json:
        emit_json(
            {
                "hook": layout.hook,
                "result": done,
                "mode": "warn" if warn_only else "block",
                "chained": layout.chained if os.path.lexists(layout.chained) else None,
                "python": python,
            }
        )
        return
    click.echo(f"{layout.hook}: {done}" + (" (warn-only)" if warn_only else ""))
    if os.path.lexists(layout.chained):
        click.echo(f"chained: {layout.chained} runs first")


@guard.command()
@repo_option
@json_option
def uninstall(repo: str | None, as_json: bool) -> None:
    """Remove the hook and put back the one it chained, exactly as it was."""
    try:
        layout, done = git_guard.uninstall(_repo(repo))
    except git_guard.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        guard_record.remove(get_env().state_dir, layout.hook)
    except OSError:
        pass  # a stale entry is harmless: purge checks the file before removing it
    if as_json:
        emit_json({"hook": layout.hook, "result": done})
    else:
        click.echo(f"{layout.hook}: {done}")


@guard.command()
@repo_option
@json_option
def status(repo: str | None, as_json: bool) -> None:
    """Is the guard installed here, in which mode, and what does it chain?"""
    try:
        info = git_guard.status(_repo(repo))
    except git_guard.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(info)
        return
    click.echo(f"repository: {info['repo']}")
    configured = info["core_hooks_path"]
    click.echo(
        f"hooks dir:  {info['hooks_dir']}"
        + (f" (core.hooksPath = {configured})" if configured else "")
    )
    if info["installed"]:
        missing = "" if info["python_ok"] else " — MISSING: the hook lets every commit through"
        click.echo(f"guard:      installed ({info['mode']} mode), runs {info['python']}{missing}")
    else:
        other = " (another pre-commit hook is there)" if info["other_hook"] else ""
        click.echo(f"guard:      not installed{other}")
    click.echo(f"chained:    {info['chained'] or '-'}")


@guard.command()
@repo_option
@click.option(
    "--mode",
    type=click.Choice(git_guard.MODES),
    default="block",
    show_default=True,
    help="warn: report, but exit 0.",
)
@click.option("--warn-only", is_flag=True, help="Same as --mode warn.")
@click.option("--hook", is_flag=True, hidden=True, help="Run by the hook: exit 9 when refused.")
@json_option
def check(repo: str | None, mode: str, warn_only: bool, hook: bool, as_json: bool) -> None:
    """Would the staged changes be refused? Exit 1 if so (the hook runs this).
    AGENT_HOOKS_GUARD=off skips the check, =warn only reports."""
    env = get_env()
    where = _repo(repo)
    if switches.is_off(env.environ, switches.GUARD):
        _report(
            as_json,
            {"allowed": True, "bypassed": True, "blocked": []},
            f"{git_guard.BYPASS_ENV}=off: reservations not checked",
        )
        return
    me = env.agent().name
    owner = env.writer().owner
    setting = env.environ.get(switches.GUARD, "").strip().lower()
    warn = warn_only or mode == "warn" or setting == "warn"
    try:
        top = git_guard.top_level(where)
        paths = git_guard_check.staged(where)
    except git_guard.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    found = git_guard_check.findings(env.state_dir, top, owner, paths, env.now)
    if as_json:
        emit_json(
            {
                "repo": top,
                "agent": me,
                "mode": "warn" if warn else "block",
                "checked": len(paths),
                "allowed": warn or not found,
                "bypassed": False,
                "blocked": [
                    {
                        "path": f.staged.path,
                        "change": f.staged.change,
                        "project_root": f.project_root,
                        "held_by": [_holder(h, env.now) for h in f.holders],
                    }
                    for f in found
                ],
            }
        )
    elif found:
        click.echo(git_guard_check.message(found, top, env.now, warn), err=True)
    elif not hook:
        held = "none is" if len(paths) != 1 else "it is not"
        click.echo(
            f"ok: {plural(len(paths), 'staged path')}; {held} held exclusively by another agent"
        )
    if found and not warn:
        raise SystemExit(git_guard.BLOCKED_EXIT if hook else 1)


def _holder(res: dict[str, Any], now: float) -> dict[str, Any]:
    return {
        "agent": res["agent"],
        "pattern": res["pattern"],
        "reason": res["reason"],
        "id": res["id"],
        "expires_at": res["expires_at"],
        "minutes_left": reservation.minutes_left(res, now),
    }


def _report(as_json: bool, doc: dict[str, Any], text: str) -> None:
    if as_json:
        emit_json(doc)
    else:
        click.echo(text, err=True)


def main(prog_name: str = "agent-hooks guard") -> None:
    """Entry point of the hook script (`python -I -c ...`)."""
    guard.main(prog_name=prog_name)


def register(group: click.Group) -> None:
    group.add_command(guard)
