"""What the model is told about reservations outside a deny: the SessionStart
summary and the PostToolUse warning after a Bash command changed a file that
another agent holds.

The Bash warning runs inside PostToolUse: this module imports only built-ins and
agent_hooks' hot-path modules at load time; the store (for SessionStart) is
imported where it is used.
"""

from __future__ import annotations

from agent_hooks import identity, state_file, switches, trail
from agent_hooks.reservations import enforcement, index, reservation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_LISTED = 25  # the whole SessionStart context is capped at 10,000 characters

HOW_TO = (
    "Before editing files another agent may also touch, claim them: "
    "`agent-hooks reserve 'src/auth/**' --reason <issue-id>` (refused if someone else holds an "
    "overlapping path); release with `agent-hooks release --all` when done; "
    "`agent-hooks reservations` shows who holds what."
)


def _listed(held: list[dict[str, Any]], now: float, own: bool = False) -> str:
    """At most MAX_LISTED reservations, then how many more."""
    parts = [
        f"{r['pattern']} ({r['mode']}, {reservation.minutes_left(r, now)} min left"
        + (", kept" if r.get("keep") else "")
        + ")"
        if own
        else reservation.describe(r, now)
        for r in held[:MAX_LISTED]
    ]
    if len(held) > MAX_LISTED:
        parts.append(f"and {len(held) - MAX_LISTED} more (run `agent-hooks reservations`)")
    return "; ".join(parts)


def session_start_lines(
    state_dir: str, project: str, me: str | None, environ: Any, now: float
) -> list[str]:
    from agent_hooks.reservations import store as reservation_store

    held, strict = reservation_store.live(state_dir, project, now)
    lines = []
    mine = [r for r in held if r["agent"] == me]
    others = [r for r in held if r["agent"] != me]
    if others:
        lines.append(
            f"Reservations held by other agents (do not edit these paths): {_listed(others, now)}."
        )
    if mine:
        lines.append(f"Your reservations: {_listed(mine, now, own=True)}.")
    if not held:
        lines.append("No reservations are held in this project.")
    lines.append(HOW_TO)
    if switches.strict(environ, strict):
        lines.append("Strict mode is on: every edit needs your own reservation covering the file.")
    if switches.is_off(environ, switches.ENFORCE):
        lines.append(
            "Warning: AGENT_HOOKS_ENFORCE=off: reservations are NOT enforced for you; "
            "check `agent-hooks reservations` yourself before editing."
        )
    return lines


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
    doc, _ = state_file.read(identity.Agent(holder, state_dir), now)
    mark = doc["fingerprints"].get(path)
    return mark is not None and mark == trail.fingerprint(path)
