#!/usr/bin/env python3
"""What one reservation check costs to read, in process, with 100 agents
holding 10 reservations each (docs/adr/0006-reservations.md): reading every
agent's state file, reading one JSON index of the project, and what PreToolUse
does (the grouped `marshal` cache, decoding only the group that can apply).
Prints median milliseconds and ratios; exits 0. docs/measurements.md records
what it printed. The whole-process figures are `python bench/hooks.py --scale`.

    python bench/index_read.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import glob
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_hooks.reservations import blocking, index_records
from hooks import ROOT, seed_reservations  # bench/hooks.py

TARGET = "pkg3/free/x.py"  # in a directory where 100 of the 1000 reservations could apply


def median_ms(check: Callable[[], int], rounds: int) -> tuple[float, int]:
    found = check()  # warm the page cache
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        check()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks import identity, jsonio
    from agent_hooks import posix_fs as fs
    from agent_hooks.reservations import pattern, reservation_index

    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        project = tmp / "project"
        (project / ".git").mkdir(parents=True)
        env = {"HOME": str(tmp / "home")}
        seed_reservations(env, project, range(100), 10)
        state_dir = identity.state_dir(env)
        root = str(project)
        now = time.time()
        states = sorted(glob.glob(f"{state_dir}/state-*.json"))
        truth = fs.join(reservation_index.index_dir(state_dir, root), index_records.TRUTH)
        cache = fs.join(reservation_index.index_dir(state_dir, root), index_records.CACHE)

        def every_state_file() -> int:
            hits = 0
            for path in states:
                doc = jsonio.loads(fs.read_file(path) or b"{}")
                assert isinstance(doc, dict)
                for res in doc.get("reservations", []):
                    if res["expires_at"] > now and pattern.matches(
                        pattern.compile(res["pattern"]), TARGET
                    ):
                        hits += 1
            return hits

        def one_json_index() -> int:
            doc = jsonio.loads(fs.read_file(truth) or b"{}")
            assert isinstance(doc, dict)
            return sum(
                1
                for res in doc["reservations"]
                if res["expires_at"] > now and pattern.matches(res["compiled"], TARGET)
            )

        def grouped_cache() -> int:
            hot = reservation_index.load_hot(state_dir, root)
            assert hot is not None
            return len(blocking.blocking_edit(hot, TARGET, "bench__cc_me", now))

        print(
            f"100 agents x 10 reservations; a check of {TARGET}; {args.rounds} rounds, in process\n"
            f"  ({len(states)} state files of {Path(states[0]).stat().st_size / 1024:.1f} KB, "
            f"reservations.json {Path(truth).stat().st_size / 1024:.0f} KB, "
            f"reservations.cache {Path(cache).stat().st_size / 1024:.0f} KB)"
        )
        first = 0.0
        for name, check in {
            "read every agent's state file": every_state_file,
            "read one JSON index of the project": one_json_index,
            "the grouped marshal cache (what PreToolUse does)": grouped_cache,
        }.items():
            ms, found = median_ms(check, args.rounds)
            first = first or ms
            print(f"  {name:<50} {ms:6.3f} ms = {ms / first:4.2f}x the first ({found} hits)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
