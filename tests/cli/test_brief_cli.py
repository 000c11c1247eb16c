"""`agent-hooks brief set-goal | add | focus | show | clear`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import AGENT, NOW, Cli

from agent_hooks.cli import brief


@pytest.fixture
def cli(home: Path, project: Path) -> Cli:
    return Cli(home, project, brief)


def test_record_and_show_a_briefing(cli: Cli) -> None:
    cli.ok("brief", "set-goal", "Ship", "user", "authentication")
    cli.ok("brief", "add", "--decision", "Use JWT", "--decision", "No new deps", now=NOW + 1)
    cli.ok(
        "brief",
        "add",
        "--finding",
        "bcrypt is vendored",
        "--change",
        "API moved to /v2",
        now=NOW + 2,
    )
    cli.ok("brief", "focus", "The login component", now=NOW + 3)
    text = cli.ok("brief", "show").output
    assert text.splitlines()[0].startswith(f"# briefing of {AGENT} for {cli.project}")
    assert "\n".join(text.splitlines()[1:]) == (
        "SESSION BRIEFING (from prior work):\n"
        "GOAL: Ship user authentication\n"
        "DECISIONS ALREADY MADE:\n- Use JWT\n- No new deps\n"
        "FINDINGS ALREADY CONFIRMED:\n- bcrypt is vendored\n"
        "WHAT HAS CHANGED SINCE LAST SESSION:\n- API moved to /v2\n"
        "FOCUS FOR THIS SESSION:\nThe login component\n"
        "Do not repeat work already completed. Build on the briefing above."
    )
    data = json.loads(cli.ok("brief", "show", "--json").output)
    assert data["decisions"] == [
        {"text": "Use JWT", "at": int(NOW + 1)},
        {"text": "No new deps", "at": int(NOW + 1)},
    ]
    assert data["updated_at"] == int(NOW + 3)


def test_briefings_are_per_agent(cli: Cli) -> None:
    cli.ok("brief", "set-goal", "mine")
    assert "No briefing is recorded" in cli.ok("brief", "show", agent="proj__cc_2").output
    cli.ok("brief", "set-goal", "for two", "--agent", "proj__cc_2")
    assert (
        json.loads(cli.ok("brief", "show", "--json", agent="proj__cc_2").output)["goal"]
        == "for two"
    )
    assert json.loads(cli.ok("brief", "show", "--json").output)["goal"] == "mine"


def test_clear(cli: Cli) -> None:
    cli.ok("brief", "focus", "x")
    assert json.loads(cli.ok("brief", "clear", "--json").output) == {"cleared": True}
    assert json.loads(cli.ok("brief", "show", "--json").output) is None
    assert "no briefing" in cli.ok("brief", "clear").output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["brief", "add"], "give --decision, --finding or --change"),
        (["brief", "set-goal", "x" * 2001], "limit is 2000"),
        (["brief", "add", "--finding", "   "], "finding is empty"),
        (["brief", "focus", "a\x07b"], "control character"),
        (["brief", "show", "--agent", "../evil"], "AGENT_NAME"),
    ],
)
def test_bad_input_is_a_one_line_error(cli: Cli, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_brief_help(cli: Cli) -> None:
    for sub in ("set-goal", "add", "focus", "show", "clear"):
        assert "--json" in cli.ok("brief", sub, "--help").output


def test_show_gives_people_local_time_and_json_epoch(cli: Cli, far_timezone: None) -> None:
    cli.ok("brief", "set-goal", "Ship")
    assert "(updated 2027-01-15 13:30 IST)" in cli.ok("brief", "show").output.splitlines()[0]
    assert json.loads(cli.ok("brief", "show", "--json").output)["updated_at"] == int(NOW)
