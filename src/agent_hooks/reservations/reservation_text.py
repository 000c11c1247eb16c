"""What the model is told when a reservation refuses an edit: who holds it, why,
for how long, and what to do instead; and strict mode's demand for one's own
reservation. Loaded only on such a refusal."""

from __future__ import annotations

from agent_hooks.reservations import index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Record = tuple[Any, ...]


def deny_message(rel: str, holders: list[Record], now: float) -> str:
    """Why the edit of `rel` is refused and what the model can do instead."""
    from agent_hooks.reservations import reservation

    held = reservation.unique([index.as_dict(rec) for rec in holders])
    described = [reservation.describe(res, now) for res in held]
    soonest = min(reservation.minutes_left(index.as_dict(rec), now) for rec in holders)
    return (
        f"agent-hooks: {rel} is reserved by another agent: " + "; ".join(described) + ".\n"
        "Do not edit it now. Choose one:\n"
        "- work on something else (other files or another task) and come back to this later;\n"
        "- run `agent-hooks reservations` to see who holds what, and ask the holder to release it;\n"
        f"- wait: the reservation is released when its holder is done or expires (in {soonest} min)."
    )


def strict_message(rel: str) -> str:
    quoted = "'" + rel.replace("'", "'\\''") + "'"
    return (
        f"agent-hooks (strict mode): you hold no reservation covering {rel}. Claim it first:\n"
        f"  agent-hooks reserve {quoted} --reason <issue-id>\n"
        "then retry the edit. `agent-hooks reservations` shows what others hold."
    )
