"""Issue 36, what slowed a newcomer's first hour, as real `agent-hooks` processes run from a
plain shell (no agent process above them) in a private HOME and a real git repository:
a person's reservation is a person's, and no command leaves a phantom agent; a typo'd or
shell-expanded reservation says so; releasing another's reservation is one line; colour
only on a terminal; the `--json` field names agree; the top-level help lines are whole;
no "seed" in any help.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from agent_hooks.cli import MENU, main
from agent_hooks.cli._common import Env
from git_repo import git

USER = "ann"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    for rel in ("src/app.py", "src/auth.py", "src/util.py", "docs/index.md"):
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text("x\n")
    git(path, "init", "-q")
    git(path, "add", ".")
    return Path(os.path.realpath(path))


class Shell:
    """`agent-hooks` as a person runs it from a terminal's shell: a new process, its
    parent this test (no client), USER set, no AGENT_NAME unless given."""

    def __init__(self, home: Path, repo: Path) -> None:
        self.home = home
        self.repo = repo

    def env(self, agent: str | None = None, **extra: str) -> dict[str, str]:
        env = {"HOME": str(self.home), "PATH": os.environ["PATH"], "USER": USER, "TZ": "UTC"}
        if agent is not None:
            env["AGENT_NAME"] = agent
        env.update(extra)
        return env

    def __call__(
        self, *args: str, agent: str | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_hooks.cli", *args],
            cwd=self.repo,
            env=self.env(agent, **extra),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def json(self, *args: str, agent: str | None = None) -> Any:
        done = self(*args, "--json", agent=agent)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def shell(home: Path, repo: Path) -> Shell:
    return Shell(home, repo)


# --------------------------------------------------------------------------- a person's


def test_a_persons_reservation_is_shown_as_a_persons_and_leaves_no_agent(shell: Shell) -> None:
    done = shell("reserve", "src/**", "--reason", "farmhand-42")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    listed = shell("reservations").stdout
    assert "no process" not in listed and "gone" not in listed, listed
    (row,) = [line for line in listed.splitlines() if "src/**" in line]
    assert re.fullmatch(
        rf'person "{USER}"\s+-\s+reservation\s+src/\*\*\s+exclusive\s+60 min\s+person\s+'
        r"farmhand-42\s+r-[0-9a-f]{8}",
        row,
    ), row
    # the same in watch, and nobody in `agents`: a shell is no agent
    assert shell.json("agents") == []
    snap = shell.json("watch")
    assert snap["agents"] == []
    assert [(h["holder_label"], h["state"]) for h in snap["holdings"]] == [
        (f'person "{USER}"', "person")
    ]
    assert "(shared agent-state.json)" not in shell("watch", "--once").stdout
    # every command a newcomer runs from a shell, and still no state file of an agent
    for args in (("status",), ("check", "src/app.py"), ("renew",), ("release", "--all")):
        shell(*args)
    shell("reserve", "docs/**", agent="me")  # a name of the person's own choosing, too
    state = shell.home / ".claude"
    assert sorted(p.name for p in state.iterdir() if p.is_file()) == []
    assert shell.json("agents") == []


def test_a_leftover_phantom_state_file_is_no_agent(shell: Shell) -> None:
    """An earlier release's CLI left `agent-state.json` holding only a mirror of a
    reservation: no conversation ever ran on it, so no listing shows it."""
    state = shell.home / ".claude"
    state.mkdir(mode=0o700)
    phantom = {"schema": 1, "registered": False, "agent_name": None, "conversations": []}
    (state / "agent-state.json").write_text(json.dumps(phantom))
    (state / "state-dup.json").write_text(json.dumps({**phantom, "agent_name": "dup"}))
    assert shell.json("agents") == [] and shell.json("watch")["agents"] == []
    assert "dup" not in shell("agents").stdout


# --------------------------------------------------------------------------- what was typed


def test_a_pattern_matching_nothing_is_reserved_with_a_warning(shell: Shell) -> None:
    done = shell("reserve", "scr/**")
    assert done.returncode == 0
    assert done.stdout.startswith("reserved scr/** (exclusive, id r-")
    assert done.stderr == "warning: scr/** matches no file here yet: did you mean src/**?\n"
    done = shell("reserve", "src/aplp.py")
    assert (
        done.stderr == "warning: src/aplp.py matches no file here yet: did you mean src/app.py?\n"
    )
    done = shell("reserve", "src/**/nothing*")  # src/ exists: nothing closer to offer
    assert (
        done.stderr == "warning: src/**/nothing* matches no file here yet (reserved all the same)\n"
    )
    done = shell("reserve", "build/out.bin")  # nothing close: reserved all the same
    assert (
        done.stderr == "warning: build/out.bin matches no file here yet (reserved all the same)\n"
    )
    doc = shell.json("reserve", "tmp/new.py")
    assert doc["unmatched"] == [{"pattern": "tmp/new.py", "nearest": None}]
    assert [r["pattern"] for r in doc["granted"]] == ["tmp/new.py"]
    # a pattern that matches a file, or a directory of files, says nothing
    assert shell("reserve", "docs/").stderr == ""
    assert shell("reserve", "src/*.py", agent="bob").returncode == 1  # held: no warning either


def test_a_conflicting_list_the_shell_expanded_hints_at_quoting(shell: Shell) -> None:
    shell("reserve", "src/auth.py", agent="alice")
    typed = subprocess.run(  # the person typed `agent-hooks reserve src/*` unquoted
        f"{sys.executable} -m agent_hooks.cli reserve src/*",
        shell=True,
        cwd=shell.repo,
        env=shell.env("bob"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert typed.returncode == 1
    lines = typed.stderr.splitlines()
    assert lines[0].startswith('conflict: src/auth.py overlaps: agent "alice" holds src/auth.py')
    assert lines[-2] == (
        "hint: the shell expanded an unquoted pattern into these 3 paths; quote it to "
        "reserve the pattern itself, e.g. agent-hooks reserve 'src/*'"
    )
    quoted = shell("reserve", "src/*", agent="bob")  # quoted: one pattern, no hint
    assert quoted.returncode == 1 and "hint:" not in quoted.stderr
    two = shell("reserve", "src/auth.py", "docs/index.md", agent="bob")  # two places: typed
    assert two.returncode == 1 and "hint:" not in two.stderr


def test_releasing_anothers_reservation_is_one_line_pointing_a_person_at_force(
    shell: Shell,
) -> None:
    rid = shell.json("reserve", "src/**", agent="alice")["granted"][0]["id"]
    done = shell("release", "--id", rid)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f'Error: {rid} (src/**) is held by agent "alice", not by you; to take it from its '
        f"holder: `agent-hooks release --force --id {rid}`\n"
    )
    forced = shell("release", "--force", "--id", rid)
    assert forced.returncode == 0 and forced.stdout == f"released src/** (id {rid})\n"


# --------------------------------------------------------------------------- the terminal


def on_a_terminal(shell: Shell, *args: str, **extra: str) -> str:
    """What `agent-hooks ARGS` writes to a terminal (a pty), escapes and all."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_hooks.cli", *args],
        cwd=shell.repo,
        env=shell.env(**extra),
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=30)
    os.close(leader)
    return out.decode()


RED, GREEN = "\x1b[31m", "\x1b[32m"


def test_colour_on_a_terminal_only_and_never_with_no_color(shell: Shell) -> None:
    shell("reserve", "src/**", agent="alice")
    seen = on_a_terminal(shell, "check", "src/app.py", "docs/index.md", AGENT_NAME="bob")
    assert f"{RED}\x1b[1mdenied\x1b[0m" in seen and f"{GREEN}allowed\x1b[0m" in seen, seen
    listed = on_a_terminal(shell, "reservations")
    assert "person" in listed and "\x1b[" not in listed.replace("\x1b[0m", "")  # no tone
    piped = shell("check", "src/app.py", agent="bob")
    assert "\x1b" not in piped.stdout and piped.stdout.startswith("denied   src/app.py: ")
    plain = on_a_terminal(shell, "check", "src/app.py", AGENT_NAME="bob", NO_COLOR="1")
    assert "\x1b" not in plain and "denied   src/app.py" in plain


def test_a_coloured_table_stays_aligned(shell: Shell) -> None:
    """The colour goes around a cell's text, never into its padding: columns line up
    the same with and without it."""
    env = Env(environ=shell.env("carol"))
    args = ["agents"]
    state = shell.home / ".claude"
    state.mkdir(mode=0o700)
    for name, active in (("a", True), ("bbbbbbbbbbbb", False)):
        doc = {
            "schema": 1,
            "registered": True,
            "agent_name": name,
            "active": active,
            "pid": os.getpid() if active else None,
            "last_activity": 0,
            "conversations": [{"id": "c"}],
        }
        (state / f"state-{name}.json").write_text(json.dumps(doc))
    coloured = CliRunner().invoke(main, args, obj=env, color=True).stdout
    plain = CliRunner().invoke(main, args, obj=env).stdout
    assert "\x1b[32mactive\x1b[0m" in coloured and "\x1b[2midle\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


# --------------------------------------------------------------------------- names and help


def test_every_json_names_the_unnamed_agent_null_and_fields_alike(
    shell: Shell, run_hook: Any
) -> None:
    """`agents --json` and `watch --json` agree: `agent` (None for the agents without
    AGENT_NAME), `client`, `active`, `last_activity`, `project_root`, `problem`; a
    holding's fields are the ones `reservations --json` gives it."""
    from hook_runner import HookRunner

    runner = HookRunner(shell.home, shell.repo)
    payload = runner.payload("SessionStart_startup", cwd=str(shell.repo))
    assert runner("SessionStart", payload, agent=None).code == 0
    shell("reserve", "src/**", agent="alice")
    agents = shell.json("agents")
    watched = shell.json("watch")["agents"]
    assert [a["agent"] for a in agents] == [None] == [a["agent"] for a in watched]
    shared = {"agent", "client", "active", "last_activity", "project_root", "problem"}
    assert shared <= set(agents[0]) and shared <= set(watched[0])
    assert {k: agents[0][k] for k in shared} == {k: watched[0][k] for k in shared}
    (holding,) = shell.json("watch")["holdings"]
    (row,) = shell.json("reservations")
    assert {k: row[k] for k in holding} == holding


def test_the_top_level_help_gives_each_command_a_whole_line() -> None:
    assert set(MENU) == set(main.commands)
    text = CliRunner().invoke(main, ["--help"], terminal_width=80).stdout
    listed = text[text.index("Commands:\n") :].splitlines()[1:]
    assert listed == [f"  {name:<12}  {MENU[name]}" for name in sorted(MENU)]
    assert all(len(line) <= 80 and not line.endswith("...") for line in listed)


def every_command(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*path, name))
        if isinstance(command, click.Group):
            found += every_command(command, (*path, name))
    return found


def test_no_help_says_seed() -> None:
    runner = CliRunner()
    for path in [(), *every_command(main)]:
        text = runner.invoke(main, [*path, "--help"]).stdout
        assert text and "seed" not in text.lower(), (path, text)
