"""What the model is told when a reservation refuses an edit: who holds it, why,
for how long, and what to do instead; strict mode's demand for one's own
reservation; and why a shell command too complex to check is refused. Loaded only
on such a refusal."""

from __future__ import annotations

from agent_hooks.reservations import index_records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Record = tuple[Any, ...]


def deny_message(rel: str, holders: list[Record], now: float) -> str:
    """Why the edit of `rel` is refused and what the model can do instead — only
    what it can do itself: other work, waiting (it is told when the path frees),
    or asking the user; never contacting a holder it has no way to reach."""
    from agent_hooks import writers
    from agent_hooks.reservations import reservation

    held = reservation.unique([index_records.as_dict(rec) for rec in holders])
    described = [reservation.describe(res, now) for res in held]
    soonest = min(reservation.minutes_left(index_records.as_dict(rec), now) for rec in holders)
    people = all(writers.person(res) is not None and res.get("agent") is None for res in held)
    by = "a person" if people else "another agent"  # a named holder is an agent, by its name
    return (
        f"agent-hooks: {rel} is reserved by {by}: " + "; ".join(described) + ".\n"
        "Do not edit it now. Choose one:\n"
        "- work on other files or another part of the task (`agent-hooks reservations` shows"
        " what others hold), and come back to this one later (you will be told when it is"
        " free);\n"
        "- wait: a reservation ends when its holder releases it or is done, and at the latest"
        f" when it expires (in {soonest} min);\n"
        "- if this file must change now, stop and ask the user how to proceed."
    )


def too_complex_message(why: str, held: list[str], shell_command: str = "Bash command") -> str:
    """Why a shell command the parser gave up on is refused: it counts as writing
    the whole project, where another writer holds `held` (described).
    `shell_command` is what the client calls it (`clients.<module>.SHELL_COMMAND`)."""
    return (
        f"agent-hooks: this {shell_command} is too complex to check for writes ({why}), "
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
