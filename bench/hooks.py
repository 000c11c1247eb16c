#!/usr/bin/env python3
"""Hook start-up benchmark: wall time of each hook process relative to the same
interpreter's `python -I -S -c pass`, measured side by side (A B A B …) so drift
of a shared machine cancels out. Prints median ratios; exits 0 (it is a report,
not a test). The budget for PreToolUse and PostToolUse is 1.5x.

    python bench/hooks.py [--runs 60] [--python /abs/python] [--scale]

--scale adds the reservation scale case: 100 agents holding 10 reservations each
in one project; PreToolUse must stay within 1.2x of its one-agent time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "hooks" / "entry.py"
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"


def wall(cmd: list[str], stdin_path: Path | None, env: dict[str, str]) -> float:
    with open(stdin_path or os.devnull, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, env=env, check=False)
        return time.perf_counter() - start


def payload_file(tmp: Path, name: str, project: Path) -> Path:
    """A reference payload with its paths moved into the benchmark's project."""
    doc = json.loads((PAYLOADS / f"{name}.json").read_text())["stdin"]
    text = json.dumps(doc).replace("/home/dev/myproject", str(project))
    path = tmp / f"{name}.json"
    path.write_text(text)
    return path


def compare(
    python: str, cases: dict[str, tuple[list[str], Path]], env: dict[str, str], runs: int
) -> dict[str, float]:
    baseline = [python, "-I", "-S", "-c", "pass"]
    ratios: dict[str, list[float]] = {name: [] for name in cases}
    for cmd, stdin in cases.values():  # warm caches (.pyc, page cache)
        wall(cmd, stdin, env)
    for _ in range(runs):
        for name, (cmd, stdin) in cases.items():
            base = wall(baseline, stdin, env)
            ratios[name].append(wall(cmd, stdin, env) / base)
    return {name: statistics.median(values) for name, values in ratios.items()}


def seed_reservations(env: dict[str, str], project: Path, agents: int, each: int) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks import identity, pattern, reservation_store

    state_dir = identity.state_dir(env)
    now = time.time()
    for a in range(agents):
        name = f"bench__cc_{a}"
        texts = [f"pkg{a % 10}/mod{a}_{r}/**" for r in range(each)]
        reservation_store.reserve(
            state_dir,
            str(project),
            name,
            [(t, pattern.compile(t)) for t in texts],
            reason=f"bench-{a}",
            ttl=3600,
            shared=False,
            keep=True,
            now=now,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    parser.add_argument(
        "--scale", action="store_true", help="also the 100 agents x 10 reservations case"
    )
    args = parser.parse_args()
    python = args.python
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        project = tmp / "project"
        (project / ".git").mkdir(parents=True)
        (project / "a.txt").write_text("alpha\nline two\n")
        env = {
            "HOME": str(tmp / "home"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "AGENT_NAME": "bench__cc_me",
            "CLAUDE_PROJECT_DIR": str(project),
        }
        hook = [python, "-IS", str(ENTRY)]
        start = payload_file(tmp, "SessionStart_startup", project)
        subprocess.run(
            [*hook, "SessionStart"],
            stdin=start.open("rb"),
            stdout=subprocess.DEVNULL,
            env=env,
            check=True,
        )
        cases = {
            "PreToolUse Write": (
                [*hook, "PreToolUse"],
                payload_file(tmp, "PreToolUse_Write", project),
            ),
            "PreToolUse Bash": (
                [*hook, "PreToolUse"],
                payload_file(tmp, "PreToolUse_Bash", project),
            ),
            "PostToolUse Edit": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Edit", project),
            ),
            "PostToolUse Read": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Read", project),
            ),
            "Stop": ([*hook, "Stop"], payload_file(tmp, "Stop", project)),
        }
        print(
            f"python: {python} ({sys.version.split()[0]}); {args.runs} paired runs; ratio = hook / `python -I -S -c pass`"
        )
        one = compare(python, cases, env, args.runs)
        for name, ratio in one.items():
            budget = " (budget 1.5x)" if name.startswith(("PreToolUse", "PostToolUse")) else ""
            print(f"  {name:<22} {ratio:5.2f}x{budget}")
        if args.scale:
            seed_reservations(env, project, 100, 10)
            scale_cases = {k: v for k, v in cases.items() if k.startswith("PreToolUse")}
            many = compare(python, scale_cases, env, args.runs)
            print("with 100 agents x 10 reservations in the project:")
            for name, ratio in many.items():
                print(
                    f"  {name:<22} {ratio:5.2f}x  = {ratio / one[name]:4.2f}x its one-agent time (budget 1.2x)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
