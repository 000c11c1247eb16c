"""After a Bash command: did it change a file another agent holds? (PostToolUse)

The client reports the files a command changed (`bashEditDiff`), including
changes other agents made at the same time. A changed file another agent holds
exclusively is reported to the model, unless the file's current content is the
holder's own last write (its trail's fingerprint), which the command did not make.

Hot path: built-ins and agent_hooks' hot-path modules only; nothing beyond one
`stat` of the reservation index unless another agent holds something exclusive.
"""

from __future__ import annotations

from agent_hooks.reservations import index


def after_bash(
    state_dir: str, project: str, me: str | None, changed: list[str], now: float
) -> str | None:
    """The warning for the model, or None."""
    hot = index.load_hot(state_dir, project)
    if hot is None or not hot.others_hold_exclusive(me, now):
        return None
    return bash_changed_held_files(state_dir, project, hot, me, changed, now)


def bash_changed_held_files(
    state_dir: str,
    project: str,
    hot: index.HotIndex,
    me: str | None,
    changed: list[str],
    now: float,
) -> str | None:
    """A warning for files a Bash command changed that another agent holds
    exclusively — unless the file's current content is the holder's own last
    write (the client also reports concurrent changes by others as the command's)."""
    from agent_hooks.reservations import enforcement, reservation  # only when others hold

    notes = []
    for path in changed:
        rels = [rel for root, rel in enforcement.locate(path, None, project) if root == project]
        if not rels:
            continue
        rel = rels[0]
        holders = enforcement.blocking_edit(hot, rel, me, now)
        holders = [
            rec for rec in holders if not _holder_wrote_it(state_dir, rec[index.AGENT], path, now)
        ]
        if holders:
            notes.append(
                f"{rel} ({'; '.join(reservation.describe(index.as_dict(r), now) for r in holders)})"
            )
    if not notes:
        return None
    return (
        "agent-hooks: your last Bash command changed files that another agent holds: "
        + ", ".join(notes)
        + ". If your command made these changes, undo them (restore the files' previous content, "
        "e.g. `git checkout -- <file>` for a committed file) and leave these paths to their holder."
    )


def _holder_wrote_it(state_dir: str, holder: str | None, path: str, now: float) -> bool:
    from agent_hooks import identity, state_file, trail

    doc, _ = state_file.read(identity.Agent(holder, state_dir), now)
    mark = doc["fingerprints"].get(path)
    return mark is not None and mark == trail.fingerprint(path)
