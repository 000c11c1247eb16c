#!/usr/bin/env python3
"""Locking experiments behind docs/adr/0003-locking-and-stale-locks.md: N
processes each make M read-modify-write updates (read a JSON counter, add one,
write a temp file, rename it over the data file) under four kinds of lock, and
the final count shows how many updates were lost. Then the cost of one state
update with and without fsync, and of parsing a hook payload. Prints a report;
exits 0. docs/measurements.md records what it printed.

    python bench/locking.py [--workers 16] [--updates 200]

Run it with a venv that has filelock (./test.sh makes .venv); without it the
filelock case is skipped.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from agent_hooks import jsonio, storage  # noqa: E402

PAYLOAD = ROOT / "tests" / "fixtures" / "payloads" / "PostToolUse_Edit.json"


def bump(data: str) -> None:
    """One unlocked read-modify-write of the counter, replaced atomically."""
    with open(data) as f:
        n = json.load(f)["n"]
    tmp = f"{data}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"n": n + 1}, f)
    os.replace(tmp, data)


def flock_separate(data: str) -> None:
    fd = os.open(data + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        bump(data)
    finally:
        os.close(fd)


def flock_data_file(data: str) -> None:
    fd = os.open(data, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a lock on the inode that os.replace is about to retire
        bump(data)
    finally:
        os.close(fd)


def filelock_separate(data: str) -> None:
    import filelock

    with filelock.FileLock(data + ".lock"):
        bump(data)


def storage_lock(data: str) -> None:
    with storage.Lock(data + ".lock") as lock:
        if not lock.acquire():
            raise SystemExit("storage.Lock timed out")
        bump(data)


VARIANTS: dict[str, Callable[[str], None]] = {
    "fcntl.flock on a separate lock file F.lock": flock_separate,
    "fcntl.flock on the data file F itself, then os.replace": flock_data_file,
    "filelock.FileLock on F.lock": filelock_separate,
    "storage.Lock on F.lock (agent-hooks' lock)": storage_lock,
}


def worker(update: Callable[[str], None], data: str, updates: int, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    for _ in range(updates):
        update(data)


def race(
    tmp: Path, name: str, update: Callable[[str], None], workers: int, updates: int, first: float
) -> float:
    data = str(tmp / f"{update.__name__}.json")
    Path(data).write_text('{"n": 0}')
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(workers + 1)
    procs = [
        ctx.Process(target=worker, args=(update, data, updates, start)) for _ in range(workers)
    ]
    for p in procs:
        p.start()
    start.wait()
    began = time.perf_counter()
    for p in procs:
        p.join()
    took = time.perf_counter() - began
    n = json.loads(Path(data).read_text())["n"]
    expected = workers * updates
    lost = 100 * (expected - n) / expected
    print(
        f"  {name:<56} {n:>5}/{expected} counted, {lost:4.1f} % lost, "
        f"{took:6.2f} s = {took / (first or took):4.2f}x the first"
    )
    return took


def state_doc() -> dict[str, object]:
    """An agent state document of about 5 KB."""
    files = [f"/home/dev/myproject/src/pkg{i % 7}/module_{i}.py" for i in range(115)]
    return {
        "schema": 1,
        "registered": True,
        "agent_name": "myproject__cc_1",
        "files_created": files[:20],
        "files_modified": files[20:50],
        "files_read": files[50:],
    }


def per_update_ms(path: str, durable: bool, rounds: int) -> float:
    doc = state_doc()

    def mutate(loaded: storage.Loaded) -> dict[str, object]:
        doc["last_activity"] = time.time()
        return doc

    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        storage.locked_update(path, mutate, now=time.time(), durable=durable)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def baseline_ms(runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=False)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=200, help="state updates timed per case")
    args = parser.parse_args()
    base = baseline_ms()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
        f"`python -I -S -c pass` takes {base:.1f} ms here (median of 20)"
    )
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        print(f"{args.workers} processes x {args.updates} updates of one counter:")
        first = 0.0
        for name, update in VARIANTS.items():
            if update is filelock_separate:
                try:
                    import filelock  # noqa: F401
                except ImportError:
                    print(f"  {name:<56} skipped: filelock is not installed")
                    continue
            took = race(tmp, name, update, args.workers, args.updates, first)
            first = first or took
        state = str(tmp / "state-me.json")
        storage.write_json_atomic(state, state_doc())
        size = Path(state).stat().st_size
        print(f"one locked read-modify-write of a {size / 1024:.1f} KB state document:")
        plain = per_update_ms(state, False, args.rounds)
        synced = per_update_ms(state, True, args.rounds)
        print(f"  without fsync  {plain:6.3f} ms = {plain / base:.3f}x a bare interpreter start")
        print(f"  with fsync     {synced:6.3f} ms = {synced / base:.3f}x a bare interpreter start")
        print(f"  the fsync      {synced - plain:6.3f} ms")
        payload = json.loads(PAYLOAD.read_text())["stdin"]
        padding = 2048 - len(json.dumps(payload))
        payload["tool_input"]["new_string"] += "x" * padding  # a 2 KB PostToolUse(Edit)
        raw = json.dumps(payload).encode()
        rounds = 2000
        began = time.perf_counter()
        for _ in range(rounds):
            jsonio.loads(raw)
        parse = (time.perf_counter() - began) / rounds * 1000
        print(f"parsing a {len(raw) / 1024:.1f} KB hook payload with jsonio: {parse:.4f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
