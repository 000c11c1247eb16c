"""Sweeping the store (`kept.kept_sweep`): 7 days after the lease ended, the size
limit kept by evicting ended leases' versions oldest first and then live leases'
earlier ones, never a live lease's latest version, at most MAX_VERSIONS a path,
damaged content and what no version names removed — and nothing else."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_hooks import liveness, writers
from agent_hooks.kept import kept_store, kept_sweep, kept_versions
from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo

NOW = 1_800_000_000.0
DAY = 86400.0


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    path = tmp_path / "repo" / ".git" / "agent-hooks"
    path.mkdir(parents=True, mode=0o700)
    return str(path)


def put(ledger: str, rel: str, data: bytes, writer: str, at: float, until: float) -> str:
    """A version of `rel` by `writer` written at `at`, its lease then ending at `until`."""
    name = kept_store.digest(data)
    kept_store.put_object(ledger, name, data)
    old = at - 3600  # its object was written long before the sweep
    os.utime(kept_store.object_path(ledger, name), (old, old))
    record = {"writer": writer, "agent": writer.partition("#")[0]}
    entry = kept_store.entry_for(rel, "write", name, len(data), 0o644, record, writer, at, until)
    assert kept_store.append(ledger, ".", rel, entry)
    return name


def live_lease(ledger: str, rel: str, writer: str, now: float = NOW) -> None:
    """`writer` holds `rel` now (its holder: this test's process, alive)."""
    repo = Repo(
        str(Path(ledger).parent.parent), str(Path(ledger).parent), {"AGENT_HOOKS_LEASE_MINUTES": "60"},
        ledger=ledger, worktree=".", branch="main",
    )  # fmt: skip
    lease_store.claim(repo, rel, writers.Writer(writer, "c1"), now, holder_pid=os.getpid())
    assert liveness.alive(lease_store.read(ledger, rel)[0]) is True


def kept(ledger: str, rel: str) -> list[bytes]:
    return [
        kept_versions.read_object(ledger, e["hash"]) or b"?"
        for e in kept_versions.read_versions(ledger, ".", rel)
    ]


def limit(ledger: str, mib: int) -> None:
    store = Path(kept_store.store_dir(ledger))
    (store / "settings.json").write_text(json.dumps({"kept_total_mib": mib}))


def test_versions_go_seven_days_after_their_lease_ended(ledger: str) -> None:
    put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY + 600)
    put(ledger, "b.py", b"recent\n", "w1", NOW - 6 * DAY, NOW - 6 * DAY + 600)
    swept = kept_sweep.sweep(ledger, NOW)
    assert (
        swept.versions == 1 and kept(ledger, "a.py") == [] and kept(ledger, "b.py") == [b"recent\n"]
    )
    assert swept.objects == 1  # "old" named by nothing any more
    assert not Path(kept_store.versions_path(ledger, ".", "a.py")).exists()


def test_a_live_lease_keeps_its_versions_whatever_their_age(ledger: str) -> None:
    put(ledger, "a.py", b"ancient\n", "w1", NOW - 30 * DAY, NOW - 30 * DAY + 600)
    live_lease(ledger, "a.py", "w1")
    kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "a.py") == [b"ancient\n"]


def test_eviction_takes_ended_leases_oldest_first_then_live_leases_earlier_versions(
    ledger: str,
) -> None:
    mib = b"x" * ((1 << 20) - 2)  # each version just under 1 MiB
    put(ledger, "ended.py", b"1" + mib, "w2", NOW - 5 * DAY, NOW - 5 * DAY)
    put(ledger, "ended.py", b"2" + mib, "w2", NOW - 4 * DAY, NOW - 4 * DAY)
    put(ledger, "live.py", b"3" + mib, "w1", NOW - 6 * DAY, NOW + 600)
    put(ledger, "live.py", b"4" + mib, "w1", NOW - 1, NOW + 600)
    live_lease(ledger, "live.py", "w1")
    limit(ledger, 3)  # 4 MiB kept: one must go — the oldest of the ended lease
    kept_sweep.sweep(ledger, NOW)
    assert [v[:1] for v in kept(ledger, "ended.py")] == [b"2"]
    assert [v[:1] for v in kept(ledger, "live.py")] == [b"3", b"4"]
    limit(ledger, 2)  # then the other ended one, though younger than live.py's first
    kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "ended.py") == []
    assert [v[:1] for v in kept(ledger, "live.py")] == [b"3", b"4"]
    limit(ledger, 1)  # then the live lease's earlier version
    swept = kept_sweep.sweep(ledger, NOW)
    assert [v[:1] for v in kept(ledger, "live.py")] == [b"4"] and not swept.over
    limit(ledger, 0)  # its latest stays, over the limit
    swept = kept_sweep.sweep(ledger, NOW)
    assert [v[:1] for v in kept(ledger, "live.py")] == [b"4"] and swept.over


def test_content_kept_twice_is_freed_only_when_no_version_names_it(ledger: str) -> None:
    mib = b"y" * (1 << 20)
    put(ledger, "a.py", mib, "w2", NOW - 5 * DAY, NOW - 5 * DAY)
    put(ledger, "b.py", mib, "w2", NOW - 4 * DAY, NOW - 4 * DAY)
    put(ledger, "c.py", b"z" * (1 << 20), "w2", NOW - 3 * DAY, NOW - 3 * DAY)
    limit(ledger, 1)
    kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "a.py") == kept(ledger, "b.py") == [] and kept(ledger, "c.py") != []


def test_at_most_max_versions_a_path_the_oldest_go(
    ledger: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_sweep, "MAX_VERSIONS", 3)
    for n in range(5):
        put(ledger, "a.py", f"v{n}\n".encode(), "w1", NOW - 10 + n, NOW + 600)
    kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "a.py") == [b"v2\n", b"v3\n", b"v4\n"]


def test_a_damaged_object_and_the_versions_naming_it_go(ledger: str) -> None:
    name = put(ledger, "a.py", b"good\n", "w1", NOW - 10, NOW + 600)
    put(ledger, "a.py", b"later\n", "w1", NOW - 5, NOW + 600)
    path = Path(kept_store.object_path(ledger, name))
    path.write_bytes(b"bad!\n")  # written since the last sweep (its mtime now)
    os.utime(path, (NOW - 60, NOW - 60))
    swept = kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "a.py") == [b"later\n"] and not path.exists()
    assert any("damaged" in problem for problem in swept.problems)


def test_an_object_no_version_names_yet_is_spared_while_fresh(ledger: str) -> None:
    """A keep writes its object, then its line: a sweep in between must not take it."""
    kept_store.put_object(ledger, kept_store.digest(b"in flight\n"), b"in flight\n")
    path = Path(kept_store.object_path(ledger, kept_store.digest(b"in flight\n")))
    os.utime(path, (NOW - 60, NOW - 60))
    kept_sweep.sweep(ledger, NOW)
    assert path.exists()
    os.utime(path, (NOW - 3600, NOW - 3600))
    kept_sweep.sweep(ledger, NOW)
    assert not path.exists()


def test_a_rewrite_keeps_a_version_appended_since_the_sweep_read(ledger: str) -> None:
    put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY)
    path = kept_store.versions_path(ledger, ".", "a.py")
    [old_line] = [line for line in Path(path).read_bytes().split(b"\n") if line]
    put(ledger, "a.py", b"new\n", "w1", NOW - 1, NOW + 600)  # after the sweep read the file
    assert kept_sweep._rewrite(ledger, path, {old_line}) is None
    assert kept(ledger, "a.py") == [b"new\n"]


def test_only_the_stores_own_files_are_removed(ledger: str) -> None:
    put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY)
    store = Path(kept_store.store_dir(ledger))
    strangers = [
        store / "notes.txt",
        store / "objects" / "zz" / "not-hex",
        store / "objects" / "readme",
    ]
    for path in strangers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("mine\n")
        os.utime(path, (NOW - 30 * DAY, NOW - 30 * DAY))
    kept_sweep.sweep(ledger, NOW)
    assert all(path.read_text() == "mine\n" for path in strangers)


def test_a_damaged_version_file_loses_only_itself(ledger: str) -> None:
    put(ledger, "a.py", b"a\n", "w1", NOW - 1, NOW + 600)
    put(ledger, "b.py", b"b\n", "w1", NOW - 1, NOW + 600)
    Path(kept_store.versions_path(ledger, ".", "a.py")).write_bytes(b"\xff\x00 not json\n")
    swept = kept_sweep.sweep(ledger, NOW)
    assert kept(ledger, "b.py") == [b"b\n"] and swept.problems == []


def test_a_dry_run_counts_what_a_sweep_removes_and_removes_nothing(ledger: str) -> None:
    put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY)
    put(ledger, "b.py", b"keep\n", "w1", NOW - 1, NOW + 600)
    fresh = kept_store.digest(b"in flight\n")  # no version names it yet: spared, and not counted
    kept_store.put_object(ledger, fresh, b"in flight\n")
    os.utime(kept_store.object_path(ledger, fresh), (NOW - 60, NOW - 60))
    dry = kept_sweep.sweep(ledger, NOW, dry_run=True)
    assert kept(ledger, "a.py") == [b"old\n"]
    real = kept_sweep.sweep(ledger, NOW)
    assert (dry.versions, dry.objects) == (real.versions, real.objects) == (1, 1)


def test_a_sweep_is_due_only_past_its_interval(ledger: str) -> None:
    assert not kept_versions.sweep_due(ledger, NOW)  # no store: nothing to sweep
    put(ledger, "a.py", b"a\n", "w1", NOW, NOW + 600)
    assert kept_versions.sweep_due(ledger, NOW)  # never swept
    kept_sweep.sweep(ledger, NOW)
    assert not kept_versions.sweep_due(ledger, NOW + 60)
    assert kept_versions.sweep_due(ledger, NOW + kept_versions.SWEEP_INTERVAL + 1)


def test_after_turn_logs_what_went(ledger: str, tmp_path: Path) -> None:
    put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY)
    lines: list[str] = []
    repo = Path(ledger).parent.parent
    kept_sweep.after_turn(str(tmp_path / "state"), str(repo), NOW, lines.append)
    assert lines and "swept 1 version and 1 object" in lines[0]


def test_an_object_a_keep_finds_while_the_sweep_runs_is_spared(
    ledger: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep listed an old object no version names; before it removes it, a keep of
    the same content finds it (and moves its mtime) and is about to append its line."""
    name = put(ledger, "a.py", b"old\n", "w1", NOW - 9 * DAY, NOW - 9 * DAY)
    path = Path(kept_store.object_path(ledger, name))
    real = kept_sweep._named

    def meanwhile(where: str) -> set[str]:
        found = real(where)
        kept_store.put_object(ledger, name, b"old\n")  # a keep: same size, so only touched
        os.utime(path, (NOW - 1, NOW - 1))
        return found

    monkeypatch.setattr(kept_sweep, "_named", meanwhile)
    kept_sweep.sweep(ledger, NOW)
    assert path.read_bytes() == b"old\n"


def test_remembered_ignore_answers_go_with_their_versions_or_their_age(ledger: str) -> None:
    store = Path(kept_store.store_dir(ledger))
    put(ledger, "kept.py", b"k\n", "w1", NOW - 1, NOW + 600)
    answers = {
        name: Path(kept_store.ignores_path(ledger, ".", name))
        for name in ("kept.py", "ignored.env", "fresh.py")
    }
    for name, path in answers.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
        age = 60 if name == "fresh.py" else 2 * 3600
        os.utime(path, (NOW - age, NOW - age))
    kept_sweep.sweep(ledger, NOW)
    assert {name for name, path in answers.items() if path.exists()} == {"kept.py", "fresh.py"}
    os.utime(answers["kept.py"], (NOW - 8 * DAY, NOW - 8 * DAY))
    kept_sweep.sweep(ledger, NOW)
    assert not answers["kept.py"].exists()
    assert (store / "versions").is_dir()
