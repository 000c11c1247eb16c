"""The end-to-end scenarios of issue 4: agent-hooks, installed as a user installs it, inside the
real ``claude`` CLI.

Each test installs agent-hooks into its own HOME with the repository's ``./install.sh`` (or loads
the repository with ``claude --plugin-dir``), runs ``claude -p`` against the scripted mock API and
asserts on three things: the files on disk, the agents' state files
(``~/.claude/state-<AGENT_NAME>.json``) and what the model was sent. Each installed hook replaced
by one that exits 0 without doing anything fails at least one of them, and so does a deny printed
in a shape the client ignores or a SessionStart that reads ``trigger`` instead of ``source``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agent_hooks.install import claude_settings

from .agent_hooks_install import REPO, Installation
from .claude_cli import ClaudeResult, run_claude, write_user_settings
from .mock_api import (
    SIDE_USAGE,
    MockAnthropicAPI,
    ToolCall,
    Turn,
    Usage,
    agent_call,
    call,
    calls,
    say,
)
from .mock_routes import Predicate, agent_marker, wait_until

if TYPE_CHECKING:
    from .conftest import ClaudeRunner, InstallAgentHooks, MockApiFactory

# Which test shows each hook event agent-hooks installs at work, by its effect. A new event in
# agent_hooks.install.claude_settings.HOOKS fails test_every_installed_hook_event_has_a_scenario until a scenario
# exercises it.
EVENT_EVIDENCE = {
    "SessionStart": "test_lifecycle_context_sweep_release_and_resume",  # context, sweep, resume
    "PreToolUse": "test_reservation_blocks_other_agents",  # Write and Bash denied
    "PostToolUse": "test_trail_records_created_read_modified_and_bash_files",
    "Stop": "test_stop_records_activity_while_the_conversation_is_open",
    "SessionEnd": "test_lifecycle_context_sweep_release_and_resume",  # inactive, released
    "SubagentStart": "test_subagent_is_recorded_in_the_work_session",
    "SubagentStop": "test_subagent_is_recorded_in_the_work_session",
    # a skill's shell line (Claude Code 2.1.332): with the real 2.1.332 beside 2.1.328
    "PreSkillShellCommand": "test_clients_e2e.test_a_skill_shell_line_into_a_held_file_is_refused",
}


def _evidence(name: str) -> object:
    """The test function an EVENT_EVIDENCE entry names (here, or `module.function`)."""
    module, _, function = name.rpartition(".")
    if not module:
        return globals().get(function)
    from . import test_clients_e2e

    return getattr({"test_clients_e2e": test_clients_e2e}[module], function, None)


AGENT_A = "proj__cc_1"
AGENT_B = "proj__cc_2"


# --------------------------------------------------------------------------- helpers


def _ok(result: ClaudeResult, api: MockAnthropicAPI, home: Path | None = None) -> None:
    """The run exited 0, the mock answered every request and the whole script was used."""
    log = home / ".claude" / "agent-hooks.log" if home is not None else None
    hook_log = log.read_text() if log is not None and log.exists() else "(no agent-hooks.log)"
    context = (
        f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}\n"
        f"agent-hooks.log:\n{hook_log}"
    )
    assert result.returncode == 0, context
    assert api.errors == [], context
    assert api.unused_turns == 0, context


def _write(path: Path, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": str(path), "content": content})


def _read(path: Path) -> ToolCall:
    return ToolCall("Read", {"file_path": str(path)})


def _edit(path: Path, old: str, new: str) -> ToolCall:
    return ToolCall("Edit", {"file_path": str(path), "old_string": old, "new_string": new})


def _bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "e2e step"})


def _minutes_left(text: str) -> int:
    found = re.search(r"(\d+) min left", text)
    assert found, f"no time left in {text!r}"
    return int(found[1])


def _our_handlers(settings_path: Path) -> dict[str, int]:
    """Event -> number of agent-hooks handlers in a settings file (none when it is missing)."""
    if not settings_path.exists():
        return {}
    hooks = json.loads(settings_path.read_text()).get("hooks", {})
    counts = {
        event: sum(claude_settings.is_ours(h) for g in groups for h in g["hooks"])
        for event, groups in hooks.items()
    }
    return {event: n for event, n in counts.items() if n}


def _denials(install: Installation, agent: str) -> list[str]:
    return [
        line for line in install.log_lines() if f"agent={agent} " in line and " denied " in line
    ]


# --------------------------------------------------------------------------- coverage


def test_every_installed_hook_event_has_a_scenario(install_agent_hooks: InstallAgentHooks) -> None:
    install = install_agent_hooks()

    installed = _our_handlers(install.settings_path)
    plugin = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]

    assert installed == Counter(event for event, _, _ in claude_settings.HOOKS)
    assert set(installed) == set(EVENT_EVIDENCE)
    assert set(plugin) == set(EVENT_EVIDENCE)
    assert all(callable(_evidence(name)) for name in EVENT_EVIDENCE.values())


# --------------------------------------------------------------------------- 1. trail


def test_trail_records_created_read_modified_and_bash_files(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    new, by_bash = project / "notes" / "todo.md", project / "notes" / "from-bash.txt"
    api = mock_api(
        [
            call("Write", {"file_path": str(new), "content": "first draft\n"}),
            call("Read", {"file_path": str(new)}),
            call("Edit", {"file_path": str(new), "old_string": "first", "new_string": "second"}),
            call("Bash", {"command": "echo made by bash > notes/from-bash.txt"}),
            say("Trail done."),
        ]
    )

    result = claude("Leave a trail.", api, agent_name="trail-agent", extra_env=install.claude_env())

    _ok(result, api, install.home)
    assert new.read_text() == "second draft\n"
    assert by_bash.read_text() == "made by bash\n"
    assert [r.is_error for r in api.tool_results()] == [False] * 4
    doc = install.state("trail-agent")
    assert doc["files_created"] == [str(new), str(by_bash)]
    assert doc["files_read"] == [str(new)]
    assert doc["files_modified"] == [str(new)]
    for path in (new, by_bash):  # fingerprints describe the files as they are now
        stat = path.stat()
        assert doc["fingerprints"][str(path)].startswith(f"{stat.st_mtime_ns:x}:{stat.st_size:x}:")
    status = install.cli_json("status", cwd=project, agent_name="trail-agent")
    assert (status["files_created"], status["files_modified"], status["files_read"]) == (2, 1, 1)


# --------------------------------------------------------------------------- 2. and 5. reservations


@pytest.mark.parametrize("form", ["settings", "plugin"])
def test_reservation_blocks_other_agents(
    form: str,
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """Scenario 2 with the hooks in settings.json; scenario 5 (``plugin``) with the same hooks
    coming only from ``claude --plugin-dir <repo>``."""
    plugin = form == "plugin"
    install = install_agent_hooks(settings=not plugin)
    if plugin:
        assert _our_handlers(install.settings_path) == {}
    else:
        assert set(_our_handlers(install.settings_path)) == set(EVENT_EVIDENCE)
    args = ["--plugin-dir", str(REPO)] if plugin else []
    env = install.claude_env(plugin=plugin)
    project = git_project.resolve()
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('app')\n")

    def run(agent: str, prompt: str, api: MockAnthropicAPI) -> None:
        _ok(claude(prompt, api, agent_name=agent, extra_env=env, args=args), api, install.home)

    # A claims src/** through its Bash tool, as an agent would; --keep outlives its conversation.
    a_reserves = mock_api(
        [
            call("Bash", {"command": "agent-hooks reserve 'src/**' --reason farmhand-42 --keep"}),
            say("Reserved."),
        ]
    )
    run(AGENT_A, "Reserve src.", a_reserves)
    (reserved,) = a_reserves.tool_results()
    assert not reserved.is_error and "reserved src/** (exclusive" in reserved.content
    held = install.cli_json("reservations", cwd=project)
    assert [(r["agent"], r["pattern"], r["reason"], r["keep"]) for r in held] == [
        (AGENT_A, "src/**", "farmhand-42", True)
    ]
    assert install.state(AGENT_A)["active"] is False  # A's conversation is over

    # B: its edits in src/ are refused, by Write and by Bash; docs/ is free.
    x, y, notes = project / "src" / "x.py", project / "src" / "y.py", project / "docs" / "notes.md"
    b_works = mock_api(
        [
            call("Write", {"file_path": str(x), "content": "x = 1\n"}),
            call("Write", {"file_path": str(notes), "content": "notes\n"}),
            call("Bash", {"command": "echo 'y = 2' > src/y.py"}),
            say("B is done."),
        ]
    )
    run(AGENT_B, "Work on src and docs.", b_works)

    assert not x.exists() and not y.exists()
    assert notes.read_text() == "notes\n"
    write_x, write_notes, bash_y = b_works.tool_results()
    assert not write_notes.is_error
    for denied, tool, target in ((write_x, "Write", "src/x.py"), (bash_y, "Bash", "src/y.py")):
        assert denied.is_error, denied
        assert denied.content.startswith(f"PreToolUse:{tool} hook error"), denied.content
        assert f'agent "{AGENT_A}" holds src/**' in denied.content
        assert "reason: farmhand-42" in denied.content
        assert 50 <= _minutes_left(denied.content) <= 60
        assert target in denied.content
    b_state = install.state(AGENT_B)
    assert b_state["files_created"] == [str(notes)]
    assert b_state["files_modified"] == []
    denied_tools = [re.findall(r" denied (\w+):", line) for line in _denials(install, AGENT_B)]
    assert denied_tools == [["Write"], ["Bash"]]

    # A's own edit in src/ goes through (a second conversation of A).
    mine = project / "src" / "a.py"
    a_works = mock_api(
        [call("Write", {"file_path": str(mine), "content": "a = 0\n"}), say("A wrote it.")]
    )
    run(AGENT_A, "Write in src.", a_works)
    assert mine.read_text() == "a = 0\n"
    assert [r.is_error for r in a_works.tool_results()] == [False]
    assert install.state(AGENT_A)["files_created"] == [str(mine)]
    assert _denials(install, AGENT_A) == []


# --------------------------------------------------------------------------- 3. lifecycle


def test_lifecycle_context_sweep_release_and_resume(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    env = install.claude_env()
    project = git_project.resolve()
    # Another agent's state untouched for 8 days (with its lock), and a file that is not ours.
    old_state = install.state_dir / "state-old__cc_9.json"
    old_lock = install.state_dir / "state-old__cc_9.json.lock"
    not_ours = install.state_dir / "my-notes.txt"
    old_state.write_text(json.dumps({"agent_name": "old__cc_9", "files_created": ["/x"]}))
    old_lock.write_text("")
    not_ours.write_text("keep me\n")
    eight_days_ago = time.time() - 8 * 86400
    for path in (old_state, old_lock, not_ours):
        os.utime(path, (eight_days_ago, eight_days_ago))
    kept = project / "kept.txt"

    first = mock_api(
        [
            call("Write", {"file_path": str(kept), "content": "v1\n"}),
            call("Bash", {"command": "agent-hooks reserve 'lib/**' --reason farmhand-7"}),
            call("Bash", {"command": "agent-hooks reservations --json"}),
            say("First run done."),
        ]
    )
    _ok(claude("Start.", first, agent_name=AGENT_A, extra_env=env), first, install.home)

    # SessionStart: the context reached the model, and the old state was swept.
    context = first.first_main_request_text()
    assert (
        f'agent-hooks: you are agent "{AGENT_A}" in project {project}; conversation '
    ) in context
    assert "(startup): a new file trail begins" in context
    assert not old_state.exists() and not old_lock.exists()
    assert not_ours.read_text() == "keep me\n"
    assert any(" swept " in line and "state-old__cc_9.json" in line for line in install.log_lines())
    # The reservation was held during the run; SessionEnd released it (it had no --keep).
    _, reserved, listing = first.tool_results()
    assert "reserved lib/** (exclusive" in reserved.content
    listed = sorted((r["kind"], r["agent"], r["pattern"]) for r in json.loads(listing.content))
    assert listed == [("lease", AGENT_A, "kept.txt"), ("reservation", AGENT_A, "lib/**")]
    assert install.cli_json("reservations", cwd=project) == []
    assert any(
        f"agent={AGENT_A} event=SessionEnd released 1 reservation at" in line
        for line in install.log_lines()
    )
    doc = install.state(AGENT_A)
    assert (doc["active"], doc["source"], doc["reservations"]) == (False, "startup", [])
    assert doc["files_created"] == [str(kept)]

    # --continue resumes the conversation and keeps the trail.
    second = mock_api([call("Read", {"file_path": str(kept)}), say("Second run done.")])
    _ok(
        claude("Go on.", second, agent_name=AGENT_A, extra_env=env, args=["--continue"]),
        second,
        install.home,
    )

    resumed = second.first_main_request_text()
    assert "First run done." in resumed
    assert f'agent-hooks: you are agent "{AGENT_A}"' in resumed
    assert "(resume): your file trail continues" in resumed
    doc = install.state(AGENT_A)
    assert doc["source"] == "resume"
    assert [c["source"] for c in doc["conversations"]] == ["startup", "resume"]
    assert doc["files_created"] == [str(kept)]
    assert doc["files_read"] == [str(kept)]
    assert doc["active"] is False


# --------------------------------------------------------------------------- Stop

# A hook of the user's own that snapshots the agent's state file into <out>/<label>.json as
# {"stat": [inode, mtime_ns] or null, "doc": the document or null}.
#   started: at UserPromptSubmit (SessionStart is done, no tool has run); then it waits 1.2 s, so
#            any later write of last_activity lands in a later second.
#   at-stop: at Stop, in parallel with ours; it waits (at most 5 s) until the state file differs
#            from the "started" snapshot, i.e. until our Stop hook has written it.
_PROBE = """\
import json, os, sys, time
sys.stdin.read()
label, out = sys.argv[1], sys.argv[2]
state = os.path.join(os.environ["HOME"], ".claude", "state-" + os.environ["AGENT_NAME"] + ".json")

def stat():
    try:
        st = os.stat(state)
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_mtime_ns]

if label == "at-stop":
    with open(os.path.join(out, "started.json"), encoding="utf-8") as src:
        before = json.load(src)["stat"]
    deadline = time.monotonic() + 5
    while stat() == before and time.monotonic() < deadline:
        time.sleep(0.02)
snapshot = {"stat": stat(), "doc": None}
if snapshot["stat"] is not None:
    with open(state, encoding="utf-8") as src:
        snapshot["doc"] = json.load(src)
with open(os.path.join(out, label + ".json"), "w", encoding="utf-8") as dst:
    json.dump(snapshot, dst)
if label == "started":
    time.sleep(1.2)
"""


def test_stop_records_activity_while_the_conversation_is_open(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    claude_home: Path,
    git_project: Path,
    tmp_path: Path,
) -> None:
    """Stop only records activity, which SessionEnd overwrites at once in ``-p`` mode; so hooks of
    the user's own (which install.sh must keep) snapshot the state file once the conversation has
    started and again at Stop. In between 1.2 s pass and no tool runs: only Stop can write."""
    probes = tmp_path / "probes"
    probes.mkdir()
    script = tmp_path / "probe.py"
    script.write_text(_PROBE, encoding="utf-8")

    def probe(label: str) -> list[dict[str, Any]]:
        command = shlex.join([sys.executable, "-I", str(script), label, str(probes)])
        return [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]

    user_hooks = {"UserPromptSubmit": probe("started"), "Stop": probe("at-stop")}
    write_user_settings(claude_home, {"hooks": user_hooks})
    install = install_agent_hooks()
    merged = json.loads(install.settings_path.read_text())["hooks"]
    assert all(merged[event][0] == groups[0] for event, groups in user_hooks.items())
    api = mock_api([say("Nothing to do.")])

    _ok(
        claude("Just answer.", api, agent_name=AGENT_A, extra_env=install.claude_env()),
        api,
        install.home,
    )

    started = json.loads((probes / "started.json").read_text())["doc"]
    at_stop = json.loads((probes / "at-stop.json").read_text())["doc"]
    assert started is not None, "no state file once the conversation started: no SessionStart"
    final = install.state(AGENT_A)
    assert (started["active"], at_stop["active"], final["active"]) == (True, True, False)
    assert at_stop["last_activity"] > started["last_activity"]
    assert final["last_activity"] >= at_stop["last_activity"]
    assert started["conversation_id"] == at_stop["conversation_id"] == final["conversation_id"]


# --------------------------------------------------------------------------- subagents


def _subagent_transcripts(home: Path) -> list[Path]:
    """The subagent transcripts the client wrote under ``home`` (all projects, all sessions)."""
    return sorted((home / ".claude" / "projects").glob("*/*/subagents/agent-*.jsonl"))


def _ends_its_turn(path: Path) -> bool:
    """Whether ``path`` holds, as a complete line, an assistant entry that ends the agent's turn
    (``stop_reason: end_turn``): the subagent's final entry, which carries its last usage."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    for line in data.split(b"\n")[:-1]:  # the part after the last newline is not complete
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if (
            entry.get("type") == "assistant"
            and isinstance(message, dict)
            and message.get("stop_reason") == "end_turn"
        ):
            return True
    return False


def _subagent_transcript_final(home: Path) -> Predicate:
    """True once a subagent transcript under ``home`` holds the subagent's final entry. The
    client writes transcripts late (buffered, flushed on a timer): SubagentStop may come before
    the file even exists, so this is what the main conversation's last turn waits for."""
    return Predicate(
        lambda _state: any(_ends_its_turn(p) for p in _subagent_transcripts(home)),
        "subagent transcript final",
    )


def _session_file(project: Path, session_id: str) -> dict[str, Any]:
    """The work session's document as the hooks left it (read directly: no CLI command ran)."""
    path = project / ".claude" / "sessions" / f"{session_id}.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _tokens_used(usage: Usage) -> int:
    return (
        usage.input_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens
        + usage.output_tokens
    )


def test_subagent_is_recorded_in_the_work_session(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """With a work session active, a subagent the agent launches lands in ``agents_spawned``:
    SubagentStart records who launched it in which conversation, SubagentStop its end and the
    tokens its own transcript shows (the mock reports ``SIDE_USAGE`` for subagent requests).

    The client fires SubagentStop before it has written the subagent's last transcript entries
    (sometimes before the file exists), so what SubagentStop reads may be incomplete: such a
    subagent is left pending and read on at the next hook. The mock holds the main conversation's
    last turn until the transcript holds the subagent's final entry; the Stop after that turn is
    then guaranteed to find it complete, so the figures are in once the run is over, in the file
    the hooks wrote, without any CLI command settling them.
    """
    install = install_agent_hooks()
    project = git_project.resolve()
    started = install.cli_json(
        "session", "start", "--client", "ACME", "--code", "AUDIT", cwd=project
    )
    session_id = started["session"]["session_id"]
    first, last = (
        Usage(input_tokens=1_500),
        Usage(input_tokens=3_000, cache_read_input_tokens=20_000),
    )
    api = mock_api(
        [
            call(
                "Agent",
                {
                    "description": "Survey the code",
                    "prompt": "Reply OK.",
                    "subagent_type": "general-purpose",
                },
                usage=first,
            ),
            say("Launched.", usage=last),
            wait_until(_subagent_transcript_final(install.home)),
            say("Subagent finished.", usage=last),
        ]
    )

    _ok(
        claude("Delegate.", api, agent_name=AGENT_A, extra_env=install.claude_env()),
        api,
        install.home,
    )

    assert len(api.requests_of("subagent")) == 1
    used = _tokens_used(SIDE_USAGE)
    hooks_wrote = _session_file(project, session_id)
    (spawned,) = hooks_wrote["agents_spawned"]
    assert hooks_wrote["pending_subagents"] == [], install.log_lines()
    assert (spawned["tokens_used"], hooks_wrote["tokens"]["saved"]) == (used, used)
    assert spawned["read"]["transcript"] == str(_subagent_transcripts(install.home)[0])

    doc = install.cli_json("session", "status", cwd=project)["session"]
    assert doc["session_id"] == session_id
    (spawned,) = doc["agents_spawned"]
    conversation = install.state(AGENT_A)["conversation_id"]
    assert (spawned["type"], spawned["agent"], spawned["conversation"]) == (
        "general-purpose",
        AGENT_A,
        conversation,
    )
    assert spawned["started"] and spawned["completed"]
    assert spawned["tokens_used"] == used
    assert doc["tokens"]["saved"] == used
    # The main conversation's figures come from the transcript the real client wrote: the
    # context (input + cache creation + cache read) of its last main assistant entry.
    context = last.input_tokens + last.cache_creation_input_tokens + last.cache_read_input_tokens
    assert doc["tokens"]["current"] == context
    assert doc["tokens"]["peak"] == context
    assert not [line for line in install.log_lines() if "tokens counted" in line]


def test_subagent_figures_are_complete_once_the_cli_reads_them(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """A subagent of two turns whose second is the larger: its tokens used are the final turn's
    context plus output, never the first turn's alone (what a transcript read before the client
    wrote the last entry shows) and never 0. Nothing in the script waits for the transcript, so
    the hooks may or may not have read it complete; either its figures are in, or it is pending
    with what was read so far. Once ``claude`` has exited the transcript is complete, and
    ``session tokens`` reads pending ones on before it reports: the figures are in."""
    install = install_agent_hooks()
    project = git_project.resolve()
    (project / "notes.txt").write_text("notes\n")
    started = install.cli_json(
        "session", "start", "--client", "ACME", "--code", "SURVEY", cwd=project
    )
    session_id = started["session"]["session_id"]
    marker = agent_marker("A")
    small = Usage(700, 20, 0, 0)  # input, output, cache creation, cache read
    large = Usage(900, 30, 0, 4_000)
    api = mock_api(
        [calls(agent_call("Survey", f"{marker} Read the notes.")), "Launched.", "A reported."],
        agents={
            marker: [
                call("Read", {"file_path": str(project / "notes.txt")}, usage=small),
                say("A done.", usage=large),
            ]
        },
    )

    _ok(
        claude("Delegate.", api, agent_name=AGENT_A, extra_env=install.claude_env()),
        api,
        install.home,
    )

    assert api.unused_agent_turns() == {marker: 0}
    agent_id = api.agent_id(marker)
    used = _tokens_used(large)
    hooks_wrote = _session_file(project, session_id)
    (spawned,) = hooks_wrote["agents_spawned"]
    pending = [item["id"] for item in hooks_wrote["pending_subagents"]]
    assert spawned["id"] == agent_id
    if pending:  # its final entry not read yet: the figures of the entries read so far
        assert pending == [agent_id], hooks_wrote
        assert spawned["tokens_used"] in (0, _tokens_used(small), used), hooks_wrote
    else:  # read complete: the figures are in
        assert spawned["tokens_used"] == used, hooks_wrote

    report = install.cli_json("session", "tokens", cwd=project)
    assert report["pending"] == 0
    assert [(a["id"], a["tokens_used"], a["pending"]) for a in report["subagents"]] == [
        (agent_id, used, False)
    ]
    assert report["saved"] == used
    settled = _session_file(project, session_id)
    assert settled["pending_subagents"] == []
    assert settled["agents_spawned"][0]["tokens_used"] == used


# --------------------------------------------------------------------------- 4. four agents


def _busy_script(work: Path, rel: str) -> tuple[list[Turn], dict[str, set[str]]]:
    """20 tool calls in ``work`` (project-relative ``rel``) and the trail they must leave.

    Per file i: a Write; then an Edit and a Bash write in one turn; at the end the five files are
    read in one turn (the client runs those Reads, and so their PostToolUse hooks, concurrently).
    """
    turns: list[Turn] = []
    files = [work / f"f{i}.txt" for i in range(5)]
    by_bash = [work / f"b{i}.txt" for i in range(5)]
    for i, path in enumerate(files):
        turns.append(calls(_write(path, f"file {i}\n")))
        turns.append(
            calls(
                _edit(path, f"file {i}", f"file {i} edited"),
                _bash(f"echo bash {i} > {rel}/b{i}.txt"),
            )
        )
    turns.append(calls(*(_read(path) for path in files)))
    turns.append(say("All done."))
    expected = {
        "files_created": {str(p) for p in files + by_bash},
        "files_modified": {str(p) for p in files},
        "files_read": {str(p) for p in files},
    }
    return turns, expected


def test_four_agents_at_once_keep_complete_trails(
    claude_bin: str,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    claude_home: Path,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    agents = [f"proj__cc_{n}" for n in range(1, 5)]
    plans = {name: _busy_script(project / "work" / name, f"work/{name}") for name in agents}
    apis = {name: mock_api(plans[name][0]) for name in agents}

    def run(name: str) -> ClaudeResult:
        return run_claude(
            f"Work in work/{name}.",
            cwd=project,
            home=claude_home,
            server_url=apis[name].url,
            agent_name=name,
            extra_env=install.claude_env(),
            binary=claude_bin,
            timeout=150,
        )

    with ThreadPoolExecutor(len(agents)) as pool:
        results = dict(zip(agents, pool.map(run, agents), strict=True))

    for name in agents:
        api, (_, expected) = apis[name], plans[name]
        _ok(results[name], api, install.home)
        outcomes = api.tool_results()
        assert len(outcomes) == 20
        assert [r.content for r in outcomes if r.is_error] == [], name
        # Only the agent's own directory is compared exactly: the client reports in a Bash call's
        # bashEditDiff every file that changed in the project while the command ran, so other
        # agents' concurrent writes may show up in this agent's trail as well.
        own = str(project / "work" / name) + "/"
        doc = install.state(name)
        for field, paths in expected.items():
            recorded = [p for p in doc[field] if p.startswith(own)]
            assert len(recorded) == len(set(recorded)), (name, field, recorded)
            assert set(recorded) == paths, (name, field, recorded)
        assert (doc["active"], doc["source"], doc["registered"]) == (False, "startup", True)
        for i in range(5):
            assert (project / "work" / name / f"f{i}.txt").read_text() == f"file {i} edited\n"
            assert (project / "work" / name / f"b{i}.txt").read_text() == f"bash {i}\n"
    assert [line for line in install.log_lines() if " denied " in line] == []
    assert install.cli_json("reservations", cwd=project) == []
