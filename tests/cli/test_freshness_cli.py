"""`agent-hooks freshness`: the decision in words for people, as a token in --json."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_harness import NOW, Cli

from agent_hooks import tool_use
from agent_hooks.agents import state_file, trail
from agent_hooks.cli import freshness


@pytest.fixture
def cli(home: Path, project: Path) -> Cli:
    runner = Cli(home, project, freshness)
    runner.begin("conv-1")
    return runner


def _read(cli: Cli, count: int) -> list[Path]:
    src = cli.project / "src"
    src.mkdir()
    files = [src / f"m{i}.py" for i in range(count)]
    for f in files:
        f.write_text("v1\n")

    def read_all(doc: dict[str, Any]) -> None:
        trail.record(doc, [(tool_use.READ, str(f)) for f in files], 500)

    state_file.update(cli.agent(), read_all, NOW, print)
    return files


def _change(*files: Path) -> None:
    for f in files:
        f.write_text("v2 by someone else\n")
        os.utime(f, (NOW + 10, NOW + 10))


TOKENS = ("resume_with_update", "start_fresh_with_briefing", "resume:")


def test_nothing_read_yet(cli: Cli) -> None:
    assert cli.ok("freshness").stdout == (
        "Resume: this conversation has read or modified no file yet.\n"
    )


def test_resume_in_words(cli: Cli) -> None:
    _read(cli, 3)
    text = cli.ok("freshness").stdout
    assert text == "Resume: none of the 3 files this conversation relied on changed.\n"
    assert json.loads(cli.ok("freshness", "--json").stdout)["decision"] == "resume"


def test_resume_with_update_in_words(cli: Cli) -> None:
    files = _read(cli, 3)
    _change(files[1])
    text = cli.ok("freshness").stdout
    assert text == (
        "Resume, after re-reading the changed files: 1 of the 3 files this conversation "
        "relied on changed.\n  src/m1.py\n"
    )
    assert not any(token in text for token in TOKENS)
    data = json.loads(cli.ok("freshness", "--json").stdout)
    assert data["decision"] == "resume_with_update"


def test_start_fresh_in_words_for_many_changes_and_for_a_critical_file(cli: Cli) -> None:
    files = _read(cli, 7)
    _change(*files)
    text = cli.ok("freshness").stdout
    assert text.startswith(
        "Start a fresh conversation from the briefing: 7 of the 7 files this conversation "
        "relied on changed (more than 5).\n"
    )
    critical = cli.ok("freshness", env={"AGENT_HOOKS_CRITICAL_FILES": "src/m0.py"}).stdout
    assert "1 critical file among them." in critical and "src/m0.py  (critical)" in critical
    assert not any(token in text + critical for token in TOKENS)
    data = json.loads(cli.ok("freshness", "--json").stdout)
    assert data["decision"] == "start_fresh_with_briefing"


def test_help_names_the_json_tokens(cli: Cli) -> None:
    text = " ".join(cli.ok("freshness", "--help").stdout.split())
    assert "resume, resume_with_update or start_fresh_with_briefing" in text
