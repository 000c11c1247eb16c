"""The pure rules of a shared ledger's reservations: a machine's document and its
format, which version of it to believe, tombstones, and the double-claim rule."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from agent_hooks.ledger import remote_grants
from agent_hooks.reservations import reservation

NOW = 1_800_000_000.0


def grant(rid: str, text: str, machine: str, created: float = NOW, **extra: Any) -> dict[str, Any]:
    return reservation.checked(
        {
            "id": rid,
            "agent": extra.pop("agent", "a"),
            "pattern": text,
            "mode": extra.pop("mode", "exclusive"),
            "created_at": created,
            "expires_at": extra.pop("expires_at", NOW + 600),
            "machine": machine,
            **extra,
        }
    )


def doc_bytes(host: str, **over: Any) -> bytes:
    doc = remote_grants.document(host, "i" * 16, 3, [grant("r-1", "src/**", host)], [], NOW)
    doc.update(over)
    return json.dumps(doc).encode()


# --- a machine's document ------------------------------------------------------------------


def test_a_document_reads_back_what_was_written_and_names_its_machine() -> None:
    written = remote_grants.document(
        "beta",
        "0123456789abcdef",
        7,
        [{**grant("r-1", "src/**", "alpha"), "local": True}],  # whatever it said
        [{"id": "r-9", "machine": "gamma", "until": NOW}],
        NOW,
    )
    assert "compiled" not in written["reservations"][0]
    assert "local" not in written["reservations"][0]
    read = remote_grants.parse("beta", json.dumps(written).encode())
    assert (read.host, read.instance, read.seq, read.written_at) == (
        "beta",
        "0123456789abcdef",
        7,
        NOW,
    )
    assert [(r["id"], r["machine"]) for r in read.reservations] == [("r-1", "beta")]
    assert read.tombstones == [{"id": "r-9", "machine": "gamma", "until": NOW}]
    assert read.raw()["reservations"] == written["reservations"]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"{", "not JSON"),
        (b"[]", "a JSON list, not an object"),
        (doc_bytes("beta", format=3), "format 3 where this agent-hooks reads format 2"),
        (doc_bytes("beta", format=1), "format 1 where"),
        (doc_bytes("beta", format=None), "no format"),
        (doc_bytes("gamma"), "it names host 'gamma', not 'beta'"),
        (doc_bytes("beta", seq=-1), "no seq"),
        (doc_bytes("beta", seq=True), "no seq"),
        (doc_bytes("beta", instance=""), "no instance"),
        (doc_bytes("beta", reservations={}), "no list"),
        (doc_bytes("beta", tombstones=None), "no list"),
    ],
)
def test_a_document_of_another_format_or_damaged_cannot_be_read(data: bytes, why: str) -> None:
    with pytest.raises(ValueError) as caught:
        remote_grants.parse("beta", data)
    assert why in str(caught.value) and "\n" not in str(caught.value)


def test_bad_entries_are_left_out_and_noted_never_the_others() -> None:
    data = doc_bytes(
        "beta",
        reservations=[
            {"id": "r-1", "pattern": "src/**", "expires_at": NOW + 5},
            {"id": "r-2", "pattern": "[", "expires_at": NOW + 5},
            "x",
        ],
        tombstones=[{"id": "r-3", "machine": "alpha", "until": NOW}, {"id": "r-4"}, 5],
    )
    read = remote_grants.parse("beta", data)
    assert [r["id"] for r in read.reservations] == ["r-1"]
    assert [t["id"] for t in read.tombstones] == ["r-3"]
    assert len(read.notes) == 4


def test_the_digest_says_what_a_document_holds_not_when_it_was_written() -> None:
    one = remote_grants.document("a", "i", 1, [grant("r-1", "x", "a")], [], NOW)
    later = remote_grants.document("a", "i", 9, [grant("r-1", "x", "a")], [], NOW + 60)
    other = remote_grants.document("a", "i", 1, [grant("r-2", "x", "a")], [], NOW)
    assert remote_grants.digest(one) == remote_grants.digest(later)
    assert remote_grants.digest(one) != remote_grants.digest(other)


# --- which version to believe ----------------------------------------------------------------


def test_an_older_version_of_one_ledgers_document_never_replaces_a_newer_one() -> None:
    read = remote_grants.parse("beta", doc_bytes("beta"))  # instance iiii…, seq 3
    assert remote_grants.newer(read, None)
    assert remote_grants.newer(read, {"instance": "i" * 16, "seq": 3})
    assert remote_grants.newer(read, {"instance": "i" * 16, "seq": 2})
    assert not remote_grants.newer(read, {"instance": "i" * 16, "seq": 4})  # rewound
    assert remote_grants.newer(read, {"instance": "another", "seq": 99})  # a new ledger
    assert remote_grants.newer(read, {"instance": "i" * 16, "seq": "4"})


# --- tombstones ------------------------------------------------------------------------------


def test_a_tombstone_lasts_until_what_it_ends_would_have_expired_plus_the_grace() -> None:
    ended = grant("r-1", "src/**", "alpha", expires_at=NOW + 600)
    stone = remote_grants.tombstone(ended, "beta", "released by b", NOW)
    assert stone["until"] == NOW + 600 and stone["by"] == "beta" and stone["machine"] == "alpha"
    last = NOW + 600 + remote_grants.TOMBSTONE_GRACE
    assert remote_grants.kept_tombstones([stone], last - 1) == [stone]
    assert remote_grants.kept_tombstones([stone], last) == []


def test_one_tombstone_per_reservation_the_earliest_and_at_most_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = {"id": "r-1", "machine": "alpha", "until": NOW, "at": 5}
    b = {"id": "r-1", "machine": "alpha", "until": NOW, "at": 3}
    c = {"id": "r-1", "machine": "gamma", "until": NOW, "at": 4}
    assert remote_grants.kept_tombstones([a, b, c, {"id": 5}], NOW) == [b, c]
    monkeypatch.setattr(remote_grants, "MAX_TOMBSTONES", 2)
    many = [{"id": f"r-{n}", "machine": "m", "until": NOW, "at": n} for n in range(5)]
    assert [t["id"] for t in remote_grants.kept_tombstones(many, NOW)] == ["r-3", "r-4"]


# --- the double-claim rule -----------------------------------------------------------------


def test_the_earlier_grant_wins_even_when_its_machine_sorts_last_by_name() -> None:
    """The earlier claimer is `zulu`, which sorts after `alpha`: a rule that looked
    at the machine's name first would pick the wrong one."""
    early = grant("r-z", "src/**", "zulu", created=NOW)
    late = grant("r-a", "src/app/**", "alpha", created=NOW + 1)
    [(winner, loser)] = remote_grants.double_claims([late, early], NOW + 2)
    assert (winner["id"], loser["id"]) == ("r-z", "r-a")


def test_ties_go_to_the_machine_then_to_the_id() -> None:
    first = grant("r-9", "src/**", "alpha", created=NOW)
    second = grant("r-1", "src/**", "beta", created=NOW)
    assert remote_grants.double_claims([second, first], NOW)[0][0] is first
    same = grant("r-1", "src/**", "alpha", created=NOW)  # a hand-made tie on both
    other = {**grant("r-2", "src/**", "alpha", created=NOW), "machine": "alpha2"}
    assert remote_grants.order_key(same) < remote_grants.order_key(other)


def test_only_conflicts_between_machines_count() -> None:
    shared = grant("r-1", "src/**", "alpha", mode="shared")
    other_shared = grant("r-2", "src/**", "beta", created=NOW + 1, mode="shared")
    apart = grant("r-3", "docs/**", "beta", created=NOW + 1)
    one = grant("r-4", "lib/**", "alpha", created=NOW + 1)
    same_machine = grant("r-5", "lib/x.py", "alpha", created=NOW + 2, agent="b")
    expired = grant("r-6", "lib/**", "beta", expires_at=NOW - 1)
    entries = [shared, other_shared, apart, one, same_machine, expired]
    assert remote_grants.double_claims(entries, NOW) == []
    exclusive = grant("r-7", "src/x.py", "beta", created=NOW + 2)
    found = remote_grants.double_claims([*entries, exclusive], NOW)
    assert [(w["id"], lo["id"]) for w, lo in found] == [("r-1", "r-7")]


def test_the_rule_is_pairwise_so_a_loss_found_in_part_of_the_set_holds_in_the_whole() -> None:
    """x < p < q in time; x overlaps p, p overlaps q, x does not overlap q: p loses
    to x and q loses to p, whichever part of the set a machine sees, and the
    answer never depends on the order the entries came in."""
    x = grant("r-x", "src/a/**", "m1", created=NOW)
    p = grant("r-p", "src/*/b.py", "m2", created=NOW + 1)
    q = grant("r-q", "src/c/b.py", "m3", created=NOW + 2)
    everything = {frozenset(remote_grants.losers(remote_grants.double_claims([x, p, q], NOW)))}
    for order in itertools.permutations([x, p, q]):
        lost = remote_grants.losers(remote_grants.double_claims(list(order), NOW))
        everything.add(frozenset(lost))
        assert {e["id"] for e in (x, p, q) if id(e) in lost} == {"r-p", "r-q"}
    assert len(everything) == 1
    part = remote_grants.losers(remote_grants.double_claims([p, q], NOW))
    assert [e["id"] for e in (p, q) if id(e) in part] == ["r-q"]


def test_patterns_under_a_glob_are_compared_with_every_group() -> None:
    glob = grant("r-g", "*/main.py", "m1", created=NOW + 5)
    under = grant("r-u", "src/main.py", "m2", created=NOW)
    other = grant("r-o", "**", "m3", created=NOW + 9)
    found = remote_grants.double_claims([glob, under, other], NOW)
    assert sorted((w["id"], lo["id"]) for w, lo in found) == [
        ("r-g", "r-o"),
        ("r-u", "r-g"),
        ("r-u", "r-o"),
    ]
