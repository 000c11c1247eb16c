"""The net under the gate (issue 18): a held file carries the fingerprint of its
holder's last write; a change by anyone else — here a plain process agent-hooks
never sees, another writer's Bash command, a long command overwriting an edit —
is told to the holder at its next hook, once, naming who when a hook saw it. Real
entry scripts, payloads from the real client, HOME in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hook_runner import HookResult, HookRunner, context_of

ME, OTHER = "proj__cc_1", "proj__cc_2"


def edit(run: HookRunner, rel: str, text: str, agent: str = ME) -> None:
    """A Write as the client runs it: PreToolUse, the write, PostToolUse."""
    path = run.project / rel
    payload = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": text})
    pre = run("PreToolUse", payload, agent=agent)
    assert pre.code == 0 and pre.out is None, pre
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    post = run.payload("PostToolUse_Write", tool_input={"file_path": str(path), "content": text})
    assert run("PostToolUse", post, agent=agent).code == 0


def read(run: HookRunner, rel: str, agent: str = ME) -> HookResult:
    """Any later tool call of the writer: a Read's PostToolUse."""
    (run.project / rel).touch()
    payload = run.payload("PostToolUse_Read", tool_input={"file_path": str(run.project / rel)})
    return run("PostToolUse", payload, agent=agent)


def told(result: HookResult) -> str:
    return context_of(result, "PostToolUse") if result.out else ""


def bash(
    run: HookRunner, command: str, changed: list[str] | None, ms: int, agent: str
) -> HookResult:
    payload: dict[str, Any] = run.payload("PostToolUse_Bash", tool_input={"command": command})
    payload["duration_ms"] = ms
    response: dict[str, Any] = {"stdout": "", "stderr": "", "interrupted": False}
    if changed is not None:
        response["bashEditDiff"] = {
            "files": [{"filePath": str(run.project / rel), "created": False} for rel in changed]
        }
    payload["tool_response"] = response
    return run("PostToolUse", payload, agent=agent)


def lease_of(run: HookRunner, rel: str) -> dict[str, Any]:
    doc = json.loads((run.project / ".git" / "agent-hooks" / "leases" / rel).read_text())
    [held] = doc["leases"]
    assert isinstance(held, dict)
    return held


def test_a_change_nobody_saw_is_told_to_the_holder_once(run_hook: HookRunner) -> None:
    edit(run_hook, "app.py", "mine\n")
    before = lease_of(run_hook, "app.py")
    assert before["fp"].split(":")[1] == f"{len('mine' + chr(10)):x}" and "changed" not in before
    assert told(read(run_hook, "notes.md")) == ""  # nothing changed: nothing said
    (run_hook.project / "app.py").write_text("theirs, written by a script\n")
    first = told(read(run_hook, "notes.md"))
    assert "app.py, which you are changing, was changed by someone else" in first
    assert "Re-read it before you edit it" in first
    assert told(read(run_hook, "notes.md")) == ""  # told once
    assert lease_of(run_hook, "app.py")["changed"]["by"] is None  # shown to people
    assert any("held file app.py" in line for line in run_hook.log_lines())


def test_rewriting_the_same_content_is_no_change(run_hook: HookRunner) -> None:
    edit(run_hook, "app.py", "mine\n")
    path = run_hook.project / "app.py"
    path.write_text("mine\n")  # a formatter that changed nothing: new mtime, same content
    assert told(read(run_hook, "notes.md")) == ""


def test_the_holders_own_write_is_no_change(run_hook: HookRunner) -> None:
    edit(run_hook, "app.py", "one\n")
    edit(run_hook, "app.py", "two\n")
    assert told(read(run_hook, "notes.md")) == ""


def test_another_writers_shell_command_is_named(run_hook: HookRunner) -> None:
    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("overwritten\n")
    result = bash(run_hook, "sed -i s/mine/x/ app.py", ["app.py"], 200, OTHER)
    assert "changed files that another writer holds" in told(result)  # the writer hears
    message = told(read(run_hook, "notes.md"))  # and the holder, with who
    assert 'was changed by agent "proj__cc_2"\'s shell command' in message


def test_a_change_during_the_holders_own_shell_command_is_told_as_maybe_its_own(
    run_hook: HookRunner,
) -> None:
    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("by my python -c\n")
    message = told(bash(run_hook, "python3 gen.py", None, 5000, ME))
    assert "changed while your last shell command ran" in message
    assert "someone else" in message


def test_a_change_the_client_blames_on_the_holders_own_command_is_still_told(
    run_hook: HookRunner,
) -> None:
    """bypassPermissions: the client reports every file changed while a command ran
    as the command's; the holder's `sleep` writes nothing, so the change to its held
    file is told, not taken for its own write."""
    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("by someone else meanwhile\n")
    message = told(bash(run_hook, "sleep 5", ["app.py"], 5000, ME))
    assert "app.py, which you are changing, changed while your last shell command ran" in message
    assert told(read(run_hook, "notes.md")) == ""  # told once


def test_a_held_file_the_holders_command_visibly_writes_is_its_own(
    run_hook: HookRunner,
) -> None:
    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("by my own redirect\n")
    message = told(bash(run_hook, "echo x > app.py", ["app.py"], 5000, ME))
    assert message == ""
    assert told(read(run_hook, "notes.md")) == ""


def test_a_long_command_that_overwrote_an_edit_made_while_it_ran_is_warned(
    run_hook: HookRunner,
) -> None:
    """Defect 4: alice edits app.py while bob's 60 s build runs; the build then
    rewrites app.py. The client blames the build for app.py: not 'alice's edit,
    not bob's' any more, but bob is told, and so is alice."""
    edit(run_hook, "app.py", "alice's edit\n")
    (run_hook.project / "app.py").write_text("generated by the build\n")
    result = bash(run_hook, "make generate", ["app.py"], 60_000, OTHER)
    assert "changed files that another writer holds" in told(result)
    assert "was changed by" in told(read(run_hook, "notes.md"))


def test_an_edit_made_while_a_command_ran_and_left_alone_is_still_not_the_commands(
    run_hook: HookRunner,
) -> None:
    edit(run_hook, "app.py", "alice's edit\n")
    result = bash(run_hook, "make test", ["app.py"], 60_000, OTHER)
    assert told(result) == ""
    assert not run_hook.state_path(OTHER).exists()  # nothing recorded for bob
    assert told(read(run_hook, "notes.md")) == ""


def test_a_shell_write_the_client_did_not_report_is_leased_and_trailed(
    run_hook: HookRunner,
) -> None:
    """Item 3: default and acceptEdits modes send no bashEditDiff: the command's
    visible writes are read from the command itself."""
    (run_hook.project / "out.txt").write_text("x\n")
    assert told(bash(run_hook, "echo x > out.txt", None, 10, ME)) == ""
    assert lease_of(run_hook, "out.txt")["writer"] == ME
    assert str(run_hook.project / "out.txt") in run_hook.state()["files_modified"]
    other = run_hook.payload(
        "PreToolUse_Write",
        tool_input={"file_path": str(run_hook.project / "out.txt"), "content": "y"},
    )
    refused = run_hook("PreToolUse", other, agent=OTHER).out["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny"


def test_a_released_file_is_no_longer_watched(run_hook: HookRunner) -> None:
    edit(run_hook, "app.py", "mine\n")
    assert run_hook("SessionEnd", "SessionEnd").code == 0
    start = run_hook.payload("SessionStart_startup", session_id="next-conversation")
    assert run_hook("SessionStart", start).code == 0
    (run_hook.project / "app.py").write_text("someone's\n")
    assert "app.py" not in told(read(run_hook, "notes.md"))


def test_reservations_and_watch_show_who_changed_a_held_file(run_hook: HookRunner) -> None:
    import subprocess
    import sys

    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("bob's sed\n")
    bash(run_hook, "sed -i s/mine/x/ app.py", ["app.py"], 10, OTHER)
    env = run_hook.env(ME)

    def cli(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "agent_hooks.cli", *args],
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
            cwd=run_hook.project,
            check=True,
        ).stdout

    [row] = [r for r in json.loads(cli("reservations", "--json")) if r["kind"] == "lease"]
    assert 'changed by agent "proj__cc_2"\'s shell command' in row["state"]
    frame = " ".join(cli("watch", "--once").split())
    assert "changed by agent" in frame, frame
