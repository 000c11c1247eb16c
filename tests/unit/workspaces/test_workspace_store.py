"""Workspaces on disk: creation, the manifest under concurrency, removal and the
binding to the conversation — with real processes and real symlinks."""

from __future__ import annotations

import calendar
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity
from agent_hooks.agents import state, state_file
from agent_hooks.workspaces import workspace, workspace_manifest, workspace_store
from agent_hooks.workspaces.workspace_store import Workspace
from hook_runner import ROOT

SRC = str(ROOT / "src")
NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))


def manifest(ws: Workspace) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(Path(ws.manifest_path).read_text())
    return doc


def run_together(scripts: list[str], tmp: Path) -> list[str]:
    """Run each script in its own Python process, released at the same moment: each
    imports the workspace modules, says it is ready (a file), and waits for `go`, which
    is made once every one is ready."""
    go = tmp / "go"
    prelude = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {SRC!r})
        import agent_hooks.agents.state_file, agent_hooks.workspaces.workspace_store
        open({str(go)!r} + ".ready-" + str(os.getpid()), "w").close()
        while not os.path.exists({str(go)!r}):
            time.sleep(0.001)
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", prelude + textwrap.dedent(s)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for s in scripts
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp.glob("go.ready-*"))) < len(procs):
        assert time.monotonic() < deadline, "the processes never got ready"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    go.touch()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        outs.append(out.decode().strip())
    return outs


# --- creation -----------------------------------------------------------------------


def test_create_lays_out_the_seed_structure(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW, suffix=lambda: "a4f2")
    assert ws.id == "20261121-120000-a4f2"
    assert Path(ws.path) == project / ".tmp" / "sessions" / "20261121-120000-a4f2"
    assert manifest(ws) == {
        "session_id": ws.id,
        "created_at": "2026-11-21T12:00:00Z",
        "last_activity": "2026-11-21T12:00:00Z",
        "context_files": {},
        "context_index": {},
    }
    assert (project / ".tmp" / "sessions" / ".gitignore").read_text() == "*\n"
    assert (Path(ws.path).stat().st_mode & 0o777) == 0o700


def test_create_draws_a_new_suffix_when_the_id_is_taken(project: Path) -> None:
    first = workspace_store.create(str(project), NOW, suffix=lambda: "aaaa")
    suffixes = iter(["aaaa", "aaaa", "bbbb"])
    second = workspace_store.create(str(project), NOW, suffix=lambda: next(suffixes))
    assert (first.id, second.id) == ("20261121-120000-aaaa", "20261121-120000-bbbb")
    with pytest.raises(workspace.WorkspaceError, match="no free workspace id"):
        workspace_store.create(str(project), NOW, suffix=lambda: "aaaa")


def test_processes_creating_workspaces_in_the_same_second_never_collide(
    project: Path, tmp_path: Path
) -> None:
    # every process draws the same suffixes in the same order: only mkdir's
    # exclusivity keeps them apart
    script = f"""
        from agent_hooks.workspaces import workspace_store
        names = iter(["aaaa", "aaab", "aaac", "aaad", "aaae", "aaaf", "aaag", "aaah"])
        ws = workspace_store.create({str(project)!r}, {NOW!r}, suffix=lambda: next(names))
        print(ws.id)
    """
    ids = run_together([script] * 6, tmp_path)
    assert sorted(ids) == [f"20261121-120000-aaa{c}" for c in "abcdef"]
    for ws_id in ids:
        assert manifest(Workspace(str(project), ws_id))["session_id"] == ws_id


@pytest.mark.parametrize("planted", [".tmp", ".tmp/sessions"])
def test_create_refuses_a_symlinked_tmp_or_sessions_dir(
    project: Path, tmp_path: Path, planted: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    if planted == ".tmp/sessions":
        (project / ".tmp").mkdir()
    (project / planted).symlink_to(outside)
    with pytest.raises(workspace.WorkspaceError, match="symlink"):
        workspace_store.create(str(project), NOW)
    assert list(outside.iterdir()) == []


# --- the manifest -----------------------------------------------------------------------


def test_eight_concurrent_writers_leave_a_complete_manifest_and_index(
    project: Path, tmp_path: Path
) -> None:
    ws = workspace_store.create(str(project), NOW)
    script = """
        from agent_hooks.workspaces import workspace_store
        ws = workspace_store.Workspace({project!r}, {ws_id!r})
        for j in range(6):
            workspace_store.write_context(ws, f"code/w{i}-{{j}}-context.md", "x", {now!r} + j,
                                          keywords=["w{i}", "shared"])
    """
    scripts = [script.format(project=str(project), ws_id=ws.id, i=i, now=NOW) for i in range(8)]
    run_together(scripts, tmp_path)
    doc = manifest(ws)
    expected = {f"code/w{i}-{j}-context.md" for i in range(8) for j in range(6)}
    assert set(doc["context_files"]) == expected
    assert doc["context_index"] == workspace_manifest.rebuild_index(doc["context_files"])
    assert sorted(doc["context_index"]["shared"]) == sorted(expected)
    for i in range(8):
        assert len(doc["context_index"][f"w{i}"]) == 6
    assert all((Path(ws.path) / rel).read_text() == "x" for rel in expected)


def test_every_operation_moves_last_activity(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "features/a-context.md", "a", NOW + 60)
    assert manifest(ws)["last_activity"] == "2026-11-21T12:01:00Z"
    workspace_store.register(ws, "features/a-context.md", NOW + 120, keywords=["more"])
    assert manifest(ws)["last_activity"] == "2026-11-21T12:02:00Z"
    assert (
        manifest(ws)["context_files"]["features/a-context.md"]["created"] == "2026-11-21T12:01:00Z"
    )
    workspace_store.remove_context(ws, "features/a-context.md", NOW + 180)
    assert manifest(ws)["last_activity"] == "2026-11-21T12:03:00Z"


def test_write_context_refuses_to_overwrite_unless_asked(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(ws, "code/a-context.md", "one", NOW, keywords=["first"])
    with pytest.raises(workspace.WorkspaceError, match="--replace"):
        workspace_store.write_context(ws, "code/a-context.md", "two", NOW)
    assert (Path(ws.path) / "code/a-context.md").read_text() == "one"
    workspace_store.write_context(
        ws, "code/a-context.md", "two", NOW + 1, keywords=["second"], replace=True
    )
    assert (Path(ws.path) / "code/a-context.md").read_text() == "two"
    assert manifest(ws)["context_files"]["code/a-context.md"]["keywords"] == ["second", "a", "code"]


def test_write_context_refuses_a_symlinked_category_dir(project: Path, tmp_path: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    outside = tmp_path / "outside"
    outside.mkdir()
    (Path(ws.path) / "code").symlink_to(outside)
    with pytest.raises(workspace.WorkspaceError, match="symlink"):
        workspace_store.write_context(ws, "code/a-context.md", "x", NOW)
    assert list(outside.iterdir()) == []


def test_remove_context_drops_the_entry_its_index_keys_and_the_file(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    workspace_store.write_context(
        ws, "features/a-context.md", "a", NOW, keywords=["only-a", "both"]
    )
    workspace_store.write_context(ws, "features/b-context.md", "b", NOW, keywords=["both"])
    assert workspace_store.remove_context(ws, "features/a-context.md", NOW + 1) == "removed"
    doc = manifest(ws)
    assert list(doc["context_files"]) == ["features/b-context.md"]
    assert "only-a" not in doc["context_index"] and "a" not in doc["context_index"]
    assert doc["context_index"]["both"] == ["features/b-context.md"]
    assert not (Path(ws.path) / "features/a-context.md").exists()
    with pytest.raises(workspace.WorkspaceError, match="not tracked"):
        workspace_store.remove_context(ws, "features/a-context.md", NOW + 2)


def test_a_corrupt_manifest_is_quarantined_and_a_new_one_begun(project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    Path(ws.manifest_path).write_text("{not json")
    result = workspace_store.register(ws, "code/x.md", NOW + 1)
    assert result.problem is not None and "moved to" in result.problem
    assert list(manifest(ws)["context_files"]) == ["code/x.md"]
    assert [p.name for p in Path(ws.path).glob(".manifest.json.corrupt-*")]


# --- binding to the agent's conversation ----------------------------------------------


def test_current_or_create_binds_the_workspace_to_the_conversation(
    project: Path, state_dir: Path
) -> None:
    agent = identity.Agent("proj__cc_1", str(state_dir))
    logs: list[str] = []

    def begin(conversation: str) -> None:
        state_file.update(
            agent,
            lambda d: state.begin_conversation(
                d,
                conversation_id=conversation,
                source="startup",
                project_root=str(project),
                pid=None,
                now=NOW,
            ),
            NOW,
            logs.append,
        )

    begin("conv-1")
    ws, created = workspace_store.current_or_create(agent, str(project), NOW, logs.append)
    assert created
    doc, _ = state_file.read(agent, NOW)
    assert doc["workspace"] == {"id": ws.id, "path": ws.path, "conversation_id": "conv-1"}
    again, created = workspace_store.current_or_create(agent, str(project), NOW, logs.append)
    assert (again.id, created) == (ws.id, False)
    begin("conv-2")  # a new conversation gets a new workspace
    doc, _ = state_file.read(agent, NOW)
    assert workspace_store.bound(doc, str(project)) is None
    third, created = workspace_store.current_or_create(agent, str(project), NOW + 1, logs.append)
    assert created and third.id != ws.id
    assert logs == []


def test_bound_ignores_another_conversations_or_projects_workspace(
    project: Path, tmp_path: Path
) -> None:
    ws = workspace_store.create(str(project), NOW)
    doc = {"conversation_id": "c1", "workspace": workspace_store.binding(ws, "c1")}
    assert workspace_store.bound(doc, str(project)).id == ws.id  # type: ignore[union-attr]
    assert workspace_store.bound({**doc, "conversation_id": "c2"}, str(project)) is None
    assert workspace_store.bound(doc, str(tmp_path)) is None
    doc["workspace"]["path"] = "/elsewhere"
    assert workspace_store.bound(doc, str(project)) is None
