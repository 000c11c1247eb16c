"""cli_command: the absolute path of this installed copy's `agent-hooks` command."""

from __future__ import annotations

from pathlib import Path

from agent_hooks.install import cli_command


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "share" / "agent-hooks"
    bin_dir = data / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "agent-hooks"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    return data, bin_dir


def test_cli_path_is_the_link_install_made_while_it_points_into_the_venv(tmp_path: Path) -> None:
    data, bin_dir = _venv(tmp_path)
    python = str(bin_dir / "python")
    assert cli_command.cli_path(python) == str(bin_dir / "agent-hooks")  # no link recorded
    link = tmp_path / "bin" / "agent-hooks"
    link.parent.mkdir()
    link.symlink_to(bin_dir / "agent-hooks")
    (data / "cli-link").write_text(f"{link}\n")
    assert cli_command.cli_path(python) == str(link)
    link.unlink()
    link.symlink_to("/elsewhere/agent-hooks")  # someone else's now
    assert cli_command.cli_path(python) == str(bin_dir / "agent-hooks")


def test_cli_path_ignores_a_relative_or_undecodable_record_and_a_missing_script(
    tmp_path: Path,
) -> None:
    data, bin_dir = _venv(tmp_path)
    python = str(bin_dir / "python")
    (data / "cli-link").write_text("bin/agent-hooks\n")
    assert cli_command.cli_path(python) == str(bin_dir / "agent-hooks")
    (data / "cli-link").write_bytes(b"\xff\xfe\n")
    assert cli_command.cli_path(python) == str(bin_dir / "agent-hooks")
    (bin_dir / "agent-hooks").unlink()
    assert cli_command.cli_path(python) is None
