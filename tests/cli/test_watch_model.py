"""`agent-hooks watch`'s data (`cli.watch_model`) and its plain text (`cli.watch_text`),
on real files in a temp HOME and project: two agents' state files (and one working
elsewhere), a reservation, a lease, hook-log lines and a work session."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from watch_world import World

from agent_hooks import identity
from agent_hooks.cli import watch_model, watch_text
from agent_hooks.cli._common import Env
from agent_hooks.writers import Writer

NOW = float(int(time.time()))  # leases judge their holder's process for real


@pytest.fixture
def world(home: Path, project: Path) -> World:
    return World(home, project)


def snap(world: World, now: float = NOW) -> watch_model.Snapshot:
    return watch_model.snapshot(Env(environ=world.environ, now=now), str(world.project), now)


def populate(world: World) -> None:
    world.agent("proj__cc_1", NOW, alive=True, idle=120, issue="farmhand-42", client="claude")
    world.agent(
        "proj__cc_2",
        NOW,
        alive=False,
        idle=3 * 3600,
        modified={"src/new.py": 5_000, "src/old.py": 1_000, "src/mid.py": 3_000},
        client="codex",
    )
    world.agent("other__cc_1", NOW, alive=True, idle=30, issue="x-1", project=world.home / "other")
    world.reserve("proj__cc_1", "src/auth/**", NOW, reason="farmhand-42", ttl=7200)
    world.lease(Writer("proj__cc_2", "c2", client="codex"), "lib/util.py", NOW)


def test_agents_alive_or_gone_with_last_activity_and_current_work(world: World) -> None:
    populate(world)
    agents = {a.agent: a for a in snap(world).agents}
    assert [agents[n].client for n in ("proj__cc_1", "proj__cc_2", "other__cc_1")] == [
        "claude",
        "codex",
        None,
    ]
    one, two, other = agents["proj__cc_1"], agents["proj__cc_2"], agents["other__cc_1"]
    assert (one.active, one.ago, one.work, one.elsewhere) == (True, "2m ago", "farmhand-42", False)
    # no issue: the file changed last (newest fingerprint, not the trail's last entry)
    assert (two.active, two.ago, two.work) == (False, "3h ago", "src/new.py")
    assert other.elsewhere and other.project_root == str(world.home / "other")
    assert [a.agent for a in snap(world).agents] == ["proj__cc_1", "proj__cc_2", "other__cc_1"]


def test_reservations_and_leases_with_holder_state_and_time_left(world: World) -> None:
    populate(world)
    held = snap(world, NOW + 300).holdings
    assert [(h.kind, h.pattern, h.minutes_left) for h in held] == [
        ("reservation", "src/auth/**", 115),
        ("lease", "lib/util.py", 5),
    ]
    reservation, lease = held
    assert reservation.holder_label == 'agent "proj__cc_1"' and reservation.reason == "farmhand-42"
    assert reservation.id and reservation.id.startswith("r-")
    assert lease.state == "live" and lease.holder_label == 'Codex agent "proj__cc_2"'
    assert (reservation.client, lease.client) == (None, "codex")


def test_recent_denials_newest_first_at_most_ten_across_the_rotated_log(world: World) -> None:
    os.makedirs(world.state_dir, exist_ok=True)
    log = identity.log_path(world.state_dir)
    for i in range(4):
        world.deny(NOW - 100 + i, "proj__cc_3", f"src/old{i}.py")
    os.replace(log, log + ".1")  # rotated by log.log at 1 MiB
    for i in range(8):
        world.deny(NOW - 50 + i, "proj__cc_2", f"src/app{i}.py")
        world.log(NOW - 50 + i, "proj__cc_2", "fail open: something", event="PostToolUse")
    world.log(NOW, "proj__cc_2", "AGENT_HOOKS_ENFORCE=off: allowed Write that would be denied: x")
    world.log(NOW, "proj__cc_2", "released 2 reservations (denied src/x.py earlier)")
    denials = snap(world).denials
    assert len(denials) == watch_model.DENIALS == 10
    assert [d.text.split(" ")[0] for d in denials[:3]] == [
        "src/app7.py",
        "src/app6.py",
        "src/app5.py",
    ]
    assert [d.agent for d in denials[-2:]] == ["proj__cc_3", "proj__cc_3"]
    first = denials[0]
    assert (first.at, first.agent, first.tool) == (NOW - 43, "proj__cc_2", "Write")
    assert first.text.startswith('src/app7.py is reserved by another agent: agent "proj__cc_1"')


def test_a_denial_of_an_agent_of_another_project_is_marked_like_the_agent(world: World) -> None:
    """The log is one per HOME: a denial by an agent whose state names another
    project is shown marked and dimmed, as the agents panel shows that agent."""
    populate(world)
    world.deny(NOW - 3, "other__cc_1", "src/elsewhere.py")
    world.deny(NOW - 2, "proj__cc_2", "src/here.py")
    world.deny(NOW - 1, "nobody__cc", "src/unknown.py")  # no state: its project is unknown
    marks = [(d.agent, d.elsewhere, d.project_root) for d in snap(world).denials]
    assert marks == [
        ("nobody__cc", False, None),
        ("proj__cc_2", False, str(world.project)),
        ("other__cc_1", True, str(world.home / "other")),
    ]
    section = watch_text.denials(snap(world))
    assert section.rows[2][1] == "other__cc_1 (in other)" and section.rows[1][1] == "proj__cc_2"
    assert section.tones == (watch_text.WARN, watch_text.WARN, watch_text.DIM)


def test_a_partial_first_line_of_the_tail_is_skipped(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.deny(NOW - 2, "a", "src/one.py")
    world.deny(NOW - 1, "b", "src/two.py")
    size = os.path.getsize(identity.log_path(world.state_dir))
    monkeypatch.setattr(watch_model, "LOG_TAIL", size - 5)  # cuts into the first line
    assert [d.agent for d in snap(world).denials] == ["b"]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "garbage",
        "2026-13-99T00:00:00Z pid=1 agent=a event=PreToolUse denied Write: x",
        "2026-01-01T00:00:00Z pid=1 agent=a event=PreToolUse undenied Write: x",
    ],
)
def test_lines_that_are_not_denials_are_ignored(line: str) -> None:
    assert watch_model.parse_denial(line) is None


def test_the_active_work_session_with_its_token_use(world: World) -> None:
    assert snap(world).work_session is None
    session_id = world.work_session(NOW, current=170_000)
    ws = snap(world).work_session
    assert ws is not None
    assert (ws.session_id, ws.status, ws.current, ws.max) == (
        session_id,
        "active",
        170_000,
        200_000,
    )
    assert (ws.percent, ws.indicator) == (85.0, "🟡")


def test_snapshot_writes_and_creates_nothing(world: World, home: Path, project: Path) -> None:
    def tree() -> dict[str, tuple[int, float]]:
        return {
            os.path.join(d, f): (
                os.stat(os.path.join(d, f)).st_size,
                os.stat(os.path.join(d, f)).st_mtime,
            )
            for base in (home, project)
            for d, dirs, files in os.walk(base)
            for f in files + dirs
        }

    empty = tree()
    snap(world)  # a fresh HOME: no ~/.claude, no ledger, no sessions directory made
    assert tree() == empty
    populate(world)
    world.deny(NOW, "proj__cc_2", "src/app.py")
    world.work_session(NOW, current=1000)
    before = tree()
    snap(world, NOW + 7200)  # the reservation has expired by then: not swept by a read
    assert tree() == before


def test_the_text_frame_shows_every_section(world: World) -> None:
    populate(world)
    world.deny(NOW - 5, "proj__cc_2", "src/auth/login.py")
    session_id = world.work_session(NOW, current=45_000)
    text = watch_text.frame(snap(world))
    assert f"agent-hooks watch · {world.project} · " in text.splitlines()[0]
    assert "Agents (2 active of 3)" in text
    for row in (
        "proj__cc_1 claude active 2m ago farmhand-42",
        "proj__cc_2 codex idle 3h ago src/new.py",
        "other__cc_1 - active just now x-1 (in other)",
        'agent "proj__cc_1" - reservation src/auth/** exclusive 120 min person farmhand-42 r-',
        'Codex agent "proj__cc_2" codex lease lib/util.py exclusive 10 min live - -',
        "proj__cc_2 Write src/auth/login.py is reserved by another agent",
        f"{session_id} 🟢 active 45,000/200,000 22.5%",
    ):
        assert re.search(r"\s+".join(map(re.escape, row.split(" "))), text), (row, text)


def test_the_text_of_an_empty_project_says_so(world: World) -> None:
    text = watch_text.frame(snap(world))
    assert "no agents in " in text
    assert "no live reservations or leases" in text
    assert "no denials in the hook log" in text
    assert "no active work session" in text


def test_cells_carry_no_control_characters(world: World) -> None:
    world.agent("proj__cc_1", NOW, alive=True, issue="evil\x1b[2Jissue")
    world.deny(NOW, "proj__cc_2", "src/\x1b]0;title\x07.py")
    text = watch_text.frame(snap(world))
    assert "\x1b" not in text and "\x07" not in text
    assert "evil?[2Jissue" in text


HOLDINGS = ("HOLDER", "CLIENT", "KIND", "PATH", "MODE", "LEFT", "STATE", "REASON", "ID")
NATURAL = [18, 6, 11, 11, 9, 7, 10, 11, 10]  # agent "proj__cc_1", … src/auth/**, …


@pytest.mark.parametrize(
    ("room", "expected"),
    [
        (None, NATURAL),
        (120, NATURAL),  # 93 + 8 gaps of 2
        (106, [18, 6, 11, 11, 9, 7, 10, 8, 10]),  # the reason gives way first, to 8
        (80, [18, 0, 11, 11, 0, 7, 10, 8, 0]),  # then client, mode and id are hidden
        (60, [18, 0, 0, 11, 0, 7, 10, 0, 0]),  # then kind and reason: holder and path whole
        (40, [18, 0, 0, 11, 0, 7, 0, 0, 0]),  # then the state, then the time left
        (20, [9, 0, 0, 9, 0, 0, 0, 0, 0]),  # only then do the holder and the path give way
        (10, [8, 0, 0, 8, 0, 0, 0, 0, 0]),  # to MIN_WIDE; past that a row is cropped
    ],
)
def test_fit_gives_the_holder_and_the_path_the_width_first(
    room: int | None, expected: list[int]
) -> None:
    assert watch_text.fit(NATURAL, HOLDINGS, room) == expected
    shown = [w for w in expected if w]
    assert room is None or sum(shown) + 2 * (len(shown) - 1) <= room or set(shown) == {8}
