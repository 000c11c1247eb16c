"""agent-hooks loaded twice — as a plugin (`hooks/run`, what `claude --plugin-dir` runs) and
installed into a settings file — handles each event once: the installed copy acts, the
plugin's SessionStart says so in a `systemMessage` and its other hooks stand aside.

Both copies are run for the same event exactly as Claude Code runs them (it runs every
matching handler, in parallel): the plugin's command through `/bin/sh -c`, with
`CLAUDE_PLUGIN_ROOT` and `CLAUDE_CODE_SESSION_ID` set, and the installed command as the
settings file spells it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import claude_settings
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import ENTRY, ROOT, load_payload

ME, OTHER = "proj__cc_1", "proj__cc_2"
SESSION = "5e551011-0000-4000-8000-000000000001"


class Both:
    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.state_dir = home / ".claude"
        self.settings = self.state_dir / "settings.json"

    def install(self, python: str = sys.executable, where: Path | None = None) -> None:
        """What install.sh writes: absolute interpreter, -IS, the entry script."""
        path = where or self.settings
        path.parent.mkdir(parents=True, exist_ok=True)
        block = claude_settings.hooks_block(claude_settings.installed_command(python, ENTRY))
        path.write_text(json.dumps({"hooks": block}))

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "AGENT_NAME": ME,
            "CLAUDE_PROJECT_DIR": str(self.project),
            "CLAUDE_CODE_SESSION_ID": SESSION,
            "CLAUDE_PLUGIN_ROOT": str(ROOT),
            "AGENT_HOOKS_PYTHON": sys.executable,
        }
        env.update(extra)
        return env

    def commands(self, event: str) -> dict[str, str]:
        """The plugin's command and (when installed) the installed one, for `event`."""
        found = {"plugin": f'"{ROOT}/hooks/run" {event}'}
        for path in (
            self.settings,
            self.project / ".claude" / "settings.json",
            self.project / ".claude" / "settings.local.json",
        ):
            if path.exists():
                for group in json.loads(path.read_text())["hooks"].get(event, [])[:1]:
                    found["installed"] = group["hooks"][0]["command"]
        return found

    def run(
        self,
        event: str,
        fixture: str,
        env: dict[str, str] | None = None,
        only: str | None = None,
        **stdin: Any,
    ) -> dict[str, Any]:
        """Run every copy's handler for `event`; what each printed (None: nothing)."""
        payload = json.dumps(
            load_payload(fixture, str(self.project), str(self.home), session_id=SESSION, **stdin)
        )
        out: dict[str, Any] = {}
        for copy, command in self.commands(event).items():
            if only is not None and copy != only:
                continue
            proc = subprocess.run(
                ["/bin/sh", "-c", command],
                input=payload,
                capture_output=True,
                text=True,
                env=self.env(**(env or {})),
                cwd=str(self.project),
                timeout=60,
            )
            assert proc.returncode == 0 and proc.stderr == "", (copy, proc.stderr)
            out[copy] = json.loads(proc.stdout) if proc.stdout.strip() else None
        return out

    def denies(self) -> list[str]:
        log = self.state_dir / "agent-hooks.log"
        return (
            [line for line in log.read_text().splitlines() if "denied" in line]
            if log.exists()
            else []
        )

    def reserve_for_other(self) -> None:
        outcome = reservation_store.reserve(
            Repo(str(self.project), str(self.state_dir)),
            Writer(OTHER, None),
            [("src/**", pattern.compile("src/**"))],
            time.time(),
            reason="farmhand-42",
            ttl=3600,
            shared=False,
            keep=False,
        )
        assert not outcome.conflicts


@pytest.fixture
def both(home: Path, project: Path) -> Both:
    return Both(home, project)


def _is_deny(output: Any) -> bool:
    return bool(output) and output["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_installed_and_plugin_each_event_handled_once(both: Both) -> None:
    both.install()
    start = both.run("SessionStart", "SessionStart_startup")
    assert "additionalContext" in start["installed"]["hookSpecificOutput"]
    plugin = start["plugin"]
    assert set(plugin) == {"systemMessage"}  # no second context for the model
    message = plugin["systemMessage"]
    assert "loaded twice" in message and str(both.settings) in message
    assert "the installed hooks run, the plugin's stand aside" in message

    both.reserve_for_other()
    write = both.run(
        "PreToolUse",
        "PreToolUse_Write",
        tool_input={"file_path": str(both.project / "src" / "app.py"), "content": "x"},
    )
    assert _is_deny(write["installed"]) and write["plugin"] is None
    assert len(both.denies()) == 1  # one deny line per call in the log, not two

    for event, fixture in (("PostToolUse", "PostToolUse_Read"), ("Stop", "Stop")):
        out = both.run(event, fixture)
        assert out["plugin"] is None


def test_the_person_is_told_once_per_conversation(both: Both) -> None:
    both.install()
    assert "systemMessage" in both.run("SessionStart", "SessionStart_startup")["plugin"]
    again = both.run("SessionStart", "SessionStart_compact")["plugin"]
    assert again is None  # same conversation, compacted: already told, nothing to add


def test_the_plugin_alone_acts(both: Both) -> None:
    start = both.run("SessionStart", "SessionStart_startup")
    assert set(start) == {"plugin"}
    assert "additionalContext" in start["plugin"]["hookSpecificOutput"]
    assert "systemMessage" not in start["plugin"]
    both.reserve_for_other()
    write = both.run(
        "PreToolUse",
        "PreToolUse_Write",
        tool_input={"file_path": str(both.project / "src" / "app.py"), "content": "x"},
    )
    assert _is_deny(write["plugin"])
    assert len(both.denies()) == 1


def test_installed_in_project_local_settings_counts_too(both: Both) -> None:
    both.install(where=both.project / ".claude" / "settings.local.json")
    start = both.run("SessionStart", "SessionStart_startup")
    assert set(start["plugin"]) == {"systemMessage"}
    assert "settings.local.json" in start["plugin"]["systemMessage"]


def test_an_installed_copy_that_cannot_run_leaves_the_plugin_acting(
    both: Both, tmp_path: Path
) -> None:
    both.install(python=str(tmp_path / "gone" / "bin" / "python"))
    plugin_start = both.run("SessionStart", "SessionStart_startup", only="plugin")["plugin"]
    assert "additionalContext" in plugin_start["hookSpecificOutput"]
    assert (
        "cannot run" in plugin_start["systemMessage"]
        and "is missing" in plugin_start["systemMessage"]
    )
    both.reserve_for_other()
    write = both.run(
        "PreToolUse",
        "PreToolUse_Write",
        only="plugin",
        tool_input={"file_path": str(both.project / "src" / "app.py"), "content": "x"},
    )
    assert _is_deny(write["plugin"])


def test_uninstalled_mid_conversation_the_plugin_takes_over_at_the_next_session_start(
    both: Both,
) -> None:
    both.install()
    both.run("SessionStart", "SessionStart_startup")
    both.settings.unlink()
    resumed = both.run("SessionStart", "SessionStart_resume")["plugin"]
    assert "additionalContext" in resumed["hookSpecificOutput"]
    both.reserve_for_other()
    write = both.run(
        "PreToolUse",
        "PreToolUse_Write",
        tool_input={"file_path": str(both.project / "src" / "app.py"), "content": "x"},
    )
    assert _is_deny(write["plugin"])


def test_without_a_session_id_both_run_and_the_person_is_told(both: Both) -> None:
    both.install()
    start = both.run("SessionStart", "SessionStart_startup", {"CLAUDE_CODE_SESSION_ID": ""})
    assert "additionalContext" in start["plugin"]["hookSpecificOutput"]
    assert "runs twice" in start["plugin"]["systemMessage"]


def test_the_runner_stands_aside_with_one_test_before_python_starts() -> None:
    """The hot path of the plugin form gains one `[ -e … ]` in sh, nothing in Python."""
    text = (ROOT / "hooks" / "run").read_text()
    assert text.count("[ -e ") == 1
    assert "plugin-stands-aside/$CLAUDE_CODE_SESSION_ID/$1" in text
    assert shlex.split(text.splitlines()[0]) == ["#!/bin/sh"]
