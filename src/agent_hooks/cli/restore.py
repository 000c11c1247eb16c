"""`agent-hooks restore PATH`: put back the last kept version of a held file — after
a script, git, a formatter, another agent or a client without hooks changed or
deleted it — or list the versions, show the difference, write one elsewhere
(docs/adr/0024-kept-versions.md; the checks and the write are `kept.kept_restore`'s).

Invariants: every refusal and bad input is one line and exit 1, with nothing
written (a path outside the project or the work tree, nothing kept, no such
version, damaged content, a live holder, a change meanwhile); `--list`, `--diff`
and `--to` never change the file; `--json` prints one document on every form
(`--list --json`: a list, one object per version, oldest first).
"""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks import posix_fs as fs
from agent_hooks import repository, timestamps
from agent_hooks.cli._common import (
    Env,
    emit_json,
    get_env,
    json_option,
    printable,
    project_option,
    table,
)
from agent_hooks.gate import places
from agent_hooks.kept import kept_restore, kept_store, kept_versions
from agent_hooks.ledger import ledger_location

MAX_DIFF_LINES = 2000  # lines of a difference shown; the rest counted


def locate(env: Env, path: str, project: str | None) -> tuple[str, str]:
    """(the work tree PATH lies in, PATH relative to it); one line when it lies
    outside the project (`--project`, `CLAUDE_PROJECT_DIR`, else the git top level
    of the working directory) or in no work tree."""
    given = env.project_root(project)
    absolute = os.path.abspath(os.path.join(os.getcwd(), path))
    resolved = places.resolve_entry(absolute)  # its directories resolved, its own name kept
    existing = fs.dirname(resolved)
    while not fs.isdir(existing) and existing != "/":
        existing = fs.dirname(existing)
    top = repository.git_top_level(existing, resolved=True)
    if given is not None and not fs.is_within(resolved, given):
        raise click.ClickException(printable(f"{path}: outside the project {given}"))
    if top is None or resolved == top:
        raise click.ClickException(printable(f"{path}: not a file in a git work tree"))
    rel = resolved[len(top.rstrip("/")) + 1 :]
    if rel == ".git" or rel.startswith(".git/"):
        raise click.ClickException(printable(f"{path}: inside git's own directory"))
    return top, rel


def _when(at: float, now: float) -> str:
    from agent_hooks import durations

    return f"{timestamps.local(at)} ({durations.ago(now - at)})"


def _size(size: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.1f} {unit}"
    return f"{size} B"


def _current(root: str, rel: str) -> str | None:
    """The digest of the file as it is now (None: gone, or not a regular file)."""
    data = kept_restore.look(fs.join(root, rel))[1]
    return kept_store.digest(data) if data is not None else None


def _rows(entries: list[dict[str, Any]], ledger: str, root: str, rel: str) -> list[dict[str, Any]]:
    """Each version as `--list --json` shows it; `current`: the newest one whose
    content (and mode) the file has now."""
    now_digest = _current(root, rel)
    _, _, now_mode, _ = kept_restore.look(fs.join(root, rel))
    current = None
    for i in range(len(entries) - 1, -1, -1):
        if entries[i]["hash"] is not None and entries[i]["hash"] == now_digest:
            current = i
            break
    if now_digest is None and entries and entries[-1]["hash"] is None:
        current = len(entries) - 1  # deleted, as the file is
    rows = []
    for i, entry in enumerate(entries):
        rows.append(
            {
                "id": kept_versions.version_id(entry),
                "hash": entry["hash"],
                "path": rel,
                "kind": entry["kind"],
                "writer": entry.get("writer"),
                "agent": entry.get("agent"),
                "writer_label": kept_restore.writer_label(entry, ledger),
                "holder": entry["holder"],
                "at": entry["at"],
                "size": entry["size"],
                "mode": entry["mode"],
                "current": i == current and (entry["hash"] is None or entry["mode"] == now_mode),
            }
        )
    return rows


_KIND_WORDS = {
    kept_store.WRITE: "write",
    kept_store.DELETE: "deleted",
    kept_store.RESTORE: "restore",
    kept_store.REPLACED: "replaced",
}


def _why_none(env: Env, ledger: str, root: str, rel: str) -> str:
    """Why nothing is kept for `rel`, as far as can be told."""
    store = kept_store.store_dir(ledger)
    why = kept_store.skipped(
        ledger,
        repository.worktree_id(root),
        root,
        rel,
        kept_store.read_settings(store),
        env.environ,
    )
    return why or "no writer's own write of it was seen while it held the file"


def _listing(
    env: Env, ledger: str, root: str, rel: str, entries: list[dict[str, Any]], as_json: bool
) -> None:
    rows = _rows(entries, ledger, root, rel)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(printable(f"no version of {rel} is kept: {_why_none(env, ledger, root, rel)}"))
        return
    click.echo(printable(f"kept versions of {rel} in {root}, oldest first (* the file now):"))
    lines = table(
        ["", "ID", "KIND", "WRITTEN BY", "WHEN", "SIZE", "MODE"],
        (
            [
                "*" if row["current"] else "",
                row["id"],
                _KIND_WORDS[row["kind"]],
                row["writer_label"],
                _when(row["at"], env.now),
                _size(row["size"]) if row["hash"] else "-",
                f"{row['mode']:o}" if row["hash"] else "-",
            ]
            for row in rows
        ),
        right=(5,),
    )
    for line in lines:
        click.echo(printable(line))


def _diff(ledger: str, root: str, rel: str, entry: dict[str, Any], as_json: bool) -> None:
    import difflib

    kept = kept_restore.content_of(ledger, entry, rel)
    kind, data, mode, _ = kept_restore.look(fs.join(root, rel))
    ident = kept_versions.version_id(entry)
    now_label = f"{rel} (now)" if data is not None else f"{rel} ({kind})"
    binary = b"\0" in kept or (data is not None and b"\0" in data)
    try:
        old = kept.decode("utf-8")
        new = (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        binary = True
        old = new = ""
    lines: list[str] = []
    if entry["mode"] != mode and data is not None:
        lines += [f"old mode {entry['mode']:o}", f"new mode {mode:o}"]
    if binary:
        if kept != data:
            lines.append(
                f"binary content differs (kept {ident}: {len(kept)} bytes, "
                f"now: {'none' if data is None else len(data)} bytes)"
            )
    else:
        lines += [
            line.rstrip("\n")
            for line in difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"{rel} (kept {ident})",
                tofile=now_label,
            )
        ]
    same = not lines
    if as_json:
        emit_json(
            {
                "path": rel,
                "version": ident,
                "hash": entry["hash"],
                "same": same,
                "binary": binary,
                "exists": data is not None,
                "diff": "\n".join(lines),
            }
        )
        return
    if same:
        click.echo(f"{rel} is as version {ident}: no difference")
        return
    for line in lines[:MAX_DIFF_LINES]:
        click.echo(line)
    if len(lines) > MAX_DIFF_LINES:
        click.echo(f"… and {len(lines) - MAX_DIFF_LINES} more lines")


@click.command("restore")
@click.argument("path")
@click.option(
    "--from",
    "from_writer",
    metavar="WRITER",
    help="Another writer's last version (an agent's name or a writer key): a person at "
    "the terminal, or a later conversation after the lease ended.",
)
@click.option("--version", "version", metavar="ID", help="That version (its id from --list).")
@click.option("--list", "listing", is_flag=True, help="List the kept versions; change nothing.")
@click.option(
    "--diff", is_flag=True, help="Show how the file differs from the version; change nothing."
)
@click.option(
    "--to",
    "to",
    metavar="FILE",
    help="Write the version to FILE (a new file) instead; the path is left as it is.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write even over another live writer's lease, a change made meanwhile, or "
    "content that cannot be kept (logged; the holder is told).",
)
@project_option
@json_option
def restore(
    path: str,
    from_writer: str | None,
    version: str | None,
    listing: bool,
    diff: bool,
    to: str | None,
    force: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Put back the last kept version of PATH: your own last write (the agent is
    AGENT_NAME), with its mode bits; a deleted file is recreated.

    Every write of a file its writer holds is kept (not files git ignores, nor
    secrets' names such as .env, nor those `agent-hooks settings kept-exclude`
    names), for 7 days after the lease ends. Before writing, the file's current
    content is kept too (so a restore can be undone: the command it prints), you
    take the file's lease, and the file is checked again: if another live writer
    holds it, or it changed meanwhile, nothing is written. Restore only work that
    was lost: a change another writer made on purpose is theirs — ask the user.
    """
    if listing and (diff or to or force):
        raise click.UsageError("--list only lists: give it without --diff, --to or --force")
    if diff and (to or force):
        raise click.UsageError("--diff only shows: give it without --to or --force")
    if to is not None and force:
        raise click.UsageError("--to writes a new file only: --force has nothing to override")
    env = get_env()
    root, rel = locate(env, path, project)
    ledger = ledger_location.directory(env.state_dir, root)
    worktree = repository.worktree_id(root)
    entries = kept_versions.read_versions(ledger, worktree, rel)
    if listing:
        if from_writer is not None:
            entries = [e for e in entries if kept_restore.by(e, from_writer)]
        _listing(env, ledger, root, rel, entries, as_json)
        return
    me = env.writer()
    if not entries:
        raise click.ClickException(
            printable(f"nothing is kept for {rel}: {_why_none(env, ledger, root, rel)}")
        )
    try:
        entry = kept_restore.choose(
            entries, rel, me, from_writer=from_writer, version=version, ledger=ledger
        )
        if diff:
            _diff(ledger, root, rel, entry, as_json)
            return
        if to is not None:
            target = os.path.abspath(to)
            done = kept_restore.write_copy(ledger, entry, rel, target)
            if as_json:
                emit_json({"path": rel, "version": kept_versions.version_id(entry), **done})
            else:
                click.echo(
                    printable(
                        f"wrote version {kept_versions.version_id(entry)} of {rel} to {target}"
                    )
                )
            return
        agent = env.agent() if me.agent is not None or me.conversation is not None else None
        done = kept_restore.restore(
            env.state_dir,
            root,
            rel,
            entry,
            me,
            agent=agent,
            environ=env.environ,
            now=env.now,
            force=force,
        )
    except kept_restore.Refused as exc:
        raise click.ClickException(printable(str(exc))) from None
    who = kept_restore.writer_label(entry, ledger)
    shown = path if not path.startswith("-") else f"./{path}"
    done["undo"] = (
        f"agent-hooks restore {shown} --version {done['replaced']}"
        if done.get("replaced")
        else None
    )
    done["writer_label"] = who
    if as_json:
        emit_json(done)
        return
    ident = done["version"]
    if not done["restored"]:
        click.echo(printable(f"{rel} is already as version {ident} ({who}); nothing was written"))
        return
    text = f"restored {rel} to version {ident} ({who}, {_when(entry['at'], env.now)})"
    if done["over"]:
        text += f", over {', '.join(done['over'])} (--force: logged, they are told)"
    click.echo(printable(text))
    if done["undo"]:
        click.echo(printable(f"the content it replaced is kept: `{done['undo']}` puts it back"))


def register(group: click.Group) -> None:
    group.add_command(restore)
