"""leases.lease_store: lease files and writer files under a ledger directory,
claims under the lease lock, releases, sweep, heartbeat; and two real-process
checks: 8 writers claiming one file at once, and a holder killed with SIGKILL.

Holders are this test process (`CLAUDE_PID` = our pid: alive) unless a test says
otherwise; time is passed in, close to the real clock (mtimes are compared to it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_hooks import liveness
from agent_hooks.leases import lease, lease_release, lease_store, writer_cards
from agent_hooks.ledger.repo import Repo
from agent_hooks.writers import Writer
from hook_runner import ROOT
from pids import dead_pid

SRC = str(ROOT / "src")
NOW = float(int(time.time()))
WT = "/repo"
ALIVE = os.getpid()  # this test process stands in for the client
ALICE, SUB, BOB = Writer("alice", "c1"), Writer("alice", "c1", "s1"), Writer("bob", "c2")


@pytest.fixture
def book(tmp_path: Path) -> str:
    return str(tmp_path / "ledger")


def at(book: str, worktree: str = WT, minutes: int = 10, branch: str | None = "main") -> Repo:
    """The work tree `worktree` (no git: its own path is its id) of a repository whose
    ledger is `book`, with `minutes` lease minutes."""
    return Repo(worktree, os.path.dirname(book), {"AGENT_HOOKS_LEASE_MINUTES": str(minutes)},
                ledger=book, worktree=worktree, branch=branch)  # fmt: skip


def claim(book: str, rel: str, me: Writer, now: float = NOW, worktree: str = WT,
          holder: int | None = ALIVE, minutes: int = 10) -> lease_store.Claim:  # fmt: skip
    return lease_store.claim(at(book, worktree, minutes), rel, me, now, holder_pid=holder)


def holders(book: str, rel: str) -> list[str]:
    return [item["writer"] for item in lease_store.read(book, rel)]


def held_by(book: str, key: str) -> list[str]:
    """The paths `key` holds, read from the lease files (cards hold no path lists)."""
    return sorted(rel for rel, item in lease_release.everything(book) if item["writer"] == key)


def others_heard_from(book: str, me: Writer, minutes: int) -> bool:
    """The shell gate's question before parsing a command, on a ledger at `book`."""
    return writer_cards.others_heard_from(book, me.key, minutes, NOW)


def test_a_claim_writes_the_lease_and_the_writers_card(book: str) -> None:
    out = claim(book, "src/app.py", ALICE)
    assert out.written and out.blockers == [] and out.problem is None
    [held] = lease_store.read(book, "src/app.py")
    assert held["writer"] == "alice" and held["worktree"] == WT and held["expires"] == NOW + 600
    assert (held["pid"], held["host"]) == (os.getpid(), liveness.host())
    assert os.path.isfile(os.path.join(book, "leases", "src%2Fapp.py"))
    card = writer_cards.card(book, "alice")
    assert card is not None and card["writer"] == "alice" and "paths" not in card
    assert held_by(book, "alice") == ["src/app.py"]


def test_a_second_claim_rewrites_only_the_lease(book: str) -> None:
    """A claim creates one file (the lease); the card is written once, then touched."""
    claim(book, "a.py", ALICE)
    card = Path(writer_cards.writer_path(book, "alice"))
    before = (card.stat().st_ino, card.read_bytes())
    claim(book, "b.py", ALICE, now=NOW + 1)
    assert (card.stat().st_ino, card.read_bytes()) == before


def test_a_renewal_within_resolution_writes_nothing(book: str) -> None:
    claim(book, "a.py", ALICE)
    path = Path(lease_store.lease_path(book, "a.py"))
    before = (path.stat().st_ino, path.read_bytes())
    out = claim(book, "a.py", ALICE, now=NOW + lease.RESOLUTION - 1)
    assert not out.written and (path.stat().st_ino, path.read_bytes()) == before
    out = claim(book, "a.py", ALICE, now=NOW + lease.RESOLUTION)
    [held] = lease_store.read(book, "a.py")
    assert out.written and held["claimed"] == NOW and held["written"] == NOW + lease.RESOLUTION


def test_another_writer_is_told_the_holder_and_nothing_is_written(book: str) -> None:
    claim(book, "a.py", ALICE)
    before = Path(lease_store.lease_path(book, "a.py")).read_bytes()
    out = claim(book, "a.py", BOB)
    assert not out.written and [b["writer"] for b in out.blockers] == ["alice"]
    assert Path(lease_store.lease_path(book, "a.py")).read_bytes() == before
    assert writer_cards.card(book, "bob") is None


def test_the_parents_lease_moves_to_its_subagent(book: str) -> None:
    claim(book, "a.py", ALICE)
    assert claim(book, "a.py", SUB).written
    assert holders(book, "a.py") == [SUB.key]
    assert held_by(book, "alice") == []  # its only path moved
    assert [b["writer"] for b in claim(book, "a.py", ALICE).blockers] == [SUB.key]


def test_one_lease_per_worktree(book: str) -> None:
    claim(book, "a.py", ALICE)
    out = claim(book, "a.py", BOB, worktree="/repo-feature")
    assert out.written and [e["writer"] for e in out.elsewhere] == ["alice"]
    assert holders(book, "a.py") == ["alice", "bob"]


def test_claim_many_takes_what_is_free_under_one_lock(book: str) -> None:
    claim(book, "b.py", BOB)
    out = lease_store.claim_many(at(book, branch=None), ["a.py", "b.py", "c/d.py"], ALICE, NOW,
                                 holder_pid=ALIVE)  # fmt: skip
    assert {rel: o.written for rel, o in out.items()} == {
        "a.py": True,
        "b.py": False,
        "c/d.py": True,
    }
    assert [b["writer"] for b in out["b.py"].blockers] == ["bob"]
    assert held_by(book, "alice") == ["a.py", "c/d.py"]
    assert lease_store.all_paths(book) == ["a.py", "b.py", "c/d.py"]


def test_release_writer_drops_its_leases_and_its_card(book: str) -> None:
    claim(book, "a.py", SUB)
    claim(book, "b.py", SUB)
    claim(book, "b.py", BOB, worktree="/other")
    assert sorted(lease_release.release_writer(book, SUB.key, NOW)) == ["a.py", "b.py"]
    assert lease_store.all_paths(book) == ["b.py"] and holders(book, "b.py") == ["bob"]
    assert writer_cards.card(book, SUB.key) is None and writer_cards.card(book, "bob") is not None
    lease_release.describe_writer(book, SUB, description="fix login", name=None, now=NOW)
    assert writer_cards.card(book, SUB.key)["description"] == "fix login"  # type: ignore[index]
    assert lease_release.release_writer(book, SUB.key, NOW) == []
    assert writer_cards.card(book, SUB.key) is None  # its card goes with it


def test_release_conversation_drops_its_main_writer_and_subagents_only(book: str) -> None:
    """SessionEnd of alice's conversation c1: not c2 of the same agent, not bob."""
    other = os.getppid()
    claim(book, "main.py", ALICE)
    claim(book, "sub.py", SUB)
    claim(book, "c2.py", Writer("alice", "c2"), holder=other)
    claim(book, "bob.py", BOB, holder=other)
    gone = lease_release.release_conversation(book, "alice", "c1", os.getpid(), NOW, timeout=2)
    assert sorted(gone) == ["main.py", "sub.py"]
    assert lease_store.all_paths(book) == ["bob.py", "c2.py"]
    assert held_by(book, "alice") == ["c2.py"]
    assert writer_cards.card(book, SUB.key) is None


def test_sweep_drops_expired_and_dead_holders_and_says_why(book: str) -> None:
    claim(book, "old.py", ALICE, now=NOW - 700)
    claim(book, "dead.py", BOB, holder=dead_pid())
    claim(book, "live.py", SUB)
    swept = {rel: why for rel, _, why in lease_release.sweep(book, NOW)}
    assert swept == {"old.py": "it expired", "dead.py": "its holder's process is gone"}
    assert lease_store.all_paths(book) == ["live.py"]


def test_sweep_drops_cards_idle_a_day_without_leases(book: str) -> None:
    writer_cards.heartbeat(book, ALICE, ALIVE, NOW)
    os.utime(writer_cards.writer_path(book, "alice"), (NOW - 2 * 86400, NOW - 2 * 86400))
    writer_cards.heartbeat(book, BOB, ALIVE, NOW)  # fresh
    carol = Path(writer_cards.writer_path(book, "carol"))
    carol.write_text("{torn")
    os.utime(carol, (NOW - 2 * 86400, NOW - 2 * 86400))
    lease_release.sweep(book, NOW)
    assert sorted(os.listdir(os.path.join(book, "writers"))) == ["bob"]


def test_sweep_leaves_an_in_flight_write_alone(book: str) -> None:
    writer_cards.heartbeat(book, BOB, ALIVE, NOW)
    temp = Path(book, "writers", f".alice.{os.getpid()}.0a1b2c3d.tmp")
    temp.write_text('{"writer": "ali')  # another process is writing it right now
    os.utime(temp, (NOW - 2 * 86400, NOW - 2 * 86400))
    lease_release.sweep(book, NOW)
    assert temp.exists()


def test_the_bash_gate_and_heard_from_go_by_the_cards_mtime(book: str) -> None:
    assert not others_heard_from(book, ALICE, 10)  # no writers yet
    claim(book, "a.py", ALICE)
    assert not others_heard_from(book, ALICE, 10)  # only me
    claim(book, "b.py", BOB)
    assert others_heard_from(book, ALICE, 10)
    window = 10 * 60 + lease.RESOLUTION
    os.utime(writer_cards.writer_path(book, "bob"), (NOW - window, NOW - window))
    assert not others_heard_from(book, ALICE, 10)
    assert not writer_cards.heard_from(book, "bob", NOW, 10)
    assert writer_cards.heard_from(book, "bob", NOW, 11)
    writer_cards.heartbeat(book, BOB, ALIVE, NOW)
    assert writer_cards.heard_from(book, "bob", NOW, 10) and others_heard_from(book, ALICE, 10)
    assert held_by(book, "bob") == ["b.py"]  # a heartbeat only touches
    assert not writer_cards.heard_from(book, "nobody", NOW, 10)


def test_a_card_carries_the_end_of_its_writers_latest_lease(book: str) -> None:
    """Bob leases with 60 minutes, Alice reads with 10: 20 minutes after Bob's last
    write his card's mtime is outside Alice's window but its atime (his lease's end)
    keeps the gate open; a heartbeat keeps that atime; past it the gate closes."""
    claim(book, "b.py", BOB, minutes=60)
    path = writer_cards.writer_path(book, "bob")
    assert os.stat(path).st_atime == lease_store.read(book, "b.py")[0]["expires"]
    os.utime(path, (os.stat(path).st_atime, NOW - 1200))
    assert others_heard_from(book, ALICE, 10)
    writer_cards.heartbeat(book, BOB, ALIVE, NOW - 1200)
    assert os.stat(path).st_atime >= NOW + 2400 and others_heard_from(book, ALICE, 10)
    os.utime(path, (NOW - lease.RESOLUTION, NOW - 1200))
    assert not others_heard_from(book, ALICE, 10)
    claim(book, "b.py", BOB, now=NOW + 120, minutes=60)
    assert os.stat(path).st_atime == NOW + 120 + 3600
    claim(book, "c.py", BOB, now=NOW + 240, minutes=5)  # a shorter lease: the end stays
    assert os.stat(path).st_atime == NOW + 120 + 3600


def test_heartbeat_creates_the_card_when_missing(book: str) -> None:
    writer_cards.heartbeat(book, SUB, ALIVE, NOW)
    doc = writer_cards.card(book, SUB.key)
    assert doc is not None and doc["writer"] == SUB.key and doc["pid"] == os.getpid()
    writer_cards.heartbeat(book, SUB, ALIVE, NOW - 5)  # present: only its mtime changes
    assert os.stat(writer_cards.writer_path(book, SUB.key)).st_mtime == NOW - 5
    assert writer_cards.card(book, SUB.key) == doc


@pytest.mark.parametrize("content", [b"{torn", b"[]", b'"x"', b'{"path": "other.py", "leases": []}',
                                     b'{"path": "a.py", "leases": "no"}'])  # fmt: skip
def test_a_corrupt_lease_file_counts_as_no_lease(book: str, content: bytes) -> None:
    claim(book, "a.py", ALICE)
    Path(lease_store.lease_path(book, "a.py")).write_bytes(content)
    assert lease_store.read(book, "a.py") == []
    assert claim(book, "a.py", BOB).written and holders(book, "a.py") == ["bob"]


def test_a_corrupt_lease_file_is_reported(book: str) -> None:
    """Named, with what was made of it; the claim goes ahead and rewrites the file
    whole, so the next claim finds nothing to report."""
    claim(book, "a.py", ALICE)
    path = lease_store.lease_path(book, "a.py")
    Path(path).write_bytes(b"{torn")
    first = claim(book, "a.py", BOB)
    assert first.problem == f"lease file {path} is unreadable; taken as no lease"
    assert first.written and holders(book, "a.py") == ["bob"]
    assert claim(book, "a.py", BOB, now=NOW + 120).problem is None


# --- real processes ------------------------------------------------------------------------

RACER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from agent_hooks.writers import Writer
from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo
book, name, barrier, ready, pid, now = sys.argv[2:8]
repo = Repo("/repo", book, {}, ledger=book, worktree="/repo", branch="main")
open(ready, "w").close()
while not os.path.exists(barrier):
    time.sleep(0.0005)
out = lease_store.claim(repo, "src/app.py", Writer(name, "c-" + name), float(now),
                        holder_pid=int(pid))
print(json.dumps([out.written, [b["writer"] for b in out.blockers], out.problem]))
"""


def test_eight_writers_claiming_one_file_at_once_exactly_one_gets_it(
    book: str, tmp_path: Path
) -> None:
    names = [f"racer{i}" for i in range(8)]
    barrier = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", RACER, SRC, book, name, str(barrier),
                               str(tmp_path / f"ready-{name}"), str(os.getpid()), str(NOW)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in names]  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready-{n}").exists() for n in names):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
            time.sleep(0.005)
        barrier.touch()
        results = [json.loads(p.communicate(timeout=30)[0]) for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    winners = [n for n, (written, _, _) in zip(names, results, strict=True) if written]
    assert len(winners) == 1, results
    for name, (written, blockers, problem) in zip(names, results, strict=True):
        assert problem is None and blockers == ([] if written else winners), (name, results)
    assert holders(book, "src/app.py") == winners


HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import os
from agent_hooks.writers import Writer
from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo
repo = Repo("/repo", sys.argv[2], {}, ledger=sys.argv[2], worktree="/repo")
out = lease_store.claim(repo, "a.py", Writer("alice", "c1"), time.time(),
                        holder_pid=os.getpid())
print(out.written, flush=True)
time.sleep(60)
"""


def test_a_holder_killed_with_sigkill_stops_blocking_at_once(book: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, SRC, book], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "True"
        now = time.time()
        seen = lease.judge(lease_store.read(book, "a.py"), BOB, WT, now, liveness.alive)
        assert [b["pid"] for b in seen.blockers] == [proc.pid]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    seen = lease.judge(lease_store.read(book, "a.py"), BOB, WT, now, liveness.alive)
    assert seen.blockers == []
    assert claim(book, "a.py", BOB, now=now).written


def test_paths_under_finds_by_prefix_cut_names_included(book: str) -> None:
    deep = "src/" + "d" * 150 + "/x.py"  # too long for a file name: cut, with a hash
    for rel in ("src/a.py", "src/sub/b.py", "srcfoo/c.py", "lib/d.py", ".hidden/e", deep):
        claim(book, rel, ALICE)
    assert lease_store.paths_under(book, lambda p: True, "src/") == sorted(
        ["src/a.py", "src/sub/b.py", deep]
    )
    assert lease_store.paths_under(book, lambda p: True, "src/" + "d" * 150) == [deep]
    assert lease_store.paths_under(book, lambda p: True, ".hidden") == [".hidden/e"]
    assert lease_store.paths_under(book, lambda p: p.endswith(".py"), "") == sorted(
        ["src/a.py", "src/sub/b.py", "srcfoo/c.py", "lib/d.py", deep]
    )


def test_a_cut_name_with_a_byte_that_is_no_utf8_is_found_under_its_directory(book: str) -> None:
    """A directory whose name is no UTF-8 (`\\xff`, read as `\\udcff`), a leased file deep
    under it: `rm -rf` of that directory must find the lease."""
    odd = "d" * 40 + "\udcff" + "e" * 40
    deep = f"src/{odd}/" + "f" * 150 + ".py"
    claim(book, deep, ALICE)
    assert lease_store.paths_under(book, lambda p: True, f"src/{odd}") == [deep]
    assert lease_store.paths_under(book, lambda p: True, f"src/{odd}/") == [deep]
