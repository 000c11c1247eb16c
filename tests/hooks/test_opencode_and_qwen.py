"""opencode and Qwen Code agents are writers like any other (issue 32), through the real
hook entry script run as each is run — `entry.py opencode tool.execute.before` as
agent-hooks' opencode plugin spawns it (with opencode's environment: `OPENCODE_PID`),
`entry.py qwen PreToolUse` as Qwen Code runs a command hook (with `QWEN_PROJECT_DIR`,
and `CLAUDE_PROJECT_DIR` and `GEMINI_PROJECT_DIR` too) — with the payloads captured
from opencode 1.18.33 (through the plugin) and Qwen Code 0.24.4.

An edit or a visible shell write into a file another writer holds is refused before it
runs, in the client's own form, naming the holder and its client; an allowed edit takes
a lease every other client is refused by; an opencode subagent (a child session) is a
writer of its own; a holder whose client process is gone stops blocking at once.
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

CC, OC, QW = "proj__cc_1", "proj__oc_1", "proj__qw_1"
CHILD = "ses_dda26cf55ffeLzRDdMXczemXPd"  # the captured opencode subagent's session
QWEN_SUB = "general-purpose-call_t"  # the captured Qwen Code subagent's id
B, E = "*** Begin Patch\n", "*** End Patch"


def claude_write(run_hook: HookRunner, rel: str, agent: str = CC) -> HookResult:
    payload = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / rel), "content": "x\n"}
    )
    return run_hook("PreToolUse", payload, agent=agent)


def claude_denied(result: HookResult) -> str:
    assert result.code == 0, result.err
    assert result.out is not None, result
    reason: str = result.out["hookSpecificOutput"]["permissionDecisionReason"]
    assert result.out["hookSpecificOutput"]["permissionDecision"] == "deny"
    return reason


def allowed(result: HookResult) -> None:
    assert result.code == 0, result.err
    assert result.out is None, result.out


# --------------------------------------------------------------------------- opencode


def opencode_call(
    run_hook: HookRunner,
    fixture: str,
    agent: str | None = OC,
    event: str = "tool.execute.before",
    **fields: Any,
) -> HookResult:
    payload = run_hook.payload(f"opencode/{fixture}", **fields)
    return run_hook(event, payload, agent=agent, client="opencode")


def opencode_write(run_hook: HookRunner, rel: str, **fields: Any) -> HookResult:
    path = rel if rel.startswith("/") else str(run_hook.project / rel)
    return opencode_call(
        run_hook,
        "tool.execute.before_write",
        tool_input={"filePath": path, "content": "x\n"},
        **fields,
    )


def opencode_sub_write(run_hook: HookRunner, rel: str, child: str = CHILD) -> HookResult:
    parent = run_hook.payload("opencode/tool.execute.before_write")["session_id"]
    return opencode_write(run_hook, rel, agent_id=child, agent_type="general", session_id=parent)


def opencode_denied(result: HookResult) -> str:
    """The plugin's refusal: `{"deny": reason}` and nothing else."""
    assert result.code == 0, result.err
    assert result.out is not None and set(result.out) == {"deny"}, result
    reason: str = result.out["deny"]
    return reason


def test_an_opencode_write_leases_its_file_and_a_claude_agent_is_refused_naming_it(
    run_hook: HookRunner,
) -> None:
    allowed(opencode_write(run_hook, "src/app.py"))
    (lease,) = run_hook.leases()["src/app.py"]
    assert (lease["writer"], lease["client"], lease["pid"]) == (OC, "opencode", os.getpid())
    assert lease["tool_use_id"] == "call_write"
    reason = claude_denied(claude_write(run_hook, "src/app.py"))
    assert reason.startswith(f'agent-hooks: src/app.py is being changed by opencode agent "{OC}": ')


def test_a_claude_lease_refuses_every_opencode_tool_in_the_plugins_form(
    run_hook: HookRunner,
) -> None:
    allowed(claude_write(run_hook, "held.txt"))
    (run_hook.project / "sub").mkdir()
    allowed(claude_write(run_hook, "sub/wd.txt"))
    held = str(run_hook.project / "held.txt")
    refused = [
        opencode_write(run_hook, "held.txt"),
        opencode_write(run_hook, "./held.txt"),  # relative to the plugin's cwd
        opencode_call(
            run_hook,
            "tool.execute.before_edit",
            tool_input={"filePath": held, "oldString": "a", "newString": "b"},
        ),
        opencode_call(
            run_hook,
            "tool.execute.before_bash",
            tool_input={"command": "echo x >> held.txt", "description": "append"},
        ),
        opencode_call(
            run_hook,
            "tool.execute.before_bash_workdir",
            tool_input={"command": "echo x > wd.txt", "workdir": "sub", "description": "d"},
        ),
        opencode_call(
            run_hook,
            "tool.execute.before_apply_patch_add",
            tool_input={
                "patchText": f"{B}*** Add File: new.txt\n+n\n*** Delete File: held.txt\n{E}"
            },
        ),
    ]
    for result in refused:
        reason = opencode_denied(result)
        assert f'is being changed by agent "{CC}"' in reason, reason
    assert sorted(run_hook.leases()) == ["held.txt", "sub/wd.txt"]  # a refused patch leases none
    allowed(  # the project's own wd.txt is another file
        opencode_call(
            run_hook,
            "tool.execute.before_bash",
            tool_input={"command": "echo x > wd.txt", "description": "d"},
        )
    )


def test_an_opencode_subagent_is_a_writer_of_its_own(run_hook: HookRunner) -> None:
    """A child session: its lease blocks its parent session and a sibling; the parent's
    does not block it; its idle ends its leases."""
    allowed(opencode_sub_write(run_hook, "worker.txt"))
    (lease,) = run_hook.leases()["worker.txt"]
    assert (lease["writer"], lease["agent_id"], lease["agent_type"]) == (
        f"{OC}#{CHILD}",
        CHILD,
        "general",
    )
    parent = opencode_denied(opencode_write(run_hook, "worker.txt"))
    assert f'the general subagent ({CHILD[:8]}) of opencode agent "{OC}"' in parent
    opencode_denied(opencode_sub_write(run_hook, "worker.txt", child="ses_sibling"))
    claude_denied(claude_write(run_hook, "worker.txt"))
    allowed(opencode_write(run_hook, "parent.txt"))
    allowed(opencode_sub_write(run_hook, "parent.txt"))
    assert [item["writer"] for item in run_hook.leases()["parent.txt"]] == [f"{OC}#{CHILD}"]
    idle = run_hook.payload("opencode/subagent.idle")
    allowed(run_hook("subagent.idle", idle, agent=OC, client="opencode"))
    assert run_hook.leases() == {}
    allowed(claude_write(run_hook, "worker.txt"))


def test_opencode_after_tool_records_and_tells_through_the_result(run_hook: HookRunner) -> None:
    started = run_hook("session.created", "opencode/session.created", agent=OC, client="opencode")
    assert started.out is not None and set(started.out) == {"context"}
    assert f'you are agent "{OC}"' in started.out["context"]
    for rel, text in (("new.txt", "hello\n"), ("existing.txt", "new line\n"), ("a.txt", "hi\n")):
        (run_hook.project / rel).write_text(text)
    for fixture in ("write", "edit", "bash", "read"):
        result = opencode_call(
            run_hook, f"tool.execute.after_{fixture}", event="tool.execute.after"
        )
        allowed(result)
    doc = run_hook.state(OC)
    project = run_hook.project
    assert doc["client"] == "opencode"
    assert doc["files_created"] == [f"{project}/new.txt"]
    assert doc["files_modified"] == [f"{project}/existing.txt", f"{project}/a.txt"]
    assert doc["files_read"] == [f"{project}/new.txt"]
    assert [item["source"] for item in run_hook.leases()["a.txt"]] == ["bash"]
    # A refused writer is told at its next after-event, through the tool's result.
    allowed(claude_write(run_hook, "held.txt"))
    opencode_denied(opencode_write(run_hook, "held.txt"))
    run_hook("SessionEnd", "SessionEnd", agent=CC)
    told = opencode_call(run_hook, "tool.execute.after_write", event="tool.execute.after")
    assert told.out is not None and set(told.out) == {"context"}
    assert "held.txt is free now" in told.out["context"]


def test_opencode_patches_are_checked_and_recorded(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "keep.txt"))
    move = "tool.execute.before_apply_patch_move_delete"
    reason = opencode_denied(opencode_call(run_hook, move))
    assert f'keep.txt is being changed by agent "{CC}"' in reason
    run_hook("SessionEnd", "SessionEnd", agent=CC)
    allowed(opencode_call(run_hook, move))
    assert sorted(run_hook.leases()) == ["keep.txt", "moved/dst.txt", "old.txt"]
    (run_hook.project / "moved").mkdir(exist_ok=True)
    (run_hook.project / "moved" / "dst.txt").write_text("k1\nK2\n")
    (run_hook.project / "added.txt").write_text("hello\n")
    after = "tool.execute.after"
    told = opencode_call(run_hook, "tool.execute.after_apply_patch_move_delete", event=after)
    assert told.out == {
        "context": "agent-hooks: keep.txt is free now (the holder finished with it); you may edit it."
    }
    allowed(opencode_call(run_hook, "tool.execute.after_apply_patch_add", event=after))
    doc = run_hook.state(OC)
    project = run_hook.project
    assert doc["files_created"] == [f"{project}/moved/dst.txt", f"{project}/added.txt"]
    assert doc["files_modified"] == [f"{project}/keep.txt", f"{project}/old.txt"]


def test_opencode_turn_end_and_session_end(run_hook: HookRunner) -> None:
    run_hook("session.created", "opencode/session.created", agent=OC, client="opencode")
    allowed(opencode_write(run_hook, "a.py"))
    allowed(run_hook("session.idle", "opencode/session.idle", agent=OC, client="opencode"))
    assert list(run_hook.leases()) == ["a.py"]  # a turn ended: the session goes on
    allowed(run_hook("dispose", "opencode/dispose", agent=OC, client="opencode"))
    assert run_hook.leases() == {}
    assert run_hook.state(OC)["active"] is False
    allowed(opencode_write(run_hook, "b.py"))
    deleted = run_hook.payload("opencode/dispose", hook_event_name="session.deleted")
    allowed(run_hook("session.deleted", deleted, agent=OC, client="opencode"))
    assert run_hook.leases() == {}


def test_an_unknown_opencode_event_is_allowed_and_said(run_hook: HookRunner) -> None:
    result = run_hook("tool.execute.sideways", {}, agent=OC, client="opencode")
    assert (result.code, result.out) == (0, None)
    assert "unknown opencode hook event 'tool.execute.sideways'; allowed" in result.err


# --------------------------------------------------------------------------- Qwen Code


def qwen_call(
    run_hook: HookRunner,
    fixture: str,
    agent: str | None = QW,
    event: str = "PreToolUse",
    **fields: Any,
) -> HookResult:
    payload = run_hook.payload(f"qwen/{fixture}", **fields)
    return run_hook(event, payload, agent=agent, client="qwen")


def qwen_write(run_hook: HookRunner, rel: str, **fields: Any) -> HookResult:
    path = str(run_hook.project / rel)
    return qwen_call(
        run_hook, "PreToolUse_write_file", tool_input={"file_path": path, "content": "x"}, **fields
    )


def qwen_denied(result: HookResult) -> str:
    """Claude Code's shape, nothing else (no systemMessage, no allow)."""
    assert result.code == 0, result.err
    assert result.out is not None and list(result.out) == ["hookSpecificOutput"], result
    specific = result.out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (specific["hookEventName"], specific["permissionDecision"]) == ("PreToolUse", "deny")
    reason: str = specific["permissionDecisionReason"]
    return reason


def test_a_qwen_write_leases_its_file_and_a_claude_agent_is_refused_naming_it(
    run_hook: HookRunner,
) -> None:
    allowed(qwen_write(run_hook, "src/app.py"))
    (lease,) = run_hook.leases()["src/app.py"]
    assert (lease["writer"], lease["client"], lease["pid"]) == (QW, "qwen", os.getpid())
    reason = claude_denied(claude_write(run_hook, "src/app.py"))
    assert reason.startswith(f'agent-hooks: src/app.py is being changed by Qwen Code agent "{QW}"')
    assert "Claude" not in reason


def test_a_claude_lease_refuses_every_qwen_tool(run_hook: HookRunner) -> None:
    allowed(claude_write(run_hook, "held.txt"))
    (run_hook.project / "sub").mkdir()
    allowed(claude_write(run_hook, "sub/wd.txt"))
    held = str(run_hook.project / "held.txt")
    refused = [
        qwen_write(run_hook, "held.txt"),
        qwen_call(run_hook, "PreToolUse_edit", tool_input={"file_path": held, "old_string": "a"}),
        qwen_call(
            run_hook,
            "PreToolUse_run_shell_command",
            tool_input={"command": "sed -i s/a/b/ held.txt"},
        ),
        qwen_call(
            run_hook,
            "PreToolUse_run_shell_command_directory",
            tool_input={"command": "echo x > wd.txt", "directory": str(run_hook.project / "sub")},
        ),
        qwen_call(
            run_hook,
            "PreToolUse_write_file",
            tool_name="notebook_edit",
            tool_input={"notebook_path": held, "new_source": "x"},
        ),
    ]
    for result in refused:
        assert f'is being changed by agent "{CC}"' in qwen_denied(result)


def test_a_qwen_subagent_is_a_writer_of_its_own(run_hook: HookRunner) -> None:
    allowed(qwen_call(run_hook, "PreToolUse_write_file_in_subagent"))
    (lease,) = run_hook.leases()["sub.txt"]
    assert (lease["writer"], lease["agent_id"]) == (f"{QW}#{QWEN_SUB}", QWEN_SUB)
    parent = qwen_denied(qwen_write(run_hook, "sub.txt"))
    assert f'subagent ({QWEN_SUB[:8]}) of Qwen Code agent "{QW}"' in parent
    allowed(qwen_call(run_hook, "SubagentStop", event="SubagentStop"))
    assert "sub.txt" not in run_hook.leases()


def test_qwen_context_at_session_start_and_after_a_tool_never_before(
    run_hook: HookRunner,
) -> None:
    started = qwen_call(run_hook, "SessionStart", event="SessionStart")
    assert started.out is not None
    specific = started.out["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert f'you are agent "{QW}"' in specific["additionalContext"]
    allowed(claude_write(run_hook, "held.txt"))
    qwen_denied(qwen_write(run_hook, "held.txt"))
    run_hook("SessionEnd", "SessionEnd", agent=CC)
    (run_hook.project / "new.txt").write_text("hello\n")
    told = qwen_call(run_hook, "PostToolUse_write_file", event="PostToolUse")
    assert told.out is not None and list(told.out) == ["hookSpecificOutput"]
    assert told.out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "held.txt is free now" in told.out["hookSpecificOutput"]["additionalContext"]
    doc = run_hook.state(QW)
    assert doc["client"] == "qwen" and doc["files_created"] == [f"{run_hook.project}/new.txt"]


def test_qwen_is_not_taken_for_claude_code_or_gemini(run_hook: HookRunner) -> None:
    """Qwen Code sets CLAUDE_PROJECT_DIR and GEMINI_PROJECT_DIR for its hooks; with the entry's
    `qwen` its leases and state say Qwen Code, never Claude Code or Gemini CLI."""
    allowed(qwen_write(run_hook, "a.py"))
    assert [item["client"] for item in run_hook.leases()["a.py"]] == ["qwen"]
    assert "Qwen Code agent" in claude_denied(claude_write(run_hook, "a.py"))


# --------------------------------------------------------------------------- all five


def test_five_clients_each_refused_the_others_files(run_hook: HookRunner) -> None:
    """Claude Code, Codex, Gemini CLI, opencode and Qwen Code agents each hold a file and
    are refused each of the four others', each in its own client's form."""
    names = {"claude": CC, "codex": "proj__cod_1", "gemini": "proj__gmi_1", "opencode": OC}
    names["qwen"] = QW

    def write(client: str, rel: str) -> HookResult:
        if client == "claude":
            return claude_write(run_hook, rel)
        if client == "codex":
            patch = f"{B}*** Add File: {rel}\n+x\n{E}\n"
            payload = run_hook.payload(
                "codex/PreToolUse_apply_patch_patch_add", tool_input={"command": patch}
            )
            return run_hook("PreToolUse", payload, agent=names[client], client="codex")
        if client == "gemini":
            payload = run_hook.payload(
                "gemini/BeforeTool_write_file", tool_input={"file_path": rel, "content": "x"}
            )
            return run_hook("BeforeTool", payload, agent=names[client], client="gemini")
        if client == "opencode":
            return opencode_write(run_hook, rel)
        return qwen_write(run_hook, rel)

    def refusal(client: str, result: HookResult) -> str:
        assert result.code == 0 and result.out is not None, result
        if client == "gemini":
            return str(result.out["reason"])
        if client == "opencode":
            return opencode_denied(result)
        return str(result.out["hookSpecificOutput"]["permissionDecisionReason"])

    labels = {
        "claude": f'agent "{CC}"',
        "codex": 'Codex agent "proj__cod_1"',
        "gemini": 'Gemini CLI agent "proj__gmi_1"',
        "opencode": f'opencode agent "{OC}"',
        "qwen": f'Qwen Code agent "{QW}"',
    }
    for client in names:
        allowed(write(client, f"{client}.py"))
    for client in names:
        for other in names:
            if other != client:
                reason = refusal(client, write(client, f"{other}.py"))
                assert f"{other}.py is being changed by {labels[other]}: " in reason, reason
    assert {rel: items[0]["client"] for rel, items in run_hook.leases().items()} == {
        f"{client}.py": client for client in names
    }


@pytest.mark.parametrize("client", ["opencode", "qwen"])
def test_a_holder_whose_client_was_killed_stops_blocking_at_once(
    run_hook: HookRunner, tmp_path: Path, client: str
) -> None:
    """The client process runs the hook (opencode: with OPENCODE_PID its own; Qwen Code: the
    hook's parent), then lives on; SIGKILL it (no event fires) and its lease counts for
    nothing."""
    if client == "opencode":
        payload = run_hook.payload(
            "opencode/tool.execute.before_write",
            tool_input={"filePath": str(run_hook.project / "held.py"), "content": "x"},
        )
        event = "tool.execute.before"
    else:
        payload = run_hook.payload(
            "qwen/PreToolUse_write_file",
            tool_input={"file_path": str(run_hook.project / "held.py"), "content": "x"},
        )
        event = "PreToolUse"
    stdin = tmp_path / "payload.json"
    stdin.write_text(json.dumps(payload))
    pid = "OPENCODE_PID=$$ " if client == "opencode" else ""
    script = (
        f'{pid}"{sys.executable}" -IS "{ENTRY}" {client} {event} < "{stdin}"; echo ran; '
        "exec sleep 60"
    )
    env = run_hook.env(OC, client=client)
    env.pop("OPENCODE_PID", None)
    stand_in = subprocess.Popen(
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
