"""Codex and Gemini CLI agents are writers like any other (issue 19), through the real hook
entry script run as each client runs it (`entry.py codex PreToolUse`, `entry.py gemini
BeforeTool`) with the payloads captured from Codex 0.169.0 and Gemini CLI 0.61.0.

Every rule that holds between two Claude Code agents holds across clients: an edit or a
visible shell write into a file another writer holds is refused before it runs, in the
refused client's own form, naming the holder (and its client); an allowed edit takes a
lease the other clients are refused by; a holder whose client process is gone stops
blocking at once. For Codex and Gemini the holder process is the hook's parent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hook_runner import ENTRY, HookResult, HookRunner

CC, CX, GM = "proj__cc_1", "proj__cod_1", "proj__gmi_1"
SUB_ID = "01a21462-a282-7b33-b023-d7945151147c"  # the captured Codex subagent's id
B, E = "*** Begin Patch\n", "*** End Patch\n"


def ledger(run_hook: HookRunner) -> Path:
    return run_hook.project / ".git" / "agent-hooks"


# --------------------------------------------------------------------------- each client's call


def claude_write(run_hook: HookRunner, rel: str, agent: str = CC) -> HookResult:
    payload = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / rel), "content": "x\n"}
    )
    return run_hook("PreToolUse", payload, agent=agent)


def codex_patch(
    run_hook: HookRunner,
    patch: str,
    agent: str | None = CX,
    *,
    cwd: Path | None = None,
    event: str = "PreToolUse",
    fixture: str = "codex/PreToolUse_apply_patch_patch_add",
    **fields: Any,
) -> HookResult:
    payload = run_hook.payload(fixture, tool_input={"command": patch}, **fields)
    if cwd is not None:
        payload["cwd"] = str(cwd)
    return run_hook(event, payload, agent=agent, client="codex")


def codex_bash(run_hook: HookRunner, command: str, agent: str = CX, **fields: Any) -> HookResult:
    payload = run_hook.payload(
        "codex/PreToolUse_Bash_shell_write", tool_input={"command": command}, **fields
    )
    return run_hook("PreToolUse", payload, agent=agent, client="codex")


def gemini_call(
    run_hook: HookRunner,
    tool: str,
    tool_input: dict[str, Any],
    agent: str | None = GM,
    event: str = "BeforeTool",
    **fields: Any,
) -> HookResult:
    fixture = {
        "write_file": "gemini/BeforeTool_write_file",
        "replace": "gemini/BeforeTool_replace",
        "run_shell_command": "gemini/BeforeTool_run_shell_command",
    }[tool]
    payload = run_hook.payload(fixture, tool_input=tool_input, **fields)
    return run_hook(event, payload, agent=agent, client="gemini")


def add(rel: str) -> str:
    return f"{B}*** Add File: {rel}\n+x\n{E}"


def update(rel: str) -> str:
    return f"{B}*** Update File: {rel}\n@@\n-a\n+b\n{E}"


# --------------------------------------------------------------------------- each client's forms


def claude_denied(result: HookResult) -> str:
    assert result.code == 0, result.err
    assert result.out is not None, result
    specific = result.out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny", specific
    reason: str = specific["permissionDecisionReason"]
    return reason


def codex_denied(result: HookResult) -> str:
    """Codex's deny: hookSpecificOutput.permissionDecision deny, nothing else."""
    assert result.code == 0, result.err
    assert result.out is not None, result
    assert list(result.out) == ["hookSpecificOutput"], result.out
    specific = result.out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (specific["hookEventName"], specific["permissionDecision"]) == ("PreToolUse", "deny")
    reason: str = specific["permissionDecisionReason"]
    return reason


def gemini_denied(result: HookResult) -> str:
    """Gemini's deny: the top-level decision (it ignores Claude Code's shape)."""
    assert result.code == 0, result.err
    assert result.out is not None, result
    assert set(result.out) == {"decision", "reason"}, result.out
    assert result.out["decision"] == "deny"
    reason: str = result.out["reason"]
    return reason


def allowed(result: HookResult) -> None:
    assert result.code == 0, result.err
    assert result.out is None, result.out


# --------------------------------------------------------------------------- Codex <-> Claude Code


def test_a_codex_patch_leases_its_file_and_a_claude_agent_is_refused_naming_it(
    run_hook: HookRunner,
) -> None:
    allowed(codex_patch(run_hook, add("src/app.py")))
    (lease,) = run_hook.leases()["src/app.py"]
    assert (lease["writer"], lease["agent"], lease["client"]) == (CX, CX, "codex")
    assert lease["pid"] == os.getpid()  # the hook's parent: the client process
    reason = claude_denied(claude_write(run_hook, "src/app.py"))
    assert reason.startswith(f'agent-hooks: src/app.py is being changed by Codex agent "{CX}": ')


def test_a_claude_lease_refuses_a_codex_patch_in_codex_form(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "src/app.py"))
    reason = codex_denied(codex_patch(run_hook, update("src/app.py")))
    assert reason.startswith(f'agent-hooks: src/app.py is being changed by agent "{CC}": ')
    assert [lease["writer"] for lease in run_hook.leases()["src/app.py"]] == [CC]


@pytest.mark.parametrize(
    ("patch", "held"),
    [
        (f"{B}*** Delete File: src/app.py\n{E}", "src/app.py"),
        (
            f"{B}*** Update File: src/app.py\n*** Move to: src/moved.py\n@@\n-a\n+b\n{E}",
            "src/app.py",
        ),
        (
            f"{B}*** Update File: src/free.py\n*** Move to: src/app.py\n@@\n-a\n+b\n{E}",
            "src/app.py",
        ),
        (
            add("free.txt").replace(E, "") + f"*** Update File: src/app.py\n@@\n-a\n+b\n{E}",
            "src/app.py",
        ),
        (add("my docs/read me.md"), "my docs/read me.md"),
    ],
    ids=["delete", "move from", "move to", "several files", "a path with spaces"],
)
def test_every_file_a_patch_touches_is_checked(run_hook: HookRunner, patch: str, held: str) -> None:
    allowed(claude_write(run_hook, held))
    codex_denied(codex_patch(run_hook, patch))
    assert list(run_hook.leases()) == [held]  # a refused patch leases none of its files


def test_relative_paths_climb_from_the_payload_cwd_and_absolute_ones_are_as_written(
    run_hook: HookRunner,
) -> None:
    sub = run_hook.project / "pkg" / "sub"
    sub.mkdir(parents=True)
    allowed(claude_write(run_hook, "top.py"))
    allowed(claude_write(run_hook, "pkg/abs.py"))
    codex_denied(codex_patch(run_hook, update("../../top.py"), cwd=sub))
    codex_denied(codex_patch(run_hook, update("../sub/../../top.py"), cwd=sub))
    codex_denied(codex_patch(run_hook, update(str(run_hook.project / "pkg" / "abs.py")), cwd=sub))
    allowed(codex_patch(run_hook, add("top.py"), cwd=sub))  # pkg/sub/top.py: another file
    assert sorted(run_hook.leases()) == ["pkg/abs.py", "pkg/sub/top.py", "top.py"]


def test_a_patch_through_a_symlink_to_a_held_file_is_refused(run_hook: HookRunner) -> None:
    (run_hook.project / "src").mkdir()
    (run_hook.project / "src" / "app.py").write_text("a\n")
    (run_hook.project / "link.py").symlink_to("src/app.py")
    (run_hook.project / "linked").symlink_to("src")
    allowed(claude_write(run_hook, "src/app.py"))
    codex_denied(codex_patch(run_hook, update("link.py")))
    codex_denied(codex_patch(run_hook, update("linked/app.py")))


def test_hunk_content_that_looks_like_a_header_is_not_a_target(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "held.py"))
    hostile = (
        f"{B}*** Add File: mine.py\n+*** Update File: held.py\n+*** Delete File: held.py\n"
        f"*** Update File: other.py\n@@\n *** Add File: held.py\n-a\n+b\n{E}"
    )
    allowed(codex_patch(run_hook, hostile))
    assert sorted(run_hook.leases()) == ["held.py", "mine.py", "other.py"]


def test_a_move_to_outside_an_update_names_nothing(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "held.py"))
    allowed(codex_patch(run_hook, f"{B}*** Add File: a.py\n+x\n*** Move to: held.py\n{E}"))


def test_a_heredoc_patch_through_codex_shell_is_an_edit(run_hook: HookRunner) -> None:
    """`apply_patch <<'EOF'` run through the shell gets no PostToolUse from Codex: its
    PreToolUse refuses a held file, and leases the free ones (`cd DIR &&` included)."""
    allowed(claude_write(run_hook, "held.py"))
    heredoc = "apply_patch <<'EOF'\n{}EOF\n"
    reason = codex_denied(codex_bash(run_hook, heredoc.format(update("held.py"))))
    assert f'held.py is being changed by agent "{CC}"' in reason
    (run_hook.project / "sub").mkdir()
    allowed(codex_bash(run_hook, "cd sub && " + heredoc.format(add("free.py"))))
    (lease,) = run_hook.leases()["sub/free.py"]
    assert (lease["writer"], lease["client"], lease["source"]) == (CX, "codex", "edit")
    # Any other shell form is read by the shell analysis: refused, nothing leased.
    codex_denied(codex_bash(run_hook, "echo start && " + heredoc.format(update("held.py"))))
    codex_denied(codex_bash(run_hook, "cat p.diff | apply_patch"))


@pytest.mark.parametrize(
    "command",
    ["echo x > held.py", "sed -i s/a/b/ held.py", "cd sub && cp ../x ../held.py", "rm -f held.py"],
)
def test_a_codex_shell_write_into_a_held_file_is_refused(
    run_hook: HookRunner, command: str
) -> None:
    (run_hook.project / "sub").mkdir()
    allowed(claude_write(run_hook, "held.py"))
    reason = codex_denied(codex_bash(run_hook, command))
    assert "This shell command would write" in reason and f'agent "{CC}"' in reason


def test_a_codex_workdir_is_the_payload_cwd(run_hook: HookRunner) -> None:
    """Codex puts an exec_command's workdir into the payload's cwd."""
    (run_hook.project / "sub").mkdir()
    allowed(claude_write(run_hook, "sub/wd.txt"))
    sub = str(run_hook.project / "sub")
    codex_denied(codex_bash(run_hook, "echo in-workdir > wd.txt", cwd=sub))
    allowed(codex_bash(run_hook, "echo in-workdir > wd.txt"))  # the project's wd.txt is free


def test_a_codex_subagent_is_a_writer_of_its_own(run_hook: HookRunner) -> None:
    fixture = "codex/PreToolUse_apply_patch_subagent_patch_add_subagent"
    # Inside a subagent `session_id` is its parent's (PROTOCOL.md); the fixtures were
    # captured in separate runs, so the subagent's is set to the parent fixture's.
    parent_session = run_hook.payload("codex/PreToolUse_apply_patch_patch_add")["session_id"]
    fixture_fields = {"fixture": fixture, "session_id": parent_session}
    allowed(codex_patch(run_hook, add("worker.txt"), **fixture_fields))
    (lease,) = run_hook.leases()["worker.txt"]
    assert (lease["writer"], lease["agent_id"], lease["agent_type"]) == (
        f"{CX}#{SUB_ID}",
        SUB_ID,
        "default",
    )
    # Its lease blocks its parent and another agent; the parent's does not block it.
    parent = codex_denied(codex_patch(run_hook, update("worker.txt")))
    assert f'the default subagent ({SUB_ID[:8]}) of Codex agent "{CX}"' in parent
    claude_denied(claude_write(run_hook, "worker.txt"))
    allowed(codex_patch(run_hook, add("parent.txt")))
    allowed(codex_patch(run_hook, update("parent.txt"), **fixture_fields))
    # SubagentStop ends the subagent's leases.
    stop = run_hook.payload(
        "codex/SubagentStop_default_subagent", agent_id=SUB_ID, session_id=parent_session
    )
    allowed(run_hook("SubagentStop", stop, agent=CX, client="codex"))
    assert "worker.txt" not in run_hook.leases()
    allowed(claude_write(run_hook, "worker.txt"))


def test_codex_without_agent_name_is_its_session(run_hook: HookRunner) -> None:
    allowed(codex_patch(run_hook, add("a.py"), agent=None))
    (lease,) = run_hook.leases()["a.py"]
    session = lease["conversation"]
    assert session == "01a21462-88b2-7e92-8dab-1a3bd2c2e3ee" and lease["writer"] == f"~{session}"
    claude_denied(claude_write(run_hook, "a.py"))
    other = codex_patch(run_hook, update("a.py"), agent=None, session_id="01a2-other-session")
    assert "the unnamed Codex agent of conversation 01a21462" in codex_denied(other)


def test_codex_post_tool_use_records_what_the_patch_did(run_hook: HookRunner) -> None:
    run_hook("SessionStart", "codex/SessionStart_startup", agent=CX, client="codex")
    multi = "codex/PostToolUse_apply_patch_patch_multi"
    for rel in ("sub/multi_add.txt", "multi_upd.txt"):
        (run_hook.project / rel).parent.mkdir(exist_ok=True)
        (run_hook.project / rel).write_text("x\n")
    assert run_hook("PostToolUse", multi, agent=CX, client="codex").out is None
    move = "codex/PostToolUse_apply_patch_patch_move"
    assert run_hook("PostToolUse", move, agent=CX, client="codex").out is None
    failed = run_hook.payload(
        "codex/PostToolUse_apply_patch_patch_add", tool_response="apply_patch verification failed"
    )
    assert run_hook("PostToolUse", failed, agent=CX, client="codex").out is None
    doc = run_hook.state(CX)
    project = run_hook.project
    assert doc["client"] == "codex"
    assert doc["files_created"] == [f"{project}/sub/multi_add.txt", f"{project}/moved/mv_dst.txt"]
    assert doc["files_modified"] == [
        f"{project}/multi_upd.txt",
        f"{project}/multi_del.txt",
        f"{project}/mv_src.txt",
    ]


def test_a_codex_shell_write_is_leased_after_it_ran(run_hook: HookRunner) -> None:
    """Codex reports no changed files: the visible writes of the command are read from it."""
    (run_hook.project / "a.txt").write_text("hi\n")
    result = run_hook("PostToolUse", "codex/PostToolUse_Bash_shell_write", agent=CX, client="codex")
    assert result.out is None
    (lease,) = run_hook.leases()["a.txt"]
    assert (lease["writer"], lease["client"], lease["source"]) == (CX, "codex", "bash")
    claude_denied(claude_write(run_hook, "a.txt"))
    # What it wrote but does not exist (removed), a script's writes: nothing leased.
    for command in ("rm -f gone.txt", 'python3 -c \'open("b.txt", "w")\''):
        payload = run_hook.payload(
            "codex/PostToolUse_Bash_shell_write", tool_input={"command": command}
        )
        run_hook("PostToolUse", payload, agent=CX, client="codex")
    assert list(run_hook.leases()) == ["a.txt"]


def test_codex_session_start_context_and_session_end_release(run_hook: HookRunner) -> None:
    started = run_hook("SessionStart", "codex/SessionStart_startup", agent=CX, client="codex")
    assert started.out is not None and list(started.out) == ["hookSpecificOutput"]
    specific = started.out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}
    assert specific["hookEventName"] == "SessionStart"
    assert f'you are agent "{CX}"' in specific["additionalContext"]
    allowed(codex_patch(run_hook, add("a.py")))
    allowed(run_hook("SessionEnd", "codex/SessionEnd_other", agent=CX, client="codex"))
    assert run_hook.leases() == {}
    assert run_hook.state(CX)["active"] is False


# --------------------------------------------------------------------------- Gemini <-> Claude Code


def test_a_gemini_write_leases_its_file_and_a_claude_agent_is_refused_naming_it(
    run_hook: HookRunner,
) -> None:
    allowed(gemini_call(run_hook, "write_file", {"file_path": "rel_dir/rel.txt", "content": "x"}))
    (lease,) = run_hook.leases()["rel_dir/rel.txt"]  # relative to the payload's cwd
    assert (lease["writer"], lease["client"], lease["pid"]) == (GM, "gemini", os.getpid())
    reason = claude_denied(claude_write(run_hook, "rel_dir/rel.txt"))
    assert f'is being changed by Gemini CLI agent "{GM}"' in reason


def test_a_claude_lease_refuses_gemini_in_gemini_form(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "existing.txt"))
    path = str(run_hook.project / "existing.txt")
    replace = {"file_path": path, "instruction": "i", "old_string": "a", "new_string": "b"}
    reason = gemini_denied(gemini_call(run_hook, "replace", replace))
    assert reason.startswith(f'agent-hooks: existing.txt is being changed by agent "{CC}": ')
    gemini_denied(gemini_call(run_hook, "write_file", {"file_path": "./existing.txt"}))
    shell = {"command": "echo hi >> existing.txt", "description": "append"}
    assert "This shell command would write" in gemini_denied(
        gemini_call(run_hook, "run_shell_command", shell)
    )


def test_gemini_shell_runs_in_its_dir_path(run_hook: HookRunner) -> None:
    (run_hook.project / "sub").mkdir()
    allowed(claude_write(run_hook, "sub/a.txt"))
    command = {"command": "echo x > a.txt", "dir_path": "sub"}
    gemini_denied(gemini_call(run_hook, "run_shell_command", command))
    allowed(gemini_call(run_hook, "run_shell_command", {"command": "echo x > a.txt"}))
    absolute = {"command": "echo x > a.txt", "dir_path": str(run_hook.project / "sub")}
    gemini_denied(gemini_call(run_hook, "run_shell_command", absolute))


def test_a_gemini_subagent_is_its_parent_writer(run_hook: HookRunner) -> None:
    """Gemini's subagents carry the parent's session and no id: one writer with it."""
    allowed(gemini_call(run_hook, "write_file", {"file_path": "sub.txt", "content": "p"}))
    parent_session = run_hook.payload("gemini/BeforeTool_write_file")["session_id"]
    # the fixtures come from separate runs: the subagent's session is its parent's
    sub = run_hook.payload("gemini/BeforeTool_write_file_in_subagent", session_id=parent_session)
    allowed(run_hook("BeforeTool", sub, agent=GM, client="gemini"))
    assert [item["writer"] for item in run_hook.leases()["sub.txt"]] == [GM]


def test_gemini_after_tool_records_created_modified_and_nothing_on_error(
    run_hook: HookRunner,
) -> None:
    run_hook("SessionStart", "gemini/SessionStart", agent=GM, client="gemini")
    (run_hook.project / "new.txt").write_text("alpha\nline two\n")
    (run_hook.project / "existing.txt").write_text("first line\nnew line\nlast line\n")
    for fixture in ("AfterTool_write_file", "AfterTool_replace", "AfterTool_replace_error"):
        result = run_hook("AfterTool", f"gemini/{fixture}", agent=GM, client="gemini")
        assert result.out is None, (fixture, result)
    doc = run_hook.state(GM)
    assert doc["client"] == "gemini"
    assert doc["files_created"] == [f"{run_hook.project}/new.txt"]
    assert doc["files_modified"] == [f"{run_hook.project}/existing.txt"]


def test_gemini_context_reaches_the_model_only_where_gemini_carries_it(
    run_hook: HookRunner,
) -> None:
    started = run_hook("SessionStart", "gemini/SessionStart", agent=GM, client="gemini")
    assert started.out is not None
    assert started.out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert f'you are agent "{GM}"' in started.out["hookSpecificOutput"]["additionalContext"]
    # A refused writer is told at its next AfterTool (BeforeTool's context reaches nowhere).
    allowed(claude_write(run_hook, "held.txt"))
    gemini_denied(gemini_call(run_hook, "write_file", {"file_path": "held.txt", "content": "x"}))
    run_hook("SessionEnd", "SessionEnd", agent=CC)
    (run_hook.project / "new.txt").write_text("x\n")
    told = run_hook("AfterTool", "gemini/AfterTool_write_file", agent=GM, client="gemini")
    assert told.out is not None and set(told.out) == {"hookSpecificOutput"}
    assert told.out["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "held.txt is free now" in told.out["hookSpecificOutput"]["additionalContext"]


def test_gemini_after_agent_and_session_end(run_hook: HookRunner) -> None:
    run_hook("SessionStart", "gemini/SessionStart", agent=GM, client="gemini")
    allowed(gemini_call(run_hook, "write_file", {"file_path": "a.txt", "content": "x"}))
    allowed(run_hook("AfterAgent", "gemini/AfterAgent", agent=GM, client="gemini"))
    assert list(run_hook.leases()) == ["a.txt"]  # a turn ended: the conversation goes on
    allowed(run_hook("SessionEnd", "gemini/SessionEnd", agent=GM, client="gemini"))
    assert run_hook.leases() == {}


# --------------------------------------------------------------------------- all three


def test_a_mixed_swarm_each_refused_the_others_files(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "claude.py"))
    allowed(codex_patch(run_hook, add("codex.py")))
    allowed(gemini_call(run_hook, "write_file", {"file_path": "gemini.py", "content": "x"}))
    claude_denied(claude_write(run_hook, "codex.py"))
    claude_denied(claude_write(run_hook, "gemini.py"))
    codex_denied(codex_patch(run_hook, update("claude.py")))
    codex_denied(codex_patch(run_hook, update("gemini.py")))
    gemini_denied(gemini_call(run_hook, "write_file", {"file_path": "claude.py"}))
    gemini_denied(gemini_call(run_hook, "write_file", {"file_path": "codex.py"}))
    assert {rel: items[0]["client"] for rel, items in run_hook.leases().items()} == {
        "claude.py": "claude",
        "codex.py": "codex",
        "gemini.py": "gemini",
    }


# --------------------------------------------------------------------------- liveness


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_a_holder_whose_client_was_killed_stops_blocking_at_once(
    run_hook: HookRunner, tmp_path: Path, client: str
) -> None:
    """The hook's parent is the client: kill it with SIGKILL (no SessionEnd runs) and the
    lease it held counts for nothing."""
    if client == "codex":
        payload = run_hook.payload(
            "codex/PreToolUse_apply_patch_patch_add", tool_input={"command": add("held.py")}
        )
        event = "PreToolUse"
    else:
        payload = run_hook.payload(
            "gemini/BeforeTool_write_file", tool_input={"file_path": "held.py", "content": "x"}
        )
        event = "BeforeTool"
    stdin = tmp_path / "payload.json"
    stdin.write_text(json.dumps(payload))
    script = (
        f'"{sys.executable}" -IS "{ENTRY}" {client} {event} < "{stdin}"; echo ran; exec sleep 60'
    )
    env = run_hook.env(CX, client=client)
    stand_in = subprocess.Popen(  # the client process: it runs the hook, then lives on
        ["/bin/sh", "-c", script], env=env, cwd=run_hook.project, stdout=subprocess.PIPE
    )
    try:
        assert stand_in.stdout is not None and stand_in.stdout.readline() == b"ran\n"
        (lease,) = run_hook.leases()["held.py"]
        assert (lease["pid"], lease["client"]) == (stand_in.pid, client)
        claude_denied(claude_write(run_hook, "held.py"))
    finally:
        stand_in.send_signal(signal.SIGKILL)
        stand_in.wait()
    allowed(claude_write(run_hook, "held.py"))


# --------------------------------------------------------------------------- context before a tool


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *ident, *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_a_note_before_a_tool_runs_reaches_each_client_where_it_can(tmp_path: Path) -> None:
    """A file another worktree is changing is allowed with a note: Codex gets it with its
    PreToolUse at once (additionalContext alone, never `allow`), Gemini at its next
    AfterTool (BeforeTool's context reaches nowhere)."""
    main, wt = tmp_path / "main", tmp_path / "wt"
    main.mkdir()
    _git(main, "init", "-q", "-b", "main")
    (main / "shared.py").write_text("v1\n")
    _git(main, "add", ".")
    _git(main, "commit", "-q", "-m", "one")
    _git(main, "worktree", "add", "-q", "-b", "feature", str(wt))
    home = tmp_path / "home"
    home.mkdir()
    in_main = HookRunner(home, Path(os.path.realpath(main)))
    in_wt = HookRunner(home, Path(os.path.realpath(wt)))
    allowed(claude_write(in_main, "shared.py"))
    allowed(claude_write(in_main, "other.py"))

    noted = codex_patch(in_wt, update("shared.py"))
    assert noted.out is not None
    specific = noted.out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}  # no permissionDecision
    assert "also being changed in another worktree" in specific["additionalContext"]

    kept = gemini_call(in_wt, "write_file", {"file_path": "other.py", "content": "x"})
    allowed(kept)
    (in_wt.project / "new.txt").write_text("x\n")
    told = in_wt("AfterTool", "gemini/AfterTool_write_file", agent=GM, client="gemini")
    assert told.out is not None
    assert (
        "also being changed in another worktree"
        in (told.out["hookSpecificOutput"]["additionalContext"])
    )


# --------------------------------------------------------------------------- the rest of the rules


def reserve_src(run_hook: HookRunner, agent: str, client: str | None = None) -> None:
    """`agent` (of `client`) reserves src/** for farmhand-42, as `agent-hooks reserve` does."""
    import time

    from agent_hooks.ledger import reservation_store
    from agent_hooks.ledger.repo import Repo
    from agent_hooks.reservations import pattern
    from agent_hooks.writers import Writer

    outcome = reservation_store.reserve(
        Repo(str(run_hook.project), str(run_hook.state_dir)),
        Writer(agent, None, client=client),
        [("src/**", pattern.compile("src/**"))],
        time.time(),
        reason="farmhand-42",
        ttl=3600,
        shared=False,
        keep=True,
    )
    assert outcome.changed


def test_a_claude_reservation_refuses_codex_and_gemini(run_hook: HookRunner) -> None:
    reserve_src(run_hook, CC)
    reason = codex_denied(codex_patch(run_hook, add("src/new.py")))
    assert reason.startswith("agent-hooks: src/new.py is reserved by another agent: ")
    assert f'agent "{CC}" holds src/** (exclusive, reason: farmhand-42' in reason
    write = {"file_path": "src/x.py", "content": "x"}
    assert "farmhand-42" in gemini_denied(gemini_call(run_hook, "write_file", write))
    shell = {"command": "touch src/y.py"}
    assert "farmhand-42" in gemini_denied(gemini_call(run_hook, "run_shell_command", shell))


def test_a_codex_reservation_refuses_a_claude_agent_naming_its_client(
    run_hook: HookRunner,
) -> None:
    """The reservation records the client its agent ran in (`agent-hooks reserve` from a
    Codex pane); the refusal, read from the ledger's index, names it as a lease's does."""
    reserve_src(run_hook, CX, client="codex")
    reason = claude_denied(claude_write(run_hook, "src/app.py"))
    assert f'Codex agent "{CX}" holds src/** (exclusive, reason: farmhand-42' in reason
    bash = run_hook.payload("PreToolUse_Bash", tool_input={"command": "echo x > src/b.py"})
    assert f'Codex agent "{CX}" holds src/**' in claude_denied(run_hook("PreToolUse", bash))


def test_a_refused_codex_agent_is_told_when_the_file_frees(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "held.py"))
    codex_denied(codex_patch(run_hook, update("held.py")))
    run_hook("SessionEnd", "SessionEnd", agent=CC)
    (run_hook.project / "add.txt").write_text("x\n")
    told = run_hook(
        "PostToolUse", "codex/PostToolUse_apply_patch_patch_add", agent=CX, client="codex"
    )
    assert told.out is not None and list(told.out) == ["hookSpecificOutput"]
    specific = told.out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PostToolUse"
    assert "held.py is free now" in specific["additionalContext"]


def test_session_start_says_who_of_every_client_holds_what(run_hook: HookRunner) -> None:
    allowed(codex_patch(run_hook, add("codex.py")))
    allowed(gemini_call(run_hook, "write_file", {"file_path": "gemini.py", "content": "x"}))
    started = run_hook("SessionStart", "SessionStart_startup", agent=CC)
    assert started.out is not None
    text = started.out["hookSpecificOutput"]["additionalContext"]
    assert f'Codex agent "{CX}"' in text and "codex.py" in text
    assert f'Gemini CLI agent "{GM}"' in text and "gemini.py" in text
