"""Run many of mutmut's mutants in one pytest process (docs/mutation-testing.md).

mutmut's trampolines read `MUTANT_UNDER_TEST` at every call, so one process can collect
the tests once and run them again under each mutant in turn: on a loaded machine, where
`mutmut run` reports its slow mutants as timeouts, this settles them in minutes. Each
mutant runs the tests in the order given until one fails (killed) or all pass
(survived); a test running past `--limit` seconds counts as a kill (a hang), as mutmut
counts timeouts. The unmutated run must pass first.

From inside `mutants/` (after `mutmut run` made it; stop it once "Running clean tests"
shows), with the tests copied there:

    ../.venv/bin/python ../tests/mutation_driver.py NAMES OUT [--limit S] -- PYTEST_ARGS...

NAMES: a file of mutant names, one a line; OUT: where each result goes, one a line
(`NAME KILLED test-id`, `NAME SURVIVED`). Not part of the suite (it is no test module).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import TextIO

import pytest
from _pytest.runner import runtestprotocol


class _TooLong(BaseException):
    """Raised in the test by the alarm: a BaseException, so the test cannot catch it."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooLong


class _Driver:
    def __init__(self, names: list[str], out: TextIO, limit: float) -> None:
        self.names, self.out, self.limit = names, out, limit

    def _fails(self, item: pytest.Item) -> str | None:
        """Why the item failed (its id, or that it ran too long), or None."""
        signal.setitimer(signal.ITIMER_REAL, self.limit)
        try:
            reports = runtestprotocol(item, nextitem=None, log=False)
        except _TooLong:
            return "TIMEOUT " + item.nodeid
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return item.nodeid if any(r.failed for r in reports) else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        signal.signal(signal.SIGALRM, _alarm)
        os.environ["MUTANT_UNDER_TEST"] = ""
        start = time.monotonic()
        for item in session.items:
            failed = self._fails(item)
            if failed is not None:
                print(f"the unmutated code fails: {failed}", file=self.out, flush=True)
                os._exit(1)
        took = time.monotonic() - start
        print(f"unmutated: {len(session.items)} tests pass in {took:.1f} s", file=self.out)
        for name in self.names:
            os.environ["MUTANT_UNDER_TEST"] = name
            why = next((w for w in map(self._fails, session.items) if w is not None), None)
            print(name, "SURVIVED" if why is None else "KILLED " + why, file=self.out, flush=True)
        # pytest's own session end can run code under the last mutant: stop here
        os._exit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description="Run mutmut mutants in one pytest process.")
    parser.add_argument("names", type=Path, help="a file of mutant names, one a line")
    parser.add_argument("out", type=Path, help="where the results go (appended)")
    parser.add_argument("--limit", type=float, default=10.0, help="seconds a test may take")
    parser.add_argument("pytest_args", nargs="*", help="after --: the tests, in order")
    args = parser.parse_args()
    names = [line.strip() for line in args.names.read_text().splitlines() if line.strip()]
    with args.out.open("a") as out:
        driver = _Driver(names, out, args.limit)
        plugins = ["-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist", "-q"]
        return int(pytest.main([*args.pytest_args, *plugins], plugins=[driver]))


if __name__ == "__main__":
    sys.exit(main())
