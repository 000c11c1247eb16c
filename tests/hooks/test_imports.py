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
STARTUP = frozenset({
    "_io", "io", "abc", "_abc", "marshal", "posix", "time", "_signal", "zipimport", "_codecs",
    "codecs", "encodings", "encodings.aliases", "encodings.utf_8", "_frozen_importlib_external",
})
# Built-in modules the hot path may import (no file to load), plus `__future__`, which
# every module's `from __future__ import annotations` loads.
HOT_BUILTINS = frozenset({"posix", "sys", "time", "marshal", "errno", "_signal", "_json", "__future__"})
HOT_ALLOWLIST = STARTUP | HOT_BUILTINS

# The lifecycle hooks (SessionStart, Stop, SessionEnd) may use the light standard library.
LIFECYCLE_ALLOWLIST = HOT_ALLOWLIST | frozenset({
    "os", "posixpath", "genericpath", "stat", "_stat", "_collections_abc", "typing", "_typing",
    "collections", "collections.abc", "_collections", "functools", "_functools", "operator",
    "_operator", "itertools", "keyword", "reprlib", "types", "contextlib", "copyreg", "enum",
    "warnings", "re", "re._casefix", "re._compiler", "re._constants", "re._parser", "_sre",
    "json", "json.decoder", "json.scanner", "json.encoder", "pwd",
})

FORBIDDEN_ON_HOT_PATH = frozenset({
    "os", "posixpath", "typing", "re", "json", "click", "orjson", "pathspec", "filelock", "zlib",
    "collections", "functools", "subprocess", "pathlib", "dataclasses", "enum", "hashlib",
    "_collections_abc", "fcntl",
})
NEVER_IN_A_HOOK = frozenset({"click", "orjson", "pathspec", "filelock", "subprocess"})


def imported(run_hook: HookRunner, event: str, payload: dict[str, Any], agent: str = "proj__cc_1") -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", ENTRY, event],
        input=json.dumps(payload).encode(), capture_output=True, env=run_hook.env(agent),
        cwd=run_hook.project, timeout=60,
    )
    assert proc.returncode == 0
    names = set()
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
        elif line.strip():
            raise AssertionError(f"{event} wrote to stderr: {line}")
    assert run_hook.log_lines() == [], run_hook.log_lines()  # the realistic path ran, no failure
    return names


def outside(names: set[str], allowed: frozenset[str]) -> list[str]:
    return sorted(n for n in names if n not in allowed and n.split(".")[0] != "agent_hooks")


def test_the_allowlists_hold_what_the_house_rules_say() -> None:
    assert not HOT_ALLOWLIST & FORBIDDEN_ON_HOT_PATH
    assert not LIFECYCLE_ALLOWLIST & NEVER_IN_A_HOOK


def test_startup_set_matches_this_interpreter() -> None:
    proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"],
                          capture_output=True, text=True, check=True)
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if "|" in ln} - {
        "imported package"}
    assert names <= STARTUP, sorted(names - STARTUP)


def _session(run_hook: HookRunner) -> None:
    context_of(run_hook("SessionStart", "SessionStart_startup"))
    (run_hook.project / "a.txt").write_text("alpha\nline two\n")


HOT_CASES = [
    ("PreToolUse", "PreToolUse_Write"), ("PreToolUse", "PreToolUse_Edit"),
    ("PreToolUse", "PreToolUse_Bash"), ("PreToolUse", "PreToolUse_Read"),
    ("PostToolUse", "PostToolUse_Write"), ("PostToolUse", "PostToolUse_Edit"),
    ("PostToolUse", "PostToolUse_Read"), ("PostToolUse", "PostToolUse_Bash"),
]


@pytest.mark.parametrize(("event", "fixture"), HOT_CASES, ids=[f for _, f in HOT_CASES])
def test_hot_path_imports_only_builtins_and_agent_hooks(run_hook: HookRunner, event: str, fixture: str) -> None:
    _session(run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture))
    assert f"agent_hooks.hooks.{'pre' if event == 'PreToolUse' else 'post'}_tool_use" in names
    assert outside(names, HOT_ALLOWLIST) == []
    assert "agent_hooks.cli" not in names


def test_post_tool_use_really_ran(run_hook: HookRunner) -> None:
    _session(run_hook)
    imported(run_hook, "PostToolUse", run_hook.payload("PostToolUse_Write"))
    assert run_hook.state()["files_created"] == [f"{run_hook.project}/a.txt"]


LIFECYCLE_CASES = [
    ("SessionStart", "SessionStart_startup"), ("SessionStart", "SessionStart_resume"),
    ("SessionStart", "SessionStart_compact"), ("Stop", "Stop"), ("SessionEnd", "SessionEnd"),
]


@pytest.mark.parametrize(("event", "fixture"), LIFECYCLE_CASES, ids=[f for _, f in LIFECYCLE_CASES])
def test_lifecycle_hooks_never_import_the_cli_or_heavy_packages(
    run_hook: HookRunner, event: str, fixture: str
) -> None:
    _session(run_hook)
    names = imported(run_hook, event, run_hook.payload(fixture))
    assert outside(names, LIFECYCLE_ALLOWLIST) == []
    assert not any(n == "agent_hooks.cli" or n.startswith("agent_hooks.cli.") for n in names)


def _reserve(run_hook: HookRunner, agent: str, pattern: str) -> None:
    from click.testing import CliRunner

    from agent_hooks.cli import main
    from agent_hooks.cli._common import Env

    env = Env(environ={"HOME": str(run_hook.home), "AGENT_NAME": agent}, now=time.time())
    result = CliRunner().invoke(main, ["reserve", pattern, "--project", str(run_hook.project)], obj=env)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("holder", [None, "proj__cc_1"], ids=["no reservations", "only my own"])
def test_pre_tool_use_bash_skips_the_bash_parser_unless_someone_else_holds(
    run_hook: HookRunner, holder: str | None
) -> None:
    _session(run_hook)
    if holder is not None:
        _reserve(run_hook, holder, "src/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Bash"))
    assert "agent_hooks.bash_writes" not in names and "agent_hooks.bash_lexer" not in names


def test_pre_tool_use_bash_parses_when_another_agent_holds_something(run_hook: HookRunner) -> None:
    """The control for the test above: the measurement does see a lazy import."""
    _session(run_hook)
    _reserve(run_hook, "proj__cc_2", "src/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Bash"))
    assert "agent_hooks.bash_writes" in names
    assert outside(names, HOT_ALLOWLIST) == []


def test_pre_tool_use_edit_with_reservations_stays_on_builtins(run_hook: HookRunner) -> None:
    _session(run_hook)
    _reserve(run_hook, "proj__cc_2", "docs/**")
    names = imported(run_hook, "PreToolUse", run_hook.payload("PreToolUse_Edit"))
    assert outside(names, HOT_ALLOWLIST) == []


def test_entry_script_is_small_and_uses_no_os(tmp_path: Path) -> None:
    text = Path(ENTRY).read_text()
    assert "import os" not in text and "import json" not in text
