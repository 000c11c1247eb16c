"""The remote ledger's documents (format 2), the merge of what one fetch shows
with what this machine holds, changes written through to the remote, and
switching a repository on and off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import jsonio
from agent_hooks.ledger import remote_git, remote_grants, remote_ledger, remote_view
from agent_hooks.reservations import (
    index_build,
    pattern,
    reservation,
    reservation_index,
)
from ledger_machines import (
    NOW,
    REMOTE,
    lock_held_elsewhere,
    remote_files,
    remote_reservations,
    run_git,
)

INSTANCE = "0123456789abcdef"


def entry(rid: str, text: str, agent: str = "a", **extra: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "agent": agent,
        "pattern": text,
        "mode": "exclusive",
        "expires_at": NOW + 600,
        "created_at": NOW,
        **extra,
    }


def meta(**over: Any) -> dict[str, Any]:
    return {"format": 2, "lineage": "L", "generation": 4, **over}


def grants_doc(
    host: str,
    entries: list[dict[str, Any]],
    seq: int = 1,
    stones: list[dict[str, Any]] | None = None,
    instance: str = INSTANCE,
) -> dict[str, Any]:
    return remote_grants.document(host, instance, seq, entries, stones or [], NOW)


def snapshot(
    files: dict[str, Any], unread: dict[str, str] | None = None, commit: str = "c" * 40
) -> remote_git.Snapshot:
    snap = remote_git.Snapshot(commit)
    snap.files = {
        k: v if isinstance(v, bytes) else json.dumps(v).encode() for k, v in files.items()
    }
    snap.entries = {k: ("100644", "0" * 40) for k in [*files, *(unread or {})]}
    snap.unread = dict(unread or {})
    return snap


def state_of(files: dict[str, Any], **kw: Any) -> remote_ledger.RemoteState:
    return remote_ledger.parse(snapshot({"ledger.json": meta(), **files}, **kw))


# --- names ---------------------------------------------------------------------------


def test_a_host_is_named_by_agent_hooks_host_or_by_the_machine() -> None:
    assert remote_ledger.host_name({"AGENT_HOOKS_HOST": "ci-7.example"}) == "ci-7.example"
    derived = remote_ledger.host_name({})
    assert remote_ledger.check_host(derived) == derived
    for bad in ("../x", "a b", ".hidden", "-x", "x" * 65, "é"):
        with pytest.raises(remote_ledger.HostNameError) as caught:
            remote_ledger.host_name({"AGENT_HOOKS_HOST": bad})
        assert "\n" not in str(caught.value) and "AGENT_HOOKS_HOST" in str(caught.value)


# --- parsing what was fetched ------------------------------------------------------------


def test_an_absent_ledger_is_empty_and_not_broken() -> None:
    state = remote_ledger.parse(remote_git.Snapshot(None))
    assert state.grants == {} and state.hosts == {} and state.broken is None
    assert state.lineage == "" and state.generation == 0


def test_a_ledger_commit_is_parsed_and_what_cannot_be_read_is_named_never_taken_as_empty() -> None:
    state = state_of(
        {
            "grants/alpha.json": grants_doc("alpha", [entry("r-1", "src/**")]),
            "grants/beta.json": b"{ truncated",
            "grants/gamma.json": {**grants_doc("gamma", []), "format": 3},
            "hosts/alpha.json": {"format": 2, "heartbeat": NOW, "leases": []},
            "hosts/beta.json": {"format": 1, "heartbeat": NOW},
            "hosts/..json": {"format": 2, "heartbeat": NOW},
            "notes/extra.txt": b"kept",
        },
        unread={"grants/delta.json": "grants/delta.json is 2000000 bytes, over the limit"},
    )
    assert state.broken is None and (state.lineage, state.generation) == ("L", 4)
    assert [r["id"] for r in state.grants["alpha"].reservations] == ["r-1"]
    assert sorted(state.grant_problems) == ["beta", "delta", "gamma"]
    assert "not JSON" in state.grant_problems["beta"]
    assert "format 3 where this agent-hooks reads format 2" in state.grant_problems["gamma"]
    assert "over the limit" in state.grant_problems["delta"]
    assert list(state.hosts) == ["alpha"] and "format 1" in state.host_problems["beta"]
    assert any("bad host name" in p for p in state.problems)
    assert sorted(state.unreadable()) == [
        "grants/beta.json",
        "grants/delta.json",
        "grants/gamma.json",
        "hosts/beta.json",
    ]
    assert "notes/extra.txt" in state.entries  # carried over by whoever pushes next


@pytest.mark.parametrize(
    ("files", "unread", "why"),
    [
        ({}, None, "holds no ledger.json"),
        ({"ledger.json": b"{"}, None, "ledger.json is damaged"),
        ({"ledger.json": {"schema": 1, "lineage": "L", "generation": 2}}, None, "of format None"),
        ({"ledger.json": meta(format=3)}, None, "of format 3, which this agent-hooks (format 2)"),
        ({"ledger.json": meta(generation=True)}, None, "no lineage or generation"),
        ({}, {"ledger.json": "ledger.json is 9 bytes"}, "ledger.json cannot be read"),
    ],
)
def test_a_ledger_json_that_cannot_be_read_makes_the_whole_ledger_broken(
    files: dict[str, Any], unread: dict[str, str] | None, why: str
) -> None:
    state = remote_ledger.parse(
        snapshot({**files, "grants/alpha.json": grants_doc("alpha", [])}, unread)
    )
    assert state.broken is not None and why in state.broken, state.broken
    assert state.grants == {}  # nothing of it is believed


def test_a_snapshot_git_could_not_read_is_broken() -> None:
    snap = remote_git.Snapshot("d" * 40)
    snap.broken = "refs/agent-hooks/v2/ledger on origin names a blob, not a commit"
    assert remote_ledger.parse(snap).broken == snap.broken


# --- this machine's document ----------------------------------------------------------------


def test_this_machines_document_keeps_its_seq_while_unchanged_and_is_pushed_when_the_remote_differs() -> (
    None
):
    own = [reservation.checked(entry("r-1", "src/**", machine="alpha"))]
    empty = state_of({})
    first = remote_ledger.own_document(empty, {}, "alpha", INSTANCE, own, [], NOW)
    assert first.seq == 1 and first.push  # absent on the remote
    record = {"own": {"seq": first.seq, "digest": first.digest, "instance": INSTANCE}}
    there = state_of({"grants/alpha.json": jsonio.loads(first.data)})
    again = remote_ledger.own_document(there, record, "alpha", INSTANCE, own, [], NOW + 5)
    assert (again.seq, again.push) == (1, False)  # unchanged, already there
    rewound = state_of({"grants/alpha.json": grants_doc("alpha", [], seq=0)})
    assert remote_ledger.own_document(rewound, record, "alpha", INSTANCE, own, [], NOW).push
    changed = remote_ledger.own_document(there, record, "alpha", INSTANCE, [], [], NOW)
    assert (changed.seq, changed.push) == (2, True)
    ahead = state_of({"grants/alpha.json": grants_doc("alpha", [], seq=7)})
    past = remote_ledger.own_document(ahead, record, "alpha", INSTANCE, own, [], NOW)
    assert (past.seq, past.push) == (8, True)  # a write whose local half was lost
    theirs = state_of({"grants/alpha.json": grants_doc("alpha", [], seq=9, instance="x" * 16)})
    assert remote_ledger.own_document(theirs, record, "alpha", INSTANCE, own, [], NOW).push
    damaged = state_of({"grants/alpha.json": b"{"})
    assert remote_ledger.own_document(damaged, record, "alpha", INSTANCE, own, [], NOW).push
    expired = [reservation.checked(entry("r-1", "src/**", expires_at=NOW - 1))]
    gone = remote_ledger.own_document(there, record, "alpha", INSTANCE, expired, [], NOW)
    assert jsonio.loads(gone.data)["reservations"] == []  # type: ignore[index]


# --- the merge: what this machine believes after one fetch --------------------------------------


def local_doc(*entries: dict[str, Any], **over: Any) -> dict[str, Any]:
    return {"settings": {"remote": REMOTE}, "reservations": list(entries), **over}


def test_another_machines_older_version_never_replaces_a_newer_one_taken_before() -> None:
    """The remote rewound to an earlier commit: beta's document there (seq 1) still
    holds r-old, released since (seq 2, taken before); the newer stands."""
    cache = {"beta": grants_doc("beta", [entry("r-new", "lib/**")], seq=2)}
    state = state_of({"grants/beta.json": grants_doc("beta", [entry("r-old", "src/**")], seq=1)})
    merged = remote_ledger.merge(state, local_doc(), cache, "alpha", NOW)
    assert [r["id"] for r in merged.others] == ["r-new"]
    assert any("older version" in n and "rewound" in n for n in merged.notes)
    assert merged.cache["beta"]["seq"] == 2
    newer = state_of({"grants/beta.json": grants_doc("beta", [entry("r-3", "x/**")], seq=3)})
    taken = remote_ledger.merge(newer, local_doc(), cache, "alpha", NOW)
    assert [r["id"] for r in taken.others] == ["r-3"] and taken.cache["beta"]["seq"] == 3


def test_a_document_missing_or_unreadable_stands_as_taken_until_its_reservations_end() -> None:
    cache = {
        "beta": grants_doc("beta", [entry("r-b", "lib/**")]),
        "gamma": grants_doc("gamma", [entry("r-g", "doc/**")]),
    }
    state = state_of({"grants/gamma.json": b"{"})  # beta's is gone (a deleted ref, say)
    merged = remote_ledger.merge(state, local_doc(), cache, "alpha", NOW)
    assert sorted(r["id"] for r in merged.others) == ["r-b", "r-g"]
    assert list(merged.unreadable) == ["gamma"] and "not JSON" in merged.unreadable["gamma"]
    assert any("beta's reservations are missing" in n for n in merged.notes)
    later = remote_ledger.merge(state, local_doc(), cache, "alpha", NOW + 601)
    assert later.others == [] and sorted(later.cache) == ["beta", "gamma"]  # ended, still known
    week = NOW + remote_ledger.FORGET_AFTER + 1
    assert remote_ledger.merge(state, local_doc(), cache, "alpha", week).cache == {}


def test_an_empty_newer_version_keeps_an_older_one_out() -> None:
    """beta reserved r-1 (seq 1) and released it (seq 2, nothing left): a reader that
    took seq 2 keeps it, so the remote rewound to seq 1 does not bring r-1 back —
    not at this sync, nor at the next (found by the model: a version taken was
    forgotten once nothing in it counted, and the older one was taken next)."""
    cache = {"beta": grants_doc("beta", [], seq=2)}
    rewound = state_of({"grants/beta.json": grants_doc("beta", [entry("r-1", "src/**")], seq=1)})
    first = remote_ledger.merge(rewound, local_doc(), cache, "alpha", NOW)
    assert first.others == [] and first.cache["beta"]["seq"] == 2
    second = remote_ledger.merge(rewound, local_doc(), first.cache, "alpha", NOW + 60)
    assert second.others == []


def test_a_tombstone_from_another_machine_ends_this_machines_grant() -> None:
    mine = entry("r-1", "src/**", machine="alpha")
    stone = remote_grants.tombstone(
        {**mine, "machine": "alpha"}, "beta", "released by b (release --force)", NOW
    )
    state = state_of({"grants/beta.json": grants_doc("beta", [], stones=[stone])})
    merged = remote_ledger.merge(state, local_doc(mine), {}, "alpha", NOW)
    assert merged.own == []
    [(res, why)] = merged.dropped
    assert res["id"] == "r-1" and why == "released by b (release --force) (machine beta)"


def test_this_machines_tombstones_end_the_others_grant_here_at_once() -> None:
    theirs = entry("r-b", "lib/**")
    stone = remote_grants.tombstone({**theirs, "machine": "beta"}, "alpha", "released", NOW)
    state = state_of({"grants/beta.json": grants_doc("beta", [theirs])})
    merged = remote_ledger.merge(state, local_doc(tombstones=[stone]), {}, "alpha", NOW)
    assert merged.others == [] and merged.tombstones == [stone]


def test_a_double_claim_is_lost_by_the_later_grant_on_every_machine() -> None:
    """zulu granted src/** first; alpha (which sorts first by name) later granted
    src/app/** after a rewind hid zulu's. alpha drops its own; zulu keeps its."""
    early = entry("r-z", "src/**", created_at=NOW - 60)
    late = entry("r-a", "src/app/**", created_at=NOW - 10, machine="alpha")
    on_alpha = remote_ledger.merge(
        state_of({"grants/zulu.json": grants_doc("zulu", [early])}),
        local_doc(late),
        {},
        "alpha",
        NOW,
    )
    assert on_alpha.own == [] and [r["id"] for r in on_alpha.others] == ["r-z"]
    [(res, why)] = on_alpha.dropped
    assert res["id"] == "r-a" and "lost a double claim to" in why and "r-z" in why
    [claim] = on_alpha.claims
    assert claim["winner"]["machine"] == "zulu" and claim["loser"]["machine"] == "alpha"
    on_zulu = remote_ledger.merge(
        state_of({"grants/alpha.json": grants_doc("alpha", [late])}),
        local_doc({**early, "machine": "zulu"}),
        {},
        "zulu",
        NOW,
    )
    assert [r["id"] for r in on_zulu.own] == ["r-z"] and on_zulu.others == []
    assert on_zulu.dropped == []


def test_a_silent_machines_grants_are_set_aside_for_planning() -> None:
    held = entry("r-b", "lib/**", holder={"pid": 4, "start": 1, "host": "b"})
    kept = entry("r-k", "doc/**", keep=True, holder={"pid": 4, "start": 1, "host": "b"})
    state = state_of({"grants/beta.json": grants_doc("beta", [held, kept])})
    merged = remote_ledger.merge(state, local_doc(), {}, "alpha", NOW, counts=lambda m: False)
    assert [r["id"] for r in merged.silent] == ["r-b"]
    assert sorted(r["id"] for r in merged.others) == ["r-b", "r-k"]


def test_a_local_truth_of_format_1_seeds_the_others_as_older_than_any_they_write(
    tmp_path: Path,
) -> None:
    doc = local_doc(
        entry("r-mine", "src/**", machine="alpha"),
        entry("r-b", "lib/**", machine="beta"),
        entry("r-loc", "tmp/**", local=True, machine="beta"),
    )
    doc["remote_ledger"] = {"lineage": "old", "generation": 9, "host": "alpha"}
    cache = remote_ledger.seeded_cache(str(tmp_path), doc, "alpha")
    assert list(cache) == ["beta"] and [r["id"] for r in cache["beta"]["reservations"]] == ["r-b"]
    merged = remote_ledger.merge(state_of({}), doc, cache, "alpha", NOW)
    assert [r["id"] for r in merged.others] == ["r-b"]
    assert [r["id"] for r in merged.own] == ["r-mine"]
    written = state_of({"grants/beta.json": grants_doc("beta", [], seq=1)})
    assert remote_ledger.merge(written, doc, cache, "alpha", NOW).others == []


# --- changes written through ------------------------------------------------------------------


def test_write_through_keeps_local_entries_local_and_marks_the_machine(world: Any) -> None:
    alpha = world.machine("alpha")
    index_build.write(str(alpha.ledger), {"reservations": [entry("r-loc", "tmp/**", local=True)]})
    granted, done = alpha.reserve("a", "src/**")
    assert granted and done.changed and done.pushed
    remote = remote_reservations(world.remote)
    assert [(r["pattern"], r["machine"]) for r in remote] == [("src/**", "alpha")]
    assert sorted(r["id"] for r in alpha.live()) == sorted(["r-loc", remote[0]["id"]])
    refused, again = alpha.reserve("b", "src/x.py")
    assert not refused and not again.changed and not again.pushed
    assert sorted(r["pattern"] for r in alpha.live()) == ["src/**", "tmp/**"]
    record = alpha.truth()["remote_ledger"]
    assert record["format"] == 2 and record["own"]["seq"] == 1 and record["host"] == "alpha"


def test_write_through_to_an_unreachable_remote_changes_nothing(world: Any) -> None:
    alpha = world.machine("alpha")
    run_git(
        alpha.repo, "remote", "set-url", REMOTE, f"file://{world.tmp}/none.git", env=alpha.environ
    )
    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        alpha.reserve("a", "src/**")
    assert "nothing was reserved" in str(caught.value) and "--local" in str(caught.value)
    assert not (alpha.ledger / "reservations.json").exists()


def test_a_lost_race_plans_again_on_a_fresh_fetch(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """beta's grant lands between alpha's fetch and alpha's push: alpha's push loses,
    alpha plans again on what beta pushed, and refuses (they overlap)."""
    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    monkeypatch.setattr(remote_ledger, "BACKOFF", 0.0)
    seen: list[int] = []
    git = alpha.git()
    real_push = git.push

    def push(remote: str, new: str, expected: str | None) -> None:
        if not seen:
            assert beta.reserve("b", "src/app.py")[0]
        seen.append(1)
        real_push(remote, new, expected)

    monkeypatch.setattr(git, "push", push)
    granted, done = remote_ledger_reserve(alpha, git, "a", "src/**")
    assert not granted and len(seen) == 1 and done.attempts == 2
    assert [r["pattern"] for r in remote_reservations(world.remote)] == ["src/app.py"]


def remote_ledger_reserve(machine: Any, git: remote_git.Git, agent: str, text: str) -> Any:
    from ledger_machines import reserve_through

    return reserve_through(str(machine.ledger), git, machine.name, agent, text, NOW)


def test_a_remote_that_keeps_moving_is_refused_as_busy(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    monkeypatch.setattr(remote_ledger, "BACKOFF", 0.0)
    git = alpha.git()
    real_push = git.push
    count = iter(range(100))

    def push(remote: str, new: str, expected: str | None) -> None:
        beta.reserve("b", f"lib/{next(count)}.py")  # another machine always gets there first
        real_push(remote, new, expected)

    monkeypatch.setattr(git, "push", push)
    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        remote_ledger_reserve(alpha, git, "a", "src/**")
    text = str(caught.value)
    assert "5 attempts in a row" in text and "nothing was reserved" in text and "\n" not in text
    assert "src/**" not in [r["pattern"] for r in remote_reservations(world.remote)]
    assert [r["pattern"] for r in alpha.live()] == []


def test_a_reservation_that_would_pass_the_read_limit_is_refused_before_anything_is_pushed(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = world.machine("alpha")
    alpha.switch_on()
    assert alpha.reserve("a", "docs/**")[0]
    before_local = (alpha.ledger / "reservations.json").read_bytes()
    before_remote = remote_files(world.remote)
    monkeypatch.setattr(remote_git, "MAX_BLOB", 1500)
    texts = [f"src/f{n}.py" for n in range(12)]
    with pytest.raises(reservation.ReservationError) as caught:
        alpha.store_reserve_all("a", texts)
    message = str(caught.value)
    assert "\n" not in message and "over the 1500-byte limit" in message
    assert "nothing was reserved" in message
    assert (alpha.ledger / "reservations.json").read_bytes() == before_local
    assert remote_files(world.remote) == before_remote


# --- switching on and off ------------------------------------------------------------------


def test_switching_on_pushes_this_machines_reservations(world: Any) -> None:
    alpha = world.machine("alpha")
    local = {**entry("r-1", "src/**"), "compiled": pattern.compile("src/**")}
    index_build.write(
        str(alpha.ledger), {"settings": {"lease_minutes": 3}, "reservations": [local]}
    )
    switched = alpha.switch_on()
    assert [r["id"] for r in switched.pushed] == ["r-1"] and not switched.conflicts
    doc = alpha.truth()
    assert doc["settings"] == {"lease_minutes": 3, "remote": REMOTE}
    assert remote_ledger.remote_of(doc) == REMOTE
    remote = remote_reservations(world.remote)
    assert [(r["id"], r["machine"]) for r in remote] == [("r-1", "alpha")]


def test_switching_on_over_a_conflict_changes_nothing(world: Any) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    beta.switch_on()
    assert beta.reserve("b", "src/**")[0]
    index_build.write(
        str(alpha.ledger),
        {
            "reservations": [
                {**entry("r-a", "src/app.py"), "compiled": pattern.compile("src/app.py")}
            ]
        },
    )
    before = (alpha.ledger / "reservations.json").read_bytes()
    remote_before = remote_files(world.remote)
    switched = alpha.switch_on()
    [(mine, theirs)] = switched.conflicts
    assert mine["id"] == "r-a" and theirs["agent"] == "b"
    assert (alpha.ledger / "reservations.json").read_bytes() == before
    assert remote_files(world.remote) == remote_before
    assert not (alpha.ledger / remote_ledger.CACHE).exists()


def test_switching_off_keeps_this_machines_reservations_only(world: Any) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    assert beta.reserve("b", "lib/**")[0]
    assert alpha.reserve("a", "src/**")[0]
    assert alpha.sync().ok
    assert len(alpha.live()) == 2
    assert (alpha.ledger / remote_view.VIEW).exists()
    kept, dropped = remote_ledger.switch_off(str(alpha.ledger), "alpha", NOW)
    assert (kept, dropped) == (1, 1)
    assert [r["pattern"] for r in alpha.live()] == ["src/**"]
    assert remote_ledger.remote_of(alpha.truth()) is None and "remote_ledger" not in alpha.truth()
    assert not (alpha.ledger / remote_view.VIEW).exists()
    assert not (alpha.ledger / remote_ledger.CACHE).exists()


def test_a_busy_ledger_lock_refuses_the_switch(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_hooks import storage

    monkeypatch.setattr(storage, "LOCK_TIMEOUT", 0.2)
    alpha = world.machine("alpha")
    with (
        lock_held_elsewhere(reservation_index.lock_path(str(alpha.ledger))),
        pytest.raises(reservation.ReservationError, match="stayed busy"),
    ):
        remote_ledger.switch_off(str(alpha.ledger), "alpha", NOW)
