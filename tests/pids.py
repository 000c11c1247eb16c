"""Process ids for tests."""

from __future__ import annotations

import subprocess
import sys


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped: no process has it (until the
    kernel hands it out again, which takes a whole round of the pid space)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid
