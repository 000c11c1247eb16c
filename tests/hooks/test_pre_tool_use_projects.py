"""Which project's reservations apply to a target: every project it lies in."""

from __future__ import annotations

import time
from pathlib import Path

from agent_hooks import identity
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookRunner


def reserve(runner: HookRunner, project: Path, agent: str, text: str) -> None:
    state_dir = identity.state_dir({"HOME": str(runner.home)})
    outcome = reservation_store.reserve(
        Repo(str(project), state_dir),
        Writer(agent, None),
        [(text, pattern.compile(text))],
        time.time(),
        reason="farmhand-7",
        ttl=3600,
        shared=False,
        keep=True,
    )  # fmt: skip
    assert not outcome.conflicts


def write(runner: HookRunner, path: Path, env: dict[str, str] | None = None) -> str | None:
    payload = runner.payload("PreToolUse_Write")
    payload["tool_input"]["file_path"] = str(path)
    result = runner("PreToolUse", payload, env=env)
    assert result.code == 0, result.err
    return None if result.out is None else result.out["hookSpecificOutput"]["permissionDecision"]


def test_a_submodule_does_not_hide_its_parents_reservations(run_hook: HookRunner) -> None:
    submodule = run_hook.project / "vendor" / "lib"
    submodule.mkdir(parents=True)
    (submodule / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    reserve(run_hook, run_hook.project, "proj__cc_2", "vendor/**")
    assert write(run_hook, submodule / "x.py") == "deny"


def test_an_agent_started_outside_still_meets_the_projects_reservations(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    reserve(run_hook, run_hook.project, "proj__cc_2", "src/**")
    elsewhere = {"CLAUDE_PROJECT_DIR": str(tmp_path)}  # started in a directory above
    assert write(run_hook, run_hook.project / "src" / "a.py", env=elsewhere) == "deny"
    assert write(run_hook, run_hook.project / "docs" / "a.md", env=elsewhere) is None


def test_strict_mode_is_satisfied_by_a_reservation_in_any_of_the_targets_projects(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path), "AGENT_HOOKS_STRICT": "1"}
    target = run_hook.project / "src" / "a.py"
    assert write(run_hook, target, env=env) == "deny"  # strict, nothing reserved anywhere
    reserve(run_hook, run_hook.project, "proj__cc_1", "src/**")  # in the repository's index
    assert write(run_hook, target, env=env) is None
