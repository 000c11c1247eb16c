"""`agent-hooks watch` as a command (`--once`, `--json`, its errors) through click's
CliRunner, and its Textual app driven headless by Textual's own pilot."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_harness import one_line_error
from click.testing import CliRunner, Result
from watch_world import World

from agent_hooks.cli import main as cli_main
from agent_hooks.cli import watch_model
from agent_hooks.cli._common import Env

NOW = float(int(time.time()))


def run(home: Path, *args: str, cwd_env: dict[str, str] | None = None) -> Result:
    environ = {"HOME": str(home), **(cwd_env or {})}
    return CliRunner().invoke(cli_main, ["watch", *args], obj=Env(environ=environ, now=NOW))


@pytest.fixture
def world(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.chdir(tmp_path)  # in no project: the tests name it
    w = World(home, project)
    w.agent("proj__cc_1", NOW, alive=True, idle=120, issue="farmhand-42")
    w.agent("proj__cc_2", NOW, alive=False, idle=600, modified={"src/app.py": 1})
    w.reserve("proj__cc_1", "src/auth/**", NOW, reason="farmhand-42", ttl=7200)
    w.deny(NOW - 5, "proj__cc_2", "src/auth/login.py")
    return w


async def _until(pilot: Any, done: Callable[[], bool], limit: float = 10.0) -> None:
    """Pause until `done()` holds or `limit` seconds passed: refreshes come late on a
    loaded machine, and a fixed pause would make the test flaky there."""
    waited = 0.0
    while not done() and waited < limit:
        await pilot.pause(0.05)
        waited += 0.05


def test_once_prints_one_plain_frame(world: World) -> None:
    result = run(world.home, "--once", "--project", str(world.project))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"agent-hooks watch · {world.project} · ")
    assert "proj__cc_1" in out and "farmhand-42" in out and "120 min" in out
    assert "src/auth/login.py is reserved by another agent" in out
    assert "\x1b" not in out  # plain text


def test_json_is_the_snapshot(world: World) -> None:
    result = run(world.home, "--json", cwd_env={"CLAUDE_PROJECT_DIR": str(world.project)})
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {f.name for f in dataclasses.fields(watch_model.Snapshot)}
    assert [a["agent"] for a in doc["agents"]] == ["proj__cc_1", "proj__cc_2"]
    assert [(h["pattern"], h["minutes_left"]) for h in doc["holdings"]] == [("src/auth/**", 120)]
    assert doc["denials"][0]["tool"] == "Write" and doc["work_session"] is None


def test_outside_a_project_is_a_one_line_error(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert "not inside a project" in one_line_error(run(home))
    assert "not a directory" in one_line_error(run(home, "--project", str(tmp_path / "nope")))


def test_without_a_terminal_the_live_view_refuses_and_suggests_once(world: World) -> None:
    err = one_line_error(run(world.home, "--project", str(world.project)))
    assert "not a terminal" in err and "--once" in err


def test_help_names_the_options_and_the_key() -> None:
    out = CliRunner().invoke(cli_main, ["watch", "--help"]).stdout
    for word in ("--project DIR", "--interval SECONDS", "--once", "--json", "q quits"):
        assert word in out, word


def test_the_cli_loads_no_terminal_library_until_the_live_view_runs() -> None:
    code = (
        "import sys, agent_hooks.cli, agent_hooks.cli.watch;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the Textual app, headless --------------------------------------------------------


def test_the_app_redraws_only_what_changed_and_q_quits(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Static

    from agent_hooks.cli.watch_app import WatchApp

    env = Env(environ=world.environ, now=NOW)
    updates: list[str | None] = []
    real_update = Static.update

    def counting(self: Static, *args: Any, **kw: Any) -> None:
        updates.append(self.id)
        real_update(self, *args, **kw)

    monkeypatch.setattr(Static, "update", counting)

    async def drive() -> None:
        app = WatchApp(lambda: watch_model.snapshot(env, str(world.project), NOW), "p", 0.05)
        async with app.run_test(size=(120, 40)) as pilot:
            await _until(pilot, lambda: app.refreshes >= 3)
            agents = app.query_one("#agents", Static)
            assert agents.border_title == "Agents (1 active of 2)"
            first = list(updates)
            assert sorted(x for x in first if x != "problems") == [
                "agents",
                "denials",
                "holdings",
                "session",
            ]
            seen = app.refreshes
            await _until(pilot, lambda: app.refreshes >= seen + 3)
            assert updates == first  # nothing changed on disk: no panel was touched again
            world.reserve("proj__cc_2", "docs/**", NOW, reason="tidy the docs", ttl=600)
            await _until(pilot, lambda: len(updates) > len(first))
            seen = app.refreshes
            await _until(pilot, lambda: app.refreshes >= seen + 2)
            assert updates[len(first) :] == ["holdings"]
            await pilot.press("q")
            await _until(pilot, lambda: not app.is_running)
            assert not app.is_running

    asyncio.run(drive())


def test_the_view_scrolls_with_the_keys_when_the_pane_is_short(world: World) -> None:
    from textual.containers import VerticalScroll

    from agent_hooks.cli.watch_app import WatchApp

    env = Env(environ=world.environ, now=NOW)

    async def drive() -> None:
        app = WatchApp(lambda: watch_model.snapshot(env, str(world.project), NOW), "p", 1)
        async with app.run_test(size=(100, 12)) as pilot:
            await pilot.pause(0.1)
            body = app.query_one(VerticalScroll)
            assert body.max_scroll_y > 0 and body.scroll_y == 0
            await pilot.press("pagedown")
            await pilot.pause(0.1)
            assert body.scroll_y > 0

    asyncio.run(drive())


def test_a_failed_refresh_is_shown_and_the_next_one_recovers(world: World) -> None:
    from textual.widgets import Static

    from agent_hooks.cli.watch_app import WatchApp

    env = Env(environ=world.environ, now=NOW)
    seen = [False]  # the test has seen the failure shown: only then may a refresh succeed

    def read() -> watch_model.Snapshot:
        if not seen[0]:
            raise OSError("disk\ngone")
        return watch_model.snapshot(env, str(world.project), NOW)

    async def drive() -> None:
        app = WatchApp(read, "p", 0.05)
        async with app.run_test(size=(100, 30)) as pilot:
            problems = app.query_one("#problems", Static)
            assert str(problems.content) == "refresh failed: OSError: disk?gone"
            seen[0] = True
            await _until(pilot, lambda: str(problems.content) == "")
            assert str(problems.content) == ""
            assert app.query_one("#agents", Static).border_title == "Agents (1 active of 2)"

    asyncio.run(drive())
