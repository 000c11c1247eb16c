"""SessionEnd releases the ending agent's reservations (except `--keep` ones), in
every project its state mirrors, through the real entry script."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookRunner

BOB = "bob"
HOUR = 3600


def reserve(
    run_hook: HookRunner, project: Path, agent: str, pat: str, *, keep: bool = False
) -> None:
    out = reservation_store.reserve(
        Repo(str(project), str(run_hook.state_dir)),
        Writer(agent, None),
        [(pat, pattern.compile(pat))],
        time.time(),
        reason="farmhand-42",
        ttl=HOUR,
        shared=False,
        keep=keep,
    )
    assert out.conflicts == []


def held(run_hook: HookRunner, project: Path) -> list[tuple[str | None, str]]:
    live, _ = reservation_store.live(Repo(str(project), str(run_hook.state_dir)), time.time())
    return sorted(((r["agent"], r["pattern"]) for r in live), key=lambda x: (x[0] or "", x[1]))


def start(run_hook: HookRunner, agent: str, conversation: str, source: str = "startup") -> None:
    payload = run_hook.payload(f"SessionStart_{source}", session_id=conversation)
    result = run_hook("SessionStart", payload, agent=agent)
    assert result.code == 0 and result.out is not None, result.err


def end(run_hook: HookRunner, agent: str, conversation: str) -> None:
    payload = run_hook.payload("SessionEnd", session_id=conversation)
    result = run_hook("SessionEnd", payload, agent=agent)
    assert result.code == 0 and result.out is None, (result.out, result.err)


@pytest.fixture
def other_project(tmp_path: Path) -> Path:
    path = tmp_path / "other"
    (path / ".git").mkdir(parents=True)
    return Path(os.path.realpath(path))


def test_session_end_releases_non_keep_reservations_in_every_project(
    run_hook: HookRunner, project: Path, other_project: Path
) -> None:
    start(run_hook, BOB, "conv-1")
    reserve(run_hook, project, BOB, "src/**")
    reserve(run_hook, project, BOB, "docs/**", keep=True)
    reserve(run_hook, other_project, BOB, "lib/**")
    reserve(run_hook, other_project, BOB, "etc/**", keep=True)
    reserve(run_hook, project, "alice", "tests/**")
    end(run_hook, BOB, "conv-1")
    assert held(run_hook, project) == [("alice", "tests/**"), (BOB, "docs/**")]
    assert held(run_hook, other_project) == [(BOB, "etc/**")]
    state = run_hook.state(BOB)
    assert state["active"] is False
    assert sorted(r["paths"][0] for r in state["reservations"]) == ["docs/**", "etc/**"]
    assert all(r["keep"] for r in state["reservations"])
    assert any(
        "released 2 reservations at the end of conversation conv-1" in line
        for line in run_hook.log_lines()
    ), run_hook.log_lines()


def test_keep_only_reservations_survive_untouched(run_hook: HookRunner, project: Path) -> None:
    start(run_hook, BOB, "conv-1")
    reserve(run_hook, project, BOB, "docs/**", keep=True)
    end(run_hook, BOB, "conv-1")
    assert held(run_hook, project) == [(BOB, "docs/**")]
    # ... until its holder releases it or the TTL ends; a next conversation still holds it
    start(run_hook, BOB, "conv-2")
    end(run_hook, BOB, "conv-2")
    assert held(run_hook, project) == [(BOB, "docs/**")]


def test_end_of_an_older_conversation_does_not_release(run_hook: HookRunner, project: Path) -> None:
    start(run_hook, BOB, "conv-old")
    reserve(run_hook, project, BOB, "src/**")
    start(run_hook, BOB, "conv-new")  # the same agent, a newer conversation, now active
    end(run_hook, BOB, "conv-old")
    assert held(run_hook, project) == [(BOB, "src/**")]
    state = run_hook.state(BOB)
    assert state["active"] is True and state["conversation_id"] == "conv-new"
    end(run_hook, BOB, "conv-new")  # the control: the active one's end does release
    assert held(run_hook, project) == []
    assert run_hook.state(BOB)["reservations"] == []


def test_session_end_of_an_agent_without_reservations_writes_no_index(
    run_hook: HookRunner, project: Path
) -> None:
    start(run_hook, BOB, "conv-1")
    reserve(run_hook, project, "alice", "src/**")
    index_files = sorted(p.name for p in (run_hook.state_dir / "agent-hooks").rglob("*"))
    end(run_hook, BOB, "conv-1")
    assert held(run_hook, project) == [("alice", "src/**")]
    assert sorted(p.name for p in (run_hook.state_dir / "agent-hooks").rglob("*")) == index_files


def test_session_end_leaves_other_agents_alone(run_hook: HookRunner, project: Path) -> None:
    start(run_hook, "alice", "conv-a")
    start(run_hook, BOB, "conv-b")
    reserve(run_hook, project, "alice", "src/**")
    reserve(run_hook, project, BOB, "docs/**")
    end(run_hook, "alice", "conv-a")
    assert held(run_hook, project) == [(BOB, "docs/**")]
    assert run_hook.state(BOB)["active"] is True
