"""gate.shell_gate.decide for a git command rewriting the whole work tree while another
writer's live exclusive reservation holds uncommitted work (issue 33, "Why" 3): the
work is known from git's index (gate/git_index.py), leases on or off, lapsed or live.
In-process over a real repository made by git and real state in a tmp dir (as
tests/unit/gate/test_shell_gate.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_shell_gate import allowed, decide, refused

from agent_hooks.gate import git_index
from agent_hooks.leases import lease_messages, lease_store
from agent_hooks.ledger.repo import Repo
from gate_calls import CAROL, ME, NOW, TARGET, lease_for, reserve
from git_repo import git, init
from pids import dead_pid

OFF = {"AGENT_HOOKS_LEASE_MINUTES": "0"}
CAROLS = 'agent "carol", who reserved src/**'
# (a command rewriting the whole work tree, as the refusal names it)
REWRITES = {
    "git stash": "git stash",
    "git reset --hard": "git reset --hard",
    "git checkout -f": "git checkout -f",
    "git checkout main": "git checkout main",
    "git read-tree -u --reset HEAD": "git read-tree -u --reset",
    "git checkout-index -f -a": "git checkout-index -f -a",
    # from the shell's own input: the selection cannot be known
    "git restore --pathspec-from-file=-": "git restore --pathspec-from-file=-",
}


@pytest.fixture
def project(tmp_path: Path) -> str:
    top = init(tmp_path / "proj")
    for rel in (TARGET, "src/lib/util.py", "docs/a.md"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("committed\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "files")
    return os.path.realpath(top)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return os.path.realpath(tmp_path) + "/home/.claude"


def edit(project: str, rel: str = TARGET) -> None:
    Path(project, rel).write_text("work in progress\n")


@pytest.mark.parametrize("command", REWRITES)
def test_a_rewrite_is_refused_over_a_modified_file_in_anothers_reservation_leases_off(
    state_dir: str, project: str, command: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    edit(project)
    reason = refused(decide(state_dir, project, command, environ=OFF))
    assert reason == lease_messages.tree_rewrite_message(
        REWRITES[command], [f"{TARGET} ({CAROLS})"]
    )


def test_a_rewrite_is_refused_once_the_holders_lease_lapsed_inside_its_reservation(
    state_dir: str, project: str
) -> None:
    """The issue's case: the 10-minute lease of the edit lapsed, the 2-hour
    reservation lives on (a long test run)."""
    reserve(state_dir, project, "carol", "src/**", ttl=7200)
    repo = Repo(project, state_dir, {"AGENT_HOOKS_LEASE_MINUTES": "10"})
    lease_store.claim_many(repo, [TARGET], CAROL, NOW - 3600, holder_pid=os.getpid())
    edit(project)
    reason = refused(decide(state_dir, project, "git stash"))
    assert reason == lease_messages.tree_rewrite_message("git stash", [f"{TARGET} ({CAROLS})"])


def test_a_live_lease_and_a_reserved_modified_file_are_named_each_once(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    lease_for(state_dir, project, TARGET, CAROL)
    edit(project)
    edit(project, "src/lib/util.py")
    reason = refused(decide(state_dir, project, "git stash"))
    assert reason == lease_messages.tree_rewrite_message(
        "git stash", [f'{TARGET} (agent "carol")', f"src/lib/util.py ({CAROLS})"]
    )


@pytest.mark.parametrize("command", REWRITES)
def test_a_rewrite_is_allowed_while_the_reserved_files_are_unmodified(
    state_dir: str, project: str, command: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    os.utime(Path(project, TARGET), (1, 1))  # touched, not changed
    edit(project, "docs/a.md")  # modified, but nobody's reservation
    allowed(decide(state_dir, project, command, environ=OFF))


def test_a_rewrite_is_allowed_once_the_holder_committed(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**")
    edit(project)
    refused(decide(state_dir, project, "git stash", environ=OFF))
    git(Path(project), "commit", "-q", "-am", "carol's work")
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_staged_work_in_a_reservation_refuses_naming_its_directory(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/lib/**")
    edit(project, "src/lib/util.py")
    git(Path(project), "add", "src/lib/util.py")  # the work tree as the index: staged only
    reason = refused(decide(state_dir, project, "git reset --hard", environ=OFF))
    held = ['src/lib/ (work staged in git\'s index; agent "carol", who reserved src/lib/**)']
    assert reason == lease_messages.tree_rewrite_message("git reset --hard", held)


def test_a_rewrite_is_allowed_over_the_writers_own_reservation(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "bob", "src/**")  # ME is bob
    edit(project)
    allowed(decide(state_dir, project, "git stash", environ=OFF))
    assert ME.agent == "bob"


def test_a_dead_holders_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=dead_pid())
    reserve(state_dir, project, "dave", "docs/**")  # contended: the command is read
    edit(project)
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_a_holder_that_died_since_the_ledger_was_written_does_not_refuse(
    state_dir: str, project: str
) -> None:
    """Its process judged by the gate itself (the ledger tidies dead holders only
    when it is written)."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        reserve(state_dir, project, "carol", "src/**", pid=holder.pid)
        edit(project)
        assert CAROLS in refused(decide(state_dir, project, "git stash", environ=OFF))
    finally:
        holder.kill()
        holder.wait()
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_a_kept_reservation_without_a_holder_process_refuses(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=None, keep=True)
    edit(project)
    assert CAROLS in refused(decide(state_dir, project, "git stash", environ=OFF))


def test_an_expired_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", at=NOW - 700, ttl=600)
    reserve(state_dir, project, "dave", "docs/**")
    edit(project)
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_a_shared_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    """Others may write in a shared area: its modified files may be the rewriter's
    own; the holder's leases protect what it writes (ADR-0020's amendment)."""
    reserve(state_dir, project, "carol", "src/**", shared=True)
    reserve(state_dir, project, "dave", "docs/**")
    edit(project)
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_only_the_reservation_holding_the_modified_file_is_named(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/lib/**")
    reserve(state_dir, project, "dave", "docs/**")
    edit(project, "src/lib/util.py")
    reason = refused(decide(state_dir, project, "git stash", environ=OFF))
    assert "carol" in reason and "dave" not in reason
    edit(project, "src/lib/util.py")
    git(Path(project), "commit", "-q", "-am", "done")
    edit(project)  # src/app.py: in nobody's reservation
    allowed(decide(state_dir, project, "git stash", environ=OFF))


def test_beyond_the_bound_the_rewrite_is_refused_as_unsure(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    monkeypatch.setattr(git_index, "MAX_ENTRIES", 2)  # the repository holds 4 files
    reason = refused(decide(state_dir, project, "git stash", environ=OFF))
    why = "git's index lists 4 files, more than the 2 read here"
    assert reason == lease_messages.tree_rewrite_message(
        "git stash", [], [f'src/** (agent "carol": {why})']
    )
    assert reason.startswith(
        "agent-hooks: `git stash` may change or sweep away work other writers have not "
        "committed yet in what they reserved in this work tree, which cannot be checked here: "
    )


def test_an_unsure_reservation_of_a_dead_holder_does_not_refuse(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=dead_pid())
    reserve(state_dir, project, "dave", "other/**", keep=True, pid=None)
    monkeypatch.setattr(git_index, "MAX_ENTRIES", 2)
    reason = refused(decide(state_dir, project, "git stash", environ=OFF))
    assert '"dave"' in reason and '"carol"' not in reason


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("git clean -fd", "git clean"),
        ("git stash -u", "git stash -u"),
        ("git stash push --include-untracked", "git stash push -u"),
        ("git stash save -a wip", "git stash save -u"),
    ],
)
def test_a_rewrite_sweeping_untracked_files_is_refused_while_another_holds_a_reservation(
    state_dir: str, project: str, command: str, what: str
) -> None:
    """It deletes or stashes untracked files, which the index does not list: a new
    file in the reservation cannot be told from the index."""
    reserve(state_dir, project, "carol", "src/**")
    Path(project, "src/new.py").write_text("new work\n")
    reason = refused(decide(state_dir, project, command, environ=OFF))
    why = "it sweeps away untracked files, which git's index does not list"
    assert reason == lease_messages.tree_rewrite_message(
        what, [], [f'src/** (agent "carol": {why})']
    )


@pytest.mark.parametrize("command", ["git clean -n", "git stash", "git stash list -u"])
def test_the_same_without_untracked_files_runs_over_an_unmodified_reservation(
    state_dir: str, project: str, command: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    Path(project, "src/new.py").write_text("new work\n")
    allowed(decide(state_dir, project, command, environ=OFF))


def test_a_rewrite_in_a_submodule_meets_the_superprojects_reservation(
    state_dir: str, project: str, tmp_path: Path
) -> None:
    library = init(tmp_path / "library")
    (library / "y.py").write_text("v1\n")
    git(library, "add", ".")
    git(library, "commit", "-q", "-m", "lib")
    top = Path(project)
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib/sub")
    git(top, "commit", "-q", "-m", "submodule")
    sub = f"{project}/lib/sub"
    reserve(state_dir, project, "carol", "lib/sub/**")
    Path(sub, "y.py").write_text("carol's work\n")
    reason = refused(decide(state_dir, project, f"git -C {sub} stash", environ=OFF))
    assert 'y.py (agent "carol", who reserved lib/sub/**)' in reason
    # the superproject's own stash leaves the submodule's files alone (git does not recurse)
    allowed(decide(state_dir, project, "git stash", environ=OFF))
