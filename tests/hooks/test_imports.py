"""What each hook imports, measured with `python -I -S -X importtime hooks/entry.py <Event>`.

Every hot path is run for real: each PreToolUse and PostToolUse tool the hooks act
on, in each project condition that changes what runs (no reservations; another
agent holds something exclusive, with the target inside and outside it; the
agent's own reservation; strict mode; an active work session; a write into a
workspace). Each may load only what `hot_path_rules` allows. The lifecycle hooks
may use the standard library, never the CLI or a third-party package.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.work_sessions import work_session, work_session_store
from agent_hooks.workspaces import workspace_store
from agent_hooks.writers import Writer
from hook_runner import ENTRY, HookRunner, context_of
from hot_path_rules import (
    FORBIDDEN_ON_HOT_PATH,
    HOT_ALLOWLIST,
    LIFECYCLE_ALLOWLIST,
    NEVER_IN_A_HOOK,
    STARTUP,
)

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
ME = "proj__cc_1"
OTHER = "proj__cc_2"


def imported(
    run_hook: HookRunner, event: str, payload: dict[str, Any], client: str | None = None
) -> dict[str, str]:
    """Every module the hook imported, mapped to the module that imported it."""
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-X",
            "importtime",
            ENTRY,
            *([client] if client else []),
            event,
        ],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=run_hook.env(ME, client=client),
        cwd=run_hook.project,
        timeout=60,
    )
    assert proc.returncode == 0
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            field = line.rsplit("|", 1)[1]
            name = field.strip()
            if name != "imported package":
                rows.append(((len(field) - len(field.lstrip()) - 1) // 2, name))
        elif line.strip():
            raise AssertionError(f"{event} wrote to stderr: {line}")
    failures = [line for line in run_hook.log_lines() if "fail open" in line]
    assert failures == [], failures  # the realistic path ran, nothing failed
    parents: dict[str, str] = {}
    for i, (depth, name) in enumerate(rows):  # a parent is listed after its children
        parent = next((n for d, n in rows[i + 1 :] if d < depth), "<entry>")
        parents.setdefault(name, parent)
    return parents


def outside(names: dict[str, str], allowed: frozenset[str]) -> list[str]:
    """Modules neither allowed (by full name, or for the lifecycle list by top-level
    package) nor agent_hooks' own, each with the module that imported it."""

    def ok(name: str) -> bool:
        top = name.split(".")[0]
        return (
            name in allowed
            or top == "agent_hooks"
            or (allowed is LIFECYCLE_ALLOWLIST and top in allowed)
        )

    return sorted(f"{n} (imported by {names[n]})" for n in names if not ok(n))


def test_the_allowlists_hold_what_the_house_rules_say() -> None:
    assert not HOT_ALLOWLIST & FORBIDDEN_ON_HOT_PATH
    assert not LIFECYCLE_ALLOWLIST & NEVER_IN_A_HOOK


def test_startup_set_matches_this_interpreter() -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if "|" in ln} - {
        "imported package"
    }
    assert names <= STARTUP, sorted(names - STARTUP)


# --- project conditions ---------------------------------------------------------------


def _reserve(run_hook: HookRunner, agent: str, text: str) -> None:
    outcome = reservation_store.reserve(
        Repo(str(run_hook.project), identity.state_dir({"HOME": str(run_hook.home)})),
        Writer(agent, None),
        [(text, pattern.compile(text))],
        time.time(),
        reason="imports-1",
        ttl=3600,
        shared=False,
        keep=True,
    )
    assert outcome.changed and not outcome.conflicts


def _strict(run_hook: HookRunner) -> None:
    state_dir = identity.state_dir({"HOME": str(run_hook.home)})
    reservation_store.set_strict(Repo(str(run_hook.project), state_dir), True, time.time())


def _work_session(run_hook: HookRunner) -> None:
    doc = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", time.time())
    store = work_session_store.Store(str(run_hook.project / ".claude" / "sessions"))
    store.start(doc, time.time(), close_active=False)


def _shared(run_hook: HookRunner) -> None:
    """The ledger shared through a git remote, another machine leasing a.txt and
    holding src/** (its view as the last sync left it), the sync not due."""
    from agent_hooks.ledger import ledger_location, remote_view

    now = time.time()
    state_dir = identity.state_dir({"HOME": str(run_hook.home)})
    reservation_store.set_setting(Repo(str(run_hook.project), state_dir), "remote", "origin", now)
    ledger = ledger_location.directory(state_dir, str(run_hook.project))
    lease = {"writer": "x", "agent": "x", "machine": "other", "worktree": "other:/w",
             "written": now, "expires": now + 600}  # fmt: skip
    header = {"synced_at": now, "ok": True, "host": "me", "hosts": {"other": (now, 10)}}
    view = remote_view.encode(header, {"a.txt": [lease], "b.txt": [lease]})
    Path(ledger, remote_view.VIEW).write_bytes(view)
    remote_view.touch_stamp(ledger, now)


CONDITIONS: dict[str, Callable[[HookRunner], None]] = {
    "no reservations": lambda run_hook: None,
    "another agent holds the target": lambda run_hook: _reserve(run_hook, OTHER, "a.txt"),
    "another agent holds elsewhere": lambda run_hook: _reserve(run_hook, OTHER, "src/**"),
    "another agent holds a glob, not the target": lambda run_hook: _reserve(
        run_hook, OTHER, "*.md"
    ),
    "own reservation": lambda run_hook: _reserve(run_hook, ME, "**"),
    "strict mode": _strict,
    "active work session": _work_session,
    "ledger shared with other machines": _shared,
}

# (event, fixture, payload changes): every tool the installed matchers send to a hot hook.
HOT_CALLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "PreToolUse Write": ("PreToolUse", "PreToolUse_Write", {}),
    "PreToolUse Edit": ("PreToolUse", "PreToolUse_Edit", {}),
    "PreToolUse NotebookEdit": (
        "PreToolUse",
        "PreToolUse_Edit",
        {"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "a.txt", "new_source": "x"}},
    ),
    "PreToolUse Bash writing": ("PreToolUse", "PreToolUse_Bash", {}),
    "PreToolUse Bash reading": (
        "PreToolUse",
        "PreToolUse_Bash",
        {"tool_input": {"command": "git status && ls -la"}},
    ),
    "PreToolUse Read": ("PreToolUse", "PreToolUse_Read", {}),
    "PreToolUse Write in a subagent": ("PreToolUse", "PreToolUse_Write_in_subagent", {}),
    "PostToolUse Write": ("PostToolUse", "PostToolUse_Write", {}),
    "PostToolUse Edit": ("PostToolUse", "PostToolUse_Edit", {}),
    "PostToolUse Read": ("PostToolUse", "PostToolUse_Read", {}),
    "PostToolUse Bash": ("PostToolUse", "PostToolUse_Bash", {}),
    "PostToolUse Agent": ("PostToolUse", "PostToolUse_Agent", {}),
    "PostToolUse Write in a subagent": ("PostToolUse", "PostToolUse_Write_in_subagent", {}),
}


def _payload(run_hook: HookRunner, fixture: str, changes: dict[str, Any]) -> dict[str, Any]:
    payload = run_hook.payload(fixture)
    tool_input = changes.get("tool_input")
    if isinstance(tool_input, dict) and "notebook_path" in tool_input:
        changes = {
            **changes,
            "tool_input": {**tool_input, "notebook_path": str(run_hook.project / "a.txt")},
        }
    payload.update(changes)
    transcript = run_hook.home / "main.jsonl"
    shutil.copy(TRANSCRIPTS / "main-with-subagent.jsonl", transcript)
    payload["transcript_path"] = str(transcript)
    return payload


@pytest.mark.parametrize("condition", list(CONDITIONS))
@pytest.mark.parametrize("call", list(HOT_CALLS))
def test_every_hot_path_imports_only_builtins_and_agent_hooks(
    run_hook: HookRunner, call: str, condition: str
) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    (run_hook.project / "a.txt").write_text("alpha\nline two\n")
    (run_hook.project / "b.txt").write_text("hi\n")
    CONDITIONS[condition](run_hook)
    event, fixture, changes = HOT_CALLS[call]
    names = imported(run_hook, event, _payload(run_hook, fixture, changes))
    adapter = "pre_tool_use" if event == "PreToolUse" else "post_tool_use"
    assert f"agent_hooks.hooks.{adapter}" in names
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)


# (client, event, fixture, payload changes): every tool the installed Codex, Gemini CLI
# and Qwen Code matchers and the opencode plugin send to a hot hook.
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** End Patch\n"
CLIENT_HOT_CALLS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "codex PreToolUse apply_patch": (
        "codex",
        "PreToolUse",
        "codex/PreToolUse_apply_patch_patch_update",
        {"tool_input": {"command": PATCH}},
    ),
    "codex PreToolUse Bash writing": (
        "codex",
        "PreToolUse",
        "codex/PreToolUse_Bash_shell_write",
        {},
    ),
    "codex PreToolUse Bash heredoc patch": (
        "codex",
        "PreToolUse",
        "codex/PreToolUse_Bash_shell_heredoc_apply_patch",
        {"tool_input": {"command": f"apply_patch <<'EOF'\n{PATCH}EOF\n"}},
    ),
    "codex PostToolUse apply_patch": (
        "codex",
        "PostToolUse",
        "codex/PostToolUse_apply_patch_patch_update",
        {"tool_input": {"command": PATCH}},
    ),
    "codex PostToolUse Bash writing": (
        "codex",
        "PostToolUse",
        "codex/PostToolUse_Bash_shell_write",
        {},
    ),
    "codex PreToolUse in a subagent": (
        "codex",
        "PreToolUse",
        "codex/PreToolUse_apply_patch_subagent_patch_add_subagent",
        {},
    ),
    "gemini BeforeTool write_file": (
        "gemini",
        "BeforeTool",
        "gemini/BeforeTool_write_file",
        {"tool_input": {"file_path": "a.txt", "content": "x"}},
    ),
    "gemini BeforeTool replace": ("gemini", "BeforeTool", "gemini/BeforeTool_replace", {}),
    "gemini BeforeTool run_shell_command": (
        "gemini",
        "BeforeTool",
        "gemini/BeforeTool_run_shell_command",
        {},
    ),
    "gemini BeforeTool read_file": ("gemini", "BeforeTool", "gemini/BeforeTool_read_file", {}),
    "gemini AfterTool write_file": ("gemini", "AfterTool", "gemini/AfterTool_write_file", {}),
    "gemini AfterTool run_shell_command": (
        "gemini",
        "AfterTool",
        "gemini/AfterTool_run_shell_command",
        {},
    ),
    "opencode before write": (
        "opencode",
        "tool.execute.before",
        "opencode/tool.execute.before_write",
        {"tool_input": {"filePath": "a.txt", "content": "x"}},
    ),
    "opencode before apply_patch": (
        "opencode",
        "tool.execute.before",
        "opencode/tool.execute.before_apply_patch_add",
        {"tool_input": {"patchText": PATCH}},
    ),
    "opencode before bash": (
        "opencode",
        "tool.execute.before",
        "opencode/tool.execute.before_bash",
        {},
    ),
    "opencode before a subagent's write": (
        "opencode",
        "tool.execute.before",
        "opencode/tool.execute.before_write_subagent",
        {"tool_input": {"filePath": "b.txt", "content": "x"}},
    ),
    "opencode after edit": (
        "opencode",
        "tool.execute.after",
        "opencode/tool.execute.after_edit",
        {},
    ),
    "opencode after bash": (
        "opencode",
        "tool.execute.after",
        "opencode/tool.execute.after_bash",
        {},
    ),
    "opencode after read": (
        "opencode",
        "tool.execute.after",
        "opencode/tool.execute.after_read",
        {},
    ),
    "opencode after task": (
        "opencode",
        "tool.execute.after",
        "opencode/tool.execute.after_task",
        {},
    ),
    "qwen PreToolUse write_file": (
        "qwen",
        "PreToolUse",
        "qwen/PreToolUse_write_file",
        {"tool_input": {"file_path": "a.txt", "content": "x"}},
    ),
    "qwen PreToolUse run_shell_command": (
        "qwen",
        "PreToolUse",
        "qwen/PreToolUse_run_shell_command",
        {"tool_input": {"command": "echo hi > b.txt"}},
    ),
    "qwen PostToolUse edit": ("qwen", "PostToolUse", "qwen/PostToolUse_edit", {}),
    "qwen PostToolUse run_shell_command": (
        "qwen",
        "PostToolUse",
        "qwen/PostToolUse_run_shell_command",
        {"tool_input": {"command": "echo hi > b.txt"}},
    ),
    "qwen PostToolUse agent": ("qwen", "PostToolUse", "qwen/PostToolUse_agent", {}),
}
START = {  # each client's session start: (event, fixture)
    "codex": ("SessionStart", "codex/SessionStart_startup"),
    "gemini": ("SessionStart", "gemini/SessionStart"),
    "opencode": ("session.created", "opencode/session.created"),
    "qwen": ("SessionStart", "qwen/SessionStart"),
}
PRE_EVENTS = ("PreToolUse", "BeforeTool", "tool.execute.before")


def _client_module(client: str) -> str:
    from agent_hooks.hooks import CLIENTS

    return f"agent_hooks.clients.{CLIENTS[client]}"


@pytest.mark.parametrize(
    "condition", ["no reservations", "another agent holds the target", "strict mode"]
)
@pytest.mark.parametrize("call", list(CLIENT_HOT_CALLS))
def test_every_hot_path_of_the_other_clients_imports_only_builtins_and_agent_hooks(
    run_hook: HookRunner, call: str, condition: str
) -> None:
    client, event, fixture, changes = CLIENT_HOT_CALLS[call]
    run_hook(*START[client], agent=ME, client=client)
    for name in ("a.txt", "b.txt", "new.txt", "existing.txt"):
        (run_hook.project / name).write_text("alpha\nline two\n")
    CONDITIONS[condition](run_hook)
    payload = run_hook.payload(fixture, **changes)
    names = imported(run_hook, event, payload, client)
    adapter = "pre_tool_use" if event in PRE_EVENTS else "post_tool_use"
    assert f"agent_hooks.hooks.{adapter}" in names
    assert _client_module(client) in names
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)


def test_a_write_into_a_workspace_stays_on_the_hot_path(run_hook: HookRunner) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    ws = workspace_store.create(str(run_hook.project), time.time())
    target = Path(ws.path) / "features" / "auth-context.md"
    target.parent.mkdir(parents=True)
    target.write_text("# Context: auth\n")
    payload = run_hook.payload("PostToolUse_Write")
    payload["tool_input"] = {"file_path": str(target), "content": "# Context: auth\n"}
    payload["tool_response"] = {"type": "create", "filePath": str(target)}
    names = imported(run_hook, "PostToolUse", payload)
    assert "agent_hooks.workspaces.workspace_events" in names  # the workspace path really ran
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)


def test_the_measurement_sees_lazy_imports(run_hook: HookRunner) -> None:
    """The control for the matrix: a Bash write among others' reservations loads the parser
    (a plain `echo x > f` only `shell.plain`), and a Bash write without them neither."""
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    payload = run_hook.payload("PreToolUse_Bash")
    quiet = imported(run_hook, "PreToolUse", payload)
    assert "agent_hooks.shell.writes" not in quiet
    assert "agent_hooks.shell.plain" not in quiet
    _reserve(run_hook, OTHER, "src/**")
    assert payload["tool_input"]["command"] == "echo hi > b.txt"
    plain = imported(run_hook, "PreToolUse", payload)
    assert "agent_hooks.shell.plain" in plain
    assert "agent_hooks.shell.writes" not in plain
    payload["tool_input"]["command"] = "sed -i s/a/b/ b.txt"
    busy = imported(run_hook, "PreToolUse", payload)
    assert "agent_hooks.shell.writes" in busy


def test_post_tool_use_really_ran(run_hook: HookRunner) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    (run_hook.project / "a.txt").write_text("alpha\n")
    imported(run_hook, "PostToolUse", run_hook.payload("PostToolUse_Write"))
    assert run_hook.state(ME)["files_created"] == [f"{run_hook.project}/a.txt"]


LIFECYCLE_CASES = [
    ("SessionStart", "SessionStart_startup"),
    ("SessionStart", "SessionStart_resume"),
    ("SessionStart", "SessionStart_compact"),
    ("PluginSessionStart", "SessionStart_startup"),  # the plugin form's (hooks/run)
    ("Stop", "Stop"),
    ("SessionEnd", "SessionEnd"),
    ("SubagentStart", "SubagentStart"),
    ("SubagentStop", "SubagentStop"),
]


@pytest.mark.parametrize(
    "condition",
    ["no reservations", "another agent holds elsewhere", "ledger shared with other machines"],
)
@pytest.mark.parametrize(
    ("event", "fixture"), LIFECYCLE_CASES, ids=[f"{e}-{f}" for e, f in LIFECYCLE_CASES]
)
def test_lifecycle_hooks_never_import_the_cli_or_heavy_packages(
    run_hook: HookRunner, event: str, fixture: str, condition: str
) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    CONDITIONS[condition](run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture))
    bad = outside(names, LIFECYCLE_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)
    assert not set(names) & NEVER_IN_A_HOOK
    assert not any(n == "agent_hooks.cli" or n.startswith("agent_hooks.cli.") for n in names)


CLIENT_LIFECYCLE_CASES = [
    ("codex", "SessionStart", "codex/SessionStart_startup"),
    ("codex", "SessionStart", "codex/SessionStart_resume_exec_resume"),
    ("codex", "SubagentStart", "codex/SubagentStart_default_subagent"),
    ("codex", "SubagentStop", "codex/SubagentStop_default_subagent"),
    ("codex", "Stop", "codex/Stop_final"),
    ("codex", "SessionEnd", "codex/SessionEnd_other"),
    ("gemini", "SessionStart", "gemini/SessionStart"),
    ("gemini", "AfterAgent", "gemini/AfterAgent"),
    ("gemini", "SessionEnd", "gemini/SessionEnd"),
    ("opencode", "session.created", "opencode/session.created"),
    ("opencode", "session.idle", "opencode/session.idle"),
    ("opencode", "dispose", "opencode/dispose"),
    ("opencode", "subagent.created", "opencode/subagent.created"),
    ("opencode", "subagent.idle", "opencode/subagent.idle"),
    ("qwen", "SessionStart", "qwen/SessionStart"),
    ("qwen", "SubagentStart", "qwen/SubagentStart"),
    ("qwen", "SubagentStop", "qwen/SubagentStop"),
    ("qwen", "Stop", "qwen/Stop"),
]


@pytest.mark.parametrize("condition", ["no reservations", "active work session"])
@pytest.mark.parametrize(
    ("client", "event", "fixture"),
    CLIENT_LIFECYCLE_CASES,
    ids=[f"{c}-{e}-{f.partition('/')[2]}" for c, e, f in CLIENT_LIFECYCLE_CASES],
)
def test_the_other_clients_lifecycle_hooks_never_import_the_cli_or_heavy_packages(
    run_hook: HookRunner, client: str, event: str, fixture: str, condition: str
) -> None:
    CONDITIONS[condition](run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture), client)
    assert _client_module(client) in names
    bad = outside(names, LIFECYCLE_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)
    assert not set(names) & NEVER_IN_A_HOOK
    assert not any(n == "agent_hooks.cli" or n.startswith("agent_hooks.cli.") for n in names)


def test_entry_script_is_small_and_uses_no_os() -> None:
    text = Path(ENTRY).read_text()
    assert "import os" not in text and "import json" not in text


# Run the entry script as the hook runs it, and before the process ends name each
# agent_hooks module the import system loaded (its spec has `_initializing`, which only
# the import system sets) rather than agent_hooks.preload.
IMPORT_SYSTEM_PROBE = """
import posix, sys
_real_exit = posix._exit
def _exit(code):
    names = sorted(
        name for name, module in list(sys.modules.items())
        if name.startswith("agent_hooks.")
        and hasattr(getattr(module, "__spec__", None), "_initializing")
    )
    sys.stderr.write("IMPORT-SYSTEM " + " ".join(names) + "\\n")
    sys.stderr.flush()
    _real_exit(code)
posix._exit = _exit
entry = sys.argv.pop(1)
sys.argv[0] = entry
exec(compile(open(entry).read(), entry, "exec"), {"__file__": entry, "__name__": "__main__"})
"""


@pytest.mark.parametrize(
    "condition",
    [
        "no reservations",
        "another agent holds elsewhere",
        "another agent holds a glob, not the target",
        "own reservation",
    ],
)
@pytest.mark.parametrize(
    "call", ["PreToolUse Write", "PreToolUse Bash writing", "PostToolUse Write", "PostToolUse Bash"]
)
def test_a_hot_path_loads_its_modules_through_preload(
    run_hook: HookRunner, call: str, condition: str
) -> None:
    """The common hot paths (an edit or a shell write, allowed) load every agent_hooks
    module from cached bytecode through `agent_hooks.preload`, not the import system
    (~0.15 M instructions more a module): a lazy import that is not preloaded first
    shows here. Only `agent_hooks.hooks`, which the entry script imports, comes the
    ordinary way."""
    context_of(run_hook("SessionStart", "SessionStart_startup", agent=ME))
    (run_hook.project / "a.txt").write_text("alpha\nline two\n")
    (run_hook.project / "b.txt").write_text("hi\n")
    CONDITIONS[condition](run_hook)
    event, fixture, changes = HOT_CALLS[call]
    payload = json.dumps(_payload(run_hook, fixture, changes)).encode()
    ledger = ledger_location.directory(
        identity.state_dir({"HOME": str(run_hook.home)}), str(run_hook.project)
    )
    for _ in range(2):  # the first run may write pyc files; the second is the one judged
        for leased in Path(ledger, "leases").glob("*"):
            leased.unlink()  # each run takes its leases (a writer's first edit of a file)
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", IMPORT_SYSTEM_PROBE, ENTRY, event],
            input=payload,
            capture_output=True,
            env=run_hook.env(ME),
            cwd=run_hook.project,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
    line = [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("IMPORT-SYSTEM")]
    assert line, proc.stderr
    assert line[0].split()[1:] == ["agent_hooks.hooks"]
