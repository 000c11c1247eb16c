"""After a Bash command, PostToolUse reads the client's `bashEditDiff` and tells the
model to undo changes to files another agent holds exclusively (real entry script)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import ENTRY, HookResult, HookRunner, context_of

ALICE = "alice"
BOB = "bob"


def reserve(
    run_hook: HookRunner,
    agent: str,
    pat: str,
    *,
    shared: bool = False,
    reason: str = "farmhand-42",
    now: float | None = None,
) -> None:
    out = reservation_store.reserve(
        Repo(str(run_hook.project), str(run_hook.state_dir)),
        Writer(agent, None),
        [(pat, pattern.compile(pat))],
        time.time() if now is None else now,
        reason=reason,
        ttl=3600,
        shared=shared,
        keep=False,
    )
    assert out.conflicts == []


def bash_done(run_hook: HookRunner, changed: list[Path], created: bool = False) -> dict[str, Any]:
    """The captured PostToolUse_Bash payload, reporting `changed` in bashEditDiff."""
    payload = run_hook.payload("PostToolUse_Bash")
    payload["tool_input"]["command"] = "./scripts/regenerate.sh"
    payload["tool_response"]["bashEditDiff"] = {
        "files": [{"filePath": str(p), "hunks": [], "created": created} for p in changed],
        "moreFiles": 0,
        "changedFiles": [str(p) for p in changed],
    }
    return payload


def write_done(run_hook: HookRunner, path: Path, content: str) -> dict[str, Any]:
    payload = run_hook.payload("PostToolUse_Write")
    payload["tool_input"] = {"file_path": str(path), "content": content}
    payload["tool_response"].update(filePath=str(path), content=content, type="update")
    return payload


@pytest.fixture
def files(project: Path) -> dict[str, Path]:
    out = {}
    for rel in ("src/app.py", "src/util.py", "docs/notes.md"):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
        out[rel] = path
    return out


def test_changed_file_held_by_another_agent_is_reported(
    run_hook: HookRunner, files: dict[str, Path]
) -> None:
    reserve(run_hook, ALICE, "src/**")
    payload = bash_done(run_hook, [files["src/app.py"], files["docs/notes.md"]])
    text = context_of(run_hook("PostToolUse", payload, agent=BOB), "PostToolUse")
    assert text.startswith(
        "agent-hooks: your last shell command changed files that another writer holds"
    )
    assert 'src/app.py (agent "alice" holds src/** (exclusive, reason: farmhand-42, ' in text
    assert "docs/notes.md" not in text
    assert "undo them" in text and "git checkout -- <file>" in text
    # the trail still records what the command changed
    state = run_hook.state(BOB)
    assert str(files["src/app.py"]) in state["files_modified"]
    assert any("your last shell command changed files" in line for line in run_hook.log_lines())


def test_every_held_file_is_named(run_hook: HookRunner, files: dict[str, Path]) -> None:
    reserve(run_hook, ALICE, "src/app.py")
    reserve(run_hook, "carol", "src/util.py", reason="bd-a1b2")
    payload = bash_done(run_hook, [files["src/app.py"], files["src/util.py"]])
    text = context_of(run_hook("PostToolUse", payload, agent=BOB), "PostToolUse")
    assert 'src/app.py (agent "alice" holds src/app.py' in text
    assert 'src/util.py (agent "carol" holds src/util.py (exclusive, reason: bd-a1b2' in text


def test_no_warning_when_the_content_is_the_holders_own_last_write(
    run_hook: HookRunner, files: dict[str, Path]
) -> None:
    """The client blames concurrent changes on the command: alice wrote the file
    (her trail fingerprints it) while bob's command ran."""
    reserve(run_hook, ALICE, "src/**")
    target = files["src/app.py"]
    target.write_text("alice's new content\n")
    assert (
        run_hook(
            "PostToolUse", write_done(run_hook, target, "alice's new content\n"), agent=ALICE
        ).code
        == 0
    )
    assert str(target) in run_hook.state(ALICE)["fingerprints"]
    result = run_hook("PostToolUse", bash_done(run_hook, [target]), agent=BOB)
    assert result.code == 0 and result.out is None, result
    # the control: once the content differs from alice's last write, bob is told
    target.write_text("bob's command overwrote it\n")
    result = run_hook("PostToolUse", bash_done(run_hook, [target]), agent=BOB)
    text = context_of(result, "PostToolUse")
    assert "src/app.py" in text


def nothing(result: HookResult) -> bool:
    assert result.code == 0, result.err
    return result.out is None


@pytest.mark.parametrize(
    "situation", ["no reservations", "own only", "shared only", "expired", "released", "elsewhere"]
)
def test_no_warning_when_nobody_else_holds_the_file(
    run_hook: HookRunner, files: dict[str, Path], situation: str
) -> None:
    if situation == "own only":
        reserve(run_hook, BOB, "src/**")
    elif situation == "shared only":
        reserve(run_hook, ALICE, "src/**", shared=True)
    elif situation == "expired":
        reserve(run_hook, ALICE, "src/**", now=time.time() - 7200)
    elif situation == "released":
        reserve(run_hook, ALICE, "src/**")
        reservation_store.release(
            Repo(str(run_hook.project), str(run_hook.state_dir)),
            Writer(ALICE, None),
            time.time(),
            everything=True,
        )
    elif situation == "elsewhere":
        reserve(run_hook, ALICE, "docs/**")
    result = run_hook("PostToolUse", bash_done(run_hook, [files["src/app.py"]]), agent=BOB)
    assert nothing(result)
    assert str(files["src/app.py"]) in run_hook.state(BOB)["files_modified"]


def test_no_warning_for_a_file_outside_the_project(
    run_hook: HookRunner, files: dict[str, Path], tmp_path: Path
) -> None:
    reserve(run_hook, ALICE, "**")
    outside = tmp_path / "scratch" / "out.txt"
    outside.parent.mkdir()
    outside.write_text("x\n")
    assert nothing(run_hook("PostToolUse", bash_done(run_hook, [outside]), agent=BOB))


def test_holder_running_bash_on_its_own_files_is_not_warned(
    run_hook: HookRunner, files: dict[str, Path]
) -> None:
    reserve(run_hook, ALICE, "src/**")
    result = run_hook("PostToolUse", bash_done(run_hook, [files["src/app.py"]]), agent=ALICE)
    assert nothing(result)


def test_a_bash_call_with_no_reservations_loads_no_reservation_code(
    run_hook: HookRunner, files: dict[str, Path]
) -> None:
    payload = bash_done(run_hook, [files["src/app.py"]])
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-IS", ENTRY, "PostToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=run_hook.env(BOB),
        cwd=str(run_hook.project),
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "agent_hooks.hooks.post_tool_use" in modules
    assert "agent_hooks.gate.places" not in modules
    assert "agent_hooks.ledger.reservation_store" not in modules
