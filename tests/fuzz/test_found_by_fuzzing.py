"""Gaps the fuzz tests found, each reproduced exactly as found (the fuzz oracles
now cover them too: `test_fuzz_documents.bash_parsed`, the `reservations` op)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import fuzz_world as fw
import pytest
from click.testing import CliRunner

from agent_hooks.cli import main as cli_main
from agent_hooks.cli._common import Env
from hook_runner import load_payload


@pytest.fixture
def world(tmp_path: Path) -> Any:
    with fw.World(tmp_path) as made:
        yield made


def pre_tool_use(world: fw.World, agent: str, tool_input: dict[str, Any], **env: str) -> Any:
    name = "PreToolUse_Bash" if "command" in tool_input else "PreToolUse_Write"
    payload = load_payload(name, str(world.project), str(world.home), tool_input=tool_input)
    payload["session_id"] = env.get("CLAUDE_CODE_SESSION_ID", fw.SESSION)
    ran = world.run("PreToolUse", json.dumps(payload).encode(), world.env(agent, env))
    out = fw.check_protocol(ran)
    return fw.decision_of(out)


def test_a_bash_write_into_a_file_leased_for_longer_than_the_current_window_is_refused(
    world: fw.World,
) -> None:
    """other__cc (AGENT_HOOKS_LEASE_MINUTES=60) wrote a.py 20 minutes ago: its lease
    counts for 40 more minutes; this agent runs with the default 10. (The Bash gate
    judged the holder's card by the reader's minutes: the Bash write passed.)"""
    target = {"file_path": str(world.project / "a.py"), "content": "x"}
    other = {"AGENT_HOOKS_LEASE_MINUTES": "60", "CLAUDE_CODE_SESSION_ID": fw.OTHER_SESSION}
    assert pre_tool_use(world, fw.OTHER, target, **other) is None
    lease_path = world.ledger / "leases" / "a.py"
    doc = json.loads(lease_path.read_text())
    for item in doc["leases"]:  # 20 minutes pass without a write by other__cc
        for key in ("claimed", "written", "expires"):
            item[key] -= 1200
    lease_path.write_text(json.dumps(doc))
    card = world.ledger / "writers" / fw.OTHER
    os.utime(card, (card.stat().st_atime - 1200, card.stat().st_mtime - 1200))
    assert doc["leases"][0]["expires"] > time.time() + 1800
    assert pre_tool_use(world, fw.ME, target) == "deny"  # the Write is refused
    assert pre_tool_use(world, fw.ME, {"command": "echo x > a.py"}) == "deny"  # and the Bash


@pytest.mark.parametrize(
    "extra",
    [{"x-note": 10**400}, {"reason": "\ud800"}, {"holder": {"pid": 2**70}}],
    ids=["big int", "lone surrogate", "holder pid"],
)
def test_reservations_json_lists_any_valid_entry(world: fw.World, extra: dict[str, Any]) -> None:
    entry = {"id": "r-1", "agent": fw.OTHER, "pattern": "src/**", "expires_at": time.time() + 3600}
    fw.write_json(world.ledger / "reservations.json", {"reservations": [{**entry, **extra}]})
    environ = {"HOME": str(world.home), "CLAUDE_PROJECT_DIR": str(world.project)}
    result = CliRunner().invoke(
        cli_main, ["reservations", "--json"], obj=Env(environ={**environ, "AGENT_NAME": fw.ME})
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0
