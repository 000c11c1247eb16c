"""Writers and leases through the real hook entry points (issue 9): payloads carry
`agent_id` inside subagents, as the 2.1.328 client sends them.

Every edit leases its file to its writer; another writer's edit of a leased file
is refused before it runs, naming the holder; a subagent's lease blocks its
parent and siblings, a parent's does not block its subagents; a lease ends at
SubagentStop, at SessionEnd, after the lease minutes, or when its holder's
process dies; a refused writer is told when the file frees.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.shell import plain
from hook_runner import HookResult, HookRunner, failures

A_ID, B_ID = "a4d71bd7a7301dabc", "ae43627177e918ff7"
ME, OTHER = "proj__cc_1", "proj__cc_2"


def write(
    run_hook: HookRunner,
    rel: str,
    *,
    agent_id: str | None = None,
    agent: Any = ME,
    env: dict[str, str] | None = None,
    session: str | None = None,
) -> HookResult:
    payload = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / rel), "content": "x\n"}
    )
    if agent_id is not None:
        payload.update(agent_id=agent_id, agent_type="general-purpose")
    if session is not None:
        payload["session_id"] = session
    return run_hook("PreToolUse", payload, agent=agent, env=env)


@contextlib.contextmanager
def stuck_holder_of(lock: Path) -> Iterator[None]:
    """Another process holds `lock` (an fcntl lock, as ours are) until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.lockf(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(30)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def denied(result: HookResult) -> str:
    assert result.code == 0 and result.out is not None, result
    specific = result.out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny", specific
    reason: str = specific["permissionDecisionReason"]
    return reason


def allowed(result: HookResult) -> None:
    """A clean allow: not a deny, and not a crash or a failure that failed open."""
    assert result.code == 0, result.err
    assert (
        result.out is None or result.out["hookSpecificOutput"]["permissionDecision"] == "allow"
    ), result.out
    assert failures(result) == [], failures(result)


def subagent_stop(run_hook: HookRunner, agent_id: str, agent: Any = ME) -> None:
    assert (
        run_hook(
            "SubagentStop",
            run_hook.payload("SubagentStop_background", agent_id=agent_id),
            agent=agent,
        ).code
        == 0
    )


def launched(
    run_hook: HookRunner, agent_id: str, description: str, name: str | None = None
) -> None:
    """PostToolUse of the Agent tool: how a subagent's description and a teammate's name are learned."""
    tool_input: dict[str, Any] = {
        "description": description,
        "prompt": "go",
        "subagent_type": "general-purpose",
    }
    if name is not None:
        tool_input["name"] = name
    payload = run_hook.payload(
        "PostToolUse_Agent",
        tool_input=tool_input,
        tool_response={"status": "async_launched", "agentId": agent_id, "description": description},
    )
    assert run_hook("PostToolUse", payload).code == 0


def lease_file(run_hook: HookRunner, rel: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (run_hook.project / ".git" / "agent-hooks" / "leases" / rel).read_text()
    )
    return doc


def test_two_background_subagents_one_file_the_second_is_refused_naming_the_first(
    run_hook: HookRunner,
) -> None:
    launched(run_hook, A_ID, "helper A")
    allowed(write(run_hook, "shared.txt", agent_id=A_ID))
    reason = denied(write(run_hook, "shared.txt", agent_id=B_ID))
    assert 'the general-purpose subagent "helper A" (a4d71bd7) of agent "proj__cc_1"' in reason
    assert "last wrote the file" in reason and "after 10 min without a write" in reason
    assert "ask the user" in reason
    [lease] = lease_file(run_hook, "shared.txt")["leases"]
    assert lease["writer"] == f"{ME}#{A_ID}" and lease["agent_type"] == "general-purpose"


def test_a_running_subagents_lease_blocks_its_parent_until_it_stops(run_hook: HookRunner) -> None:
    allowed(write(run_hook, "shared.txt", agent_id=A_ID))
    denied(write(run_hook, "shared.txt"))
    subagent_stop(run_hook, A_ID)
    allowed(write(run_hook, "shared.txt"))
    allowed(write(run_hook, "shared.txt", agent_id=B_ID))  # the parent's lease moves to B
    denied(write(run_hook, "shared.txt"))


def test_a_teammate_is_named_by_its_name(run_hook: HookRunner) -> None:
    launched(run_hook, A_ID, "auth work", name="alice")
    allowed(write(run_hook, "src.py", agent_id=A_ID))
    assert 'teammate "alice" (a4d71bd7) of agent "proj__cc_1"' in denied(
        write(run_hook, "src.py", agent_id=B_ID)
    )


def test_another_agents_lease_blocks_and_ends_at_its_session_end(run_hook: HookRunner) -> None:
    allowed(write(run_hook, "app.py", agent=OTHER))
    assert 'agent "proj__cc_2"' in denied(write(run_hook, "app.py"))
    allowed(write(run_hook, "other.py"))
    assert run_hook("SessionEnd", "SessionEnd", agent=OTHER).code == 0
    allowed(write(run_hook, "app.py"))


def test_two_sessions_without_agent_name_are_two_writers(run_hook: HookRunner) -> None:
    allowed(write(run_hook, "app.py", agent=None, session="11111111-aaaa"))
    reason = denied(write(run_hook, "app.py", agent=None, session="22222222-bbbb"))
    assert "the unnamed agent of conversation 11111111" in reason
    allowed(write(run_hook, "app.py", agent=None, session="11111111-aaaa"))


def test_leases_off_and_expired_leases_do_not_block(run_hook: HookRunner) -> None:
    allowed(write(run_hook, "app.py", agent=OTHER))
    allowed(write(run_hook, "app.py", env={"AGENT_HOOKS_LEASE_MINUTES": "0"}))
    path = run_hook.project / ".git" / "agent-hooks" / "leases" / "app.py"
    doc = json.loads(path.read_text())
    doc["leases"][0]["expires"] = int(time.time()) - 1
    path.write_text(json.dumps(doc))
    allowed(write(run_hook, "app.py"))


def test_a_holder_whose_process_died_stops_blocking_at_once(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    """A real `claude` stand-in holds the lease; SIGKILL it and the other writer passes."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        allowed(write(run_hook, "app.py", agent=OTHER, env={"CLAUDE_PID": str(holder.pid)}))
        denied(write(run_hook, "app.py"))
    finally:
        holder.kill()
        holder.wait()
    allowed(write(run_hook, "app.py"))


def test_a_reused_pid_is_not_the_holder(run_hook: HookRunner) -> None:
    """The lease records the process's start time: the same pid with another start is not it."""
    allowed(write(run_hook, "app.py", agent=OTHER))
    path = run_hook.project / ".git" / "agent-hooks" / "leases" / "app.py"
    doc = json.loads(path.read_text())
    assert doc["leases"][0]["pid"] == os.getpid() and isinstance(doc["leases"][0]["start"], int)
    doc["leases"][0]["start"] -= 1  # as if our pid had been another process's
    path.write_text(json.dumps(doc))
    allowed(write(run_hook, "app.py"))


def test_a_refused_writer_is_told_when_the_file_frees(run_hook: HookRunner) -> None:
    allowed(write(run_hook, "shared.txt", agent_id=A_ID))
    denied(write(run_hook, "shared.txt", agent_id=B_ID))
    read = run_hook.payload("PostToolUse_Read", agent_id=B_ID, agent_type="general-purpose")
    assert run_hook("PostToolUse", read).out is None  # still held: nothing to say
    subagent_stop(run_hook, A_ID)
    told = run_hook("PostToolUse", read).out
    assert told is not None
    text = told["hookSpecificOutput"]["additionalContext"]
    assert "shared.txt is free now (the holder finished with it)" in text
    assert run_hook("PostToolUse", read).out is None  # told once


def test_a_subagents_trail_lands_in_its_agents_trail_marked(run_hook: HookRunner) -> None:
    (run_hook.project / "a.txt").write_text("x\n")
    payload = run_hook.payload("PostToolUse_Write_in_subagent")
    assert run_hook("PostToolUse", payload).code == 0
    state = run_hook.state(ME)
    path = payload["tool_input"]["file_path"]
    assert path in state["files_created"] + state["files_modified"]
    assert state["trail_writers"][path] == [f"{ME}#{payload['agent_id']}"]


def bash_done(
    run_hook: HookRunner, files: list[str], duration_ms: int, **extra: Any
) -> dict[str, Any]:
    payload = run_hook.payload("PostToolUse_Bash", duration_ms=duration_ms, **extra)
    payload["tool_response"]["bashEditDiff"] = {
        "files": [
            {"filePath": str(run_hook.project / rel), "hunks": [], "created": False}
            for rel in files
        ],
        "changedFiles": [],
        "moreFiles": 0,
    }
    return payload


def test_a_concurrent_write_by_another_writer_is_not_blamed_on_a_bash_command(
    run_hook: HookRunner,
) -> None:
    """The client reports another writer's Write during a long Bash as the command's."""
    for rel in ("theirs.txt", "mine.txt"):
        (run_hook.project / rel).write_text("x\n")
    allowed(write(run_hook, "theirs.txt", agent_id=A_ID))
    result = run_hook("PostToolUse", bash_done(run_hook, ["theirs.txt", "mine.txt"], 5000))
    assert result.out is None  # no warning either
    state = run_hook.state(ME)
    trail = state["files_created"] + state["files_modified"]
    assert str(run_hook.project / "mine.txt") in trail
    assert str(run_hook.project / "theirs.txt") not in trail
    assert [item["writer"] for item in lease_file(run_hook, "mine.txt")["leases"]] == [ME]
    assert [item["writer"] for item in lease_file(run_hook, "theirs.txt")["leases"]] == [
        f"{ME}#{A_ID}"
    ]


def test_a_bash_command_that_changed_a_file_leased_before_it_started_is_warned(
    run_hook: HookRunner,
) -> None:
    (run_hook.project / "theirs.txt").write_text("x\n")
    allowed(write(run_hook, "theirs.txt", agent=OTHER))
    path = run_hook.project / ".git" / "agent-hooks" / "leases" / "theirs.txt"
    doc = json.loads(path.read_text())
    doc["leases"][0]["written"] -= 120  # well before the command started
    path.write_text(json.dumps(doc))
    result = run_hook("PostToolUse", bash_done(run_hook, ["theirs.txt"], 1000))
    assert result.out is not None
    text = result.out["hookSpecificOutput"]["additionalContext"]
    assert (
        "changed files that another writer holds: theirs.txt" in text
        and 'agent "proj__cc_2"' in text
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo x > shared.txt",
        "rm -rf .",
        "sed -i s/a/b/ shared.txt",
        'echo x > "$PWD/shared.txt"',
        'cd pkg && echo x > "$(pwd)/../shared.txt"',
    ],
)
def test_bash_writes_into_a_leased_file_are_refused(run_hook: HookRunner, command: str) -> None:
    allowed(write(run_hook, "shared.txt", agent=OTHER))
    payload = run_hook.payload("PreToolUse_Bash", tool_input={"command": command})
    reason = denied(run_hook("PreToolUse", payload))
    assert 'agent "proj__cc_2"' in reason and "do not run it now" in reason


def test_a_bash_target_holding_a_lone_surrogate_is_the_file_the_shell_writes(
    run_hook: HookRunner,
) -> None:
    """Found by tests/fuzz: `echo x > a.py\\udfff` (a JSON escape the shell receives as
    U+FFFD) raised while naming the target's lease file, and the hook failed open."""
    allowed(write(run_hook, "a.py\ufffd", agent=OTHER))
    payload = run_hook.payload("PreToolUse_Bash", tool_input={"command": "echo x > a.py\udfff"})
    reason = denied(run_hook("PreToolUse", payload))
    assert 'agent "proj__cc_2"' in reason
    assert not [line for line in run_hook.log_lines() if "Error" in line]


@pytest.mark.parametrize(
    "command",
    [
        "rm -r pkg",
        "rm -rf pkg/sub/",
        "mv pkg elsewhere",
        "rm pkg/sub/*.txt",
        "cd pkg && rm -r sub",
        "echo x > pkg/sub/shared.txt",
    ],
)
def test_bash_writes_into_a_directory_holding_a_leased_file_are_refused(
    run_hook: HookRunner, command: str
) -> None:
    """A directory (or glob) target is checked against every lease under it; a file
    target against its own lease only."""
    (run_hook.project / "pkg" / "sub").mkdir(parents=True)
    (run_hook.project / "pkg" / "sub" / "shared.txt").write_text("x\n")
    allowed(write(run_hook, "pkg/sub/shared.txt", agent=OTHER))
    payload = run_hook.payload("PreToolUse_Bash", tool_input={"command": command})
    reason = denied(run_hook("PreToolUse", payload))
    assert "pkg/sub/shared.txt" in reason and 'agent "proj__cc_2"' in reason
    free = run_hook.payload("PreToolUse_Bash", tool_input={"command": "rm -r pkg/other"})
    allowed(run_hook("PreToolUse", free))


@pytest.mark.parametrize(
    "target",
    [
        ".git/agent-hooks/reservations.json",
        ".git/agent-hooks/leases/x",
        "HOME/.claude/state-proj__cc_2.json",
        "HOME/.claude/agent-hooks/ledgers.json",
        "HOME/.claude/agent-hooks.log",
    ],
)
def test_agent_hooks_own_files_are_refused_to_edits_and_bash(
    run_hook: HookRunner, target: str
) -> None:
    path = (
        target.replace("HOME", str(run_hook.home))
        if target.startswith("HOME")
        else str(run_hook.project / target)
    )
    payload = run_hook.payload("PreToolUse_Write", tool_input={"file_path": path, "content": "{}"})
    assert "only through the `agent-hooks` command" in denied(run_hook("PreToolUse", payload))
    bash = run_hook.payload("PreToolUse_Bash", tool_input={"command": f"echo '{{}}' > {path}"})
    assert "only through the `agent-hooks` command" in denied(run_hook("PreToolUse", bash))
    plain_write = f"echo x > {path}"  # read without the parser (shell.plain)
    assert plain.targets(plain_write, str(run_hook.project)) == [path]
    bash = run_hook.payload("PreToolUse_Bash", tool_input={"command": plain_write})
    assert "only through the `agent-hooks` command" in denied(run_hook("PreToolUse", bash))


def test_a_bad_agent_name_is_still_refused_what_others_hold(run_hook: HookRunner) -> None:
    """Such a writer can never hold anything, so checking it is safe (issue 11)."""
    allowed(write(run_hook, "app.py", agent=OTHER))
    denied(write(run_hook, "app.py", agent="../evil"))
    allowed(write(run_hook, "free.py", agent="../evil"))
    assert not (run_hook.project / ".git" / "agent-hooks" / "leases" / "free.py").exists()


# SessionEnd gives up on a stuck lock within its own budget (0.9 s, hooks/session_end.py)
# where waiting the lock out would cost its timeout: 2 s for the ledger's lease lock, 5 s
# for a state lock. So a SessionEnd with a stuck lock must end within OVERRUN of a plain
# one run at the same moment: each the fastest of three runs, so that what else loads
# the machine cancels out. (The client's ~1.5 s, in wall time: bench/budgets.py.)
OVERRUN = 1.5


def session_end_seconds(run_hook: HookRunner, agent: str) -> float:
    """The fastest of three SessionEnd runs of `agent`, in seconds of wall time."""
    best = float("inf")
    for _ in range(3):
        started = time.monotonic()
        assert run_hook("SessionEnd", "SessionEnd", agent=agent).code == 0
        best = min(best, time.monotonic() - started)
    return best


def test_session_end_releases_first_and_finishes_fast_whatever_the_state_lock(
    run_hook: HookRunner,
) -> None:
    """A stopped process holds the agent's state lock: SessionEnd still releases the
    conversation's leases, and gives up on the lock within its budget."""
    allowed(write(run_hook, "app.py", agent=OTHER))
    plain = session_end_seconds(run_hook, "someone_else")
    lock = run_hook.state_dir / f"state-{OTHER}.json.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with stuck_holder_of(lock):
        assert session_end_seconds(run_hook, OTHER) < plain + OVERRUN
    allowed(write(run_hook, "app.py"))


def test_two_bash_commands_at_once_keep_a_file_both_reported_in_both_trails(
    run_hook: HookRunner,
) -> None:
    """Two Bash commands running at once each get the other's files in bashEditDiff. The
    first to finish leases both; the second still records its own file (another command's
    Bash lease is no proof that command wrote it) but neither leases it nor is warned."""
    (run_hook.project / "mine.txt").write_text("x\n")
    first = bash_done(run_hook, ["mine.txt"], 5000)
    assert run_hook("PostToolUse", first, agent=OTHER).out is None  # OTHER finished first
    result = run_hook("PostToolUse", bash_done(run_hook, ["mine.txt"], 5000))
    assert result.out is None
    state = run_hook.state(ME)
    assert str(run_hook.project / "mine.txt") in state["files_created"] + state["files_modified"]
    assert [item["writer"] for item in lease_file(run_hook, "mine.txt")["leases"]] == [OTHER]


@pytest.mark.parametrize("held", ["leases.lock", "reservations.json.lock"])
def test_session_end_finishes_fast_while_a_stuck_process_holds_a_ledger_lock(
    run_hook: HookRunner, held: str
) -> None:
    """The ledger's own locks held by a stopped process: SessionEnd gives up on them
    inside its budget (exit 0, logged), and the lease ends with its holder anyway."""
    allowed(write(run_hook, "app.py", agent=OTHER))
    plain = session_end_seconds(run_hook, "someone_else")
    lock = run_hook.project / ".git" / "agent-hooks" / held
    lock.touch()
    with stuck_holder_of(lock):
        assert session_end_seconds(run_hook, OTHER) < plain + OVERRUN
    if held == "leases.lock":  # not released: it ends with its process, or expires
        assert any("leases" in line and "lock" in line for line in run_hook.log_lines()), (
            run_hook.log_lines()
        )
        denied(write(run_hook, "app.py"))
    else:
        allowed(write(run_hook, "app.py"))


def test_a_refusal_stands_when_noting_the_waiting_writer_fails(run_hook: HookRunner) -> None:
    """Issue 18, defect 5: with the refused agent's state unwritable (here its state
    file is a directory: `~/.claude` read-only or full fails the same way), the hook
    used to compute the deny, fail writing the "tell me when it frees" note, and fail
    open. A refusal never depends on a side note: it stands, and the failure is logged."""
    allowed(write(run_hook, "app.py", agent=OTHER))
    run_hook.state_path(ME).mkdir(parents=True)  # the state cannot be written
    reason = denied(write(run_hook, "app.py"))
    assert 'agent "proj__cc_2"' in reason
    assert any("not noted to tell when" in line for line in run_hook.log_lines())
