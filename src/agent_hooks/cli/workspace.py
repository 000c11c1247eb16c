"""`agent-hooks workspace show | close | sweep`: the workspace bound to your
conversation, and the project's idle ones."""

from __future__ import annotations

from typing import Any

import click

from agent_hooks import timestamps
from agent_hooks.agents import state_file
from agent_hooks.cli._common import (
    emit_json,
    get_env,
    json_option,
    os_error_text,
    project_option,
    require_project,
)
from agent_hooks.cli.context import current_workspace, require_current
from agent_hooks.wording import plural
from agent_hooks.workspaces import workspace_cleanup, workspace_manifest, workspace_store


@click.group("workspace")
def workspace_group() -> None:
    """Your context-hand-off workspace (.tmp/sessions/<id>/) and clean-up."""


@workspace_group.command("show")
@project_option
@json_option
def show(project: str | None, as_json: bool) -> None:
    """Show the workspace bound to your current conversation."""
    env = get_env()
    root = require_project(env, project)
    ws = current_workspace(env, root)
    if ws is None:
        if as_json:
            emit_json(None)
        else:
            click.echo(
                "No workspace is bound to your current conversation "
                "(`agent-hooks context add` creates one)."
            )
        return
    raw, problem = workspace_store.read_manifest(ws)
    manifest = (
        workspace_manifest.normalize_manifest(raw, ws.id, env.now) if raw is not None else None
    )
    if as_json:
        emit_json({"id": ws.id, "path": ws.path, "problem": problem, "manifest": manifest})
        return
    click.echo(f"workspace: {ws.id}")
    click.echo(f"path:      {ws.path}")
    if manifest is None:
        click.echo(f"manifest:  {problem}")
        return
    click.echo(f"created:   {timestamps.local_iso(manifest['created_at'])}")
    click.echo(f"active:    {timestamps.local_iso(manifest['last_activity'])}")
    click.echo(f"files ({len(manifest['context_files'])}):")
    for rel, entry in manifest["context_files"].items():
        click.echo(f"  {rel}  (keywords: {', '.join(entry['keywords'])})")


@workspace_group.command("close")
@project_option
@json_option
def close(project: str | None, as_json: bool) -> None:
    """Close your workspace: delete the files its manifest tracks, the manifest and
    the directories left empty. Untracked files are never deleted."""
    env = get_env()
    root = require_project(env, project)
    ws = require_current(env, root)
    result = workspace_cleanup.close(ws, env.now)
    if result.closed:
        agent = env.agent()

        def unbind(doc: dict[str, Any]) -> None:
            record = doc.get("workspace")
            if isinstance(record, dict) and record.get("id") == ws.id:
                doc["workspace"] = None

        try:
            state_file.update(
                agent, unbind, env.now, lambda m: click.echo(f"warning: {m}", err=True)
            )
        except OSError as exc:  # closed all the same; a binding to a gone workspace is inert
            click.echo(
                f"warning: workspace {ws.id} is closed, but your state still names it "
                f"({os_error_text(exc)}); that does no harm",
                err=True,
            )
    if as_json:
        emit_json(result.as_dict())
    else:
        _print_closed(result)
    if not result.closed:
        raise click.ClickException(result.warning or f"workspace {ws.id} was not closed")


def _print_closed(result: workspace_cleanup.Closed) -> None:
    click.echo(
        f"workspace {result.ws.id}: {'closed' if result.closed else 'left alone'}; "
        f"{plural(len(result.removed), 'tracked file')} deleted"
    )
    for item in result.left:
        click.echo(f"  kept {item}")
    if result.warning and result.closed:
        click.echo(f"warning: {result.warning}", err=True)


@workspace_group.command("sweep")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@project_option
@json_option
def sweep(dry_run: bool, project: str | None, as_json: bool) -> None:
    """Close the project's workspaces idle for more than 24 h (by the manifest's
    last_activity). Yours is spared; a workspace without a readable manifest is left
    alone with a warning."""
    env = get_env()
    root = require_project(env, project)
    mine = current_workspace(env, root)
    swept = workspace_cleanup.sweep(root, env.now, keep=[mine.id] if mine else [], dry_run=dry_run)
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "closed": swept.ids,
                "warnings": swept.warnings,
                "details": [
                    c.as_dict() for c in swept.closed if isinstance(c, workspace_cleanup.Closed)
                ],
            }
        )
        return
    verb = "would close" if dry_run else "closed"
    click.echo(
        f"{verb} {plural(len(swept.ids), 'idle workspace')}"
        + (": " + ", ".join(swept.ids) if swept.ids else "")
    )
    for warning in swept.warnings:
        click.echo(f"warning: {warning}", err=True)


def register(group: click.Group) -> None:
    group.add_command(workspace_group)
