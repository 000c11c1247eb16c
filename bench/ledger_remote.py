#!/usr/bin/env python3
"""The remote ledger as built (docs/adr/0016-ledger-beyond-one-machine.md): what its
operations cost over file:// and over a `git daemon` on 127.0.0.1, and what a hook
pays to look at the remote view and to start a sync. Prints median and p95 in ms
(and ratios to `python -I -S -c pass` for whole processes); exits 0 (a report,
not a test). The daemon listens on 127.0.0.1 only and is stopped before it exits.

    python bench/ledger_remote.py [--runs 30] [--only ops,hook,scale] [--machines 10]

ops: for each transport, with two machines (clones with their own HOME and
AGENT_HOOKS_HOST): a fetch of the unchanged ledger; a fetch and read after the other
machine pushed; a quiet sync (fetch only); a sync that pushes this host's file (a
lease changed); a reservation as `agent-hooks reserve` makes it
(`reservation_store.reserve`: its trial run here, then written through: fetch,
plan, commit, leased push, local write).
hook: whole processes paired with `python -I -S -c pass`: one that imports
remote_view and `stat`s the stamp (`due`); one that also reads the view of 50
leases on 50 paths and looks one up; one that starts the sync (`start_sync`,
posix_spawn, not waited for); and the cost of the `start_sync` call in process.
scale: for each transport, `--machines` machines (10), each with a reserver process
(`tests/ledger_reserver.py`, `reservation_store.reserve` as `agent-hooks reserve`
makes it). `--runs` rounds in which every machine reserves one pattern at the same
instant: the winners counted (exactly one per round, and the remote's one grant is
the winner's, or it stops); rounds in which every machine reserves its own pattern
at once (no conflict: granted, or refused as busy after 5 lost races); and each
machine's reserve alone. Latency of `reserve` as the reserver measured it: p50,
p95 and max in ms.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from agent_hooks.ledger import remote_view  # noqa: E402
from ledger_machines import NOW, REMOTE, Daemon, World, remote_files  # noqa: E402


def stats(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1000, p95 * 1000


def report(label: str, times: list[float]) -> None:
    median, p95 = stats(times)
    print(f"  {label:<58} median {median:8.2f} ms   p95 {p95:8.2f} ms   (n={len(times)})")


def timed(
    action: Callable[[int], object], runs: int, prepare: Callable[[int], object] | None = None
) -> list[float]:
    if prepare is not None:
        prepare(-1)
    action(-1)  # warm-up
    times = []
    for n in range(runs):
        if prepare is not None:
            prepare(n)
        began = time.perf_counter()
        action(n)
        times.append(time.perf_counter() - began)
    return times


def bench_ops(world: World, runs: int) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    assert alpha.sync().ok and beta.sync().ok
    print(f"  -- {world.transport}: {world.url}")
    git_a = alpha.git()
    report("fetch + read, unchanged", timed(lambda n: git_a.fetch(REMOTE), runs))
    clock = {"t": NOW + 100.0}

    def other_pushes(n: int) -> None:
        clock["t"] += 61
        beta.claim(f"other/{n}.py", "b", clock["t"])
        assert beta.sync(clock["t"]).pushed

    report(
        "fetch + read after the other machine pushed",
        timed(lambda n: git_a.fetch(REMOTE), runs, other_pushes),
    )

    def quiet(n: int) -> None:
        result = alpha.sync(clock["t"])
        assert result.ok and (n < 0 or not result.pushed), result.error

    report("sync, nothing to push (one fetch)", timed(quiet, runs))

    def changed(n: int) -> None:
        clock["t"] += 1
        alpha.claim(f"mine/{n}.py", "a", clock["t"])

    def pushing(n: int) -> None:
        result = alpha.sync(clock["t"])
        assert result.ok and result.pushed, result.error

    report("sync pushing this host's file (a lease changed)", timed(pushing, runs, changed))

    def reserve(n: int) -> None:
        outcome = alpha.store_reserve("a", f"res/{n}/**", clock["t"])
        assert outcome.changed and not outcome.conflicts

    report(
        "reservation_store.reserve written through (fetch, plan, push, local)",
        timed(reserve, runs),
    )


def pair(
    cmd: list[str], runs: int, after: Callable[[bytes], None] | None = None
) -> tuple[float, float, float]:
    """Median ms of `cmd` and of the bare interpreter run side by side, and the
    median of their per-pair ratios."""
    bare = [sys.executable, "-I", "-S", "-c", "pass"]
    ours, base, ratios = [], [], []
    for _ in range(runs + 2):
        began = time.perf_counter()
        subprocess.run(bare, check=True)
        b = time.perf_counter() - began
        began = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True).stdout
        o = time.perf_counter() - began
        if after is not None:
            after(out)
        ours.append(o)
        base.append(b)
        ratios.append(o / b)
    return (
        statistics.median(ours[2:]) * 1000,
        statistics.median(base[2:]) * 1000,
        statistics.median(ratios[2:]),
    )


def wait_gone(out: bytes) -> None:
    """Untimed: let the sync a run started finish before the next run."""
    pid = out.decode().strip()
    while pid.isdigit() and os.path.exists(f"/proc/{pid}"):
        try:
            status = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            break
        if status == "Z":
            break
        time.sleep(0.005)


def bench_hook(tmp: Path, runs: int) -> None:
    world = World(tmp, None)
    alpha = world.machine("alpha")
    ledger = str(alpha.ledger)
    leases = {
        f"src/m{n}/file{n}.py": [
            {
                "writer": f"w{n}",
                "machine": "beta",
                "worktree": "beta:/w",
                "expires": NOW + 600,
                "written": NOW,
            }
        ]
        for n in range(50)
    }
    (alpha.ledger / remote_view.VIEW).write_bytes(
        remote_view.encode({"synced_at": NOW, "hosts": {"beta": (NOW, 10)}}, leases)
    )
    remote_view.touch_stamp(ledger, NOW)
    prefix = f"import sys;sys.path.insert(0,{str(ROOT / 'src')!r});import agent_hooks;from agent_hooks.ledger import remote_view as v;L={ledger!r};"
    cases = {
        "due(): one stat of the stamp": prefix + "v.due(L, 0)",
        "due() + load() + leases_on() (50 paths in the view)": prefix
        + "v.due(L, 0);w=v.load(L);w.leases_on('src/m7/file7.py');w.stale(0)",
        "due() + start_sync() (posix_spawn, not waited for)": prefix
        + "import time;print(v.start_sync(L, time.time()))",
    }
    print(f"whole processes, paired with python -I -S -c pass ({runs} pairs each)")
    for label, code in cases.items():
        after = wait_gone if "start_sync" in label else None
        ours, base, ratio = pair([sys.executable, "-I", "-S", "-c", code], runs, after)
        print(f"  {label:<58} {ours:7.2f} ms vs {base:6.2f} ms   ratio {ratio:5.2f}x")
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        pid = remote_view.start_sync(ledger, NOW)
        times.append(time.perf_counter() - began)
        assert pid is not None
        os.waitpid(pid, 0)
    report("start_sync() in process (touch stamp + posix_spawn)", times)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def bench_scale(world: World, rounds: int, count: int) -> None:
    """`count` machines reserving at once (see the module's docstring)."""
    import json

    machines = [world.machine(f"m{n:02d}") for n in range(count)]
    for machine in machines:
        assert not machine.switch_on().conflicts
    path = f"{ROOT / 'src'}:{ROOT / 'tests'}"
    procs = []
    for n, machine in enumerate(machines):
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "tests" / "ledger_reserver.py"),
                    machine.state_dir,
                    str(machine.repo),
                    f"agent-{n}",
                ],
                env={**machine.environ, "PYTHONPATH": path, "LEDGER_RESERVER_TIMES": "1"},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"

    def race(lines: list[str]) -> list[tuple[list[str], float]]:
        for proc, line in zip(procs, lines, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        answers = []
        for proc in procs:
            assert proc.stdout is not None
            words = proc.stdout.readline().split()
            answers.append((words[:-1], float(words[-1].removeprefix("ms="))))
        return answers

    def grants() -> dict[str, list[dict[str, object]]]:
        found: dict[str, list[dict[str, object]]] = {}
        for name, text in remote_files(world.remote).items():
            if name.startswith("grants/"):
                for res in json.loads(text)["reservations"]:
                    found.setdefault(str(res["pattern"]), []).append(res)
        return found

    print(f"  -- {world.transport}: {count} machines, {rounds} rounds")
    try:
        conflict, winners = [], 0
        for rnd in range(rounds):
            text = f"same-{rnd}/**"
            answers = race([f"{rnd} {text}"] * count)
            won = [n for n, (words, _) in enumerate(answers) if words[0] == "granted"]
            held = grants().get(text, [])
            assert len(won) == 1 and len(held) == 1, (rnd, answers)
            assert held[0]["agent"] == f"agent-{won[0]}" and answers[won[0]][0][1] == held[0]["id"]
            others = [words for n, (words, _) in enumerate(answers) if n != won[0]]
            assert all(w == ["refused", f"agent-{won[0]}"] for w in others), answers
            winners += 1
            conflict += [ms for _, ms in answers]
        print(f"  one pattern, all at once: {winners} rounds, exactly one winner in each")
        apart, busy = [], 0
        for rnd in range(rounds):
            answers = race([f"{rnd} own-{rnd}/agent-{n}.py" for n in range(count)])
            busy += sum(1 for words, _ in answers if words[0] != "granted")
            apart += [ms for _, ms in answers]
        alone = []
        for rnd in range(rounds):
            for n, proc in enumerate(procs):
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(f"{rnd} alone-{rnd}/agent-{n}.py\n")
                proc.stdin.flush()
                words = proc.stdout.readline().split()
                assert words[0] == "granted", words
                alone.append(float(words[-1].removeprefix("ms=")))
        for label, values in (
            ("reserve, one machine at a time", alone),
            (f"reserve, {count} at once, one pattern (1 granted, rest refused)", conflict),
            (f"reserve, {count} at once, separate patterns ({busy} busy of {len(apart)})", apart),
        ):
            print(
                f"  {label:<66} p50 {percentile(values, 0.5):8.1f}  p95 "
                f"{percentile(values, 0.95):8.1f}  max {max(values):8.1f} ms  (n={len(values)})"
            )
    finally:
        for proc in procs:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--only", default="ops,hook")
    parser.add_argument("--machines", type=int, default=10)
    args = parser.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        if "ops" in only:
            print("remote ledger operations (each spawns git; two machines on one remote)")
            bench_ops(World(tmp / "file", None), args.runs)
            (tmp / "daemon-base").mkdir()
            daemon = Daemon(tmp / "daemon-base")
            try:
                bench_ops(World(tmp / "daemon", daemon), args.runs)
            finally:
                daemon.stop()
        if "hook" in only:
            bench_hook(tmp / "hook", args.runs)
        if "scale" in only:
            print("machines reserving at once (reservation_store.reserve in a process each)")
            bench_scale(World(tmp / "scale-file", None), args.runs, args.machines)
            (tmp / "scale-daemon-base").mkdir()
            daemon = Daemon(tmp / "scale-daemon-base")
            try:
                bench_scale(World(tmp / "scale-daemon", daemon), args.runs, args.machines)
            finally:
                daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
