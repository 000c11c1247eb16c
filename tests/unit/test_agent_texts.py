"""What an agent reads never offers it a way around agent-hooks
(docs/adr/0017-trust-model.md): no string a model is shown — PreToolUse denies,
PostToolUse and SessionStart notes, the git guard's refusals — names `--no-verify`,
`AGENT_HOOKS_GUARD`, `AGENT_HOOKS_ENFORCE` or `core.hooksPath`. The one exception is
SessionStart's warning that enforcement IS off for the agent: it reports a state
someone else set, it does not suggest one. The bypasses stay documented for people
(README, `agent-hooks guard --help`).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from agent_hooks.gate import protected
from agent_hooks.git_guard import commit_check, guard_script, ref_check
from agent_hooks.git_guard.commit_check import Finding, Staged
from agent_hooks.leases import lease_messages
from agent_hooks.ledger import ledger_summary
from agent_hooks.reservations import reservation_messages
from guard_repo import BYPASS_WORDS

SRC = Path(__file__).resolve().parents[2] / "src" / "agent_hooks"

# Modules whose strings reach a model (and the git guard's, which an agent's Bash reads).
AGENT_FACING = [
    "reservations/reservation_messages.py",
    "leases/lease_messages.py",
    "gate/protected.py",
    "ledger/ledger_summary.py",
    "gate/shell_aftermath.py",
    "gate/shell_gate.py",
    "gate/waiting.py",
    "git_guard/commit_check.py",
    "git_guard/ref_check.py",
    "interop/mcp_agent_mail_hook.py",
]
STATE_REPORTS = {
    "Warning: AGENT_HOOKS_ENFORCE=off: reservations are NOT enforced for you; "
    "check `agent-hooks reservations` yourself before editing."
}


def strings(path: Path) -> list[str]:
    """Every string constant of a module but its docstrings (f-strings' parts included)."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


@pytest.mark.parametrize("module", AGENT_FACING)
def test_no_agent_facing_string_names_a_bypass(module: str) -> None:
    found = [
        text
        for text in strings(SRC / module)
        if any(word in text for word in BYPASS_WORDS)
        and not any(text in report for report in STATE_REPORTS)
    ]
    assert found == []


def test_the_guard_scripts_print_no_bypass() -> None:
    for hook in guard_script.HOOKS:
        script = guard_script.render(hook, "/py", "block")
        printed = [line for line in script.splitlines() if "echo" in line]
        assert printed and not [line for line in printed if any(w in line for w in BYPASS_WORDS)]


def holder(now: float) -> dict[str, object]:
    return {
        "id": "r-1",
        "agent": "bob",
        "pattern": "src/**",
        "mode": "exclusive",
        "reason": "farmhand-1",
        "expires_at": now + 600,
    }


def rendered(now: float) -> list[str]:
    leased = {"writer": "bob", "agent": "bob", "label": 'agent "bob"', "expires": now + 60}
    found = [
        Finding(Staged("src/a.py", "modified"), "/r", [holder(now)], "main"),
        Finding(Staged("src/b.py", "deleted"), "/r", [], "main", [leased]),
    ]
    texts = [
        reservation_messages.strict_message("src/a.py"),
        lease_messages.deny_message(
            "src/a.py",
            {"writer": "bob", "agent": "bob", "written": now, "expires": now + 60},
            now,
            None,
        ),
        lease_messages.elsewhere_note("src/a.py", [{"agent": "bob", "worktree": "/w"}], now),
        protected.message("agent-hooks' data in /h", "x"),
        ledger_summary.HOW_TO,
        ledger_summary.LEASES,
        commit_check.message(found, "/r", now, warn_only=False),
        commit_check.message(found, "/r", now, warn_only=True),
        ref_check.message(found, ["main"], "/r", now, True, None),
        ref_check.message(found, ["main"], "/r", now, False, None),
        ref_check.message(found, ["main", "x"], "/r", now, False, "- undo it: `git am --abort`"),
    ]
    return texts


def test_rendered_messages_name_no_bypass() -> None:
    now = time.time()
    for text in rendered(now):
        assert not [word for word in BYPASS_WORDS if word in text], text
