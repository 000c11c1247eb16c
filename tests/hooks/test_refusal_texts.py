"""What each client's model reads when agent-hooks refuses it (issue 36, item 5), through
the real entry script and the payloads captured from each client: a refusal offers only
what the model can do itself — other work, waiting (it is told when the file frees), or
asking the user — never contacting a holder it cannot reach; a shell refusal speaks the
client's words (`clients.<module>.SHELL_COMMAND`: Claude Code's Bash, opencode's bash, the
others' "shell command"); Codex's own framing (`…hook: R. Command: …`) never shows a
doubled period; a second conversation under one AGENT_NAME is told it meets another
conversation of its own name and how that is mended, never that its own name holds the file.

The model's text is built the way each client frames the reason (docs/reference: Claude
Code `PreToolUse:<Tool> hook error: R`, Codex `Command blocked by PreToolUse hook: R.
Command: <command>`, Gemini CLI `Tool execution blocked: R`; opencode (the error agent-hooks'
plugin throws) and Qwen Code: exactly R).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

import gate_calls
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookResult, HookRunner

CC, CX, GM = "proj__cc_1", "proj__cod_1", "proj__gmi_1"
OC, QW = "proj__oc_1", "proj__qw_1"
PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch\n"


def reason_of(result: HookResult) -> str:
    """The refusal's reason ("" when the call was allowed)."""
    assert result.code == 0, result
    if result.out is None:
        return ""
    if "deny" in result.out:  # agent-hooks' opencode plugin throws it
        denied: str = result.out["deny"]
        return denied
    if "decision" in result.out:  # Gemini CLI's shape
        assert result.out["decision"] == "deny", result.out
        reason: str = result.out["reason"]
        return reason
    specific = result.out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny", specific
    found: str = specific["permissionDecisionReason"]
    return found


# Each client's refused call: (how it runs the hook, the payload, what its model reads).
Call = Callable[[HookRunner, str], tuple[HookResult, str]]


def claude_edit(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    payload = run.payload(
        "PreToolUse_Edit",
        tool_input={
            "file_path": str(run.project / "src/app.py"),
            "old_string": "a",
            "new_string": "b",
        },
        **fields,
    )
    result = run("PreToolUse", payload, agent=agent)
    return result, f"PreToolUse:Edit hook error: {reason_of(result)}"


def claude_bash(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    command = "echo x > src/app.py"
    payload = run.payload("PreToolUse_Bash", tool_input={"command": command}, **fields)
    result = run("PreToolUse", payload, agent=agent)
    return result, f"PreToolUse:Bash hook error: {reason_of(result)}"


def codex_patch(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    payload = run.payload(
        "codex/PreToolUse_apply_patch_patch_update", tool_input={"command": PATCH}, **fields
    )
    result = run("PreToolUse", payload, agent=agent, client="codex")
    return result, f"Command blocked by PreToolUse hook: {reason_of(result)}. Command: {PATCH}"


def codex_shell(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    command = "echo x > src/app.py"
    payload = run.payload(
        "codex/PreToolUse_Bash_shell_write", tool_input={"command": command}, **fields
    )
    result = run("PreToolUse", payload, agent=agent, client="codex")
    return result, f"Command blocked by PreToolUse hook: {reason_of(result)}. Command: {command}"


def gemini_replace(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {
        "file_path": "src/app.py",
        "instruction": "i",
        "old_string": "a",
        "new_string": "b",
    }
    payload = run.payload("gemini/BeforeTool_replace", tool_input=tool_input, **fields)
    result = run("BeforeTool", payload, agent=agent, client="gemini")
    return result, f"Tool execution blocked: {reason_of(result)}"


def gemini_shell(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {"command": "echo x > src/app.py", "description": "write"}
    payload = run.payload("gemini/BeforeTool_run_shell_command", tool_input=tool_input, **fields)
    result = run("BeforeTool", payload, agent=agent, client="gemini")
    return result, f"Tool execution blocked: {reason_of(result)}"


def opencode_edit(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {"filePath": str(run.project / "src/app.py"), "oldString": "a", "newString": "b"}
    payload = run.payload("opencode/tool.execute.before_edit", tool_input=tool_input, **fields)
    result = run("tool.execute.before", payload, agent=agent, client="opencode")
    return result, reason_of(result)


def opencode_bash(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {"command": "echo x > src/app.py", "description": "write"}
    payload = run.payload("opencode/tool.execute.before_bash", tool_input=tool_input, **fields)
    result = run("tool.execute.before", payload, agent=agent, client="opencode")
    return result, reason_of(result)


def qwen_edit(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {
        "file_path": str(run.project / "src/app.py"),
        "old_string": "a",
        "new_string": "b",
    }
    payload = run.payload("qwen/PreToolUse_edit", tool_input=tool_input, **fields)
    result = run("PreToolUse", payload, agent=agent, client="qwen")
    return result, reason_of(result)


def qwen_shell(run: HookRunner, agent: str, **fields: Any) -> tuple[HookResult, str]:
    tool_input = {"command": "echo x > src/app.py", "description": "write"}
    payload = run.payload("qwen/PreToolUse_run_shell_command", tool_input=tool_input, **fields)
    result = run("PreToolUse", payload, agent=agent, client="qwen")
    return result, reason_of(result)


EDITS: dict[str, tuple[str, Call]] = {
    "claude": (CC, claude_edit),
    "codex": (CX, codex_patch),
    "gemini": (GM, gemini_replace),
    "opencode": (OC, opencode_edit),
    "qwen": (QW, qwen_edit),
}
SHELLS: dict[str, tuple[str, Call, str]] = {
    "claude": (CC, claude_bash, "This Bash command would write src/app.py"),
    "codex": (CX, codex_shell, "This shell command would write src/app.py"),
    "gemini": (GM, gemini_shell, "This shell command would write src/app.py"),
    "opencode": (OC, opencode_bash, "This bash command would write src/app.py"),  # its tool
    "qwen": (QW, qwen_shell, "This shell command would write src/app.py"),
}


def reserve_as_agent(run: HookRunner) -> None:
    """proj__cc_9 (alive: this test process) reserves src/**, now: the hooks run on the
    real clock, and a reservation made at gate_calls.NOW (when the module was imported)
    has expired once a run reaches this test ten minutes later."""
    gate_calls.reserve(str(run.state_dir), str(run.project), "proj__cc_9", "src/**", at=time.time())


def hold_by_lease(run: HookRunner) -> None:
    """Another agent (Claude Code, alive: this test process) edits src/app.py."""
    result, _ = claude_edit(run, "proj__cc_9")
    assert result.out is None, result


def assert_actionable(read: str) -> None:
    """Only choices the model can take; the framing shows no doubled period."""
    assert "Choose one:" in read and "stop and ask the user how to proceed" in read, read
    assert "(you will be told when it is free)" in read, read
    for unreachable in ("ask the holder", "ask them", "contact"):
        assert unreachable not in read, read
    assert ".." not in read.replace("...", ""), read


@pytest.fixture
def run(run_hook: HookRunner) -> HookRunner:
    (run_hook.project / "src").mkdir()
    (run_hook.project / "src/app.py").write_text("a\n")
    return run_hook


@pytest.mark.parametrize("client", list(EDITS))
def test_a_reservation_refusal_offers_only_what_the_model_can_do(
    run: HookRunner, client: str
) -> None:
    reserve_as_agent(run)
    agent, call = EDITS[client]
    _, read = call(run, agent)
    assert 'is reserved by another agent: agent "proj__cc_9" holds src/**' in read, read
    assert_actionable(read)
    assert "- wait: a reservation ends when its holder releases it or is done" in read


@pytest.mark.parametrize("client", list(EDITS))
def test_a_lease_refusal_offers_only_what_the_model_can_do(run: HookRunner, client: str) -> None:
    hold_by_lease(run)
    agent, call = EDITS[client]
    _, read = call(run, agent)
    assert 'src/app.py is being changed by agent "proj__cc_9"' in read, read
    assert_actionable(read)


@pytest.mark.parametrize("client", list(SHELLS))
@pytest.mark.parametrize("held", ["reservation", "lease"])
def test_a_shell_refusal_speaks_the_clients_words(run: HookRunner, client: str, held: str) -> None:
    if held == "lease":
        hold_by_lease(run)
    else:
        reserve_as_agent(run)
    agent, call, words = SHELLS[client]
    _, read = call(run, agent)
    assert words in read, read
    if client != "claude":
        assert "Bash" not in read, read  # the others' tools are not called Bash
    assert_actionable(read)


def test_codex_reads_no_doubled_period(run: HookRunner) -> None:
    hold_by_lease(run)
    result, read = codex_patch(run, CX)
    assert not reason_of(result).endswith("."), reason_of(result)
    assert "proceed. Command: *** Begin Patch" in read, read


def test_a_persons_reservation_is_told_as_a_persons(run: HookRunner) -> None:
    outcome = reservation_store.reserve(  # `agent-hooks reserve 'src/**'` from a shell
        Repo(str(run.project), str(run.state_dir)), Writer(None, None),
        [("src/**", pattern.compile("src/**"))], time.time(), reason="farmhand-42", ttl=3600,
        holder={"person": "ann"},
    )  # fmt: skip
    assert outcome.changed
    _, read = claude_edit(run, CC)
    assert read.startswith(
        'PreToolUse:Edit hook error: agent-hooks: src/app.py is reserved by a person: person "ann" '
        "holds src/** (exclusive, reason: farmhand-42, "
    ), read
    assert_actionable(read)


@pytest.mark.parametrize("client", list(EDITS))
def test_a_second_conversation_of_one_name_is_told_what_it_meets(
    run: HookRunner, client: str
) -> None:
    """Two conversations launched as "twin": the first edits src/app.py; the second is
    told it meets another conversation of its own name, and how to mend that — not that
    "twin" (its own name) is changing the file."""
    _, call = EDITS[client]
    first, _ = call(run, "twin", session_id="conv-one-1111")
    assert first.out is None, first
    refused, read = call(run, "twin", session_id="conv-two-2222")
    reason = reason_of(refused)
    assert reason.startswith(
        "agent-hooks: src/app.py is being changed by another conversation (conv-one) that runs "
        'under your own AGENT_NAME "twin"'
    ), reason
    assert "two conversations share one name" in reason
    assert "relaunch one of them with a name of its own" in reason
    assert "`agent-hooks launch --name NAME <client>`" in reason
    assert 'is being changed by agent "twin"' not in reason
    assert ".." not in read.replace("...", "")
    # the first conversation itself is never refused its own file
    again, _ = call(run, "twin", session_id="conv-one-1111")
    assert again.out is None, again
