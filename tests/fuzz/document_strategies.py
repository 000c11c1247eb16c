"""Hypothesis strategies for ledgers and state documents that mix valid entries with
malformed ones, each entry labelled by construction (the oracle never asks the code
under test whether an entry is valid).

A reservation entry is
* `valid`: well-formed by the documented rules (ADR-0006, ADR-0015: an id of 1-64
  characters, a normalized pattern, a finite `expires_at`, mode exclusive or
  shared, an agent name or none), possibly with unknown keys, a stored `compiled`
  form that lies, a 20,000-character reason with newlines;
* `malformed`: breaks exactly one rule — not an object, no id, a pattern with `..`
  or absolute or empty, `expires_at` "abc" / null / {} / 10**400 / 1e300, an unknown
  mode, an agent that is not a name. Each would block every target if it were
  taken at face value (exclusive, live, another agent's, covering the targets);
* `ambiguous`: well-formed but odd enough that either reading is defensible (a
  repeated id, a holder record of the wrong shape): it may block, it need not.

Leases and writer cards (ADR-0014) are labelled the same way. A ledger document may
also be no object at all (a list, truncated JSON, bytes that are not UTF-8): then it
holds no valid entry, and it must be set aside, never silently dropped.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fuzz_world as fw
from hypothesis import strategies as st

from agent_hooks import repository

A_ID, B_ID = "a4d71bd7a7301dabc", "ae43627177e918ff7"
TARGETS = [*fw.PROJECT_FILES, "new.txt", "x y.py", "ünï.py", ".hidden"]
NAMES = sorted({seg for target in TARGETS for seg in target.split("/")})
GLOBS = ["*", "*.py", "*.md", "*.txt", "?.py", "s*c", "[ab]*", "l*n.py", "[sd]*"]
AGENTS: list[str | None] = [fw.OTHER, fw.OTHER, fw.THIRD, fw.ME, fw.ENDER, None]
CONVERSATIONS = [fw.SESSION, fw.OTHER_SESSION]
HOUR, DAY = 3600, 86400

# -- holders ------------------------------------------------------------------------


@functools.cache
def _child() -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(7200)"])
    atexit.register(child.kill)
    return child


@functools.cache
def _dead() -> tuple[int, int]:
    return fw.reaped_child()


def holder_record(kind: str) -> Any:
    """A holder record (ADR-0014: pid, start, host) of the given kind."""
    me = os.getpid()
    if kind == "live":
        return {"pid": me, "start": fw.proc_start(me), "host": fw.HOST}
    if kind == "child":
        pid = _child().pid
        for _ in range(200):
            start = fw.proc_start(pid)
            if start is not None:
                return {"pid": pid, "start": start, "host": fw.HOST}
        raise AssertionError("the sleeping child has no start time")
    if kind == "dead":
        pid, start = _dead()
        return {"pid": pid, "start": start, "host": fw.HOST}
    if kind == "reused":  # our pid, but another process's start time
        return {"pid": me, "start": (fw.proc_start(me) or 0) + 7, "host": fw.HOST}
    if kind == "elsewhere":
        return {"pid": 4242, "start": 99, "host": "elsewhere/boot-id/pid:[4026531836]"}
    if kind == "no_pid":
        return {"pid": None, "start": None, "host": fw.HOST}
    if kind == "no_host":
        return {"pid": me, "start": fw.proc_start(me)}
    return None  # "none": made outside Claude Code


HOLDER_KINDS = ["none", "none", "live", "child", "dead", "reused", "elsewhere", "no_pid", "no_host"]
JUNK_HOLDERS = ["abc", [1, 2], {"pid": "12", "host": fw.HOST}, {"pid": True}, {"pid": 2**70}]


def holder_counts(kind: str, keep: bool, owner: str, card_fresh: bool) -> bool:
    """ADR-0014/0015: no holder process (made outside Claude Code) or `--keep`: counts
    until it expires; on this host: while the process lives; elsewhere: while the
    owner's card is fresh."""
    if kind in ("none", "no_pid") or keep:
        return True
    if kind in ("live", "child"):
        return True
    if kind in ("dead", "reused"):
        return False
    return card_fresh  # elsewhere, no_host


# -- reservations ---------------------------------------------------------------------


@dataclass
class Res:
    raw: Any
    label: str  # valid | malformed | ambiguous
    why: str = ""
    id: str | None = None
    owner: str | None = None
    agent: str | None = None
    pattern: str | None = None
    exclusive: bool = True
    expires_at: float = 0.0
    keep: bool = False
    holder: str = "none"

    def live(self, now: float) -> bool:
        return self.expires_at > now


def _wild(seg: str) -> list[str]:
    out = ["*", seg[0] + "*", "?" + seg[1:], f"[{seg[0]}q]{seg[1:]}"]
    if "." in seg[1:]:
        out.append("*" + seg[seg.index(".", 1) :])
    return out


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """A normalized pattern: most are derived from a target (a prefix, wildcards, a
    leading `**/`, a trailing `/` or `/**`), some are free combinations."""
    if draw(st.integers(0, 4)) == 0:
        segs = draw(st.lists(st.sampled_from([*NAMES, *GLOBS, "**"]), min_size=1, max_size=4))
        text = "/".join(segs)
    else:
        full = draw(st.sampled_from(TARGETS)).split("/")
        n = draw(st.integers(1, len(full)))
        segs = [draw(st.sampled_from([s, s, *_wild(s)])) for s in full[:n]]
        if draw(st.integers(0, 4)) == 0:
            segs = ["**", *segs]
        text = "/".join(segs)
        if n < len(full) or draw(st.integers(0, 3)) == 0:
            text += draw(st.sampled_from(["", "/", "/**"]))
    return text


BAD_PATTERNS: list[Any] = [
    "",
    "/src/**",
    "/",
    "src/../held/**",
    "../held/**",
    "./src/**",
    "src//a.py",
    "src/./a.py",
    "held/[",
    "[z-a]/**",
    "[[:alpha:]]/**",
    ".",
    "..",
    "held/..",
    5,
    None,
    ["**"],
    {"p": "**"},
]
BAD_EXPIRES: list[Any] = ["abc", None, {}, [], True, 10**400, 1e300, "NaN", -(10**16), 10**15]
BAD_MODES: list[Any] = ["bogus", None, 1, "EXCLUSIVE", [], "shared "]
BAD_AGENTS: list[Any] = ["", "x" * 257, 5, [], {}, True, ["other__cc"]]
BAD_IDS: list[Any] = [5, None, "", "x" * 65, ["r"], {"a": 1}, True]
BAD_CREATED: list[Any] = ["x", [], 10**400, {}, True]
REASONS = st.sampled_from(
    ["", "farmhand-42", "PROJ-123", "refactor auth", "é\u202e💥", "x\ny", "\x1b[31mred", "\ud800"]
) | st.builds(lambda n: ("line\n" * n)[:20_000], st.integers(1, 5000))


def _times(draw: st.DrawFn, now: float, live: bool) -> float:
    offset = draw(st.integers(5 * 60, 7 * DAY)) if live else -draw(st.integers(5 * 60, 30 * DAY))
    value = now + offset
    return value if draw(st.booleans()) else float(int(value)) + 0.5


@st.composite
def valid_reservation(
    draw: st.DrawFn, rid: str, now: float, holders: list[str] = HOLDER_KINDS
) -> Res:
    agent = draw(st.sampled_from(AGENTS))
    conversation = draw(st.sampled_from(CONVERSATIONS)) if agent is None else None
    owner = agent if agent is not None else "~" + (conversation or "")
    text = draw(patterns())
    mode = draw(st.sampled_from(["exclusive", "exclusive", "shared", None]))
    live = draw(st.integers(0, 3)) > 0
    expires = _times(draw, now, live)
    keep = draw(st.booleans())
    holder = draw(st.sampled_from(holders))
    raw: dict[str, Any] = {
        "id": rid,
        "agent": agent,
        "project_root": "/somewhere/else" if draw(st.integers(0, 5)) == 0 else "PROJECT",
        "pattern": text,
        "expires_at": expires,
    }
    if mode is not None:
        raw["mode"] = mode
    if conversation is not None or draw(st.booleans()):
        raw["conversation_id"] = conversation
    if keep or draw(st.booleans()):
        raw["keep"] = keep
    if holder != "none" or draw(st.booleans()):
        raw["holder"] = holder_record(holder)
    if draw(st.booleans()):
        raw["reason"] = draw(REASONS)
    if draw(st.booleans()):
        raw["created_at"] = int(now) - draw(st.integers(0, DAY))
    if draw(st.integers(0, 3)) == 0:  # keys a newer release, or a person, added
        extra = st.text() | st.sampled_from([10**400, ["\udcff"], {"nested": None}])
        raw.update(draw(st.dictionaries(st.sampled_from(["x-note", "paths", "source"]), extra)))
    if draw(st.integers(0, 3)) == 0:  # a stored compiled form that lies: never trusted
        raw["compiled"] = draw(st.sampled_from([["", "nothing"], "junk", [], ["/", 0], None]))
    return Res(
        raw,
        "valid",
        id=rid,
        owner=owner,
        agent=agent,
        pattern=text,
        exclusive=mode != "shared",
        expires_at=expires,
        keep=keep,
        holder=holder,
    )


@st.composite
def malformed_reservation(draw: st.DrawFn, rid: str, now: float) -> Res:
    """An entry that breaks one rule; taken at face value it would block every target."""
    base: dict[str, Any] = {
        "id": rid,
        "agent": draw(st.sampled_from([fw.OTHER, fw.THIRD])),
        "project_root": "PROJECT",
        "pattern": "**",
        "mode": "exclusive",
        "expires_at": now + DAY,
        "reason": "bad",
        "holder": None,
    }
    why = draw(
        st.sampled_from(
            [
                *["not an object", "id", "no id", "pattern", "no pattern", "expires_at"],
                *["no expiry", "mode", "agent", "created_at"],
            ]
        )
    )
    raw: Any = base
    if why == "not an object":
        raw = draw(st.sampled_from([5, "r-1", ["**"], None, True, 1.5, [base]]))
    elif why == "id":
        raw["id"] = draw(st.sampled_from(BAD_IDS))
    elif why == "no id":
        del raw["id"]
    elif why == "pattern":
        raw["pattern"] = draw(st.sampled_from(BAD_PATTERNS))
    elif why == "no pattern":
        del raw["pattern"]
    elif why == "expires_at":
        raw["expires_at"] = draw(st.sampled_from(BAD_EXPIRES))
    elif why == "no expiry":
        del raw["expires_at"]
    elif why == "mode":
        raw["mode"] = draw(st.sampled_from(BAD_MODES))
    elif why == "agent":
        raw["agent"] = draw(st.sampled_from(BAD_AGENTS))
    else:
        raw["created_at"] = draw(st.sampled_from(BAD_CREATED))
    return Res(raw, "malformed", why=why)


@st.composite
def ambiguous_reservation(draw: st.DrawFn, rid: str, now: float, ids: list[str]) -> Res:
    res = draw(valid_reservation(rid, now))
    if ids and draw(st.booleans()):
        res.raw["id"] = res.id = draw(st.sampled_from(ids))
        res.why = "repeated id"
    else:
        res.raw["holder"] = draw(st.sampled_from(JUNK_HOLDERS))
        res.why = "holder of the wrong shape"
    res.label = "ambiguous"
    return res


# -- leases and cards ------------------------------------------------------------------

WRITERS = [
    fw.OTHER,
    fw.THIRD,
    fw.ME,
    f"{fw.ME}#{A_ID}",
    f"{fw.ME}#{B_ID}",
    f"{fw.OTHER}#{A_ID}",
    f"~{fw.OTHER_SESSION}",
    f"~{fw.SESSION}",
]


@dataclass
class Lease:
    raw: Any
    label: str
    writer: str = ""
    holder: str = "none"
    expires: float = 0.0
    same_worktree: bool = True


@st.composite
def leases(draw: st.DrawFn, now: float) -> Lease:
    writer = draw(st.sampled_from(WRITERS))
    owner, agent_id = fw.key_parts(writer)
    holder = draw(st.sampled_from(["live", "live", "child", "dead", "reused", "elsewhere", "none"]))
    written = now - draw(st.integers(0, 3 * HOUR))
    minutes = draw(st.sampled_from([10, 10, 60, 1440]))
    same = draw(st.integers(0, 5)) > 0
    raw: dict[str, Any] = {
        "writer": writer,
        "agent": None if owner.startswith("~") else owner,
        "conversation": owner[1:] if owner.startswith("~") else fw.SESSION,
        "agent_id": agent_id,
        "agent_type": "general-purpose" if agent_id else None,
        **(holder_record(holder) or {"pid": None, "start": None, "host": fw.HOST}),
        "worktree": "WORKTREE" if same else "/elsewhere/worktree",
        "branch": "main",
        "claimed": int(written),
        "written": int(written),
        "expires": int(written) + minutes * 60,
        "tool_use_id": None,
        "source": draw(st.sampled_from(["edit", "bash"])),
    }
    kind = draw(st.sampled_from(["valid"] * 5 + ["malformed", "ambiguous"]))
    if kind == "malformed":
        if draw(st.booleans()):
            return Lease(draw(st.sampled_from([5, "lease", None, [raw]])), "malformed")
        raw["expires"] = draw(st.sampled_from(["abc", None, True, str(int(now) + HOUR), {}]))
        return Lease(raw, "malformed")
    if kind == "ambiguous":
        raw["writer"] = draw(st.sampled_from([5, None, "", ["x"]]))
        return Lease(raw, "ambiguous", str(raw["writer"]), holder, raw["expires"], same)
    return Lease(raw, "valid", writer, holder, raw["expires"], same)


@dataclass
class LeaseFile:
    rel: str
    kind: str  # ok | wrong path | not JSON | leases not a list | a list
    items: list[Lease]


@st.composite
def lease_files(draw: st.DrawFn, now: float) -> LeaseFile:
    rel = draw(st.sampled_from(TARGETS))
    items = draw(st.lists(leases(now), min_size=1, max_size=3))
    kind = draw(
        st.sampled_from(["ok"] * 6 + ["wrong path", "not JSON", "leases not a list", "a list"])
    )
    return LeaseFile(rel, kind, items)


# -- a whole ledger ---------------------------------------------------------------------


@dataclass
class Ledger:
    shape: str  # object | list | truncated | not UTF-8 | empty | NaN | string
    entries: list[Res]
    extras: dict[str, Any]
    lease_files: list[LeaseFile]
    cards: dict[str, str]  # owner or writer key -> fresh | written | stale | junk
    lease_minutes: int = 10
    worktree_leases: str = "warn"
    strict: bool = False
    written: dict[str, Any] = field(default_factory=dict)

    @property
    def readable(self) -> bool:
        return self.shape == "object"

    def valid(self) -> list[Res]:
        return [r for r in self.entries if r.label == "valid"] if self.readable else []

    def ambiguous(self) -> list[Res]:
        return [r for r in self.entries if r.label == "ambiguous"] if self.readable else []

    def card_mtime(self, key: str, now: float) -> float:
        """`written`: when the writer last wrote (a claim touches its card), as a
        ledger agent-hooks kept would have it; the others are damage or age."""
        kind = self.cards.get(key)
        if kind == "written":
            times = [
                lease.raw["written"]
                for lf in self.lease_files
                for lease in lf.items
                if lease.label == "valid" and lease.writer == key
            ]
            return max(times, default=now - 30)
        return now - (3 * DAY if kind == "stale" else 30)

    def card_atime(self, key: str, now: float) -> float:
        """`written`: the end of the writer's latest lease (a claim sets it); the
        others as their mtime."""
        mtime = self.card_mtime(key, now)
        if self.cards.get(key) != "written":
            return mtime
        ends = [
            lease.raw["expires"]
            for lf in self.lease_files
            for lease in lf.items
            if lease.label == "valid"
            and lease.writer == key
            and isinstance(lease.raw.get("expires"), int | float)
        ]
        return max([mtime, *ends])

    def card_fresh(self, owner: str, now: float) -> bool:
        window = (self.lease_minutes or 10) * 60 + 60
        return owner in self.cards and self.card_mtime(owner, now) + window > now

    def write(self, world: fw.World, now: float) -> None:
        project = str(world.project)

        worktree = json.dumps(repository.worktree_id(project))

        def place(value: Any) -> Any:
            text = json.dumps(value).replace('"PROJECT"', json.dumps(project))
            return world.rewrite(json.loads(text.replace('"WORKTREE"', worktree)))

        doc: dict[str, Any] = {"schema": 2, "project_root": project, **place(self.extras)}
        doc["reservations"] = [place(r.raw) for r in self.entries]
        self.written = doc
        path = world.ledger / "reservations.json"
        text = json.dumps(doc)
        if self.shape == "object":
            fw.write_json(path, doc)
        elif self.shape == "list":
            fw.write_json(path, doc["reservations"])
        elif self.shape == "truncated":
            fw.write_json(path, None, raw=text[: max(1, len(text) // 2)])
        elif self.shape == "not UTF-8":
            fw.write_json(path, None, raw="")
            path.write_bytes(text[:-1].encode() + b', "x": "\xff\xfe"}')
        elif self.shape == "empty":
            fw.write_json(path, None, raw="")
        elif self.shape == "NaN":
            fw.write_json(path, None, raw=text[:-1] + ', "nan": NaN}')
        else:
            fw.write_json(path, "reservations")
        for lf in self.lease_files:
            items = [place(item.raw) for item in lf.items]
            body: Any = {"path": lf.rel, "leases": items}
            raw = None
            if lf.kind == "wrong path":
                body["path"] = "somewhere/else.txt"
            elif lf.kind == "not JSON":
                raw = json.dumps(body)[:-3]
            elif lf.kind == "leases not a list":
                body["leases"] = {"0": items[0]}
            elif lf.kind == "a list":
                body = items
            fw.write_json(world.ledger / "leases" / fw.escape_name(lf.rel), body, raw=raw)
        for key, kind in self.cards.items():
            owner = fw.key_parts(key)[0]
            card: Any = {"writer": key, "agent": None if owner.startswith("~") else owner}
            if kind == "junk":
                card = ["not", "a", "card"]
            fw.write_json(
                world.ledger / "writers" / fw.escape_name(key),
                card,
                mtime=self.card_mtime(key, now),
                atime=self.card_atime(key, now),
            )


@st.composite
def ledgers(draw: st.DrawFn, now: float) -> Ledger:
    shape = draw(
        st.sampled_from(
            ["object"] * 12 + ["list", "truncated", "not UTF-8", "empty", "NaN", "string"]
        )
    )
    entries: list[Res] = []
    ids: list[str] = []
    for i in range(draw(st.integers(0, 8))):
        rid = f"r-{i:04x}{draw(st.integers(0, 0xFFFF)):04x}"
        kind = draw(st.sampled_from(["valid"] * 5 + ["malformed"] * 3 + ["ambiguous"]))
        if kind == "valid":
            res = draw(valid_reservation(rid, now))
        elif kind == "malformed":
            res = draw(malformed_reservation(rid, now))
        else:
            res = draw(ambiguous_reservation(rid, now, ids))
        if res.id is not None and res.label == "valid" and res.id in ids:
            res.label = "ambiguous"
        if isinstance(res.id, str):
            ids.append(res.id)
        entries.append(res)
    extras: dict[str, Any] = {}
    minutes, worktree, strict = 10, "warn", False
    if draw(st.integers(0, 2)) == 0:
        raw_minutes = draw(st.sampled_from([0, 1, 10, 60, 1440, 1441, -1, "5", True, None, 2.5]))
        raw_worktree = draw(st.sampled_from(["warn", "deny", "DENY", None, 1]))
        extras["settings"] = {"lease_minutes": raw_minutes, "worktree_leases": raw_worktree}
        if isinstance(raw_minutes, int) and not isinstance(raw_minutes, bool):
            minutes = raw_minutes if 0 <= raw_minutes <= 1440 else 10
        worktree = raw_worktree if raw_worktree in ("warn", "deny") else "warn"
    if draw(st.integers(0, 3)) == 0:
        extras["settings"] = (
            draw(st.sampled_from(["fast", [], 5]))
            if "settings" not in extras
            else extras["settings"]
        )
    if draw(st.integers(0, 3)) == 0:
        extras["strict"] = draw(st.sampled_from(["yes", 1, "true", [True], None, False, True]))
        strict = extras["strict"] is True
    if draw(st.integers(0, 3)) == 0:
        extras["rejected"] = draw(st.sampled_from([[], [{"entry": 1, "why": "x"}], {}, "none", 7]))
    if draw(st.integers(0, 3)) == 0:
        extras["dropped"] = draw(
            st.sampled_from([[], [{"id": "r-x", "why": "y"}], {}, "none", [5]])
        )
    if draw(st.integers(0, 4)) == 0:
        extras["x-future-key"] = {"anything": [1, 2]}
    if shape != "object":
        minutes, worktree, strict = 10, "warn", False
    files = draw(st.lists(lease_files(now), max_size=4, unique_by=lambda lf: lf.rel))
    owners = {o for o in (r.owner for r in entries) if o}
    owners |= {lease.writer for lf in files for lease in lf.items if lease.label == "valid"}
    cards = {
        o: draw(st.sampled_from(["written", "written", "fresh", "stale", "junk", "absent"]))
        for o in sorted(owners)
    }
    cards = {o: k for o, k in cards.items() if k != "absent"}
    return Ledger(shape, entries, extras, files, cards, minutes, worktree, strict)


# Holders made by a Claude Code process: whether each counts depends on it (ADR-0014/0015).
CLAUDE_HOLDERS = ["live", "child", "dead", "reused", "elsewhere", "elsewhere", "no_host"]


@st.composite
def holder_ledgers(draw: st.DrawFn, now: float) -> Ledger:
    """A readable ledger of 1-4 valid reservations, each with a Claude Code holder,
    and each owner's card fresh, stale or absent: no damage, no leases, nothing but
    the holders to decide."""
    entries = [
        draw(valid_reservation(f"r-{i:04x}{draw(st.integers(0, 0xFFFF)):04x}", now, CLAUDE_HOLDERS))
        for i in range(draw(st.integers(1, 4)))
    ]
    owners = sorted({r.owner for r in entries if r.owner})
    cards = {o: draw(st.sampled_from(["fresh", "stale", "stale", "absent"])) for o in owners}
    cards = {o: k for o, k in cards.items() if k != "absent"}
    return Ledger("object", entries, {}, [], cards)


# -- state documents ------------------------------------------------------------------


@dataclass
class StateDoc:
    raw: Any
    trail: dict[str, list[str]]  # the valid trail entries, by field
    mirrors: list[dict[str, Any]]  # valid reservation mirrors of other projects


TRAIL_FIELDS = ("files_created", "files_modified", "files_read")


@st.composite
def state_docs(draw: st.DrawFn, now: float) -> StateDoc:
    trail: dict[str, list[str]] = {}
    raw: dict[str, Any] = {"registered": True, "conversation_id": fw.SESSION, "active": True}
    for name in TRAIL_FIELDS:
        good = draw(
            st.lists(
                st.sampled_from([f"PROJECT/{t}" for t in TARGETS] + ["/etc/hosts", "/tmp/é"])
                | st.builds(lambda s: f"PROJECT/odd/{s}", st.text(min_size=1, max_size=8)),
                unique=True,
                max_size=4,
            )
        )
        good = [g for g in good if "\x00" not in g]
        junk_items = draw(st.lists(st.sampled_from([5, None, {"p": 1}, ["x"], True]), max_size=2))
        items: list[Any] = list(good)
        for j in junk_items:
            items.insert(draw(st.integers(0, len(items))), j)
        raw[name] = items if draw(st.integers(0, 6)) else draw(st.sampled_from(["x", {}, 5]))
        trail[name] = good if isinstance(raw[name], list) else []
    mirrors = [
        {
            "id": "r-mirror01",
            "paths": ["lib/**"],
            "pattern": "lib/**",
            "mode": "exclusive",
            "reason": "",
            "created_at": int(now),
            "expires_at": int(now) + DAY,
            "keep": False,
            "project_root": "/another/project",
        }
    ]
    reservations: list[Any] = list(mirrors) if draw(st.booleans()) else []
    reservations += draw(
        st.lists(
            st.sampled_from(
                [5, "x", {"project_root": ["unhashable"]}, {"expires_at": "soon"}, {"keep": "yes"}]
            ),
            max_size=2,
        )
    )
    raw["reservations"] = reservations
    for key in ("waiting", "alerts", "notices", "conversations", "fingerprints", "trail_writers"):
        if draw(st.integers(0, 2)) == 0:
            raw[key] = draw(
                st.sampled_from(
                    [
                        [],
                        "x",
                        5,
                        {},
                        [5, None],
                        [{"writer": fw.ME, "rel": 5, "since": now}],
                        [{"writer": fw.ME, "project_root": ["x"], "rel": "a.py", "since": now}],
                        [{"writer": fw.ME, "project_root": "PROJECT", "rel": "a.py", "since": "x"}],
                        {"PROJECT/a.py": [1, 2, 3], "k": "v"},
                        ["alert \ud800", "ok"],
                    ]
                )
            )
    for key in ("last_activity", "session_start", "pid", "issue_id", "workspace", "schema"):
        if draw(st.integers(0, 3)) == 0:
            raw[key] = draw(st.sampled_from([None, "x", -1, 10**400, 1e300, [], {}, True]))
    if draw(st.integers(0, 4)) == 0:
        raw["x-unknown"] = {"kept": "maybe"}
    return StateDoc(raw, trail, mirrors if mirrors[0] in reservations else [])


def place(world: fw.World, value: Any) -> Any:
    text = json.dumps(value).replace("PROJECT", str(world.project))
    return json.loads(text)


def write_state(world: fw.World, agent: str, doc: StateDoc) -> Path:
    path = world.state_dir / f"state-{agent}.json"
    fw.write_json(path, place(world, doc.raw))
    return path
