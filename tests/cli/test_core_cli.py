"""The core CLI (status, agents, trail, cleanup) through click's CliRunner, with the
environment and clock given by `Env`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click
import pytest
from cli_harness import one_line_error
from click.testing import CliRunner, Result

from agent_hooks.cli import main
from agent_hooks.cli._common import Env
from hook_runner import HookRunner, context_of, write_state

NOW = 1_800_000_000.0
DAY = 86400
ME = "proj__cc_1"


def invoke(
    home: Path,
    args: list[str],
    agent: str | None = ME,
    now: float = NOW,
    extra: dict[str, str] | None = None,
) -> Result:
    environ = (
        {"HOME": str(home)} | ({"AGENT_NAME": agent} if agent is not None else {}) | (extra or {})
    )
    return CliRunner().invoke(main, args, obj=Env(environ=environ, now=now))


def parse(result: Result) -> Any:
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


def doc(project: Path, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "registered": True,
        "active": True,
        "pid": None,
        "project_root": str(project),
        "conversation_id": "conv-1",
        "session_start": int(NOW - 600),
        "last_activity": int(NOW - 60),
        "files_created": [f"{project}/src/new.py"],
        "files_modified": [f"{project}/src/a.py", "/etc/outside.conf"],
        "files_read": [f"{project}/README.md", f"{project}/src/a.py", f"{project}/docs/x.md"],
    }
    return base | fields


# --- --help and --json


def _commands() -> list[str]:
    return sorted(main.commands)


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help(home: Path, command: str) -> None:
    result = invoke(home, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Usage: main {command}") or "Usage:" in result.stdout
    summary = main.commands[command].get_short_help_str()
    assert summary and summary != command


def test_group_help_lists_the_core_commands(home: Path) -> None:
    result = invoke(home, ["--help"])
    assert result.exit_code == 0
    for command in ("status", "agents", "trail", "cleanup"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["status", "agents", "trail", "cleanup"])
def test_core_commands_offer_json(command: str) -> None:
    assert any(
        isinstance(p, click.Option) and "--json" in p.opts for p in main.commands[command].params
    )


# --- status


def test_status_before_any_session(home: Path) -> None:
    result = invoke(home, ["status"])
    assert result.exit_code == 0
    assert "no state yet" in result.stdout and ME in result.stdout
    data = parse(invoke(home, ["status", "--json"]))
    assert data["exists"] is False and data["agent"] == ME
    assert not (home / ".claude").exists()  # reading never creates anything


def test_status_shows_this_agent(home: Path, project: Path) -> None:
    write_state(home / ".claude", ME, doc(project, issue_id="farmhand-42"))
    result = invoke(home, ["status"])
    assert result.exit_code == 0
    for text in (
        ME,
        str(project),
        "conv-1",
        "1 created, 2 modified, 3 read",
        "farmhand-42",
        "active",
    ):
        assert text in result.stdout
    data = parse(invoke(home, ["status", "--json"]))
    assert data == data | {
        "agent": ME,
        "exists": True,
        "project_root": str(project),
        "conversation_id": "conv-1",
        "active": True,
        "files_created": 1,
        "files_modified": 2,
        "files_read": 3,
        "issue_id": "farmhand-42",
        "state_file": str(home / ".claude" / f"state-{ME}.json"),
    }


def test_status_and_agents_count_the_trail_kept_beside_the_window(
    home: Path, project: Path
) -> None:
    """The state holds a window of the trail; the counts are of the whole of it."""
    from agent_hooks import identity
    from agent_hooks.agents import trail_spill

    write_state(home / ".claude", ME, doc(project))
    agent = identity.Agent(ME, str(home / ".claude"))
    more = [("files_modified", f"{project}/gen/{n}.py") for n in range(150)]
    again = ("files_modified", f"{project}/src/a.py")  # left the window, then written again
    trail_spill.spill(agent, "conv-1", [again, *more, ("files_created", f"{project}/gen/new.py")])
    trail_spill.spill(agent, "conv-0", [("files_created", f"{project}/old.py")])  # another one
    assert "2 created, 152 modified, 3 read" in invoke(home, ["status"]).stdout
    (row,) = parse(invoke(home, ["agents", "--json"]))
    assert (row["files_created"], row["files_modified"], row["files_read"]) == (2, 152, 3)
    listed = parse(invoke(home, ["trail", "--json"]))["trails"][0]
    assert len(listed["files_modified"]) == 152 and len(listed["files_created"]) == 2
    assert listed["files_modified"][:2] == [f"{project}/src/a.py", f"{project}/gen/0.py"]
    assert listed["files_modified"][-1] == "/etc/outside.conf"  # first seen: kept beside


def test_status_of_another_agent_and_of_the_shared_one(home: Path, project: Path) -> None:
    write_state(home / ".claude", "proj__cc_2", doc(project, files_read=[]))
    write_state(home / ".claude", None, doc(project, files_created=[]))
    assert parse(invoke(home, ["status", "--agent", "proj__cc_2", "--json"]))["files_read"] == 0
    shared = parse(invoke(home, ["status", "--json"], agent=None))
    assert shared["agent"] is None and shared["files_created"] == 0
    assert shared["state_file"].endswith("/agent-state.json")


def test_status_honours_claude_config_dir(home: Path, project: Path, tmp_path: Path) -> None:
    write_state(tmp_path / "cfg", ME, doc(project))
    data = parse(
        invoke(home, ["status", "--json"], extra={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    )
    assert data["exists"] is True and data["state_file"] == str(
        tmp_path / "cfg" / f"state-{ME}.json"
    )


def test_status_of_an_ended_conversation_is_inactive(home: Path, project: Path) -> None:
    write_state(home / ".claude", ME, doc(project, active=False))
    assert parse(invoke(home, ["status", "--json"]))["active"] is False


def test_status_of_a_corrupt_state_file_is_a_clear_error(home: Path) -> None:
    path = write_state(home / ".claude", ME, "{oops")
    one_line_error(invoke(home, ["status"]), "not valid JSON")
    assert path.read_text() == "{oops"  # the CLI reads; it does not quarantine


BAD_NAMES = ["a/b", "..", "../../etc/passwd", "x" * 129, "a\x1bb", "tab\there"]


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["trail"], ["trail", "--json"]])
def test_a_bad_agent_name_is_one_line_and_exit_1(home: Path, name: str, args: list[str]) -> None:
    result = invoke(home, args, agent=name)
    one_line_error(result, "AGENT_NAME")
    assert not (home / ".claude").exists()


@pytest.mark.parametrize("args", [["status"], ["trail"], ["status", "--json"], ["trail", "--json"]])
def test_a_name_too_long_for_a_file_name_is_a_clear_error(home: Path, args: list[str]) -> None:
    """128 characters pass the length rule, but 128 two-byte characters make a
    file name longer than the 255 bytes a file system allows."""
    (home / ".claude").mkdir()
    write_state(home / ".claude", "someone", {"registered": True})
    one_line_error(invoke(home, args, agent="é" * 128), "200")
    assert sorted(p.name for p in (home / ".claude").iterdir()) == ["state-someone.json"]


@pytest.mark.parametrize("args", [["agents"], ["cleanup", "--dry-run", "--days", "0"]])
def test_commands_about_every_agent_work_whatever_the_callers_name(
    home: Path, args: list[str]
) -> None:
    (home / ".claude").mkdir()
    write_state(home / ".claude", "someone", {"registered": True})
    result = invoke(home, args, agent="é" * 128)
    assert result.exit_code == 0, result.output
    assert "someone" in result.output


@pytest.mark.parametrize("name", ["a/b", "..", "x" * 129, ""])
@pytest.mark.parametrize("args", [["trail", "{}"], ["status", "--agent", "{}"]])
def test_a_bad_agent_argument_is_one_line_and_exit_1(
    home: Path, name: str, args: list[str]
) -> None:
    one_line_error(invoke(home, [a.format(name) if a == "{}" else a for a in args]))


# --- agents


def test_agents_lists_every_agent(home: Path, project: Path, tmp_path: Path) -> None:
    sdir = home / ".claude"
    write_state(sdir, ME, doc(project))
    write_state(sdir, "proj__cc_2", doc(project, active=False, files_read=[]))
    write_state(sdir, "elsewhere__cc_1", doc(tmp_path / "elsewhere"))
    write_state(sdir, None, doc(project, last_activity=int(NOW - 3 * DAY)))
    write_state(sdir, "broken", "{not json")
    (sdir / "settings.json").write_text("{}")
    (sdir / "state-x.json.bak").write_text("{}")
    rows = parse(invoke(home, ["agents", "--json"]))
    names = [r["agent"] for r in rows]
    assert names == [None, "broken", "elsewhere__cc_1", ME, "proj__cc_2"]
    by_name = {r["agent"]: r for r in rows}
    assert (
        by_name[ME]
        | {
            "active": True,
            "files_created": 1,
            "files_modified": 2,
            "files_read": 3,
            "project_root": str(project),
            "last_activity": int(NOW - 60),
        }
        == by_name[ME]
    )
    assert by_name["proj__cc_2"]["active"] is False
    assert by_name[None]["active"] is False  # silent for 3 days with no pid known
    assert by_name["broken"]["problem"]
    text = invoke(home, ["agents"])
    assert text.exit_code == 0
    assert "unreadable" in text.stdout and "(shared agent-state.json)" in text.stdout
    assert "1m ago" in text.stdout and "3d ago" in text.stdout


def test_agents_of_one_project(home: Path, project: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    write_state(home / ".claude", ME, doc(project))
    write_state(home / ".claude", "other", doc(Path(os.path.realpath(tmp_path / "elsewhere"))))
    rows = parse(invoke(home, ["agents", "--project", str(project), "--json"]))
    assert [r["agent"] for r in rows] == [ME]
    one_line_error(
        invoke(home, ["agents", "--project", str(tmp_path / "missing")]), "not a directory"
    )


def test_agents_when_there_are_none(home: Path) -> None:
    assert parse(invoke(home, ["agents", "--json"])) == []
    result = invoke(home, ["agents"])
    assert result.exit_code == 0 and "No agents" in result.stdout


@pytest.mark.parametrize(
    "raw",
    [
        '{"active": true, "pid": 1099511627776}',
        '{"active": true, "last_activity": 1e400}',
        '{"session_start": -1e400}',
        '{"pid": -5, "active": true}',
        "[]",
        "",
    ],
    ids=[
        "huge pid",
        "infinite last_activity",
        "infinite session_start",
        "negative pid",
        "list",
        "empty",
    ],
)
def test_agents_survives_any_state_file(home: Path, project: Path, raw: str) -> None:
    write_state(home / ".claude", ME, doc(project))
    write_state(home / ".claude", "odd", raw)
    result = invoke(home, ["agents", "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert ME in [r["agent"] for r in json.loads(result.stdout)]
    assert invoke(home, ["agents"]).exit_code == 0


# --- trail


def test_trail_of_this_agent(home: Path, project: Path) -> None:
    write_state(home / ".claude", ME, doc(project))
    result = invoke(home, ["trail"])
    assert result.exit_code == 0
    out = result.stdout
    assert "created (1):\n  src/new.py" in out
    assert "modified (2):\n  src/a.py\n  /etc/outside.conf" in out
    assert "read (3):\n  README.md\n  src/a.py\n  docs/x.md" in out
    absolute = invoke(home, ["trail", "--absolute"]).stdout
    assert f"  {project}/src/new.py" in absolute
    data = parse(invoke(home, ["trail", "--json"]))
    assert data["agent"] == ME and len(data["trails"]) == 1
    current = data["trails"][0]
    assert current["files_created"] == [f"{project}/src/new.py"]
    assert current["files_read"] == [
        f"{project}/README.md",
        f"{project}/src/a.py",
        f"{project}/docs/x.md",
    ]
    assert current["conversation_id"] == "conv-1"


def test_trail_of_a_named_agent(home: Path, project: Path) -> None:
    write_state(home / ".claude", "proj__cc_2", doc(project, files_created=[f"{project}/two.py"]))
    data = parse(invoke(home, ["trail", "proj__cc_2", "--json"], agent=None))
    assert data["agent"] == "proj__cc_2"
    assert data["trails"][0]["files_created"] == [f"{project}/two.py"]


def _two_conversations(run_hook: HookRunner) -> None:
    """conv-1 edits one.py and is archived by /clear; conv-2 edits two.py."""
    for session, source, rel in (("conv-1", "startup", "one.py"), ("conv-2", "clear", "two.py")):
        payload = run_hook.payload("SessionStart_startup", session_id=session, source=source)
        context_of(run_hook("SessionStart", payload))
        edit = run_hook.payload("PostToolUse_Edit", session_id=session)
        edit["tool_input"]["file_path"] = str(run_hook.project / rel)
        assert run_hook("PostToolUse", edit).code == 0


def test_trail_previous_and_conversation(run_hook: HookRunner) -> None:
    _two_conversations(run_hook)
    home, p, now = run_hook.home, run_hook.project, time.time()
    current = parse(invoke(home, ["trail", "--json"], now=now))["trails"]
    assert [t["conversation_id"] for t in current] == ["conv-2"]
    both = parse(invoke(home, ["trail", "--previous", "--json"], now=now))["trails"]
    assert [t["conversation_id"] for t in both] == ["conv-2", "conv-1"]
    assert both[1]["files_modified"] == [f"{p}/one.py"]
    old = parse(invoke(home, ["trail", "--conversation", "conv-1", "--json"], now=now))["trails"]
    assert [t["files_modified"] for t in old] == [[f"{p}/one.py"]]
    live = parse(invoke(home, ["trail", "--conversation", "conv-2", "--json"], now=now))["trails"]
    assert [t["files_modified"] for t in live] == [[f"{p}/two.py"]]
    text = invoke(home, ["trail", "--previous"], now=now).stdout
    assert text.index("conv-2") < text.index("conv-1") and "one.py" in text and "two.py" in text


@pytest.mark.parametrize("conversation", ["nope", "../../state-proj__cc_1", "a/b", ""])
def test_trail_of_an_unknown_conversation_is_a_clear_error(
    home: Path, project: Path, conversation: str
) -> None:
    write_state(home / ".claude", ME, doc(project))
    one_line_error(invoke(home, ["trail", "--conversation", conversation]), "no trail")


def test_trail_of_a_corrupt_state_file_is_a_clear_error(home: Path) -> None:
    write_state(home / ".claude", ME, "[1, 2")
    one_line_error(invoke(home, ["trail"]), "not valid JSON")


# --- cleanup


def _aged(sdir: Path, name: str, age_days: float, now: float = NOW) -> Path:
    return write_state(sdir, name, {"registered": True}, mtime=now - age_days * DAY)


def test_cleanup_removes_old_agents_only(home: Path) -> None:
    sdir = home / ".claude"
    old = _aged(sdir, "old", 8)
    (sdir / "state-old.json.lock").write_text("")
    fresh = _aged(sdir, "fresh", 2)
    mine = _aged(sdir, ME, 30)
    (sdir / "settings.json").write_text("{}")
    os.utime(sdir / "settings.json", (NOW - 90 * DAY, NOW - 90 * DAY))
    result = invoke(home, ["cleanup"])
    assert result.exit_code == 0
    assert f"removed {old}" in result.stdout
    assert not old.exists() and not (sdir / "state-old.json.lock").exists()
    assert fresh.exists() and mine.exists() and (sdir / "settings.json").exists()


def test_cleanup_days_dry_run_and_json(home: Path) -> None:
    sdir = home / ".claude"
    three = _aged(sdir, "three", 3)
    one = _aged(sdir, "one", 1)
    dry = parse(invoke(home, ["cleanup", "--days", "2", "--dry-run", "--json"]))
    assert dry == {"dry_run": True, "removed": [str(three)], "kept_versions": []}
    assert three.exists()
    text = invoke(home, ["cleanup", "--days", "2", "--dry-run"])
    assert f"would remove {three}" in text.stdout and three.exists()
    done = parse(invoke(home, ["cleanup", "--days", "2", "--json"]))
    assert done == {"dry_run": False, "removed": [str(three)], "kept_versions": []}
    assert not three.exists() and one.exists()
    assert parse(invoke(home, ["cleanup", "--days", "0.5", "--json"]))["removed"] == [str(one)]


def test_cleanup_days_0_keeps_the_callers_own_state(home: Path) -> None:
    sdir = home / ".claude"
    mine = _aged(sdir, ME, 0.01)
    other = _aged(sdir, "other", 0.01)
    parse(invoke(home, ["cleanup", "--days", "0", "--json"]))
    assert mine.exists() and not other.exists()


@pytest.mark.parametrize("days", ["-1", "abc", ""])
def test_cleanup_refuses_bad_days(home: Path, days: str) -> None:
    old = _aged(home / ".claude", "old", 30)
    result = invoke(home, ["cleanup", "--days", days])
    assert result.exit_code != 0 and old.exists()
    assert "--days" in result.stderr


def test_cleanup_of_an_empty_or_missing_state_dir(home: Path) -> None:
    expected = {"dry_run": False, "removed": [], "kept_versions": []}
    assert parse(invoke(home, ["cleanup", "--json"])) == expected
    assert "Nothing to remove from" in invoke(home, ["cleanup"]).stdout


def test_cleanup_says_what_it_did_in_sentences(home: Path) -> None:
    sdir = home / ".claude"
    _aged(sdir, "a", 9)
    _aged(sdir, "b", 9)
    dry = invoke(home, ["cleanup", "--dry-run"]).stdout
    assert dry.endswith(f"Would remove 2 files from {sdir}.\n"), dry
    assert "(s)" not in dry and "would remove from" not in dry
    (sdir / "state-b.json").unlink()
    done = invoke(home, ["cleanup"]).stdout
    assert done.endswith(f"Removed 1 file from {sdir}.\n"), done
    assert invoke(home, ["cleanup"]).stdout == f"Nothing to remove from {sdir}.\n"


# --- agents: a headed table, like reservations'


def test_agents_prints_a_table_under_column_headers(home: Path, project: Path) -> None:
    """`0c 2m 0r` beside `2m ago` read as minutes; each figure now stands under its
    header, numbers right-aligned."""
    write_state(home / ".claude", ME, doc(project))
    write_state(home / ".claude", "proj__cc_22", doc(project, files_read=[], active=False))
    write_state(home / ".claude", "proj__cod_1", doc(project, client="codex"))
    lines = invoke(home, ["agents"]).stdout.splitlines()
    header = lines[0]
    assert header.split() == [
        "AGENT", "CLIENT", "STATE", "LAST", "ACTIVE", "CREATED", "MODIFIED", "READ", "PROJECT",
    ]  # fmt: skip
    mine = next(line for line in lines if line.startswith(ME + " "))
    assert mine.split() == [ME, "-", "active", "1m", "ago", "1", "2", "3", str(project)]
    codex = next(line for line in lines if line.startswith("proj__cod_1 "))
    assert codex.split()[:3] == ["proj__cod_1", "codex", "active"]
    assert codex.index("codex") == header.index("CLIENT")
    listed = json.loads(invoke(home, ["agents", "--json"]).stdout)
    assert {row["agent"]: row["client"] for row in listed} == {
        ME: None,
        "proj__cc_22": None,
        "proj__cod_1": "codex",
    }
    for column in ("CREATED", "MODIFIED", "READ"):  # right-aligned under the header
        end = header.index(column) + len(column)
        assert all(line[end - 1].isdigit() and line[end] == " " for line in lines[1:])
    assert all(line.index(str(project)) == header.index("PROJECT") for line in lines[1:])


def test_agents_shows_an_unreadable_state_file_in_the_table(home: Path, project: Path) -> None:
    write_state(home / ".claude", ME, doc(project))
    write_state(home / ".claude", "broken", "{oops")
    lines = invoke(home, ["agents"]).stdout.splitlines()
    broken = next(line for line in lines if line.startswith("broken "))
    assert broken.split()[:7] == ["broken", "-", "unreadable", "-", "-", "-", "-"]
    assert "not JSON" in broken


# --- status and trail: AGENT or --agent, and no state file is an error


@pytest.mark.parametrize(
    "args",
    [
        ["trail", "nobody"],
        ["trail", "--agent", "nobody"],
        ["trail", "nobody", "--json"],
        ["status", "nobody"],
        ["status", "--agent", "nobody", "--json"],
        ["freshness", "nobody"],
    ],
)
def test_an_agent_without_a_state_file_is_an_error(
    home: Path, project: Path, args: list[str]
) -> None:
    write_state(home / ".claude", ME, doc(project))
    before = sorted(p.name for p in (home / ".claude").iterdir())
    one_line_error(invoke(home, args), "no agent named nobody", "state-nobody.json")
    assert sorted(p.name for p in (home / ".claude").iterdir()) == before


@pytest.mark.parametrize("command", ["trail", "status", "freshness"])
def test_an_agent_whose_state_a_write_is_moving_is_shown(
    home: Path, project: Path, command: str
) -> None:
    """Between a write's two renames the state is only under its aside name
    (ADR-0021): the agent is there all the same."""
    state = write_state(home / ".claude", ME, doc(project))
    state.rename(state.with_name(f".{state.name}.aside"))
    result = invoke(home, [command, ME, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)


@pytest.mark.parametrize("agent", ["newcomer", None])
def test_the_trail_of_this_agent_before_any_state_is_an_error(
    home: Path, agent: str | None
) -> None:
    one_line_error(invoke(home, ["trail"], agent=agent), "no state yet", "does not exist")
    assert not (home / ".claude").exists()


@pytest.mark.parametrize("command", ["status", "trail", "freshness"])
def test_agent_and_dash_dash_agent_are_the_same(home: Path, project: Path, command: str) -> None:
    write_state(home / ".claude", "proj__cc_2", doc(project))
    positional = parse(invoke(home, [command, "proj__cc_2", "--json"], agent=None))
    option = parse(invoke(home, [command, "--agent", "proj__cc_2", "--json"], agent=None))
    both = parse(invoke(home, [command, "proj__cc_2", "--agent", "proj__cc_2", "--json"]))
    assert positional == option == both
    assert positional["agent"] == "proj__cc_2"
    help_text = invoke(home, [command, "--help"]).stdout
    assert "[AGENT]" in help_text and "--agent NAME" in help_text


@pytest.mark.parametrize("command", ["status", "trail", "freshness"])
def test_two_different_agents_named_at_once_is_a_usage_error(home: Path, command: str) -> None:
    result = invoke(home, [command, "alice", "--agent", "bob"])
    assert result.exit_code == 2 and "give one" in result.stderr


def test_cleanup_goes_on_past_another_agents_planted_lock_symlink(
    home: Path, tmp_path: Path
) -> None:
    sdir = home / ".claude"
    old = _aged(sdir, "old", 30)
    _aged(sdir, "planted", 30)
    victim = tmp_path / "victim"
    victim.write_text("secret")
    (sdir / "state-planted.json.lock").symlink_to(victim)
    done = parse(invoke(home, ["cleanup", "--json"]))
    assert done["removed"] == [str(old)]
    assert victim.read_text() == "secret"
