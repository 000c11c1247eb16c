"""hooks/entry.py: the process ends as soon as the adapter has answered (no interpreter
finalization), so what it wrote must be complete and its exit status 0 whatever the
reader does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hook_runner import ENTRY, HookRunner


def test_a_reader_that_went_away_leaves_exit_status_0(run_hook: HookRunner, tmp_path: Path) -> None:
    """The client closed its end before the hook answered: the answer cannot be
    written (EPIPE); the hook logs that and still exits 0, with no traceback."""
    payload = run_hook.payload("SessionStart_startup")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-IS", ENTRY, "SessionStart"],
            input=json.dumps(payload).encode(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=run_hook.env(),
            cwd=str(run_hook.project),
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr
    assert any("BrokenPipeError" in line for line in run_hook.log_lines())


def test_the_exit_status_is_0_for_an_unknown_event(run_hook: HookRunner) -> None:
    result = run_hook("NoSuchEvent", "PreToolUse_Write")
    assert (result.code, result.out) == (0, None)
    assert result.err == "agent-hooks: unknown Claude Code hook event 'NoSuchEvent'; allowed\n"
