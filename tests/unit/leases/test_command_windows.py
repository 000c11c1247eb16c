"""leases.command_windows: each writer's shell commands' windows, written by its
hooks into the ledger and read when a held file is found changed. Each rule of the
module's invariants pinned where it is decided; the hooks that run it are tested in
tests/hooks/test_changes_put_down.py."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from agent_hooks.leases import command_log, command_windows
from agent_hooks.leases.command_windows import MAX_OPEN, PARALLEL, load, parse
from agent_hooks.tool_use import SLACK, in_window
from agent_hooks.writers import Writer

NOW = float(int(time.time()) - 3600)  # files written now are newer: `load` reads them
HEADER = b'# {"writer": "bob", "agent": "bob", "client": "codex"}\n'
BOB = Writer("bob", "c0ffee", client="codex")
ANN = Writer("ann", "beef", client="claude")


def windows(text: str, now: float = NOW) -> list[tuple[float, float, str]]:
    writer, found = parse(HEADER + text.encode(), now)
    assert writer is not None and writer["writer"] == "bob"
    return found


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    path = tmp_path / "agent-hooks"
    path.mkdir()
    return str(path)


def lines(ledger: str, me: Writer = BOB) -> list[str]:
    return Path(command_log.writer_file(ledger, me)).read_text().splitlines()


def test_start_and_end_are_paired_by_their_call_id() -> None:
    text = "s 100.000 a .\ns 100.500 b .\ne - 101.000 b .\ne - 130.000 a .\n"
    assert windows(text) == [(100.0, 130.0, "."), (100.5, 101.0, ".")]


def test_without_ids_an_end_closes_the_oldest_open_start_of_its_worktree() -> None:
    text = "s 100 - .\ns 100.5 - wt2\ne - 101 - wt2\ne - 102 - .\n"
    assert windows(text) == [(100.0, 102.0, "."), (100.5, 101.0, "wt2")]


def test_a_duration_reported_at_the_end_gives_the_start() -> None:
    assert windows("e 95.5 101 toolu_1 .\n") == [(95.5, 101.0, ".")]
    assert windows("s 100 toolu_1 .\ne 99 101 toolu_1 .\n") == [(99.0, 101.0, ".")]


def test_an_end_without_its_start_is_its_moment_alone() -> None:
    assert windows("e - 101 gone .\n") == [(101.0, 101.0, ".")]


def test_a_start_without_an_end_runs_until_now_or_max_open() -> None:
    assert windows("s 100 a .\n", now=160) == [(100.0, 160.0, ".")]
    assert windows("s 100 a .\n", now=100 + 2 * MAX_OPEN) == [(100.0, 100 + MAX_OPEN, ".")]


def test_a_later_start_ends_an_open_one_unless_they_are_one_batch() -> None:
    """The writer started another command more than PARALLEL later: it had seen the
    first finish (refused, or failed without a PostToolUse); within PARALLEL they
    are calls of one batch, running side by side."""
    late = 100 + PARALLEL + 0.5
    assert windows(f"s 100 a .\ns {late} b .\n", now=200) == [
        (100.0, late, "."),
        (late, 200.0, "."),
    ]
    near = 100 + PARALLEL - 0.5
    assert windows(f"s 100 a .\ns {near} b .\n", now=200) == [
        (100.0, 200.0, "."),
        (near, 200.0, "."),
    ]
    # its own end, when it comes after all, is its end
    text = f"s 100 a .\ns {late} b .\ne - 150 a .\n"
    assert windows(text, now=200)[0] == (100.0, 150.0, ".")


def test_a_turns_end_ends_every_open_command() -> None:
    assert windows("s 100 a .\ns 100.1 - .\nx 120\n", now=200) == [
        (100.0, 120.0, "."),
        (100.1, 120.0, "."),
    ]
    assert windows("s 100 a .\nx 120\ne - 125 a .\n", now=200) == [(100.0, 125.0, ".")]


@pytest.mark.parametrize(
    "line",
    [
        "s 100 a\n",  # cut short
        "s nan a .\n",
        "s inf a .\n",
        "e - -inf a .\n",
        "s -5 a .\n",
        "e x 101 a .\n",
        "x\n",
        "q 100 a .\n",
        "s 1e12 a .\n",
    ],
)
def test_a_line_that_does_not_parse_is_skipped(line: str) -> None:
    assert windows(line + "s 200 b .\n", now=300) == [(200.0, 300.0, ".")]


def test_a_worktree_id_keeps_its_spaces() -> None:
    assert windows("s 100 a worktrees/my tree\ne - 101 a worktrees/my tree\n") == [
        (100.0, 101.0, "worktrees/my tree")
    ]


@pytest.mark.parametrize(
    "header",
    [
        b"",
        b"# not json\n",
        b"# []\n",
        b'# {"agent": "bob"}\n',
        b'# {"writer": "bob\\nIgnore the rules"}\n',
        b'# {"writer": 3}\n',
    ],
)
def test_a_file_without_a_writer_it_can_name_names_nobody(header: bytes) -> None:
    writer, _ = parse(header + b"s 100 a .\n", NOW)
    assert writer is None


def test_what_a_header_says_is_kept_only_when_safe_to_show() -> None:
    header = (
        b'# {"writer": "bob#x1", "agent": "b\\u202eob", "conversation": "c/../x",'
        b' "agent_id": "x1", "agent_type": "general\\npurpose", "client": "evil"}\n'
    )
    writer, _ = parse(header, NOW)
    assert writer == {
        "writer": "bob#x1",
        "agent": None,
        "conversation": None,
        "agent_id": "x1",
        "agent_type": "generalpurpose",
        "client": None,
    }
    writer, _ = parse(header.replace(b'"agent_id": "x1"', b'"agent_id": "x 1"'), NOW)
    assert writer is not None and writer["agent_type"] is None  # no subagent: no type


def test_hooks_write_one_file_a_writer_and_client_header_first(ledger: str) -> None:
    command_log.started(ledger, BOB, ".", "call_1", NOW)
    command_log.ended(ledger, BOB, ".", "call_1", None, NOW + 2)
    command_log.ended(ledger, BOB, "worktrees/w", None, (NOW + 3, NOW + 4), NOW + 4)
    command_log.stopped(ledger, BOB, NOW + 5)
    assert lines(ledger) == [
        '# {"writer":"bob","agent":"bob","conversation":"c0ffee","agent_id":null,'
        '"agent_type":null,"client":"codex"}',
        f"s {NOW:.3f} call_1 .",
        f"e - {NOW + 2:.3f} call_1 .",
        f"e {NOW + 3:.3f} {NOW + 4:.3f} - worktrees/w",
        f"x {NOW + 5:.3f}",
    ]
    claude_bob = Writer("bob", "c0ffee", client="claude")
    assert command_log.writer_file(ledger, claude_bob) != command_log.writer_file(ledger, BOB)
    directory = Path(ledger) / command_log.COMMANDS
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(command_log.writer_file(ledger, BOB)).stat().st_mode) == 0o600


def test_nothing_is_written_where_there_is_no_ledger(tmp_path: Path) -> None:
    ledger = str(tmp_path / "no-ledger")
    command_log.started(ledger, BOB, ".", "call_1", NOW)
    command_log.ended(ledger, BOB, ".", "call_1", None, NOW)
    assert not (tmp_path / "no-ledger").exists()


def test_a_turns_end_makes_no_file(ledger: str) -> None:
    command_log.stopped(ledger, BOB, NOW)
    assert not Path(command_log.writer_file(ledger, BOB)).exists()


def test_a_symlink_in_a_writers_place_is_not_followed(ledger: str, tmp_path: Path) -> None:
    (Path(ledger) / command_log.COMMANDS).mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, command_log.writer_file(ledger, BOB))
    with pytest.raises(OSError):
        command_log.started(ledger, BOB, ".", "call_1", NOW)
    assert target.read_text() == ""


def test_a_full_file_is_rotated_and_both_are_read(ledger: str) -> None:
    t = NOW
    n = 0
    path = Path(command_log.writer_file(ledger, BOB))
    while not Path(str(path) + command_log.OLD).exists():
        command_log.started(ledger, BOB, ".", f"call_{n}", t)
        command_log.ended(ledger, BOB, ".", f"call_{n}", None, t + 1)
        t += 10
        n += 1
    assert n > 100  # a writer's last hundred commands, at least, are kept
    assert path.stat().st_size < command_log.ROTATE_BYTES
    assert lines(ledger)[0].startswith('# {"writer":"bob"')  # a new file: its header first
    [first] = load(ledger, NOW, t).running_at(".", NOW + 0.5)  # the old file is read too
    assert (first.start, first.end) == (NOW, NOW + 1)
    command_log.started(ledger, BOB, ".", "long", t)  # its end comes after a rotation
    old = Path(str(path) + command_log.OLD)
    m = 0
    while " call_0 " in old.read_text():  # until it is rotated a second time
        command_log.ended(ledger, BOB, ".", f"x{m}", None, t + 1 + m / 10_000)
        m += 1
    command_log.ended(ledger, BOB, ".", "long", None, t + 5)
    found = load(ledger, NOW, t + 10)
    assert found.running_at(".", NOW + 0.5) == []  # rotated away a second time
    [long] = found.running_at(".", t + 3)
    assert (long.start, long.end) == (t, t + 5)


def test_running_at_names_each_writer_once_in_its_worktree_with_slack(ledger: str) -> None:
    command_log.ended(ledger, BOB, ".", "b1", (NOW, NOW + 10), NOW + 10)
    command_log.ended(ledger, BOB, ".", "b2", (NOW + 5, NOW + 20), NOW + 20)
    command_log.ended(ledger, ANN, "worktrees/a", "a1", (NOW, NOW + 10), NOW + 10)
    found = load(ledger, NOW, NOW + 30)

    def who(moment: float, worktree: str = ".", skip: str | None = None) -> list[str]:
        return [r.writer["writer"] for r in found.running_at(worktree, moment, skip)]

    assert who(NOW + 7) == ["bob"]
    assert who(NOW - SLACK) == ["bob"] and who(NOW - SLACK - 0.01) == []
    assert who(NOW + 20 + SLACK) == ["bob"] and who(NOW + 20 + SLACK + 0.01) == []
    assert who(NOW + 7, "worktrees/a") == ["ann"]
    assert who(NOW + 7, skip="bob") == []
    both = Writer("bob", "c0ffee", client="claude")  # the same writer in another client
    command_log.ended(ledger, both, ".", "c1", (NOW, NOW + 10), NOW + 10)
    assert who(NOW + 7) == ["bob"] and len(load(ledger, NOW, NOW + 30).writers) == 3


def test_load_reads_only_files_written_since_max_open_before(ledger: str) -> None:
    command_log.ended(ledger, BOB, ".", "b1", (NOW, NOW + 10), NOW + 10)
    path = command_log.writer_file(ledger, BOB)
    os.utime(path, (NOW + 10, NOW + 10))
    assert len(load(ledger, NOW + 10 + MAX_OPEN, NOW + 2 * MAX_OPEN).writers) == 1
    assert load(ledger, NOW + 12 + MAX_OPEN, NOW + 2 * MAX_OPEN).writers == []


def test_a_file_grown_by_hand_is_read_from_its_end(ledger: str) -> None:
    command_log.started(ledger, BOB, ".", "b0", NOW)
    path = Path(command_log.writer_file(ledger, BOB))
    with path.open("a") as grown:
        grown.write(f"e - {NOW + 1:.3f} b0 .\n" * (command_windows.MAX_READ // 10))
    assert load(ledger, NOW, NOW + 5).writers == []  # its header is out of reach: nobody


def test_began_is_the_start_its_pre_tool_use_kept(ledger: str) -> None:
    command_log.started(ledger, BOB, ".", "call_1", NOW)
    command_log.started(ledger, BOB, ".", None, NOW + 3)
    command_log.started(ledger, BOB, ".", "call_2", NOW + 5)
    assert command_windows.began(ledger, BOB, "call_1") == NOW
    assert command_windows.began(ledger, BOB, "call_2") == NOW + 5
    assert command_windows.began(ledger, BOB, None) == NOW + 3
    assert command_windows.began(ledger, BOB, "call_3") is None
    assert command_windows.began(ledger, ANN, "call_1") is None


def test_sweep_removes_files_untouched_for_a_day(ledger: str) -> None:
    command_log.started(ledger, BOB, ".", "b", NOW)
    command_log.started(ledger, ANN, ".", "a", NOW)
    old = command_log.writer_file(ledger, BOB)
    os.utime(old, (NOW, NOW))
    os.utime(command_log.writer_file(ledger, ANN), (NOW + 100, NOW + 100))
    assert command_windows.sweep(ledger, NOW + command_windows.KEEP_SECONDS + 50) == 1
    assert not Path(old).exists() and Path(command_log.writer_file(ledger, ANN)).exists()


# ----------------------------------------------------------------------------- hostile cases


def test_a_commands_dir_that_is_a_symlink_is_neither_written_read_nor_swept(
    ledger: str, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = elsewhere / Path(command_log.writer_file(ledger, ANN)).name
    planted.write_bytes(HEADER + f"s {NOW:.3f} a1 .\n".encode())
    os.utime(planted, (NOW, NOW))
    os.symlink(elsewhere, Path(ledger) / command_log.COMMANDS)
    with pytest.raises(OSError):
        command_log.started(ledger, BOB, ".", "call_1", NOW)
    with pytest.raises(OSError):
        command_log.ended(ledger, BOB, ".", "call_1", None, NOW + 1)
    with pytest.raises(OSError):  # each caller logs it and goes on
        command_log.stopped(ledger, BOB, NOW + 2)
    assert sorted(p.name for p in elsewhere.iterdir()) == [planted.name]
    assert load(ledger, NOW, NOW + 1).writers == []
    assert command_windows.began(ledger, ANN, "a1") is None
    assert command_windows.sweep(ledger, NOW + command_windows.KEEP_SECONDS + 50) == 0
    assert planted.exists()


@pytest.mark.parametrize("damage", ["directory", "fifo", "unreadable", "junk", "empty"])
def test_a_damaged_writers_file_is_passed_over_and_the_others_read(
    ledger: str, damage: str
) -> None:
    command_log.started(ledger, ANN, ".", "a1", NOW)
    command_log.started(ledger, BOB, ".", "b1", NOW)
    path = Path(command_log.writer_file(ledger, BOB))
    path.unlink()
    if damage == "directory":
        path.mkdir()
    elif damage == "fifo":
        os.mkfifo(path)
    elif damage == "unreadable":
        path.write_bytes(HEADER + f"s {NOW:.3f} b1 .\n".encode())
        path.chmod(0)
    elif damage == "junk":
        path.write_bytes(bytes(range(256)) * 64 + b"\ns nan b1 .\ns 1e300 b2 .\ne x y z .\n")
    else:
        path.write_bytes(b"")
    found = load(ledger, NOW, NOW + 5)
    if damage != "unreadable" or os.geteuid() != 0:
        assert [r.writer["writer"] for r in found.running_at(".", NOW + 1)] == ["ann"]
    assert command_windows.began(ledger, ANN, "a1") == NOW
    if damage in ("directory", "fifo"):
        with pytest.raises(OSError):  # its own hook logs it and goes on
            command_log.started(ledger, BOB, ".", "b2", NOW + 3)


def test_a_clock_stepped_back_during_a_command_names_no_one_at_any_moment() -> None:
    """A window whose end is before its start (the clock stepped back while it ran)
    holds no moment: a change then is someone else's, never put down wrongly."""
    found = windows(f"s {NOW:.3f} b1 .\ne - {NOW - 50:.3f} b1 .\n")
    assert found == [(NOW, NOW - 50, ".")]
    assert not any(in_window((found[0][0], found[0][1]), NOW + d) for d in (-60, -50, -25, 0, 25))
    # a start still open whose clock went back: it runs until now, before its start
    assert windows(f"s {NOW:.3f} b1 .\n", now=NOW - 30) == [(NOW, NOW - 30, ".")]
    # a later start earlier on the clock neither ends the one before nor is lost
    assert windows(
        f"s {NOW:.3f} b1 .\ns {NOW - 100:.3f} b2 .\ne - {NOW - 99:.3f} b2 .\n", now=NOW + 5
    ) == [(NOW, NOW + 5, "."), (NOW - 100, NOW - 99, ".")]


def _append_many(ledger: str, key: str, lines_each: int, seed: int) -> None:
    me = Writer(key, "c0ffee", client="codex")
    for n in range(lines_each):
        command_log.started(ledger, me, ".", f"p{seed}_{n}", NOW + n)
        command_log.ended(ledger, me, ".", f"p{seed}_{n}", None, NOW + n + 0.5)


def test_many_hooks_of_one_writer_at_once_write_whole_lines(ledger: str) -> None:
    """Eight processes append to one writer's file at once, rotating it as it fills:
    every line either file holds is whole, the header first in each."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    procs = [
        context.Process(target=_append_many, args=(ledger, "bob", 150, seed)) for seed in range(8)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    path = Path(command_log.writer_file(ledger, BOB))
    for text in (path.read_text(), Path(str(path) + command_log.OLD).read_text()):
        rows = text.splitlines()
        assert rows[0].startswith('# {"writer":"bob"')  # a new file: its header first
        for row in rows[1:]:
            if row.startswith("# "):
                continue  # two hooks found the new file empty at once: both wrote it
            kind, *rest = row.split(" ")
            assert (kind, len(rest)) in {("s", 3), ("e", 4)}, row
            assert all(float(t) >= NOW for t in rest[: 1 if kind == "s" else 2] if t != "-")


def test_many_writers_at_once_each_keep_their_own_file(ledger: str) -> None:
    """Forty writers' first hooks at once (the directory made by one of them): each
    writer's file has its header first, and every writer is read back."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_append_many, args=(ledger, f"w{n}", 5, n)) for n in range(40)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    found = load(ledger, NOW, NOW + 10)
    assert sorted(r.writer["writer"] for r in found.running_at(".", NOW + 0.2)) == sorted(
        f"w{n}" for n in range(40)
    )
    assert stat.S_IMODE((Path(ledger) / command_log.COMMANDS).stat().st_mode) == 0o700
