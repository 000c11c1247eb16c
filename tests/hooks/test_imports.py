"""What each hook imports, measured with `python -I -S -X importtime hooks/entry.py <Event>`.

PreToolUse and PostToolUse start on every tool call of every agent, so they may load
only built-in modules and agent_hooks' own (docs/adr/0005-hot-path-budget.md); the
lifecycle hooks may use the standard library but never the CLI's heavy packages.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ENTRY, HookRunner, context_of

# What `python -I -S` itself loads before any code runs (checked below).
STARTUP = frozenset(
    {
        "_io",
        "io",
        "abc",
        "_abc",
        "marshal",
        "posix",
        "time",
        "_signal",
        "zipimport",
        "_codecs",
        "codecs",
        "encodings",
        "encodings.aliases",
        "encodings.utf_8",
        "_frozen_importlib_external",
    }
)
# Built-in modules the hot path may import (no file to load), plus `__future__`, which
# every module's `from __future__ import annotations` loads.
HOT_BUILTINS = frozenset(
    {"posix", "sys", "time", "marshal", "errno", "_signal", "_json", "__future__"}
)
HOT_ALLOWLIST = STARTUP | HOT_BUILTINS

# The lifecycle hooks (SessionStart, Stop, SessionEnd, SubagentStart/Stop) may import what
# they like from the standard library, never the CLI, and no third-party package in these
# cases (click, orjson, pathspec, filelock cost 40-55 ms each). The one exception by design
# (ADR-0012): pathspec at a resume/compact whose files changed, to classify critical files.
LIFECYCLE_ALLOWLIST = HOT_ALLOWLIST | frozenset(sys.stdlib_module_names)

FORBIDDEN_ON_HOT_PATH = frozenset(
    {
        "os",
        "posixpath",
        "typing",
        "re",
        "json",
        "click",
        "orjson",
        "pathspec",
        "filelock",
        "zlib",
        "collections",
        "functools",
        "subprocess",
        "pathlib",
        "dataclasses",
        "enum",
        "hashlib",
        "_collections_abc",
        "fcntl",
    }
)
NEVER_IN_A_HOOK = frozenset({"click", "orjson", "pathspec", "filelock"})


def imported(
    run_hook: HookRunner, event: str, payload: dict[str, Any], agent: str = "proj__cc_1"
) -> dict[str, str]:
    """Every module the hook imported, mapped to the module that imported it."""
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", ENTRY, event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=run_hook.env(agent),
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
    assert run_hook.log_lines() == [], run_hook.log_lines()  # the realistic path ran, no failure
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


def _session(run_hook: HookRunner) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup"))
    (run_hook.project / "a.txt").write_text("alpha\nline two\n")


HOT_CASES = [
    ("PreToolUse", "PreToolUse_Write"),
    ("PreToolUse", "PreToolUse_Edit"),
    ("PreToolUse", "PreToolUse_Bash"),
    ("PreToolUse", "PreToolUse_Read"),
    ("PostToolUse", "PostToolUse_Write"),
    ("PostToolUse", "PostToolUse_Edit"),
    ("PostToolUse", "PostToolUse_Read"),
    ("PostToolUse", "PostToolUse_Bash"),
]


@pytest.mark.parametrize(("event", "fixture"), HOT_CASES, ids=[f for _, f in HOT_CASES])
def test_hot_path_imports_only_builtins_and_agent_hooks(
    run_hook: HookRunner, event: str, fixture: str
) -> None:
    _session(run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture))
    assert f"agent_hooks.hooks.{'pre' if event == 'PreToolUse' else 'post'}_tool_use" in names
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)
    assert "agent_hooks.cli" not in names


def test_post_tool_use_really_ran(run_hook: HookRunner) -> None:
    _session(run_hook)
    imported(run_hook, "PostToolUse", run_hook.payload("PostToolUse_Write"))
    assert run_hook.state()["files_created"] == [f"{run_hook.project}/a.txt"]


LIFECYCLE_CASES = [
    ("SessionStart", "SessionStart_startup"),
    ("SessionStart", "SessionStart_resume"),
    ("SessionStart", "SessionStart_compact"),
    ("Stop", "Stop"),
    ("SessionEnd", "SessionEnd"),
    ("SubagentStart", "SubagentStart"),
    ("SubagentStop", "SubagentStop"),
]


@pytest.mark.parametrize(("event", "fixture"), LIFECYCLE_CASES, ids=[f for _, f in LIFECYCLE_CASES])
def test_lifecycle_hooks_never_import_the_cli_or_heavy_packages(
    run_hook: HookRunner, event: str, fixture: str
) -> None:
    _session(run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture))
    bad = outside(names, LIFECYCLE_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)
    assert not set(names) & NEVER_IN_A_HOOK
    assert not any(n == "agent_hooks.cli" or n.startswith("agent_hooks.cli.") for n in names)


def _reserve(run_hook: HookRunner, agent: str, pattern: str) -> None:
    from click.testing import CliRunner

    from agent_hooks.cli import main
    from agent_hooks.cli._common import Env

    env = Env(environ={"HOME": str(run_hook.home), "AGENT_NAME": agent}, now=time.time())
    result = CliRunner().invoke(
        main, ["reserve", pattern, "--project", str(run_hook.project)], obj=env
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("holder", [None, "proj__cc_1"], ids=["no reservations", "only my own"])
def test_pre_tool_use_bash_skips_the_bash_parser_unless_someone_else_holds(
    run_hook: HookRunner, holder: str | None
) -> None:
    _session(run_hook)
    if holder is not None:
        _reserve(run_hook, holder, "src/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Bash"))
    assert (
        "agent_hooks.reservations.bash.writes" not in names
        and "agent_hooks.reservations.bash.lexer" not in names
    )


def test_pre_tool_use_bash_parses_when_another_agent_holds_something(run_hook: HookRunner) -> None:
    """The control for the test above: the measurement does see a lazy import."""
    _session(run_hook)
    _reserve(run_hook, "proj__cc_2", "src/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Bash"))
    assert "agent_hooks.reservations.bash.writes" in names
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)


def test_pre_tool_use_edit_with_reservations_stays_on_builtins(run_hook: HookRunner) -> None:
    _session(run_hook)
    _reserve(run_hook, "proj__cc_2", "docs/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Edit"))
    bad = outside(names, HOT_ALLOWLIST)
    assert not bad, "imports outside the allowlist: " + "; ".join(bad)


def test_entry_script_is_small_and_uses_no_os(tmp_path: Path) -> None:
    text = Path(ENTRY).read_text()
    assert "import os" not in text and "import json" not in text
