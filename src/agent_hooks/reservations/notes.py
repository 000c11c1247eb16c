"""What the model is told about reservations at SessionStart: who holds what,
its own reservations, how to claim, and the strict / enforcement settings."""

from __future__ import annotations

from agent_hooks import switches
from agent_hooks.reservations import reservation
from agent_hooks.reservations import store as reservation_store

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
