"""install.purge: what `./install.sh --uninstall --purge` lists and removes. The
ledgers come from `known_ledgers`, the one list of every ledger this HOME wrote:
an agent that worked in one repository and then another leaves both ledgers
listed, and both removed (issue 17: the second used to orphan the first)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agent_hooks.install import purge
from hook_runner import AGENT, HookRunner


def repo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    (path / ".git").mkdir(parents=True)
    return Path(os.path.realpath(path))


def args(home: Path, **extra: object) -> argparse.Namespace:
    state = home / ".claude"
    return argparse.Namespace(
        state_dir=str(state),
        settings=str(state / "settings.json"),
        record=None,
        link=None,
        data=None,
        yes=True,
        **extra,
    )


def test_a_ledger_of_an_earlier_repository_is_listed_and_removed(
    home: Path, tmp_path: Path
) -> None:
    first, second = repo(tmp_path, "r3"), repo(tmp_path, "r4")
    for project in (first, second):  # the agent's state ends up naming the second only
        run = HookRunner(home, project)
        write = run.payload(
            "PreToolUse_Write", tool_input={"file_path": f"{project}/a.py", "content": "x"}
        )
        assert run("PreToolUse", write).code == 0
        assert (project / ".git" / "agent-hooks" / "leases").is_dir()
        start = run.payload("SessionStart_startup")
        assert run("SessionStart", start).code == 0
    state = (home / ".claude" / f"state-{AGENT}.json").read_text()
    assert str(second) in state and str(first) not in state
    listed = [item.path for item in purge.Plan(args(home)).ledgers]
    assert listed == [str(first / ".git" / "agent-hooks"), str(second / ".git" / "agent-hooks")]
    assert purge.run(args(home)) == 0
    assert not (first / ".git" / "agent-hooks").exists()
    assert not (second / ".git" / "agent-hooks").exists()


def test_a_repository_named_only_by_an_agents_state_still_has_its_ledger_listed(
    home: Path, tmp_path: Path
) -> None:
    """Ledgers written before the record existed: found through the state files."""
    project = repo(tmp_path, "old")
    run = HookRunner(home, project)
    assert run("SessionStart", run.payload("SessionStart_startup")).code == 0
    (project / ".git" / "agent-hooks" / "leases").mkdir(parents=True)
    assert [item.path for item in purge.Plan(args(home)).ledgers] == [
        str(project / ".git" / "agent-hooks")
    ]
    state = run.state_path()  # a write moving it: still found
    state.rename(state.with_name(f".{state.name}.aside"))
    assert [item.path for item in purge.Plan(args(home)).ledgers] == [
        str(project / ".git" / "agent-hooks")
    ]


def test_a_plain_uninstall_removes_kept_versions_and_keeps_the_ledger(
    home: Path, tmp_path: Path
) -> None:
    """Nothing sweeps kept versions once the hooks are gone: `kept` (after a plain
    uninstall) removes each known ledger's store; the ledger itself stays."""
    project = repo(tmp_path, "r5")
    run = HookRunner(home, project)
    path = project / "a.py"
    write = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": "x"})
    assert run("PreToolUse", write).code == 0
    path.write_text("work\n")
    post = run.payload("PostToolUse_Write", tool_input={"file_path": str(path), "content": "x"})
    assert run("PostToolUse", post).code == 0
    store = project / ".git" / "agent-hooks" / "kept"
    assert any((store / "objects").iterdir())
    assert purge.kept(args(home)) == 0
    assert not store.exists() and (project / ".git" / "agent-hooks" / "leases").is_dir()
    listed = [item.what for item in purge.Plan(args(home)).ledgers]
    assert listed == [f"the reservation ledger of {project}, with its kept versions"]
