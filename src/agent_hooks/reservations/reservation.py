"""Reservation rules, pure: what a reservation is, when two conflict, and how a
request changes a project's set of reservations (docs/adr/0006-reservations.md).

A reservation is a dict (it lives in JSON):
`id`, `agent` (AGENT_NAME, or None for an agent without one), `conversation_id`
(for an unnamed agent: which one), `project_root` (the work tree it was made
in), `pattern` (normalized, relative to the work tree), `compiled`
(pattern.compile of it), `mode` (exclusive | shared), `reason`, `created_at`,
`expires_at` (epoch seconds), `keep` (survives SessionEnd), `holder` (the
client process that made it: `liveness.process`; from a plain shell `{"person":
<user name>}`, a person's, which lives by its expiry alone — earlier releases
wrote None there), `source` (`cli` or `mcp-agent-mail`); in a ledger shared with other
machines (docs/adr/0016) also `machine`, the host it was made on, and `local`
(made with `--local`: this machine only).

Invariants:

* A reservation belongs to its `owner`: the agent, or an unnamed agent's
  conversation; one made on another machine than `here` belongs to
  `<owner>@<machine>`, so an agent of the same name elsewhere is never its owner. `checked` turns any ledger entry into a well-formed reservation
  or says why it cannot be one: one bad entry never hides the others.
* Two reservations conflict iff both are live, they belong to different owners,
  at least one is exclusive, and their patterns overlap (some path matches both;
  `pattern_overlap.overlap` is symmetric, not a prefix test). Every conflicting holder is
  reported, never just the first.
* `plan_reserve` grants all requested patterns or none: a request with any
  conflict changes nothing (there is no advisory "granted anyway").
* Re-reserving one's own identical pattern keeps the id and takes the later
  expiry; renewing never revives an expired reservation.

Hot-path clean: imports nothing but `agent_hooks.reservations.pattern`.
"""

from __future__ import annotations

from agent_hooks.reservations import pattern, pattern_overlap

# `wording.one_line` owns it; named here too, as the reservation texts and their many
# callers spell it (`reservation.one_line`).
from agent_hooks.wording import one_line as one_line

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


class Outcome:
    """What an operation on a ledger's reservations did (`ledger.reservation_store`,
    through the remote first when it is shared): reservations granted or changed,
    conflicts that refused it, names that matched nothing, and notes (e.g. a
    recovered index)."""

    def __init__(self) -> None:
        self.changed: list[Reservation] = []
        self.conflicts: list[tuple[Reservation, Reservation]] = []
        # an exclusive request over files other writers are changing: (request, path, lease)
        self.leased: list[tuple[Reservation, str, dict[str, Any]]] = []
        self.unmatched: list[str] = []
        self.notes: list[str] = []
        self.dropped: list[dict[str, Any]] = []
        self.host: str | None = None  # this machine, when the ledger is shared with others


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


MAX_REASON = 2000  # characters of a reason that reach other agents


def _finite(value: object) -> float | None:
    """A time from a ledger: a number of plausible size, else None (never raises:
    `float()` of a 400-digit integer would)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -(10**15) < value < 10**15:
        return None
    number = float(value)
    return number if number == number and abs(number) < 1e15 else None


def checked(raw: object) -> Reservation:
    """A well-formed reservation from a ledger document, or ValueError saying (in
    one line) why this entry cannot be one. Its compiled form is rebuilt from its
    `pattern`: the stored one is never trusted."""
    if not isinstance(raw, dict):
        raise ValueError(f"an entry that is a {type(raw).__name__}, not an object")
    rid, text = raw.get("id"), raw.get("pattern")
    if not isinstance(rid, str) or not rid or len(rid) > 64:
        raise ValueError("an entry without a usable id")
    if not isinstance(text, str) or not text:
        raise ValueError(f"{rid}: no pattern")
    try:
        compiled = pattern.compile(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{rid}: pattern {text[:80]!r} does not compile ({exc})") from None
    expires = _finite(raw.get("expires_at"))
    if expires is None:
        raise ValueError(f"{rid}: expires_at {str(raw.get('expires_at'))[:40]!r} is not a time")
    mode = raw.get("mode", EXCLUSIVE)
    if mode not in (EXCLUSIVE, SHARED):
        raise ValueError(f"{rid}: mode {str(mode)[:40]!r} is neither exclusive nor shared")
    agent = raw.get("agent")
    if agent is not None and (not isinstance(agent, str) or not agent or len(agent) > 256):
        raise ValueError(f"{rid}: agent {str(agent)[:40]!r} is not a name")
    conversation = raw.get("conversation_id")
    holder = raw.get("holder")
    reason = raw.get("reason")
    created = _finite(raw.get("created_at"))
    if created is None and raw.get("created_at") is not None:
        raise ValueError(f"{rid}: created_at {str(raw.get('created_at'))[:40]!r} is not a time")
    return {
        **raw,
        "compiled": compiled,
        "expires_at": expires,
        "created_at": expires if created is None else created,
        "mode": mode,
        "agent": agent,
        "conversation_id": conversation if isinstance(conversation, str) else None,
        "reason": reason[:MAX_REASON] if isinstance(reason, str) else "",
        "keep": raw.get("keep") is True,
        "holder": holder if isinstance(holder, dict) else None,
    }


def owner(res: Reservation, here: str | None = None) -> str:
    """Whom a reservation belongs to (`writers.owner_of`): its agent, or for an
    agent without a name, its conversation. `here` is this machine in a ledger
    shared with others (None: not shared): a reservation made on another machine
    belongs to `<owner>@<machine>`."""
    agent = res.get("agent")
    if isinstance(agent, str):
        found = agent
    else:
        conversation = res.get("conversation_id")
        found = "~" + (conversation if isinstance(conversation, str) else "")
    machine = res.get("machine")
    if here is not None and isinstance(machine, str) and machine and machine != here:
        return f"{found}@{machine}"
    return found


def is_live(res: Reservation, now: float) -> bool:
    return float(res.get("expires_at", 0)) > now


def conflicts_with(
    candidate: Reservation, others: list[Reservation], now: float, here: str | None = None
) -> list[Reservation]:
    """Every live reservation of another agent that conflicts with `candidate`."""
    found = []
    for other in others:
        if (
            is_live(other, now)
            and owner(other, here) != owner(candidate, here)
            and EXCLUSIVE in (other.get("mode"), candidate.get("mode"))
            and pattern_overlap.overlap(other["compiled"], candidate["compiled"])
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
    existing: list[Reservation],
    requested: list[Reservation],
    now: float,
    here: str | None = None,
) -> tuple[list[Reservation], list[tuple[Reservation, Reservation]]]:
    """The project's new list of reservations and the conflicts found (`here`:
    this machine, in a ledger shared with others).

    With any conflict the list is returned unchanged. A request for a pattern the
    agent already holds updates that reservation in place (same id, later expiry,
    the requested mode, reason and keep flag).
    """
    live = [res for res in existing if is_live(res, now)]
    conflicts = [(req, held) for req in requested for held in conflicts_with(req, live, now, here)]
    if conflicts:
        return live, conflicts
    result = list(live)
    for req in requested:
        mine = next(
            (
                r
                for r in result
                if owner(r, here) == owner(req, here) and r["pattern"] == req["pattern"]
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
    """`agent "a"`, or for an agent without a name, which conversation; `on
    machine m` in a ledger shared with other machines."""
    from agent_hooks import writers

    machine = res.get("machine")
    where = f" on machine {one_line(machine, 64)}" if isinstance(machine, str) else ""
    return writers.describe(res) + where


def describe(res: Reservation, now: float, reason_limit: int = 200) -> str:
    """`agent "a" holds src/** (exclusive, reason: farmhand-42, 37 min left)`."""
    reason = one_line(res.get("reason"), reason_limit)
    why = f"reason: {reason}" if reason else "no reason given"
    return (
        f"{holder_label(res)} holds {one_line(res['pattern'], 300)} ({res.get('mode', EXCLUSIVE)}, "
        f"{why}, {minutes_left(res, now)} min left)"
    )
