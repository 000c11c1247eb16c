"""agent_hooks.ledger.reservation_store and reservation_index: reserve / release / renew
under the project lock, the agent-state mirror, the index files and the hot cache.

Every test uses its own state directory under tmp_path; time is passed in.
The race test runs 8 real processes of the `agent-hooks` CLI.
"""

from __future__ import annotations

import glob
import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity, liveness, storage
from agent_hooks.agents import state_file
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import index_records, pattern, reservation, reservation_index
from agent_hooks.writers import Writer
from hook_runner import ROOT

SRC = str(ROOT / "src")
NOW = 1_800_000_000.0
HOUR = 3600


@pytest.fixture
def state_dir(home: Path) -> str:
    """The state directory, where alice and bob have run (their SessionStart made
    their state files, which the ledger's changes are mirrored into)."""
    found = str(home / ".claude")
    for name in ("alice", "bob"):
        state_file.update(identity.Agent(name, found), lambda doc: None, NOW, lambda m: None)
    return found


@pytest.fixture
def root(tmp_path: Path) -> str:
    project = tmp_path / "proj"
    project.mkdir()
    return os.path.realpath(project)


def grant(
    state_dir: str,
    root: str,
    agent: str | None,
    *patterns: str,
    now: float = NOW,
    ttl: int = HOUR,
    reason: str = "",
    shared: bool = False,
    keep: bool = False,
) -> reservation.Outcome:
    return reservation_store.reserve(
        Repo(root, state_dir),
        Writer(agent, None),
        [(p, pattern.compile(p)) for p in patterns],
        now,
        reason=reason,
        ttl=ttl,
        shared=shared,
        keep=keep,
    )


def held(state_dir: str, root: str, now: float = NOW) -> list[tuple[str | None, str]]:
    return sorted(
        ((r["agent"], r["pattern"]) for r in reservation_store.live(Repo(root, state_dir), now)[0]),
        key=lambda item: (item[0] or "", item[1]),
    )


def truth_path(state_dir: str, root: str) -> str:
    return os.path.join(ledger_location.directory(state_dir, root), index_records.TRUTH)


def cache_path(state_dir: str, root: str) -> str:
    return os.path.join(ledger_location.directory(state_dir, root), index_records.CACHE)


def truth(state_dir: str, root: str) -> dict[str, Any]:
    with open(truth_path(state_dir, root), encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def agent_state(state_dir: str, name: str | None) -> dict[str, Any]:
    doc, problem = state_file.read(identity.Agent(name, state_dir), NOW)
    assert problem is None
    return doc


def hot_patterns(hot: index_records.HotIndex | None) -> list[tuple[str | None, str]]:
    assert hot is not None
    return sorted(
        ((rec[index_records.AGENT], rec[index_records.PATTERN]) for rec in hot.candidates(None)),
        key=lambda item: (item[0] or "", item[1]),
    )


# --- reserve ---------------------------------------------------------------------


def test_reserve_grants_and_persists(state_dir: str, root: str) -> None:
    out = grant(state_dir, root, "alice", "src/**", reason="farmhand-42")
    assert out.conflicts == [] and out.notes == []
    [granted] = out.changed
    assert granted["pattern"] == "src/**" and granted["id"].startswith("r-")
    assert granted["expires_at"] == int(NOW) + HOUR
    doc = truth(state_dir, root)
    assert doc["project_root"] == root
    [stored] = doc["reservations"]
    assert {k: stored[k] for k in ("id", "agent", "pattern", "mode", "reason", "keep")} == {
        "id": granted["id"],
        "agent": "alice",
        "pattern": "src/**",
        "mode": "exclusive",
        "reason": "farmhand-42",
        "keep": False,
    }
    assert stored["compiled"] == pattern.compile("src/**")  # compiled once, at reserve time
    assert oct(os.stat(truth_path(state_dir, root)).st_mode & 0o777) == "0o600"


def test_conflicting_reserve_changes_nothing(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", reason="farmhand-42")
    before = Path(truth_path(state_dir, root)).read_bytes()
    out = grant(state_dir, root, "bob", "docs/**", "src/app.py")
    assert [(req["pattern"], h["agent"], h["pattern"]) for req, h in out.conflicts] == [
        ("src/app.py", "alice", "src/**")
    ]
    assert out.changed == []
    assert Path(truth_path(state_dir, root)).read_bytes() == before
    assert held(state_dir, root) == [("alice", "src/**")]
    assert agent_state(state_dir, "bob")["reservations"] == []


def test_every_conflicting_holder_is_returned(state_dir: str, root: str) -> None:
    for agent, pat, shared in [
        ("alice", "src/a.py", False),
        ("carol", "src/b/", False),
        ("dave", "src/c/**", True),
        ("erin", "docs/", False),
        ("frank", "src/c/*.py", True),
    ]:
        assert grant(state_dir, root, agent, pat, shared=shared).conflicts == []
    out = grant(state_dir, root, "bob", "src/**", shared=True)
    assert sorted(h["agent"] for _, h in out.conflicts) == ["alice", "carol"]
    out = grant(state_dir, root, "bob", "src/**")
    assert sorted(h["agent"] for _, h in out.conflicts) == ["alice", "carol", "dave", "frank"]


def test_rereserve_keeps_id_and_later_expiry(state_dir: str, root: str) -> None:
    first = grant(state_dir, root, "alice", "src/**", ttl=600).changed[0]
    again = grant(state_dir, root, "alice", "src/**", ttl=2 * HOUR, now=NOW + 60).changed[0]
    assert again["id"] == first["id"]
    [stored] = truth(state_dir, root)["reservations"]
    assert stored["id"] == first["id"] and stored["expires_at"] == int(NOW) + 60 + 2 * HOUR
    shorter = grant(state_dir, root, "alice", "src/**", ttl=60, now=NOW + 120).changed[0]
    assert shorter["id"] == first["id"]
    assert truth(state_dir, root)["reservations"][0]["expires_at"] == int(NOW) + 60 + 2 * HOUR


def test_shared_holders_coexist(state_dir: str, root: str) -> None:
    assert grant(state_dir, root, "alice", "src/**", shared=True).conflicts == []
    assert grant(state_dir, root, "bob", "src/**", shared=True).conflicts == []
    assert held(state_dir, root) == [("alice", "src/**"), ("bob", "src/**")]
    assert grant(state_dir, root, "carol", "src/x.py").conflicts  # exclusive over shared


# --- release ---------------------------------------------------------------------


def test_release_by_pattern_releases_exactly_that(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", "docs/**")
    grant(state_dir, root, "bob", "lib/**")
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        patterns=["docs/**"],
    )
    assert [r["pattern"] for r in out.changed] == ["docs/**"] and out.unmatched == []
    assert held(state_dir, root) == [("alice", "src/**"), ("bob", "lib/**")]


def test_release_names_that_match_nothing_are_reported(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    grant(state_dir, root, "bob", "lib/**")
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        patterns=["lib/**", "src/"],
        ids=["r-nope"],
    )
    assert out.changed == [] and out.unmatched == ["lib/**", "src/", "r-nope"]
    assert held(state_dir, root) == [("alice", "src/**"), ("bob", "lib/**")]


def test_release_by_id_own_only_unless_forced(state_dir: str, root: str) -> None:
    mine = grant(state_dir, root, "alice", "src/**").changed[0]["id"]
    theirs = grant(state_dir, root, "bob", "lib/**").changed[0]["id"]
    out = reservation_store.release(Repo(root, state_dir), Writer("alice", None), NOW, ids=[theirs])
    assert out.changed == [] and out.unmatched == [theirs]
    assert held(state_dir, root) == [("alice", "src/**"), ("bob", "lib/**")]
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        ids=[theirs],
        force=True,
    )
    assert [r["id"] for r in out.changed] == [theirs]
    assert agent_state(state_dir, "bob")["reservations"] == []  # bob's mirror follows
    out = reservation_store.release(Repo(root, state_dir), Writer("alice", None), NOW, ids=[mine])
    assert [r["id"] for r in out.changed] == [mine]
    assert held(state_dir, root) == []


def test_release_all_takes_only_own(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", "docs/**")
    grant(state_dir, root, "bob", "lib/**")
    grant(state_dir, root, None, "etc/**")
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        everything=True,
    )
    assert sorted(r["pattern"] for r in out.changed) == ["docs/**", "src/**"]
    assert held(state_dir, root) == [(None, "etc/**"), ("bob", "lib/**")]
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        everything=True,
    )
    assert out.changed == [] and out.unmatched == []


def test_release_keep_kept_spares_keep_reservations(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    grant(state_dir, root, "alice", "docs/**", keep=True)
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        everything=True,
        keep_kept=True,
    )
    assert [r["pattern"] for r in out.changed] == ["src/**"]
    assert held(state_dir, root) == [("alice", "docs/**")]


# --- renew -----------------------------------------------------------------------


def test_renew_extends_live_and_never_shortens(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", ttl=600)
    grant(state_dir, root, "alice", "docs/**", ttl=3 * HOUR)
    grant(state_dir, root, "bob", "lib/**", ttl=600)
    out = reservation_store.renew(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW + 300,
        patterns=[],
        ttl=HOUR,
    )
    assert sorted(r["pattern"] for r in out.changed) == ["docs/**", "src/**"]
    stored = truth(state_dir, root)["reservations"]
    expiry = {(r["agent"], r["pattern"]): r["expires_at"] for r in stored}
    assert expiry == {
        ("alice", "src/**"): int(NOW) + 300 + HOUR,
        ("alice", "docs/**"): int(NOW) + 3 * HOUR,
        ("bob", "lib/**"): int(NOW) + 600,
    }
    mirror = agent_state(state_dir, "alice")["reservations"]
    mirrored = {r["pattern"]: r["expires_at"] for r in mirror}
    assert mirrored == {"src/**": int(NOW) + 300 + HOUR, "docs/**": int(NOW) + 3 * HOUR}


def test_renew_never_revives_an_expired_reservation(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", ttl=600)
    later = NOW + 601
    out = reservation_store.renew(
        Repo(root, state_dir),
        Writer("alice", None),
        later,
        patterns=["src/**"],
        ttl=HOUR,
    )
    assert out.changed == [] and out.unmatched == ["src/**"]
    out = reservation_store.renew(
        Repo(root, state_dir),
        Writer("alice", None),
        later,
        patterns=[],
        ttl=HOUR,
    )
    assert out.changed == [] and out.unmatched == []
    assert held(state_dir, root, later) == []
    assert truth(state_dir, root)["reservations"] == []  # pruned by that write


def test_renew_names_only_own(state_dir: str, root: str) -> None:
    grant(state_dir, root, "bob", "lib/**", ttl=600)
    out = reservation_store.renew(
        Repo(root, state_dir),
        Writer("alice", None),
        NOW,
        patterns=["lib/**"],
        ttl=HOUR,
    )
    assert out.changed == [] and out.unmatched == ["lib/**"]
    assert truth(state_dir, root)["reservations"][0]["expires_at"] == int(NOW) + 600


# --- strict ----------------------------------------------------------------------


def test_strict_setting_round_trips(state_dir: str, root: str) -> None:
    assert reservation_store.live(Repo(root, state_dir), NOW) == ([], False)
    reservation_store.set_strict(Repo(root, state_dir), True, NOW)
    assert reservation_store.live(Repo(root, state_dir), NOW)[1] is True
    hot = reservation_index.load_hot(ledger_location.directory(state_dir, root))
    assert hot is not None and hot.strict is True
    grant(state_dir, root, "alice", "src/**")  # other writes keep the setting
    assert reservation_store.live(Repo(root, state_dir), NOW)[1] is True
    reservation_store.set_strict(Repo(root, state_dir), False, NOW)
    hot = reservation_index.load_hot(ledger_location.directory(state_dir, root))
    assert hot is not None and hot.strict is False


# --- the agent-state mirror ------------------------------------------------------------


def test_state_mirror_uses_the_seed_field_names(state_dir: str, root: str) -> None:
    out = grant(state_dir, root, "alice", "src/**", "docs/", reason="farmhand-42", keep=True)
    granted = out.changed
    doc = agent_state(state_dir, "alice")
    assert doc["issue_id"] == "farmhand-42"
    entries = sorted(doc["reservations"], key=lambda r: r["paths"][0])
    assert [e["paths"] for e in entries] == [["docs/"], ["src/**"]]
    for entry in entries:
        assert entry["reason"] == "farmhand-42"
        assert entry["created_at"] == int(NOW) and isinstance(entry["created_at"], int)
        assert entry["expires_at"] == int(NOW) + HOUR and isinstance(entry["expires_at"], int)
        assert entry["project_root"] == root and entry["keep"] is True
    assert sorted(e["id"] for e in entries) == sorted(r["id"] for r in granted)
    assert agent_state(state_dir, "bob")["reservations"] == []


def test_a_reservation_gives_no_state_to_who_never_ran(state_dir: str, root: str) -> None:
    """A person's reservation from a shell (no AGENT_NAME, or a name no conversation
    ran under) is in the ledger, and mirrored into no state file: it would list as a
    phantom agent in `agents` and `watch`. An agent that ran keeps its mirror."""
    grant(state_dir, root, None, "src/**")
    grant(state_dir, root, "carol", "docs/**")
    grant(state_dir, root, "alice", "lib/**")
    assert held(state_dir, root) == [(None, "src/**"), ("alice", "lib/**"), ("carol", "docs/**")]
    assert sorted(os.listdir(state_dir)) == sorted(
        ["state-alice.json", "state-alice.json.lock", "state-bob.json", "state-bob.json.lock"]
        + [n for n in os.listdir(state_dir) if not n.startswith(("state-", "agent-state"))]
    )
    assert [r["pattern"] for r in agent_state(state_dir, "alice")["reservations"]] == ["lib/**"]


def test_issue_id_is_filled_only_from_an_issue_like_reason_and_only_once(
    state_dir: str, root: str
) -> None:
    grant(state_dir, root, "alice", "a/**", reason="fix the login bug")
    assert agent_state(state_dir, "alice")["issue_id"] is None
    grant(state_dir, root, "alice", "b/**", reason="PROJ-7")
    assert agent_state(state_dir, "alice")["issue_id"] == "PROJ-7"
    grant(state_dir, root, "alice", "c/**", reason="farmhand-42")
    assert agent_state(state_dir, "alice")["issue_id"] == "PROJ-7"


def test_issue_id_already_set_is_kept(state_dir: str, root: str) -> None:
    agent = identity.Agent("bob", state_dir)
    state_file.update(agent, lambda doc: doc.update(issue_id="bd-a1b2"), NOW, lambda m: None)
    grant(state_dir, root, "bob", "src/**", reason="farmhand-42")
    assert agent_state(state_dir, "bob")["issue_id"] == "bd-a1b2"


def test_mirror_keeps_other_projects_and_follows_release(
    state_dir: str, root: str, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    other_root = os.path.realpath(other)
    grant(state_dir, root, "alice", "src/**")
    grant(state_dir, other_root, "alice", "lib/**")
    reservation_store.release(Repo(root, state_dir), Writer("alice", None), NOW, everything=True)
    doc = agent_state(state_dir, "alice")
    mirrored = [(r["project_root"], r["paths"]) for r in doc["reservations"]]
    assert mirrored == [(other_root, ["lib/**"])]
    assert sorted(reservation_store.known_projects(state_dir)) == sorted([root, other_root])


def test_mirror_of_an_agent_whose_reservation_was_pruned_drops_it(
    state_dir: str, root: str
) -> None:
    """An expired reservation pruned at a write is gone from its holder's mirror too
    (the mirror holds the agent's *live* reservations)."""
    grant(state_dir, root, "alice", "src/**", ttl=600)
    later = NOW + 601
    grant(state_dir, root, "bob", "docs/**", now=later)
    assert [r["agent"] for r in truth(state_dir, root)["reservations"]] == ["bob"]
    doc, _ = state_file.read(identity.Agent("alice", state_dir), later)
    assert doc["reservations"] == []


# --- expiry ----------------------------------------------------------------------


def test_expired_entries_are_ignored_when_read_and_pruned_at_next_write(
    state_dir: str, root: str
) -> None:
    grant(state_dir, root, "alice", "src/**", ttl=600)
    grant(state_dir, root, "carol", "etc/**", ttl=2 * HOUR)
    later = NOW + 601
    assert held(state_dir, root, later) == [("carol", "etc/**")]
    assert len(truth(state_dir, root)["reservations"]) == 2  # a read does not write
    hot = reservation_index.load_hot(ledger_location.directory(state_dir, root))
    assert hot is not None and not hot.others_hold_exclusive("carol", later)
    assert grant(state_dir, root, "bob", "src/app.py", now=later).conflicts == []
    assert sorted(r["agent"] for r in truth(state_dir, root)["reservations"]) == ["bob", "carol"]


def test_a_write_that_only_prunes_still_rewrites(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**", ttl=600)
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("bob", None),
        NOW + 601,
        patterns=["x"],
    )
    assert out.unmatched == ["x"]
    assert truth(state_dir, root)["reservations"] == []


# --- the index files and the hot cache ---------------------------------------------


def test_load_hot_without_any_index_is_none(state_dir: str, root: str) -> None:
    assert reservation_index.load_hot(ledger_location.directory(state_dir, root)) is None


def test_cache_is_used_while_it_matches_the_truth(state_dir: str, root: str) -> None:
    """Positive control for the fallback tests below: a cache whose recorded key
    matches the truth file is what load_hot returns (here doctored, to tell)."""
    grant(state_dir, root, "alice", "src/**")
    data = marshal.loads(Path(cache_path(state_dir, root)).read_bytes())
    version, pyver, key, strict, until, groups = data
    record = ("mallory", True, NOW + HOUR, pattern.compile("zzz"), "r-x", "zzz", "")
    groups = {"zzz": [(*record, "mallory", None, None, False, None, None)]}
    Path(cache_path(state_dir, root)).write_bytes(
        marshal.dumps((version, pyver, key, strict, until, groups))
    )
    assert hot_patterns(reservation_index.load_hot(ledger_location.directory(state_dir, root))) == [
        ("mallory", "zzz")
    ]


@pytest.mark.parametrize(
    "damage",
    [
        "delete",
        "garbage",
        "truncated",
        "empty",
        "wrong-shape",
        "other-python",
        "other-version",
        "symlink",
    ],
)
def test_damaged_cache_falls_back_to_the_truth(
    state_dir: str, root: str, tmp_path: Path, damage: str
) -> None:
    grant(state_dir, root, "alice", "src/**")
    grant(state_dir, root, "bob", "docs/**", shared=True)
    cache = Path(cache_path(state_dir, root))
    good = cache.read_bytes()
    version, pyver, key, strict, until, _ = marshal.loads(good)
    fake = {"zzz": [("mallory", True, NOW + HOUR, pattern.compile("zzz"), "r-x", "zzz", "")]}
    if damage == "delete":
        cache.unlink()
    elif damage == "garbage":
        cache.write_bytes(b"\x00not marshal at all\xff" * 3)
    elif damage == "truncated":
        cache.write_bytes(good[: len(good) // 2])
    elif damage == "empty":
        cache.write_bytes(b"")
    elif damage == "wrong-shape":
        cache.write_bytes(marshal.dumps((1, 2)))
    elif damage == "other-python":
        cache.write_bytes(marshal.dumps((version, (2, 7), key, strict, until, fake)))
    elif damage == "other-version":
        cache.write_bytes(marshal.dumps((version + 1, pyver, key, strict, until, fake)))
    elif damage == "symlink":  # a planted symlink is never followed
        planted = tmp_path / "planted.cache"
        planted.write_bytes(marshal.dumps((version, pyver, key, strict, until, fake)))
        cache.unlink()
        cache.symlink_to(planted)
    hot = reservation_index.load_hot(ledger_location.directory(state_dir, root))
    assert hot_patterns(hot) == [("alice", "src/**"), ("bob", "docs/**")]
    assert hot is not None and hot.others_hold_exclusive("bob", NOW)
    assert not hot.others_hold_exclusive("alice", NOW)


def test_truth_newer_than_cache_is_not_shadowed_by_the_cache(state_dir: str, root: str) -> None:
    """A crash between the two writes: the truth has the new reservation, the cache
    is still the previous one. The stale cache must not be used."""
    grant(state_dir, root, "alice", "src/**")
    stale = Path(cache_path(state_dir, root)).read_bytes()
    grant(state_dir, root, "bob", "docs/**")
    Path(cache_path(state_dir, root)).write_bytes(stale)  # as if the cache write never happened
    hot = reservation_index.load_hot(ledger_location.directory(state_dir, root))
    assert hot_patterns(hot) == [("alice", "src/**"), ("bob", "docs/**")]


def test_truth_rewritten_with_same_size_invalidates_cache(state_dir: str, root: str) -> None:
    """Same length, different content, replaced like every write: still not the cache's truth."""
    grant(state_dir, root, "alice", "src/**")
    path = Path(truth_path(state_dir, root))
    text = path.read_text()
    storage.write_bytes_atomic(str(path), text.replace('"alice"', '"carol"').encode())
    assert hot_patterns(reservation_index.load_hot(ledger_location.directory(state_dir, root))) == [
        ("carol", "src/**")
    ]


def test_truth_missing_means_no_index_even_with_a_cache(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    os.unlink(truth_path(state_dir, root))
    assert reservation_index.load_hot(ledger_location.directory(state_dir, root)) is None


def test_corrupt_truth_is_quarantined_and_noted(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    path = truth_path(state_dir, root)
    Path(path).write_bytes(b'{"reservations": [')  # torn by hand or a disk error
    # a lock-free read moves nothing and sees nothing
    assert reservation_store.live(Repo(root, state_dir), NOW) == ([], False)
    assert glob.glob(path + ".corrupt-*") == []
    out = grant(state_dir, root, "bob", "docs/**")
    assert out.conflicts == []
    [note] = out.notes
    [moved] = glob.glob(path + ".corrupt-*")
    assert "not valid JSON" in note and moved in note
    assert Path(moved).read_bytes() == b'{"reservations": ['
    assert held(state_dir, root) == [("bob", "docs/**")]
    assert hot_patterns(reservation_index.load_hot(ledger_location.directory(state_dir, root))) == [
        ("bob", "docs/**")
    ]


def test_truth_that_is_not_an_object_is_quarantined(state_dir: str, root: str) -> None:
    index_dir = ledger_location.directory(state_dir, root)
    os.makedirs(index_dir)
    Path(index_dir, index_records.TRUTH).write_text("[1, 2, 3]")
    out = grant(state_dir, root, "bob", "docs/**")
    assert len(out.notes) == 1 and "list" in out.notes[0]
    assert len(glob.glob(os.path.join(index_dir, index_records.TRUTH + ".corrupt-*"))) == 1


def test_entries_that_are_not_objects_are_dropped(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    doc = truth(state_dir, root)
    doc["reservations"].append("junk")
    storage.write_json_atomic(truth_path(state_dir, root), doc)
    assert held(state_dir, root) == [("alice", "src/**")]
    grant(state_dir, root, "bob", "docs/**")
    assert all(isinstance(r, dict) for r in truth(state_dir, root)["reservations"])


def write_truth(state_dir: str, root: str, doc: Any) -> None:
    os.makedirs(ledger_location.directory(state_dir, root), exist_ok=True)
    storage.write_json_atomic(truth_path(state_dir, root), doc)


def live_entry(rid: str, agent: Any, pattern_text: str = "src/**") -> dict[str, Any]:
    return {"id": rid, "agent": agent, "pattern": pattern_text, "expires_at": NOW + HOUR}


@pytest.mark.parametrize("agent", [["bob"], {"name": "bob"}])
def test_an_entry_whose_agent_is_a_list_or_object_is_set_aside_not_fatal(
    state_dir: str, root: str, agent: Any
) -> None:
    """Found by tests/fuzz: an unhashable `agent` made every write raise TypeError."""
    write_truth(
        state_dir, root, {"reservations": [live_entry("r-1", agent), live_entry("r-2", "bob")]}
    )
    out = grant(state_dir, root, "carol", "docs/**")
    assert out.changed and any("set aside" in note for note in out.notes)
    doc = truth(state_dir, root)
    assert [r["id"] for r in doc["reservations"]] == ["r-2", *[r["id"] for r in out.changed]]
    assert doc["rejected"][0]["entry"] == live_entry("r-1", agent)


@pytest.mark.parametrize("value", [5, "r-1", {"r-1": {"pattern": "src/**"}}])
def test_reservations_that_are_not_a_list_are_set_aside_not_fatal(
    state_dir: str, root: str, value: Any
) -> None:
    """Found by tests/fuzz: `"reservations": 5` made every write raise TypeError."""
    write_truth(state_dir, root, {"reservations": value})
    out = grant(state_dir, root, "bob", "docs/**")
    assert out.changed
    doc = truth(state_dir, root)
    assert [r["pattern"] for r in doc["reservations"]] == ["docs/**"]
    assert doc["rejected"][0]["entry"] == value  # kept, not silently lost


@pytest.mark.parametrize("value", [{}, "none", 7, {"entry": 1}])
def test_a_rejected_that_is_not_a_list_is_kept_inside_the_new_list(
    state_dir: str, root: str, value: Any
) -> None:
    """Found by tests/fuzz: `"rejected": {}` made the next set-aside raise AttributeError."""
    write_truth(state_dir, root, {"reservations": ["junk"], "rejected": value})
    assert grant(state_dir, root, "bob", "docs/**").changed
    rejected = truth(state_dir, root)["rejected"]
    assert [item["entry"] for item in rejected] == [value, "junk"]


def test_releasing_ones_own_entry_never_takes_another_owners_entry_with_the_same_id(
    state_dir: str, root: str
) -> None:
    """Found by tests/fuzz: a hand-edited ledger repeating an id lost the other
    owner's reservation when one owner released its own (release by id)."""
    write_truth(
        state_dir,
        root,
        {
            "reservations": [
                live_entry("r-1", "alice", "src/**"),
                live_entry("r-1", "bob", "docs/**"),
            ]
        },
    )
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("bob", None),
        NOW,
        everything=True,
    )
    assert [r["agent"] for r in out.changed] == ["bob"]
    assert held(state_dir, root) == [("alice", "src/**")]
    reservation_store.release(Repo(root, state_dir), Writer("alice", None), NOW, ids=["r-1"])
    assert held(state_dir, root) == []


def test_session_end_release_survives_a_mirror_with_an_odd_project_root(
    state_dir: str, root: str
) -> None:
    """Found by tests/fuzz: a state mirror whose project_root was a list made
    SessionEnd's release raise TypeError, so nothing was released."""
    grant(state_dir, root, "bob", "docs/**")
    doc = agent_state(state_dir, "bob")
    doc["reservations"].append({"id": "r-x", "project_root": ["unhashable"]})
    count = reservation_store.release_at_session_end(state_dir, "bob", doc, NOW, projects=[root])
    assert count == 1 and held(state_dir, root) == []


def test_a_lone_surrogate_in_an_entry_never_stops_the_ledger_being_written(
    state_dir: str, root: str
) -> None:
    """Found by tests/fuzz: `"reason": "\\ud800"` (valid JSON) made every write of
    the ledger and of the state mirrors raise UnicodeEncodeError."""
    os.makedirs(ledger_location.directory(state_dir, root))
    entry = '{"id": "r-1", "agent": "alice", "pattern": "src/**", "expires_at": %d, "reason": "\\ud800"}'
    Path(truth_path(state_dir, root)).write_text('{"reservations": [%s]}' % (entry % (NOW + HOUR)))
    assert grant(state_dir, root, "bob", "docs/**").changed
    assert held(state_dir, root) == [("alice", "src/**"), ("bob", "docs/**")]
    assert truth(state_dir, root)["reservations"][0]["reason"] == "\ud800"
    assert agent_state(state_dir, "alice")["reservations"][0]["reason"] == "\ud800"


def test_project_key_is_stable_and_file_name_safe() -> None:
    key = ledger_location.legacy_key("/home/dev/my project!/.hidden")
    assert key == ledger_location.legacy_key("/home/dev/my project!/.hidden")
    assert "/" not in key and " " not in key and not key.startswith(".")
    assert ledger_location.legacy_key("/a/x") != ledger_location.legacy_key("/b/x")


# --- the lock --------------------------------------------------------------------


def test_busy_lock_refuses_rather_than_writing_unlocked(
    state_dir: str, root: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    grant(state_dir, root, "alice", "src/**")
    lock_file = reservation_index.lock_path(ledger_location.directory(state_dir, root))
    ready = tmp_path / "holding"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from agent_hooks import storage\n"
            "lock = storage.Lock(sys.argv[1]); assert lock.acquire(5)\n"
            "open(sys.argv[2], 'w').close(); time.sleep(30)",
            lock_file,
            str(ready),
        ],
        env={**os.environ, "PYTHONPATH": SRC},
    )
    try:
        deadline = time.monotonic() + 10
        while not ready.exists():
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.01)
        monkeypatch.setattr(storage, "LOCK_TIMEOUT", 0.3)
        before = Path(truth_path(state_dir, root)).read_bytes()
        with pytest.raises(reservation.ReservationError, match="stayed busy") as err:
            grant(state_dir, root, "bob", "docs/**")
        assert "nothing was changed" in str(err.value) and "\n" not in str(err.value)
        assert Path(truth_path(state_dir, root)).read_bytes() == before
    finally:
        holder.kill()
        holder.wait()


# --- the 8-way race, real processes -------------------------------------------------

RACER = """
import os, sys, time
from agent_hooks.cli import main
barrier, ready = sys.argv[1], sys.argv[2]
open(ready, "w").close()
while not os.path.exists(barrier):
    time.sleep(0.0005)
main(args=["reserve", "src/**", "--reason", "race"], prog_name="agent-hooks")
"""


def test_eight_agents_reserving_at_once_exactly_one_wins(tmp_path: Path, root: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    barrier = tmp_path / "go"
    names = [f"racer_{i}" for i in range(8)]
    procs = []
    for name in names:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "AGENT_NAME": name,
            "CLAUDE_PROJECT_DIR": root,
            "PYTHONPATH": SRC,
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(barrier), str(tmp_path / f"ready-{name}")],
                env=env,
                cwd=root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready-{n}").exists() for n in names):
            assert time.monotonic() < deadline, "racers did not start"
            assert all(p.poll() is None for p in procs), "a racer died before the start"
            time.sleep(0.005)
        barrier.touch()
        results = [(*p.communicate(timeout=30), p.returncode) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    winners = [name for name, (_, _, rc) in zip(names, results, strict=True) if rc == 0]
    assert len(winners) == 1, results
    [winner] = winners
    for name, (out, err, rc) in zip(names, results, strict=True):
        if name == winner:
            assert out.startswith("reserved src/** (exclusive")
            continue
        assert rc == 1, (name, out, err)
        assert f'agent "{winner}" holds src/**' in err, err
        assert "nothing was reserved" in err
    doc = truth(str(home / ".claude"), root)
    assert [(r["agent"], r["pattern"]) for r in doc["reservations"]] == [(winner, "src/**")]


# --- bad entries, dead holders, forced releases ----------------------------------------


def dead_holder() -> dict[str, Any]:
    """The holder fields of a Claude Code process that has exited, on this host."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return {"pid": child.pid, "start": None, "host": liveness.host()}


def reserve_as(state_dir: str, root: str, agent: str, pat: str, **kw: Any) -> str:
    out = reservation_store.reserve(Repo(root, state_dir), Writer(agent, None),
                                    [(pat, pattern.compile(pat))], NOW, reason="", ttl=HOUR,
                                    **kw)  # fmt: skip
    assert out.conflicts == []
    rid: str = out.changed[0]["id"]
    return rid


BAD_ENTRIES: list[Any] = [
    {"id": "r-text", "agent": "mallory", "pattern": "x", "expires_at": "abc"},
    {"id": "r-mode", "agent": "mallory", "pattern": "y", "expires_at": NOW + HOUR, "mode": 5},
    {"id": "r-pat", "agent": "mallory", "pattern": "src/[a", "expires_at": NOW + HOUR},
    ["r-list", "src/**"],
]


def test_bad_entries_are_set_aside_with_their_reason_the_rest_stay_enforced(
    state_dir: str, root: str
) -> None:
    grant(state_dir, root, "alice", "src/**")
    doc = truth(state_dir, root)
    doc["reservations"][1:1] = BAD_ENTRIES
    storage.write_json_atomic(truth_path(state_dir, root), doc)
    listed = reservation_store.listing(Repo(root, state_dir), NOW)
    assert [r["pattern"] for r in listed.live] == ["src/**"] and len(listed.problems) == 4
    out = grant(state_dir, root, "bob", "docs/**", "src/app.py")
    assert [(held["agent"], held["pattern"]) for _, held in out.conflicts] == [("alice", "src/**")]
    assert len(out.notes) == 4 and all("set aside a bad reservation entry" in n for n in out.notes)
    after = truth(state_dir, root)
    assert [(r["agent"], r["pattern"]) for r in after["reservations"]] == [("alice", "src/**")]
    assert [r["entry"] for r in after["rejected"]] == BAD_ENTRIES
    whys = [r["why"] for r in after["rejected"]]
    assert ["r-text" in whys[0], "r-mode" in whys[1], "compile" in whys[2], "list" in whys[3]] == [
        True] * 4  # fmt: skip
    assert all(r["at"] == int(NOW) for r in after["rejected"])
    assert grant(state_dir, root, "bob", "docs/**").notes == []  # set aside once
    assert len(truth(state_dir, root)["rejected"]) == 4


def test_rejected_keeps_the_latest(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    doc = truth(state_dir, root)
    doc["reservations"] += [{"id": f"r-{i}", "pattern": "x", "expires_at": None} for i in range(60)]
    storage.write_json_atomic(truth_path(state_dir, root), doc)
    grant(state_dir, root, "bob", "docs/**")
    rejected = truth(state_dir, root)["rejected"]
    assert len(rejected) == reservation_store.MAX_REJECTED and rejected[-1]["entry"]["id"] == "r-59"


def test_a_dead_holders_reservation_is_dropped_at_the_next_write_unless_keep(
    state_dir: str, root: str
) -> None:
    kept = reserve_as(state_dir, root, "alice", "lib/**", holder=dead_holder(), keep=True)
    mine = {"pid": os.getpid(), "start": liveness.start_time(os.getpid()), "host": liveness.host()}
    live = reserve_as(state_dir, root, "carol", "etc/**", holder=mine)
    gone = reserve_as(state_dir, root, "alice", "src/**", holder=dead_holder())
    assert held(state_dir, root) == [("alice", "lib/**"), ("alice", "src/**"), ("carol", "etc/**")]
    out = grant(state_dir, root, "bob", "src/app.py")  # the write that tidies: granted
    assert out.conflicts == []
    assert [(d["id"], d["why"]) for d in out.dropped] == [(gone, "its holder's process is gone")]
    after = truth(state_dir, root)
    assert sorted(r["id"] for r in after["reservations"]) == sorted(
        [kept, live, out.changed[0]["id"]]
    )
    [dropped] = after["dropped"]
    assert dropped == {"id": gone, "pattern": "src/**", "agent": "alice", "conversation_id": None,
                       "why": "its holder's process is gone", "at": int(NOW)}  # fmt: skip
    assert reservation_store.listing(Repo(root, state_dir), NOW).dropped == [dropped]


def test_forced_release_records_who_released_it(state_dir: str, root: str) -> None:
    bobs = reserve_as(state_dir, root, "bob", "src/**")
    carols = reserve_as(state_dir, root, "carol", "lib/**")
    mine = reserve_as(state_dir, root, "dana", "etc/**")
    out = reservation_store.release(
        Repo(root, state_dir),
        Writer("dana", None),
        NOW,
        ids=[bobs, mine],
        force=True,
        forced_by='agent "dana"',
    )  # fmt: skip
    assert sorted(r["id"] for r in out.changed) == sorted([bobs, mine])
    why = 'released by agent "dana" (release --force)'
    assert [(d["id"], d["agent"], d["why"]) for d in out.dropped] == [(bobs, "bob", why)]
    reservation_store.release(
        Repo(root, state_dir),
        Writer(None, None),
        NOW,
        ids=[carols],
        force=True,
    )
    assert [(d["id"], d["why"]) for d in truth(state_dir, root)["dropped"]] == [
        (bobs, why), (carols, "released by a person (release --force)")]  # fmt: skip
    assert held(state_dir, root) == []


def test_a_huge_integer_time_is_set_aside_like_any_bad_entry(state_dir: str, root: str) -> None:
    grant(state_dir, root, "alice", "src/**")
    text = Path(truth_path(state_dir, root)).read_text()
    bad = '{"id":"r-huge","pattern":"x","expires_at":1' + "0" * 400 + "},"
    Path(truth_path(state_dir, root)).write_text(
        text.replace('"reservations":[', '"reservations":[' + bad)
    )
    out = grant(state_dir, root, "bob", "docs/**")
    assert len(out.notes) == 1 and truth(state_dir, root)["rejected"][0]["entry"]["id"] == "r-huge"
