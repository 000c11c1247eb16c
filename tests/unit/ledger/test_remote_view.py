"""The hook side of the remote ledger: the view file, its age, the sync stamp, and
starting a sync detached. Built-ins only (checked statically and at run time)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

import import_graph
from agent_hooks.ledger import remote_view
from hot_path_rules import EXEMPTIONS, HOT_ALLOWLIST

NOW = 1_800_000_000.0
SRC = Path(__file__).resolve().parents[3] / "src"


def write_view(
    ledger: Path, header: dict[str, object], leases: dict[str, list[dict[str, object]]]
) -> None:
    (ledger / remote_view.VIEW).write_bytes(remote_view.encode(header, leases))


def test_a_view_reads_back_one_path_at_a_time(tmp_path: Path) -> None:
    lease = {"writer": "a", "machine": "alpha", "worktree": "alpha:/w", "expires": NOW + 60}
    write_view(tmp_path, {"synced_at": NOW, "hosts": {"alpha": (NOW, 10)}}, {"src/a.py": [lease]})
    view = remote_view.load(str(tmp_path))
    assert view is not None
    assert view.leases_on("src/a.py") == [lease]
    assert view.leases_on("src/b.py") == []
    assert view.synced_at == NOW and view.interval == remote_view.INTERVAL


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00garbage", None],
    ids=["empty", "garbage", "truncated"],
)
def test_a_view_that_cannot_be_used_is_no_view(tmp_path: Path, data: bytes | None) -> None:
    if data is None:
        data = remote_view.encode({"synced_at": NOW}, {"a": [{"x": 1}]})[:-5]
    (tmp_path / remote_view.VIEW).write_bytes(data)
    assert remote_view.load(str(tmp_path)) is None
    assert remote_view.load(str(tmp_path / "missing")) is None


def test_a_view_of_another_layout_or_python_is_no_view(tmp_path: Path) -> None:
    (tmp_path / remote_view.VIEW).write_bytes(
        marshal.dumps((99, tuple(sys.version_info[:2]), {}, {}))
    )
    assert remote_view.load(str(tmp_path)) is None
    (tmp_path / remote_view.VIEW).write_bytes(marshal.dumps((1, (2, 7), {}, {})))
    assert remote_view.load(str(tmp_path)) is None
    (tmp_path / remote_view.VIEW).write_bytes(
        marshal.dumps((1, tuple(sys.version_info[:2]), [], {}))
    )
    assert remote_view.load(str(tmp_path)) is None


def test_only_leases_that_count_now_are_told() -> None:
    live = {"writer": "a", "machine": "alpha", "expires": NOW + 60}
    ended = {"writer": "b", "machine": "alpha", "expires": NOW - 1}
    silent = {"writer": "c", "machine": "gone", "expires": NOW + 60}
    odd = {"writer": "d", "machine": "alpha", "expires": "soon"}
    view = remote_view.View(
        {"hosts": {"alpha": (NOW, 10), "gone": (NOW - 601, 10)}},
        {"f": marshal.dumps([live, ended, silent, odd])},
    )
    assert view.counting("f", NOW) == [live]
    assert view.counting("other", NOW) == []


def test_another_machines_lease_that_expires_this_instant_no_longer_counts() -> None:
    """`expires` is the first moment it no longer holds (as `lease.counts` has it
    for leases on this machine)."""
    ends = {"writer": "a", "machine": "alpha", "expires": NOW}
    left = {"writer": "b", "machine": "alpha", "expires": NOW + 0.001}
    view = remote_view.View({"hosts": {"alpha": (NOW, 10)}}, {"f": marshal.dumps([ends, left])})
    assert view.counting("f", NOW) == [left]
    assert view.counting("f", NOW - 0.001) == [ends, left]


def test_a_view_is_stale_after_two_intervals() -> None:
    view = remote_view.View({"synced_at": NOW, "interval": 15}, {})
    assert not view.stale(NOW + 30)
    assert view.stale(NOW + 31)
    assert remote_view.View({"synced_at": None}, {}).stale(NOW)
    assert remote_view.stale_note(view, NOW + 10) is None
    note = remote_view.View({"synced_at": NOW, "error": "cannot fetch"}, {})
    text = remote_view.stale_note(note, NOW + 300)
    assert text is not None and "5 min ago (cannot fetch)" in text and "\n" not in text
    assert remote_view.stale_note(None, NOW) is None


def test_a_host_is_heard_from_within_its_lease_minutes() -> None:
    view = remote_view.View({"hosts": {"a": (NOW, 10), "b": (NOW, 0), "c": ("x", 1)}}, {})
    assert view.heard_from("a", NOW + 599) and not view.heard_from("a", NOW + 600)
    assert view.heard_from("b", NOW + 599)  # leases off: the default lease minutes
    assert not view.heard_from("c", NOW) and not view.heard_from("nobody", NOW)
    assert not remote_view.View({"hosts": []}, {}).heard_from("a", NOW)


def test_a_sync_is_due_once_the_stamp_is_an_interval_old(tmp_path: Path) -> None:
    ledger = str(tmp_path)
    assert remote_view.due(ledger, NOW)
    remote_view.touch_stamp(ledger, NOW)
    assert not remote_view.due(ledger, NOW + 14)
    assert remote_view.due(ledger, NOW + 15)
    assert remote_view.due(ledger, NOW - 60)  # the clock was set back


def test_start_sync_runs_it_detached_in_a_new_session_and_does_not_wait(tmp_path: Path) -> None:
    ledger = tmp_path / "repo" / ".git" / "agent-hooks"
    ledger.mkdir(parents=True)
    pid = remote_view.start_sync(str(ledger), NOW)
    assert pid is not None
    try:
        assert os.getsid(pid) == pid  # its own session: a hook's process group may be killed
        fds = os.listdir(f"/proc/{pid}/fd") if os.path.isdir(f"/proc/{pid}/fd") else []
        for fd in ("0", "1", "2"):
            if fd in fds:
                try:
                    assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"
                except FileNotFoundError:
                    pass  # it exited meanwhile
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # the remote is off: nothing to do
    assert (ledger / remote_view.STAMP).stat().st_mtime == NOW
    assert remote_view.maybe_start(str(ledger), NOW + 1) is None  # not due yet


def test_the_module_imports_only_built_ins_statically() -> None:
    """What hooks call here stays on the hot path's side: built-ins and agent_hooks'
    own hot-path modules (the hot path's exemptions cut), never the sync or git."""
    reached = import_graph.reachable(
        ["agent_hooks.ledger.remote_view"], import_graph.edges(), cut=set(EXEMPTIONS)
    )
    bad = sorted(n for n in reached if n not in HOT_ALLOWLIST and not n.startswith("agent_hooks"))
    assert bad == []
    for engine in ("ledger_sync", "remote_git", "remote_ledger", "shared_reservations"):
        assert f"agent_hooks.ledger.{engine}" not in reached
    assert "agent_hooks.ledger.reservation_store" not in reached


def test_a_hook_reading_the_view_loads_only_built_ins(tmp_path: Path) -> None:
    write_view(tmp_path, {"synced_at": NOW}, {"a": [{"writer": "x"}]})
    code = (
        "import sys;sys.path.insert(0,sys.argv[1]);import agent_hooks;"
        "from agent_hooks.ledger import remote_view as v;"
        "w=v.load(sys.argv[2]);w.leases_on('a');w.stale(0);v.due(sys.argv[2],0)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", code, str(SRC), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    loaded.discard("imported package")
    bad = sorted(n for n in loaded if n not in HOT_ALLOWLIST and not n.startswith("agent_hooks"))
    assert bad == []
