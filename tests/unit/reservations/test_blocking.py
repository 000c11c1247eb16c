"""reservations.blocking over an index built in memory: which reservations stand in a
writer's way (the rules of its module docstring). The hooks that ask are tested in
tests/hooks/test_pre_tool_use_reservations.py and tests/hooks/test_reservation_holders.py;
these pin each rule where it is decided (mutmut found them unpinned)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import liveness
from agent_hooks.leases import writer_cards
from agent_hooks.ledger import remote_view
from agent_hooks.reservations import blocking, index_records, pattern
from agent_hooks.reservations.index_records import HotIndex
from pids import dead_pid

NOW = 1_800_000_000.0
ME = "alice"


def record(
    owner: str, text: str, *, exclusive: bool = True, expires: float = NOW + 600
) -> tuple[Any, ...]:
    fields: list[Any] = [None] * 13
    fields[index_records.OWNER] = owner
    fields[index_records.EXCLUSIVE] = exclusive
    fields[index_records.EXPIRES] = expires
    fields[index_records.COMPILED] = pattern.compile(text)
    fields[index_records.PATTERN] = text
    fields[index_records.RID] = f"{owner}:{text}"
    return tuple(fields)


def index(*records: tuple[Any, ...]) -> HotIndex:
    """Records grouped as the cache groups them: by a pattern's leading literal directory."""
    groups: dict[str, list[tuple[Any, ...]] | bytes] = {}
    for rec in records:
        first = pattern.first_literal(rec[index_records.COMPILED])
        groups.setdefault(first or index_records.GLOB_GROUP, []).append(rec)  # type: ignore[union-attr]
    return HotIndex(groups, {}, {})


def ids(found: list[tuple[Any, ...]]) -> list[str]:
    return [rec[index_records.RID] for rec in found]


@pytest.mark.parametrize(
    ("rec", "blocks"),
    [
        (record("bob", "src/**"), True),
        (record(ME, "src/**"), False),  # never one's own
        (record("bob", "src/**", exclusive=False), False),  # shared never blocks
        (record("bob", "src/**", expires=NOW), False),  # expired at its very second
        (record("bob", "src/**", expires=NOW + 1), True),
        (record("bob", "src/auth/**"), False),  # elsewhere in the same directory
        (record("bob", "*/app.py"), True),  # a pattern without a leading directory
    ],
)
def test_only_another_owners_live_exclusive_reservation_covering_the_file_blocks(
    rec: tuple[Any, ...], blocks: bool
) -> None:
    hot = index(rec)
    assert bool(blocking.blocking_edit(hot, "src/app.py", ME, NOW)) is blocks
    assert bool(blocking.edit_blockers(hot, ME, NOW)("src/app.py")) is blocks


def test_a_reservation_that_does_not_block_hides_none_after_it() -> None:
    hot = index(
        record(ME, "src/**"),
        record("carol", "src/**", exclusive=False),
        record("dave", "src/**", expires=NOW - 1),
        record("bob", "src/**"),
        record("erin", "src/**"),
    )
    assert ids(blocking.blocking_edit(hot, "src/app.py", ME, NOW)) == ["bob:src/**", "erin:src/**"]
    assert ids(blocking.edit_blockers(hot, ME, NOW)("src/app.py")) == [
        "bob:src/**",
        "erin:src/**",
    ]


@pytest.mark.parametrize(
    ("target", "held", "blocks"),
    [
        ("src/", "src/auth/**", True),  # `rm -rf src/`: a directory holding a reserved one
        ("src/auth/", "src/**", True),
        ("src/", "docs/**", False),
        ("src/*.py", "src/auth/**", False),  # a glob: only what both can match
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "*/app.py", True),
    ],
)
def test_a_directory_or_glob_blocks_where_it_overlaps_a_reservation(
    target: str, held: str, blocks: bool
) -> None:
    """What a shell command names as a directory or a glob (the shell gate's question):
    blocked where some path could be in both."""
    compiled = pattern.compile(target)
    first = pattern.first_literal(compiled)
    hot = index(record("bob", held), record(ME, target))
    found = blocking.blocking(hot, compiled, first, ME, NOW, None, None)
    assert ids(found) == (["bob:" + held] if blocks else [])


def test_a_holder_that_no_longer_counts_blocks_nothing_and_is_asked_only_on_a_match() -> None:
    asked: list[str] = []

    def counts(rec: tuple[Any, ...]) -> bool:
        asked.append(rec[index_records.RID])
        return rec[index_records.OWNER] == "bob"

    hot = index(record("bob", "src/**"), record("gone", "src/**"), record("x", "src/auth/**"))
    assert ids(blocking.blocking_edit(hot, "src/app.py", ME, NOW, counts)) == ["bob:src/**"]
    assert asked == ["bob:src/**", "gone:src/**"]
    asked.clear()
    assert ids(blocking.edit_blockers(hot, ME, NOW, counts)("src/app.py")) == ["bob:src/**"]
    assert asked == ["bob:src/**", "gone:src/**"]


class CountingIndex(HotIndex):
    """A HotIndex that counts the groups it was asked for."""

    def candidates(self, first_segment: str | None) -> list[tuple[Any, ...]]:
        self.asked.append(first_segment)
        return super().candidates(first_segment)


def test_edit_blockers_sorts_each_leading_directory_out_once() -> None:
    plain = index(record("bob", "src/**"), record("bob", "docs/*.md"))
    hot = CountingIndex(plain.groups, {}, {})
    hot.asked = []
    blockers = blocking.edit_blockers(hot, ME, NOW)
    assert ids(blockers("src/a.py")) == ids(blockers("src/b/c.py")) == ["bob:src/**"]
    assert ids(blockers("docs/x.md")) == ["bob:docs/*.md"] and blockers("docs/x.txt") == []
    assert blockers("README.md") == []
    assert hot.asked == ["src", "docs", "README.md"]


def test_edit_blockers_match_only_reservations_whose_literal_second_segment_is_the_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Agents reserving side by side under one directory: a file is matched against the
    reservations that may hold it (a glob or the same second segment), not all of them."""
    hot = index(
        record("bob", "src/auth/**"),
        record("bob", "src/ui/**"),
        record("bob", "src/*/x.py"),
        record("bob", "src/main.py"),
    )
    asked: list[str] = []
    real = pattern.matches

    def counted(compiled: list[Any], rel: str) -> bool:
        asked.append("/".join(str(seg) for seg in compiled[1:]))
        return real(compiled, rel)

    monkeypatch.setattr(pattern, "matches", counted)
    blockers = blocking.edit_blockers(hot, ME, NOW)
    assert ids(blockers("src/ui/x.py")) == ["bob:src/ui/**", "bob:src/*/x.py"]
    assert len(asked) == 2  # src/auth/** and src/main.py ruled out unasked
    asked.clear()
    assert blockers("src/db/y.py") == [] and len(asked) == 1  # only the glob
    asked.clear()
    assert blockers("src") == [] and len(asked) == 1  # one segment: two-segment ones cannot
    asked.clear()  # one file on its own (PreToolUse): the same shortcut
    found = blocking.blocking_edit(hot, "src/ui/x.py", ME, NOW)
    assert ids(found) == ["bob:src/ui/**", "bob:src/*/x.py"] and len(asked) == 2


@pytest.mark.parametrize(
    ("rec", "owned", "owned_deeper"),
    [
        (record(ME, "src/**"), True, True),
        (record(ME, "src/**", exclusive=False), True, True),  # any mode
        (record(ME, "src/**", expires=NOW), False, False),
        (record(ME, "src/auth/**"), False, True),
        (record("bob", "src/**"), False, False),
    ],
)
def test_strict_mode_owns_a_file_under_a_live_reservation_of_its_own(
    rec: tuple[Any, ...], owned: bool, owned_deeper: bool
) -> None:
    """`src/app.py` and `src/auth/app.py` (a reservation is found by its leading directory)."""
    assert blocking.owns(index(rec), "src/app.py", ME, NOW) is owned
    assert blocking.owns(index(rec), "src/auth/app.py", ME, NOW) is owned_deeper
    assert blocking.owns(index(record("bob", "src/**"), rec), "src/app.py", ME, NOW) is owned
    assert blocking.owns(None, "src/app.py", ME, NOW) is False


def held_by(
    holder: dict[str, Any] | None, *, keep: bool = False, machine: str | None = None
) -> Any:
    fields = list(record("bob", "src/**"))
    fields[index_records.HOLDER] = holder
    fields[index_records.KEEP] = keep
    fields[index_records.MACHINE] = machine
    return tuple(fields)


def test_a_holder_counts_while_its_process_lives_here_or_with_keep_or_without_one(
    tmp_path: Path,
) -> None:
    counts = blocking.holder_counts(str(tmp_path), 10, NOW)
    dead = liveness.process(dead_pid())
    assert counts(held_by(liveness.process(os.getpid()))) is True
    assert counts(held_by(dead)) is False
    assert counts(held_by(dead, keep=True)) is True  # --keep: until it expires
    assert counts(held_by(None)) is True  # made outside any client: by time alone
    assert counts(held_by({"pid": None, "host": liveness.host()})) is True


def test_a_holder_on_another_host_counts_while_heard_from_within_the_lease_minutes(
    tmp_path: Path,
) -> None:
    """Judged by its writer card's mtime (`writer_cards.heard_from`), over a window of
    the lease minutes passed in."""
    rec = held_by({"pid": 4242, "start": 1, "host": "another-host"})
    card = Path(writer_cards.writer_path(str(tmp_path), "bob"))
    assert blocking.holder_counts(str(tmp_path), 10, NOW)(rec) is False  # never heard from
    card.parent.mkdir(parents=True)
    card.write_text("{}")
    window = writer_cards.heartbeat_window(30)
    assert window > writer_cards.heartbeat_window(10)
    os.utime(card, (NOW, NOW - window + 5))
    assert blocking.holder_counts(str(tmp_path), 30, NOW)(rec) is True
    assert blocking.holder_counts(str(tmp_path), 10, NOW)(rec) is False


def test_a_holder_on_another_machine_counts_while_the_last_sync_heard_from_it(
    tmp_path: Path,
) -> None:
    """A reservation made on another machine sharing the ledger: only that machine can
    judge its process; here it counts while the last sync heard from that machine
    (`remote_view.holds`), and before any sync until it expires."""
    rec = held_by({"pid": os.getpid(), "start": 1, "host": liveness.host()}, machine="m2")
    assert blocking.holder_counts(str(tmp_path), 10, NOW)(rec) is True  # no sync yet
    header = {"hosts": {"m2": (NOW - 60, 10), "m3": (NOW - 3600, 10)}, "synced_at": NOW}
    (tmp_path / remote_view.VIEW).write_bytes(remote_view.encode(header, {}))
    assert blocking.holder_counts(str(tmp_path), 10, NOW)(rec) is True
    assert blocking.holder_counts(str(tmp_path), 10, NOW + 600)(rec) is False
    silent = held_by({"pid": os.getpid(), "start": 1, "host": liveness.host()}, machine="m3")
    assert (
        blocking.holder_counts(str(tmp_path), 10, NOW)(silent) is False
    )  # its process lives here: not asked
