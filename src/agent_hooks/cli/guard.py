"""`agent-hooks guard install | uninstall | status | check`: the git hooks that apply
reservations at commit time and whenever a local branch moves
(docs/adr/0011-git-guard-and-mcp-interop.md).

The hook scripts call `main` of this module directly (not the whole CLI), so the
check starts fast and works whichever other commands exist.
"""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks.cli import guard_check
from agent_hooks.cli._common import Group, emit_json, get_env, json_option, os_error_text
from agent_hooks.cli.guard_check import repo_option
from agent_hooks.cli.guard_check import repo_path as _repo
from agent_hooks.git_guard import guard_hooks, guard_record, ref_check


@click.group(cls=Group)
def guard() -> None:
    """Git hooks that keep changes to files another agent holds exclusively off local
    branches: pre-commit refuses a commit staging them, reference-transaction refuses
    to move a branch (merge, fast-forward, cherry-pick, revert, rebase, am, update-ref,
    branch -f) when that changes them. Warn-only mode available.

    For people, not agents: AGENT_HOOKS_GUARD=off lets one git command through
    (=warn only reports); git's --no-verify skips pre-commit but not the branch check.
    agent-hooks guards cooperative agents against accidents, not against deliberate
    bypass: see docs/trust-model.md."""


@guard.command()
@repo_option
@click.option("--warn-only", is_flag=True, help="Print what would be refused, but let git go on.")
@json_option
def install(repo: str | None, warn_only: bool, as_json: bool) -> None:
    """Install the hooks where git looks for them (core.hooksPath honoured). An
    existing hook is kept: renamed to <hook>.agent-hooks-chained and run first; its
    failure still stops git. Running install again is harmless."""
    python = guard_hooks.installing_python()
    if not guard_hooks.python_can_import(python):
        raise click.ClickException(
            f"{python} -I cannot import agent_hooks; the hook could not run it"
        )
    where = _repo(repo)
    try:
        layout, done = guard_hooks.install(where, python, "warn" if warn_only else "block")
    except guard_hooks.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    env = get_env()
    try:  # so that ./install.sh --uninstall --purge finds them
        guard_record.add(env.state_dir, layout.top, [hook for hook, _ in done], env.now)
    except OSError as exc:
        click.echo(
            f"warning: could not record the guard in {guard_record.path(env.state_dir)}: "
            f"{os_error_text(exc)}",
            err=True,
        )
    version = guard_hooks.git_version(where)
    chained = [guard_hooks.chained_path(hook) for hook, _ in done]
    if as_json:
        emit_json(
            {
                "hooks": [
                    {"hook": hook, "result": result, "chained": c if os.path.lexists(c) else None}
                    for (hook, result), c in zip(done, chained, strict=True)
                ],
                "mode": "warn" if warn_only else "block",
                "python": python,
                "git_version": ".".join(map(str, version)) if version else None,
            }
        )
        return
    for (hook, result), c in zip(done, chained, strict=True):
        click.echo(f"{hook}: {result}" + (" (warn-only)" if warn_only else ""))
        if os.path.lexists(c):
            click.echo(f"chained: {c} runs first")
    if not guard_hooks.runs_reference_transaction(version):
        click.echo(
            f"warning: this git ({'.'.join(map(str, version)) if version else 'version unknown'})"
            " does not run reference-transaction hooks (git 2.28 does): only commits are checked",
            err=True,
        )


@guard.command()
@repo_option
@json_option
def uninstall(repo: str | None, as_json: bool) -> None:
    """Remove the hooks and put back the ones they chained, exactly as they were."""
    where = _repo(repo)
    try:
        layout, done = guard_hooks.uninstall(where)
    except guard_hooks.GuardError as exc:
        raise click.ClickException(str(exc)) from None
    ref_check.forget_judged(where)
    try:
        guard_record.remove(get_env().state_dir, layout.hook_paths)
    except OSError:
        pass  # a stale entry is harmless: purge checks the file before removing it
    if as_json:
        emit_json({"hooks": [{"hook": hook, "result": result} for hook, result in done]})
    else:
        for hook, result in done:
            click.echo(f"{hook}: {result}")


@guard.command()
@repo_option
@json_option
def status(repo: str | None, as_json: bool) -> None:
    """Is each guard hook installed here, in which mode, does git run it, and what
    does it chain?"""
    try:
        info = guard_hooks.status(_repo(repo))
    except guard_hooks.GuardError as exc:
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
    click.echo(f"git:        {info['git_version'] or 'version unknown'}")
    for item in info["hooks"]:
        click.echo(f"{item['name'] + ':':<23}{_hook_state(item)}")
        if item["chained"]:
            click.echo(f"{'':<23}chains {item['chained']} (runs first)")
    if not info["installed"]:
        click.echo("Run `agent-hooks guard install` to install what is missing.")


def _hook_state(item: dict[str, Any]) -> str:
    if not item["installed"]:
        other = f" (another {item['name']} hook is there)" if item["other_hook"] else ""
        return f"not installed{other}"
    state = f"installed ({item['mode']} mode), runs {item['python']}"
    if not item["python_ok"]:
        state += " — MISSING: the hook lets everything through"
    if not item["git_runs_it"]:
        state += " — this git never runs it (git 2.28 does)"
    return state


def main(prog_name: str = "agent-hooks guard") -> None:
    """Entry point of the hook script (`python -I -c ...`)."""
    guard.main(prog_name=prog_name)


def register(group: click.Group) -> None:
    group.add_command(guard)


guard.add_command(guard_check.check)
