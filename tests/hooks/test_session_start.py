"""SessionStart through the real entry script: registration, trails across sources,
the sweep, and the context the model is given."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_hooks import identity, repository
from agent_hooks.agents import trail_archive
from hook_runner import AGENT, HookRunner, context_of, write_state

DAY = 86400


def start(
    run_hook: HookRunner, source: str = "startup", session: str = "conv-1", **kw: object
) -> str:
    name = {
        "startup": "SessionStart_startup",
        "resume": "SessionStart_resume",
        "compact": "SessionStart_compact",
    }.get(source, "SessionStart_startup")
    payload = run_hook.payload(name, source=source, session_id=session)
    return context_of(run_hook("SessionStart", payload, **kw))  # type: ignore[arg-type]


def edit(run_hook: HookRunner, rel: str, session: str = "conv-1") -> None:
    payload = run_hook.payload("PostToolUse_Edit", session_id=session)
    payload["tool_input"]["file_path"] = str(run_hook.project / rel)
    result = run_hook("PostToolUse", payload)
    assert result.code == 0 and result.out is None, result


def test_startup_registers_the_agent(run_hook: HookRunner) -> None:
    text = start(run_hook)
    doc = run_hook.state()
    assert doc["registered"] is True and doc["active"] is True
    assert doc["agent_name"] == AGENT
    assert doc["conversation_id"] == "conv-1" and doc["source"] == "startup"
    assert doc["project_root"] == str(run_hook.project)
    assert doc["pid"] == os.getpid()
    assert abs(doc["last_activity"] - time.time()) < 60
    assert run_hook.state_path().stat().st_mode & 0o777 == 0o600
    assert AGENT in text and str(run_hook.project) in text
    assert "No other agent is active" in text
    assert run_hook.log_lines() == []


def test_project_root_falls_back_to_the_git_top_level_of_cwd(run_hook: HookRunner) -> None:
    sub = run_hook.project / "src" / "deep"
    sub.mkdir(parents=True)
    payload = run_hook.payload("SessionStart_startup", cwd=str(sub))
    text = context_of(run_hook("SessionStart", payload, env={"CLAUDE_PROJECT_DIR": ""}, cwd=sub))
    assert run_hook.state()["project_root"] == str(run_hook.project)
    assert str(run_hook.project) in text


def test_outside_any_project(run_hook: HookRunner, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    if repository.git_top_level(str(plain)) is not None:
        pytest.skip("the temp directory lies inside a git work tree")
    payload = run_hook.payload("SessionStart_startup", cwd=str(plain))
    text = context_of(run_hook("SessionStart", payload, env={"CLAUDE_PROJECT_DIR": ""}, cwd=plain))
    assert run_hook.state()["project_root"] is None
    assert "outside any project" in text


def test_claude_config_dir_is_honoured(run_hook: HookRunner, tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    start(run_hook, env={"CLAUDE_CONFIG_DIR": str(config)})
    assert (config / f"state-{AGENT}.json").is_file()
    assert not run_hook.state_dir.exists()


@pytest.mark.parametrize("source", ["startup", "clear"])
def test_startup_and_clear_archive_the_previous_trail(run_hook: HookRunner, source: str) -> None:
    start(run_hook, session="conv-1")
    edit(run_hook, "a.py", "conv-1")
    text = start(run_hook, source=source, session="conv-2")
    doc = run_hook.state()
    assert doc["files_modified"] == []
    assert doc["conversation_id"] == "conv-2"
    agent = identity.Agent(AGENT, str(run_hook.state_dir))
    archived = trail_archive.load(agent, "conv-1")
    assert archived is not None
    assert archived["files_modified"] == [str(run_hook.project / "a.py")]
    assert "new file trail" in text and "archived" in text


@pytest.mark.parametrize("source", ["resume", "compact", "something-new"])
def test_resume_compact_and_unknown_sources_continue_the_trail(
    run_hook: HookRunner, source: str
) -> None:
    start(run_hook, session="conv-1")
    edit(run_hook, "a.py")
    text = start(run_hook, source=source, session="conv-1")
    doc = run_hook.state()
    assert doc["files_modified"] == [str(run_hook.project / "a.py")]
    assert doc["source"] == source
    assert "continues" in text


def test_the_field_is_source_not_trigger(run_hook: HookRunner) -> None:
    start(run_hook, session="conv-1")
    edit(run_hook, "a.py")
    payload = run_hook.payload("SessionStart_resume", session_id="conv-1", trigger="startup")
    context_of(run_hook("SessionStart", payload))
    assert run_hook.state()["files_modified"] == [str(run_hook.project / "a.py")]


def test_resuming_an_archived_conversation_brings_its_trail_back(run_hook: HookRunner) -> None:
    start(run_hook, session="conv-1")
    edit(run_hook, "one.py", "conv-1")
    start(run_hook, source="clear", session="conv-2")
    edit(run_hook, "two.py", "conv-2")
    start(run_hook, source="resume", session="conv-1")
    assert run_hook.state()["files_modified"] == [str(run_hook.project / "one.py")]
    agent = identity.Agent(AGENT, str(run_hook.state_dir))
    archived = trail_archive.load(agent, "conv-2")
    assert archived is not None and archived["files_modified"] == [str(run_hook.project / "two.py")]


def test_other_active_agents_in_the_project_are_named(run_hook: HookRunner, tmp_path: Path) -> None:
    now = int(time.time())
    project = str(run_hook.project)
    base = {"registered": True, "active": True, "project_root": project, "last_activity": now - 120}
    write_state(run_hook.state_dir, "proj__cc_2", base | {"pid": os.getpid()})
    write_state(
        run_hook.state_dir, "proj__cc_3", base | {"pid": None}
    )  # no pid: heard from recently
    write_state(run_hook.state_dir, "proj__cc_4", base | {"active": False})  # ended
    write_state(
        run_hook.state_dir, "proj__cc_5", base | {"pid": None, "last_activity": now - 2 * 3600}
    )
    write_state(
        run_hook.state_dir, "other__cc_1", base | {"project_root": str(tmp_path / "elsewhere")}
    )
    dead = _dead_pid()
    write_state(run_hook.state_dir, "proj__cc_6", base | {"pid": dead})
    text = start(run_hook)
    line = next(ln for ln in text.splitlines() if ln.startswith("Other agents active"))
    assert "proj__cc_2" in line and "proj__cc_3" in line
    for name in ("proj__cc_4", "proj__cc_5", "other__cc_1", "proj__cc_6", AGENT):
        assert name not in line


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(
    "junk",
    [
        # a pid os.kill cannot take; numbers JSON allows but int() refuses
        '{"pid": 1099511627776, "active": true, "project_root": "PROJECT"}',
        '{"last_activity": 1e400, "active": true, "project_root": "PROJECT"}',
        '{"session_start": -1e400, "project_root": "PROJECT"}',
        "[1, 2, 3]",
        "{broken",
    ],
    ids=[
        "huge pid",
        "infinite last_activity",
        "infinite session_start",
        "not an object",
        "not json",
    ],
)
def test_another_agents_odd_state_file_does_not_break_my_session_start(
    run_hook: HookRunner, junk: str
) -> None:
    write_state(run_hook.state_dir, "proj__cc_9", junk.replace("PROJECT", str(run_hook.project)))
    text = start(run_hook)
    assert AGENT in text
    assert run_hook.state()["registered"] is True


def test_unset_agent_name_uses_the_shared_file_and_warns_when_shared(run_hook: HookRunner) -> None:
    first = start(run_hook, session="conv-1", agent=None)
    assert run_hook.state_path(None).is_file()
    assert "without AGENT_NAME" in first
    assert "Warning" not in first
    pane_2 = {"CLAUDE_PID": str(os.getppid())}  # another live client process
    second = start(run_hook, session="conv-2", agent=None, env=pane_2)
    assert "Warning" in second and "conv-1" in second and "agent-state.json" in second
    again = start(run_hook, source="resume", session="conv-2", agent=None, env=pane_2)
    assert "Warning" not in again


def test_one_agent_name_in_two_running_panes_is_warned_in_both_and_told_apart(
    run_hook: HookRunner,
) -> None:
    """Issue 18, defect 13: a copied launch line starts two panes with one AGENT_NAME.
    Pane 2's start used to say "no other agent is active", archive pane 1's live
    trail, and the two overwrote each other's files unrefused."""
    start(run_hook, session="pane-1")
    edit(run_hook, "a.py", session="pane-1")
    pane_2 = {"CLAUDE_PID": str(os.getppid())}
    second = start(run_hook, session="pane-2", env=pane_2)
    assert "is also used by another conversation that is still running (pane-1)" in second
    assert str(run_hook.project / "a.py") in run_hook.state()["files_modified"]  # not archived
    read = run_hook.payload("PostToolUse_Read", session_id="pane-1")
    read["tool_input"]["file_path"] = str(run_hook.project / "a.py")
    told = context_of(run_hook("PostToolUse", read), "PostToolUse")  # pane 1's next hook
    assert "is also used by another conversation that is still running (pane-2)" in told
    mine = run_hook.payload(
        "PreToolUse_Write",
        session_id="pane-1",
        tool_input={"file_path": str(run_hook.project / "b.py"), "content": "1"},
    )
    assert run_hook("PreToolUse", mine).out is None
    theirs = dict(mine, session_id="pane-2")
    refused = run_hook("PreToolUse", theirs, env=pane_2).out["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny"


@pytest.mark.parametrize("name", ["../evil", "a/b", "x" * 200, "a\x1bb", ".."])
def test_bad_agent_name_fails_open_with_a_reason(
    run_hook: HookRunner, tmp_path: Path, name: str
) -> None:
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    result = run_hook("SessionStart", "SessionStart_startup", agent=name)
    text = context_of(result)
    assert "AGENT_NAME" in text
    lines = run_hook.log_lines()
    assert len(lines) == 1 and "fail open" in lines[0]
    after = sorted(str(p) for p in tmp_path.rglob("*"))
    assert set(after) - set(before) == {str(run_hook.state_dir), str(run_hook.log_file)}


def test_old_state_files_are_swept_and_others_kept(run_hook: HookRunner) -> None:
    old = time.time() - 8 * DAY
    gone = write_state(run_hook.state_dir, "stale__cc_1", {}, mtime=old)
    lock = run_hook.state_dir / "state-stale__cc_1.json.lock"
    lock.write_text("")
    fresh = write_state(run_hook.state_dir, "fresh__cc_1", {}, mtime=time.time() - DAY)
    settings = run_hook.state_dir / "settings.json"
    settings.write_text("{}")
    os.utime(settings, (old, old))
    own = write_state(run_hook.state_dir, AGENT, {"registered": True}, mtime=old)
    start(run_hook)
    assert not gone.exists() and not lock.exists()
    assert fresh.exists() and settings.exists() and own.exists()
    assert any("swept" in line for line in run_hook.log_lines())


def test_a_corrupt_state_file_is_moved_aside_and_reported(run_hook: HookRunner) -> None:
    write_state(run_hook.state_dir, AGENT, "{truncated")
    text = start(run_hook)
    corrupt = list(run_hook.state_dir.glob(f"state-{AGENT}.json.corrupt-*"))
    assert len(corrupt) == 1 and corrupt[0].read_text() == "{truncated"
    assert "not valid JSON" in text
    assert run_hook.state()["registered"] is True
    assert "not valid JSON" not in start(run_hook, source="resume")  # said once


def test_the_context_fits_the_clients_cap(run_hook: HookRunner) -> None:
    now = int(time.time())
    for i in range(400):
        write_state(
            run_hook.state_dir,
            f"proj__cc_{i + 10}_{'x' * 60}",
            {
                "active": True,
                "pid": None,
                "project_root": str(run_hook.project),
                "last_activity": now,
            },
        )
    text = start(run_hook)
    assert len(text) <= 10_000
    assert text.startswith("agent-hooks: you are agent")


def test_session_start_prints_exactly_one_json_object(run_hook: HookRunner) -> None:
    result = run_hook("SessionStart", "SessionStart_startup")
    assert result.code == 0 and result.err == ""
    assert set(result.out) == {"hookSpecificOutput"}
    json.dumps(result.out)


@pytest.mark.parametrize(
    ("name", "why"),
    [("✳ Claude Code", "pane title"), ("%17", "tmux pane id"), ("⠂ fix the tests", "pane title")],
)
def test_a_name_that_was_not_chosen_is_warned_to_the_model_and_the_person(
    run_hook: HookRunner, name: str, why: str
) -> None:
    """AGENT_NAME taken from a pane title or pane id (a launch-script slip): the agent
    still works under it, and both the model and the person are told how to relaunch."""
    result = run_hook("SessionStart", "SessionStart_startup", agent=name)
    assert result.code == 0 and result.out is not None
    text = context_of(result)
    assert f"Warning: AGENT_NAME {name!r} is probably not a chosen name" in text and why in text
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (recipe,) = {  # the Quickstart's Claude Code pane, its comment aside
        line.partition("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith("agent-hooks launch claude")
    }
    assert f"`{recipe}`" in text  # the README's launch line, word for word
    assert why in result.out["systemMessage"] and result.out["systemMessage"].startswith(
        "agent-hooks: "
    )
    assert run_hook.state(name)["registered"] is True


def test_a_chosen_name_gets_no_warning(run_hook: HookRunner) -> None:
    result = run_hook("SessionStart", "SessionStart_startup")
    assert result.out is not None and "systemMessage" not in result.out
    assert "Warning" not in context_of(result)


def test_unset_name_while_a_named_agent_is_active_is_warned_to_both(run_hook: HookRunner) -> None:
    start(run_hook, session="conv-named")  # proj__cc_1 is active in the project
    result = run_hook(
        "SessionStart",
        run_hook.payload("SessionStart_startup", session_id="conv-anon"),
        agent=None,
    )
    text = context_of(result)
    assert "AGENT_NAME is unset while other agents are active" in text and AGENT in text
    assert (
        result.out is not None
        and "Give each agent its own AGENT_NAME" in (result.out["systemMessage"])
    )
