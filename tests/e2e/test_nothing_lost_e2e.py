"""Nothing is lost without a word (issue 18), end to end: agent-hooks installed by the real
``./install.sh``, two real ``claude -p`` conversations with their own ``AGENT_NAME`` in one
checkout, each against its own scripted mock API.

Agent A (``proj__cc_1``) holds ``src/app.py`` by an edit; agent B (``proj__cc_2``) then does
something that would change it. Either B's command is refused before it runs (its model reads
why, naming A), or it runs and A is told at its next hook that the file changed under it. Each
test asserts on the files on disk, on the tool results the models were sent, and on what A's
model read at its next request. The two conversations are ordered by ``wait_until`` steps of
one mock on the other (or on a file), never by sleeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .mock_api import calls
from .mock_routes import MAIN, all_of, file_exists, turns_done, wait_until
from .nothing_lost_support import (
    A_EDIT,
    AGENT_A,
    AGENT_B,
    ORIGINAL,
    Pair,
    act,
    after,
    bash,
    file_reads,
    read,
    refused_bash,
    run_pair,
    shared_repo,
    told_after,
)
from .writers_support import denied, git, leases, ledger_dir, ok, on, snapshot, write

if TYPE_CHECKING:
    from .agent_hooks_install import Installation
    from .conftest import InstallAgentHooks, MockApiFactory

HOLDER = f'agent "{AGENT_A}"'


def _ok(pair: Pair, install: Installation) -> None:
    ok(pair.a, pair.a_api, install)
    ok(pair.b, pair.b_api, install)


# --------------------------------------------------------------------------- 1. git checkout FILE


def test_git_checkout_of_a_held_file_is_refused_before_it_runs(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """Without `--`, git reads src/app.py as a path (it names one): a write of A's file,
    refused before git runs, naming A."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    a_api = mock_api()
    b_api = mock_api(
        [
            after(a_api, 1, "A wrote src/app.py"),
            calls(bash("git checkout src/app.py")),
            "B done.",
        ]
    )
    a_api.add(
        calls(write(app, A_EDIT)),
        after(b_api, 1, "B tried git checkout"),
        calls(read(app)),
        "A done.",
    )

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api)

    _ok(pair, install)
    (refusal,) = b_api.tool_results()
    reason = refused_bash(refusal)
    assert reason.startswith(f"agent-hooks: src/app.py is being changed by {HOLDER}: "), reason
    assert "This Bash command would write src/app.py" in reason
    assert app.read_text() == A_EDIT  # git never ran
    wrote, looked = a_api.tool_results()
    assert not wrote.is_error and not looked.is_error
    assert "agent-hooks" not in told_after(a_api, looked)  # nothing changed under A
    assert git(project, "status", "--porcelain") == " M src/app.py\n"
    assert leases(ledger_dir(project)) == {}  # both conversations ended: released


# --------------------------------------------------------------------------- 2. git stash, branches


def test_git_commands_rewriting_the_shared_work_tree_are_refused_naming_the_held_file(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """B holds src/b.py, A holds src/app.py: B's plain `git stash` and a branch switch are
    refused naming A's file and the safe forms; the safe form for B's own file runs."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, mine = shared_repo(project)
    a_api = mock_api()
    b_api = mock_api(
        [
            after(a_api, 1, "A wrote src/app.py"),
            calls(write(mine, "b = 2\n")),
            calls(bash("git stash")),
            calls(bash("git checkout -b x && git checkout main")),
            calls(bash("git stash push -- src/b.py")),
            "B done.",
        ]
    )
    a_api.add(
        calls(write(app, A_EDIT)),
        after(b_api, 4, "B's git commands ran"),
        calls(read(app)),
        "A done.",
    )

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api)

    _ok(pair, install)
    wrote, stash, switch, own_stash = b_api.tool_results()
    assert not wrote.is_error
    held = f"src/app.py ({HOLDER})"
    for result, what in ((stash, "git stash"), (switch, "git checkout main")):
        reason = refused_bash(result)
        assert reason.startswith(
            f"agent-hooks: `{what}` would change or sweep away files other writers are changing "
            f"in this work tree, whose work is not committed yet: {held}.\n"
        ), reason
        assert "`git stash push -- <your paths>`" in reason
        assert "src/b.py" not in reason  # B's own file is no one else's
    assert not own_stash.is_error, own_stash.content
    # A's edit stays, on the branch it was made on; only B's file was stashed.
    assert app.read_text() == A_EDIT
    assert mine.read_text() == "b = 1\n"
    assert git(project, "branch", "--show-current") == "main\n"
    assert git(project, "branch", "--list", "x") == ""  # the && chain never ran
    assert len(git(project, "stash", "list").splitlines()) == 1
    assert git(project, "stash", "show", "--name-only", "stash@{0}") == "src/b.py\n"
    wrote_a, looked = a_api.tool_results()
    assert not wrote_a.is_error and not looked.is_error
    assert "agent-hooks" not in told_after(a_api, looked)  # nothing changed under A
    denials = [line for line in install.log_lines() if " denied " in line]
    assert len(denials) == 2 and all(f"agent={AGENT_B} " in line for line in denials), denials


# --------------------------------------------------------------------------- 3. default, acceptEdits

PYTHON_WRITE = "python3 -c \"open('src/app.py','w').write('by B')\""


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_an_interpreter_write_the_gate_cannot_see_is_told_to_the_holder_and_the_writer(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    mode: str,
) -> None:
    """In these modes the client sends no bashEditDiff: B's `python3 -c` runs (the parser cannot
    see its write), and A's next hook finds its file changed — inside B's command, which A is
    told (issue 33, ADR-0027), and B hears it at its next hook. B's visible write is read from
    the command itself: B leases it and its trail has it."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    new = project / "src" / "new.py"
    seen: dict[str, Any] = {}
    a_api = mock_api()
    b_api = mock_api(
        [
            after(a_api, 1, "A wrote src/app.py"),
            calls(bash(PYTHON_WRITE)),
            after(a_api, 2, "A's next hook found the change"),
            calls(bash("echo x > src/new.py")),
            snapshot(ledger_dir(project), seen, "B wrote new.py"),
            "B done.",
        ]
    )
    a_api.add(
        calls(write(app, A_EDIT)),
        after(b_api, 1, "B's python3 -c ran"),
        calls(read(project / "src" / "b.py")),
        after(b_api, 2, "B's echo ran"),
        "A done.",
    )
    # Nobody is asked in -p: the rule lets B's Bash commands run in these modes.
    b_args = ["--permission-mode", mode, "--allowedTools", "Bash"]

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api, b_args=b_args)

    _ok(pair, install)
    python, echo = b_api.tool_results()
    assert not python.is_error and not echo.is_error, (python, echo)
    assert app.read_text() == "by B" and new.read_text() == "x\n"
    assert "agent-hooks" not in told_after(b_api, python)  # nothing seen yet: A had not looked
    wrote, looked = a_api.tool_results()
    assert not wrote.is_error and not looked.is_error
    message = told_after(a_api, looked)
    writer = f'agent "{AGENT_B}"'
    assert (
        f"agent-hooks: src/app.py, which you are changing, was changed by {writer}'s shell "
        "command at "
    ) in message, message
    assert (
        "after your last write to it — the change fell inside that command, which ran from "
    ) in message, message
    assert "Re-read it before you edit it" in message, message
    assert "agent-hooks restore src/app.py" in message  # its kept version: the way back
    assert f"; {writer} has been told." in message, message
    assert "someone else" not in message
    assert f"held file src/app.py of {AGENT_A} changed by {writer}'s shell command" in "\n".join(
        install.log_lines()
    )
    heard = told_after(b_api, echo)  # B's next hook: what its command did, and to whom
    assert (
        f"agent-hooks: your shell command changed src/app.py, which {HOLDER} is changing (at "
    ) in heard, heard
    assert f"while the command ran); {HOLDER} has been told. Leave that file to its holder" in heard
    # Item 3: the write B's command visibly made is B's: leased, and in B's trail.
    (lease,) = seen["B wrote new.py"]["leases"]["src/new.py"]
    assert (lease["writer"], lease["source"]) == (AGENT_B, "bash")
    assert str(new) in install.state(AGENT_B)["files_modified"]
    assert str(app) not in install.state(AGENT_B)["files_modified"]


# --------------------------------------------------------------------------- 4. run_in_background


def test_a_background_command_writing_a_held_file_is_told_to_the_holder(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """A run_in_background Bash gets no bashEditDiff (its PostToolUse comes when it starts):
    the holder hears of the change at its next hook — put down to B's command when it wrote
    within the slack of its PostToolUse, else to someone else (ADR-0027: a background
    command's later writes fall outside its window)."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    b_wrote = file_reads(app, "by B")
    a_api = mock_api()
    b_api = mock_api(
        [
            after(a_api, 1, "A wrote src/app.py"),
            calls(bash(PYTHON_WRITE, background=True)),
            wait_until(b_wrote),  # the command ran before this conversation ends
            "B done.",
        ]
    )
    a_api.add(
        calls(write(app, A_EDIT)),
        wait_until(all_of(on(b_api, turns_done(MAIN, 1), "B launched it"), b_wrote)),
        calls(read(project / "src" / "b.py")),
        "A done.",
    )

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api)

    _ok(pair, install)
    launched = b_api.tool_results()[0]
    assert not launched.is_error and "background" in launched.content.lower(), launched.content
    assert app.read_text() == "by B"
    wrote, looked = a_api.tool_results()
    assert not wrote.is_error and not looked.is_error
    message = told_after(a_api, looked)
    changed = "agent-hooks: src/app.py, which you are changing, was changed by "
    assert (
        f"{changed}someone else" in message
        or f'{changed}agent "{AGENT_B}"\'s shell command' in message
    ), message


def test_a_background_command_visibly_writing_a_file_leases_it_when_it_starts(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
) -> None:
    """The PostToolUse of a background command comes when it starts, without bashEditDiff: the
    writes its command line shows are B's from then on, so A's edit of the file, tried before the
    command gets to it, is refused naming B, and the command's write overwrites no one's work."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    go = tmp_path / "go"
    b_wrote = file_reads(app, "by B\n")
    seen: dict[str, Any] = {}
    a_api = mock_api()
    b_api = mock_api(
        [
            calls(
                bash(
                    f'while [ ! -e {go} ]; do sleep 0.05; done; echo "by B" > src/app.py',
                    background=True,
                )
            ),
            wait_until(b_wrote),  # the command ran before this conversation ends
            "B done.",
        ]
    )
    a_api.add(
        after(b_api, 1, "B launched its command"),
        calls(write(app, A_EDIT)),
        snapshot(ledger_dir(project), seen, "A tried", app),
        act(go.touch, "let B's command write"),
        wait_until(b_wrote),
        "A done.",
    )

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api)

    _ok(pair, install)
    (launched,) = b_api.tool_results()
    assert not launched.is_error, launched.content
    (refused,) = a_api.tool_results()
    denied(refused, "src/app.py", f'agent "{AGENT_B}"')
    assert seen["A tried"]["files"] == {"app.py": ORIGINAL}
    (lease,) = seen["A tried"]["leases"]["src/app.py"]
    assert (lease["writer"], lease["source"]) == (AGENT_B, "bash")
    assert app.read_text() == "by B\n"


# --------------------------------------------------------------------------- 5. a long command


def test_a_long_command_that_overwrites_an_edit_made_while_it_ran_is_told_to_both(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
) -> None:
    """bypassPermissions (the client reports the command's changed files): B's command starts,
    A edits src/app.py while it runs, then the command rewrites it. The client blames the
    command for the file; it overwrote A's edit, so B is told, and A hears who did it."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    started, go = tmp_path / "started", tmp_path / "go"
    long = f"touch {started} && while [ ! -e {go} ]; do sleep 0.05; done && {PYTHON_WRITE}"
    a_api = mock_api()
    b_api = mock_api([calls(bash(long)), "B done."])
    a_api.add(
        wait_until(file_exists(started)),  # B's command runs
        calls(write(app, A_EDIT)),
        act(go.touch, "A's edit is recorded: let B's command go on"),
        after(b_api, 1, "B's command ended"),
        calls(read(project / "src" / "b.py")),
        "A done.",
    )

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api)

    _ok(pair, install)
    (ran,) = b_api.tool_results()
    assert not ran.is_error, ran.content
    assert app.read_text() == "by B"
    warned = told_after(b_api, ran)
    assert (
        "agent-hooks: your last shell command changed files that another writer holds: "
        f"src/app.py ({HOLDER} is changing it). If your command made these changes, undo them"
    ) in warned, warned
    wrote, looked = a_api.tool_results()
    assert not wrote.is_error and not looked.is_error
    message = told_after(a_api, looked)
    assert (
        f'agent-hooks: src/app.py, which you are changing, was changed by agent "{AGENT_B}"\'s '
        "shell command at "
    ) in message, message


# --------------------------------------------------------------------------- 6. the holder's command


@pytest.mark.parametrize("b_mode", ["default", "bypassPermissions"])
def test_a_write_landing_while_the_holders_own_command_runs_is_told_to_the_holder(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmp_path: Path,
    b_mode: str,
) -> None:
    """A holds src/app.py and runs a long command of its own (bypassPermissions: the client
    reports what changed while it ran); B's `python3 -c` rewrites src/app.py meanwhile. In
    default mode B's command reports nothing, so A is the only one who can hear of it; in
    bypassPermissions mode B is told, and A should be too."""
    install = install_agent_hooks()
    project = git_project.resolve()
    app, _ = shared_repo(project)
    started, go = tmp_path / "started", tmp_path / "go"
    a_api = mock_api(
        [
            calls(write(app, A_EDIT)),
            calls(bash(f"touch {started} && while [ ! -e {go} ]; do sleep 0.05; done")),
            "A done.",
        ]
    )
    b_api = mock_api(
        [
            wait_until(file_exists(started)),  # A's command runs
            calls(bash(PYTHON_WRITE)),
            act(go.touch, "B's write is done: let A's command end"),
            "B done.",
        ]
    )
    b_args = ["--permission-mode", b_mode, "--allowedTools", "Bash"]

    pair = run_pair(claude_bin, claude_home, project, install, a_api, b_api, b_args=b_args)

    _ok(pair, install)
    (python,) = b_api.tool_results()
    assert not python.is_error, python.content
    assert app.read_text() == "by B"
    if b_mode == "bypassPermissions":  # B's command reports the file: B is told
        assert (
            "agent-hooks: your last shell command changed files that another writer holds: "
            f"src/app.py ({HOLDER} is changing it)."
        ) in told_after(b_api, python)
    else:
        assert "agent-hooks" not in told_after(b_api, python)
    wrote, waited = a_api.tool_results()
    assert not wrote.is_error and not waited.is_error, waited.content
    message = told_after(a_api, waited)
    assert "agent-hooks: src/app.py, which you are changing, " in message, message
