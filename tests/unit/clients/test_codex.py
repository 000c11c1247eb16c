"""clients.codex: what each captured Codex 0.169.0 payload says a tool call does, the shell
forms Codex applies itself, and the answers as Codex reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import codex
from agent_hooks.hooks.hook_runtime import Answer
from agent_hooks.tool_use import CREATED, EDIT, MODIFIED, SHELL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "payloads" / "codex"
P = "/home/dev/myproject"


def payload(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())["stdin"]
    return doc


def files(name: str) -> tuple[str, str | None, list[tuple[str, object]], str | None, str | None]:
    doc = payload(name)
    use = codex.tool_use(doc["hook_event_name"], doc)
    assert use is not None
    return use.name, use.kind, use.files, use.command, use.workdir


# Every captured tool call: (tool name, kind, files, command, workdir).
EXPECTED: dict[str, tuple[str, str | None, list[tuple[str, object]], str | None, str | None]] = {
    "PreToolUse_apply_patch_patch_add": ("apply_patch", EDIT, [(CREATED, "add.txt")], None, None),
    "PostToolUse_apply_patch_patch_add": ("apply_patch", EDIT, [(CREATED, "add.txt")], None, None),
    "PreToolUse_apply_patch_patch_add_abspath": (
        "apply_patch",
        EDIT,
        [(CREATED, f"{P}/abs_add.txt")],
        None,
        None,
    ),
    "PreToolUse_apply_patch_patch_update": (
        "apply_patch",
        EDIT,
        [(MODIFIED, "upd.txt")],
        None,
        None,
    ),
    "PreToolUse_apply_patch_patch_delete": (
        "apply_patch",
        EDIT,
        [(MODIFIED, "del.txt")],
        None,
        None,
    ),
    "PostToolUse_apply_patch_patch_move": (
        "apply_patch",
        EDIT,
        [(MODIFIED, "mv_src.txt"), (CREATED, "moved/mv_dst.txt")],
        None,
        None,
    ),
    "PreToolUse_apply_patch_patch_multi_codemode": (
        "apply_patch",
        EDIT,
        [(CREATED, "sub/multi_add.txt"), (MODIFIED, "multi_upd.txt"), (MODIFIED, "multi_del.txt")],
        None,
        None,
    ),
    "PreToolUse_apply_patch_subagent_patch_add_subagent": (
        "apply_patch",
        EDIT,
        [(CREATED, "worker.txt")],
        None,
        None,
    ),
    "PreToolUse_Bash_shell_write": ("Bash", SHELL, [], "echo hi > a.txt", None),
    "PostToolUse_Bash_shell_write_codemode": ("Bash", SHELL, [], "echo hi > a.txt", None),
    "PreToolUse_Bash_shell_workdir_sub": ("Bash", SHELL, [], "echo in-workdir > wd.txt", None),
    "PreToolUse_Bash_shell_heredoc_apply_patch": (
        "Bash",
        EDIT,
        [(MODIFIED, "sh_patch.txt")],
        None,
        None,
    ),
    "PreToolUse_collaborationspawn_agent_spawn_subagent": (
        "collaborationspawn_agent",
        None,
        [],
        None,
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_captured_tool_call(name: str) -> None:
    assert files(name) == EXPECTED[name]


def test_every_captured_tool_payload_translates() -> None:
    """No captured tool event is left without a ToolUse; every other event names no tool."""
    for path in sorted(FIXTURES.glob("*.json")):
        doc = json.loads(path.read_text())["stdin"]
        use = codex.tool_use(doc["hook_event_name"], doc)
        assert (use is not None) == ("tool_name" in doc and "tool_input" in doc), path.name
        if use is not None and use.name in ("Bash", "apply_patch"):
            assert use.kind in (SHELL, EDIT), path.name


def test_a_failed_patch_changed_nothing() -> None:
    doc = payload("PostToolUse_apply_patch_patch_add")
    doc["tool_response"] = "apply_patch verification failed: invalid hunk at line 2"
    use = codex.tool_use("PostToolUse", doc)
    assert use is not None and (use.kind, use.files) == (EDIT, [])
    assert codex.tool_use("PostToolUse", {**doc, "tool_response": None}).files == []  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [
        {"tool_name": ["Bash"], "tool_input": {"command": "x"}},
        {"tool_name": "Bash", "tool_input": "echo"},
        {"tool_name": "Bash"},
        {},
    ],
)
def test_a_payload_naming_no_tool(bad: dict[str, Any]) -> None:
    assert codex.tool_use("PreToolUse", bad) is None


def test_a_command_that_is_not_text_is_no_tool_call_to_judge() -> None:
    use = codex.tool_use("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": 3}})
    assert use is not None and use.kind is None


PATCH = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (f"apply_patch <<'EOF'\n{PATCH}EOF\n", (None, PATCH)),
        (f"apply_patch<<EOF\n{PATCH}EOF", (None, PATCH)),
        (f'applypatch <<"P"\n{PATCH}P\n\n', (None, PATCH)),
        (f"cd sub/dir && apply_patch <<'EOF'\n{PATCH}EOF", ("sub/dir", PATCH)),
        (f"cd /abs && apply_patch <<'EOF'\n{PATCH}EOF", ("/abs", PATCH)),
        (f"apply_patch <<'EOF'\n{PATCH}EOF\nrm -rf x", None),
        (f"apply_patch <<'EOF' && rm x\n{PATCH}EOF", None),
        (f"echo && apply_patch <<'EOF'\n{PATCH}EOF", None),
        (f"apply_patchx <<'EOF'\n{PATCH}EOF", None),
        (f"apply_patch <<-'EOF'\n{PATCH}EOF", None),
        (f"apply_patch <<< '{PATCH}'", None),
        (f"apply_patch <<EOF\n{PATCH.replace('a.txt', '$A')}EOF", None),
        (f"cd a; rm -rf b && apply_patch <<'EOF'\n{PATCH}EOF", None),
        (f"cd $D && apply_patch <<'EOF'\n{PATCH}EOF", None),
        (f"cd 'my dir' && apply_patch <<'EOF'\n{PATCH}EOF", None),
        (f"apply_patch <<'EOF'\n{PATCH}EOF\n{PATCH}EOF", None),
        (f"apply_patch <<'EOF'\n{PATCH}", None),
        ("apply_patch", None),
        ("echo hi > a.txt", None),
    ],
)
def test_the_shell_forms_codex_applies_itself(
    command: str, expected: tuple[str | None, str] | None
) -> None:
    """Exactly `[cd DIR &&] apply_patch <<DELIM` … `DELIM`: anything more stays a shell
    command for the shell analysis."""
    assert codex.intercepted_patch(command) == expected


def test_an_intercepted_patch_runs_in_its_cd_directory() -> None:
    doc = payload("PreToolUse_Bash_shell_heredoc_apply_patch")
    doc["tool_input"]["command"] = f"cd sub && apply_patch <<'EOF'\n{PATCH}EOF\n"
    use = codex.tool_use("PreToolUse", doc)
    assert use is not None
    assert (use.kind, use.files, use.workdir) == (EDIT, [(CREATED, "a.txt")], f"{P}/sub")


def test_render_deny_context_and_nothing_else() -> None:
    assert codex.render("PreToolUse", Answer(deny="held", context="c", message="m")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "held",
        }
    }
    # Context alone: never `allow` (without updatedInput Codex counts the hook as failed),
    # never systemMessage (it reaches no one).
    assert codex.render("PreToolUse", Answer(context="note", message="m")) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "note"}
    }
    assert codex.render("SessionStart", Answer(context="hi")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}
    }
    assert codex.render("Stop", Answer(message="only for people")) is None


def test_the_holder_is_the_hooks_parent() -> None:
    """Run as Codex runs a hook: a child process, whose parent (here, this test) holds."""
    import os
    import subprocess
    import sys

    src = str(Path(codex.__file__).resolve().parents[2])
    child = subprocess.run(
        [sys.executable, "-c", "from agent_hooks.clients import codex; "
         "print(codex.holder_pid({'CLAUDE_PID': '1'}))"],
        env={"PYTHONPATH": src, "PATH": os.environ.get("PATH", "")},
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert child.stdout.strip() == str(os.getpid())


def test_an_orphaned_hook_has_no_holder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its parent gone, the hook was adopted by init (pid 1): nobody to wait for."""
    monkeypatch.setattr(codex.posix, "getppid", lambda: 1)
    assert codex.holder_pid({}) is None
