"""`agent-hooks guard install | uninstall | status | check` through click's CliRunner,
in real temporary git repositories; the clock and the environment come from Env."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agent_hooks.cli._common import Env
from agent_hooks.cli.guard import guard
from agent_hooks.interop import git_guard
from agent_hooks.reservations import pattern
from agent_hooks.reservations import store as reservation_store

NOW = 1_800_000_000.0


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "T"], ["config", "user.email", "t@e"]):
        subprocess.run(
            ["git", *args],
            cwd=path,
            check=True,
            env={"PATH": os.environ["PATH"], "HOME": str(home)},
        )
    return Path(os.path.realpath(path))


def stage(repo: Path, home: Path, *rels: str) -> None:
    for rel in rels:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(rel)
    subprocess.run(
        ["git", "add", "-A"],
        cwd=repo,
        check=True,
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
    )


def reserve(home: Path, repo: Path, agent: str, *patterns: str, ttl: int = 3600) -> None:
    outcome = reservation_store.reserve(
        str(home / ".claude"),
        str(repo),
        agent,
        [(p, pattern.compile(p)) for p in patterns],
        reason="farmhand-7",
        ttl=ttl,
        shared=False,
        keep=False,
        now=NOW,
    )
    assert not outcome.conflicts


def run(
    home: Path, *args: str, agent: str | None = "alice", now: float = NOW, **environ: str
) -> Result:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], **environ}
    if agent is not None:
        env["AGENT_NAME"] = agent
    return CliRunner().invoke(guard, list(args), obj=Env(environ=env, now=now))


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_install_status_uninstall_round_trip(home: Path, repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    installed = run(home, "install", "--repo", str(repo), "--json")
    assert installed.exit_code == 0, installed.output
    doc = as_json(installed)
    assert doc["result"] == "installed, chaining the existing hook"
    assert doc["chained"] == str(hook.parent / git_guard.CHAINED) and doc["mode"] == "block"

    again = as_json(run(home, "install", "--repo", str(repo), "--json"))
    assert again["result"] == "unchanged"
    status = as_json(run(home, "status", "--repo", str(repo), "--json"))
    assert status["installed"] is True and status["mode"] == "block" and status["python_ok"] is True

    removed = run(home, "uninstall", "--repo", str(repo))
    assert removed.exit_code == 0
    assert "removed; the original hook is back" in removed.output
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert as_json(run(home, "status", "--repo", str(repo), "--json"))["installed"] is False


def test_install_warn_only_and_human_status(home: Path, repo: Path) -> None:
    subprocess.run(["git", "config", "core.hooksPath", "hooks"], cwd=repo, check=True)
    result = run(home, "install", "--repo", str(repo), "--warn-only")
    assert result.exit_code == 0, result.output
    assert f"{repo}/hooks/pre-commit: installed (warn-only)" in result.output
    text = run(home, "status", "--repo", str(repo)).output
    assert "core.hooksPath = hooks" in text and "installed (warn mode)" in text


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
    assert hooked.exit_code == git_guard.BLOCKED_EXIT


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


def test_check_bypass_env_var(home: Path, repo: Path) -> None:
    reserve(home, repo, "bob", "src/**")
    stage(repo, home, "src/a.py")
    result = run(home, "check", "--repo", str(repo), "--json", AGENT_HOOKS_GUARD="off")
    assert result.exit_code == 0
    assert as_json(result) == {"allowed": True, "bypassed": True, "blocked": []}


def test_errors_are_one_line(home: Path, repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for args in (
        ["install", "--repo", str(plain)],
        ["check", "--repo", str(plain)],
        ["status", "--repo", str(tmp_path / "missing")],
    ):
        result = run(home, *args)
        assert result.exit_code == 1, args
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    bad = run(home, "check", "--repo", str(repo), agent="../evil")
    assert bad.exit_code == 1 and "AGENT_NAME" in bad.output


def test_help_texts(home: Path) -> None:
    for command in ("install", "uninstall", "status", "check"):
        result = run(home, command, "--help")
        assert result.exit_code == 0 and "--json" in result.output


def test_install_and_uninstall_keep_the_record_purge_reads(home: Path, repo: Path) -> None:
    from agent_hooks.interop import guard_record

    state_dir = str(home / ".claude")
    assert run(home, "install", "--repo", str(repo)).exit_code == 0
    assert run(home, "install", "--repo", str(repo)).exit_code == 0  # once per hook file
    (entry,) = guard_record.load(state_dir)
    assert entry["repo"] == str(repo)
    assert entry["hook"] == str(repo / ".git" / "hooks" / "pre-commit")
    assert run(home, "uninstall", "--repo", str(repo)).exit_code == 0
    assert guard_record.load(state_dir) == []
