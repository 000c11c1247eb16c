"""Stale-context detection through the real entry point: a resumed conversation
whose critical file changed under it is told to start fresh (this also proves the
hook can load pathspec, which classifies critical files, from its venv)."""

from __future__ import annotations

import os

from hook_runner import HookRunner, context_of


def resume(run_hook: HookRunner) -> dict[str, object]:
    """A resume of the conversation the startup fixture began (same session id)."""
    start = run_hook.payload("SessionStart_startup")
    return run_hook.payload("SessionStart_resume", session_id=start["session_id"])


def test_resume_after_a_critical_file_changed_says_start_fresh(run_hook: HookRunner) -> None:
    manifest = run_hook.project / "pyproject.toml"
    manifest.write_text("[project]\nname = 'x'\n")
    notes = run_hook.project / "notes.md"
    notes.write_text("hello\n")
    assert run_hook("SessionStart", "SessionStart_startup").code == 0
    for path in (manifest, notes):
        read = run_hook.payload("PostToolUse_Read")
        read["tool_input"]["file_path"] = str(path)
        assert run_hook("PostToolUse", read).code == 0
    unchanged = context_of(run_hook("SessionStart", resume(run_hook)))
    assert "Context freshness: resume" in unchanged

    manifest.write_text("[project]\nname = 'y'\n")  # another agent changes it
    os.utime(manifest, ns=(1, 1))
    text = context_of(run_hook("SessionStart", resume(run_hook)))
    assert "start_fresh_with_briefing" in text
    assert "pyproject.toml (critical)" in text
    assert not [line for line in run_hook.log_lines() if "failed" in line]
