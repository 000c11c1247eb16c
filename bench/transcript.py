#!/usr/bin/env python3
"""What the first PostToolUse after `agent-hooks session start` (or `switch`)
pays to read a conversation's transcript from the start
(docs/adr/0009-work-sessions.md): `transcript.advance` from no cursor over a
transcript of about 3 MB, made from the real client's transcript in
tests/fixtures/transcripts/: once by repeating it whole (7 of its 57 lines
carry `usage` and are parsed), once by repeating only its lines that carry
`usage` (every line parsed: the worst case). Prints medians, in process;
exits 0.
docs/measurements.md records what it printed.

    python bench/transcript.py [--mb 3] [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "main-with-subagent.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks.work_sessions import transcript

    whole = FIXTURE.read_bytes()
    usage = b"".join(line + b"\n" for line in whole.split(b"\n") if b'"usage"' in line)
    with tempfile.TemporaryDirectory() as tmpdir:
        for label, unit in (("the whole transcript", whole), ("its usage lines only", usage)):
            copies = max(1, round(args.mb * 1024 * 1024 / len(unit)))
            path = Path(tmpdir) / "conversation.jsonl"
            path.write_bytes(unit * copies)
            size = path.stat().st_size
            cursor = transcript.advance(None, str(path))  # warm the page cache
            times = []
            for _ in range(args.rounds):
                began = time.perf_counter()
                cursor = transcript.advance(None, str(path))
                times.append(time.perf_counter() - began)
            assert cursor is not None
            lines = unit.count(b"\n") * copies
            print(
                f"{size / 1024 / 1024:.1f} MB, {lines} lines ({label} x {copies}): "
                f"read from the start in {statistics.median(times) * 1000:.0f} ms "
                f"(median of {args.rounds})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
