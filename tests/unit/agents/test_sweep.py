"""sweep: old agents' files go; nothing else in the state directory is ever touched."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_hooks import identity, storage
from agent_hooks.agents import sweep, trail_archive, trail_spill

NOW = 1_800_000_000.0
DAY = 86400
OLD = NOW - 8 * DAY
SRC = str(Path(storage.__file__).resolve().parents[1])


def make(directory: Path, name: str, mtime: float, content: str = "{}") -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def sdir(tmp_path: Path) -> Path:
    path = tmp_path / ".claude"
    path.mkdir()
    return path


def names(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def test_old_state_files_and_their_lock_and_corrupt_files_go(sdir: Path) -> None:
    gone = [
        make(sdir, "state-old__cc_1.json", OLD),
        make(sdir, "state-old__cc_1.json.lock", OLD),
        make(sdir, "state-old__cc_1.json.corrupt-20260101T000000Z", OLD),
        make(sdir, "agent-state.json", OLD),
        make(sdir, "agent-state.json.lock", NOW),
        make(sdir, "state-old2.json", NOW - 7 * DAY - 60),
    ]
    sweep.sweep(str(sdir), NOW)
    assert names(sdir) == set()
    assert not any(p.exists() for p in gone)


def test_the_sweep_reports_every_file_it_removed(sdir: Path) -> None:
    gone = [
        make(sdir, "state-old.json", OLD),
        make(sdir, "state-old.json.lock", OLD),
        make(sdir, "state-old.json.corrupt-20260101T000000Z", OLD),
    ]
    listed = sweep.sweep(str(sdir), NOW, dry_run=True)
    removed = sweep.sweep(str(sdir), NOW)
    assert names(sdir) == set()
    assert sorted(removed) == sorted(str(p) for p in gone)
    assert sorted(listed) == sorted(removed)


def test_the_corrupt_copies_of_an_agent_whose_name_says_corrupt_go_too(sdir: Path) -> None:
    """`x.corrupt-y` is a valid AGENT_NAME: its copies are cut at the last `.corrupt-`."""
    assert identity.agent_from_state_file(str(sdir), "state-x.corrupt-y.json") is not None
    copy = make(sdir, "state-x.corrupt-y.json.corrupt-20260101T000000Z", OLD)
    assert sweep.sweep(str(sdir), NOW) == [str(copy)]
    assert not copy.exists()


def test_fresh_own_and_unrelated_files_are_never_touched(sdir: Path) -> None:
    kept = [
        make(sdir, "state-fresh.json", NOW - 6 * DAY),
        make(sdir, "state-fresh.json.lock", OLD),
        make(sdir, "state-me.json", OLD),
        make(sdir, "state-me.json.lock", OLD),
        make(sdir, "settings.json", OLD),
        make(sdir, "settings.local.json", OLD),
        make(sdir, "state-x.json.bak", OLD),
        make(sdir, "state-x.json.lock.bak", OLD),
        make(sdir, "state-.json", OLD),
        make(sdir, "state-a..b.json", OLD),
        make(sdir, "statsig.cache.json", OLD),
        make(sdir, "other-tool-state.json", OLD),
        make(sdir, "agent-state.json.orig", OLD),
        make(sdir, "state-x.jsonx", OLD),
        make(sdir, ".credentials.json", OLD),
        make(sdir, "agent-hooks.log", OLD),
        make(sdir, "projects/-home-dev-p/abc.jsonl", OLD),
        make(sdir, "projects/state-inner.json", OLD),
        make(sdir, "todos/state-x.json", OLD),
        make(sdir, "state-fresh.json.corrupt-20260101T000000Z", NOW - DAY),
        make(sdir, "settings.json.corrupt-20260101T000000Z", OLD),
        make(sdir, ".state-fresh.json.1.abcdef01.tmp", NOW - 60),
    ]
    os.utime(sdir / "projects", (OLD, OLD))
    removed = sweep.sweep(str(sdir), NOW, keep="state-me.json")
    assert removed == []
    for path in kept:
        assert path.exists(), path


def test_an_orphan_lock_goes_after_an_hour_only(sdir: Path) -> None:
    make(sdir, "state-gone.json.lock", NOW - 3700)
    make(sdir, "state-recent.json.lock", NOW - 600)
    make(sdir, "unrelated.lock", OLD)
    removed = sweep.sweep(str(sdir), NOW)
    assert removed == [str(sdir / "state-gone.json.lock")]
    assert names(sdir) == {"state-recent.json.lock", "unrelated.lock"}


def test_stale_temp_files_of_state_files_go(sdir: Path) -> None:
    make(sdir, ".state-a.json.77.0badcafe.tmp", NOW - 7200)
    make(sdir, ".settings.json.77.0badcafe.tmp", NOW - 7200)
    removed = sweep.sweep(str(sdir), NOW)
    assert removed == [str(sdir / ".state-a.json.77.0badcafe.tmp")]


def test_dry_run_removes_nothing_and_lists_the_same(sdir: Path) -> None:
    make(sdir, "state-old.json", OLD)
    make(sdir, "state-old.json.corrupt-x", OLD)
    make(sdir, "state-gone.json.lock", OLD)
    before = names(sdir)
    listed = sweep.sweep(str(sdir), NOW, dry_run=True)
    assert names(sdir) == before
    assert set(sweep.sweep(str(sdir), NOW)) >= set(listed)
    assert names(sdir) == set()


def test_max_age_is_configurable(sdir: Path) -> None:
    make(sdir, "state-a.json", NOW - 2 * DAY)
    make(sdir, "state-b.json", NOW - 10)
    assert sweep.sweep(str(sdir), NOW, max_age=DAY) == [str(sdir / "state-a.json")]
    assert sweep.sweep(str(sdir), NOW, max_age=0) == [str(sdir / "state-b.json")]


def test_missing_state_dir_is_fine(tmp_path: Path) -> None:
    assert sweep.sweep(str(tmp_path / "nothing"), NOW) == []


def test_a_directory_or_symlink_named_like_a_state_file_breaks_nothing(
    sdir: Path, tmp_path: Path
) -> None:
    (sdir / "state-dir.json").mkdir()
    os.utime(sdir / "state-dir.json", (OLD, OLD))
    target = make(tmp_path, "elsewhere.json", OLD)
    os.symlink(target, sdir / "state-link.json")
    os.utime(sdir / "state-link.json", (OLD, OLD), follow_symlinks=False)
    make(sdir, "state-old.json", OLD)
    removed = sweep.sweep(str(sdir), NOW)
    assert str(sdir / "state-old.json") in removed
    assert (sdir / "state-dir.json").is_dir()
    assert (sdir / "state-link.json").is_symlink()  # a link named like ours is not ours
    assert target.read_text() == "{}"


def test_directories_and_links_named_like_state_files_stop_nothing_after_them(
    sdir: Path, tmp_path: Path
) -> None:
    """Twenty of each, in whatever order the directory lists them: every old state
    file still goes (one that stopped at the first would keep some, but for 1 order in 10^11)."""
    target = make(tmp_path, "elsewhere.json", OLD)
    for i in range(20):
        (sdir / f"state-dir{i}.json").mkdir()
        os.symlink(target, sdir / f"state-link{i}.json")
        make(sdir, f"state-old{i}.json", OLD)
    removed = sweep.sweep(str(sdir), NOW)
    assert sorted(removed) == sorted(str(sdir / f"state-old{i}.json") for i in range(20))


@pytest.mark.parametrize(("age", "goes"), [(3600, False), (3601, True)])
def test_an_orphan_lock_goes_after_an_hour_to_the_second(sdir: Path, age: int, goes: bool) -> None:
    lock = make(sdir, "state-gone.json.lock", NOW - age)
    assert sweep.sweep(str(sdir), NOW, dry_run=True) == ([str(lock)] if goes else [])
    assert sweep.sweep(str(sdir), NOW) == ([str(lock)] if goes else [])
    assert lock.exists() is not goes


def test_a_symlink_planted_at_one_agents_lock_stops_nothing_else(
    sdir: Path, tmp_path: Path
) -> None:
    """It made the whole sweep (cleanup, SessionStart's) fail with StorageError."""
    victim = make(tmp_path, "victim", OLD, "secret")
    make(sdir, "state-planted.json", OLD)
    os.symlink(victim, sdir / "state-planted.json.lock")
    make(sdir, "state-old.json", OLD)
    removed = sweep.sweep(str(sdir), NOW)
    assert removed == [str(sdir / "state-old.json")]
    assert names(sdir) == {"state-planted.json", "state-planted.json.lock"}
    assert victim.read_text() == "secret"


HOLD = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock = storage.Lock(sys.argv[1])
assert lock.acquire(5)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def holder(sdir: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(sdir / "state-busy.json.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_a_state_file_held_under_lock_is_not_removed(
    sdir: Path, holder: subprocess.Popen[str]
) -> None:
    state = make(sdir, "state-busy.json", OLD)
    lock = sdir / "state-busy.json.lock"
    os.utime(lock, (OLD, OLD))
    assert sweep.sweep(str(sdir), NOW) == []
    assert state.exists() and lock.exists()


def test_a_held_orphan_lock_is_not_removed(sdir: Path, holder: subprocess.Popen[str]) -> None:
    lock = sdir / "state-busy.json.lock"
    os.utime(lock, (OLD, OLD))
    assert sweep.sweep(str(sdir), NOW) == []
    assert lock.exists()


def test_archived_trails_are_swept(sdir: Path) -> None:
    agent = identity.Agent("proj__cc_1", str(sdir))
    old = Path(
        trail_archive.archive(agent, {"conversation_id": "old-conv", "files_read": []}, OLD) or ""
    )
    os.utime(old, (OLD, OLD))
    fresh = Path(trail_archive.archive(agent, {"conversation_id": "new-conv"}, NOW) or "")
    os.utime(fresh, (NOW - DAY, NOW - DAY))
    other = identity.Agent("gone", str(sdir))
    gone = Path(trail_archive.archive(other, {"conversation_id": "c"}, OLD) or "")
    os.utime(gone, (OLD, OLD))
    removed = sweep.sweep(str(sdir), NOW)
    assert set(removed) == {str(old), str(gone)}
    assert fresh.exists()
    assert not gone.parent.exists()  # the empty agent folder goes too


def test_archives_keep_a_bounded_number_per_agent(sdir: Path) -> None:
    agent = identity.Agent("a", str(sdir))
    start = time.time() - 1000
    for i in range(trail_archive.KEEP_PER_AGENT + 5):
        path = trail_archive.archive(agent, {"conversation_id": f"c{i:02d}"}, NOW + i)
        assert path is not None
        os.utime(path, (start + i, start + i))  # older than the next one written
    kept = sorted(p.stem for p in Path(trail_archive.agent_dir(agent)).iterdir())
    assert kept == [f"c{i:02d}" for i in range(5, trail_archive.KEEP_PER_AGENT + 5)]


def test_the_paths_kept_beside_a_trail_go_with_it(sdir: Path) -> None:
    """A conversation's `.more` file is swept when old and pruned with its archive."""
    agent = identity.Agent("a", str(sdir))
    start = time.time() - 1000
    for i in range(trail_archive.KEEP_PER_AGENT + 1):
        trail_spill.spill(agent, f"c{i:02d}", [("files_modified", f"/p/{i}")])
        path = trail_archive.archive(agent, {"conversation_id": f"c{i:02d}"}, NOW + i)
        assert path is not None
        os.utime(path, (start + i, start + i))
    kept = sorted(p.name for p in Path(trail_spill.agent_dir(agent)).iterdir())
    assert "c00.json" not in kept and "c00.more" not in kept  # pruned together
    assert "c01.json" in kept and "c01.more" in kept
    old = trail_spill.spill_path(agent, "c01")
    assert old is not None
    os.utime(old, (OLD, OLD))
    assert old in sweep.sweep(str(sdir), NOW)
    assert not os.path.exists(old)
    assert trail_spill.spill_path(agent, "c02") not in sweep.sweep(str(sdir), NOW)


@pytest.mark.parametrize("conversation", ["../../escape", "a/b", "", "x" * 129, None, 5, "ok\x00"])
def test_archive_names_never_escape(sdir: Path, conversation: object) -> None:
    agent = identity.Agent("a", str(sdir))
    path = trail_archive.archive(agent, {"conversation_id": conversation}, NOW)
    assert path is not None
    assert os.path.dirname(path) == trail_archive.agent_dir(agent)
    assert os.path.basename(path).startswith("unknown-")
    assert trail_archive.load(agent, conversation) is None


# -- the 7-day limit, to the second (README: "state untouched for 7 days is swept") ------

WEEK = 7 * DAY


def old_thing(sdir: Path, kind: str, mtime: float) -> Path:
    """One file the sweep judges by age: a state file, a corrupt copy, an archived trail."""
    if kind == "state file":
        return make(sdir, "state-a.json", mtime)
    if kind == "corrupt copy":
        return make(sdir, "state-a.json.corrupt-20260101T000000Z", mtime)
    path = trail_archive.archive(identity.Agent("a", str(sdir)), {"conversation_id": "c1"}, mtime)
    assert path is not None
    os.utime(path, (mtime, mtime))
    return Path(path)


KINDS = ["state file", "corrupt copy", "archived trail"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_file_untouched_for_a_second_more_than_7_days_goes(
    sdir: Path, kind: str, dry_run: bool
) -> None:
    path = old_thing(sdir, kind, NOW - WEEK - 1)
    assert sweep.sweep(str(sdir), NOW, dry_run=dry_run) == [str(path)]
    assert path.exists() is dry_run


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("age", [WEEK, WEEK - 1], ids=["exactly 7 days", "7 days less 1 s"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_file_untouched_for_7_days_or_less_stays(
    sdir: Path, kind: str, age: int, dry_run: bool
) -> None:
    path = old_thing(sdir, kind, NOW - age)
    assert sweep.sweep(str(sdir), NOW, dry_run=dry_run) == []
    assert path.exists()


@pytest.mark.parametrize(
    "touched", [NOW, NOW - WEEK], ids=["just now", "exactly 7 days before the sweep"]
)
def test_a_state_file_written_after_the_sweep_looked_is_kept(
    sdir: Path, monkeypatch: pytest.MonkeyPatch, touched: float
) -> None:
    """The sweep saw the file 8 days old; its agent wrote it before the sweep took its
    lock. The age is checked again under the lock, so the file stays (and so does its
    lock file). The write happens exactly between the two, on the lock's acquire."""
    state = make(sdir, "state-busy.json", OLD)
    lock_file = make(sdir, "state-busy.json.lock", OLD)
    acquired: list[str] = []

    class WrittenJustBefore(storage.Lock):
        def acquire(self, timeout: float = storage.LOCK_TIMEOUT) -> bool:
            os.utime(state, (touched, touched))  # the agent's write, under its own lock
            acquired.append(self.path)
            return super().acquire(timeout)

    monkeypatch.setattr(storage, "Lock", WrittenJustBefore)
    assert sweep.sweep(str(sdir), NOW) == []
    assert acquired == [str(lock_file)]  # the sweep did go for it
    assert state.exists() and lock_file.exists()


def test_the_sweep_never_waits_for_a_lock(sdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state file whose lock is taken is in use: skipped at once, not waited for
    (SessionStart runs the sweep)."""
    make(sdir, "state-a.json", OLD)
    timeouts: list[float] = []

    class Recorded(storage.Lock):
        def acquire(self, timeout: float = storage.LOCK_TIMEOUT) -> bool:
            timeouts.append(timeout)
            return super().acquire(timeout)

    monkeypatch.setattr(storage, "Lock", Recorded)
    assert sweep.sweep(str(sdir), NOW) == [str(sdir / "state-a.json")]
    assert timeouts == [0]


def test_a_state_file_removed_by_someone_else_meanwhile_is_not_reported(
    sdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another sweep (another agent's SessionStart) removed it between this sweep's
    listing and its lock: this one removed nothing and says so."""
    state = make(sdir, "state-a.json", OLD)

    class GoneJustBefore(storage.Lock):
        def acquire(self, timeout: float = storage.LOCK_TIMEOUT) -> bool:
            state.unlink(missing_ok=True)
            return super().acquire(timeout)

    monkeypatch.setattr(storage, "Lock", GoneJustBefore)
    assert sweep.sweep(str(sdir), NOW) == []


def test_a_corrupt_copy_removed_by_someone_else_meanwhile_is_not_reported(
    sdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = make(sdir, "state-a.json.corrupt-20260101T000000Z", OLD)
    unlink = os.unlink

    def removed_first(path: str, *args: object, **kwargs: object) -> None:
        if path == str(copy):
            unlink(path)  # the other sweep's
        unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", removed_first)  # the module sweep calls it through
    assert sweep.sweep(str(sdir), NOW) == []
    assert not copy.exists()


def test_a_state_file_held_aside_by_a_killed_writer_is_swept_as_the_state(sdir: Path) -> None:
    """A writer killed between its renames leaves the state only under its aside name
    (`storage.aside_path`): it is the agent's state, kept while fresh, swept with its
    lock once untouched for 7 days — and an aside file beside its state goes with it."""
    fresh = make(sdir, ".state-fresh.json.aside", NOW - DAY)
    make(sdir, "state-fresh.json.lock", NOW - DAY)
    old = make(sdir, ".state-old.json.aside", OLD)
    make(sdir, "state-old.json.lock", OLD)
    beside = make(sdir, ".state-both.json.aside", OLD)
    make(sdir, "state-both.json", OLD)
    assert sorted(sweep.sweep(str(sdir), NOW, dry_run=True)) == sorted(
        [str(old), str(sdir / "state-old.json.lock"), str(sdir / "state-both.json"), str(beside)]
    )
    removed = sweep.sweep(str(sdir), NOW)
    assert sorted(removed) == sorted(
        [str(old), str(sdir / "state-old.json.lock"), str(sdir / "state-both.json"), str(beside)]
    )
    assert names(sdir) == {fresh.name, "state-fresh.json.lock"}


def test_an_aside_file_beside_a_fresh_state_is_left_to_its_next_write(sdir: Path) -> None:
    make(sdir, "state-a.json", NOW)
    make(sdir, ".state-a.json.aside", OLD)
    make(sdir, ".x.aside", OLD)  # not an agent's
    assert sweep.sweep(str(sdir), NOW) == []
    assert names(sdir) == {"state-a.json", ".state-a.json.aside", ".x.aside"}
