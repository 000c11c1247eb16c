"""Closing workspaces and the 24 h sweep: only tracked files go, never through a
symlink, never without a readable manifest — with real symlinks."""

from __future__ import annotations

import calendar
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.workspaces import workspace_cleanup, workspace_store
from agent_hooks.workspaces.workspace_store import Workspace

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))
DAY = 86400


def manifest(ws: Workspace) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(Path(ws.manifest_path).read_text())
    return doc


# --- close ------------------------------------------------------------------------------


def test_close_deletes_only_tracked_files_and_then_empty_dirs(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "a", NOW)
    workspace_store.write_context(ws, "code/b-context.md", "b", NOW)
    untracked = Path(ws.path) / "code" / "mine.txt"
    untracked.write_text("someone else's")
    result = workspace_cleanup.close(ws, NOW)
    assert result.closed
    assert sorted(result.removed) == ["code/b-context.md", "features/a-context.md"]
    assert untracked.read_text() == "someone else's"
    assert sorted(p.name for p in Path(ws.path).iterdir()) == ["code"]
    assert result.warning is not None and "untracked" in result.warning


def test_close_removes_the_whole_workspace_when_everything_was_tracked(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "a", NOW)
    result = workspace_cleanup.close(ws, NOW)
    assert result.closed and result.warning is None
    assert not Path(ws.path).exists()
    assert (project / ".tmp" / "sessions").is_dir()


def test_close_never_follows_a_symlink_out_of_the_workspace(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a-context.md").write_text("precious")
    (outside / "b-context.md").write_text("precious too")
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "mine", NOW)
    workspace_store.write_context(ws, "code/b-context.md", "mine", NOW)
    # after tracking, a directory becomes a symlink out, and a tracked file a link to a file outside
    (Path(ws.path) / "features" / "a-context.md").unlink()
    (Path(ws.path) / "features").rmdir()
    (Path(ws.path) / "features").symlink_to(outside)
    (Path(ws.path) / "code" / "b-context.md").unlink()
    (Path(ws.path) / "code" / "b-context.md").symlink_to(outside / "b-context.md")
    result = workspace_cleanup.close(ws, NOW)
    assert (outside / "a-context.md").read_text() == "precious"
    assert (outside / "b-context.md").read_text() == "precious too"
    assert result.removed == []
    assert any("features/a-context.md" in item and "symlink" in item for item in result.left)
    assert any("code/b-context.md" in item and "symlink" in item for item in result.left)
    assert (Path(ws.path) / "features").is_symlink()


def test_close_refuses_a_workspace_reached_through_a_symlink(project: Path, tmp_path: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "a", NOW)
    real = tmp_path / "real-sessions"
    sessions = project / ".tmp" / "sessions"
    sessions.rename(real)
    sessions.symlink_to(real)
    result = workspace_cleanup.close(ws, NOW)
    assert not result.closed and "symlink" in (result.warning or "")
    assert (real / ws.id / "features" / "a-context.md").read_text() == "a"


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_close_keeps_hands_off_without_a_readable_manifest(project: Path, damage: str) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "a", NOW)
    if damage == "missing":
        Path(ws.manifest_path).unlink()
    else:
        Path(ws.manifest_path).write_text("[1, 2")
    result = workspace_cleanup.close(ws, NOW)
    assert not result.closed and "hands off" in (result.warning or "")
    assert (Path(ws.path) / "features" / "a-context.md").read_text() == "a"


def test_close_skips_a_tracked_path_that_would_escape(project: Path, tmp_path: Path) -> None:
    victim = project / "victim.txt"
    victim.write_text("keep me")
    ws = workspace_store.create(str(project), NOW)
    doc = manifest(ws)
    doc["context_files"]["../../../victim.txt"] = {
        "created": doc["created_at"],
        "for": "",
        "keywords": [],
    }
    Path(ws.manifest_path).write_text(json.dumps(doc))
    result = workspace_cleanup.close(ws, NOW)
    assert result.closed and victim.read_text() == "keep me"
    assert any("victim" in item for item in result.left)


# --- the 24 h sweep ---------------------------------------------------------------------


def make_idle(
    project: Path, suffix: str, last_activity: str, created: float = NOW - 3 * DAY
) -> Workspace:
    ws = workspace_store.create(str(project), created, suffix=lambda: suffix)
    workspace_store.write_context(ws, "general/x-context.md", "x", created)
    doc = manifest(ws)
    doc["last_activity"] = last_activity
    Path(ws.manifest_path).write_text(json.dumps(doc))
    return ws


def test_sweep_closes_only_workspaces_idle_for_more_than_24_hours(project: Path) -> None:
    stale = make_idle(project, "aaaa", "2026-11-20T11:59:59Z")  # 24 h + 1 s
    recent = make_idle(project, "bbbb", "2026-11-20T12:00:01Z")  # 24 h - 1 s
    offset = make_idle(project, "cccc", "2026-11-20T13:30:00+02:00")  # = 11:30Z: stale
    fresh = make_idle(project, "dddd", "2026-11-21T11:00:00Z")
    dry = workspace_cleanup.sweep(str(project), NOW, dry_run=True)
    assert sorted(dry.ids) == [stale.id, offset.id]
    assert Path(stale.path).exists()
    swept = workspace_cleanup.sweep(str(project), NOW)
    assert sorted(swept.ids) == [stale.id, offset.id] and swept.warnings == []
    assert not Path(stale.path).exists() and not Path(offset.path).exists()
    assert Path(recent.path).exists() and Path(fresh.path).exists()


def test_sweep_reads_seed_timestamps_on_linux(project: Path) -> None:
    # the anchor's `date -j -f` could not parse this on Linux and so deleted every session
    ws = make_idle(
        project, "a4f2", "2025-01-18T14:35:10Z", created=calendar.timegm((2025, 1, 18, 14, 30, 22))
    )
    one_hour_later = calendar.timegm((2025, 1, 18, 15, 35, 10))
    assert workspace_cleanup.sweep(str(project), one_hour_later).ids == []
    assert Path(ws.path).exists()
    assert workspace_cleanup.sweep(str(project), one_hour_later + DAY).ids == [ws.id]


def test_sweep_spares_kept_ids_and_leaves_unreadable_ones_with_a_warning(project: Path) -> None:
    kept = make_idle(project, "aaaa", "2026-11-01T00:00:00Z")
    broken = make_idle(project, "bbbb", "2026-11-01T00:00:00Z")
    Path(broken.manifest_path).write_text("nope")
    missing = make_idle(project, "cccc", "2026-11-01T00:00:00Z")
    Path(missing.manifest_path).unlink()
    odd = make_idle(project, "dddd", "last tuesday")
    young = Path(workspace_store.sessions_root(str(project))) / "20261121-115959-eeee"
    young.mkdir()  # being created right now: no manifest yet, no warning
    swept = workspace_cleanup.sweep(str(project), NOW, keep=[kept.id])
    assert swept.ids == []
    assert all(Path(w.path).exists() for w in (kept, broken, missing, odd))
    text = "\n".join(swept.warnings)
    assert broken.id in text and missing.id in text and odd.id in text and young.name not in text
    assert len(swept.warnings) == 3


def test_sweep_rechecks_activity_under_the_lock(project: Path) -> None:
    ws = make_idle(project, "aaaa", "2026-11-19T00:00:00Z")
    workspace_store.register(ws, "general/x-context.md", NOW - 60)  # became active meanwhile
    result = workspace_cleanup.close(ws, NOW, idle_before=NOW - DAY)
    assert not result.closed and Path(ws.path, "general", "x-context.md").exists()


def test_sweep_ignores_what_is_not_a_workspace(project: Path, tmp_path: Path) -> None:
    root = Path(workspace_store.ensure_sessions_root(str(project)))
    (root / "notes").mkdir()
    (root / "20260101-000000-zzzz").write_text("a file with an id's name")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "20260101-000000-yyyy").symlink_to(outside)
    swept = workspace_cleanup.sweep(str(project), NOW)
    assert swept.ids == [] and swept.warnings == []
    assert (root / "notes").is_dir() and (root / "20260101-000000-zzzz").is_file()
    assert os.path.islink(root / "20260101-000000-yyyy")
