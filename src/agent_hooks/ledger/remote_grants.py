"""The reservations of a ledger shared by machines, as pure rules: each machine's
own document of grants, the tombstones that keep a release released, which
version of a machine's document to believe, and the one rule that decides a
double claim (docs/adr/0016-ledger-beyond-one-machine.md, "Format 2").

A machine's document, `grants/<host>.json` on the remote, written by that
machine alone: `{"format": 2, "host", "instance", "seq", "written_at",
"reservations": [...], "tombstones": [...]}`. `reservations` are the grants
made on that machine (as in the local ledger, without `compiled` and `local`,
each with `machine`); `tombstones` the reservations of other machines this one
ended (`release --force`, or granted over one it judged expired or whose machine
was silent), each `{"id", "machine", "pattern", "agent", "why", "by", "at",
"until"}`.

Invariants:

* A document is read only when its `format` is `FORMAT`; anything else (another
  format, not JSON, a field of the wrong type, a document naming another host)
  is unreadable, and says why in one line (`parse`).
* `seq` orders the versions of one machine's document within its `instance`
  (its ledger): a reader never takes a version older than one it took before
  (`newer`), so a remote rewound to an earlier commit cannot bring back what a
  machine released.
* A reservation is ended by a tombstone naming its `id` and its `machine`,
  wherever that tombstone was written; a tombstone lasts until the reservation
  it ends would have expired, plus `TOMBSTONE_GRACE` (clocks that disagree).
* The double-claim rule is pairwise and pure: of two live reservations made on
  different machines that conflict (`reservation.conflicts_with`: different
  owners, one exclusive, patterns that overlap), the one with the smaller
  `order_key` — recorded `created_at`, then `machine`, then `id` — wins, and
  the other loses, whatever else is in the set. Every machine that sees both
  reaches the same answer; clocks that disagree can make either the earlier one,
  never both winners. A loss found in part of the set holds in the whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agent_hooks import jsonio
from agent_hooks.reservations import pattern, pattern_overlap, reservation

FORMAT = 2
GRANTS_DIR = "grants"
MAX_TOMBSTONES = 1000
TOMBSTONE_GRACE = 86400  # seconds a tombstone outlives the reservation it ends
MAX_ID = 64
_SEQ_LIMIT = 1 << 62


class Grants:
    """One machine's document, read: its `host`, `instance`, `seq`,
    `written_at`, its reservations (`reservation.checked`), its tombstones, and
    notes on entries left out."""

    __slots__ = ("host", "instance", "notes", "reservations", "seq", "tombstones", "written_at")

    def __init__(self, host: str, instance: str, seq: int, written_at: float) -> None:
        self.host = host
        self.instance = instance
        self.seq = seq
        self.written_at = written_at
        self.reservations: list[dict[str, Any]] = []
        self.tombstones: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def raw(self) -> dict[str, Any]:
        """The document again, as kept in a local cache (no compiled forms)."""
        return {
            "format": FORMAT,
            "host": self.host,
            "instance": self.instance,
            "seq": self.seq,
            "written_at": self.written_at,
            "reservations": [cleaned(e) for e in self.reservations],
            "tombstones": list(self.tombstones),
        }


def grants_file(host: str) -> str:
    return f"{GRANTS_DIR}/{host}.json"


def cleaned(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A reservation as a machine's document keeps it: no compiled form, no local mark."""
    return {k: v for k, v in entry.items() if k not in ("compiled", "local")}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if abs(value) < 1e15 else None


def _tombstone(raw: object) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    rid, machine, until = raw.get("id"), raw.get("machine"), _number(raw.get("until"))
    if not isinstance(rid, str) or not 0 < len(rid) <= MAX_ID:
        return None
    if not isinstance(machine, str) or not machine or until is None:
        return None
    return raw


def parse(host: str, data: bytes) -> Grants:
    """The document of `host` from its bytes, or ValueError (one line) saying why
    it cannot be read. Entries that are not reservations are left out and noted."""
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"a JSON {type(doc).__name__}, not an object")
    found = doc.get("format")
    if found != FORMAT:
        raise ValueError(
            f"format {str(found)[:20]} where this agent-hooks reads format {FORMAT}"
            if found is not None
            else "no format"
        )
    instance, seq, written = doc.get("instance"), doc.get("seq"), _number(doc.get("written_at"))
    if doc.get("host") != host:
        raise ValueError(f"it names host {str(doc.get('host'))[:64]!r}, not {host!r}")
    if not isinstance(instance, str) or not 0 < len(instance) <= 64:
        raise ValueError("no instance")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < _SEQ_LIMIT:
        raise ValueError("no seq")
    entries, stones = doc.get("reservations"), doc.get("tombstones")
    if not isinstance(entries, list) or not isinstance(stones, list):
        raise ValueError("no list of reservations or of tombstones")
    grants = Grants(host, instance, seq, written or 0.0)
    for raw in entries:
        try:
            res = reservation.checked(raw)
        except ValueError as exc:
            grants.notes.append(f"a reservation of host {host} is ignored: {exc}")
            continue
        res["machine"] = host  # whatever it says: a machine writes only its own
        res.pop("local", None)
        grants.reservations.append(res)
    for raw in stones:
        stone = _tombstone(raw)
        if stone is None:
            grants.notes.append(f"a tombstone of host {host} is ignored: it is not one")
            continue
        grants.tombstones.append(stone)
    return grants


def document(
    host: str,
    instance: str,
    seq: int,
    reservations: Iterable[Mapping[str, Any]],
    tombstones: Iterable[Mapping[str, Any]],
    now: float,
) -> dict[str, Any]:
    """A machine's document (what `parse` reads back)."""
    return {
        "format": FORMAT,
        "host": host,
        "instance": instance,
        "seq": seq,
        "written_at": int(now),
        "reservations": [{**cleaned(e), "machine": host} for e in reservations],
        "tombstones": [dict(t) for t in tombstones],
    }


def digest(doc: Mapping[str, Any]) -> str:
    """What a document says, apart from when it was written and its seq: two
    versions with one digest need not be pushed twice."""
    import hashlib

    body = {"reservations": doc.get("reservations"), "tombstones": doc.get("tombstones")}
    return hashlib.blake2b(jsonio.encode(body), digest_size=16).hexdigest()


def newer(remote: Grants, taken: Mapping[str, Any] | None) -> bool:
    """May this version of a machine's document replace the one taken before
    (`taken`: its `instance` and `seq`)? Yes unless it is an older version of
    the same ledger: a remote rewound to an earlier commit shows one."""
    if not isinstance(taken, Mapping):
        return True
    seq = taken.get("seq")
    if taken.get("instance") != remote.instance or not isinstance(seq, int):
        return True
    return remote.seq >= seq


def tombstone(entry: Mapping[str, Any], by: str, why: str, now: float) -> dict[str, Any]:
    """The record, written by machine `by`, that ends `entry` (another machine's)."""
    until = _number(entry.get("expires_at")) or now
    return {
        "id": entry.get("id"),
        "machine": entry.get("machine"),
        "pattern": entry.get("pattern"),
        "agent": entry.get("agent"),
        "conversation_id": entry.get("conversation_id"),
        "why": why,
        "by": by,
        "at": int(now),
        "until": int(until),
    }


def tombstone_key(item: Mapping[str, Any]) -> tuple[str, str]:
    return (str(item.get("machine")), str(item.get("id")))


def kept_tombstones(stones: Iterable[Mapping[str, Any]], now: float) -> list[dict[str, Any]]:
    """The tombstones still needed (one per reservation, the earliest), oldest
    first, at most `MAX_TOMBSTONES`."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for stone in stones:
        checked = _tombstone(stone)
        if checked is None or float(checked["until"]) + TOMBSTONE_GRACE <= now:
            continue
        key = tombstone_key(checked)
        have = found.get(key)
        if have is None or (_number(checked.get("at")) or 0) < (_number(have.get("at")) or 0):
            found[key] = dict(checked)
    ordered = sorted(found.values(), key=lambda t: (_number(t.get("at")) or 0, tombstone_key(t)))
    return ordered[-MAX_TOMBSTONES:]


def order_key(entry: Mapping[str, Any], host: str | None = None) -> tuple[float, str, str]:
    """Where a grant stands in the double-claim rule: its recorded `created_at`,
    then its `machine` (`host` when it has none: a grant of this machine not yet
    pushed), then its `id`."""
    created = _number(entry.get("created_at"))
    if created is None:
        created = _number(entry.get("expires_at")) or 0.0
    machine = entry.get("machine")
    return (created, machine if isinstance(machine, str) else host or "", str(entry.get("id")))


def double_claims(
    entries: list[dict[str, Any]], now: float, host: str | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every pair (winner, loser) of live reservations made on different machines
    that conflict, by the rule (see the module's invariants). `entries` are
    checked reservations, each with its `machine` (`host` for this machine's own
    not yet marked); only entries of different machines are compared, so two
    lists of one machine's grants cost nothing."""
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for entry in entries:
        if reservation.is_live(entry, now):
            groups.setdefault(pattern.first_literal(entry["compiled"]), []).append(entry)
    globs = groups.pop(None, [])
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    seen: set[tuple[int, int]] = set()

    def meet(a: dict[str, Any], b: dict[str, Any]) -> None:
        ma, mb = order_key(a, host), order_key(b, host)
        if ma[1] == mb[1] or (id(a), id(b)) in seen or (id(b), id(a)) in seen:
            return
        seen.add((id(a), id(b)))
        if reservation.EXCLUSIVE not in (a.get("mode"), b.get("mode")):
            return
        if not pattern_overlap.overlap(a["compiled"], b["compiled"]):
            return
        pairs.append((a, b) if ma < mb else (b, a))

    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                meet(a, b)
            for b in globs:
                meet(a, b)
    for i, a in enumerate(globs):
        for b in globs[i + 1 :]:
            meet(a, b)
    pairs.sort(key=lambda pair: (order_key(pair[1], host), order_key(pair[0], host)))
    return pairs


def losers(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[int, dict[str, Any]]:
    """Each losing entry (by `id()`) and the first winner it lost to."""
    found: dict[int, dict[str, Any]] = {}
    for winner, loser in pairs:
        found.setdefault(id(loser), winner)
    return found
