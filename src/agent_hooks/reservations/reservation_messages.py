"""What the model is told when a reservation refuses an edit: who holds it, why,
for how long, and what to do instead; strict mode's demand for one's own
reservation; and why a Bash command too complex to check is refused. Loaded only
on such a refusal."""

from __future__ import annotations

from agent_hooks.reservations import index_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Record = tuple[Any, ...]


def deny_message(rel: str, holders: list[Record], now: float) -> str:
    """Why the edit of `rel` is refused and what the model can do instead."""
    from agent_hooks.reservations import reservation

    held = reservation.unique([index_records.as_dict(rec) for rec in holders])
    described = [reservation.describe(res, now) for res in held]
    soonest = min(reservation.minutes_left(index_records.as_dict(rec), now) for rec in holders)
    return (
        f"agent-hooks: {rel} is reserved by another agent: " + "; ".join(described) + ".\n"
        "Do not edit it now. Choose one:\n"
        "- work on something else (other files or another task) and come back to this later;\n"
        "- run `agent-hooks reservations` to see who holds what, and ask the holder to release it;\n"
        f"- wait: the reservation is released when its holder is done or expires (in {soonest} min)."
    )


def too_complex_message(why: str, held: list[str]) -> str:
    """Why a Bash command the parser gave up on is refused: it counts as writing
    the whole project, where another writer holds `held` (described)."""
    return (
        f"agent-hooks: this Bash command is too complex to check for writes ({why}), "
        "and another writer holds files in this project: " + "; ".join(held) + ".\n"
        "A command the check cannot read counts as writing anywhere in the project. "
        "Do not run it as it is. Choose one:\n"
        "- split it into simpler commands (fewer nested `$(...)` or `bash -c` levels, fewer "
        "wrappers, smaller brace expansions) and run them one at a time, keeping away from "
        "the held paths;\n"
        "- run `agent-hooks reservations` to see who holds what."
    )


def strict_message(rel: str) -> str:
    quoted = "'" + rel.replace("'", "'\\''") + "'"
    return (
        f"agent-hooks (strict mode): you hold no reservation covering {rel}. Claim it first:\n"
        f"  agent-hooks reserve {quoted} --reason <issue-id>\n"
        "then retry the edit. `agent-hooks reservations` shows what others hold."
    )
