"""workspace_events: what SessionStart says about workspaces, briefings and
freshness (through a small harness, and through the real entry point once the
adapter calls it), and PostToolUse's registration of workspace writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity, tool_use
from agent_hooks.agents import state, state_file, trail, trail_archive
from agent_hooks.briefings import briefing, briefing_events, briefing_store
from agent_hooks.clients import claude_code
from agent_hooks.hooks.hook_runtime import HookContext
from agent_hooks.workspaces import workspace_events, workspace_store
from hook_runner import AGENT, ROOT, HookRunner, context_of

NOW = 1_800_000_000.0
DAY = 86400
SRC = str(ROOT / "src")
HOOKS = ROOT / "src" / "agent_hooks" / "hooks"


class Harness:
    """Runs the state update SessionStart makes, then `session_start_lines`."""

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.state_dir = home / ".claude"
        self.agent = identity.Agent(AGENT, str(self.state_dir))

    def ctx(self, event: str, payload: dict[str, Any], now: float, **env: str) -> HookContext:
        environ = {
            "HOME": str(self.home),
            "AGENT_NAME": AGENT,
            "CLAUDE_PROJECT_DIR": str(self.project),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            **env,
        }
        return HookContext(claude_code, event, {"cwd": str(self.project), **payload}, environ, now)

    def start(self, source: str, conversation: str, now: float = NOW, **env: str) -> list[str]:
        archived = trail_archive.load(self.agent, conversation) if source == "resume" else None
        facts: dict[str, Any] = {}

        def mutate(doc: dict[str, Any]) -> None:
            facts["archive"] = state.begin_conversation(
                doc,
                conversation_id=conversation,
                source=source,
                project_root=str(self.project),
                pid=None,
                now=now,
                archived=archived,
            )

        doc = state_file.update(self.agent, mutate, now, print)
        if facts["archive"] is not None:
            trail_archive.archive(self.agent, facts["archive"], now)
        ctx = self.ctx("SessionStart", {"source": source, "session_id": conversation}, now, **env)
        project = str(self.project)
        lines = workspace_events.session_start_lines(doc, project, now, ctx.log)
        budget = briefing_events.BUDGET - sum(len(line) + 1 for line in lines)
        return lines + briefing_events.session_start_lines(
            self.agent, doc, source, project, now, ctx.environ, ctx.log, budget=budget
        )

    def touch(self, *rels: str, field: str = tool_use.READ, now: float = NOW) -> None:
        """What PostToolUse records when the agent reads (or edits) files."""
        found = [(field, str(self.project / rel)) for rel in rels]
        state_file.update(
            self.agent,
            lambda d: (
                trail.record(d, found, 500, trail.workspace_prefix(str(self.project))),
                state.touch(d, now),
            ),
            now,
            print,
        )

    def brief(self, **fields: Any) -> None:
        def mutate(doc: dict[str, Any]) -> None:
            if "goal" in fields:
                briefing.set_goal(doc, fields["goal"], NOW)
            if "focus" in fields:
                briefing.set_focus(doc, fields["focus"], NOW)
            for i, text in enumerate(fields.get("decisions", ())):
                briefing.add(doc, "decision", text, NOW + i)

        briefing_store.update(self.agent, str(self.project), mutate, NOW)

    def log(self) -> str:
        path = self.state_dir / "agent-hooks.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def harness(home: Path, project: Path) -> Harness:
    return Harness(home, project)


def write(project: Path, rel: str, text: str, mtime: float | None = None) -> Path:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def git(project: Path, *args: str) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(project),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_AUTHOR_DATE": f"@{int(NOW - 10 * DAY)} +0000",
        "GIT_COMMITTER_DATE": f"@{int(NOW - 10 * DAY)} +0000",
    }
    subprocess.run(["git", "-C", str(project), *args], check=True, env=env, capture_output=True)


# --- startup / clear: the briefing ----------------------------------------------------------


def test_startup_injects_the_briefing_with_the_files_changed_since_the_last_session(
    harness: Harness, project: Path
) -> None:
    git(project, "init", "-q")
    write(project, "README.md", "r", NOW - 10 * DAY)
    git(project, "add", ".")
    git(project, "commit", "-qm", "init")
    harness.start("startup", "conv-1", NOW - DAY)
    harness.touch("README.md", now=NOW - DAY + 600)  # the last session ended here
    harness.brief(goal="Ship auth", decisions=["Use JWT"], focus="Login form")
    write(project, "src/changed_later.py", "x", NOW - 3600)
    write(project, "src/old_untracked.py", "x", NOW - 2 * DAY)
    lines = harness.start("startup", "conv-2")
    text = "\n".join(lines)
    assert text.count(briefing.HEADER) == 1 and text.count(briefing.CLOSING) == 1
    block = text[text.index(briefing.HEADER) :]
    assert "GOAL: Ship auth\nDECISIONS ALREADY MADE:\n- Use JWT\n" in block
    assert (
        "- Files changed in the project since " in block and "  - src/changed_later.py\n" in block
    )
    assert "old_untracked" not in block
    assert "FOCUS FOR THIS SESSION:\nLogin form\n" in block
    assert "Context freshness" not in text


def test_clear_injects_it_too_and_no_briefing_means_no_block(harness: Harness) -> None:
    assert briefing.HEADER not in "\n".join(harness.start("startup", "conv-1"))
    harness.brief(goal="Keep going")
    assert "GOAL: Keep going" in "\n".join(harness.start("clear", "conv-2"))


def test_the_lines_stay_within_the_budget_at_whole_lines(harness: Harness) -> None:
    harness.brief(
        goal="g", focus="f", decisions=[f"decision {i:03d} " + "y" * 80 for i in range(300)]
    )
    lines = harness.start("startup", "conv-1")
    text = "\n".join(lines)
    assert len(text) <= briefing_events.BUDGET
    assert "decision 299" in text and "decision 000" not in text
    assert "oldest entries left out" in text and text.endswith(briefing.CLOSING)
    whole = briefing.render(
        briefing_store.load(harness.agent, str(harness.project), NOW) or {}, limit=10**9
    ).splitlines()
    assert all(line in whole or not line.startswith("- decision") for line in text.splitlines())


# --- resume / compact: freshness ---------------------------------------------------------------


def test_resume_with_nothing_changed(harness: Harness, project: Path) -> None:
    write(project, "src/a.py", "a")
    harness.start("startup", "conv-1")
    harness.touch("src/a.py")
    harness.brief(goal="not shown on a fresh resume")
    text = "\n".join(harness.start("resume", "conv-1"))
    assert "Context freshness: resume —" in text and briefing.HEADER not in text


def test_resume_with_a_few_changes_lists_them(harness: Harness, project: Path) -> None:
    for name in ("a", "b", "c"):
        write(project, f"src/{name}.py", name)
    harness.start("startup", "conv-1")
    harness.touch("src/a.py", "src/b.py", "src/c.py")
    write(project, "src/b.py", "changed by another agent", NOW + 60)
    text = "\n".join(harness.start("resume", "conv-1", NOW + 120))
    assert "resume_with_update" in text and "src/b.py" in text and "src/a.py" not in text


def test_resuming_an_older_conversation_checks_its_own_trail(
    harness: Harness, project: Path
) -> None:
    write(project, "src/a.py", "a")
    write(project, "src/b.py", "b")
    harness.start("startup", "conv-1")
    harness.touch("src/a.py")
    harness.start("startup", "conv-2", NOW + 10)  # conv-1's trail is archived
    harness.touch("src/b.py", now=NOW + 20)
    write(project, "src/a.py", "changed meanwhile", NOW + 60)
    text = "\n".join(harness.start("resume", "conv-1", NOW + 120))
    assert "resume_with_update" in text and "src/a.py" in text and "src/b.py" not in text


def test_compact_with_a_critical_change_starts_fresh_with_the_briefing(
    harness: Harness, project: Path
) -> None:
    write(project, "pyproject.toml", "[project]\n")
    write(project, "src/a.py", "a")
    harness.start("startup", "conv-1")
    harness.touch("pyproject.toml", "src/a.py")
    harness.brief(goal="Carry on", focus="tests")
    write(project, "pyproject.toml", "[project]\nname = 'changed'\n", NOW + 60)
    text = "\n".join(harness.start("compact", "conv-1", NOW + 120))
    assert "start_fresh_with_briefing" in text and "pyproject.toml (critical)" in text
    assert "GOAL: Carry on" in text and text.endswith(briefing.CLOSING)


def test_start_fresh_without_a_briefing_says_how_to_record_one(
    harness: Harness, project: Path
) -> None:
    names = [f"src/m{i}.py" for i in range(6)]
    for name in names:
        write(project, name, "v1")
    harness.start("startup", "conv-1")
    harness.touch(*names)
    for name in names:
        write(project, name, "v2 from elsewhere", NOW + 60)
    text = "\n".join(harness.start("resume", "conv-1", NOW + 120))
    assert "start_fresh_with_briefing — 6 files changed" in text
    assert "No briefing is recorded" in text


def test_the_agents_own_edit_keeps_resume(harness: Harness, project: Path) -> None:
    write(project, "src/a.py", "a")
    harness.start("startup", "conv-1")
    harness.touch("src/a.py")
    write(project, "src/a.py", "my edit", NOW + 60)
    harness.touch("src/a.py", field=tool_use.MODIFIED, now=NOW + 61)
    assert "Context freshness: resume —" in "\n".join(harness.start("resume", "conv-1", NOW + 120))


# --- workspaces at SessionStart ------------------------------------------------------------------


def test_the_bound_workspace_and_its_files_are_listed_on_resume(
    harness: Harness, project: Path
) -> None:
    harness.start("startup", "conv-1")
    ws, _ = workspace_store.current_or_create(harness.agent, str(project), NOW, print)
    workspace_store.write_context(ws, "features/user-auth-context.md", "x", NOW, keywords=["login"])
    text = "\n".join(harness.start("resume", "conv-1", NOW + 60))
    assert f"Your workspace for context hand-off: {ws.path}/ (1 context file):" in text
    assert (
        f"- .tmp/sessions/{ws.id}/features/user-auth-context.md (keywords: login, user-auth, "
        in text
    )
    fresh = "\n".join(harness.start("startup", "conv-2", NOW + 120))
    assert "Your workspace" not in fresh and "agent-hooks context add TASK" not in fresh
    assert "Other live workspaces in this project: 1 (1 context file)" in fresh


def test_session_start_sweeps_idle_workspaces_and_logs_them(
    harness: Harness, project: Path
) -> None:
    stale = workspace_store.create(str(project), NOW - 2 * DAY)
    workspace_store.write_context(stale, "general/x-context.md", "x", NOW - 2 * DAY)
    orphan = workspace_store.create(str(project), NOW - 3 * DAY)
    Path(orphan.manifest_path).unlink()
    harness.start("startup", "conv-1")
    assert not Path(stale.path).exists() and Path(orphan.path).exists()
    log = harness.log()
    assert f"swept 1 workspace idle for 24 h: {stale.id}" in log
    assert f"workspace {orphan.id}: no manifest; hands off" in log


def test_the_agents_own_idle_workspace_survives_its_resume(harness: Harness, project: Path) -> None:
    harness.start("startup", "conv-1", NOW - 3 * DAY)
    ws, _ = workspace_store.current_or_create(harness.agent, str(project), NOW - 3 * DAY, print)
    text = "\n".join(harness.start("resume", "conv-1"))
    assert Path(ws.path).exists() and ws.id in text


def test_one_failing_part_does_not_silence_the_others(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.brief(goal="x")

    def broken(*args: object) -> None:
        raise RuntimeError("disk on fire")

    workspace_store.create(str(harness.project), NOW)  # another agent's: a workspace line
    monkeypatch.setattr(briefing_store, "load", broken)
    text = "\n".join(harness.start("startup", "conv-1"))
    assert "Other live workspaces in this project: 1" in text
    assert "briefing/freshness lines failed: RuntimeError: disk on fire" in harness.log()


def test_no_project_no_lines(harness: Harness) -> None:
    ctx = harness.ctx("SessionStart", {"source": "startup"}, NOW)
    assert (
        workspace_events.session_start_lines(state.fresh(AGENT, NOW), None, NOW, ctx.log)
        + briefing_events.session_start_lines(
            harness.agent, state.fresh(AGENT, NOW), "startup", None, NOW, ctx.environ, ctx.log
        )
        == []
    )


# --- after_write ------------------------------------------------------------


def test_after_write_tracks_a_write_into_a_workspace_with_a_manifest(
    harness: Harness, project: Path
) -> None:
    ws = workspace_store.create(str(project), NOW)
    path = write(project, f".tmp/sessions/{ws.id}/tasks/user-auth-tasks.md", "steps")
    ctx = harness.ctx("PostToolUse", {"session_id": "conv-1"}, NOW + 5)
    workspace_events.after_write(harness.agent, str(project), str(path), "conv-1", NOW + 5, ctx.log)
    doc = json.loads(Path(ws.manifest_path).read_text())
    assert doc["context_files"]["tasks/user-auth-tasks.md"]["keywords"] == [
        "user-auth",
        "user-auth-tasks",
        "tasks",
    ]
    assert doc["context_index"]["user-auth"] == ["tasks/user-auth-tasks.md"]
    assert doc["last_activity"] == "2027-01-15T08:00:05Z"


def test_after_write_recreates_the_manifest_of_the_agents_own_workspace(
    harness: Harness, project: Path
) -> None:
    harness.start("startup", "conv-1")
    ws, _ = workspace_store.current_or_create(harness.agent, str(project), NOW, print)
    Path(ws.manifest_path).unlink()
    path = write(project, f".tmp/sessions/{ws.id}/code/x-context.md", "x")
    workspace_events.after_write(
        harness.agent,
        str(project),
        str(path),
        "conv-1",
        NOW,
        harness.ctx("PostToolUse", {"session_id": "conv-1"}, NOW).log,
    )
    assert list(json.loads(Path(ws.manifest_path).read_text())["context_files"]) == [
        "code/x-context.md"
    ]


def test_after_write_leaves_foreign_unmanaged_dirs_and_non_workspace_paths_alone(
    harness: Harness, project: Path
) -> None:
    harness.start("startup", "conv-1")
    foreign = write(project, ".tmp/sessions/20260101-000000-abcd/code/x.md", "x")
    ctx = harness.ctx("PostToolUse", {"session_id": "conv-1"}, NOW)
    workspace_events.after_write(harness.agent, str(project), str(foreign), "conv-1", NOW, ctx.log)
    assert not (foreign.parents[1] / ".manifest.json").exists()
    assert "has no manifest and is not yours: not tracked" in harness.log()
    ws = workspace_store.create(str(project), NOW)
    for odd in (
        f".tmp/sessions/{ws.id}/.manifest.json",
        ".tmp/sessions/notanid/x.md",
        "src/a.py",
        f".tmp/sessions/{ws.id}/../../x.md",
    ):
        workspace_events.after_write(
            harness.agent, str(project), str(project / odd), "conv-1", NOW, ctx.log
        )
    assert json.loads(Path(ws.manifest_path).read_text())["context_files"] == {}


HOT_PATH_FORBIDDEN = {
    "os",
    "posixpath",
    "json",
    "re",
    "typing",
    "pathlib",
    "dataclasses",
    "enum",
    "collections",
    "functools",
    "subprocess",
    "click",
    "orjson",
    "pathspec",
    "filelock",
    "hashlib",
    "zlib",
}


def test_after_write_imports_only_built_in_modules(harness: Harness, project: Path) -> None:
    ws = workspace_store.create(str(project), NOW)
    target = write(project, f".tmp/sessions/{ws.id}/code/x-context.md", "x")
    script = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks.hooks import hook_runtime
from agent_hooks import identity
from agent_hooks.briefings import briefing_events
from agent_hooks.clients import claude_code
from agent_hooks.workspaces import workspace_events
environ = {{"HOME": {str(harness.home)!r}}}
ctx = hook_runtime.HookContext(claude_code, "PostToolUse", {{"session_id": "c"}}, environ, 1.0)
workspace_events.after_write(identity.Agent("a", {str(harness.state_dir)!r}), {str(project)!r},
                             {str(target)!r}, "c", 1.0, ctx.log)
print(" ".join(sorted(sys.modules)))
"""
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert HOT_PATH_FORBIDDEN.isdisjoint(out), HOT_PATH_FORBIDDEN & set(out)
    assert "code/x-context.md" in json.loads(Path(ws.manifest_path).read_text())["context_files"]


# --- through the real entry point (the lead wires workspace_events into the adapters) ---


def test_session_start_entry_point_injects_the_briefing_within_the_limit(
    run_hook: HookRunner,
) -> None:
    agent = identity.Agent(AGENT, str(run_hook.state_dir))
    project = str(run_hook.project)

    def mutate(doc: dict[str, Any]) -> None:
        briefing.set_goal(doc, "Ship auth", NOW)
        briefing.set_focus(doc, "Login form", NOW)
        for i in range(400):
            briefing.add(doc, "finding", f"finding {i:03d} " + "z" * 80, NOW + i)

    briefing_store.update(agent, project, mutate, NOW)
    payload = run_hook.payload("SessionStart_startup", source="startup", session_id="conv-1")
    text = context_of(run_hook("SessionStart", payload))
    assert len(text) <= 10_000
    assert (
        briefing.HEADER in text
        and briefing.CLOSING in text
        and "[agent-hooks: context trimmed]" not in text
    )
    assert "GOAL: Ship auth" in text and "finding 399" in text and "finding 000" not in text
    assert "oldest entries left out" in text


def test_post_tool_use_entry_point_registers_a_write_into_the_workspace(
    run_hook: HookRunner,
) -> None:
    run_hook(
        "SessionStart",
        run_hook.payload("SessionStart_startup", source="startup", session_id="conv-1"),
    )
    ws = workspace_store.create(str(run_hook.project), NOW)
    target = write(run_hook.project, f".tmp/sessions/{ws.id}/features/pay-context.md", "x")
    payload = run_hook.payload("PostToolUse_Write", session_id="conv-1")
    payload["tool_input"]["file_path"] = str(target)
    payload["tool_response"]["filePath"] = str(target)
    result = run_hook("PostToolUse", payload)
    assert result.code == 0 and result.out is None
    assert (
        "features/pay-context.md" in json.loads(Path(ws.manifest_path).read_text())["context_files"]
    )
    assert str(target) in run_hook.state()["workspace_files"]


def test_after_write_never_writes_a_manifest_through_a_symlink(
    harness: Harness, project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "code").mkdir(parents=True)
    (elsewhere / ".manifest.json").write_text(json.dumps({"context_files": {}}))
    root = Path(workspace_store.ensure_sessions_root(str(project)))
    (root / "20261121-120000-abcd").symlink_to(elsewhere)
    target = root / "20261121-120000-abcd" / "code" / "x.md"
    target.write_text("x")
    ctx = harness.ctx("PostToolUse", {"session_id": "conv-1"}, NOW)
    workspace_events.after_write(harness.agent, str(project), str(target), "conv-1", NOW, ctx.log)
    assert json.loads((elsewhere / ".manifest.json").read_text()) == {"context_files": {}}
    assert "is a symlink" in harness.log()
