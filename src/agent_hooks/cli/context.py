"""`agent-hooks context add | find | list | rm`: context files for hand-off to
subagents, in the workspace bound to the agent's current conversation."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agent_hooks import timestamps
from agent_hooks.agents import state_file
from agent_hooks.cli._common import (
    Env,
    emit_json,
    get_env,
    json_option,
    project_option,
    require_project,
)
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.workspaces import workspace, workspace_manifest, workspace_store

MAX_BODY = 1 << 20


def current_workspace(env: Env, project: str) -> workspace_store.Workspace | None:
    """The workspace bound to the agent's current conversation, if any."""
    agent = env.agent()
    doc, problem = state_file.read(agent, env.now)
    if problem:
        raise click.ClickException(f"{agent.state_path} is not valid JSON: {problem}")
    return workspace_store.bound(doc, project)


def require_current(env: Env, project: str) -> workspace_store.Workspace:
    ws = current_workspace(env, project)
    if ws is None:
        raise click.ClickException(
            "no workspace is bound to your current conversation in this project "
            "(`agent-hooks context add` creates one; `--all` searches every workspace)"
        )
    return ws


def warn(update: workspace_store.ManifestUpdate, ws: workspace_store.Workspace) -> None:
    if not update.held:
        click.echo(f"warning: the manifest lock of {ws.id} was busy; updated without it", err=True)
    if update.problem:
        click.echo(
            f"warning: the manifest of {ws.id} was unreadable ({update.problem}); "
            "a new one was begun",
            err=True,
        )


def entries(
    ws: workspace_store.Workspace,
    manifest: dict[str, Any],
    ranked: list[tuple[str, int]] | None = None,
) -> list[dict[str, Any]]:
    chosen = ranked if ranked is not None else [(rel, 0) for rel in manifest["context_files"]]
    out = []
    for rel, score in chosen:
        entry = manifest["context_files"][rel]
        out.append(
            {
                "workspace": ws.id,
                "relative": ws.project_relative(rel),
                "path": ws.file(rel),
                "created": entry["created"],
                "for": entry["for"],
                "keywords": entry["keywords"],
                "matched": score,
            }
        )
    return out


def _read_body(source: str) -> str:
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_BODY + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_BODY + 1)
    except OSError as exc:
        raise click.ClickException(f"--file {source}: {exc.strerror or exc}") from None
    if len(data) > MAX_BODY:
        raise click.ClickException(f"--file {source}: larger than {MAX_BODY >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise click.ClickException(f"--file {source}: not UTF-8 text") from None


@click.group("context")
def context_group() -> None:
    """Context files for hand-off to subagents (.tmp/sessions/<workspace>/)."""


@context_group.command("add")
@click.argument("task")
@click.option(
    "--category",
    "-c",
    required=True,
    metavar="C",
    help=f"One of: {', '.join(workspace.CATEGORIES)}.",
)
@click.option("--keywords", "-k", default="", metavar="K1,K2", help="Keywords to find it by.")
@click.option(
    "--for", "recipient", metavar="AGENT", help="Who it is for, e.g. @subagents/code/coder."
)
@click.option("--summary", help="Request Summary: what needs to be done.")
@click.option("--background", help="Background: relevant context.")
@click.option("--expected", help="Expected Output: what the subagent should produce.")
@click.option("--constraints", help="Constraints: limitations or requirements.")
@click.option("--file", "source", metavar="F|-", help="Take the content from file F (or stdin: -).")
@click.option("--replace", is_flag=True, help="Overwrite the context file if it exists.")
@project_option
@json_option
def add(
    task: str,
    category: str,
    keywords: str,
    recipient: str | None,
    summary: str | None,
    background: str | None,
    expected: str | None,
    constraints: str | None,
    source: str | None,
    replace: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Write TASK's context file (sections: request summary, background, expected output,
    constraints) and print its path.

    Each section you do not fill with --summary, --background, --expected or
    --constraints keeps the template's `[…]` placeholder: you are told which, and
    can edit the file or write it again with --replace. --file F (or - for stdin)
    gives the whole content instead. The workspace is created on first use and
    bound to your current conversation.
    """
    env = get_env()
    root = require_project(env, project)
    try:
        rel = workspace.context_path(category, workspace.slug(task))
        who = workspace.validate_recipient(recipient) if recipient is not None else None
        if source is not None and any((summary, background, expected, constraints)):
            raise workspace.WorkspaceError(
                "--file replaces the template: drop --summary/--background/--expected/--constraints"
            )
        body = _read_body(source) if source is not None else None
        agent = env.agent()
        ws, created = workspace_store.current_or_create(agent, root, env.now, _log)
        content = (
            workspace.wrap_body(task, ws.id, body)
            if body is not None
            else workspace.render_context(
                task,
                ws.id,
                summary=summary,
                background=background,
                expected=expected,
                constraints=constraints,
            )
        )
        words = [w for w in keywords.split(",") if w.strip()]
        update = workspace_store.write_context(
            ws, rel, content, env.now, recipient=who, keywords=words, replace=replace
        )
    except workspace.WorkspaceError as exc:
        raise click.ClickException(str(exc)) from None
    warn(update, ws)
    sections = (
        ("Request Summary", "--summary", summary),
        ("Background", "--background", background),
        ("Expected Output", "--expected", expected),
        ("Constraints", "--constraints", constraints),
    )
    unfilled = [] if body is not None else [(n, o) for n, o, v in sections if not (v and v.strip())]
    if as_json:
        entry = update.doc["context_files"][rel]
        emit_json(
            {
                "path": ws.file(rel),
                "relative": ws.project_relative(rel),
                "workspace": ws.id,
                "workspace_created": created,
                "placeholders": [name for name, _ in unfilled],
                **entry,
            }
        )
        return
    click.echo(ws.file(rel))
    if unfilled:
        click.echo(_placeholder_note(unfilled), err=True)


def _placeholder_note(unfilled: list[tuple[str, str]]) -> str:
    """Tell the writer which template sections still hold `[…]` placeholders, and how
    to fill them."""
    names = _and([name for name, _ in unfilled])
    options = _and([option for _, option in unfilled])
    sections = "section" if len(unfilled) == 1 else "sections"
    return (
        f"note: the file is the template: its {names} {sections} still "
        f"{'holds a placeholder' if len(unfilled) == 1 else 'hold placeholders'} ([…]). "
        f"Fill {'it' if len(unfilled) == 1 else 'them'} with {options} (add --replace to "
        "rewrite the file), give the whole content with --file F (or - for stdin), "
        "or edit the file."
    )


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _log(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


@context_group.command("find")
@click.argument("keywords", nargs=-1)
@click.option("--category", "-c", metavar="C", help="Only this category.")
@click.option(
    "--all", "everywhere", is_flag=True, help="Search every live workspace of the project."
)
@click.option("--delegate", is_flag=True, help="Print the block to paste into a subagent's prompt.")
@click.option(
    "--absolute", is_flag=True, help="Absolute paths in --delegate (default: project-relative)."
)
@project_option
@json_option
def find(
    keywords: tuple[str, ...],
    category: str | None,
    everywhere: bool,
    delegate: bool,
    absolute: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Find context files by KEYWORDS (any of them; `auth` also finds `user-auth`)."""
    env = get_env()
    root = require_project(env, project)
    if not keywords and category is None:
        raise click.ClickException("give at least one KEYWORD or --category")
    try:
        if category is not None:
            workspace.check_category(category)
    except workspace.WorkspaceError as exc:
        raise click.ClickException(str(exc)) from None
    found: list[dict[str, Any]] = []
    for ws, manifest in _searched(env, root, everywhere):
        found += entries(ws, manifest, workspace_manifest.find(manifest, keywords, category))
    found.sort(key=lambda e: -e["matched"])
    if as_json:
        emit_json(found)
    elif delegate:
        if not found:
            raise click.ClickException("no context file matches; nothing to delegate")
        paths = [e["path"] if absolute else e["relative"] for e in found]
        click.echo(workspace.delegate_block(paths))
    elif not found:
        click.echo("No context file matches.")
    else:
        for e in found:
            click.echo(f"{e['relative']}  (keywords: {', '.join(e['keywords'])})")


def _searched(
    env: Env, root: str, everywhere: bool
) -> list[tuple[workspace_store.Workspace, dict[str, Any]]]:
    if everywhere:
        return workspace_store.live(root, env.now)
    ws = require_current(env, root)
    raw, problem = workspace_store.read_manifest(ws)
    if raw is None:
        raise click.ClickException(f"workspace {ws.id}: {problem}")
    return [(ws, workspace_manifest.normalize_manifest(raw, ws.id, env.now))]


@context_group.command("list")
@click.option("--all", "everywhere", is_flag=True, help="Every live workspace of the project.")
@project_option
@json_option
def list_command(everywhere: bool, project: str | None, as_json: bool) -> None:
    """List the context files of your workspace (or, with --all, of every live one)."""
    env = get_env()
    root = require_project(env, project)
    found: list[dict[str, Any]] = []
    for ws, manifest in _searched(env, root, everywhere):
        found += entries(ws, manifest)
    if as_json:
        emit_json(found)
        return
    if not found:
        click.echo("No context files.")
    for e in found:
        recipient = f" for {e['for']}" if e["for"] else ""
        click.echo(
            f"{e['relative']}  (created {timestamps.local_iso(e['created'])}{recipient}; "
            f"keywords: {', '.join(e['keywords'])})"
        )


@context_group.command("rm")
@click.argument("path")
@project_option
@json_option
def rm(path: str, project: str | None, as_json: bool) -> None:
    """Delete one context file of your workspace and drop it from the manifest.

    PATH may be absolute, relative to the project (.tmp/sessions/…) or relative to
    your workspace (features/x-context.md).
    """
    env = get_env()
    root = require_project(env, project)
    ws = require_current(env, root)
    rel = _workspace_relative(path, ws, root)
    try:
        outcome = workspace_store.remove_context(ws, rel, env.now)
    except workspace.WorkspaceError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json({"workspace": ws.id, "relative": ws.project_relative(rel), "file": outcome})
    else:
        click.echo(f"{ws.project_relative(rel)}: untracked; file {outcome}")


def _workspace_relative(path: str, ws: workspace_store.Workspace, root: str) -> str:
    absolute = os.path.normpath(os.path.join(root, path) if not os.path.isabs(path) else path)
    if not os.path.isabs(path) and not path.startswith(WORKSPACES_DIR + "/"):
        absolute = os.path.normpath(os.path.join(ws.path, path))
    found = workspace.split_workspace_path(workspace_store.sessions_root(root), absolute)
    if found is None:
        raise click.ClickException(f"{path} is not a context file inside a workspace of {root}")
    if found[0] != ws.id:
        raise click.ClickException(f"{path} belongs to workspace {found[0]}, not yours ({ws.id})")
    return found[1]


def register(group: click.Group) -> None:
    group.add_command(context_group)
