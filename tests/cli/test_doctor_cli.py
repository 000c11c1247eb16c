"""`agent-hooks doctor` (and the warning `status` gives): what the first hour trips on —
will each client agent-hooks is installed into run its hooks, does any hook point at
nothing, does a login shell find `agent-hooks`, can the state directory be written. Exit 1
and one line per problem, ending in its fix, when something is wrong."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent_hooks.cli import doctor, status
from agent_hooks.install import clients, hooks_file
from cli.cli_harness import Cli


def _cli(home: Path, project: Path, data: Path) -> tuple[Cli, dict[str, str]]:
    env = {"AGENT_HOOKS_HOME": str(data), "PATH": "/nonexistent", "SHELL": "/bin/sh"}
    return Cli(home, project, doctor, status), env


def _install(home: Path, data: Path, names: list[str], project: Path | None = None) -> None:
    entry = data / "hooks" / "entry.pyc"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(b"")
    environ = {"HOME": str(home), "PATH": "/nonexistent"}
    record = str(data / clients.RECORD_NAME)
    python = os.path.realpath(sys.executable)
    assert (
        clients.install(
            names,
            python,
            str(entry),
            project=str(project) if project else None,
            record=record,
            environ=environ,
        )
        == 0
    )


def test_nothing_installed(home: Path, project: Path, tmp_path: Path) -> None:
    cli, env = _cli(home, project, tmp_path / "data")
    assert cli.ok("doctor", env=env).stdout == (
        "agent-hooks is installed into no client here (./install.sh installs it)\n"
        f"state directory: ok — {home}/.claude\n"
    )
    assert json.loads(cli.ok("doctor", "--json", env=env).stdout) == {
        "ok": True,
        "clients": [],
        "checks": [
            {"check": "state directory", "where": f"{home}/.claude", "ok": True, "problems": []}
        ],
    }


def test_a_stale_codex_hash_is_a_problem_in_doctor_and_status(
    home: Path, project: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    _install(home, data, ["codex"])
    cli, env = _cli(home, project, data)
    assert cli.ok("doctor", env=env).stdout.splitlines()[0] == (
        f"Codex: ok — {home}/.codex/hooks.json"
    )
    assert "warning" not in cli.ok("status", env=env).stdout
    config = home / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace('trusted_hash = "sha256:', 'trusted_hash = "sha256:f', 1)
    )
    result = cli("doctor", env=env)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"Codex: PROBLEM — {home}/.codex/hooks.json"
    assert lines[1] == (
        "  Codex's SessionStart hook is modified: Codex silently skips it "
        "(fix: ./install.sh --clients codex)"
    )
    doc = json.loads(cli("doctor", "--json", env=env).stdout)
    (found,) = doc["clients"]
    assert doc["ok"] is False
    assert (found["client"], found["ok"], len(found["problems"])) == ("codex", False, 1)
    said = cli.ok("status", env=env).stdout.splitlines()
    assert said[2] == (
        "warning: Codex's SessionStart hook is modified: Codex silently skips it (fix: "
        "./install.sh --clients codex) (agent-hooks doctor says more)"
    )
    assert json.loads(cli.ok("status", "--json", env=env).stdout)["client_problems"] == [
        lines[1].strip()
    ]


def test_a_committed_project_file_naming_another_users_copy_is_found(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """A teammate's `--project` settings, committed and cloned: its hooks point at paths
    that do not exist here. They let everything through (the command fails open), so
    doctor says they guard nothing, and how to fix it."""
    settings = project / ".qwen" / "settings.json"
    settings.parent.mkdir()
    block = hooks_file.hooks_block(
        [("PreToolUse", "run_shell_command", 10)],
        lambda event: hooks_file.hook_command(
            "/home/someone/.local/share/agent-hooks/venv/bin/python",
            "/home/someone/.local/share/agent-hooks/hooks/entry.pyc",
            "qwen",
            event,
        ),
    )
    settings.write_text(json.dumps({"hooks": block}))
    cli, env = _cli(home, project, tmp_path / "data")
    result = cli("doctor", env=env)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"Qwen Code (project {project}): PROBLEM — {settings}"
    assert lines[1] == (
        f"  {settings}: a hook points at nothing (its interpreter "
        "/home/someone/.local/share/agent-hooks/venv/bin/python is missing), so it guards "
        f"nothing (fix: ./install.sh --clients qwen --project {project}, or ./install.sh "
        f"--uninstall --project {project})"
    )


def _link(tmp_path: Path, data: Path) -> Path:
    """What install.sh leaves: `<bin>/agent-hooks` and `<data>/cli-link` naming it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    link = bin_dir / "agent-hooks"
    link.write_text("#!/bin/sh\n")
    link.chmod(0o755)
    data.mkdir(parents=True, exist_ok=True)
    (data / "cli-link").write_text(f"{link}\n")
    return link


def test_a_login_shell_that_does_not_find_agent_hooks_is_a_problem_with_its_line(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """A real login shell (`sh -l` reads ~/.profile) is asked, as tmux panes start one."""
    data = tmp_path / "data"
    link = _link(tmp_path, data)
    cli, env = _cli(home, project, data)
    result = cli("doctor", env=env)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-3] == "login shell PATH: PROBLEM — /bin/sh"
    assert lines[-2] == (
        f"  {link.parent} is not on the PATH of your login shell (/bin/sh), so agents in new "
        f'tmux panes cannot run agent-hooks by name (fix: add `export PATH="{link.parent}:$PATH"` '
        f"to {home}/.profile, or run ./install.sh --yes)"
    )
    (home / ".profile").write_text(f'export PATH="{link.parent}:$PATH"\n')
    result = cli("doctor", env=env)
    assert result.exit_code == 0, result.stdout
    assert "login shell PATH: ok — /bin/sh" in result.stdout.splitlines()


def test_a_state_directory_that_cannot_be_made_is_a_problem(
    home: Path, project: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cli, env = _cli(home, project, tmp_path / "data")
    result = cli("doctor", env={**env, "CLAUDE_CONFIG_DIR": str(blocker / "claude")})
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2:] == [
        f"state directory: PROBLEM — {blocker}/claude",
        f"  {blocker} is not a directory (fix: mv {blocker} {blocker}.bak)",
    ]


@pytest.mark.skipif(os.getuid() == 0, reason="root may write any directory")
def test_a_state_directory_that_is_not_writable_is_a_problem(
    home: Path, project: Path, tmp_path: Path
) -> None:
    state = home / ".claude"
    state.mkdir(exist_ok=True)
    state.chmod(0o500)
    try:
        cli, env = _cli(home, project, tmp_path / "data")
        result = cli("doctor", env=env)
    finally:
        state.chmod(0o700)
    assert result.exit_code == 1
    assert f"(fix: chmod u+rwx {state})" in result.stdout
