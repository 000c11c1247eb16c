"""Issue 33, "Why" 3, against the real hooks: agent proj__cc_1 (A) reserved src/**
for two hours and edited src/app.py, its lease lapsed inside the reservation (a long
test run) or leases off (`settings lease-minutes 0`). Agent proj__cc_2's (B's)
whole-tree rewrite is refused naming A's file, the edit left where it was; once
A's work is committed, A's reservation expired or A's process died, the same
command is allowed and real git runs it. A real repository, the real entry script,
payloads on stdin, A's client a real process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import test_git_forms
from test_git_commands import refused
from test_git_forms import WORK, bash, sh
from test_imports import imported

from agent_hooks import liveness
from agent_hooks.leases import lease_store
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from git_repo import git
from hook_runner import HookRunner

A = "proj__cc_1"
repo = test_git_forms.repo  # the same project (fixtures)
run = test_git_forms.run
# (B's command, whether it rewrites the whole work tree — allowed while the reserved
# files are unmodified — or writes into A's reservation as a path, refused by the
# reservation itself, modified files or not)
COMMANDS = {
    "git stash": True,
    "git reset --hard": True,
    "git checkout -- .": False,
    "git restore :/": False,
}


@pytest.fixture
def client() -> Iterator[subprocess.Popen[bytes]]:
    """A's client process, which holds A's reservation."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc
    proc.kill()
    proc.wait()


def reserve(
    run: HookRunner, client: subprocess.Popen[bytes], *, ttl: int = 7200, agent: str = A
) -> None:
    """A reserves src/** on behalf of its client process."""
    outcome = reservation_store.reserve(
        Repo(str(run.project), str(run.state_dir)), Writer(agent, None),
        [("src/**", pattern.compile("src/**"))], time.time(),
        reason="long test run", ttl=ttl, holder=liveness.process(client.pid),
    )  # fmt: skip
    assert outcome.changed


def edit(run: HookRunner, client: subprocess.Popen[bytes], leases: str) -> None:
    """A edits src/app.py: its lease lapsed an hour ago (`lapsed`), or none taken
    (`off`: the repository's setting lease-minutes 0, A's Write through the hook)."""
    target = run.project / "src/app.py"
    repo = Repo(str(run.project), str(run.state_dir))
    if leases == "lapsed":
        lease_store.claim_many(
            repo, ["src/app.py"], Writer(A, None), time.time() - 3600, holder_pid=client.pid
        )
    else:
        reservation_store.set_setting(repo, "lease_minutes", 0, time.time())
        assert reservation_store.listing(repo, time.time()).settings["lease_minutes"] == 0
        payload = run.payload(
            "PreToolUse_Write", tool_input={"file_path": str(target), "content": WORK}
        )
        assert run("PreToolUse", payload, agent=A).out is None
    target.write_text(WORK)
    leased = run.project / ".git/agent-hooks/leases"
    assert leases == "lapsed" or not (leased.is_dir() and any(leased.iterdir()))


def mine(run: HookRunner) -> None:
    """B's own uncommitted edit, outside A's reservation, which B's command may sweep."""
    (run.project / "docs/guide.md").write_text("b's edit\n")


@pytest.mark.parametrize("leases", ["lapsed", "off"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_rewrite_is_refused_while_the_reserved_file_is_modified(
    run: HookRunner, client: subprocess.Popen[bytes], command: str, leases: str
) -> None:
    reserve(run, client)
    edit(run, client, leases)
    mine(run)
    reason = refused(bash(run, command))
    assert 'agent "proj__cc_1"' in reason
    assert 'agent "proj__cc_2"' not in reason
    if COMMANDS[command]:  # the modified file, named with its reservation
        assert 'src/app.py (agent "proj__cc_1", who reserved src/**)' in reason
    else:  # a write into the reservation, named
        assert 'agent "proj__cc_1" holds src/** (exclusive' in reason
    assert (run.project / "src/app.py").read_text() == WORK


@pytest.mark.parametrize("command", [c for c, whole in COMMANDS.items() if whole])
def test_a_rewrite_runs_while_the_reserved_files_are_unmodified(
    run: HookRunner, client: subprocess.Popen[bytes], command: str
) -> None:
    reserve(run, client)
    os.utime(run.project / "src/app.py", (1, 1))  # touched, the same content
    mine(run)
    assert bash(run, command).out is None
    sh(command, run.project)
    assert (run.project / "docs/guide.md").read_text() == "committed\n"  # it ran


@pytest.mark.parametrize("command", COMMANDS)
def test_a_rewrite_runs_once_the_holders_work_is_committed(
    run: HookRunner, client: subprocess.Popen[bytes], command: str
) -> None:
    reserve(run, client, ttl=1)
    edit(run, client, "off")
    git(run.project, "commit", "-q", "-am", "A's work")
    time.sleep(1.1)  # the reservation expired (for the commands that write into it)
    mine(run)
    assert bash(run, command).out is None
    sh(command, run.project)
    assert (run.project / "src/app.py").read_text() == WORK  # committed: nothing lost


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("end", ["expired", "died"])
def test_a_rewrite_runs_once_the_reservation_expired_or_its_holder_died(
    run: HookRunner, client: subprocess.Popen[bytes], command: str, end: str
) -> None:
    reserve(run, client, ttl=1 if end == "expired" else 7200)
    edit(run, client, "off")
    mine(run)
    if end == "expired":
        time.sleep(1.1)
    else:
        client.kill()
        client.wait()
    assert bash(run, command).out is None
    sh(command, run.project)
    assert (run.project / "docs/guide.md").read_text() == "committed\n"  # it ran


def test_a_rewrite_over_unmodified_reserved_files_loads_only_the_index_reader(
    run: HookRunner, client: subprocess.Popen[bytes]
) -> None:
    """The hot path of the check (ADR-0005): git's index read and each reserved file
    `lstat`ed; neither what names a reservation with work (`reservation`, and
    `pattern_overlap` under it) nor SHA-1 (no stat data moved) is loaded."""
    reserve(run, client, agent="proj__cc_2")  # `imported` runs proj__cc_1
    payload = run.payload("PreToolUse_Bash", tool_input={"command": "git stash"})
    modules = imported(run, "PreToolUse", payload)
    assert "agent_hooks.gate.git_index" in modules
    for name in ("agent_hooks.reservations.reservation", "_sha1", "hashlib"):
        assert name not in modules, name
