"""`agent-hooks release --force --lease PATH`: a person takes a file away from the
writer changing it (a lease has no id; its path names it).

Invariants: only leases of this worktree on exactly the named files are dropped,
under the ledger's lease lock; every one dropped is logged with who did it and
whose it was, and its holder's agent is told at its next hook. A path outside the
project, or one nobody leases here, is an error naming it; nothing is dropped then.
"""

from __future__ import annotations

import os
from typing import Any

import click

from agent_hooks import log, repository
from agent_hooks.agents import state_file
from agent_hooks.cli._common import Env
from agent_hooks.gate import places
from agent_hooks.leases import lease_messages, lease_release, lease_store, writer_cards
from agent_hooks.ledger import ledger_location


def rel_paths(root: str, paths: tuple[str, ...]) -> list[str]:
    """Each PATH as the project-relative path leases are kept under."""
    cwd = os.getcwd()
    base = cwd if cwd == root or cwd.startswith(root.rstrip("/") + "/") else root
    found = []
    for path in paths:
        rel = next((r for top, r in places.locate(path, base, root) if top == root), None)
        if rel is None:
            raise click.ClickException(f"--lease {path}: not a file in {root}")
        found.append(rel)
    return found


def force(
    env: Env, root: str, paths: tuple[str, ...], agent: str | None, by: str
) -> list[dict[str, Any]]:
    """Drop every lease on PATHS in this worktree; what was dropped, described."""
    rels = rel_paths(root, paths)
    directory = ledger_location.directory(env.state_dir, root)
    free = [rel for rel in rels if not _held_here(directory, rel, root)]
    if free:
        raise click.ClickException(
            "no writer is changing " + ", ".join(free) + " in this worktree "
            "(see `agent-hooks reservations`); nothing was released"
        )
    worktree = repository.worktree_id(root)
    dropped = lease_release.release(
        directory, lambda item: item.get("worktree") == worktree, env.now, rels
    )
    released = []
    for rel, item in dropped:
        holder = lease_messages.holder_label(item, writer_cards.card(directory, item.get("writer")))
        log.log(
            env.state_dir,
            "release --force",
            agent or "-",
            f"{by} released the lease on {rel} of {holder} in {root}",
            env.now,
        )
        _tell(env, item, rel, by)
        released.append({"path": rel, "holder": holder, "writer": item.get("writer")})
    return released


def _held_here(directory: str, rel: str, root: str) -> bool:
    worktree = repository.worktree_id(root)
    return any(item.get("worktree") == worktree for item in lease_store.read(directory, rel))


def _tell(env: Env, item: dict[str, Any], rel: str, by: str) -> None:
    """The holder's agent hears of it at its next hook (same state directory)."""
    text = (
        f"agent-hooks: your hold on {rel} was released by {by} with `release --force`; "
        "do not edit it again before checking with `agent-hooks check`."
    )
    state_file.tell(env.state_dir, item.get("agent"), text, env.now)
