"""install_check: which settings files hold runnable installed hooks of ours."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_hooks.install import claude_settings, install_check


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "share" / "agent-hooks"
    bin_dir = data / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "agent-hooks"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    (data / "hooks").mkdir()
    (data / "hooks" / "entry.py").write_text("")
    return data, bin_dir


def test_installed_hooks_count_only_when_they_can_run_and_cover_every_matcher(
    tmp_path: Path,
) -> None:
    data, bin_dir = _venv(tmp_path)
    entry = str(data / "hooks" / "entry.py")
    block = claude_settings.hooks_block(
        claude_settings.installed_command(str(bin_dir / "python"), entry)
    )
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": block}))
    found = install_check.find_installed([str(settings)])
    assert found.covered() == list(dict.fromkeys(e for e, _, _ in claude_settings.HOOKS))
    block["PostToolUse"] = block["PostToolUse"][:1]  # an older block: no mcp matcher
    settings.write_text(json.dumps({"hooks": block}))
    assert "PostToolUse" not in install_check.find_installed([str(settings)]).covered()
    os.unlink(entry)
    broken = install_check.find_installed([str(settings)])
    assert broken.covered() == [] and "entry script" in broken.broken[0]
    plugin = {"hooks": claude_settings.hooks_block(claude_settings.plugin_command)}
    settings.write_text(json.dumps(plugin))  # the plugin's own commands are not an install
    assert install_check.find_installed([str(settings)]).files == []
