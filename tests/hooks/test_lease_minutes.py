"""One owner of lease minutes (`leases.lease_minutes`): the variable, the repository
setting and the default hold alike for a file edit, a Bash command's aftermath and
the git guard. With `AGENT_HOOKS_LEASE_MINUTES=0` a Write took no lease, but a
`sed -i` left a 600-second one (issue 17): every path now reads the same minutes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_hooks.leases import lease_minutes
from hook_runner import HookRunner


def leases(project: Path) -> list[str]:
    directory = project / ".git" / "agent-hooks" / "leases"
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def bash_changed(run: HookRunner, rel: str) -> dict[str, object]:
    payload = run.payload("PostToolUse_Bash", tool_input={"command": f"sed -i s/a/b/ {rel}"})
    payload["tool_response"] = {
        "stdout": "",
        "bashEditDiff": {"files": [{"filePath": str(run.project / rel), "created": False}]},
    }
    return payload


@pytest.mark.parametrize("minutes", ["0", "7"])
def test_the_variable_holds_for_edits_and_bash_alike(run_hook: HookRunner, minutes: str) -> None:
    env = {lease_minutes.ENV: minutes}
    (run_hook.project / "a.py").write_text("a")
    write = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / "w.py"), "content": "x"}
    )
    assert run_hook("PreToolUse", write, env=env).code == 0
    assert run_hook("PostToolUse", bash_changed(run_hook, "a.py"), env=env).code == 0
    found = leases(run_hook.project)
    if minutes == "0":
        assert found == []
        return
    assert found == ["a.py", "w.py"]
    for name in found:
        doc = json.loads((run_hook.project / ".git/agent-hooks/leases" / name).read_text())
        [held] = doc["leases"]
        assert held["expires"] - held["written"] == 7 * 60


def test_effective_reads_the_variable_then_the_setting_then_the_default() -> None:
    assert lease_minutes.effective({lease_minutes.ENV: "0"}, {"lease_minutes": 30}) == 0
    assert lease_minutes.effective({}, {"lease_minutes": 30}) == 30
    assert lease_minutes.effective({}, None) == lease_minutes.DEFAULT == 10
    assert lease_minutes.effective({lease_minutes.ENV: "x"}, {"lease_minutes": 3}) == 3
    assert lease_minutes.effective({lease_minutes.ENV: "1441"}, None) == 10  # above a day
    assert lease_minutes.effective({lease_minutes.ENV: "1440"}, None) == 1440


@pytest.mark.parametrize("stored", [-1, 1441, True, "5", None, 2.5])
def test_a_stored_setting_out_of_range_is_the_default(stored: object) -> None:
    assert lease_minutes.from_setting(stored) == 10
