"""`agent-hooks doctor` (and the warning `status` gives): will each client agent-hooks is
installed into run its hooks? Exit 1 and one line per problem when one will not."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agent_hooks.cli import doctor, status
from agent_hooks.install import clients
from cli.cli_harness import Cli


def _cli(home: Path, project: Path, data: Path) -> tuple[Cli, dict[str, str]]:
    env = {"AGENT_HOOKS_HOME": str(data), "PATH": "/nonexistent"}
    return Cli(home, project, doctor, status), env


def _install_codex(home: Path, data: Path) -> None:
    entry = data / "hooks" / "entry.pyc"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"")
    environ = {"HOME": str(home), "PATH": "/nonexistent"}
    record = str(data / clients.RECORD_NAME)
    python = os.path.realpath(sys.executable)
    assert (
        clients.install(["codex"], python, str(entry), project=None, record=record, environ=environ)
        == 0
    )


def test_nothing_installed(home: Path, project: Path, tmp_path: Path) -> None:
    cli, env = _cli(home, project, tmp_path / "data")
    assert cli.ok("doctor", env=env).stdout == (
        "agent-hooks is installed into no client here (./install.sh installs it)\n"
    )
    assert json.loads(cli.ok("doctor", "--json", env=env).stdout) == []


def test_a_stale_codex_hash_is_a_problem_in_doctor_and_status(
    home: Path, project: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    _install_codex(home, data)
    cli, env = _cli(home, project, data)
    assert cli.ok("doctor", env=env).stdout == f"Codex: ok — {home}/.codex/hooks.json\n"
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
        "(install again: ./install.sh --clients codex)"
    )
    (found,) = json.loads(cli("doctor", "--json", env=env).stdout)
    assert (found["client"], found["ok"], len(found["problems"])) == ("codex", False, 1)
    said = cli.ok("status", env=env).stdout.splitlines()
    assert said[2] == (
        "warning: Codex's SessionStart hook is modified: Codex silently skips it (install "
        "again: ./install.sh --clients codex) (agent-hooks doctor says more)"
    )
    assert json.loads(cli.ok("status", "--json", env=env).stdout)["client_problems"] == [
        lines[1].strip()
    ]
