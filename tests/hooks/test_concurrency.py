"""Many real processes on one agent's state: no lost update, no torn file, corrupt
state recovered and reported."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_hooks import storage
from hook_runner import AGENT, ENTRY, HookRunner, context_of, write_state

SRC = str(Path(storage.__file__).resolve().parents[1])
WORKERS = 16
PER_WORKER = 6


def test_16_processes_updating_one_agent_lose_nothing(run_hook: HookRunner, tmp_path: Path) -> None:
    payload_dir = tmp_path / "payloads"
    payload_dir.mkdir()
    expected_created, expected_read = set(), set()
    scripts = []
    for w in range(WORKERS):
        files = []
        for i in range(PER_WORKER):
            payload = run_hook.payload("PostToolUse_Write")
            if i % 2:
                payload = run_hook.payload("PostToolUse_Read")
                path = f"{run_hook.project}/read/w{w}_{i}.md"
                payload["tool_input"]["file_path"] = path
                expected_read.add(path)
            else:
                path = f"{run_hook.project}/src/w{w}_{i}.py"
                payload["tool_input"]["file_path"] = path
                expected_created.add(path)
            target = payload_dir / f"w{w}_{i}.json"
            target.write_text(json.dumps(payload))
            files.append(str(target))
        scripts.append(files)
    loop = 'for f in "$@"; do "$PY" -IS "$ENTRY" PostToolUse < "$f" || exit 9; done'
    env = run_hook.env() | {"PY": sys.executable, "ENTRY": ENTRY}
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", loop, "sh", *files],
            env=env,
            cwd=run_hook.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for files in scripts
    ]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0] * WORKERS
    assert all(out == (b"", b"") for out in outputs), outputs[:2]
    doc = run_hook.state()
    assert set(doc["files_created"]) == expected_created
    assert set(doc["files_read"]) == expected_read
    assert len(doc["files_created"]) == len(expected_created)
    assert len(doc["files_read"]) == len(expected_read)
    assert run_hook.log_lines() == []  # no lock timeout, no failure
    leftovers = [
        p.name for p in run_hook.state_dir.iterdir() if p.name.endswith((".tmp", ".aside"))
    ]
    assert leftovers == []


# Writes versions 0, 1, 2, ... of one document through storage until killed.
WRITER = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
path = sys.argv[1]
pad = "x" * int(sys.argv[2])
aside = sys.argv[3] == "aside"
i = 0
print("ready", flush=True)
while True:
    i += 1
    doc = {{"version": i, "pad": pad, "tail": i}}
    storage.write_json_atomic(path, doc, durable=i % 3 == 0, aside=aside)
"""


@pytest.mark.parametrize("how", ["replace", "aside"])
def test_a_writer_killed_mid_write_leaves_a_whole_version(tmp_path: Path, how: str) -> None:
    """Killed anywhere in a write, the writer leaves a whole version (written
    `aside`: read as its readers read it, the document or its aside file)."""
    path = tmp_path / "state-a.json"
    aside = how == "aside"
    storage.write_json_atomic(str(path), {"version": 0, "pad": "", "tail": 0}, aside=aside)
    rng = random.Random(20260101)
    seen_versions = []
    for round_ in range(8):
        size = rng.choice([10, 50_000, 400_000])
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(size), how],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.005, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        doc = storage.load_json_object(str(path), aside=aside).doc  # never half a document
        assert doc is not None, round_
        assert doc["version"] == doc["tail"], round_
        assert doc["pad"] in ("", "x" * 10, "x" * 50_000, "x" * 400_000)
        seen_versions.append(doc["version"])
        assert storage.stat_current(str(path), aside=aside).st_mode & 0o777 == 0o600  # type: ignore[union-attr]
    assert any(v > 0 for v in seen_versions), (
        "the writer never got to write: the test proved nothing"
    )
    storage.write_json_atomic(str(path), {"version": -1}, aside=aside)  # puts the last one in
    strays = storage.sweep_temp_files(
        str(tmp_path), lambda target: target == "state-a.json", time.time() + 60
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state-a.json"]
    assert all(Path(s).name.startswith(".state-a.json.") for s in strays)


def test_a_hook_killed_while_holding_the_lock_blocks_nobody(run_hook: HookRunner) -> None:
    hold = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock = storage.Lock(sys.argv[1])
assert lock.acquire(5)
print("held", flush=True)
import time; time.sleep(60)
"""
    run_hook.state_dir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", hold, f"{run_hook.state_path()}.lock"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert run_hook("PostToolUse", "PostToolUse_Write").code == 0
    assert run_hook.state()["files_created"] == [f"{run_hook.project}/a.txt"]
    # Taken at once: a lock it had to wait out would have been logged as given up on.
    assert run_hook.log_lines() == []


def test_a_held_lock_makes_the_hook_fail_open_after_the_timeout(run_hook: HookRunner) -> None:
    hold = f"""
import sys
sys.path.insert(0, {SRC!r})
from agent_hooks import storage
lock = storage.Lock(sys.argv[1])
assert lock.acquire(5)
print("held", flush=True)
sys.stdin.read()
"""
    write_state(run_hook.state_dir, AGENT, {"files_read": ["/before"]})
    proc = subprocess.Popen(
        [sys.executable, "-c", hold, f"{run_hook.state_path()}.lock"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        start = time.monotonic()
        result = run_hook("PostToolUse", "PostToolUse_Write")
        waited = time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
    assert result.code == 0 and result.out is None
    # It waited the lock's timeout (5 s) and then went on by itself: the holder still held
    # the lock when the hook returned. The upper bound only catches a wait far past the
    # timeout; it is wide because two shared cores can stall a process for seconds.
    assert storage.LOCK_TIMEOUT - 0.5 <= waited < storage.LOCK_TIMEOUT + 25, waited
    (line,) = run_hook.log_lines()
    assert "lock" in line and "fail open" in line
    doc = run_hook.state()
    assert doc["files_read"] == ["/before"] and doc["files_created"] == [
        f"{run_hook.project}/a.txt"
    ]


def test_corrupt_state_is_moved_aside_and_the_next_session_start_says_so(
    run_hook: HookRunner,
) -> None:
    write_state(run_hook.state_dir, AGENT, '{"files_created": ["/lost.py"], "files_rea')
    result = run_hook("PostToolUse", "PostToolUse_Write")
    assert result.code == 0 and result.out is None
    corrupt = list(run_hook.state_dir.glob(f"state-{AGENT}.json.corrupt-*"))
    assert len(corrupt) == 1
    assert corrupt[0].read_text() == '{"files_created": ["/lost.py"], "files_rea'
    assert corrupt[0].stat().st_mode & 0o777 == 0o600
    doc = run_hook.state()
    assert doc["files_created"] == [f"{run_hook.project}/a.txt"]
    (line,) = run_hook.log_lines()
    assert "not valid JSON" in line and corrupt[0].name in line
    text = context_of(run_hook("SessionStart", "SessionStart_startup"))
    assert "not valid JSON" in text and corrupt[0].name in text
    text = context_of(run_hook("SessionStart", "SessionStart_resume"))
    assert "not valid JSON" not in text
