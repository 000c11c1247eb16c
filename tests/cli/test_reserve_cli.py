"""`agent-hooks reserve | release | renew | reservations | check | strict` through
click's CliRunner, with HOME, AGENT_NAME, the project and the clock given by `Env`."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import one_line_error
from click.testing import CliRunner, Result

from agent_hooks.cli import main as cli_main
from agent_hooks.cli._common import Env

NOW = 1_800_000_000.0
HOUR = 3600


def until(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


class Cli:
    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project

    def __call__(
        self, agent: str | None, *args: str, now: float = NOW, env: dict[str, str] | None = None
    ) -> Result:
        environ = {"HOME": str(self.home), "CLAUDE_PROJECT_DIR": str(self.project)}
        if agent is not None:
            environ["AGENT_NAME"] = agent
        environ.update(env or {})
        return CliRunner().invoke(cli_main, list(args), obj=Env(environ=environ, now=now))

    def ok(
        self, agent: str | None, *args: str, now: float = NOW, env: dict[str, str] | None = None
    ) -> Result:
        result = self(agent, *args, now=now, env=env)
        assert result.exit_code == 0, (result.output, result.exception)
        return result

    def held(self, now: float = NOW) -> list[tuple[str | None, str]]:
        rows = json.loads(self.ok("nobody", "reservations", "--json", now=now).stdout)
        return sorted(((r["agent"], r["pattern"]) for r in rows), key=lambda x: (x[0] or "", x[1]))


@pytest.fixture
def cli(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    for rel in ("src/app.py", "lib/x.py", "docs/notes.md"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("x\n")
    outside = tmp_path / "elsewhere"  # a working directory in no project
    outside.mkdir()
    monkeypatch.chdir(outside)
    return Cli(home, project)


# --- reserve -------------------------------------------------------------------------


def test_reserve_reports_what_was_granted(cli: Cli) -> None:
    result = cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42")
    assert re.fullmatch(
        r"reserved src/\*\* \(exclusive, id r-[0-9a-f]{8}, reason: farmhand-42, 60 min left\)\n",
        result.stdout,
    ), result.stdout
    assert result.stderr == ""
    assert cli.held() == [("alice", "src/**")]


def test_reserve_options_ttl_shared_keep_and_json(cli: Cli) -> None:
    result = cli.ok(
        "alice",
        "reserve",
        "src/",
        "./docs//*.md",
        "--ttl",
        "2h",
        "--shared",
        "--keep",
        "--reason",
        "PROJ-7",
        "--json",
    )
    doc = json.loads(result.stdout)
    assert doc["conflicts"] == []
    granted = sorted(doc["granted"], key=lambda r: r["pattern"])
    assert [r["pattern"] for r in granted] == ["docs/*.md", "src/"]
    for r in granted:
        assert r["mode"] == "shared" and r["keep"] is True and r["reason"] == "PROJ-7"
        assert r["expires_at"] == int(NOW) + 2 * HOUR and r["minutes_left"] == 120
        assert r["agent"] == "alice" and r["project_root"] == str(cli.project)
        assert "compiled" not in r
    text = cli.ok("bob", "reserve", "src/app.py", "--shared").stdout
    assert "reserved src/app.py (shared," in text


def test_absolute_and_cwd_relative_patterns_become_root_relative(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "reserved lib/** (" in cli.ok("alice", "reserve", f"{cli.project}/lib/**").stdout
    monkeypatch.chdir(cli.project / "src")
    assert "reserved src/app.py (" in cli.ok("alice", "reserve", "app.py").stdout
    assert cli.held() == [("alice", "lib/**"), ("alice", "src/app.py")]


def test_conflict_names_every_holder_and_reserves_nothing(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42")
    cli.ok("carol", "reserve", "lib/", "--reason", "PROJ-7", "--ttl", "2h")
    result = cli("bob", "reserve", "docs/**", "src/app.py", "lib/x.py")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines == [
        'conflict: src/app.py overlaps: agent "alice" holds src/** '
        "(exclusive, reason: farmhand-42, 60 min left)",
        'conflict: lib/x.py overlaps: agent "carol" holds lib/ (exclusive, reason: PROJ-7, '
        "120 min left)",
        "Error: nothing was reserved; see `agent-hooks reservations`, reserve something else, "
        "or wait",
    ]
    assert result.stdout == ""
    assert cli.held() == [("alice", "src/**"), ("carol", "lib/")]  # not even docs/**


def test_conflict_in_the_other_direction_is_caught(cli: Cli) -> None:
    cli.ok("alice", "reserve", "app/models/user.py")
    result = cli("bob", "reserve", "app/**")
    assert result.exit_code == 1
    assert 'agent "alice" holds app/models/user.py' in result.stderr


def test_conflict_json(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42")
    result = cli("bob", "reserve", "src/app.py", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["granted"] == []
    [conflict] = doc["conflicts"]
    assert conflict["requested"] == "src/app.py"
    held = conflict["held"]
    fields = ("agent", "pattern", "reason", "expires_at", "minutes_left")
    assert [held[k] for k in fields] == ["alice", "src/**", "farmhand-42", int(NOW) + HOUR, 60]


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("/etc/**", "is outside the project"),
        ("../x", "leaves the project"),
        ("src/../../x", "leaves the project"),
        ("", "empty pattern"),
        ("   ", "empty pattern"),
        ("src/[ab", "unclosed '['"),
        ("!src", "negation"),
        ("src/*/../x", "ambiguous"),
    ],
)
def test_bad_pattern_is_one_line_error_and_nothing_is_reserved(
    cli: Cli, pattern: str, why: str
) -> None:
    err = one_line_error(cli("alice", "reserve", "docs/**", pattern))
    assert why in err
    assert cli.held() == []


@pytest.mark.parametrize(
    ("ttl", "why"),
    [("10s", "minimum is 60s"), ("9d", "maximum is 7d"), ("soon", "expected a number")],
)
def test_bad_ttl_is_one_line_error(cli: Cli, ttl: str, why: str) -> None:
    assert why in one_line_error(cli("alice", "reserve", "src/**", "--ttl", ttl))
    assert why in one_line_error(cli("alice", "renew", "--ttl", ttl))
    assert cli.held() == []


def test_bad_agent_name_project_and_no_project_are_one_line_errors(
    cli: Cli, tmp_path: Path
) -> None:
    assert "contains '/'" in one_line_error(cli("a/b", "reserve", "src/**"))
    err = one_line_error(cli("alice", "reserve", "src/**", "--project", str(tmp_path / "nope")))
    assert "not a directory" in err
    err = one_line_error(cli("alice", "reservations", env={"CLAUDE_PROJECT_DIR": ""}))
    assert "not inside a project" in err


def test_unnamed_agent_is_warned(cli: Cli) -> None:
    result = cli(None, "reserve", "src/**", env={"CLAUDE_CODE_SESSION_ID": "conv-1"})
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: AGENT_NAME is unset: this belongs to this conversation (conv-1)\n"
    )
    assert cli.held() == [(None, "src/**")]


def test_a_person_at_a_terminal_is_not_warned(cli: Cli) -> None:
    """No agent above the command, no AGENT_NAME: the reservation is the person's own."""
    result = cli(None, "reserve", "src/**")
    assert result.exit_code == 0 and result.stderr == ""
    assert cli.held() == [(None, "src/**")]


def test_project_option_overrides_the_environment(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    cli.ok("alice", "reserve", "src/**", "--project", str(other))
    assert cli.held() == []
    rows = json.loads(cli.ok("bob", "reservations", "--project", str(other), "--json").stdout)
    assert [(r["agent"], r["project_root"]) for r in rows] == [("alice", os.path.realpath(other))]


# --- release -------------------------------------------------------------------------


def test_release_by_pattern_id_and_all(cli: Cli) -> None:
    ids = {
        r["pattern"]: r["id"]
        for r in json.loads(
            cli.ok("alice", "reserve", "src/**", "lib/", "docs/*.md", "etc/", "--json").stdout
        )["granted"]
    }
    cli.ok("bob", "reserve", "tests/**")
    result = cli.ok("alice", "release", "./src/**")
    assert result.stdout == f"released src/** (id {ids['src/**']})\n"
    result = cli.ok("alice", "release", "--id", ids["lib/"])
    assert result.stdout == f"released lib/ (id {ids['lib/']})\n"
    assert cli.held() == [("alice", "docs/*.md"), ("alice", "etc/"), ("bob", "tests/**")]
    result = cli.ok("alice", "release", "--all", "--json")
    doc = json.loads(result.stdout)
    assert sorted(r["pattern"] for r in doc["released"]) == ["docs/*.md", "etc/"]
    assert doc["not_held"] == []
    assert cli.held() == [("bob", "tests/**")]
    assert cli.ok("alice", "release", "--all").stdout == "nothing to release\n"


def test_release_of_what_is_not_held_is_an_error_and_changes_nothing(cli: Cli) -> None:
    bob_id = json.loads(cli.ok("bob", "reserve", "tests/**", "--json").stdout)["granted"][0]["id"]
    cli.ok("alice", "reserve", "src/**")
    err = one_line_error(cli("alice", "release", "tests/**", "src/app.py", "--id", bob_id))
    assert err == (
        f'Error: tests/** is held by agent "bob", not by you; {bob_id} (tests/**) is held by '
        'agent "bob", not by you; src/app.py is not held (never reserved here, expired, or '
        f"released); to take it from its holder: `agent-hooks release --force --id {bob_id}`"
    )
    assert cli.held() == [("alice", "src/**"), ("bob", "tests/**")]


def test_an_agent_releasing_anothers_reservation_is_not_offered_force(cli: Cli) -> None:
    """From an agent's shell (its client process above the command) `--force` is not
    offered: it is for people (docs/adr/0017-trust-model.md)."""
    bob_id = json.loads(cli.ok("bob", "reserve", "tests/**", "--json").stdout)["granted"][0]["id"]
    err = one_line_error(
        cli("alice", "release", "--id", bob_id, env={"CLAUDE_PID": str(os.getpid())})
    )
    assert err == (
        f'Error: {bob_id} (tests/**) is held by agent "bob", not by you; only its holder '
        "releases it: wait for it, or ask the user"
    )
    assert "--force" not in err


def test_release_names_what_it_did_not_find_even_when_releasing_others(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**")
    result = cli("alice", "release", "src/**", "lib/**")
    assert result.exit_code == 1
    assert result.stdout.startswith("released src/** (id ")
    assert result.stderr == (
        "Error: lib/** is not held (never reserved here, expired, or released)\n"
    )
    assert cli.held() == []


def test_release_force_frees_another_agents_reservation_by_id(cli: Cli) -> None:
    from hook_runner import write_state

    write_state(cli.home / ".claude", "bob", {"agent_name": "bob"})  # bob can be told
    bob_id = json.loads(cli.ok("bob", "reserve", "tests/**", "--json").stdout)["granted"][0]["id"]
    cli.ok("alice", "release", "--id", bob_id, "--force")
    assert cli.held() == []
    bob = json.loads((cli.home / ".claude" / "state-bob.json").read_text())
    assert bob["alerts"] == [
        f"agent-hooks: your reservation tests/** ({bob_id}) was released by agent alice with "
        "`release --force`; do not edit there before reserving it again."
    ]


def test_release_without_names_is_a_usage_error(cli: Cli) -> None:
    result = cli("alice", "release")
    assert result.exit_code == 2
    assert "name PATTERNS, --id ID or --all" in result.stderr


# --- renew ---------------------------------------------------------------------------


def test_renew_extends_live_reservations(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--ttl", "10m")
    cli.ok("alice", "reserve", "lib/", "--ttl", "10m")
    later = NOW + 300
    result = cli.ok("alice", "renew", "src/**", "--ttl", "2h", now=later)
    assert result.stdout.startswith("renewed src/** (exclusive, id r-")
    assert result.stdout.endswith(", 120 min left)\n")  # the time left, said once
    doc = json.loads(cli.ok("alice", "renew", "--json", now=later).stdout)
    minutes = {r["pattern"]: r["minutes_left"] for r in doc["renewed"]}
    assert minutes == {"src/**": 120, "lib/": 60}


def test_renew_never_revives_an_expired_reservation(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--ttl", "10m")
    later = NOW + 601
    err = one_line_error(cli("alice", "renew", "src/**", now=later))
    assert "expired reservations cannot be renewed" in err and "src/**" in err
    assert cli.ok("alice", "renew", now=later).stdout == "no live reservation to renew\n"
    assert cli.held(now=later) == []


def test_renew_does_not_touch_other_agents(cli: Cli) -> None:
    cli.ok("bob", "reserve", "tests/**", "--ttl", "10m")
    assert "not held" in one_line_error(cli("alice", "renew", "tests/**"))
    rows = json.loads(cli.ok("alice", "reservations", "--json").stdout)
    assert [r["minutes_left"] for r in rows] == [10]


# --- reservations --------------------------------------------------------------------


def test_reservations_lists_holder_pattern_mode_reason_and_time_left(cli: Cli) -> None:
    empty = cli.ok("alice", "reservations").stdout
    assert empty == f"no live reservations or leases in {cli.project}\n"
    granted = json.loads(
        cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42", "--json").stdout
    )["granted"][0]
    cli.ok("bob", "reserve", "docs/", "--shared", "--keep", "--ttl", "30m")
    lines = cli.ok("carol", "reservations").stdout.splitlines()
    assert lines[0] == f"# {cli.project}"
    assert re.fullmatch(
        r"HOLDER\s+CLIENT\s+KIND\s+PATH\s+MODE\s+LEFT\s+STATE\s+REASON\s+ID", lines[1]
    )
    # each column starts where its header does: REASON and ID never run together
    columns = [lines[1].index(name) for name in ("STATE", "REASON", "ID")]
    alice_line = next(line for line in lines if line.startswith('agent "alice"'))
    assert re.fullmatch(
        rf'agent "alice"\s+-\s+reservation\s+src/\*\*\s+exclusive\s+60 min\s+person\s+'
        rf"farmhand-42\s+{granted['id']}",
        alice_line,
    )
    bob_line = next(line for line in lines if line.startswith('agent "bob"'))
    assert re.fullmatch(
        r'agent "bob"\s+-\s+reservation\s+docs/\s+shared\s+30 min\s+person\s+-\s+'
        r"r-[0-9a-f]{8} \(keep\)",
        bob_line,
    )
    for line in (alice_line, bob_line):
        assert [line[c - 1 : c + 1][0] for c in columns] == [" ", " ", " "], line
        assert line[columns[2] :].startswith("r-"), line


def test_reservations_json_and_expiry(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42", "--ttl", "10m")
    cli.ok("bob", "reserve", "docs/", "--ttl", "1h")
    rows = json.loads(cli.ok("carol", "reservations", "--json").stdout)
    fields = ("agent", "pattern", "mode", "reason", "minutes_left")
    assert {tuple(r[k] for k in fields) for r in rows} == {
        ("alice", "src/**", "exclusive", "farmhand-42", 10),
        ("bob", "docs/", "exclusive", "", 60),
    }
    assert all("compiled" not in r for r in rows)
    rows = json.loads(cli.ok("carol", "reservations", "--json", now=NOW + 601).stdout)
    assert [r["agent"] for r in rows] == ["bob"]


def test_reservations_all_projects(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    other_root = os.path.realpath(other)
    empty = cli.ok("alice", "reservations", "--all-projects").stdout
    assert empty == "no live reservations or leases\n"
    cli.ok("alice", "reserve", "src/**")
    cli.ok("bob", "reserve", "lib/**", "--project", str(other))
    rows = json.loads(cli.ok("carol", "reservations", "--all-projects", "--json").stdout)
    assert sorted((r["agent"], r["project_root"]) for r in rows) == [
        ("alice", str(cli.project)),
        ("bob", other_root),
    ]
    text = cli.ok("carol", "reservations", "--all-projects").stdout
    assert f"# {cli.project}\n" in text and f"# {other_root}\n" in text
    assert json.loads(cli.ok("carol", "reservations", "--json").stdout)[0]["agent"] == "alice"


# --- check ---------------------------------------------------------------------------


def test_check_says_who_holds_a_path(cli: Cli) -> None:
    cli.ok("alice", "reserve", "src/**", "--reason", "farmhand-42")
    app, notes = str(cli.project / "src/app.py"), str(cli.project / "docs/notes.md")
    result = cli("bob", "check", app, notes)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        'denied   src/app.py: agent "alice" holds src/** (reason: farmhand-42, 60 min left)',
        "allowed  docs/notes.md",
    ]
    assert cli.ok("alice", "check", app).stdout == "allowed  src/app.py\n"
    result = cli("bob", "check", app, "--json")
    assert result.exit_code == 1
    [item] = json.loads(result.stdout)
    assert item["allowed"] is False and item["path"] == "src/app.py"
    assert item["held_by"] == [
        {
            "kind": "reservation",
            "holder": 'agent "alice"',
            "agent": "alice",
            "pattern": "src/**",
            "reason": "farmhand-42",
            "until": until(NOW + HOUR),
            "minutes_left": 60,
        }
    ]


def test_a_route_folder_with_brackets_is_reserved_as_the_folder(cli: Cli) -> None:
    """Issue 18, defect 10: `app/[slug]` exists, so `app/[slug]/**` means that folder
    (reserved escaped, and said so), not the one-letter class `[slug]`; a bracket name
    that does not exist stays a class, and the output says how to mean the name."""
    page = cli.project / "app" / "[slug]" / "page.tsx"
    page.parent.mkdir(parents=True)
    page.write_text("x\n")
    result = cli.ok("alice", "reserve", "app/[slug]/**")
    assert "reserved app/[[]slug]/** (exclusive" in result.stdout
    assert "note: app/[slug] exists: [slug] is taken literally" in result.stderr
    denied = cli("bob", "check", str(page))
    assert denied.exit_code == 1
    assert denied.stdout.startswith(
        'denied   app/[slug]/page.tsx: agent "alice" holds app/[[]slug]/**'
    )
    assert cli("bob", "check", str(cli.project / "app" / "s" / "x.tsx")).exit_code == 0
    cli.ok("alice", "release", "app/[slug]/**")  # typed the same way, found
    assert cli.held() == []
    classed = cli.ok("alice", "reserve", "lib/[xy].py")
    assert "reserved lib/[xy].py (exclusive" in classed.stdout
    assert "'lib/[[]xy].py'" in classed.stderr and "character class" in classed.stderr


def test_check_outside_any_project_and_after_expiry(cli: Cli, tmp_path: Path) -> None:
    cli.ok("alice", "reserve", "**", "--ttl", "10m")
    result = cli.ok("bob", "check", str(tmp_path / "elsewhere" / "x.txt"))
    assert result.stdout.startswith("allowed  ") and "in no project" in result.stdout
    result = cli.ok("bob", "check", str(cli.project / "README"), now=NOW + 601)
    assert result.stdout == "allowed  README\n"


def test_check_resolves_a_relative_path_like_reserve_does(cli: Cli) -> None:
    """From a directory outside the project (the fixture's cwd), `reserve src/app.py`
    means <project>/src/app.py; `check src/app.py` must check that same file."""
    cli.ok("alice", "reserve", "src/app.py")
    assert cli.held() == [("alice", "src/app.py")]
    result = cli("bob", "check", "src/app.py")
    assert result.exit_code == 1, result.stdout
    assert result.stdout.startswith('denied   src/app.py: agent "alice" holds src/app.py')


def test_check_in_strict_mode(cli: Cli) -> None:
    cli.ok("alice", "strict", "on")
    result = cli("bob", "check", str(cli.project / "src/app.py"))
    assert result.exit_code == 1
    assert result.stdout == "denied   src/app.py: strict mode: not reserved by you\n"
    cli.ok("bob", "reserve", "src/")
    cli.ok("bob", "check", str(cli.project / "src/app.py"))


# --- strict --------------------------------------------------------------------------


def test_strict_on_off_show_and_json(cli: Cli) -> None:
    assert cli.ok("alice", "strict").stdout == f"strict mode is off for {cli.project}\n"
    assert cli.ok("alice", "strict", "on").stdout == f"strict mode is on for {cli.project}\n"
    assert json.loads(cli.ok("bob", "strict", "show", "--json").stdout) == {
        "project_root": str(cli.project),
        "strict": True,
    }
    cli.ok("alice", "reserve", "src/**")  # other writes keep the setting
    assert json.loads(cli.ok("bob", "strict", "--json").stdout)["strict"] is True
    assert cli.ok("alice", "strict", "off").stdout == f"strict mode is off for {cli.project}\n"
    assert cli("alice", "strict", "maybe").exit_code == 2


# --- help ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "mentions"),
    [
        ("reserve", ["PATTERNS", "--reason", "--ttl", "--shared", "--keep", "--project", "--json"]),
        ("release", ["--id", "--all", "--force", "--lease", "--project", "--json"]),
        ("renew", ["--ttl", "--project", "--json"]),
        ("reservations", ["--all-projects", "--project", "--json"]),
        ("check", ["PATHS", "--project", "--json"]),
        ("strict", ["on|off|show", "--project", "--json"]),
    ],
)
def test_help_of_each_command(cli: Cli, command: str, mentions: list[str]) -> None:
    result: Any = cli.ok("alice", command, "--help")
    assert result.stdout.startswith(f"Usage: main {command} ") or result.stdout.startswith(
        f"Usage: agent-hooks {command} "
    )
    for word in mentions:
        assert word in result.stdout, (word, result.stdout)


def test_people_read_local_times_json_keeps_epochs(cli: Cli, far_timezone: None) -> None:
    granted = cli.ok("alice", "reserve", "src/**").stdout
    assert granted.endswith(", 60 min left)\n") and "IST" not in granted  # one fact, once
    [row] = json.loads(cli.ok("alice", "reservations", "--json").stdout)
    assert row["expires_at"] == int(NOW + HOUR)
    bob_id = json.loads(cli.ok("bob", "reserve", "tests/**", "--json").stdout)["granted"][0]["id"]
    cli.ok("alice", "release", "--id", bob_id, "--force")
    dropped = cli.ok("alice", "reservations", "--dropped").stdout
    assert dropped.startswith("2027-01-15 13:30 IST  tests/**"), dropped
    assert isinstance(
        json.loads(cli.ok("alice", "reservations", "--dropped", "--json").stdout)[0]["at"], int
    )


# --- release --force --lease -------------------------------------------------------------


def _lease(cli: Cli, rel: str, agent: str, agent_id: str | None = None) -> None:
    """`agent` (a subagent of it with `agent_id`) is changing `rel`: a live lease held by
    this test's own process."""
    from agent_hooks import identity
    from agent_hooks.leases import lease_store
    from agent_hooks.ledger.repo import Repo
    from agent_hooks.writers import Writer

    state_dir = identity.state_dir({"HOME": str(cli.home)})
    repo = Repo(str(cli.project), state_dir, {"AGENT_HOOKS_LEASE_MINUTES": "10"}, branch="main")
    out = lease_store.claim(
        repo,
        rel,
        Writer(agent, f"c-{agent}", agent_id, "general-purpose" if agent_id else None),
        NOW,
        holder_pid=os.getpid(),
    )
    assert out.written and not out.blockers


def test_release_force_lease_frees_a_file_names_the_holder_logs_and_tells_it(cli: Cli) -> None:
    from hook_runner import write_state

    write_state(cli.home / ".claude", "bob", {"agent_name": "bob"})  # bob can be told
    _lease(cli, "src/app.py", "bob", "a111")
    assert one_line_error(cli("alice", "release", "--force", "--lease", "src/nope.py")) == (
        "Error: no writer is changing src/nope.py in this worktree (see `agent-hooks "
        "reservations`); nothing was released"
    )
    result = cli.ok(
        None,
        "release",
        "--force",
        "--lease",
        str(cli.project / "src/app.py"),
        env={"USER": "carol"},
    )
    assert result.stdout == (
        'released the lease on src/app.py of the general-purpose subagent (a111) of agent "bob"\n'
    )
    rows = json.loads(cli.ok("alice", "reservations", "--json").stdout)
    assert rows == []
    log = (cli.home / ".claude" / "agent-hooks.log").read_text()
    assert "event=release --force carol released the lease on src/app.py" in log
    bob = json.loads((cli.home / ".claude" / "state-bob.json").read_text())
    assert bob["alerts"] == [
        "agent-hooks: your hold on src/app.py was released by carol with `release --force`; "
        "do not edit it again before checking with `agent-hooks check`."
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lease", "src/app.py"], "--lease goes with --force"),
        (["--force", "--lease", "src/app.py", "--all"], "--lease goes alone"),
    ],
)
def test_release_lease_usage_errors(cli: Cli, args: list[str], message: str) -> None:
    result = cli("alice", "release", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_release_force_lease_outside_the_project_is_refused(cli: Cli, tmp_path: Path) -> None:
    err = one_line_error(cli("alice", "release", "--force", "--lease", "/etc/passwd"))
    assert err == f"Error: --lease /etc/passwd: not a file in {cli.project}"


def test_an_area_holding_a_file_another_writer_is_changing_is_not_reserved(cli: Cli) -> None:
    """Issue 18, defect 14: `reserve 'src/**'` was granted over a file another writer
    holds by lease; then each was refused by the other and the work was stranded.
    The reservation is refused, all or nothing, naming the lease holder; the
    reserver's own leases (and its subagents') never refuse it."""
    _lease(cli, "src/x.py", "bob")
    result = cli("alice", "reserve", "src/**", "docs/**")
    assert result.exit_code == 1
    assert 'conflict: src/** covers src/x.py, which agent "bob" is changing' in result.output
    assert "nothing was reserved" in result.output
    listed = json.loads(cli.ok("alice", "reservations", "--json").output)
    assert [row["kind"] for row in listed] == ["lease"]  # docs/** was not granted either
    _lease(cli, "lib/y.py", "alice", agent_id="a1b2c3d4")  # alice's own subagent
    cli.ok("alice", "reserve", "lib/**")
    cli.ok("alice", "reserve", "src/**", "--shared")  # a shared one refuses no edit


def test_release_all_frees_the_callers_leases_too(cli: Cli) -> None:
    """Issue 18, defect 16: the README's "Done." step left a file alice edited a moment
    ago held for up to 10 more minutes. Her leases go with `release --all`; bob's
    stay."""
    _lease(cli, "src/app.py", "alice")
    _lease(cli, "lib/x.py", "alice", agent_id="a1b2c3d4")
    _lease(cli, "docs/notes.md", "bob")
    done = json.loads(cli.ok("alice", "release", "--all", "--json").output)
    assert done["released_leases"] == ["lib/x.py", "src/app.py"]
    left = json.loads(cli.ok("alice", "reservations", "--json").output)
    assert [row["pattern"] for row in left if row["kind"] == "lease"] == ["docs/notes.md"]
    assert cli.ok("alice", "release", "--all").output == "nothing to release\n"
