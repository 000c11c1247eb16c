"""`agent-hooks workspace show | close | sweep` and `agent-hooks freshness`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_harness import NOW, Cli

from agent_hooks import tool_use
from agent_hooks.agents import state_file, trail
from agent_hooks.cli import context, freshness, workspace
from agent_hooks.workspaces import workspace_store

DAY = 86400


@pytest.fixture
def cli(home: Path, project: Path) -> Cli:
    runner = Cli(home, project, context, workspace, freshness)
    runner.begin("conv-1")
    return runner


def test_show_without_and_with_a_workspace(cli: Cli) -> None:
    assert "No workspace is bound" in cli.ok("workspace", "show").output
    assert json.loads(cli.ok("workspace", "show", "--json").output) is None
    cli.ok("context", "add", "x", "-c", "code")
    data = json.loads(cli.ok("workspace", "show", "--json").output)
    assert data["manifest"]["session_id"] == data["id"]
    assert list(data["manifest"]["context_files"]) == ["code/x-context.md"]
    text = cli.ok("workspace", "show").output
    assert f"workspace: {data['id']}" in text and "code/x-context.md" in text


def test_close_deletes_tracked_files_keeps_untracked_and_unbinds(cli: Cli) -> None:
    path = Path(cli.ok("context", "add", "x", "-c", "code").stdout.strip())
    ws_dir = path.parents[1]
    stray = ws_dir / "code" / "notes-by-hand.txt"
    stray.write_text("not tracked")
    data = json.loads(cli.ok("workspace", "close", "--json").output)
    assert data["closed"] and data["removed"] == ["code/x-context.md"]
    assert not path.exists() and stray.read_text() == "not tracked"
    doc, _ = state_file.read(cli.agent(), NOW)
    assert doc["workspace"] is None
    assert "no workspace is bound" in cli("workspace", "close").output


def test_close_with_a_broken_manifest_is_a_one_line_error(cli: Cli) -> None:
    path = Path(cli.ok("context", "add", "x", "-c", "code").stdout.strip())
    (path.parents[1] / ".manifest.json").write_text("{{{")
    result = cli("workspace", "close")
    assert result.exit_code == 1 and "hands off" in result.output.splitlines()[-1]
    assert path.exists()


def idle_workspace(project: Path, last: float) -> workspace_store.Workspace:
    ws = workspace_store.create(str(project), last)
    workspace_store.write_context(ws, "general/old-context.md", "old", last)
    return ws


def test_sweep_closes_idle_workspaces_and_spares_yours(cli: Cli) -> None:
    mine = Path(
        cli.ok("context", "add", "x", "-c", "code", now=NOW - 3 * DAY).stdout.strip()
    ).parents[1]
    stale = idle_workspace(cli.project, NOW - DAY - 60)
    fresh = idle_workspace(cli.project, NOW - DAY + 60)
    dry = json.loads(cli.ok("workspace", "sweep", "--dry-run", "--json").output)
    assert dry["closed"] == [stale.id] and Path(stale.path).exists()
    out = cli.ok("workspace", "sweep").output
    assert out == f"closed 1 idle workspace: {stale.id}\n"
    assert not Path(stale.path).exists() and Path(fresh.path).exists() and mine.exists()
    broken = idle_workspace(cli.project, NOW - 5 * DAY)
    Path(broken.manifest_path).unlink()
    result = cli.ok("workspace", "sweep", "--json")
    data = json.loads(result.stdout)
    assert data["closed"] == [] and any(broken.id in w for w in data["warnings"])
    assert Path(broken.path, "general", "old-context.md").exists()


def test_workspace_help(cli: Cli) -> None:
    for sub in ("show", "close", "sweep"):
        assert "--json" in cli.ok("workspace", sub, "--help").output


def test_freshness_reports_the_decision(cli: Cli) -> None:
    src = cli.project / "src"
    src.mkdir()
    files = [src / f"m{i}.py" for i in range(3)]
    for f in files:
        f.write_text("v1\n")

    def read_all(doc: dict[str, Any]) -> None:
        trail.record(doc, [(tool_use.READ, str(f)) for f in files], 500)

    state_file.update(cli.agent(), read_all, NOW, print)
    data = json.loads(cli.ok("freshness", "--json").output)
    assert (data["decision"], data["examined"], data["changed"]) == ("resume", 3, [])
    files[0].write_text("v2 by someone else\n")
    os.utime(files[0], (NOW + 10, NOW + 10))
    data = json.loads(cli.ok("freshness", "--json").output)
    assert data["decision"] == "resume_with_update" and data["changed"] == [str(files[0])]
    text = cli.ok("freshness").output
    assert text.startswith("Resume, after re-reading the changed files: 1 of the 3 files")
    assert "src/m0.py" in text and "resume_with_update" not in text
    data = json.loads(
        cli.ok("freshness", "--json", env={"AGENT_HOOKS_CRITICAL_FILES": "src/m0.py"}).output
    )
    assert data["decision"] == "start_fresh_with_briefing" and data["critical"] == [str(files[0])]


def test_freshness_with_a_corrupt_state_file_is_a_one_line_error(cli: Cli) -> None:
    Path(cli.agent().state_path).write_text("nope")
    result = cli("freshness")
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "not valid JSON" in result.output


def test_show_gives_people_local_time_and_json_utc(cli: Cli, far_timezone: None) -> None:
    cli.ok("context", "add", "x", "-c", "code")
    text = cli.ok("workspace", "show").output.splitlines()
    assert "created:   2027-01-15 13:30 IST" in text and "active:    2027-01-15 13:30 IST" in text
    manifest = json.loads(cli.ok("workspace", "show", "--json").output)["manifest"]
    assert manifest["created_at"] == manifest["last_activity"] == "2027-01-15T08:00:00Z"
