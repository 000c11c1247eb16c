"""`agent-hooks guard check` (agent_hooks.cli.guard_check) through click's CliRunner in
real temporary git repositories: the staged changes of a commit, and with
`--ref-updates` the branch updates git hands the reference-transaction hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE
from typing import Any

import pytest
from guard_harness import NOW, as_json, git, make_repo, reserve, run, stage

from agent_hooks import liveness, writers
from agent_hooks.git_guard import guard_hooks
from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    return make_repo(tmp_path, home)


def test_check_reports_each_holder_and_exits_1(home: Path, repo: Path) -> None:
    reserve(home, repo, "bob", "src/**")
    stage(repo, home, "src/a.py", "docs/b.md")
    result = run(home, "check", "--repo", str(repo), "--json", now=NOW + 600)
    assert result.exit_code == 1
    doc = as_json(result)
    assert doc["allowed"] is False and doc["agent"] == "alice" and doc["checked"] == 2
    assert [b["path"] for b in doc["blocked"]] == ["src/a.py"]
    held = doc["blocked"][0]["held_by"][0]
    assert held["agent"] == "bob" and held["pattern"] == "src/**" and held["reason"] == "farmhand-7"
    assert held["minutes_left"] == 50

    text = run(home, "check", "--repo", str(repo), now=NOW + 600)
    assert text.exit_code == 1
    expected = (
        'src/a.py (added): agent "bob" holds src/** (exclusive, reason: farmhand-7, 50 min left)'
    )
    assert expected in text.output
    hooked = run(home, "check", "--repo", str(repo), "--hook", now=NOW)
    assert hooked.exit_code == guard_hooks.BLOCKED_EXIT


def test_check_allows_when_expired_own_or_warned(home: Path, repo: Path) -> None:
    reserve(home, repo, "bob", "src/**", ttl=60)
    stage(repo, home, "src/a.py")
    later = run(home, "check", "--repo", str(repo), now=NOW + 61)
    assert later.exit_code == 0 and "ok: 1 staged path; it is not held" in later.output
    assert run(home, "check", "--repo", str(repo), agent="bob").exit_code == 0
    warned = run(home, "check", "--repo", str(repo), "--mode", "warn", "--json")
    assert warned.exit_code == 0
    assert as_json(warned)["allowed"] is True and as_json(warned)["blocked"]
    assert run(home, "check", "--repo", str(repo), "--warn-only").exit_code == 0
    assert run(home, "check", "--repo", str(repo), AGENT_HOOKS_GUARD="warn").exit_code == 0


def test_check_reports_another_writers_lease(home: Path, repo: Path) -> None:
    """A file another writer is changing in this work tree: refused, the holder named
    (`leased_by`); the lease's own agent is let through."""
    stage(repo, home, "src/a.py", "docs/b.md")
    bob = writers.Writer("bob", "conv-b", "a1b2c3d4", "general-purpose")
    rules = Repo(str(repo), str(home / ".claude"), {"AGENT_HOOKS_LEASE_MINUTES": "10"})
    lease_store.claim(rules, "src/a.py", bob, NOW, holder_pid=os.getpid())
    result = run(home, "check", "--repo", str(repo), "--json", now=NOW + 120)
    assert result.exit_code == 1
    (blocked,) = as_json(result)["blocked"]
    assert blocked["path"] == "src/a.py" and blocked["held_by"] == []
    (leased,) = blocked["leased_by"]
    assert (leased["writer"], leased["agent"], leased["minutes_left"]) == ("bob#a1b2c3d4", "bob", 8)
    assert leased["label"] == 'the general-purpose subagent (a1b2c3d4) of agent "bob"'
    text = run(home, "check", "--repo", str(repo), now=NOW + 120).output
    assert "src/a.py (added): being changed by the general-purpose subagent" in text
    assert run(home, "check", "--repo", str(repo), agent="bob", now=NOW + 120).exit_code == 0


def test_check_bypass_env_var(home: Path, repo: Path) -> None:
    reserve(home, repo, "bob", "src/**")
    stage(repo, home, "src/a.py")
    result = run(home, "check", "--repo", str(repo), "--json", AGENT_HOOKS_GUARD="off")
    assert result.exit_code == 0
    assert as_json(result) == {"allowed": True, "bypassed": True, "blocked": []}


def branches(repo: Path, home: Path) -> tuple[str, str]:
    """main (src/a.py, docs/b.md) and `side`, which changes src/a.py: their commits."""
    stage(repo, home, "src/a.py", "docs/b.md")
    git(repo, home, "commit", "-q", "-m", "one")
    git(repo, home, "branch", "-M", "main")
    git(repo, home, "checkout", "-q", "-b", "side")
    (repo / "src" / "a.py").write_text("changed")
    git(repo, home, "commit", "-q", "-am", "two")
    git(repo, home, "checkout", "-q", "main")
    return git(repo, home, "rev-parse", "main"), git(repo, home, "rev-parse", "side")


def test_ref_updates_report_the_paths_a_branch_move_changes(home: Path, repo: Path) -> None:
    main, side = branches(repo, home)
    reserve(home, repo, "bob", "src/**")
    lines = f"{main} {side} refs/heads/main\n{main} {side} HEAD\n"
    result = run(home, "check", "--repo", str(repo), "--ref-updates", "--json", input=lines)
    assert result.exit_code == 1
    doc = as_json(result)
    assert doc["checked"] == 1 and doc["allowed"] is False
    (blocked,) = doc["blocked"]
    assert (blocked["path"], blocked["change"], blocked["branch"]) == (
        "src/a.py",
        "modified",
        "main",
    )
    assert blocked["held_by"][0]["agent"] == "bob"

    text = run(home, "check", "--repo", str(repo), "--ref-updates", input=lines)
    assert text.exit_code == 1
    assert "branch main not moved: the update changes files another agent holds:" in text.output
    assert "(nothing else changed: it keeps the commit it had)" in text.output  # index clean
    hooked = run(home, "check", "--repo", str(repo), "--ref-updates", "--hook", input=lines)
    assert hooked.exit_code == guard_hooks.BLOCKED_EXIT
    log = (home / ".claude" / "agent-hooks.log").read_text()
    assert log.count("event=guard refused branch main in ") == 1  # hooks only leave a trace
    assert "src/a.py (bob)" in log


def test_ref_updates_that_change_nothing_held_pass(home: Path, repo: Path) -> None:
    main, side = branches(repo, home)
    reserve(home, repo, "bob", "docs/**")
    zero = "0" * 40
    for lines, checked in (
        (f"{main} {side} refs/heads/main\n", 1),  # src/a.py: not held
        (f"{zero} {side} refs/heads/new\n", 0),  # created
        (f"{zero} {main} refs/heads/main\n", 0),  # rewritten with the commit it has
        (f"{main} {zero} refs/heads/side\n", 0),  # deleted
        (f"{main} {side} refs/remotes/origin/main\n", 0),
    ):
        result = run(home, "check", "--repo", str(repo), "--ref-updates", input=lines)
        assert result.exit_code == 0, result.output
        counted = "1 path" if checked == 1 else f"{checked} paths"
        held = "it is not" if checked == 1 else "none is"
        assert result.output == (
            f"ok: {counted} changed by the branch updates; {held} held exclusively by another agent\n"
        )
    assert (
        run(
            home,
            "check",
            "--repo",
            str(repo),
            "--ref-updates",
            agent="bob",
            input=f"{main} {side} refs/heads/main\n",
        ).exit_code
        == 0
    )


def test_ref_updates_warn_and_bypass(home: Path, repo: Path) -> None:
    main, side = branches(repo, home)
    reserve(home, repo, "bob", "src/**")
    lines = f"{main} {side} refs/heads/main\n"
    warned = run(
        home, "check", "--repo", str(repo), "--ref-updates", "--hook", "--mode", "warn", input=lines
    )
    assert warned.exit_code == 0
    assert "(warn-only): moving branch main changes files another agent holds" in warned.output
    bypassed = run(
        home,
        "check",
        "--repo",
        str(repo),
        "--ref-updates",
        "--hook",
        input=lines,
        AGENT_HOOKS_GUARD="off",
    )
    assert bypassed.exit_code == 0
    assert bypassed.output == "agent-hooks guard: AGENT_HOOKS_GUARD=off: branch main not checked\n"
    log = (home / ".claude" / "agent-hooks.log").read_text()
    assert "event=guard warned branch main in " in log
    assert "event=guard bypassed AGENT_HOOKS_GUARD=off: branch main in " in log


def test_a_bad_agent_name_refuses_a_check_but_not_a_bypass(home: Path, repo: Path) -> None:
    stage(repo, home, "src/a.py")
    bad = run(home, "check", "--repo", str(repo), agent="../evil")
    assert bad.exit_code == 1 and "AGENT_NAME" in bad.output
    bypass = run(
        home, "check", "--repo", str(repo), "--hook", agent="../evil", AGENT_HOOKS_GUARD="off"
    )
    assert bypass.exit_code == 0 and "AGENT_HOOKS_GUARD=off: commit not checked" in bypass.output


def test_check_errors_are_one_line(home: Path, repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    main, _ = branches(repo, home)
    for args, input in (
        (["check", "--repo", str(plain)], None),
        (["check", "--repo", str(plain), "--ref-updates"], ""),
        (["check", "--repo", str(repo), "--ref-updates"], f"{main} {'2' * 40} refs/heads/main\n"),
    ):
        result = run(home, *args, input=input)
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1


# -- whose reservations, and which holders, the guard counts (ADR-0006, ADR-0014) -------


def blocked_paths(home: Path, repo: Path, agent: str = "alice") -> list[str]:
    """The staged paths `guard check` refuses for `agent` (exit 1 exactly when some are)."""
    result = run(home, "check", "--repo", str(repo), "--json", agent=agent)
    assert result.exit_code == (1 if as_json(result)["blocked"] else 0), result.output
    return sorted(item["path"] for item in as_json(result)["blocked"])


def test_the_committers_own_reservation_never_blocks_its_commit_beside_anothers(
    home: Path, repo: Path
) -> None:
    """Alice commits what she holds and what Bob holds: only Bob's path is refused,
    and for Bob the other way round."""
    reserve(home, repo, "alice", "src/**")
    reserve(home, repo, "bob", "docs/**")
    stage(repo, home, "src/a.py", "docs/b.md", "README.md")
    assert blocked_paths(home, repo, "alice") == ["docs/b.md"]
    assert blocked_paths(home, repo, "bob") == ["src/a.py"]
    assert blocked_paths(home, repo, "carol") == ["docs/b.md", "src/a.py"]


@pytest.fixture
def dead_holder() -> dict[str, Any]:
    """The holder record of a Claude Code process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=PIPE)
    record = liveness.process(proc.pid)
    assert record["start"] is not None and liveness.alive(record) is True
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait()
    assert liveness.alive(record) is False
    return record


def test_a_reservation_whose_holder_died_does_not_block_a_commit(
    home: Path, repo: Path, dead_holder: dict[str, Any]
) -> None:
    live = liveness.process(os.getpid())
    reserve(home, repo, "bob", "src/**", holder=live)
    reserve(home, repo, "carol", "docs/**", holder=dead_holder)
    stage(repo, home, "src/a.py", "docs/b.md")
    assert blocked_paths(home, repo) == ["src/a.py"]


def test_a_kept_reservation_blocks_a_commit_after_its_holder_died(
    home: Path, repo: Path, dead_holder: dict[str, Any]
) -> None:
    reserve(home, repo, "carol", "docs/**", holder=dead_holder, keep=True)
    stage(repo, home, "src/a.py", "docs/b.md")
    assert blocked_paths(home, repo) == ["docs/b.md"]


def card(repo: Path, owner: str, heard_from: float) -> None:
    """`owner`'s writer card in the ledger, last touched at `heard_from` (ADR-0015)."""
    path = repo / ".git" / "agent-hooks" / "writers" / owner
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"writer": owner, "agent": owner}))
    os.utime(path, (heard_from, heard_from))


def test_a_holder_on_another_host_blocks_a_commit_only_while_heard_from(
    home: Path, repo: Path
) -> None:
    """Its pid means nothing here: bob was heard from 30 s ago (counts), carol 15 min
    ago (longer than a lease's 10 min and its slack: silent), dave never."""
    elsewhere = {"pid": 4242, "start": 99, "host": "elsewhere/boot/pid:[4026531836]"}
    for owner, pattern_text in (("bob", "src/**"), ("carol", "docs/**"), ("dave", "lib/**")):
        reserve(home, repo, owner, pattern_text, holder=elsewhere)
    card(repo, "bob", NOW - 30)
    card(repo, "carol", NOW - 15 * 60)
    stage(repo, home, "src/a.py", "docs/b.md", "lib/c.py")
    assert blocked_paths(home, repo) == ["src/a.py"]
    card(repo, "carol", NOW - 30)
    assert blocked_paths(home, repo) == ["docs/b.md", "src/a.py"]
