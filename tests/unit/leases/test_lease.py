"""leases.lease, pure: whose lease blocks whom (`judge`), when one's own lease
needs no rewrite (`fresh`), and the file names leases live under (`file_name`,
`name_prefix`). Liveness is passed in as a function; time is passed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import posix_fs as fs
from agent_hooks.leases import lease
from agent_hooks.writers import Writer

NOW = 1_800_000_000
WT = "/repo"
OTHER_WT = "/repo-feature"
MAIN = Writer("alice", "c1")
SUB = Writer("alice", "c1", "s1")
SUB2 = Writer("alice", "c1", "s2")
BOB = Writer("bob", "c2")


def held(by: Writer, worktree: str = WT, expires: Any = NOW + 600, pid: int = 1) -> dict[str, Any]:
    return {**lease.new(by, {"pid": pid, "start": 7, "host": "h"}, worktree, "main", NOW - 60,
                        10, source="edit"), "expires": expires}  # fmt: skip


def alive(holder: Mapping[str, Any]) -> bool | None:
    """pid 1 is alive, pid 2 is dead, anything else cannot be judged."""
    return {1: True, 2: False}.get(holder.get("pid"))  # type: ignore[arg-type]


def judge(me: Writer, *leases: dict[str, Any]) -> lease.Judgement:
    return lease.judge(list(leases), me, WT, NOW, alive)


def writers(found: list[dict[str, Any]]) -> list[str]:
    return [item["writer"] for item in found]


def test_ones_own_lease_never_blocks() -> None:
    mine = held(MAIN)
    found = judge(MAIN, mine)
    assert found.own is mine and found.blockers == [] and found.elsewhere == []


def test_the_parents_lease_moves_to_the_subagent() -> None:
    """The parent delegated the work: its lease is the subagent's to take over."""
    parents = held(MAIN)
    found = judge(SUB, parents)
    assert found.own is parents and found.blockers == []


@pytest.mark.parametrize("order", ["own-first", "parent-first"])
def test_ones_own_lease_wins_over_the_parents(order: str) -> None:
    mine, parents = held(SUB), held(MAIN)
    pair = [mine, parents] if order == "own-first" else [parents, mine]
    assert judge(SUB, *pair).own is mine


@pytest.mark.parametrize(("me", "holder"), [(MAIN, SUB), (SUB2, SUB), (BOB, MAIN), (BOB, SUB),
                                            (MAIN, BOB), (SUB, BOB), (Writer(None, "c1"), MAIN)])  # fmt: skip
def test_a_subagents_lease_blocks_its_parent_and_siblings_and_others_block(
    me: Writer, holder: Writer
) -> None:
    found = judge(me, held(holder))
    assert writers(found.blockers) == [holder.key] and found.own is None


def test_every_blocker_is_reported() -> None:
    found = judge(MAIN, held(SUB), held(BOB), held(SUB2))
    assert writers(found.blockers) == [SUB.key, BOB.key, SUB2.key]


def test_a_lease_in_another_worktree_never_blocks() -> None:
    """Another worktree holds another copy of the file: told, not refused."""
    theirs, mine = held(BOB, OTHER_WT), held(MAIN, OTHER_WT)
    found = judge(MAIN, theirs, mine)
    assert found.blockers == [] and found.own is None
    assert found.elsewhere == [theirs, mine]


@pytest.mark.parametrize("expires", [NOW, NOW - 1, None, "9999999999", True])
def test_an_expired_lease_is_ignored(expires: Any) -> None:
    found = judge(MAIN, held(BOB, expires=expires), held(BOB, OTHER_WT, expires=expires))
    assert found.blockers == [] and found.elsewhere == [] and found.own is None


def test_a_dead_holders_lease_is_ignored_one_that_cannot_be_judged_counts() -> None:
    assert judge(MAIN, held(BOB, pid=2)).blockers == []
    assert judge(MAIN, held(BOB, OTHER_WT, pid=2)).elsewhere == []
    assert writers(judge(MAIN, held(BOB, pid=3)).blockers) == [BOB.key]
    assert lease.counts(held(BOB, pid=3), NOW, alive)
    assert not lease.counts(held(BOB, pid=3), NOW + 600, alive)


def test_entries_that_are_not_leases_are_ignored() -> None:
    found = lease.judge(["x", None, [1], held(BOB)], MAIN, WT, NOW, alive)  # type: ignore[list-item]
    assert writers(found.blockers) == [BOB.key]


# --- fresh ------------------------------------------------------------------------------


def test_fresh_is_ones_own_lease_written_within_resolution() -> None:
    mine = lease.new(MAIN, {}, WT, "main", NOW, 10, source="edit")
    assert mine["expires"] == NOW + 600 and mine["claimed"] == mine["written"] == NOW
    assert lease.fresh(mine, MAIN, NOW, 10)
    assert lease.fresh(mine, MAIN, NOW + lease.RESOLUTION - 1, 10)
    assert not lease.fresh(mine, MAIN, NOW + lease.RESOLUTION, 10)  # renew: write it again
    assert not lease.fresh(mine, MAIN, NOW, 5)  # the lease minutes changed
    assert not lease.fresh(mine, SUB, NOW, 10)  # the parent's, not mine: take it over
    assert not lease.fresh({**mine, "written": None}, MAIN, NOW, 10)
    assert not lease.fresh({**mine, "expires": str(NOW + 600)}, MAIN, NOW, 10)
    assert not lease.fresh({**mine, "expires": NOW + 601}, MAIN, NOW, 10)
    written_late = {**mine, "written": NOW + 0.5}  # a float time: expires counts from its second
    assert lease.fresh(written_late, MAIN, NOW + lease.RESOLUTION, 10)
    assert not lease.fresh(written_late, MAIN, NOW + lease.RESOLUTION + 0.5, 10)


def test_a_lease_counts_until_the_second_it_expires_unless_its_holder_is_dead() -> None:
    """`expires` is the first moment it no longer counts; a holder that cannot be
    judged (`alive` → None) counts, only one known dead (False) does not."""
    assert lease.counts({"expires": NOW + 0.5}, NOW, lambda _: None)
    assert not lease.counts({"expires": NOW}, NOW, lambda _: None)
    assert lease.counts({"expires": NOW + 1}, NOW, lambda _: True)
    assert not lease.counts({"expires": NOW + 1}, NOW, lambda _: False)
    assert not lease.counts({}, NOW, lambda _: True)


@pytest.mark.parametrize("holder", [MAIN, SUB])
def test_the_same_agent_in_another_conversation_blocks_like_another_agent(holder: Writer) -> None:
    """One AGENT_NAME in two panes: the other conversation's lease blocks, whether it
    is that conversation's own or a subagent's — never taken over as one's own."""
    twin = held(holder)
    me = Writer("alice", "c9", holder.agent_id)  # the same writer key, another conversation
    assert me.key == twin["writer"]
    found = judge(me, twin)
    assert found.own is None and found.blockers == [twin]


@pytest.mark.parametrize(
    ("mine", "theirs"), [(None, "c1"), ("c9", None), ("c9", ""), ("c9", 7), ("c1", "c1")]
)
def test_a_conversation_unknown_on_either_side_is_not_another(mine: Any, theirs: Any) -> None:
    """Two conversations are told apart only when both are known: a lease without
    one (an older release's) stays the agent's own."""
    me = Writer("alice", mine)
    lease_ = {**held(MAIN), "writer": me.key, "conversation": theirs}
    assert judge(me, lease_).own is lease_


def test_a_new_lease_records_its_holder_worktree_and_times() -> None:
    me = Writer("alice", "c1", "s1", "Explore", "claude-code")
    holder = {"pid": 4242, "start": 99, "host": "box", "other": "dropped"}
    got = lease.new(me, holder, WT, "feat", NOW + 0.7, 7, source="bash", tool_use_id="tu-1")
    assert got == {
        "writer": "alice#s1", "agent": "alice", "conversation": "c1", "agent_id": "s1",
        "agent_type": "Explore", "client": "claude-code",
        "pid": 4242, "start": 99, "host": "box",
        "worktree": WT, "worktree_path": WT, "branch": "feat",
        "claimed": NOW, "written": NOW, "expires": NOW + 7 * 60,
        "tool_use_id": "tu-1", "source": "bash",
    }  # fmt: skip
    assert all(type(got[key]) is int for key in ("claimed", "written", "expires"))


def test_a_renewed_lease_keeps_its_claim_time_and_its_mark() -> None:
    got = lease.new(MAIN, {}, WT, None, NOW + 0.9, 10, source="edit", claimed=NOW - 299.5,
                    worktree_path="/mnt/repo", fingerprint="fp1")  # fmt: skip
    assert got["claimed"] == NOW - 300 and type(got["claimed"]) is int
    assert got["written"] == NOW and got["expires"] == NOW + 600
    assert got["worktree"] == WT and got["worktree_path"] == "/mnt/repo"
    assert (got["fp"], got["fp_at"]) == ("fp1", NOW) and type(got["fp_at"]) is int
    assert got["pid"] is got["start"] is got["host"] is got["tool_use_id"] is None
    assert "fp" not in lease.new(MAIN, {}, WT, None, NOW, 10, source="edit")


# --- file names ---------------------------------------------------------------------------

PATHS = ["src/app.py", "100%/done", "a~b/~c", ".github/workflows/ci.yml", "a/.env", "%2F",
         "%25", "%2E.x", "ünï/数据.py", "a b/c\td", "x" * 180]  # fmt: skip


@pytest.mark.parametrize("path", PATHS)
def test_file_name_round_trips(path: str) -> None:
    name = lease.file_name(path)
    assert "/" not in name and "~" not in name and not name.startswith(".")
    assert lease.name_prefix(name) == (path, True)


def test_escapes_are_the_documented_ones() -> None:
    assert lease.file_name("src/app.py") == "src%2Fapp.py"
    assert lease.file_name(".a/%~") == "%2Ea%2F%25%7E"
    assert lease.file_name("alice#s1") == "alice#s1"  # writer keys are file names too


def long_paths() -> list[str]:
    """Paths past the limit, cut at every position of an escape or a wide character."""
    out = []
    for pad in range(0, 6):
        lead = "x" * pad
        out += [lead + "d/" * 50, lead + "%" * 70, lead + "é" * 100, lead + "数/" * 60,
                lead + "~" * 61]  # fmt: skip
    return out


@pytest.mark.parametrize("path", long_paths(), ids=range(len(long_paths())))
def test_a_long_path_is_cut_with_a_hash_and_keeps_its_prefix(path: str) -> None:
    name = lease.file_name(path)
    assert len(name.encode()) <= lease.MAX_NAME_BYTES
    cut, hashed = name.split("~")
    assert len(hashed) == 16 and int(hashed, 16) >= 0
    assert "%" not in cut[-2:]  # never half an escape
    prefix, whole = lease.name_prefix(name)
    assert not whole and path.startswith(prefix) and len(prefix) >= 30
    assert lease.file_name(path + "z") != name  # same prefix, another file


# Names as the file system gives them: any text, bytes that are no UTF-8 among it.
NAMES = st.text(
    st.characters(exclude_categories=["Cs"])
    | st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF, categories=["Cs"]),
    min_size=1,
    max_size=300,
)


@given(NAMES)
def test_any_path_gives_a_safe_name_whose_prefix_is_the_paths(path: str) -> None:
    name = lease.file_name(path)
    assert "/" not in name and name.count("~") <= 1
    assert name not in (".", "..") and not name.startswith(".")
    assert len(name.encode("utf-8", "surrogateescape")) <= lease.MAX_NAME_BYTES
    prefix, whole = lease.name_prefix(name)
    assert (prefix == path) if whole else path.startswith(prefix)


def test_a_long_names_file_name_ends_with_its_fnv1a_hash() -> None:
    """The hash names a long path's lease file on disk, so it must never change
    (`posix_fs.name_hash`: tests/unit/test_posix_fs.py pins its vectors)."""
    long = "src/" + "d/" * 200 + "x.py"
    assert lease.file_name(long).endswith("~" + fs.name_hash(long))


def test_a_long_paths_file_name_is_its_first_120_bytes_escaped_then_its_hash() -> None:
    """A lease file's name must not change between releases (a holder's lease would
    no longer be found): the escaped path's first 120 bytes, less an escape the cut
    would halve, then `~` and the hash. A name that is not UTF-8 is cut as its bytes."""
    path = "x" * 300
    assert lease.file_name(path) == "x" * 120 + "~" + fs.name_hash(path)
    halved = "x" * 119 + "/" + "y" * 100  # its `%2F` would be cut after the `%`
    assert lease.file_name(halved) == "x" * 119 + "~" + fs.name_hash(halved)
    wide = "x" * 119 + "é" * 50  # a two-byte character would be cut in half
    assert lease.file_name(wide) == "x" * 119 + "~" + fs.name_hash(wide)
    odd = "x" * 100 + "\udcff" + "z" * 100  # a byte that is no UTF-8 (surrogateescape)
    assert lease.file_name(odd) == "x" * 100 + "\udcff" + "z" * 19 + "~" + fs.name_hash(odd)
    assert lease.name_prefix(lease.file_name(odd)) == ("x" * 100 + "\udcff" + "z" * 19, False)
    stray = "\udc80" * 200  # bytes that continue no character: cut at most 3 short
    assert lease.file_name(stray) == "\udc80" * 117 + "~" + fs.name_hash(stray)
    for after, kept in (("\x7f", 120), ("\udcbf", 119), ("\udcc0", 120)):  # 0x80-0xBF continue
        path = "x" * 120 + after + "y" * 100
        assert lease.file_name(path) == "x" * kept + "~" + fs.name_hash(path), after
