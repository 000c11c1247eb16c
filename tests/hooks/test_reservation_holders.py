"""Whether a reservation blocks depends on its holder (ADR-0014, ADR-0015), through
the real PreToolUse entry point and the real `agent-hooks reserve`:

* a holder whose Claude Code process is gone blocks nobody, at once;
* unless the reservation was made with `--keep`: then it blocks until it expires;
* a holder on another host (another container's pid namespace) cannot be judged by
  its pid: it blocks while its owner's card in the ledger was touched within a
  lease's time, and not after;
* and a Bash command that changed a file it holds unseen is told so afterwards
  (PostToolUse) exactly while it blocks.

Each test shows the reservation blocking first, so none passes because nothing was
reserved. Alice (the holder) reserves through the CLI with `CLAUDE_PID` naming a
stand-in for her `claude` process; Bob edits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from agent_hooks.cli import main as cli_main
from agent_hooks.cli._common import Env
from hook_runner import HookResult, HookRunner

ALICE, BOB = "alice", "bob"
OTHER_HOST = "elsewhere/0b5e55ed-0000-4000-8000-000000000000/pid:[4026531836]"
LEASE_MINUTES = 10  # the default: a card heard from within 10 min (+ 1 min of slack) counts


@pytest.fixture
def claude(run_hook: HookRunner) -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for Alice's `claude` process, alive until the test kills it."""
    (run_hook.project / "src").mkdir()
    (run_hook.project / "src" / "app.py").write_text("x\n")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def reserve(run_hook: HookRunner, holder_pid: int, *extra: str) -> None:
    env = Env(
        environ={
            "HOME": str(run_hook.home),
            "AGENT_NAME": ALICE,
            "CLAUDE_PROJECT_DIR": str(run_hook.project),
            "CLAUDE_PID": str(holder_pid),
        }
    )
    result = CliRunner().invoke(
        cli_main, ["reserve", "src/**", "--reason", "farmhand-42", *extra], obj=env
    )
    assert result.exit_code == 0, result.output


def ledger_doc(run_hook: HookRunner) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (run_hook.project / ".git" / "agent-hooks" / "reservations.json").read_text()
    )
    return doc


def write_by_bob(run_hook: HookRunner) -> HookResult:
    payload = run_hook.payload(
        "PreToolUse_Write",
        tool_input={"file_path": str(run_hook.project / "src" / "app.py"), "content": "y\n"},
    )
    return run_hook("PreToolUse", payload, agent=BOB)


def bash_by_bob(run_hook: HookRunner) -> HookResult:
    payload = run_hook.payload("PreToolUse_Bash", tool_input={"command": "echo y > src/app.py"})
    return run_hook("PreToolUse", payload, agent=BOB)


def is_denied(result: HookResult) -> bool:
    """True for a deliberate deny naming Alice's reservation, False for a clean allow;
    anything else (a crash that failed open, an error logged) fails the test."""
    assert result.code == 0 and result.err == "", result
    assert not any("fail open" in line for line in result.logged), result.logged
    if result.out is None:
        return False
    specific = result.out["hookSpecificOutput"]
    if specific.get("permissionDecision") != "deny":
        return False
    reason: str = specific["permissionDecisionReason"]
    assert 'agent "alice" holds src/**' in reason, reason
    return True


def told_after(run_hook: HookRunner) -> bool:
    """Bob's Bash command changed src/app.py unseen (a script; the client reports the
    change): is he told afterwards that Alice holds it?"""
    path = str(run_hook.project / "src" / "app.py")
    payload = run_hook.payload("PostToolUse_Bash")
    payload["tool_input"]["command"] = "./scripts/regenerate.sh"
    payload["tool_response"]["bashEditDiff"] = {
        "files": [{"filePath": path, "hunks": [], "created": False}],
        "moreFiles": 0,
        "changedFiles": [path],
    }
    result = run_hook("PostToolUse", payload, agent=BOB)
    assert result.code == 0 and result.err == "", result
    assert not any("fail open" in line for line in result.logged), result.logged
    told = result.out["hookSpecificOutput"]["additionalContext"] if result.out else ""
    return 'agent "alice" holds src/**' in told


def blocks(run_hook: HookRunner) -> bool:
    """Bob's Write and his Bash write of src/app.py get the same answer, and a Bash
    command that changed it unseen is told afterwards exactly then; which one."""
    write, bash = is_denied(write_by_bob(run_hook)), is_denied(bash_by_bob(run_hook))
    after = told_after(run_hook)
    assert write == bash == after, (write, bash, after)
    return write


def kill(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()  # reaped: its pid no longer names a process (a zombie would not count either)


def test_a_reservation_whose_holder_process_died_stops_blocking_at_once(
    run_hook: HookRunner, claude: subprocess.Popen[bytes]
) -> None:
    reserve(run_hook, claude.pid)
    assert blocks(run_hook)
    kill(claude)
    assert not blocks(run_hook)


def test_a_kept_reservation_outlives_its_holder_process_until_it_expires(
    run_hook: HookRunner, claude: subprocess.Popen[bytes]
) -> None:
    reserve(run_hook, claude.pid, "--keep")
    assert blocks(run_hook)
    kill(claude)
    assert blocks(run_hook)
    [entry] = ledger_doc(run_hook)["reservations"]
    assert entry["keep"] is True


def as_if_made_on_another_host(run_hook: HookRunner) -> None:
    """Rewrite Alice's holder as a container with its own pid namespace would have
    recorded it: a pid this host cannot judge."""
    path = run_hook.project / ".git" / "agent-hooks" / "reservations.json"
    doc = ledger_doc(run_hook)
    for entry in doc["reservations"]:
        entry["holder"] = {"pid": 4242, "start": 99, "host": OTHER_HOST}
    path.write_text(json.dumps(doc))


def card_heard_from(run_hook: HookRunner, seconds_ago: float) -> None:
    """Alice's writer card, last touched `seconds_ago` (its mtime is when she was heard from)."""
    card = run_hook.project / ".git" / "agent-hooks" / "writers" / ALICE
    card.parent.mkdir(parents=True, exist_ok=True)
    if not card.exists():
        card.write_text(json.dumps({"writer": ALICE, "agent": ALICE}))
    when = time.time() - seconds_ago
    os.utime(card, (when, when))


def test_a_holder_on_another_host_blocks_while_its_card_is_fresh(
    run_hook: HookRunner, claude: subprocess.Popen[bytes]
) -> None:
    reserve(run_hook, claude.pid)
    as_if_made_on_another_host(run_hook)
    kill(claude)  # our pid for it means nothing there: only the card can tell
    card_heard_from(run_hook, 30)
    assert blocks(run_hook)


@pytest.mark.parametrize("card", ["stale", "missing"])
def test_a_holder_on_another_host_stops_blocking_once_its_card_goes_stale(
    run_hook: HookRunner, claude: subprocess.Popen[bytes], card: str
) -> None:
    reserve(run_hook, claude.pid)
    as_if_made_on_another_host(run_hook)
    card_heard_from(run_hook, 30)
    assert blocks(run_hook)  # heard from half a minute ago
    if card == "stale":  # silent for 15 min: longer than a lease's time plus its slack
        card_heard_from(run_hook, (LEASE_MINUTES + 5) * 60)
    else:
        (run_hook.project / ".git" / "agent-hooks" / "writers" / ALICE).unlink()
    assert not blocks(run_hook)


def test_a_kept_reservation_on_another_host_blocks_however_silent_its_holder(
    run_hook: HookRunner, claude: subprocess.Popen[bytes]
) -> None:
    reserve(run_hook, claude.pid, "--keep")
    as_if_made_on_another_host(run_hook)
    card_heard_from(run_hook, 3 * 86400)
    assert blocks(run_hook)
