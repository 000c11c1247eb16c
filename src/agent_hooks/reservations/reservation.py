"""Reservation rules, pure: what a reservation is, when two conflict, and how a
request changes a project's set of reservations (docs/adr/0006-reservations.md).

A reservation is a dict (it lives in JSON):
`id`, `agent` (AGENT_NAME or None for the shared identity), `project_root`,
`pattern` (normalized, relative to the root), `compiled` (pattern.compile of
it), `mode` (exclusive | shared), `reason`, `created_at`, `expires_at` (epoch
seconds), `keep` (survives SessionEnd), `conversation_id`, `source`
(`cli` or `mcp-agent-mail`).

Invariants:

* Two reservations conflict iff both are live, they belong to different agents,
  at least one is exclusive, and their patterns overlap (some path matches both;
  `pattern.overlap` is symmetric, not a prefix test). Every conflicting holder is
  reported, never just the first.
* `plan_reserve` grants all requested patterns or none: a request with any
  conflict changes nothing (there is no advisory "granted anyway").
* Re-reserving one's own identical pattern keeps the id and takes the later
  expiry; renewing never revives an expired reservation.

Hot-path clean: imports nothing but `agent_hooks.reservations.pattern`.
"""

from __future__ import annotations

from agent_hooks.reservations import pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Reservation = dict[str, Any]

EXCLUSIVE = "exclusive"
SHARED = "shared"
DEFAULT_TTL = 3600
MIN_TTL = 60
MAX_TTL = 7 * 86400
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class ReservationError(ValueError):
    """A request that cannot be carried out; the message says why, in one line."""


def parse_ttl(text: str) -> int:
    """`90s`, `30m`, `2h`, `1d` (or plain seconds) → seconds, within [60 s, 7 d]."""
    raw = text.strip().lower()
    unit = _UNITS.get(raw[-1:], 0)
    digits = raw[:-1] if unit else raw
    if not digits.isdigit():
        raise ReservationError(
            f"--ttl {text!r}: expected a number with s, m, h or d (e.g. 90s, 30m, 2h, 1d)"
        )
    seconds = int(digits) * (unit or 1)
    if seconds < MIN_TTL:
        raise ReservationError(f"--ttl {text!r}: the minimum is 60s")
    if seconds > MAX_TTL:
        raise ReservationError(f"--ttl {text!r}: the maximum is 7d")
    return seconds


def is_live(res: Reservation, now: float) -> bool:
    return float(res.get("expires_at", 0)) > now


def same_agent(a: str | None, b: str | None) -> bool:
    return a == b


def conflicts_with(
    candidate: Reservation, others: list[Reservation], now: float
) -> list[Reservation]:
    """Every live reservation of another agent that conflicts with `candidate`."""
    found = []
    for other in others:
        if (
            is_live(other, now)
            and not same_agent(other.get("agent"), candidate.get("agent"))
            and EXCLUSIVE in (other.get("mode"), candidate.get("mode"))
            and pattern.overlap(other["compiled"], candidate["compiled"])
        ):
            found.append(other)
    return found


def looks_like_issue_id(reason: str) -> bool:
    """`farmhand-42`, `PROJ-123`, `bd-a1b2`: one word, a dash, a tail holding a digit."""
    head, dash, tail = reason.strip().rpartition("-")
    if not dash or not head or not tail or " " in reason.strip():
        return False
    ok_head = head[0].isalpha() and all(c.isalnum() or c in "_.-" for c in head)
    return ok_head and tail.isalnum() and any(c.isdigit() for c in tail)


def plan_reserve(
    existing: list[Reservation], requested: list[Reservation], now: float
) -> tuple[list[Reservation], list[tuple[Reservation, Reservation]]]:
    """The project's new list of reservations and the conflicts found.

    With any conflict the list is returned unchanged. A request for a pattern the
    agent already holds updates that reservation in place (same id, later expiry,
    the requested mode, reason and keep flag).
    """
    live = [res for res in existing if is_live(res, now)]
    conflicts = [(req, held) for req in requested for held in conflicts_with(req, live, now)]
    if conflicts:
        return live, conflicts
    result = list(live)
    for req in requested:
        mine = next(
            (
                r
                for r in result
                if same_agent(r.get("agent"), req.get("agent")) and r["pattern"] == req["pattern"]
            ),
            None,
        )
        if mine is None:
            result.append(req)
            continue
        mine.update(
            mode=req["mode"],
            keep=req["keep"],
            reason=req["reason"] or mine.get("reason", ""),
            expires_at=max(float(mine["expires_at"]), float(req["expires_at"])),
        )
        req.update(mine)  # the caller reports what was granted, with the kept id
    return result, []


def unique(held: list[Reservation]) -> list[Reservation]:
    """`held` without repeats of one id, in first-seen order."""
    return list({res["id"]: res for res in held}.values())


def minutes_left(res: Reservation, now: float) -> int:
    return max(0, int((float(res["expires_at"]) - now + 59) // 60))


def holder_label(res: Reservation) -> str:
    agent = res.get("agent")
    return f'"{agent}"' if agent else "the unnamed agent (no AGENT_NAME)"


def describe(res: Reservation, now: float) -> str:
    """`agent "a" holds src/** (exclusive, reason farmhand-42, 37 min left)`."""
    reason = res.get("reason") or "no reason given"
    return (
        f"agent {holder_label(res)} holds {res['pattern']} ({res.get('mode', EXCLUSIVE)}, "
        f"reason {reason}, {minutes_left(res, now)} min left)"
    )
