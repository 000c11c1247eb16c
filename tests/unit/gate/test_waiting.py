"""gate.waiting: a writer refused a file is told, at its next PostToolUse,
that the file is free and why (released, lease ended, holder gone, reservation
dropped with its why); other writers' notes are kept; notes older than a day go
unsaid. Leases and reservations are real files in the conftest project's ledger."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity, liveness
from agent_hooks.agents import state_file
from agent_hooks.gate import waiting
from agent_hooks.leases import lease_release, lease_store
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from pids import dead_pid

NOW = float(int(time.time()))
ALICE, SUB, BOB = Writer("alice", "c1"), Writer("alice", "c1", "s1"), Writer("bob", "c2")
ALIVE = {"CLAUDE_PID": str(os.getpid())}


@pytest.fixture
def sd(state_dir: Path) -> str:
    return str(state_dir)


@pytest.fixture
def root(project: Path) -> str:
    return str(project)


def lease(
    sd: str, root: str, me: Writer, rel: str, now: float = NOW, pid: int = os.getpid()
) -> None:
    repo = Repo(root, sd, {"AGENT_HOOKS_LEASE_MINUTES": "10"}, branch="main")
    out = lease_store.claim(repo, rel, me, now, holder_pid=pid)
    assert out.written


def reserve(sd: str, root: str, agent: str, pat: str, holder: dict[str, Any] | None = None) -> str:
    out = reservation_store.reserve(
        Repo(root, sd),
        Writer(agent, None),
        [(pat, pattern.compile(pat))],
        NOW,
        reason="",
        ttl=3600,
        shared=False,
        keep=False,
        holder=holder,
    )  # fmt: skip
    assert out.conflicts == []
    rid: str = out.changed[0]["id"]
    return rid


def note(
    root: str, rel: str, kind: str, holder: str, by: Writer = ALICE, since: Any = NOW
) -> dict[str, Any]:
    return {"writer": by.key, "project_root": root, "rel": rel, "kind": kind, "holder": holder,
            "since": since}  # fmt: skip


def freed(
    sd: str, *notes: dict[str, Any], me: Writer = ALICE, now: float = NOW
) -> tuple[list[str], list[Any]]:
    """(what `me` is told, the notes left)."""
    doc: dict[str, Any] = {"waiting": list(notes)}
    told = waiting.freed(doc, me, sd, now)
    return told, doc["waiting"]


def said(rel: str, why: str) -> list[str]:
    return [f"agent-hooks: {rel} is free now ({why}); you may edit it."]


def test_a_lease_still_held_keeps_the_note_then_release_frees_it(sd: str, root: str) -> None:
    lease(sd, root, BOB, "a.py")
    waits = note(root, "a.py", "lease", "bob")
    assert freed(sd, waits) == ([], [waits])
    lease_release.release_writer(ledger_location.directory(sd, root), "bob", NOW)
    assert freed(sd, waits) == (said("a.py", "the holder finished with it"), [])


def test_a_lease_that_ended(sd: str, root: str) -> None:
    lease(sd, root, BOB, "a.py", now=NOW - 601)
    told, left = freed(sd, note(root, "a.py", "lease", "bob"))
    assert told == said("a.py", "the holder's lease ended (no write for a while)") and left == []


def test_a_lease_whose_holder_is_gone(sd: str, root: str) -> None:
    lease(sd, root, BOB, "a.py", pid=dead_pid())
    told, _ = freed(sd, note(root, "a.py", "lease", "bob"))
    assert told == said("a.py", "its holder's process is gone")


def test_a_subagents_lease_frees_its_parent(sd: str, root: str) -> None:
    lease(sd, root, SUB, "a.py")
    waits = note(root, "a.py", "lease", SUB.key)
    assert freed(sd, waits) == ([], [waits])
    lease_release.release_writer(ledger_location.directory(sd, root), SUB.key, NOW)
    assert freed(sd, waits)[0] == said("a.py", "the holder finished with it")


def test_a_reservation_held_then_released(sd: str, root: str) -> None:
    rid = reserve(sd, root, "bob", "src/**")
    waits = note(root, "src/app.py", "reservation", rid)
    assert freed(sd, waits) == ([], [waits])
    reservation_store.release(Repo(root, sd), Writer("bob", None), NOW, everything=True)
    assert freed(sd, waits) == (said("src/app.py", "the reservation was released or expired"), [])


def test_a_reservation_dropped_because_its_holder_is_gone(sd: str, root: str) -> None:
    dead = {"pid": dead_pid(), "start": None, "host": liveness.host()}
    rid = reserve(sd, root, "bob", "src/**", holder=dead)
    reserve(sd, root, "carol", "docs/**")  # the next write drops it
    told, _ = freed(sd, note(root, "src/app.py", "reservation", rid))
    assert told == said("src/app.py", "the reservation was dropped: its holder's process is gone")


def test_a_reservation_released_by_force_says_by_whom(sd: str, root: str) -> None:
    rid = reserve(sd, root, "bob", "src/**")
    reservation_store.release(
        Repo(root, sd),
        Writer("dana", None),
        NOW,
        ids=[rid],
        force=True,
        forced_by="dana",
    )
    told, _ = freed(sd, note(root, "src/app.py", "reservation", rid))
    assert told == said(
        "src/app.py", "the reservation was dropped: released by dana (release --force)"
    )


def test_notes_of_other_writers_are_kept(sd: str, root: str) -> None:
    """Only the writer that waited is told; its subagent's note waits for the subagent."""
    mine, subs, bobs = (note(root, "a.py", "lease", "x", by=w) for w in (ALICE, SUB, BOB))
    told, left = freed(sd, mine, subs, bobs)
    assert told == said("a.py", "the holder finished with it") and left == [subs, bobs]
    assert freed(sd, subs, me=SUB)[1] == []


@pytest.mark.parametrize(
    "since", [NOW - waiting.MAX_AGE - 1, None, "yesterday"], ids=["a-day-and-1s", "none", "text"]
)
def test_stale_notes_are_dropped_unsaid_whoever_wrote_them(sd: str, root: str, since: Any) -> None:
    lease(sd, root, BOB, "a.py")
    stale = [note(root, "a.py", "lease", "bob", by=w, since=since) for w in (ALICE, BOB)]
    assert freed(sd, *stale) == ([], [])
    fresh = note(root, "a.py", "lease", "bob", since=NOW - waiting.MAX_AGE)
    assert freed(sd, fresh) == ([], [fresh])  # a day old exactly, still held: kept


def test_a_note_that_names_no_project_is_dropped(sd: str) -> None:
    told, left = freed(sd, {"writer": "alice", "rel": "a.py", "since": NOW})
    assert left == [] and told == said("a.py", "it is no longer tracked")


NO_REL = (
    "waiting.freed (waiting.py:97) formats entry['rel'] after _free said 'it is no longer "
    "tracked': a note without `rel` raises KeyError, and the writer's PostToolUse state "
    "update fails (open) on every call until the note is a day old"
)


def test_a_note_without_a_path_is_dropped(sd: str, root: str) -> None:
    told, left = freed(sd, {"writer": "alice", "project_root": root, "since": NOW})
    assert left == [] and len(told) <= 1


def test_note_keeps_one_per_writer_and_file_and_at_most_max(sd: str, root: str) -> None:
    agent = identity.Agent("alice", sd)
    for i in range(waiting.MAX_WAITING + 5):
        waiting.note(agent, note(root, f"f{i}.py", "lease", "bob"), NOW, lambda m: None)
    waiting.note(agent, note(root, "f24.py", "lease", "carol"), NOW + 1, lambda m: None)
    doc, _ = state_file.read(agent, NOW)
    rels = [n["rel"] for n in doc["waiting"]]
    assert len(rels) == waiting.MAX_WAITING and rels[-1] == "f24.py" and rels.count("f24.py") == 1
    assert doc["waiting"][-1]["holder"] == "carol" and rels[0] == "f5.py"
