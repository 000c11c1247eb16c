"""reservations.reservation_index on its own: the truth and its marshal cache, and the HotIndex
a check reads (`load_hot(directory)`).

Ledgers are written with `index_build.write` (as the store does under its lock), or the
truth alone with `storage.write_json_atomic` (as an older release or a hand edit
leaves it), into a directory under tmp_path; time is passed in. How reserve /
release use the index is tested in test_reservation_store.py, where the ledger
lives (`ledger.ledger_location.directory`) in test_ledger_location.py.
"""

from __future__ import annotations

import json
import marshal
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import storage
from agent_hooks.reservations import (
    blocking,
    index_build,
    index_records,
    pattern,
    reservation_index,
)

NOW = 1_800_000_000.0
HOUR = 3600


def rec(agent: str | None, pat: str, mode: str = "exclusive", expires: float = NOW + HOUR,
        conversation: str | None = None) -> dict[str, Any]:  # fmt: skip
    """An entry in exactly the shape `index_records.as_dict` gives back."""
    return {"id": f"r-{agent}-{pat}"[:64], "agent": agent, "conversation_id": conversation,
            "pattern": pat, "compiled": pattern.compile(pat), "mode": mode,
            "expires_at": float(expires), "reason": f"why {pat}", "holder": None,
            "keep": False}  # fmt: skip


RECORDS = [
    rec("alice", "src/**"),
    rec("bob", "src/app.py", mode="shared"),
    rec("carol", "docs/a[bc].md", expires=NOW + 2 * HOUR),
    rec("carol", "*.py"),
    rec("dave", "**/x", mode="shared"),
    rec(None, "README.md", conversation="c0nv"),
]
GROUPS = {"src": [0, 1], "docs": [2], "": [3, 4], "README.md": [5]}  # indexes into RECORDS


def as_record(res: dict[str, Any]) -> tuple[Any, ...]:
    owner = res["agent"] or "~" + (res["conversation_id"] or "")
    return (owner, res["mode"] == "exclusive", res["expires_at"], res["compiled"], res["id"],
            res["pattern"], res["reason"], res["agent"], res["conversation_id"], None, False,
            None, res.get("client"))  # fmt: skip


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A ledger directory."""
    path = tmp_path / "ledger"
    path.mkdir()
    return path


def write(book: Path, records: list[Any], **extra: Any) -> Path:
    index_build.write(str(book), {"schema": 2, "reservations": records, **extra})
    return book


def write_truth(book: Path, records: list[Any], **extra: Any) -> None:
    """The truth alone, no cache: as a hand edit or an older release leaves it."""
    storage.write_json_atomic(str(book / index_records.TRUTH), {"reservations": records, **extra})


def load(book: Path) -> index_records.HotIndex:
    hot = reservation_index.load_hot(str(book))
    assert hot is not None
    return hot


def owners(hot: index_records.HotIndex, first: str | None = None) -> list[str]:
    return [r[index_records.OWNER] for r in hot.candidates(first)]


# --- write, then load_hot ------------------------------------------------------------


def test_load_hot_returns_the_records_grouped_by_leading_literal(book: Path) -> None:
    """Every record comes back exactly, in its first literal segment's group ("" for a glob)."""
    write(book, RECORDS)
    hot = load(book)
    assert hot.problems == []
    assert set(hot.groups) == set(GROUPS)
    for key, members in GROUPS.items():
        assert hot.group(key) == [as_record(RECORDS[i]) for i in members], key
    from_truth = index_build.build_hot(json.loads((book / index_records.TRUTH).read_text()))
    assert {k: from_truth.group(k) for k in GROUPS} == {k: hot.group(k) for k in GROUPS}
    assert [index_records.as_dict(r) for r in hot.candidates(None)] == RECORDS
    for name in (index_records.TRUTH, index_records.CACHE):
        assert stat.S_IMODE((book / name).stat().st_mode) == 0o600


def test_the_stored_compiled_form_is_never_trusted(book: Path) -> None:
    """`compiled` is rebuilt from `pattern`: a doctored one cannot widen or hide a reservation."""
    write_truth(book, [{**rec("alice", "src/a.py"), "compiled": pattern.compile("**")}])
    hot = load(book)
    assert [r[index_records.COMPILED] for r in hot.candidates(None)] == [
        pattern.compile("src/a.py")
    ]
    assert not blocking.blocking_edit(hot, "docs/x.md", "bob", NOW)


@pytest.mark.parametrize(
    "rel", ["src/app.py", "src/x/y.py", "docs/ab.md", "docs/ad.md", "a.py", "x", "q/x", "README.md"]
)
@pytest.mark.parametrize("me", ["alice", "bob", "carol", "erin"])
def test_edit_blockers_are_blocking_edit_for_many_files(book: Path, rel: str, me: str) -> None:
    """The Bash aftermath's one-pass form gives what `blocking_edit` gives, file by file."""
    write(book, [*RECORDS, rec("erin", "docs/**", expires=NOW - 1)])
    hot = load(book)
    ask = blocking.edit_blockers(hot, me, NOW, lambda r: r[index_records.OWNER] != "dave")
    for _ in range(2):  # the second time from what it sorted out the first time
        assert ask(rel) == blocking.blocking_edit(
            hot, rel, me, NOW, lambda r: r[index_records.OWNER] != "dave"
        )


def test_candidates_are_the_segment_group_plus_the_glob_group(book: Path) -> None:
    write(book, RECORDS)
    hot = load(book)
    assert owners(hot, "src") == ["alice", "bob", "carol", "dave"]
    assert owners(hot, "docs") == ["carol", "carol", "dave"]
    assert owners(hot, "elsewhere") == ["carol", "dave"]
    assert sorted(owners(hot)) == ["alice", "bob", "carol", "carol", "dave", "~c0nv"]


def test_groups_stay_marshalled_until_asked_for(book: Path) -> None:
    """From the cache every group is bytes; group() decodes that one group, once."""
    write(book, RECORDS)
    hot = load(book)
    assert all(type(v) is bytes for v in hot.groups.values())
    first = hot.group("docs")
    assert [k for k, v in hot.groups.items() if type(v) is not bytes] == ["docs"]
    assert hot.group("docs") is first
    hot.candidates("src")
    assert sorted(k for k, v in hot.groups.items() if type(v) is bytes) == ["README.md"]
    assert hot.group("nothing") == [] and "nothing" not in hot.groups


def test_exclusive_until_is_per_owner_and_counts_only_exclusive(book: Path) -> None:
    """Latest exclusive expiry per owner (an unnamed agent by its conversation); expiry is exclusive."""
    write(book, RECORDS)
    hot = load(book)
    assert hot.exclusive_until == {
        "alice": NOW + HOUR,
        "carol": NOW + 2 * HOUR,
        "~c0nv": NOW + HOUR,
    }
    assert hot.others_hold_exclusive("bob", NOW)
    assert hot.others_hold_exclusive("carol", NOW + HOUR - 1)
    assert not hot.others_hold_exclusive("carol", NOW + HOUR)
    assert hot.others_hold_exclusive("~c0nv", NOW + HOUR)  # carol still
    write(book, [rec("bob", "a"), rec("dave", "b", mode="shared")])
    hot = load(book)
    assert not hot.others_hold_exclusive("bob", NOW) and hot.others_hold_exclusive("dave", NOW)


@pytest.mark.parametrize(("value", "strict"), [(True, True), (False, False), ("yes", False),
                                               (1, False), (None, False)])  # fmt: skip
def test_strict_is_only_a_json_true(book: Path, value: Any, strict: bool) -> None:
    write(book, [], strict=value)
    assert load(book).strict is strict  # from the cache
    (book / index_records.CACHE).unlink()
    assert load(book).strict is strict  # from the truth


# --- settings ---------------------------------------------------------------------------


def test_settings_default_when_absent(book: Path) -> None:
    write(book, [])
    assert load(book).settings == {
        "strict": False, "lease_minutes": 10, "worktree_leases": "warn", "remote": None}  # fmt: skip


@pytest.mark.parametrize(("given", "minutes", "worktree", "remote"), [
    ({"lease_minutes": 0, "worktree_leases": "deny", "remote": "origin"}, 0, "deny", "origin"),
    ({"lease_minutes": 1440, "worktree_leases": "warn"}, 1440, "warn", None),
    ({"lease_minutes": 1441, "worktree_leases": "block", "remote": ""}, 10, "warn", None),
    ({"lease_minutes": -1, "worktree_leases": 1, "remote": 1}, 10, "warn", None),
    ({"lease_minutes": True, "worktree_leases": None, "remote": None}, 10, "warn", None),
    ({"lease_minutes": "5", "worktree_leases": "DENY"}, 10, "warn", None),
    ({"lease_minutes": 2.5}, 10, "warn", None),
    ([1, 2], 10, "warn", None),
    ("deny", 10, "warn", None),
])  # fmt: skip
def test_each_setting_is_valid_or_its_default(
    book: Path, given: Any, minutes: int, worktree: str, remote: str | None
) -> None:
    """A bad value falls back to its default alone; a good one is kept, via truth and cache."""
    write_truth(book, [rec("alice", "src/**")], settings=given)
    expected = {
        "strict": False, "lease_minutes": minutes, "worktree_leases": worktree, "remote": remote,
    }  # fmt: skip
    assert load(book).settings == expected
    assert load(book).settings == expected  # the fresh cache says the same
    assert owners(load(book)) == ["alice"]


# --- one bad entry never hides the others -----------------------------------------------

BAD = {
    "expires-text": ({**rec("mallory", "x"), "expires_at": "abc"}, "is not a time"),
    "expires-null": ({**rec("mallory", "x"), "expires_at": None}, "is not a time"),
    "expires-object": ({**rec("mallory", "x"), "expires_at": {}}, "is not a time"),
    "pattern-uncompilable": ({**rec("mallory", "x"), "pattern": "src/[a"}, "does not compile"),
    "pattern-unnormalized": ({**rec("mallory", "x"), "pattern": "a//b"}, "does not compile"),
    "mode-number": ({**rec("mallory", "x"), "mode": 5}, "neither exclusive nor shared"),
    "a-list": (["r-x", "src/**", "exclusive"], "an entry that is a list"),
    "no-id": ({**rec("mallory", "x"), "id": None}, "without a usable id"),
}


@pytest.mark.parametrize("where", [0, 1, 2])
@pytest.mark.parametrize("bad", list(BAD))
def test_one_bad_entry_is_skipped_and_named_the_others_still_enforced(
    book: Path, bad: str, where: int
) -> None:
    """The bug an adversarial test found: one bad entry switched enforcement off."""
    entry, why = BAD[bad]
    entries: list[Any] = [rec("alice", "src/**"), rec("bob", "docs/**", mode="shared")]
    entries.insert(where, entry)
    write_truth(book, entries, strict=True)
    hot = load(book)
    [problem] = hot.problems
    assert "skipped a bad reservation entry" in problem and why in problem
    if isinstance(entry, dict) and entry["id"]:
        assert entry["id"] in problem
    assert owners(hot) == ["alice", "bob"] and hot.strict
    assert [
        r[index_records.OWNER] for r in blocking.blocking_edit(hot, "src/a.py", "carol", NOW)
    ] == ["alice"]


HUGE_INT_BUG = (
    "reservation._finite (reservation.py:75) calls float() on a JSON int of any size; "
    "OverflowError escapes checked(), load_hot raises and the hook fails open"
)


@pytest.mark.parametrize("field", ["expires_at", "created_at"])
def test_a_huge_integer_time_is_one_bad_entry_too(book: Path, field: str) -> None:
    """JSON ints are unbounded: `1` followed by 400 zeros is a bad time, not a crash."""
    doc = {"reservations": [rec("alice", "src/**"), {**rec("mallory", "x"), field: "HUGE"}]}
    (book / index_records.TRUTH).write_text(json.dumps(doc).replace('"HUGE"', "1" + "0" * 400))
    hot = load(book)
    assert len(hot.problems) == 1 and owners(hot) == ["alice"]


def test_the_reader_writes_a_fresh_cache_so_the_next_reader_has_nothing_to_report(
    book: Path,
) -> None:
    write_truth(book, [rec("alice", "src/**"), {**rec("x", "y"), "mode": 5}])
    assert not (book / index_records.CACHE).exists()
    assert len(load(book).problems) == 1
    truth = (book / index_records.TRUTH).stat()
    built_from = marshal.loads((book / index_records.CACHE).read_bytes())[2]
    assert built_from == (truth.st_ino, truth.st_size, truth.st_mtime_ns)
    again = load(book)
    assert again.problems == [] and all(type(v) is bytes for v in again.groups.values())
    assert owners(again) == ["alice"]


def test_a_stale_cache_is_replaced_by_the_reader(book: Path) -> None:
    write(book, [rec("alice", "src/**")])
    write_truth(book, [rec("bob", "src/**")])
    assert owners(load(book)) == ["bob"]
    assert all(type(v) is bytes for v in load(book).groups.values())  # read from the new cache
    assert owners(load(book)) == ["bob"]


def test_a_truth_that_is_not_json_is_reported_to_every_reader(book: Path) -> None:
    """Nothing to cache: no reservation is read and each reader says why."""
    (book / index_records.TRUTH).write_bytes(b'{"reservations": [')
    for _ in range(2):
        hot = load(book)
        assert owners(hot) == [] and "not valid JSON" in hot.problems[0]
    assert not (book / index_records.CACHE).exists()


# --- when the cache is used -------------------------------------------------------------


def rewrite_in_place(path: Path, old: str, new: str, keep_mtime: bool) -> None:
    st = path.stat()
    with open(path, "r+b") as f:  # same inode
        data = f.read().replace(old.encode(), new.encode())
        f.seek(0)
        f.write(data)
        f.truncate()
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_cache_is_used_while_inode_size_and_mtime_match(book: Path) -> None:
    """Positive control: a truth changed without changing its key still reads as the cache."""
    write(book, [rec("alice", "src/**")])
    rewrite_in_place(book / index_records.TRUTH, '"alice"', '"carol"', keep_mtime=True)
    assert owners(load(book)) == ["alice"]


@pytest.mark.parametrize("how", ["replaced", "grown", "touched"])
def test_truth_rewritten_behind_the_cache_is_read_from_the_truth(book: Path, how: str) -> None:
    """New inode, new size, or new mtime: the cache no longer describes the truth."""
    write(book, [rec("alice", "src/**")])
    truth = book / index_records.TRUTH
    if how == "replaced":  # another inode, same size
        storage.write_bytes_atomic(str(truth), truth.read_bytes().replace(b'"alice"', b'"carol"'))
    elif how == "grown":
        rewrite_in_place(truth, '"alice"', '"carol-2"', keep_mtime=True)
    else:
        rewrite_in_place(truth, '"alice"', '"carol"', keep_mtime=False)
        os.utime(truth, ns=(0, truth.stat().st_mtime_ns + 10**9))
    assert owners(load(book)) == [{"grown": "carol-2"}.get(how, "carol")]


def doctored(good: bytes, **change: Any) -> bytes:
    version, pyver, key, settings, until, _ = marshal.loads(good)
    fields = {"version": version, "pyver": pyver, "key": key, **change}
    record = ("mallory", True, NOW + HOUR, ["", "zzz"], "r-x", "zzz", "", "mallory", None, None,
              False)  # fmt: skip
    fake = {"zzz": marshal.dumps([record])}
    return marshal.dumps((fields["version"], fields["pyver"], fields["key"], settings, until, fake))


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "wrong-shape", "other-version",
                                    "other-python", "other-key", "directory", "symlink"])  # fmt: skip
def test_unusable_cache_falls_back_to_the_truth(book: Path, tmp_path: Path, damage: str) -> None:
    write(book, RECORDS[:2])
    cache = book / index_records.CACHE
    good = cache.read_bytes()
    cache.unlink()
    if damage == "garbage":
        cache.write_bytes(b"\x00not marshal\xff" * 4)
    elif damage == "empty":
        cache.write_bytes(b"")
    elif damage == "truncated":  # every cut point of a torn write
        for cut in range(0, len(good), 7):
            cache.write_bytes(good[:cut])
            assert owners(load(book)) == ["alice", "bob"], cut
        cache.write_bytes(good[:-1])
    elif damage == "wrong-shape":
        cache.write_bytes(marshal.dumps((index_records.CACHE_VERSION, 1, 2)))
    elif damage == "other-version":
        cache.write_bytes(doctored(good, version=index_records.CACHE_VERSION + 1))
    elif damage == "other-python":
        cache.write_bytes(doctored(good, pyver=(2, 7)))
    elif damage == "other-key":
        cache.write_bytes(doctored(good, key=(1, 2, 3)))
    elif damage == "directory":
        cache.mkdir()
    else:  # a planted symlink to a cache that would otherwise be used is not followed
        (tmp_path / "planted").write_bytes(doctored(good))
        cache.symlink_to(tmp_path / "planted")
    assert owners(load(book)) == ["alice", "bob"]
    if damage == "symlink":  # replaced by a fresh cache, never written through
        assert (tmp_path / "planted").read_bytes() == doctored(good) and not cache.is_symlink()
    if damage == "other-key":  # control: the same doctored cache with the right key is used
        cache.write_bytes(doctored(good))
        assert owners(load(book)) == ["mallory"]


def test_missing_truth_means_no_index_even_with_a_cache(book: Path) -> None:
    assert reservation_index.load_hot(str(book)) is None  # nothing at all
    assert reservation_index.load_hot(str(book / "absent")) is None
    write(book, RECORDS)
    (book / index_records.TRUTH).unlink()
    assert (book / index_records.CACHE).exists()
    assert reservation_index.load_hot(str(book)) is None
    assert reservation_index.lock_path(str(book)) == str(book / "reservations.json.lock")
