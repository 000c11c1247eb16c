"""PreToolUse enforces reservations, through the real entry script (hooks/entry.py)
with the captured reference payloads rewritten into a temp project.

Alice (another agent) holds `src/**` and `lib/core/**` exclusively; Bob (the agent
running the hook) tries to edit. Reservations are made through the store with the
real clock, because the hook reads the real clock.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent_hooks.cli import main as cli_main
from agent_hooks.cli._common import Env
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.repository import WORKSPACES_DIR
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import ENTRY, HookResult, HookRunner, context_of, failures

ALICE = "alice"
BOB = "bob"
HOUR = 3600


def reserve(
    run_hook: HookRunner,
    agent: str | None,
    *patterns: str,
    reason: str = "farmhand-42",
    shared: bool = False,
    ttl: int = HOUR,
    now: float | None = None,
) -> None:
    out = reservation_store.reserve(
        Repo(str(run_hook.project), str(run_hook.state_dir)),
        Writer(agent, None),
        [(p, pattern.compile(p)) for p in patterns],
        time.time() if now is None else now,
        reason=reason,
        ttl=ttl,
        shared=shared,
        keep=False,
    )
    assert out.conflicts == [], out.conflicts


@pytest.fixture
def proj(project: Path) -> Path:
    for rel in (
        "README.md",
        "src/app.py",
        "src/util.py",
        "lib/core/engine.py",
        "docs/notes.md",
        "notebooks/analysis.ipynb",
    ):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
    return project


@pytest.fixture
def held(run_hook: HookRunner, proj: Path) -> HookRunner:
    """Alice holds src/** (reason farmhand-42) and lib/core/** exclusively."""
    reserve(run_hook, ALICE, "src/**")
    reserve(run_hook, ALICE, "lib/core/**", reason="PROJ-7")
    return run_hook


def edit(
    run_hook: HookRunner,
    tool: str,
    path: str,
    agent: str | None = BOB,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> HookResult:
    """A PreToolUse for `tool` on `path`, from the captured payload of that tool."""
    if tool in ("Write", "Edit"):
        payload = run_hook.payload(f"PreToolUse_{tool}")
        payload["tool_input"]["file_path"] = path
    else:
        payload = run_hook.payload("PreToolUse_Edit", tool_name=tool)
        if tool == "NotebookEdit":
            payload["tool_input"] = {
                "notebook_path": path,
                "new_source": "print(1)",
                "cell_id": "c1",
                "cell_type": "code",
                "edit_mode": "replace",
            }
        else:  # MultiEdit, which older clients had
            payload["tool_input"] = {
                "file_path": path,
                "edits": [
                    {"old_string": "a", "new_string": "b"},
                    {"old_string": "c", "new_string": "d"},
                ],
            }
    if cwd is not None:
        payload["cwd"] = cwd
    return run_hook("PreToolUse", payload, agent=agent, env=env)


def bash(
    run_hook: HookRunner,
    command: str,
    agent: str | None = BOB,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> HookResult:
    payload = run_hook.payload("PreToolUse_Bash")
    payload["tool_input"]["command"] = command
    if cwd is not None:
        payload["cwd"] = cwd
    return run_hook("PreToolUse", payload, agent=agent, env=env)


def denial(result: HookResult) -> str:
    assert result.code == 0, result.err
    assert isinstance(result.out, dict), f"expected a deny, got {result.out!r} {result.err}"
    specific = result.out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    reason: str = specific["permissionDecisionReason"]
    return reason


def allowed(result: HookResult) -> bool:
    """A clean allow (no output), not a crash or a failure that failed open."""
    assert result.code == 0, result.err
    assert failures(result) == [], failures(result)
    return result.out is None


def assert_names_holder_and_choices(reason: str, pattern_text: str, why: str) -> None:
    assert f'agent "{ALICE}" holds {pattern_text} (exclusive, reason: {why}, ' in reason
    assert re.search(r"\b(59|60) min left\b", reason), reason
    assert "- work on other files or another part of the task" in reason
    assert "`agent-hooks reservations`" in reason
    assert re.search(r"wait: .*\(in (59|60) min\)", reason), reason
    assert "- if this file must change now, stop and ask the user how to proceed." in reason
    assert "ask the holder" not in reason  # a holder the model has no way to reach
    for bypass in ("AGENT_HOOKS_ENFORCE", "AGENT_HOOKS_GUARD", "--no-verify"):
        assert bypass not in reason  # never offered to the model (docs/adr/0017)


# --- Write / Edit / NotebookEdit / MultiEdit ------------------------------------------


@pytest.mark.parametrize(
    ("tool", "rel"),
    [
        ("Write", "src/app.py"),
        ("Write", "src/new/module.py"),
        ("Edit", "src/app.py"),
        ("NotebookEdit", "src/analysis.ipynb"),
        ("MultiEdit", "src/util.py"),
        ("Edit", "lib/core/engine.py"),
    ],
)
def test_another_agents_exclusive_reservation_denies_edits(
    held: HookRunner, tool: str, rel: str
) -> None:
    reason = denial(edit(held, tool, str(held.project / rel)))
    assert reason.startswith(f"agent-hooks: {rel} is reserved by another agent")
    if rel.startswith("src/"):
        assert_names_holder_and_choices(reason, "src/**", "farmhand-42")
    else:
        assert_names_holder_and_choices(reason, "lib/core/**", "PROJ-7")
    logged = f"denied {tool}: agent-hooks: {rel} is reserved"
    assert any(logged in line for line in held.log_lines())


@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit", "MultiEdit"])
def test_the_holders_own_edit_passes(held: HookRunner, tool: str) -> None:
    assert allowed(edit(held, tool, str(held.project / "src/app.py"), agent=ALICE))


@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit", "MultiEdit"])
def test_unreserved_paths_pass(held: HookRunner, tool: str) -> None:
    for rel in (
        "docs/notes.md",
        "README.md",
        "notebooks/analysis.ipynb",
        "srcx/a.py",
        "lib/other.py",
    ):
        assert allowed(edit(held, tool, str(held.project / rel))), rel


def test_every_covering_reservation_is_named(run_hook: HookRunner, proj: Path) -> None:
    reserve(run_hook, ALICE, "src/**")
    reserve(run_hook, ALICE, "src/app.py", reason="bd-a1b2")
    reserve(run_hook, ALICE, "docs/**", reason="PROJ-9")
    reason = denial(edit(run_hook, "Write", str(proj / "src/app.py")))
    assert 'agent "alice" holds src/** (exclusive, reason: farmhand-42' in reason
    assert 'agent "alice" holds src/app.py (exclusive, reason: bd-a1b2' in reason
    assert "docs/**" not in reason


def test_patterns_starting_with_a_wildcard_are_enforced(run_hook: HookRunner, proj: Path) -> None:
    reserve(run_hook, ALICE, "*.toml", "**/*.md", "[dl]*/core/")
    for rel, denied in [
        ("pyproject.toml", True),
        ("sub/pyproject.toml", False),
        ("docs/notes.md", True),
        ("README.md", True),
        ("src/app.py", False),
        ("lib/core/engine.py", True),
        ("lib/other/engine.py", False),
    ]:
        result = edit(run_hook, "Write", str(proj / rel))
        assert allowed(result) is not denied, rel
    assert 'agent "alice" holds **/*.md' in denial(edit(run_hook, "Edit", str(proj / "a/b/c.md")))


def test_shared_reservation_does_not_block(run_hook: HookRunner, proj: Path) -> None:
    reserve(run_hook, ALICE, "src/**", shared=True)
    assert allowed(edit(run_hook, "Write", str(proj / "src/app.py")))
    assert allowed(bash(run_hook, "echo x > src/app.py"))


def test_expired_reservation_does_not_block(run_hook: HookRunner, proj: Path) -> None:
    reserve(run_hook, ALICE, "src/**", now=time.time() - 2 * HOUR)
    assert allowed(edit(run_hook, "Write", str(proj / "src/app.py")))
    assert allowed(bash(run_hook, "echo x > src/app.py"))


def test_released_reservation_stops_blocking_at_once(held: HookRunner) -> None:
    target = str(held.project / "src/app.py")
    denial(edit(held, "Edit", target))
    reservation_store.release(
        Repo(str(held.project), str(held.state_dir)),
        Writer(ALICE, None),
        time.time(),
        patterns=["src/**"],
    )
    assert allowed(edit(held, "Edit", target))
    denial(edit(held, "Edit", str(held.project / "lib/core/engine.py")))


def test_path_outside_the_project_passes(held: HookRunner, tmp_path: Path) -> None:
    reserve(held, ALICE, "**", reason="everything")
    outside = tmp_path / "elsewhere" / "src" / "app.py"
    outside.parent.mkdir(parents=True)
    assert allowed(edit(held, "Write", str(outside)))
    assert allowed(edit(held, "Write", "/dev/null"))
    denial(edit(held, "Write", str(held.project / "anything.txt")))  # control


def test_symlink_inside_the_project_to_a_reserved_file_is_denied(held: HookRunner) -> None:
    project = held.project
    (project / "link.py").symlink_to(project / "src" / "app.py")
    (project / "alias").symlink_to(project / "src", target_is_directory=True)
    reason = denial(edit(held, "Edit", str(project / "link.py")))
    assert reason.startswith("agent-hooks: src/app.py is reserved")
    reason = denial(edit(held, "Write", str(project / "alias" / "brand_new.py")))
    assert reason.startswith("agent-hooks: src/brand_new.py is reserved")


def test_symlink_outside_the_project_to_a_reserved_file_is_denied(
    held: HookRunner, tmp_path: Path
) -> None:
    link = tmp_path / "outside-link.py"
    link.symlink_to(held.project / "src" / "app.py")
    denial(edit(held, "Write", str(link)))


def test_dotdot_in_the_target_is_resolved(held: HookRunner) -> None:
    project = held.project
    reason = denial(edit(held, "Write", f"{project}/docs/../src/app.py"))
    assert reason.startswith("agent-hooks: src/app.py is reserved")
    denial(edit(held, "Edit", f"{project}/src/./new/../util.py"))
    assert allowed(edit(held, "Write", f"{project}/src/../docs/notes.md"))


def test_relative_target_is_resolved_against_the_payload_cwd(held: HookRunner) -> None:
    denial(edit(held, "Write", "app.py", cwd=str(held.project / "src")))
    assert allowed(edit(held, "Write", "app.py", cwd=str(held.project / "docs")))


def test_a_file_of_another_project_is_checked_against_that_projects_reservations(
    run_hook: HookRunner, proj: Path, tmp_path: Path
) -> None:
    """bob works in `proj`; alice holds `src/**` in `other`: bob cannot walk around it."""
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "src").mkdir()
    out = reservation_store.reserve(
        Repo(os.path.realpath(other), str(run_hook.state_dir)),
        Writer(ALICE, None),
        [("src/**", pattern.compile("src/**"))],
        time.time(),
        reason="farmhand-42",
        ttl=HOUR,
        shared=False,
        keep=False,
    )
    assert out.conflicts == []
    reason = denial(edit(run_hook, "Write", str(other / "src" / "x.py")))
    assert reason.startswith("agent-hooks: src/x.py is reserved by another agent")
    assert allowed(edit(run_hook, "Write", str(proj / "src" / "x.py")))  # same path, other project


# --- reads -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PreToolUse_Read", "PreToolUse_Glob", "PreToolUse_Grep"])
def test_reads_are_never_blocked(held: HookRunner, name: str) -> None:
    payload = held.payload(name)
    if "file_path" in payload["tool_input"]:
        payload["tool_input"]["file_path"] = str(held.project / "src/app.py")
    else:
        payload["tool_input"]["path"] = str(held.project / "src")
    assert allowed(held("PreToolUse", payload, agent=BOB))
    assert allowed(held("PreToolUse", payload, agent=BOB, env={"AGENT_HOOKS_STRICT": "1"}))


# --- strict mode -----------------------------------------------------------------------


def cli(run_hook: HookRunner, agent: str, *args: str) -> Any:
    env = Env(
        environ={
            "HOME": str(run_hook.home),
            "AGENT_NAME": agent,
            "CLAUDE_PROJECT_DIR": str(run_hook.project),
        }
    )
    return CliRunner().invoke(cli_main, list(args), obj=env)


def test_strict_env_denies_unreserved_edit_with_the_exact_reserve_command(
    run_hook: HookRunner, proj: Path
) -> None:
    strict = {"AGENT_HOOKS_STRICT": "1"}
    target = proj / "docs" / "it's here.md"
    reason = denial(edit(run_hook, "Write", str(target), env=strict))
    assert reason.startswith(
        "agent-hooks (strict mode): you hold no reservation covering docs/it's here.md"
    )
    lines = [line.strip() for line in reason.splitlines()]
    [command] = [line for line in lines if line.startswith("agent-hooks reserve")]
    assert command == "agent-hooks reserve 'docs/it'\\''s here.md' --reason <issue-id>"
    argv = shlex.split(command.replace("<issue-id>", "farmhand-42"))
    result = cli(run_hook, BOB, *argv[1:])
    assert result.exit_code == 0, result.output
    assert allowed(edit(run_hook, "Write", str(target), env=strict))
    # still needed for every other file
    denial(edit(run_hook, "Write", str(proj / "docs/notes.md"), env=strict))
    assert allowed(edit(run_hook, "Write", str(proj / "docs/notes.md")))  # strict off


def test_strict_project_setting_and_env_override(run_hook: HookRunner, proj: Path) -> None:
    target = str(proj / "src/app.py")
    assert allowed(edit(run_hook, "Write", target))
    result = cli(run_hook, BOB, "strict", "on")
    assert result.exit_code == 0 and "strict mode is on" in result.output
    reason = denial(edit(run_hook, "Write", target))
    assert "agent-hooks reserve 'src/app.py' --reason <issue-id>" in reason
    assert allowed(edit(run_hook, "Write", target, env={"AGENT_HOOKS_STRICT": "0"}))
    reserve(run_hook, BOB, "src/", shared=True)  # a shared reservation of one's own is enough
    assert allowed(edit(run_hook, "Write", target))
    # bob's shared hold blocks nobody; alice simply has no reservation of her own
    reason = denial(edit(run_hook, "Write", str(proj / "src/x.py"), agent=ALICE))
    assert reason.startswith("agent-hooks (strict mode): you hold no reservation covering src/x.py")
    # another agent's exclusive hold is reported as such, not as a strict-mode miss
    reserve(run_hook, "carol", "docs/**", reason="bd-a1b2")
    reason = denial(edit(run_hook, "Write", str(proj / "docs/notes.md")))
    assert reason.startswith("agent-hooks: docs/notes.md is reserved by another agent")
    assert cli(run_hook, BOB, "strict", "off").exit_code == 0
    assert allowed(edit(run_hook, "Write", str(proj / "README.md"), agent=ALICE))


def test_strict_mode_checks_bash_writes_too(run_hook: HookRunner, proj: Path) -> None:
    strict = {"AGENT_HOOKS_STRICT": "1"}
    reason = denial(bash(run_hook, "echo x > docs/notes.md", env=strict))
    assert "agent-hooks reserve 'docs/notes.md' --reason <issue-id>" in reason
    assert allowed(bash(run_hook, "cat docs/notes.md | wc -l", env=strict))
    reserve(run_hook, BOB, "docs/**")
    assert allowed(bash(run_hook, "echo x > docs/notes.md", env=strict))


def test_strict_mode_lets_an_agent_edit_workspace_files(run_hook: HookRunner, proj: Path) -> None:
    """Issue 18, defect 15: `agent-hooks context add` tells an agent (or its subagent) to
    edit its workspace's context file; strict mode does not ask it to reserve that file
    first. Other agents' reservations and other writers' leases there still refuse."""
    strict = {"AGENT_HOOKS_STRICT": "1"}
    workspace = f"{WORKSPACES_DIR}/20261123-101500-ab12"
    context = proj / workspace / "auth-context.md"
    context.parent.mkdir(parents=True)
    context.write_text("# auth\n")
    assert allowed(edit(run_hook, "Edit", str(context), env=strict))
    sub = run_hook.payload("PreToolUse_Write")
    sub["tool_input"]["file_path"] = str(proj / workspace / "parser-context.md")
    sub.update(agent_id="a4d71bd7a7301dabc", agent_type="general-purpose")
    assert allowed(run_hook("PreToolUse", sub, agent=BOB, env=strict))
    assert allowed(bash(run_hook, f"echo '- done' >> {workspace}/auth-context.md", env=strict))
    # the workspaces directory itself, and names that only start like it, are not exempt
    denial(bash(run_hook, f"rm -rf {WORKSPACES_DIR}", env=strict))
    denial(edit(run_hook, "Write", str(proj / ".tmp/sessions-old/x.md"), env=strict))
    # leases and other agents' reservations still apply
    assert "is being changed by" in denial(edit(run_hook, "Edit", str(context), agent=ALICE))
    reserve(run_hook, "carol", f"{workspace}/new.md")  # over no file a writer is changing
    reason = denial(edit(run_hook, "Write", str(proj / workspace / "new.md"), env=strict))
    assert reason.startswith(f"agent-hooks: {workspace}/new.md is reserved by another agent")


def test_strict_mode_leaves_paths_outside_the_project_alone(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    strict = {"AGENT_HOOKS_STRICT": "1"}
    assert allowed(edit(run_hook, "Write", str(tmp_path / "scratch.txt"), env=strict))


# --- the escape hatch -----------------------------------------------------------------


def test_enforce_off_allows_and_logs(held: HookRunner) -> None:
    off = {"AGENT_HOOKS_ENFORCE": "off"}
    assert allowed(edit(held, "Write", str(held.project / "src/app.py"), env=off))
    assert allowed(bash(held, "rm -rf lib/core", env=off))
    logged = [line for line in held.log_lines() if "AGENT_HOOKS_ENFORCE=off" in line]
    assert len(logged) == 2, held.log_lines()
    assert "allowed Write that would be denied: agent-hooks: src/app.py is reserved" in logged[0]
    assert "allowed Bash that would be denied" in logged[1]
    denial(edit(held, "Write", str(held.project / "src/app.py")))  # other agents: still enforced


def test_session_start_tells_the_model_about_reservations_and_the_escape_hatch(
    held: HookRunner,
) -> None:
    reserve(held, BOB, "docs/", shared=True)
    payload = held.payload("SessionStart_startup")
    text = context_of(held("SessionStart", payload, agent=BOB))
    assert (
        'Reservations held by other agents (do not edit these paths): agent "alice" holds '
        "src/** (exclusive, reason: farmhand-42, "
    ) in text
    assert "Your reservations: docs/ (shared, " in text
    assert "AGENT_HOOKS_ENFORCE" not in text and "Strict mode is on" not in text
    text = context_of(
        held(
            "SessionStart",
            payload,
            agent=BOB,
            env={"AGENT_HOOKS_ENFORCE": "off", "AGENT_HOOKS_STRICT": "1"},
        )
    )
    assert "Warning: AGENT_HOOKS_ENFORCE=off: reservations are NOT enforced for you" in text
    assert "Strict mode is on: every edit needs your own reservation covering the file." in text


# --- Bash -------------------------------------------------------------------------------

DENIED_BASH: list[tuple[str, str, str]] = [
    # (command, cwd relative to the project, the path the deny names)
    ("echo hi > src/app.py", "", "src/app.py"),
    ("echo hi >> src/app.py", "", "src/app.py"),
    ("make 2>&1 &> src/build.log", "", "src/build.log"),
    ("echo hi >| src/app.py", "", "src/app.py"),
    ("echo hi | tee src/log.txt", "", "src/log.txt"),
    ("tee -a src/app.py < README.md", "", "src/app.py"),
    ("cp README.md src/app.py", "", "src/app.py"),
    ("cp README.md src/", "", "src"),
    ("mv README.md src/new.py", "", "src/new.py"),
    ("mv src/app.py docs/", "", "src/app.py"),
    ("rm src/app.py", "", "src/app.py"),
    ("rm -rf lib", "", "lib"),
    ("rm -rf src/../lib/core", "", "lib/core"),
    ("sed -i 's/a/b/' src/*.py", "", "src/*.py"),
    ("sed -i.bak -e 's/a/b/' lib/*/engine.py", "", "lib/*/engine.py"),
    ("perl -pi -e 's/a/b/' src/app.py", "", "src/app.py"),
    ("git checkout -- src/app.py", "", "src/app.py"),
    ("git restore src/app.py", "", "src/app.py"),
    ("git rm -r src", "", "src"),
    ("touch src/new.py", "", "src/new.py"),
    ("mkdir -p src/newpkg", "", "src/newpkg"),
    ("ln -s ../README.md src/link.md", "", "src/link.md"),
    ("truncate -s 0 src/app.py", "", "src/app.py"),
    ("install -m 644 README.md src/app.py", "", "src/app.py"),
    ("make build && echo done > src/app.py", "", "src/app.py"),
    ("true || touch lib/core/new.py", "", "lib/core/new.py"),
    ("echo a; echo b > src/app.py", "", "src/app.py"),
    ("cat README.md | sort | tee src/sorted.txt > /dev/null", "", "src/sorted.txt"),
    ("(echo x > src/app.py)", "", "src/app.py"),
    ("{ echo a; echo b; } > src/app.py", "", "src/app.py"),
    ("cd src && echo x > app.py", "", "src/app.py"),
    ("(cd lib/core && rm engine.py)", "", "lib/core/engine.py"),
    ("echo x > app.py", "src", "src/app.py"),
    ('echo x > "$PWD/app.py"', "src", "src/app.py"),
    ("cd lib && rm -rf ${PWD}/core", "", "lib/core"),
    ("cp ../README.md core/", "lib", "lib/core"),
    ("echo $(date > src/stamp.txt)", "", "src/stamp.txt"),
    ("bash -c 'echo x > src/app.py'", "", "src/app.py"),
    ("echo x > docs/../src/app.py", "", "src/app.py"),
    ("rm -rf ./*", "", "*"),
    ("rm -rf *", "src", "src/*"),
    ("dd if=/dev/zero of=src/app.py bs=1 count=1", "", "src/app.py"),
    ("find src -name '*.pyc' -delete", "", "src"),
    ("find lib/core -type f -exec sed -i s/a/b/ {} +", "", "lib/core"),
    ("patch src/app.py fix.diff", "", "src/app.py"),
    ("cd src && patch -p1 < ../fix.diff", "", "src"),
    ("patch -p1 -d lib/core < fix.diff", "", "lib/core"),
    ("ed -s src/app.py < cmds.ed", "", "src/app.py"),
    ("vim -es -c '%s/a/b/' -c wq src/app.py", "", "src/app.py"),
    ("ex -sc wq src/util.py", "", "src/util.py"),
    ("chmod +x src/app.py", "", "src/app.py"),
    ("chown -R nobody lib/core", "", "lib/core"),
    ("zip -m docs/a.zip src/app.py", "", "src/app.py"),
    ("zip src/bundle README.md", "", "src/bundle"),
    ("split -l 1 README.md src/part-", "", "src/part-*"),
    ("csplit -f lib/core/s README.md 1", "", "lib/core/s*"),
    ("uniq README.md src/u.txt", "", "src/u.txt"),
    ("sqlite3 src/db.sqlite 'create table t(x)'", "", "src/db.sqlite"),
    ("t''ee src/app.py < README.md", "", "src/app.py"),
    # the project root itself covers everything in it
    ("rm -rf .", "", ""),
    ("git checkout -- .", "", ""),
    ("cd .. && rm -rf proj", "", ""),
    # ... and so does any directory above it
    ("rm -rf ..", "", ""),
    ("rm -rf ../..", "src", ""),
]


@pytest.mark.parametrize(("command", "cwd", "names"), DENIED_BASH)
def test_bash_writes_into_held_paths_are_denied(
    held: HookRunner, command: str, cwd: str, names: str
) -> None:
    reason = denial(bash(held, command, cwd=str(held.project / cwd) if cwd else None))
    if names:
        assert reason.startswith(f"agent-hooks: {names} is reserved by another agent"), reason
        assert f"This Bash command would write {names}; do not run it now." in reason  # Claude's
    assert f'agent "{ALICE}" holds ' in reason
    assert "`agent-hooks reservations`" in reason


def test_bash_absolute_target_is_denied(held: HookRunner) -> None:
    denial(bash(held, f"cp README.md {held.project}/src/app.py"))
    denial(bash(held, f"echo x > {held.project}/lib/core/engine.py", cwd="/"))


ALLOWED_BASH: list[tuple[str, str]] = [
    ("ls src", ""),
    ("cat src/app.py", ""),
    ("grep -rn TODO src lib", ""),
    ("git status && git diff src/app.py", ""),
    ("git log -- src", ""),
    ("cp src/app.py docs/app.py", ""),
    ("echo 'x > src/app.py'", ""),
    ('echo "rm -rf src"', ""),
    ("sed 's/a/b/' src/app.py > docs/out.txt", ""),
    ("sort < src/app.py > docs/sorted.txt", ""),
    ("rm -rf docs/build", ""),
    ("cd docs && echo x > app.py", ""),
    ("find src -name '*.py' | wc -l", ""),
    ("echo x > srcx.txt", ""),
    ("mkdir -p lib/other && touch lib/corex", ""),
    ("python -m pytest src -q", ""),
    ("echo hi 2>/dev/null >/dev/null", ""),
    ("echo x > notes.md", "docs"),
    ("wc -l *.py", "src"),
    ("find src -name '*.py' -exec grep -l TODO {} +", ""),
    ("patch --dry-run -p1 < fix.diff", ""),
    ("patch -o docs/app.py src/app.py < fix.diff", ""),
    ("chmod -R g+w docs && zip -r docs/src.zip src", ""),
    ("sqlite3 -readonly src/db.sqlite .dump > docs/dump.sql", ""),
    ("git commit -m 'fixed and reviewed, as asked'", ""),
]


@pytest.mark.parametrize(("command", "cwd"), ALLOWED_BASH)
def test_bash_reads_and_writes_elsewhere_are_allowed(
    held: HookRunner, command: str, cwd: str
) -> None:
    assert allowed(bash(held, command, cwd=str(held.project / cwd) if cwd else None))


def test_bash_writes_outside_the_project_are_allowed(held: HookRunner, tmp_path: Path) -> None:
    assert allowed(bash(held, f"echo x > {tmp_path}/elsewhere.txt && rm -rf {tmp_path}/scratch"))


def test_bash_of_the_holder_itself_is_allowed(held: HookRunner) -> None:
    assert allowed(bash(held, "echo x > src/app.py && rm -rf lib/core", agent=ALICE))


# --- Bash on symlinks inside held directories ---------------------------------------------


@pytest.fixture
def links(held: HookRunner, tmp_path: Path) -> HookRunner:
    """src/out -> a directory outside the project, src/file -> a file outside it,
    docs/app -> the held src/app.py."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "f").write_text("x\n")
    (held.project / "src" / "out").symlink_to("../../other", target_is_directory=True)
    (held.project / "src" / "file").symlink_to("../../other/f")
    (held.project / "docs" / "app").symlink_to("../src/app.py")
    assert (held.project / "src" / "out").resolve() == other.resolve()
    return held


ENTRY_BASH: list[tuple[str, str]] = [
    # (command, the held entry the deny names): each acts on the link in src/, not on
    # what it points to outside the project
    ("rm src/out", "src/out"),
    ("rm -rf src/out", "src/out"),
    ("unlink src/file", "src/file"),
    ("mv src/out lib/o", "src/out"),
    ("mv README.md src/file", "src/file"),
    ("ln -sfn /tmp src/out", "src/out"),
    ("ln -sf /tmp src/file", "src/file"),
    ("cp -P README.md src/file", "src/file"),
    ("sed -i s/x/y/ src/file", "src/file"),
    ("chown -h nobody src/file", "src/file"),
    ("git rm src/file", "src/file"),
    ("find src/out -delete", "src/out"),
    ("cd src && rm out", "src/out"),
]


@pytest.mark.parametrize(("command", "names"), ENTRY_BASH)
def test_bash_acting_on_a_symlink_in_a_held_directory_is_denied(
    links: HookRunner, command: str, names: str
) -> None:
    reason = denial(bash(links, command))
    assert reason.startswith(f"agent-hooks: {names} is reserved by another agent"), reason


@pytest.mark.parametrize(
    "command", ["echo x > src/out/f", "cat src/file > /dev/null", "rm docs/app", "mv docs/app x"]
)
def test_bash_through_a_symlink_is_judged_where_it_points(links: HookRunner, command: str) -> None:
    """Writes through a link land where it points (outside); removing a link to a
    held file removes the link only."""
    assert allowed(bash(links, command))
    denial(bash(links, "echo x >> docs/app"))  # through the link: into src/app.py


@pytest.mark.parametrize(
    "command",
    [
        "ln -s src s2 && echo x > s2/f",
        "ln -s ../src docs/s3; echo x > docs/s3/app.py",
        "ln -s src s2 && cd s2 && touch f",
        "ln -sf lib/core k && rm -rf k/engine.py",
        "(ln -s src s4) && sed -i s/a/b/ s4/*.py",
        "ln -s ../src -t docs && rm docs/src/app.py",
    ],
)
def test_bash_through_a_symlink_made_earlier_in_the_command_is_denied(
    held: HookRunner, command: str
) -> None:
    reason = denial(bash(held, command))
    assert "is reserved by another agent" in reason, reason


# --- Bash the parser gives up on ---------------------------------------------------------


def _nested_bash_c(command: str, levels: int) -> str:
    for _ in range(levels):
        command = "bash -c " + shlex.quote(command)
    return command


GIVEN_UP_BASH: list[tuple[str, str]] = [
    # (command, why the parser gave up): each writes into the held src/
    ("echo " + "$(echo " * 9 + "x | tee src/a" + ")" * 9, "nesting too deep"),
    ("echo " + "`echo " * 1 + "$(echo " * 8 + "x | tee src/a" + ")" * 8 + "`", "nesting too deep"),
    (_nested_bash_c("tee src/a < README.md", 9), "nesting too deep"),
    ("env " * 16 + "tee src/a < README.md", "too many wrappers"),
    ("touch {docs/a{1..70},src/a}", "brace expansion truncated"),
]


@pytest.mark.parametrize(("command", "why"), GIVEN_UP_BASH)
def test_bash_the_parser_gives_up_on_is_denied_where_another_writer_holds_something(
    held: HookRunner, command: str, why: str
) -> None:
    reason = denial(bash(held, command))
    assert reason.startswith(
        f"agent-hooks: this Bash command is too complex to check for writes ({why}), "
        f'and another writer holds files in this project: agent "{ALICE}" holds '
    ), reason
    assert "split it into simpler commands" in reason
    logged = [line for line in held.log_lines() if "too complex to check" in line]
    assert any(f"Bash command too complex to check ({why})" in line for line in logged), logged


def test_bash_the_parser_gives_up_on_is_denied_where_another_writer_holds_a_lease(
    run_hook: HookRunner, proj: Path
) -> None:
    payload = run_hook.payload("PreToolUse_Write")
    payload["tool_input"]["file_path"] = str(proj / "docs/notes.md")
    assert allowed(run_hook("PreToolUse", payload, agent=ALICE))  # Alice leases docs/notes.md
    reason = denial(bash(run_hook, "env " * 16 + "tee src/a < README.md"))
    assert "too complex to check for writes (too many wrappers)" in reason
    assert "docs/notes.md is being changed by " in reason


def test_bash_the_parser_gives_up_on_passes_where_nothing_is_held_and_is_logged(
    run_hook: HookRunner, proj: Path
) -> None:
    strict = {"AGENT_HOOKS_STRICT": "1"}  # the parser runs although nobody holds anything
    assert allowed(bash(run_hook, "env " * 16 + "tee src/a < README.md", env=strict))
    logged = [line for line in run_hook.log_lines() if "too complex to check" in line]
    assert len(logged) == 1 and "(too many wrappers)" in logged[0], run_hook.log_lines()


def test_bash_the_parser_sees_as_opaque_stays_allowed_without_a_log_line(held: HookRunner) -> None:
    for command in ('python3 -c \'open("src/app.py", "w")\'', "./build.sh > docs/out.txt"):
        assert allowed(bash(held, command))
    assert not [line for line in held.log_lines() if "too complex" in line]


# --- Bash pays nothing when nobody else holds anything ----------------------------------


def imported_modules(
    run_hook: HookRunner, command: str, agent: str = BOB
) -> tuple[HookResult, set[str]]:
    payload = run_hook.payload("PreToolUse_Bash")
    payload["tool_input"]["command"] = command
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-IS", ENTRY, "PreToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=run_hook.env(agent),
        cwd=str(run_hook.project),
        timeout=30,
    )
    err = proc.stderr.decode()
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in err.splitlines()
        if line.startswith("import time:")
    }
    text = proc.stdout.decode()
    return HookResult(proc.returncode, json.loads(text) if text.strip() else None, err), modules


@pytest.mark.parametrize(
    "situation", ["no index", "own only", "others shared", "others expired", "all released"]
)
def test_bash_is_not_parsed_when_no_other_agent_holds_anything(
    run_hook: HookRunner, proj: Path, situation: str
) -> None:
    if situation == "own only":
        reserve(run_hook, BOB, "src/**")
    elif situation == "others shared":
        reserve(run_hook, ALICE, "src/**", shared=True)
    elif situation == "others expired":
        reserve(run_hook, ALICE, "src/**", now=time.time() - 2 * HOUR)
    elif situation == "all released":
        reserve(run_hook, ALICE, "src/**")
        reservation_store.release(
            Repo(str(proj), str(run_hook.state_dir)),
            Writer(ALICE, None),
            time.time(),
            everything=True,
        )
    result, modules = imported_modules(run_hook, "echo x > src/app.py")
    assert allowed(result)
    assert "agent_hooks.hooks.pre_tool_use" in modules  # the measurement works
    assert "agent_hooks.shell.writes" not in modules
    assert "agent_hooks.shell.lexer" not in modules


def test_bash_is_parsed_when_another_agent_holds_something(held: HookRunner) -> None:
    result, modules = imported_modules(held, "echo 'x' > docs/notes.md")
    assert allowed(result)
    assert "agent_hooks.shell.writes" in modules  # the control for the test above


def test_a_plain_command_is_judged_without_the_parser(held: HookRunner, proj: Path) -> None:
    """`echo x > f` and its kin (`shell.plain`): refused and allowed as the parser would,
    without loading it."""
    result, modules = imported_modules(held, "echo x > docs/notes.md")
    assert allowed(result)
    assert "agent_hooks.shell.plain" in modules
    assert "agent_hooks.shell.writes" not in modules
    result, modules = imported_modules(held, "echo x > src/app.py")
    assert "src/app.py" in denial(result)
    assert "agent_hooks.shell.writes" not in modules


@pytest.mark.parametrize("strict", [False, True], ids=["reserved", "strict"])
def test_a_target_holding_a_lone_surrogate_is_refused_like_any_other(
    held: HookRunner, proj: Path, strict: bool
) -> None:
    """Found by tests/fuzz: the refusal quotes the path, and `"\\ud800"` (valid in the
    payload's JSON) has no UTF-8 form, so printing the deny raised and the edit was
    let through (fail open). The client writes the file with U+FFFD in its place."""
    where = "docs" if strict else "src"
    env = {"AGENT_HOOKS_STRICT": "1"} if strict else None
    reason = denial(edit(held, "Write", str(proj / where / "new\ud800.py"), env=env))
    assert f"{where}/new\ufffd.py" in reason
    assert not [line for line in held.log_lines() if "fail open" in line]
