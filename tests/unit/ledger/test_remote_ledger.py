"""The remote ledger's documents, transactions written through to the remote, the
local ledger following it, and switching a repository on and off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.ledger import remote_git, remote_ledger, remote_view
from agent_hooks.reservations import (
    index_build,
    index_records,
    pattern,
    reservation,
    reservation_index,
)
from ledger_machines import NOW, REMOTE, lock_held_elsewhere, remote_files, run_git


def snapshot(
    commit: str | None, files: dict[str, Any], problems: list[str] | None = None
) -> remote_git.Snapshot:
    snap = remote_git.Snapshot(commit)
    snap.files = {
        k: v if isinstance(v, bytes) else json.dumps(v).encode() for k, v in files.items()
    }
    snap.blobs = {k: "0" * 40 for k in files}
    snap.problems = problems or []
    return snap


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


# --- names ---------------------------------------------------------------------------


def test_a_host_is_named_by_agent_hooks_host_or_by_the_machine() -> None:
    assert remote_ledger.host_name({"AGENT_HOOKS_HOST": "ci-7.example"}) == "ci-7.example"
    derived = remote_ledger.host_name({})
    assert remote_ledger.check_host(derived) == derived
    for bad in ("../x", "a b", ".hidden", "-x", "x" * 65, "é"):
        with pytest.raises(remote_ledger.HostNameError) as caught:
            remote_ledger.host_name({"AGENT_HOOKS_HOST": bad})
        assert "\n" not in str(caught.value) and "AGENT_HOOKS_HOST" in str(caught.value)


# --- parsing what was fetched -------------------------------------------------------------


def test_an_absent_ledger_is_empty_and_of_no_lineage() -> None:
    state = remote_ledger.parse(remote_git.Snapshot(None))
    assert state.reservations == [] and state.hosts == {} and state.lineage == ""
    assert state.newer_than({"lineage": "x", "generation": 3})  # a reset is taken


def test_a_ledger_commit_is_parsed_and_what_is_bad_is_reported() -> None:
    state = remote_ledger.parse(
        snapshot(
            "c" * 40,
            {
                "ledger.json": {"schema": 1, "lineage": "abc", "generation": 7},
                "reservations.json": {"reservations": [entry("r-1", "src/**"), 5]},
                "hosts/alpha.json": {"heartbeat": NOW, "leases": []},
                "hosts/beta.json": b"not json",
                "hosts/..json": {"heartbeat": NOW},
                "notes/extra.txt": b"kept",
            },
        )
    )
    assert (state.lineage, state.generation, state.meta_ok) == ("abc", 7, True)
    assert [r["id"] for r in state.reservations or []] == ["r-1"]
    assert list(state.hosts) == ["alpha"] and "beta" in state.host_problems
    assert any("not objects" in p for p in state.problems)
    assert any("bad name" in p for p in state.problems)
    assert state.newer_than({"lineage": "abc", "generation": 6})
    assert not state.newer_than({"lineage": "abc", "generation": 7})
    assert state.newer_than({"lineage": "other", "generation": 99})
    assert state.newer_than(None)


@pytest.mark.parametrize(
    "meta", [b"{", {"lineage": "", "generation": 1}, {"lineage": "x", "generation": True}, []]
)
def test_an_unreadable_ledger_json_makes_the_commit_its_own_lineage(meta: Any) -> None:
    state = remote_ledger.parse(snapshot("d" * 40, {"ledger.json": meta}))
    assert not state.meta_ok and state.lineage == "commit:" + "d" * 40
    assert any("ledger.json is unreadable" in p for p in state.problems)


@pytest.mark.parametrize("doc", [b"[", {"reservations": "x"}, [1]])
def test_an_unreadable_reservations_file_is_never_taken_as_empty(doc: Any) -> None:
    state = remote_ledger.parse(snapshot("e" * 40, {"reservations.json": doc}))
    assert state.reservations is None


def test_the_remote_keeps_no_compiled_form_and_no_local_entry() -> None:
    doc = {
        "reservations": [
            {**entry("r-1", "src/**"), "compiled": pattern.compile("src/**")},
            {**entry("r-2", "tmp/**"), "local": True},
        ],
        "dropped": list(range(80)),
    }
    out = remote_ledger.remote_document(doc)
    assert [r["id"] for r in out["reservations"]] == ["r-1"]
    assert "compiled" not in out["reservations"][0]
    assert out["dropped"] == list(range(30, 80))


# --- the local ledger following the remote ---------------------------------------------------


def test_the_local_truth_follows_a_newer_remote_and_keeps_local_entries(tmp_path: Path) -> None:
    ledger = str(tmp_path)
    local = {
        "settings": {"lease_minutes": 5},
        "strict": True,
        "reservations": [
            entry("r-old", "old/**", machine="beta"),
            entry("r-mine", "tmp/**", local=True),
        ],
        "dropped": [{"id": "r-x", "at": 1}],
    }
    index_build.write(ledger, local)
    state = remote_ledger.parse(
        snapshot(
            "f" * 40,
            {
                "ledger.json": {"lineage": "L", "generation": 2},
                "reservations.json": {
                    "reservations": [
                        entry("r-new", "src/**", machine="beta"),
                        entry("r-gone", "x/**", expires_at=NOW - 1),
                        {"id": "r-bad", "pattern": "[", "expires_at": NOW + 5},
                    ],
                    "dropped": [{"id": "r-y", "at": 2}],
                },
            },
        )
    )
    notes = remote_ledger.write_local(ledger, state, REMOTE, NOW)
    doc = reservation_index.load_truth(ledger).doc
    assert doc is not None
    assert [r["id"] for r in doc["reservations"]] == ["r-new", "r-mine"]
    assert doc["settings"] == {"lease_minutes": 5} and doc["strict"] is True
    assert [d["id"] for d in doc["dropped"]] == ["r-x", "r-y"]
    assert doc["remote_ledger"]["lineage"] == "L" and doc["remote_ledger"]["generation"] == 2
    assert any("r-bad" in n for n in notes)
    hot = reservation_index.load_hot(ledger)
    assert hot is not None and sorted(
        r[index_records.RID] for g in hot.groups for r in hot.group(g)
    ) == [
        "r-mine",
        "r-new",
    ]
    before = Path(ledger, "reservations.json").read_bytes()
    assert remote_ledger.write_local(ledger, state, REMOTE, NOW) == []  # not newer: untouched
    assert Path(ledger, "reservations.json").read_bytes() == before


def test_a_corrupt_local_truth_is_set_aside_and_rebuilt(tmp_path: Path) -> None:
    (tmp_path / "reservations.json").write_bytes(b"{oops")
    state = remote_ledger.parse(
        snapshot(
            "a" * 40,
            {
                "ledger.json": {"lineage": "L", "generation": 1},
                "reservations.json": {"reservations": [entry("r-1", "src/**")]},
            },
        )
    )
    notes = remote_ledger.write_local(str(tmp_path), state, REMOTE, NOW)
    assert any("moved to" in n for n in notes)
    assert [r["id"] for r in reservation_index.load_truth(str(tmp_path)).doc["reservations"]] == [
        "r-1"
    ]  # type: ignore[index]
    assert list(tmp_path.glob("reservations.json.corrupt-*"))


def _state(generation: int, entries: list[dict[str, Any]]) -> remote_ledger.RemoteState:
    return remote_ledger.parse(
        snapshot(
            f"{generation:040x}",
            {
                "ledger.json": {"lineage": "L", "generation": generation},
                "reservations.json": {"reservations": entries},
            },
        )
    )


def test_pending_releases_and_renewals_never_come_back_and_go_once_the_remote_has_them(
    tmp_path: Path,
) -> None:
    """A release or renewal a hook made here (`queue`) stays applied to every newer
    remote version that does not have it yet, and is forgotten once one does."""
    ledger = str(tmp_path)
    gone, kept = entry("r-gone", "src/**", machine="alpha"), entry("r-kept", "lib/**")
    remote_ledger.write_local(ledger, _state(1, [gone, kept]), REMOTE, NOW, host="alpha")
    remote_ledger.queue(
        ledger,
        [
            {"op": "release", "id": "r-gone"},
            {"op": "renew", "id": "r-kept", "expires_at": NOW + 3600},
        ],
    )

    def local() -> dict[str, float]:
        doc = reservation_index.load_truth(ledger).doc or {}
        return {r["id"]: r["expires_at"] for r in doc["reservations"]}

    remote_ledger.write_local(ledger, _state(2, [gone, kept]), REMOTE, NOW)  # not taken yet
    assert local() == {"r-kept": NOW + 3600}
    assert len(remote_ledger.read_pending(ledger)) == 2
    doc = reservation_index.load_truth(ledger).doc or {}
    assert doc["remote_ledger"]["host"] == "alpha"  # kept from the earlier write
    renewed = {**kept, "expires_at": NOW + 3600}
    remote_ledger.write_local(ledger, _state(3, [gone, renewed]), REMOTE, NOW)
    assert local() == {"r-kept": NOW + 3600}
    assert [op["op"] for op in remote_ledger.read_pending(ledger)] == ["release"]
    remote_ledger.write_local(ledger, _state(4, [renewed]), REMOTE, NOW)
    assert remote_ledger.read_pending(ledger) == []
    assert not (tmp_path / remote_ledger.PENDING).exists()


def test_apply_pending_releases_and_renews_only_what_it_names() -> None:
    entries = [entry("r-1", "a/**"), entry("r-2", "b/**"), entry("r-3", "c/**")]
    ops = [
        {"op": "release", "id": "r-1"},
        {"op": "renew", "id": "r-2", "expires_at": NOW + 60},  # earlier: no change
        {"op": "renew", "id": "r-3", "expires_at": NOW + 7200},
    ]
    after, changed = remote_ledger.apply_pending(entries, ops)
    assert changed and [(e["id"], e["expires_at"]) for e in after] == [
        ("r-2", NOW + 600),
        ("r-3", NOW + 7200),
    ]
    assert entries[2]["expires_at"] == NOW + 600  # the input is not changed
    assert remote_ledger.apply_pending(entries, []) == (entries, False)
    assert remote_ledger.apply_pending(entries, [{"op": "release", "id": "r-9"}])[1] is False


# --- transactions ----------------------------------------------------------------------------


def test_a_plan_that_changes_nothing_pushes_nothing(world: Any) -> None:
    alpha = world.machine("alpha")
    done = remote_ledger.transact(alpha.git(), REMOTE, lambda doc: None, host="alpha", now=NOW)
    assert not done.pushed and done.attempts == 1 and remote_files(world.remote) == {}


def test_a_lost_race_plans_again_on_a_fresh_copy(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    monkeypatch.setattr(remote_ledger, "BACKOFF", 0.0)
    seen: list[list[str]] = []

    def plan(doc: dict[str, Any]) -> dict[str, Any]:
        seen.append([r["id"] for r in doc["reservations"]])
        if len(seen) == 1:  # another machine writes between our fetch and our push
            remote_ledger.transact(
                beta.git(),
                REMOTE,
                lambda d: {**d, "reservations": [*d["reservations"], entry("r-b", "b/**")]},
                host="beta",
                now=NOW,
            )
        doc["reservations"].append(entry("r-a", "a/**"))
        return doc

    done = remote_ledger.transact(alpha.git(), REMOTE, plan, host="alpha", now=NOW)
    assert done.pushed and done.attempts == 2
    assert seen == [[], ["r-b"]]
    doc = json.loads(remote_files(world.remote)["reservations.json"])
    assert [r["id"] for r in doc["reservations"]] == ["r-b", "r-a"]
    assert json.loads(remote_files(world.remote)["ledger.json"])["generation"] == 2


def test_a_remote_that_keeps_moving_is_refused_as_busy(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    monkeypatch.setattr(remote_ledger, "BACKOFF", 0.0)

    def plan(doc: dict[str, Any]) -> dict[str, Any]:
        remote_ledger.transact(beta.git(), REMOTE, lambda d: {**d, "n": 1}, host="beta", now=NOW)
        return doc

    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        remote_ledger.transact(alpha.git(), REMOTE, plan, host="alpha", now=NOW, what="released")
    text = str(caught.value)
    assert "5 attempts in a row" in text and "nothing was released" in text and "\n" not in text


def test_an_unreadable_remote_document_is_planned_from_the_fallback(world: Any) -> None:
    alpha = world.machine("alpha")
    git = alpha.git()
    git.ensure()
    broken = git.commit({"reservations.json": git.blob(b"{")}, NOW, "m")
    git.push(REMOTE, broken, None)
    planned: list[Any] = []

    def plan(doc: dict[str, Any]) -> dict[str, Any]:
        planned.append(doc["reservations"])
        return doc

    done = remote_ledger.transact(
        git,
        REMOTE,
        plan,
        host="alpha",
        now=NOW,
        fallback=[{**entry("r-1", "src/**"), "compiled": [1]}],
    )
    assert [[r["id"] for r in p] for p in planned] == [["r-1"]] and "compiled" not in planned[0][0]
    assert any("last copy (1 reservations) stood in" in n for n in done.notes)
    assert (
        json.loads(remote_files(world.remote)["reservations.json"])["reservations"][0]["id"]
        == "r-1"
    )


def test_write_through_keeps_local_entries_local_and_marks_the_machine(world: Any) -> None:
    alpha = world.machine("alpha")
    index_build.write(str(alpha.ledger), {"reservations": [entry("r-loc", "tmp/**", local=True)]})
    granted, done = alpha.reserve("a", "src/**")
    assert granted and done.changed and done.transacted.pushed
    remote = json.loads(remote_files(world.remote)["reservations.json"])["reservations"]
    assert [(r["pattern"], r["machine"]) for r in remote] == [("src/**", "alpha")]
    assert sorted(r["id"] for r in alpha.live()) == sorted(["r-loc", remote[0]["id"]])
    refused, again = alpha.reserve("b", "src/x.py")
    assert not refused and not again.changed
    assert sorted(r["pattern"] for r in alpha.live()) == ["src/**", "tmp/**"]


def test_write_through_to_an_unreachable_remote_changes_nothing(world: Any) -> None:
    alpha = world.machine("alpha")
    run_git(
        alpha.repo, "remote", "set-url", REMOTE, f"file://{world.tmp}/none.git", env=alpha.environ
    )
    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        alpha.reserve("a", "src/**")
    assert "nothing was reserved" in str(caught.value) and "--local" in str(caught.value)
    assert not (alpha.ledger / "reservations.json").exists()


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
    remote = json.loads(remote_files(world.remote)["reservations.json"])["reservations"]
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


def test_a_busy_ledger_lock_refuses_the_switch(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_hooks import storage

    monkeypatch.setattr(storage, "LOCK_TIMEOUT", 0.2)
    alpha = world.machine("alpha")
    with (
        lock_held_elsewhere(reservation_index.lock_path(str(alpha.ledger))),
        pytest.raises(reservation.ReservationError, match="stayed busy"),
    ):
        remote_ledger.switch_off(str(alpha.ledger), "alpha", NOW)
