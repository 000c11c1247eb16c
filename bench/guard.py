#!/usr/bin/env python3
"""Git guard benchmark: what the guard adds to a `git commit`, and to a branch update
(`git branch -f`, which starts the reference-transaction check), in a throwaway
repository. Each case runs its git command `--runs` times, interleaved with the
other cases so drift of a shared machine spreads over all of them; prints the median
wall time per command. Exits 0 (a report, not a test).

    .venv/bin/python bench/guard.py [--runs 20]

Cases: no hook; the guard's pre-commit alone (as installed before
reference-transaction existed); the whole guard (pre-commit + reference-transaction).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_hooks.git_guard import guard_hooks


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def setup(root: Path, name: str, hooks: tuple[str, ...]) -> Path:
    repo = root / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "b")
    git(repo, "config", "user.email", "b@b")
    (repo / "f").write_text("0\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "0")
    git(repo, "branch", "side")
    if hooks:
        guard_hooks.install(str(repo), os.path.abspath(sys.executable), "block")
        for name in guard_hooks.HOOKS:
            if name not in hooks:
                os.unlink(repo / ".git" / "hooks" / name)
    return repo


def timed(repo: Path, run: int, kind: str) -> float:
    if kind == "commit":
        (repo / "f").write_text(f"{run}\n")
        args = ["commit", "-q", "-am", str(run)]
    else:
        args = ["branch", "-f", "side", "main" if run % 2 else "main~1"]
    start = time.perf_counter()
    git(repo, *args)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    cases = {
        "no hook": (),
        "pre-commit only": ("pre-commit",),
        "pre-commit + reference-transaction": guard_hooks.HOOKS,
    }
    root = Path(tempfile.mkdtemp(prefix="guard-bench-"))
    os.environ["HOME"] = str(root)  # an empty state dir: no reservation anywhere
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    os.environ.pop("AGENT_HOOKS_GUARD", None)
    try:
        repos = {case: setup(root, f"r{i}", hooks) for i, (case, hooks) in enumerate(cases.items())}
        times: dict[tuple[str, str], list[float]] = {}
        for kind in ("commit", "branch -f"):
            for run in range(1, args.runs + 1):
                for case, repo in repos.items():
                    times.setdefault((case, kind), []).append(timed(repo, run, kind))
        print(
            f"git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}, {args.runs} runs, median ms"
        )
        for (case, kind), values in times.items():
            print(f"  {kind:<10} {case:<36} {statistics.median(values) * 1000:7.1f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
