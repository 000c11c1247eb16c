"""Issue 33's second gap: a file Claude Code reports only in `bashEditDiff.changedFiles`
(not in `files`: a change it shows no hunk for — a binary file, one past its diff
limit, one of `moreFiles`) is a file the command changed, exactly as one in `files`:
trailed, leased to the writer with its fingerprint, kept, watched, and — when another
writer holds it — warned about and noted on the holder's lease. Claude Code is the one
client that reports the files a shell command changed (Codex, Gemini CLI, opencode and
Qwen Code report none: their commands' visible writes are read from the command line).
Real entry scripts, HOME in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.kept import kept_store
from hook_runner import HookResult, HookRunner, context_of

ME, OTHER = "proj__cc_1", "proj__cc_2"

# How the diff names the file: in `changedFiles` only (beside `files` empty, or naming
# another file), and — the control — in both lists.
SHAPES = {
    "changedFiles only": lambda target, other: ([], [target]),
    "changedFiles only, files another": lambda target, other: (
        [{"filePath": other, "hunks": [], "created": False}],
        [other, target],
    ),
    "both lists": lambda target, other: (
        [{"filePath": target, "hunks": [], "created": False}],
        [target],
    ),
}


def bash(run: HookRunner, agent: str, shape: str, rel: str, command: str) -> HookResult:
    """The PostToolUse of a Bash command whose diff reports `rel` as `shape` says."""
    target, other = str(run.project / rel), str(run.project / "other.txt")
    (run.project / "other.txt").write_text("other\n")
    files, changed = SHAPES[shape](target, other)
    payload: dict[str, Any] = run.payload("PostToolUse_Bash", tool_input={"command": command})
    payload["duration_ms"] = 300
    payload["tool_response"]["bashEditDiff"] = {
        "files": files,
        "changedFiles": changed,
        "moreFiles": 0,
    }
    return run("PostToolUse", payload, agent=agent)


def said(result: HookResult) -> str:
    return context_of(result, "PostToolUse") if result.out else ""


def lease_of(run: HookRunner, rel: str) -> dict[str, Any]:
    doc = json.loads((run.project / ".git" / "agent-hooks" / "leases" / rel).read_text())
    [held] = doc["leases"]
    assert isinstance(held, dict)
    return held


def kept_kinds(run: HookRunner, rel: str) -> list[str]:
    path = Path(kept_store.versions_path(str(run.project / ".git" / "agent-hooks"), ".", rel))
    return [json.loads(line)["kind"] for line in path.read_text().split("\n") if line]


def read(run: HookRunner, agent: str = ME) -> str:
    """The agent's next tool call (a Read's PostToolUse): what it is told."""
    (run.project / "notes.md").touch()
    payload = run.payload(
        "PostToolUse_Read", tool_input={"file_path": str(run.project / "notes.md")}
    )
    return said(run("PostToolUse", payload, agent=agent))


@pytest.mark.parametrize("shape", SHAPES)
def test_a_file_the_command_changed_is_the_writers(run_hook: HookRunner, shape: str) -> None:
    path = run_hook.project / "data.bin"
    data = b"\x00\x01generated"
    path.write_bytes(data)
    assert said(bash(run_hook, ME, shape, "data.bin", "./make-data")) == ""
    lease = lease_of(run_hook, "data.bin")
    assert (lease["writer"], lease["source"]) == (ME, "bash")
    assert lease["fp"].split(":")[1] == f"{len(data):x}"  # its fingerprint
    doc = run_hook.state(ME)
    assert str(path) in doc["files_modified"] and str(path) not in doc["files_created"]
    assert doc["held"][str(path)]["writer"] == ME
    assert kept_kinds(run_hook, "data.bin") == ["write"]
    path.write_bytes(b"someone else's")  # ... and watched: a change by anyone else is told
    assert "data.bin, which you are changing, was changed by someone else" in read(run_hook)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_file_another_writer_holds_is_warned_about_and_noted(
    run_hook: HookRunner, shape: str
) -> None:
    holder = run_hook.project / "app.py"
    pre = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(holder), "content": "mine\n"}
    )
    assert run_hook("PreToolUse", pre, agent=OTHER).out is None
    holder.write_text("mine\n")
    post = run_hook.payload(
        "PostToolUse_Write", tool_input={"file_path": str(holder), "content": "mine\n"}
    )
    assert run_hook("PostToolUse", post, agent=OTHER).code == 0
    holder.write_text("regenerated\n")
    warned = said(bash(run_hook, ME, shape, "app.py", "./regenerate"))
    assert "your last shell command changed files that another writer holds: app.py" in warned
    assert f'agent "{OTHER}" is changing it' in warned
    lease = lease_of(run_hook, "app.py")
    assert lease["writer"] == OTHER  # still the holder's: not taken over
    assert lease["changed"]["by"] == f'agent "{ME}"\'s shell command'
    assert f'was changed by agent "{ME}"\'s shell command' in read(run_hook, OTHER)


def test_a_held_file_reported_only_as_changed_may_be_someone_elses(run_hook: HookRunner) -> None:
    """The client blames a command for every change made while it ran: the writer's
    own held file reported in `changedFiles` alone, which its command line does not
    write, is told as maybe its own, not taken for its own write."""
    holder = run_hook.project / "app.py"
    holder.write_text("x\n")
    bash(run_hook, ME, "changedFiles only", "app.py", "echo mine > app.py")
    holder.write_text("by someone else meanwhile\n")
    told = said(bash(run_hook, ME, "changedFiles only", "app.py", "sleep 5"))
    assert "app.py, which you are changing, changed while your last shell command ran" in told
