"""reservations.index on its own: the project key, the truth and its marshal cache,
and the HotIndex a check reads.

Indexes are written with `index.write` (as the store does under its lock) into a
real state directory under tmp_path; time is passed in. How reserve / release use
the index is tested in test_reservation_store.py.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import identity, storage
from agent_hooks.reservations import index, pattern

NOW = 1_800_000_000.0
HOUR = 3600
KEY = re.compile(r"[^/\x00\s.][^/\x00\s]{0,39}-[0-9a-f]{16}")


def rec(
    agent: str | None, pat: str, mode: str = "exclusive", expires: float = NOW + HOUR
) -> dict[str, Any]:
    return {
        "id": f"r-{agent}-{pat}",
        "agent": agent,
        "pattern": pat,
        "compiled": pattern.compile(pat),
        "mode": mode,
        "expires_at": expires,
        "reason": f"why {pat}",
    }


RECORDS = [
    rec("alice", "src/**"),
    rec("bob", "src/app.py", mode="shared"),
    rec("carol", "docs/a[bc].md", expires=NOW + 2 * HOUR),
    rec("carol", "*.py"),
    rec("dave", "**/x", mode="shared"),
    rec(None, "README.md"),
]
GROUPS = {"src": [0, 1], "docs": [2], "": [3, 4], "README.md": [5]}  # indexes into RECORDS


def as_record(res: dict[str, Any]) -> tuple[Any, ...]:
    return (res["agent"], res["mode"] == "exclusive", float(res["expires_at"]), res["compiled"],
            res["id"], res["pattern"], res["reason"])  # fmt: skip


def write(state_dir: Path, root: Path, records: list[dict[str, Any]], **extra: Any) -> Path:
    directory = index.index_dir(str(state_dir), str(root))
    storage.ensure_dir(directory)
    index.write(
        directory, {"schema": 1, "project_root": str(root), "reservations": records, **extra}
    )
    return Path(directory)


def load(state_dir: Path, root: Path) -> index.HotIndex:
    hot = index.load_hot(str(state_dir), str(root))
    assert hot is not None
    return hot


def agents(hot: index.HotIndex, first: str | None = None) -> list[str | None]:
    return [r[index.AGENT] for r in hot.candidates(first)]


# --- project_key ------------------------------------------------------------------


def test_project_key_is_the_basename_and_the_fnv1a_of_the_root() -> None:
    """Pinned: the key names directories on disk, so a change would orphan every index."""
    assert index.project_key("") == "root-cbf29ce484222325"  # FNV-1a 64 offset basis
    assert index.project_key("a") == "a-af63dc4c8601ec8c"
    assert index.project_key("/home/dev/proj") == index.project_key("/home/dev/proj")


WEIRD = ["/", "/x/.hidden", "/x/...", "/x/my project!", "/x/ünï", "/x/" + "a" * 60,
         "/x/\udcff\udcfe", "/x/a\nb", "/x/-", "/x/a:b*c?", "/x/a/"]  # fmt: skip


@pytest.mark.parametrize("root", WEIRD, ids=repr)
def test_project_key_is_file_name_safe_for_weird_basenames(root: str, tmp_path: Path) -> None:
    """One path component, not hidden, short, valid UTF-8 -- and a directory can bear it."""
    key = index.project_key(root)
    assert KEY.fullmatch(key), key
    key.encode("utf-8")
    (tmp_path / key).mkdir()


@given(st.text(max_size=80))
def test_any_root_gives_a_safe_key(tail: str) -> None:
    assert KEY.fullmatch(index.project_key("/" + tail))


def test_distinct_roots_get_distinct_keys() -> None:
    """Same basename elsewhere, case, and characters the basename part folds to "_" all differ."""
    roots = ["/a/x", "/b/x", "/a/X", "/p/a b", "/p/a_b", "/p/a!b", "/a/x/y", "/a/.x", "/a/x."]
    assert len({index.project_key(r) for r in roots}) == len(roots)


def test_index_dir_is_one_directory_per_project_under_the_data_dir(state_dir: Path) -> None:
    directory = index.index_dir(str(state_dir), "/w/my proj")
    parent = os.path.join(identity.data_dir(str(state_dir)), "projects")
    assert directory == os.path.join(parent, index.project_key("/w/my proj"))
    assert index.lock_path(directory) == os.path.join(directory, "reservations.json.lock")


# --- write, then load_hot -----------------------------------------------------------


def test_load_hot_returns_the_records_grouped_by_leading_literal(
    state_dir: Path, project: Path
) -> None:
    """Every record comes back exactly, in its first literal segment's group ("" for a glob)."""
    directory = write(state_dir, project, RECORDS)
    hot = load(state_dir, project)
    assert set(hot.groups) == set(GROUPS)
    for key, members in GROUPS.items():
        assert hot.group(key) == [as_record(RECORDS[i]) for i in members], key
    # the cache says what the truth says (compiled patterns survive JSON and marshal alike)
    truth = json.loads((directory / index.TRUTH).read_text())
    from_truth = index.build_hot(truth)
    assert {k: from_truth.group(k) for k in GROUPS} == {k: hot.group(k) for k in GROUPS}
    assert [index.as_dict(r) for r in hot.candidates(None)] == RECORDS
    for name in (index.TRUTH, index.CACHE):
        assert stat.S_IMODE((directory / name).stat().st_mode) == 0o600


def test_candidates_are_the_segment_group_plus_the_glob_group(
    state_dir: Path, project: Path
) -> None:
    write(state_dir, project, RECORDS)
    hot = load(state_dir, project)
    assert agents(hot, "src") == ["alice", "bob", "carol", "dave"]
    assert agents(hot, "docs") == ["carol", "carol", "dave"]
    assert agents(hot, "elsewhere") == ["carol", "dave"]
    assert sorted(map(str, agents(hot))) == ["None", "alice", "bob", "carol", "carol", "dave"]


def test_groups_stay_marshalled_until_asked_for(state_dir: Path, project: Path) -> None:
    """From the cache every group is bytes; group() decodes that one group, once."""
    write(state_dir, project, RECORDS)
    hot = load(state_dir, project)
    assert all(type(v) is bytes for v in hot.groups.values())
    first = hot.group("docs")
    assert [k for k, v in hot.groups.items() if type(v) is not bytes] == ["docs"]
    assert hot.group("docs") is first
    hot.candidates("src")
    assert sorted(k for k, v in hot.groups.items() if type(v) is bytes) == ["README.md"]
    assert hot.group("nothing") == [] and "nothing" not in hot.groups


def test_exclusive_until_and_others_hold_exclusive(state_dir: Path, project: Path) -> None:
    """Latest exclusive expiry per agent; shared reservations never count; expiry is exclusive."""
    write(state_dir, project, RECORDS)
    hot = load(state_dir, project)
    assert hot.exclusive_until == {"alice": NOW + HOUR, "carol": NOW + 2 * HOUR, None: NOW + HOUR}
    assert hot.others_hold_exclusive("bob", NOW)
    assert hot.others_hold_exclusive("carol", NOW + HOUR - 1)  # alice and the shared agent
    assert not hot.others_hold_exclusive("carol", NOW + HOUR)
    assert hot.others_hold_exclusive(None, NOW + HOUR)  # carol still
    write(state_dir, project, [rec("bob", "a"), rec("dave", "b", mode="shared")])
    hot = load(state_dir, project)
    assert not hot.others_hold_exclusive("bob", NOW) and hot.others_hold_exclusive("dave", NOW)


@pytest.mark.parametrize(("value", "strict"), [(True, True), (False, False), ("yes", False),
                                               (1, False), (None, False)])  # fmt: skip
def test_strict_is_only_a_json_true(
    state_dir: Path, project: Path, value: Any, strict: bool
) -> None:
    directory = write(state_dir, project, [], strict=value)
    assert load(state_dir, project).strict is strict
    (directory / index.CACHE).unlink()
    assert load(state_dir, project).strict is strict


# --- when the cache is used -----------------------------------------------------------


def rewrite_in_place(path: Path, old: str, new: str, keep_mtime: bool) -> None:
    st = path.stat()
    with open(path, "r+b") as f:  # same inode
        data = f.read().replace(old.encode(), new.encode())
        f.seek(0)
        f.write(data)
        f.truncate()
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_cache_is_used_while_inode_size_and_mtime_match(state_dir: Path, project: Path) -> None:
    """Positive control: a truth changed without changing its key still reads as the cache."""
    directory = write(state_dir, project, [rec("alice", "src/**")])
    rewrite_in_place(directory / index.TRUTH, '"alice"', '"carol"', keep_mtime=True)
    assert agents(load(state_dir, project)) == ["alice"]


@pytest.mark.parametrize("how", ["replaced", "grown", "touched"])
def test_truth_rewritten_behind_the_cache_is_read_from_the_truth(
    state_dir: Path, project: Path, how: str
) -> None:
    """New inode, new size, or new mtime: the cache no longer describes the truth."""
    directory = write(state_dir, project, [rec("alice", "src/**")])
    truth = directory / index.TRUTH
    if how == "replaced":  # another inode, same size
        storage.write_bytes_atomic(str(truth), truth.read_bytes().replace(b'"alice"', b'"carol"'))
    elif how == "grown":
        rewrite_in_place(truth, '"alice"', '"carol-2"', keep_mtime=True)
    else:
        rewrite_in_place(truth, '"alice"', '"carol"', keep_mtime=False)
        os.utime(truth, ns=(0, truth.stat().st_mtime_ns + 10**9))
    assert agents(load(state_dir, project)) == [{"grown": "carol-2"}.get(how, "carol")]


def doctored(good: bytes, **change: Any) -> bytes:
    version, pyver, key, strict, until, _ = marshal.loads(good)
    fields = {"version": version, "pyver": pyver, "key": key}
    fields.update(change)
    fake = {"zzz": marshal.dumps([("mallory", True, NOW + HOUR, ["", "zzz"], "r-x", "zzz", "")])}
    return marshal.dumps((fields["version"], fields["pyver"], fields["key"], strict, until, fake))


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "wrong-shape", "other-version",
                                    "other-python", "other-key", "directory", "symlink"])  # fmt: skip
def test_unusable_cache_falls_back_to_the_truth(
    state_dir: Path, project: Path, tmp_path: Path, damage: str
) -> None:
    directory = write(state_dir, project, RECORDS[:2])
    cache = directory / index.CACHE
    good = cache.read_bytes()
    assert agents(load(state_dir, project)) == ["alice", "bob"]
    cache.unlink()
    if damage == "garbage":
        cache.write_bytes(b"\x00not marshal\xff" * 4)
    elif damage == "empty":
        cache.write_bytes(b"")
    elif damage == "truncated":  # every cut point of a torn write
        for cut in range(len(good)):
            cache.write_bytes(good[:cut])
            assert agents(load(state_dir, project)) == ["alice", "bob"], cut
    elif damage == "wrong-shape":
        cache.write_bytes(marshal.dumps((index._CACHE_VERSION, 1, 2)))
    elif damage == "other-version":
        cache.write_bytes(doctored(good, version=index._CACHE_VERSION + 1))
    elif damage == "other-python":
        cache.write_bytes(doctored(good, pyver=(2, 7)))
    elif damage == "other-key":
        cache.write_bytes(doctored(good, key=(1, 2, 3)))
    elif damage == "directory":
        cache.mkdir()
    else:  # a planted symlink to a cache that would otherwise be used is not followed
        (tmp_path / "planted").write_bytes(doctored(good))
        cache.symlink_to(tmp_path / "planted")
    assert agents(load(state_dir, project)) == ["alice", "bob"]
    if damage == "other-key":  # control: the same doctored cache with the right key is used
        cache.write_bytes(doctored(good))
        assert agents(load(state_dir, project)) == ["mallory"]


def test_missing_truth_means_no_index_even_with_a_cache(state_dir: Path, project: Path) -> None:
    assert index.load_hot(str(state_dir), str(project)) is None  # nothing at all
    directory = write(state_dir, project, RECORDS)
    (directory / index.TRUTH).unlink()
    assert (directory / index.CACHE).exists()
    assert index.load_hot(str(state_dir), str(project)) is None
