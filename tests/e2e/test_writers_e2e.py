"""Writers and leases (issue 9) and one ledger per repository (issue 10), end to end: agent-hooks
installed by the real ``./install.sh``, the real ``claude -p`` against the scripted mock API.

Each test asserts on the files on disk, on the tool results each conversation was sent, and on
the repository's ledger (``<common git dir>/agent-hooks/``), read at scripted moments by
``snapshot`` steps. Every interleaving is forced by ``wait_until`` steps (see
``test_mock_subagents.py`` for the pattern); the test thread itself only ever waits for a
condition (``wait_for``) where it must act between two turns (the ``kill -9``).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent_hooks_install import Installation
from .claude_cli import ClaudeResult, run_claude
from .mock_api import MockAnthropicAPI, agent_call, calls, request_text, say
from .mock_routes import (
    MAIN,
    Predicate,
    agent_marker,
    file_exists,
    notified,
    requested,
    turns_done,
    wait_until,
)
from .writers_support import (
    Background,
    bash,
    check,
    denied,
    git,
    leases,
    ledger_dir,
    ok,
    on,
    session_id,
    snapshot,
    wait_for,
    write,
)

if TYPE_CHECKING:
    from .conftest import ClaudeRunner, InstallAgentHooks, MockApiFactory

A, B = agent_marker("A"), agent_marker("B")
AGENT_A, AGENT_B = "proj__cc_1", "proj__cc_2"
TEAMS_ENV = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}


def _denials(install: Installation) -> list[str]:
    return [line for line in install.log_lines() if " denied " in line]


# --------------------------------------------------------------------------- 1, 2. one agent


@dataclass
class TwoWriters:
    api: MockAnthropicAPI
    result: ClaudeResult
    seen: dict[str, Any]  # snapshot label -> leases, writer cards, shared.txt
    shared: Path


def _two_writers_one_file(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install: Installation,
    project: Path,
    names: Mapping[str, str] | None = None,
) -> TwoWriters:
    """A writes shared.txt; B tries once A's Write is done, while A still runs; A stops, then B;
    then the main conversation writes shared.txt itself. ``names``: teammate names by marker
    (agent teams are enabled when given)."""
    names = names or {}
    shared, ledger = project / "shared.txt", ledger_dir(project)
    seen: dict[str, Any] = {}
    launch = calls(
        agent_call("writer A", f"{A} Write shared.txt.", name=names.get(A)),
        agent_call("writer B", f"{B} Write shared.txt.", name=names.get(B)),
    )
    api = mock_api(
        [
            launch,
            "Launched.",
            "A reported.",  # A's notification
            wait_until(notified(B)),  # this request brings B's: both SubagentStops ran
            snapshot(ledger, seen, "both stopped", shared),
            calls(write(shared, "from the parent\n")),
            "Parent wrote it.",
        ],
        agents={
            # The Agent results (and their PostToolUse, which names the writers) came back.
            A: [
                wait_until(requested(MAIN, 2)),
                calls(write(shared, "from A\n")),
                wait_until(turns_done(B, 1)),  # B's Write was tried while A runs
                snapshot(ledger, seen, "A holds", shared),
                say("A done."),
            ],
            B: [
                wait_until(turns_done(A, 1)),
                calls(write(shared, "from B\n")),
                wait_until(notified(A)),  # one notification per main request
                say("B done."),
            ],
        },
    )
    env = {**install.claude_env(), **(TEAMS_ENV if names else {})}
    result = claude("Delegate two writes of one file.", api, agent_name=AGENT_A, extra_env=env)
    return TwoWriters(api, result, seen, shared)


def _assert_one_write_then_the_parent(run: TwoWriters, install: Installation, holder: str) -> None:
    api, seen = run.api, run.seen
    ok(run.result, api, install)
    assert api.unused_agent_turns() == {A: 0, B: 0}
    a_id, conversation = api.agent_id(A), session_id(api)
    assert a_id is not None
    # The interleaving the waits forced, in the order they passed.
    assert [(w.conversation, w.description) for w in api.waits] == [
        (A, f"requested({MAIN!r}, 2)"),
        (B, f"turns_done({A!r}, 1)"),
        (A, f"turns_done({B!r}, 1)"),
        (A, "snapshot(A holds)"),
        (B, f"notified({A!r})"),
        (MAIN, f"notified({B!r})"),
        (MAIN, "snapshot(both stopped)"),
    ]
    (a_wrote,) = api.tool_results(A)
    assert not a_wrote.is_error and a_wrote.content.startswith("File created successfully")
    (b_wrote,) = api.tool_results(B)
    denied(b_wrote, "shared.txt", holder.format(short=a_id[:8]))
    # While A ran: its lease, in the repository's ledger, and B's Write did not land.
    holds = seen["A holds"]
    assert holds["files"] == {"shared.txt": "from A\n"}
    (lease,) = holds["leases"]["shared.txt"]
    assert (lease["writer"], lease["agent"], lease["agent_id"], lease["conversation"]) == (
        f"{AGENT_A}#{a_id}",
        AGENT_A,
        a_id,
        conversation,
    )
    assert lease["agent_type"] == "general-purpose" and lease["source"] == "edit"
    assert holds["writers"][lease["writer"]]["description"] == "writer A"  # from the Agent call
    # SubagentStop released A and B before the parent wrote; SessionEnd released the parent.
    assert seen["both stopped"] == {
        "leases": {},
        "writers": {},
        "files": {"shared.txt": "from A\n"},
    }
    assert run.shared.read_text() == "from the parent\n"
    results = api.tool_results()
    assert [(r.tool_name, r.is_error) for r in results] == [
        ("Agent", False),
        ("Agent", False),
        ("Write", False),
    ]
    assert "has been updated successfully" in results[-1].content
    assert run.result.stdout.strip().endswith("Parent wrote it.")
    assert leases(ledger_dir(run.shared.parent)) == {}
    (denial,) = _denials(install)
    assert f"agent={AGENT_A} event=PreToolUse denied Write: agent-hooks: shared.txt" in denial


def test_two_background_subagents_one_file(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    run = _two_writers_one_file(claude, mock_api, install, git_project.resolve())

    holder = f'the general-purpose subagent "writer A" ({{short}}) of agent "{AGENT_A}"'
    _assert_one_write_then_the_parent(run, install, holder)


def test_two_named_teammates_one_file(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    names = {A: "alice", B: "bob"}
    run = _two_writers_one_file(claude, mock_api, install, git_project.resolve(), names)

    holder = f'teammate "alice" ({{short}}) of agent "{AGENT_A}"'
    _assert_one_write_then_the_parent(run, install, holder)
    cards = run.seen["A holds"]["writers"]
    assert sorted(card["name"] for card in cards.values()) == ["alice", "bob"]


# --------------------------------------------------------------------------- 3. two sessions


@dataclass
class TwoSessions:
    first_api: MockAnthropicAPI
    first: ClaudeResult
    second_api: MockAnthropicAPI
    second: ClaudeResult
    seen: dict[str, Any]
    x: Path


def _two_unnamed_sessions(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install: Installation,
    project: Path,
    flag: Path,
) -> TwoSessions:
    """Session 1 writes x.txt and waits for ``flag``. Session 2, started once session 1 sent its
    first request, tries x.txt once session 1's Write is done, touches ``flag``, waits until
    session 1 ended (its process reaped) and writes x.txt again. Neither has AGENT_NAME."""
    x, ledger = project / "x.txt", ledger_dir(project)
    seen: dict[str, Any] = {}
    options: dict[str, Any] = {
        "cwd": project,
        "home": claude_home,
        "extra_env": install.claude_env(),
        "binary": claude_bin,
    }
    first_api = mock_api(
        [calls(write(x, "from session 1\n")), wait_until(file_exists(flag)), "Session 1 done."]
    )
    first = Background("Write x.txt.", first_api, **options)
    # Session 2 starts once session 1 asked for its first turn, i.e. after its SessionStart.
    wait_for(lambda: requested(MAIN, 1)(first_api), "session 1 started")
    second_api = mock_api(
        [
            wait_until(on(first_api, turns_done(MAIN, 1), "session 1 wrote x.txt")),
            calls(write(x, "from session 2\n")),
            snapshot(ledger, seen, "refused", x),
            calls(bash(f"touch {flag}")),
            wait_until(Predicate(lambda _state: first.done(), "session 1 ended")),
            snapshot(ledger, seen, "session 1 ended", x),
            calls(write(x, "from session 2\n")),
            "Session 2 done.",
        ]
    )
    second = run_claude("Write x.txt too.", server_url=second_api.url, **options)
    return TwoSessions(first_api, first.result(), second_api, second, seen, x)


def test_two_sessions_without_agent_name_one_file(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    run = _two_unnamed_sessions(
        claude_bin, claude_home, mock_api, install, project, tmp_path / "flag"
    )

    ok(run.first, run.first_api, install)
    ok(run.second, run.second_api, install)
    one, two = session_id(run.first_api), session_id(run.second_api)
    assert one != two
    (wrote,) = run.first_api.tool_results()
    assert not wrote.is_error
    refused, touched, wrote_again = run.second_api.tool_results()
    denied(refused, "x.txt", f"the unnamed agent of conversation {one[:8]}")
    assert (touched.tool_name, touched.is_error, wrote_again.is_error) == ("Bash", False, False)
    # Each unnamed conversation is its own owner: the lease is session 1's conversation's.
    (lease,) = run.seen["refused"]["leases"]["x.txt"]
    assert (lease["writer"], lease["agent"], lease["conversation"]) == (f"~{one}", None, one)
    assert run.seen["refused"]["files"] == {"x.txt": "from session 1\n"}
    assert run.x.read_text() == "from session 2\n"
    # Told when free, with the result of the Write that then went through.
    told = request_text(run.second_api.main_requests[-1].json)
    assert "agent-hooks: x.txt is free now (" in told
    assert leases(ledger_dir(project)) == {}
    assert len(_denials(install)) == 1


def test_unnamed_session_end_releases_its_lease_while_another_unnamed_session_runs(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
) -> None:
    install = install_agent_hooks()
    run = _two_unnamed_sessions(
        claude_bin, claude_home, mock_api, install, git_project.resolve(), tmp_path / "flag"
    )

    # Session 1 held x.txt while it ran (session 2 was refused it) ...
    ok(run.first, run.first_api, install)  # ... and ended normally: its SessionEnd ran
    one = session_id(run.first_api)
    (held,) = run.seen["refused"]["leases"]["x.txt"]
    assert (held["writer"], held["conversation"]) == (f"~{one}", one)
    # Once it ended, and before session 2 wrote again, its lease was gone from the ledger:
    # released by its SessionEnd (no ledger write came in between to drop a dead holder's).
    assert run.seen["session 1 ended"]["leases"] == {}
    assert run.seen["session 1 ended"]["files"] == {"x.txt": "from session 1\n"}


# --------------------------------------------------------------------------- 4. kill -9


def test_killed_holder_frees_its_files_at_once(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    ledger, x, never = ledger_dir(project), project / "x.txt", tmp_path / "never"
    options: dict[str, Any] = {
        "cwd": project,
        "home": claude_home,
        "extra_env": install.claude_env(),
        "binary": claude_bin,
    }
    first_api = mock_api(
        [
            calls(write(x, "from session 1\n"), bash("echo $CLAUDE_PID")),
            wait_until(file_exists(never), timeout=120),
            "Never sent.",
        ]
    )
    first = Background("Write x.txt, then wait.", first_api, agent_name=AGENT_A, **options)
    try:
        wait_for(lambda: turns_done(MAIN, 1)(first_api), "session 1 wrote x.txt")
        pid = first.process.pid
        wrote, echoed = first_api.tool_results()
        assert not wrote.is_error and echoed.content.strip() == str(pid)
        (lease,) = leases(ledger)["x.txt"]
        assert (lease["writer"], lease["pid"]) == (AGENT_A, pid)  # CLAUDE_PID is the client's
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        assert lease["start"] == int(stat[19])
        held = check(install, "x.txt", project, AGENT_B)
        assert held["allowed"] is False
        assert held["held_by"][0]["holder"] == f'agent "{AGENT_A}"'

        os.kill(pid, signal.SIGKILL)
        killed = first.result(30)  # reaped: a zombie would still count as alive
    finally:
        never.touch()  # let the mock's held-back request end
    assert killed.returncode == -signal.SIGKILL
    # No SessionEnd ran: the lease is still on disk, but its holder is gone, so it counts for
    # nothing (the listing leaves it out, `check` lets the edit pass).
    assert [item["pid"] for item in leases(ledger)["x.txt"]] == [pid]
    assert install.cli_json("reservations", cwd=project) == []
    assert check(install, "x.txt", project, AGENT_B)["allowed"] is True

    second_api = mock_api([calls(write(x, "from session 2\n")), "Session 2 wrote x.txt."])
    second = run_claude("Write x.txt.", server_url=second_api.url, agent_name=AGENT_B, **options)

    ok(second, second_api, install)
    (wrote,) = second_api.tool_results()
    assert not wrote.is_error and "has been updated successfully" in wrote.content
    assert x.read_text() == "from session 2\n"
    assert leases(ledger) == {}  # session 2's claim replaced the dead lease; SessionEnd ended it
    assert _denials(install) == []


# --------------------------------------------------------------------------- 5. worktrees


def test_worktree_is_refused_a_path_reserved_from_the_main_checkout(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    (project / "README.md").write_text("readme\n")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "initial")
    git(project, "worktree", "add", "-q", "../wt", "-b", "feature")
    worktree = (project.parent / "wt").resolve()
    ledger = ledger_dir(worktree)
    assert ledger == project / ".git" / "agent-hooks"

    reserved = install.cli(
        "reserve", "src/**", "--reason", "farmhand-42", cwd=project, agent_name=AGENT_A
    )
    assert "reserved src/** (exclusive" in reserved.stdout
    from_worktree = install.cli_json("reservations", cwd=worktree)
    assert [(r["agent"], r["pattern"], r["state"]) for r in from_worktree] == [
        (AGENT_A, "src/**", "person")
    ]
    app, doc = worktree / "src" / "app.py", worktree / "docs" / "x.md"
    seen: dict[str, Any] = {}
    api = mock_api(
        [
            calls(write(app, "app = 1\n")),
            calls(write(doc, "notes\n")),
            snapshot(ledger, seen, "wrote docs"),
            "Worked in the worktree.",
        ]
    )

    result = run_claude(
        "Work in the worktree.",
        cwd=worktree,
        home=claude_home,
        server_url=api.url,
        agent_name=AGENT_B,
        extra_env=install.claude_env(),
        binary=claude_bin,
    )

    ok(result, api, install)
    refused, passed = api.tool_results()
    assert refused.is_error and not passed.is_error
    assert refused.content.startswith(
        "PreToolUse:Write hook error: agent-hooks: src/app.py is reserved by another agent: "
        f'agent "{AGENT_A}" holds src/** (exclusive, reason: farmhand-42, '
    ), refused.content
    assert not app.exists() and doc.read_text() == "notes\n"
    # B's lease on docs/x.md, taken in the worktree, is in the one ledger of the repository.
    (lease,) = seen["wrote docs"]["leases"]["docs/x.md"]
    # The work tree is named by its id in the repository (the same through any path to
    # it), and by the path the holder reached it through, for people.
    assert (lease["writer"], lease["worktree"], lease["worktree_path"], lease["branch"]) == (
        AGENT_B,
        "worktrees/wt",
        str(worktree),
        "feature",
    )
    assert not (project / ".git" / "worktrees" / "wt" / "agent-hooks").exists()
    (denial,) = _denials(install)
    assert f"agent={AGENT_B} event=PreToolUse denied Write: agent-hooks: src/app.py" in denial
