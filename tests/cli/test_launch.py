"""`agent-hooks launch CLIENT`: the pane's agent named from tmux (or --name), the client
run in place of the command with AGENT_NAME set.

Under a real tmux server (its own socket, no config): with `pane-base-index` 0 and 1,
each pane's launch names its agent `<session>__<code>_<pane index as tmux shows it>`
and execs the client (a stand-in `claude`/`codex` script on PATH that records what it
got). Outside tmux, the errors are one line each.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_hooks.cli import launch as launch_module
from agent_hooks.cli._common import Group
from agent_hooks.hooks import CLIENTS

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

RECORDER = """#!/bin/sh
# a stand-in client: what it was started as, with which AGENT_NAME
printf '%s|%s|%s\\n' "$(basename "$0")" "$AGENT_NAME" "$*" >> "$LAUNCH_LOG"
"""


def cli() -> Group:
    group = Group("agent-hooks")
    launch_module.register(group)
    return group


@pytest.fixture
def clients_dir(tmp_path: Path) -> Path:
    """A bin directory holding stand-in `claude`, `codex` and `gemini` programs."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in ("claude", "codex", "gemini"):
        path = directory / name
        path.write_text(RECORDER)
        path.chmod(0o755)
    return directory


def test_every_client_has_a_code_for_its_panes() -> None:
    codes = {name: launch_module.client_code(name) for name in CLIENTS}
    assert codes["claude"] == "cc" and codes["codex"] == "cod" and codes["gemini"] == "gmi"
    assert codes["opencode"] == "oc" and codes["qwen"] == "qw"  # ntm's panes of them
    assert launch_module.client_code("/home/u/.npm-global/bin/qwen") == "qw"
    assert all(codes.values()) and len(set(codes.values())) == len(codes)
    assert launch_module.client_code("/usr/local/bin/codex") == "cod"
    assert launch_module.client_code("vim") is None


@pytest.mark.parametrize(
    ("session", "name"),
    [
        ("myproject", "myproject__cc_1"),
        ("my project", "my_project__cc_1"),
        ("a/b#c", "a_b_c__cc_1"),
        ("~x", "x__cc_1"),
        ("a..b", "a__b__cc_1"),
    ],
)
def test_a_pane_name_is_always_an_agent_name(session: str, name: str) -> None:
    assert launch_module.pane_name(session, "cc", "1") == name


def test_outside_tmux_without_a_name_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    result = CliRunner().invoke(cli(), ["launch", "claude"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: not inside tmux: name the agent yourself, e.g. "
        "`agent-hooks launch --name myproject__cc_1 claude`"
    ]


def test_a_client_not_on_path_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(cli(), ["launch", "--name", "proj__cc_1", "claude"])
    assert result.exit_code == 1
    assert result.output == "Error: claude: not found on PATH (is it installed?)\n"


def test_an_unknown_client_needs_a_name() -> None:
    result = CliRunner().invoke(cli(), ["launch", "vim"])
    assert result.exit_code == 2
    assert "'vim' is not a client agent-hooks serves (claude, codex, gemini" in result.output


def test_a_bad_name_is_refused_before_anything_runs(clients_dir: Path) -> None:
    env = {**os.environ, "PATH": str(clients_dir), "LAUNCH_LOG": str(clients_dir / "log")}
    result = CliRunner().invoke(cli(), ["launch", "--name", "a/b", "claude"], env=env)
    assert result.exit_code == 1 and "AGENT_NAME 'a/b' contains '/'" in result.output
    assert not (clients_dir / "log").exists()


def test_launch_execs_the_client_with_its_name_and_arguments(clients_dir: Path) -> None:
    log = clients_dir / "log"
    env = {
        **os.environ,
        "PATH": f"{clients_dir}:{os.environ['PATH']}",
        "LAUNCH_LOG": str(log),
        "AGENT_NAME": "inherited",
    }
    args = ["launch", "--name", "proj__cod_9", "codex", "--model", "x", "--name", "y"]
    done = subprocess.run(
        [sys.executable, "-m", "agent_hooks.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # the options after CLIENT are the client's own; AGENT_NAME is the one given
    assert log.read_text() == "codex|proj__cod_9|--model x --name y\n"
    assert done.stderr == "agent-hooks: starting codex as AGENT_NAME=proj__cod_9\n"


def test_dry_run_prints_and_runs_nothing(clients_dir: Path) -> None:
    env = {**os.environ, "PATH": str(clients_dir), "LAUNCH_LOG": str(clients_dir / "log")}
    result = CliRunner().invoke(
        cli(), ["launch", "--dry-run", "--name", "p q", "claude", "--resume"], env=env
    )
    assert result.exit_code == 0, result.output
    assert result.output == "AGENT_NAME='p q' claude --resume\n"
    assert not (clients_dir / "log").exists()


# --------------------------------------------------------------------------- a real tmux


class Server:
    """One tmux server of its own (socket, no config)."""

    def __init__(self, directory: Path) -> None:
        self.socket = str(directory / "tmux.sock")

    def __call__(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-S", self.socket, "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        )
        return done.stdout


@pytest.fixture
def server() -> Iterator[Server]:
    directory = Path(tempfile.mkdtemp(prefix="ahl-", dir="/tmp"))  # a short socket path
    found = Server(directory)
    try:
        yield found
    finally:
        subprocess.run(
            [str(TMUX), "-S", found.socket, "kill-server"], capture_output=True, check=False
        )
        shutil.rmtree(directory, ignore_errors=True)


def launcher(clients_dir: Path, log: Path) -> str:
    """The shell line a pane runs: `agent-hooks launch` with the stand-in clients first
    on PATH (set in the line: tmux's own environment would put its PATH back)."""
    path = shlex.quote(f"{clients_dir}:{os.environ['PATH']}")
    return (
        f"env PATH={path} LAUNCH_LOG={shlex.quote(str(log))} "
        f"{shlex.quote(sys.executable)} -m agent_hooks.cli launch"
    )


def wait_lines(path: Path, count: int, timeout: float = 30.0) -> list[str]:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(lines := path.read_text().splitlines()) >= count:
            return sorted(lines)
        time.sleep(0.05)
    raise AssertionError(f"{path}: not {count} lines within {timeout} s")


@needs_tmux
@pytest.mark.parametrize("base", [0, 1])
def test_each_pane_names_its_agent_as_tmux_shows_the_pane(
    server: Server, clients_dir: Path, base: int
) -> None:
    log = clients_dir / "log"
    command = launcher(clients_dir, log)
    # The base index is set before the panes exist, as in a user's tmux.conf.
    server("new-session", "-d", "-s", "myproject", "-x", "120", "-y", "40", "sleep 60")
    server("set-option", "-g", "pane-base-index", str(base))
    server("new-window", "-t", "myproject", f"{command} claude; sleep 60")
    server("split-window", "-t", "myproject:1", f"{command} claude --resume; sleep 60")
    server("split-window", "-t", "myproject:1", f"{command} codex; sleep 60")
    shown = server("list-panes", "-t", "myproject:1", "-F", "#{pane_index}").split()
    assert shown == [str(base), str(base + 1), str(base + 2)]
    assert wait_lines(log, 3) == sorted(
        [
            f"claude|myproject__cc_{base}|",
            f"claude|myproject__cc_{base + 1}|--resume",
            f"codex|myproject__cod_{base + 2}|",
        ]
    )


@needs_tmux
def test_a_relaunch_in_the_same_pane_gets_the_same_name(server: Server, clients_dir: Path) -> None:
    log = clients_dir / "log"
    command = launcher(clients_dir, log) + " gemini"
    server(
        "new-session",
        "-d",
        "-s",
        "web app",
        "-x",
        "80",
        "-y",
        "20",
        f"{command}; {command}; sleep 60",
    )
    assert wait_lines(log, 2) == ["gemini|web_app__gmi_0|", "gemini|web_app__gmi_0|"]
