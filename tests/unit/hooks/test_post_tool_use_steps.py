"""hooks.post_tool_use in-process: a shell command's PostToolUse fingerprints each
file it changed once, and reads the command line (a held file the client blames on
the command) once, after the agent's state lock, never under it."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import fingerprints, liveness
from agent_hooks.agents import state_file
from agent_hooks.clients import claude_code
from agent_hooks.hooks import hook_runtime, post_tool_use
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookRunner

ME = "proj__cc_1"


def edit(run: HookRunner, rel: str, text: str, agent: str = ME) -> None:
    """A Write as the client runs it (real hooks): the writer holds `rel` after."""
    path = run.project / rel
    payload = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": text})
    assert run("PreToolUse", payload, agent=agent).out is None
    path.write_text(text)
    post = run.payload("PostToolUse_Write", tool_input={"file_path": str(path), "content": text})
    assert run("PostToolUse", post, agent=agent).code == 0


def shell(run: HookRunner, command: str, changed: list[str]) -> hook_runtime.HookContext:
    """The PostToolUse of a Bash command the client reports changed `changed`."""
    payload: dict[str, Any] = run.payload("PostToolUse_Bash", tool_input={"command": command})
    payload["duration_ms"] = 5000
    payload["tool_response"] = {
        "stdout": "",
        "stderr": "",
        "interrupted": False,
        "bashEditDiff": {
            "files": [{"filePath": str(run.project / r), "created": False} for r in changed]
        },
    }
    return hook_runtime.HookContext(claude_code, "PostToolUse", payload, run.env(ME), time.time())


def test_the_command_is_read_after_the_state_lock_and_once(
    run_hook: HookRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client blames the command for a held file someone else changed: whether
    the command line visibly writes it is read once, with the state unlocked."""
    edit(run_hook, "app.py", "mine\n")
    (run_hook.project / "app.py").write_text("by someone else meanwhile\n")
    locked: list[bool] = [False]
    reads: list[bool] = []
    real_update, real_visible = state_file.update, post_tool_use._visible_writes

    def update(*args: Any, **kw: Any) -> dict[str, Any]:
        locked[0] = True
        try:
            return real_update(*args, **kw)
        finally:
            locked[0] = False

    def visible(*args: Any) -> list[tuple[str, str]]:
        reads.append(locked[0])
        return real_visible(*args)

    monkeypatch.setattr(state_file, "update", update)
    monkeypatch.setattr(post_tool_use, "_visible_writes", visible)
    answer = post_tool_use.handle(shell(run_hook, "sleep 5", ["app.py"]))
    assert answer is not None and answer.context is not None
    assert "app.py, which you are changing, changed while your last shell command ran" in (
        answer.context
    )
    assert reads == [False]


def test_each_changed_file_is_fingerprinted_once(
    run_hook: HookRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also where the shell aftermath compares a changed file with its holder's last
    write: a.txt lies in another agent's exclusive reservation, b.txt was edited by
    another writer while the command ran."""
    (run_hook.project / "a.txt").write_text("a\n")
    outcome = reservation_store.reserve(
        Repo(str(run_hook.project), str(run_hook.state_dir)),
        Writer("proj__cc_2", "c-2"),
        [("a.txt", pattern.compile("a.txt"))],
        time.time(),
        reason="",
        ttl=600,
        holder=liveness.process(os.getpid()),
    )
    assert outcome.changed
    edit(run_hook, "b.txt", "b\n", agent="proj__cc_3")
    taken: list[str] = []
    real = fingerprints.of

    def of(path: str) -> str | None:
        taken.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(fingerprints, "of", of)
    answer = post_tool_use.handle(shell(run_hook, "make", ["a.txt", "b.txt"]))
    assert answer is not None and "a.txt (" in str(answer.context)  # compared, and warned
    assert sorted(taken) == ["a.txt", "b.txt"]
