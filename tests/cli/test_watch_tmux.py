"""`agent-hooks watch` for real: the program runs in a detached tmux session of a fixed
size (its own tmux server, HOME a temp directory), the screen is read with
`capture-pane` and every byte the program writes to the terminal with `pipe-pane`.

Checked: the first frame shows the agents, a reservation with its time left and a
denial; a new reservation and a new denial appear at a later refresh; with nothing changed
the program writes nothing at all to the terminal (so nothing can flicker), and a
change is drawn over the old frame without erasing it; `q` ends the program.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watch_world import ALIVE, World

from agent_hooks.writers import Writer

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed: the live view is tested in a real terminal"
)
SIZE = ("140", "45")
ERASE = re.compile(rb"\x1b\[[0-3]?J|\x1b\[\?1049[hl]")  # erase display; leave/enter the screen


class Pane:
    """One tmux server (own socket, no config) with one session running a command."""

    def __init__(self, directory: Path, size: tuple[str, str] = SIZE) -> None:
        self.socket = str(directory / "tmux.sock")
        self.stream = directory / "pane.bytes"
        self.size = size

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None
        return subprocess.run(
            [TMUX, "-S", self.socket, "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=20,
        )

    def start(self, command: list[str], env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={shell(v)}" for k, v in env.items())
        # The program starts once pipe-pane is attached (the flag file), so that pipe-pane
        # records its every byte.
        flag = shell(str(self.stream) + ".go")
        # ... and once the pane has its size: tmux may size a new pane's terminal after
        # starting its command, and a program reading the size first, its change signal
        # arriving before its handler is set (Textual, loading under load), stays at 80x24.
        rows_cols = shell(f"{self.size[1]} {self.size[0]}")
        line = (
            f'until [ -e {flag} ] && [ "$(stty size)" = {rows_cols} ]; do sleep 0.02; done; '
            f"exec env {exports} " + " ".join(shell(c) for c in command)
        )
        self.tmux("new-session", "-d", "-s", "watch", "-x", self.size[0], "-y", self.size[1], line)
        self.tmux("pipe-pane", "-t", "watch", "-o", f"cat >> {shell(str(self.stream))}")
        Path(str(self.stream) + ".go").touch()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "watch").stdout

    def written(self) -> bytes:
        return self.stream.read_bytes() if self.stream.exists() else b""

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", "watch", check=False).returncode == 0


def shell(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# How long the program may take to show a change: it redraws about once a second; the
# margin is for a loaded machine (two shared cores), where a refresh can be late by
# seconds. How fast it redraws is not decided here.
SHOWN_WITHIN = 30.0


def refreshes_seen(log: Path, count: int) -> bool:
    """Wait until the program has taken `count` more snapshots: each one reads the hook
    log, which moves the log's atime once it is set back before the mtime (relatime).
    False where reads leave no atime (a `noatime` mount): the caller waits instead."""
    for _ in range(count):
        mtime = log.stat().st_mtime
        os.utime(log, (mtime - 100, mtime))
        try:
            wait_for(lambda: log.stat().st_atime >= mtime, SHOWN_WITHIN)  # noqa: B023
        except AssertionError:
            return False
    return True


def full_width(screen: str, width: str = SIZE[0]) -> bool:
    """Is the frame drawn across the whole pane (its first panel's border that wide)?"""
    return any(
        line.startswith("╭─ Agents") and len(line.rstrip()) == int(width)
        for line in screen.splitlines()
    )


def settled(pane: Pane, check: Callable[[str], bool], timeout: float) -> str:
    """The screen once `check` holds for it and a second capture, 0.2 s later, is the
    same: a refresh redraws only the lines that changed, one after another, and a
    capture in the middle of one (seen on a loaded machine) holds half of each frame."""
    start, screen = time.monotonic(), ""
    while time.monotonic() - start < timeout:
        screen = pane.screen()
        if check(screen):
            time.sleep(0.2)
            if pane.screen() == screen:
                return screen
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s; the last screen:\n{screen}")


def wait_for(check: Callable[[], bool], timeout: float) -> float:
    """Seconds until `check()` held; fails after `timeout`."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - start


@pytest.fixture
def pane() -> Iterator[Pane]:
    directory = Path(tempfile.mkdtemp(prefix="ahw-", dir="/tmp"))  # a short socket path
    p = Pane(directory)
    try:
        yield p
    finally:
        p.tmux("kill-server", check=False)
        shutil.rmtree(directory, ignore_errors=True)


def test_the_live_view_in_tmux(pane: Pane, home: Path, project: Path) -> None:
    now = time.time()
    world = World(home, project)
    world.agent("proj__cc_1", now, alive=True, idle=120, issue="farmhand-42")
    world.agent("proj__cc_2", now, alive=False, idle=600, modified={"src/app.py": 1})
    world.reserve("proj__cc_1", "src/auth/**", now, reason="farmhand-42", ttl=7200)
    world.deny(now - 5, "proj__cc_2", "src/auth/login.py")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    pane.start([sys.executable, "-m", "agent_hooks.cli", "watch", "--project", str(project)], env)

    # The first frame drawn at the terminal's size (under load Textual was seen to show one
    # at its default 80x24 first, before its first resize event): agents, a reservation
    # with its time left, a denial.
    screen = settled(
        pane,
        lambda s: "src/auth/login.py is reserved" in s and "q Quit" in s and full_width(s),
        SHOWN_WITHIN,
    )
    print(screen)
    assert re.search(r"proj__cc_1\s+-\s+active\s+2m ago\s+farmhand-42", screen), screen
    assert re.search(r"proj__cc_2\s+-\s+idle\s+10m ago\s+src/app\.py", screen), screen
    assert re.search(r"src/auth/\*\*\s+exclusive\s+1[12]\d min\s+person\s+farmhand-42\s+r-", screen)
    assert re.search(r"\d\d:\d\d:\d\d\s+proj__cc_2\s+Write\s+src/auth/login\.py", screen), screen

    # Nothing changes on disk: over three refreshes (seen by their reads of the hook log)
    # the program writes not one byte and the screen stays identical. (A minute boundary
    # may change an "ago" or a "min left" once: a quiet window is required in one of
    # three tries.)
    log = home / ".claude" / "agent-hooks.log"
    quiet = []
    for _ in range(3):
        before, shown = len(pane.written()), pane.screen()
        if not refreshes_seen(log, 3):
            time.sleep(3.2)  # no atimes here: three refresh periods, on an idle machine
        time.sleep(0.3)  # the last refresh's output, if any, reaches pipe-pane's file
        quiet.append((len(pane.written()) - before, pane.screen() == shown))
        if quiet[-1] == (0, True):
            break
    assert quiet[-1] == (0, True), quiet

    # A second reservation and a new denial appear at a later refresh, drawn over the
    # old frame: no erase of the screen, no switch of screens.
    before = len(pane.written())
    world.reserve("proj__cc_2", "docs/**", time.time(), reason="tidy the docs", ttl=600)
    world.deny(time.time(), "proj__cc_1", "docs/index.md", "proj__cc_2", "docs/**")
    start = time.monotonic()
    screen = settled(
        pane, lambda s: "docs/**" in s and "docs/index.md is reserved" in s, SHOWN_WITHIN
    )
    took = time.monotonic() - start
    print(f"updated after {took:.2f} s\n{screen}")
    assert re.search(r"docs/\*\*\s+exclusive\s+(10|9) min", screen), screen
    assert screen.index("docs/index.md is reserved") < screen.index("src/auth/login.py is reserved")
    # pipe-pane's copy of the bytes may trail the screen on a loaded machine: wait for the
    # new denial's text in it (anything erasing the screen came before that text)
    wait_for(lambda: b"docs/index.md" in pane.written()[before:], SHOWN_WITHIN)
    update = pane.written()[before:]
    assert not ERASE.search(update), ERASE.findall(update)

    # q quits: the program ends, and with it the pane and the session.
    pane.tmux("send-keys", "-t", "watch", "q")
    wait_for(lambda: not pane.alive(), timeout=SHOWN_WITHIN)


@pytest.fixture
def pane_of() -> Iterator[Callable[[tuple[str, str]], Pane]]:
    made: list[Pane] = []
    directory = Path(tempfile.mkdtemp(prefix="ahw-", dir="/tmp"))

    def make(size: tuple[str, str]) -> Pane:
        made.append(Pane(directory, size))
        return made[-1]

    try:
        yield make
    finally:
        for p in made:
            p.tmux("kill-server", check=False)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("size", [("60", "15"), ("80", "24"), ("120", "30")])
def test_a_narrow_pane_keeps_the_holder_and_the_path_whole(
    pane_of: Callable[[tuple[str, str]], Pane], home: Path, project: Path, size: tuple[str, str]
) -> None:
    """Issue 36: at 60 columns HOLDER was cut to `agent "…` and PATH to `src/aut…` while
    CLIENT, KIND and MODE kept their width, and at 60x15 a scrollbar glyph was drawn
    beside the boxes. Now other columns give way first, and nothing is drawn outside them."""
    now = time.time()
    world = World(home, project)
    world.agent("proj__cc_1", now, alive=True, idle=120, issue="farmhand-42")
    world.agent("proj__cod_2", now, alive=True, idle=30, client="codex")
    world.reserve("proj__cc_1", "src/auth/**", now, reason="farmhand-42 login", ttl=7200)
    holder = Writer("proj__cod_2", "conv-2", client="codex")
    world.lease(holder, "src/auth/session_store.py", now)
    for n in range(5):  # enough rows that a short pane scrolls
        world.deny(now - n, "proj__cod_2", f"src/auth/x{n}.py")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **ALIVE}
    pane = pane_of(size)
    pane.start([sys.executable, "-m", "agent_hooks.cli", "watch", "--project", str(project)], env)
    screen = settled(
        pane,
        lambda s: "src/auth/session_store.py" in s and "q Quit" in s and full_width(s, size[0]),
        SHOWN_WITHIN,
    )
    print(screen)
    lines = screen.splitlines()
    assert all(len(line) <= int(size[0]) for line in lines), screen
    held = [line for line in lines if "src/auth/**" in line or "session_store" in line]
    assert any('agent "proj__cc_1"' in line and "src/auth/**" in line for line in held)
    assert any(
        'Codex agent "proj__cod_2"' in line and "src/auth/session_store.py" in line for line in held
    ), screen
    if size != ("60", "15"):  # the time left and the state, where there is room
        assert re.search(r"src/auth/\*\*\s+(exclusive\s+)?1[12]\d min\s+person", screen), screen
    # Inside the frame every line is a box's edge or a row between its two sides.
    body = lines[1 : next(i for i, line in enumerate(lines) if line.startswith(" q Quit"))]
    for line in body:
        text = line.rstrip()
        assert text == "" or (text[0], text[-1]) in {("╭", "╮"), ("│", "│"), ("╰", "╯")}, line
    if size == ("60", "15"):
        assert lines[0].startswith(" ↓ more: PgDn"), lines[0]  # said in the head, no scrollbar
