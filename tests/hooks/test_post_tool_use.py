"""PostToolUse through the real entry script: what each tool adds to the trail."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hook_runner import AGENT, ROOT, HookRunner, context_of, write_state


def post(run_hook: HookRunner, payload: dict[str, Any], **kw: Any) -> None:
    result = run_hook("PostToolUse", payload, **kw)
    assert result.code == 0, result.err
    assert result.out is None and result.err == ""


def tool(
    run_hook: HookRunner, name: str, tool_input: dict[str, Any], response: Any = None
) -> dict[str, Any]:
    payload = run_hook.payload("PostToolUse_Edit", tool_name=name, tool_input=tool_input)
    if response is None:
        payload.pop("tool_response")
    else:
        payload["tool_response"] = response
    return payload


def test_real_payloads_build_the_trail(run_hook: HookRunner) -> None:
    p = run_hook.project
    (p / "a.txt").write_text("alpha\nline two\n")
    post(run_hook, run_hook.payload("PostToolUse_Write"))
    post(run_hook, run_hook.payload("PostToolUse_Read"))
    post(run_hook, run_hook.payload("PostToolUse_Edit"))
    post(run_hook, run_hook.payload("PostToolUse_Bash"))
    post(run_hook, run_hook.payload("PostToolUse_Glob"))
    post(run_hook, run_hook.payload("PostToolUse_Grep"))
    post(run_hook, run_hook.payload("PostToolUse_Agent"))
    doc = run_hook.state()
    assert doc["files_created"] == [str(p / "a.txt"), str(p / "b.txt")]
    assert doc["files_modified"] == [str(p / "a.txt")]
    assert doc["files_read"] == [str(p / "a.txt")]
    st = os.stat(p / "a.txt")
    assert doc["fingerprints"][str(p / "a.txt")].startswith(f"{st.st_mtime_ns:x}:{st.st_size:x}:")
    assert run_hook.state_path().stat().st_mode & 0o777 == 0o600
    assert run_hook.log_lines() == []


CASES: list[tuple[str, str, dict[str, Any], Any, str, str]] = [
    (
        "write create",
        "Write",
        {"file_path": "{p}/n.py", "content": ""},
        {"type": "create"},
        "files_created",
        "{p}/n.py",
    ),
    (
        "write update",
        "Write",
        {"file_path": "{p}/n.py", "content": ""},
        {"type": "update"},
        "files_modified",
        "{p}/n.py",
    ),
    (
        "edit",
        "Edit",
        {"file_path": "{p}/e.py", "old_string": "a", "new_string": "b"},
        {},
        "files_modified",
        "{p}/e.py",
    ),
    (
        "multiedit",
        "MultiEdit",
        {"file_path": "{p}/m.py", "edits": [{"old_string": "a"}]},
        {},
        "files_modified",
        "{p}/m.py",
    ),
    (
        "notebook",
        "NotebookEdit",
        {"notebook_path": "{p}/nb.ipynb", "new_source": "x"},
        {},
        "files_modified",
        "{p}/nb.ipynb",
    ),
    ("read", "Read", {"file_path": "{p}/r.md"}, {"type": "text"}, "files_read", "{p}/r.md"),
    ("relative path", "Edit", {"file_path": "src/../rel.py"}, {}, "files_modified", "{p}/rel.py"),
    (
        "outside the project",
        "Read",
        {"file_path": "/etc/hostname"},
        {},
        "files_read",
        "/etc/hostname",
    ),
    (
        "bash modified",
        "Bash",
        {"command": "sed -i s/a/b/ x"},
        {
            "stdout": "",
            "bashEditDiff": {
                "files": [{"filePath": "{p}/x", "created": False}],
                "changedFiles": ["{p}/x"],
            },
        },
        "files_modified",
        "{p}/x",
    ),
    (
        "workspace file",
        "Write",
        {"file_path": "{p}/.tmp/sessions/20260101-000000-ab12/notes.md"},
        {"type": "create"},
        "workspace_files",
        "{p}/.tmp/sessions/20260101-000000-ab12/notes.md",
    ),
]


@pytest.mark.parametrize(
    ("name", "tool_input", "response", "field", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_tool(
    run_hook: HookRunner,
    name: str,
    tool_input: dict[str, Any],
    response: Any,
    field: str,
    expected: str,
) -> None:
    p = str(run_hook.project)

    def fill(value: Any) -> Any:
        return value.replace("{p}", p) if isinstance(value, str) else value

    tool_input = {k: fill(v) for k, v in tool_input.items()}
    if isinstance(response, dict) and "bashEditDiff" in response:
        diff = response["bashEditDiff"]
        response = {
            **response,
            "bashEditDiff": {
                "files": [{**f, "filePath": fill(f["filePath"])} for f in diff["files"]],
                "changedFiles": [fill(c) for c in diff["changedFiles"]],
            },
        }
    post(run_hook, tool(run_hook, name, tool_input, response))
    doc = run_hook.state()
    for other in ("files_created", "files_modified", "files_read", "workspace_files"):
        assert doc[other] == ([fill(expected)] if other == field else []), other


@pytest.mark.parametrize(
    "payload_name", ["PostToolUse_Glob", "PostToolUse_Grep", "PostToolUse_Agent"]
)
def test_tools_that_touch_no_file_write_nothing(run_hook: HookRunner, payload_name: str) -> None:
    post(run_hook, run_hook.payload(payload_name))
    assert not run_hook.state_path().exists()


def test_a_failed_tool_records_nothing(run_hook: HookRunner) -> None:
    for name in ("PostToolUseFailure_Bash", "PostToolUseFailure_Read"):
        result = run_hook("PostToolUseFailure", name)
        assert result.code == 0 and result.out is None
    assert not run_hook.state_path().exists()


def test_dedupe_keeps_first_seen_order_across_processes(run_hook: HookRunner) -> None:
    p = run_hook.project
    for rel in ("b.py", "a.py", "b.py", "c.py", "a.py"):
        post(run_hook, tool(run_hook, "Edit", {"file_path": str(p / rel)}, {}))
    assert run_hook.state()["files_modified"] == [str(p / r) for r in ("b.py", "a.py", "c.py")]


def test_files_read_cap_from_the_environment(run_hook: HookRunner) -> None:
    p = run_hook.project
    for i in range(5):
        post(
            run_hook,
            tool(run_hook, "Read", {"file_path": str(p / f"r{i}")}, {}),
            env={"AGENT_HOOKS_READ_LIMIT": "3"},
        )
    assert run_hook.state()["files_read"] == [str(p / f"r{i}") for i in (2, 3, 4)]


def test_agents_keep_separate_trails(run_hook: HookRunner) -> None:
    p = run_hook.project
    post(run_hook, tool(run_hook, "Edit", {"file_path": str(p / "one.py")}, {}), agent="proj__cc_1")
    post(run_hook, tool(run_hook, "Edit", {"file_path": str(p / "two.py")}, {}), agent="proj__cc_2")
    post(run_hook, tool(run_hook, "Edit", {"file_path": str(p / "shared.py")}, {}), agent=None)
    assert run_hook.state("proj__cc_1")["files_modified"] == [str(p / "one.py")]
    assert run_hook.state("proj__cc_2")["files_modified"] == [str(p / "two.py")]
    assert run_hook.state(None)["files_modified"] == [str(p / "shared.py")]


def test_the_trail_survives_other_fields_and_updates_last_activity(run_hook: HookRunner) -> None:
    write_state(
        run_hook.state_dir,
        AGENT,
        {"registered": True, "issue_id": "farmhand-42", "last_activity": 1, "files_read": ["/old"]},
    )
    post(run_hook, tool(run_hook, "Read", {"file_path": str(run_hook.project / "x")}, {}))
    doc = run_hook.state()
    assert doc["issue_id"] == "farmhand-42" and doc["registered"] is True
    assert doc["files_read"] == ["/old", str(run_hook.project / "x")]
    assert doc["last_activity"] > 1


def test_bad_agent_name_fails_open_and_logs(run_hook: HookRunner, tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    result = run_hook("PostToolUse", "PostToolUse_Write", agent="../../escape")
    assert result.code == 0 and result.out is None
    lines = run_hook.log_lines()
    assert len(lines) == 1 and "AGENT_NAME" in lines[0] and "fail open" in lines[0]
    assert set(tmp_path.rglob("*")) - before == {run_hook.state_dir, run_hook.log_file}


def test_a_path_holding_a_lone_surrogate_is_recorded_as_the_client_wrote_it(
    run_hook: HookRunner,
) -> None:
    """Found by tests/fuzz: fingerprinting `a\\ud800.py` raised UnicodeEncodeError and
    the whole call went unrecorded. Node.js writes it as `a\\ufffd.py`."""
    written = run_hook.project / "a\ufffd.py"
    written.write_text("x\n")
    post(run_hook, tool(run_hook, "Edit", {"file_path": str(run_hook.project / "a\ud800.py")}))
    doc = run_hook.state()
    assert doc["files_modified"] == [str(written)] and str(written) in doc["fingerprints"]
    assert run_hook.log_lines() == []


def test_a_huge_trail_is_kept_beside_the_state_which_stays_small(run_hook: HookRunner) -> None:
    """Issue 18, defect 17: a 50,000-entry trail (~2.4 MB) made every PostToolUse parse
    and rewrite megabytes (3x a bare interpreter). The state keeps the first 100 of
    each list; the rest move beside it, once, and nothing is lost."""
    import subprocess
    import sys

    from agent_hooks.agents import trail

    paths = [f"{run_hook.project}/gen/f{n}.py" for n in range(50_000)]
    write_state(
        run_hook.state_dir,
        AGENT,
        {"agent_name": AGENT, "conversation_id": "conv-1", "files_modified": paths},
    )
    assert run_hook.state_path().stat().st_size > 2_000_000
    edit = run_hook.payload("PostToolUse_Edit", session_id="conv-1")
    edit["tool_input"]["file_path"] = str(run_hook.project / "new.py")
    assert run_hook("PostToolUse", edit).code == 0
    doc = run_hook.state()
    assert len(doc["files_modified"]) == trail.MAX_TRAIL_FILES
    assert run_hook.state_path().stat().st_size < 200_000
    out = subprocess.run(
        [sys.executable, "-m", "agent_hooks.cli", "trail", "--json"],
        capture_output=True,
        text=True,
        env={**run_hook.env(), "PYTHONPATH": str(ROOT / "src")},
        check=True,
    ).stdout
    listed = json.loads(out)["trails"][0]["files_modified"]
    assert set(listed) == {*paths, str(run_hook.project / "new.py")}


def test_a_state_held_aside_is_the_agents_state(run_hook: HookRunner) -> None:
    """A writer killed between its two renames leaves the state only under its aside
    name (ADR-0021): the next PostToolUse takes it for the agent's state (a tool that
    records nothing still brings the alerts waiting there) and puts it back under the
    state's own name."""
    doc = {"agent_name": AGENT, "files_read": ["/kept"], "alerts": ["agent-hooks: freed"]}
    write_state(run_hook.state_dir, AGENT, doc)
    aside = run_hook.state_dir / f".state-{AGENT}.json.aside"
    run_hook.state_path().rename(aside)
    result = run_hook("PostToolUse", run_hook.payload("PostToolUse_Glob"))  # records nothing
    assert context_of(result, "PostToolUse") == "agent-hooks: freed"
    assert not aside.exists()
    assert run_hook.state()["files_read"] == ["/kept"] and run_hook.state()["alerts"] == []
