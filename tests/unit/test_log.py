"""log: one line per call in `<state dir>/agent-hooks.log`, private, rotated, never
raising, and whole under concurrent writers. Real files under tmp_path."""

from __future__ import annotations

import calendar
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agent_hooks.log as hook_log
from hook_runner import ROOT

SRC = str(ROOT / "src")
LINE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) pid=(\d+) agent=(\S+) event=(\S+) (.*)")


def log_file(state_dir: Path) -> Path:
    return state_dir / "agent-hooks.log"


def lines(state_dir: Path, suffix: str = "") -> list[str]:
    """The file's lines; each must end with a newline (no torn last line)."""
    path = state_dir / ("agent-hooks.log" + suffix)
    if not path.exists():
        return []
    text = path.read_bytes().decode()
    assert text.endswith("\n") or text == ""
    return text.split("\n")[:-1]


def message(line: str) -> str:
    m = LINE.fullmatch(line)
    assert m, line
    return m[5]


def unescape(text: str) -> str:
    """The message as it was given: the inverse of `log.escape`."""

    def one(m: re.Match[str]) -> str:
        code = m[1] or m[2] or m[3]
        if code:
            return chr(int(code, 16))
        return {"n": "\n", "r": "\r", "t": "\t"}.get(m[4], m[4])

    return re.sub(r"\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8})|(.))", one, text)


def test_one_line_per_call_with_stamp_pid_agent_and_event(
    state_dir: Path, far_timezone: None
) -> None:
    """`<UTC stamp> pid=<pid> agent=<agent> event=<event> <message>`, one line a call."""
    hook_log.log(str(state_dir), "PreToolUse", "alice", "held by bob", now=0)
    hook_log.log(str(state_dir), "Stop", "-", "second  message ")
    first, second = lines(state_dir)
    pid = os.getpid()
    assert first == f"1970-01-01T00:00:00Z pid={pid} agent=alice event=PreToolUse held by bob"
    m = LINE.fullmatch(second)
    assert m and m.groups()[1:] == (str(pid), "-", "Stop", "second  message ")
    stamp = calendar.timegm(time.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ"))
    assert abs(stamp - time.time()) < 60  # UTC, now


@pytest.mark.parametrize(
    "text", ["a\nb", "a\r\nb", "a\\nb", "\\", "end\\", "\n\n", "x\\\ny", "tab\tand é"]
)
def test_line_breaks_and_backslashes_are_escaped_reversibly(state_dir: Path, text: str) -> None:
    """No message can break its line, and the escaping is unambiguous ("\\n" vs a newline)."""
    hook_log.log(str(state_dir), "E", "a", text, now=0)
    [line] = lines(state_dir)
    assert "\r" not in line
    assert unescape(message(line)) == text


def test_a_message_that_is_not_valid_unicode_is_still_logged(state_dir: Path) -> None:
    hook_log.log(str(state_dir), "E", "a", "bad \udcff byte", now=0)
    [line] = lines(state_dir)
    assert line.endswith("bad \\udcff byte")


CONTROLS = [
    "nul\x00byte",
    "bell\x07",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "del\x7f",
    "c1\x85next\x9b",
    "form\x0cfeed\x0bvtab\x08back",
    "line\u2028sep\u2029para",
    "bidi\u202eevil\u200b",
    "astral \U000e0001 tag",
]


@pytest.mark.parametrize("text", CONTROLS)
def test_every_control_character_is_escaped(state_dir: Path, text: str) -> None:
    """NUL, BEL, ESC (terminal escape sequences), DEL, C1 controls, line and
    paragraph separators, bidi overrides: none reaches the file raw, and the
    escaping can be undone."""
    hook_log.log(str(state_dir), "E", "a", f"/p/{text}.py", now=0)
    raw = log_file(state_dir).read_bytes().decode()
    [line] = lines(state_dir)
    assert raw == line + "\n"
    assert all(c.isprintable() for c in line), ascii(line)
    assert unescape(message(line)) == f"/p/{text}.py"


def test_the_log_is_private(tmp_path: Path) -> None:
    """Created 0600 (in a 0700 state directory made for it) whatever the umask."""
    state_dir = tmp_path / "deep" / ".claude"
    old = os.umask(0)
    try:
        hook_log.log(str(state_dir), "E", "a", "m")
    finally:
        os.umask(old)
    assert stat.S_IMODE(log_file(state_dir).stat().st_mode) == 0o600
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_at_the_log_path_is_refused(
    state_dir: Path, tmp_path: Path, dangling: bool
) -> None:
    """Nothing is written through a planted symlink, nothing is created at its target,
    and the call returns quietly."""
    target = tmp_path / "victim"
    if not dangling:
        target.write_text("precious\n")
    state_dir.mkdir()
    log_file(state_dir).symlink_to(target)
    assert hook_log.log(str(state_dir), "E", "a", "m") is None
    assert log_file(state_dir).is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "precious\n"


def test_a_log_that_cannot_be_written_is_skipped_silently(tmp_path: Path) -> None:
    """No state directory to be had, or a directory at the log path: no error, no change."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    hook_log.log(str(blocker), "E", "a", "state dir is a file")
    hook_log.log(str(blocker / "below"), "E", "a", "state dir below a file")
    state_dir = tmp_path / "sd"
    log_file(state_dir).mkdir(parents=True)
    hook_log.log(str(state_dir), "E", "a", "log path is a directory")
    assert blocker.read_text() == "x" and list(log_file(state_dir).iterdir()) == []


def test_rotation_keeps_one_previous_file(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_LOG_BYTES the log moves to agent-hooks.log.1 and a new one begins; no line
    is lost across one rotation, and only one previous file is kept."""
    monkeypatch.setattr(hook_log, "MAX_LOG_BYTES", 1000)
    messages = [f"message {k:02d} " + "x" * 40 for k in range(20)]  # ~90 bytes a line
    for m in messages:
        hook_log.log(str(state_dir), "E", "a", m, now=0)
    old, new = lines(state_dir, ".1"), lines(state_dir)
    assert old and new
    assert [message(line) for line in old + new] == messages
    assert log_file(state_dir).stat().st_size <= 1000 + 100
    assert stat.S_IMODE((state_dir / "agent-hooks.log.1").stat().st_mode) == 0o600
    for k in range(60):
        hook_log.log(str(state_dir), "E", "a", f"more {k:02d} " + "y" * 40, now=0)
    assert sorted(p.name for p in state_dir.iterdir()) == ["agent-hooks.log", "agent-hooks.log.1"]
    assert all("message" not in line for line in lines(state_dir, ".1"))
    assert lines(state_dir)[-1].endswith("more 59 " + "y" * 40)


WRITER = """
import os, sys, time
sys.path.insert(0, {src!r})
from agent_hooks.log import log
open({go!r} + ".ready-{worker}", "w").close()
while not os.path.exists({go!r}):
    time.sleep(0.001)
for i in range({count}):
    log({state_dir!r}, "E", "w{worker}", f"w{worker}-{{i:04d}}-" + "x" * 300 + "|end")
"""


def test_concurrent_writers_never_interleave_within_a_line(state_dir: Path, tmp_path: Path) -> None:
    """8 processes x 200 lines at once: every line whole, each writer's lines in order."""
    workers, count, go = 8, 200, tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER.format(
            src=SRC, go=str(go), count=count, state_dir=str(state_dir), worker=w)])
        for w in range(workers)
    ]  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("go.ready-*"))) < workers:  # all at the start line
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0] * workers
    assert not (state_dir / "agent-hooks.log.1").exists()  # no rotation muddles the count
    seen: dict[str, list[int]] = {f"w{w}": [] for w in range(workers)}
    pids: dict[str, set[str]] = {name: set() for name in seen}
    for line in lines(state_dir):
        m = LINE.fullmatch(line)
        assert m and m[4] == "E", line[:120]
        body = re.fullmatch(r"(w\d)-(\d{4})-x{300}\|end", m[5])
        assert body and body[1] == m[3], line[:120]
        seen[m[3]].append(int(body[2]))
        pids[m[3]].add(m[2])
    assert all(got == list(range(count)) for got in seen.values())
    assert all(len(p) == 1 for p in pids.values())


def test_a_fifo_at_the_log_path_does_not_block(state_dir: Path) -> None:
    """The module promises a log call never blocks a hook: not even on a FIFO at the log path."""
    state_dir.mkdir()
    os.mkfifo(log_file(state_dir))
    code = f"import sys; sys.path.insert(0, {SRC!r}); from agent_hooks.log import log; "
    code += f"log({str(state_dir)!r}, 'E', 'a', 'm')"
    try:
        # A blocked call never returns: the limit is only wide enough for a loaded machine.
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("log() blocked on a FIFO")
    assert proc.returncode == 0 and proc.stderr == b""
