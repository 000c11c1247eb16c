"""agent_hooks.git_guard.commit_check with real git: what a commit may stage besides
reservations (issue 18: another writer's lease in this work tree refuses, its holder
named; the committer's own never does) and the holders that no longer count (issue
21: a dead holder, a holder on another host, the committer's own reservations next
to another agent's).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from agent_hooks import liveness, repository, writers
from agent_hooks.leases import lease_release, lease_store, writer_cards
from agent_hooks.ledger import reservation_store
from guard_repo import BYPASS_WORDS, Repo, init_repo, install
from hook_runner import HookRunner
from pids import dead_pid


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """main: README.md, src/app.py, docs/d.md; the guard installed."""
    home = tmp_path / "home"
    home.mkdir()
    repo = init_repo(tmp_path / "repo", home)
    repo.commit_files("first", {"README.md": "r\n", "src/app.py": "v1\n", "docs/d.md": "d1\n"})
    install(repo)
    return repo


def half_done(repo: Repo) -> None:
    """bob is editing src/app.py (his lease, his half-done change on disk); alice
    has changed README.md."""
    repo.lease("bob", "src/app.py")
    repo.write("src/app.py", "bob's half-done edit\n")
    repo.write("README.md", "alice's change\n")


# --- leases ---------------------------------------------------------------------------


def test_add_all_and_commit_refuses_another_writers_leased_file(repo: Repo) -> None:
    half_done(repo)
    repo.git("add", "-A")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert repo.commits() == 1
    text = proc.stderr
    assert "commit refused: it stages files another agent holds" in text
    assert '  - src/app.py (modified): being changed by agent "bob" (last write ' in text
    assert "README.md" not in text
    assert "git restore --staged" in text and "stop and ask the user" in text
    assert "a lease ends when its holder finishes or after 10 min without a write" in text
    assert not [word for word in BYPASS_WORDS if word in text]  # an agent reads this
    log = (repo.home / ".claude" / "agent-hooks.log").read_text()
    assert "event=guard refused commit in " in log and "src/app.py (bob)" in log
    repo.git("restore", "--staged", "src/app.py")
    assert repo.commit("alice").returncode == 0  # the rest goes in
    assert repo.out("show", "--name-only", "--format=", "HEAD") == "README.md"


REFUSAL = [
    "agent-hooks guard: commit refused: it stages files another agent holds:",
    r'  - docs/d\.md \(modified\): agent "carol" holds docs/\*\* \(exclusive, reason: '
    r"farmhand-42, (59|60) min left\)",
    r'  - src/app\.py \(modified\): being changed by agent "bob" \(last write \d+ s ago; its '
    r"lease ends when it finishes or after 10 min without a write\)",
    "Choose one:",
    r"- unstage them \(`git restore --staged <file>`\) and commit the rest;",
    r"- run `agent-hooks reservations` to see who holds what, and work on something else "
    r"meanwhile;",
    r"- wait: a reservation ends when its holder releases it or it expires \(the soonest in "
    r"(59|60) min\); a lease ends when its holder finishes or after 10 min without a write;",
    r"- if this commit must go in now, stop and ask the user how to proceed\.",
]
WARNING_HEAD = "agent-hooks guard (warn-only): this commit stages files another agent holds:"
WARNING_TAIL = "The commit goes ahead (warn-only mode); make sure the holders know."


def test_the_refusal_says_exactly_what_is_held_and_what_to_do(repo: Repo) -> None:
    """The whole message an agent reads, line by line: each staged file held, by whom
    and until when, and the choices (a reservation and a lease, so every part shows)."""
    repo.lease("bob", "src/app.py")
    repo.write("src/app.py", "bob's half-done edit\n")
    repo.reserve("carol", "docs/**")
    repo.write("docs/d.md", "alice's change\n")
    repo.git("add", "-A")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == len(REFUSAL), proc.stderr
    for line, expected in zip(lines, REFUSAL, strict=True):
        assert re.fullmatch(expected, line), (line, expected)
    install(repo, "warn")
    warned = repo.commit("alice").stderr.splitlines()
    assert warned[0] == WARNING_HEAD and warned[-1] == WARNING_TAIL
    assert all(re.fullmatch(e, w) for w, e in zip(warned[1:3], REFUSAL[1:3], strict=True))


def test_every_holder_of_one_path_is_named_on_its_line(repo: Repo) -> None:
    """A file reserved by one agent and leased by another: one line names both, the
    reservation first, joined by "; "."""
    repo.reserve("carol", "src/**")
    repo.lease("bob", "src/app.py")
    repo.write("src/app.py", "bob's half-done edit\n")
    repo.git("add", "-A")
    proc = repo.commit("alice")
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("  - src/app.py"))
    assert re.fullmatch(
        r'  - src/app\.py \(modified\): agent "carol" holds src/\*\* \(.*\); '
        r'being changed by agent "bob" \(.*\)',
        line,
    ), line


def test_a_commit_skipping_pre_commit_is_refused_at_the_branch_update(repo: Repo) -> None:
    half_done(repo)
    repo.git("add", "-A")
    proc = repo.commit("alice", "--no-verify")
    assert proc.returncode != 0 and repo.commits() == 1
    assert "branch main not moved" in proc.stderr
    assert 'src/app.py (modified): being changed by agent "bob"' in proc.stderr


@pytest.mark.parametrize(
    ("conversation", "agent_id", "refused"),
    [("c-1", None, False), ("c-1", "a1b2c3d4", False), ("c-2", None, True), ("c-2", "a9", True)],
    ids=["own", "own-subagent", "another-pane", "another-panes-subagent"],
)
def test_the_committers_own_leases_never_refuse(
    repo: Repo, conversation: str, agent_id: str | None, refused: bool
) -> None:
    """alice's own lease, and her subagent's in her conversation (the CLI a subagent
    runs cannot be told from its parent's: ADR-0014), never refuse her commit; a
    second conversation with her AGENT_NAME (another pane) is another writer."""
    repo.lease("alice", "src/app.py", conversation, agent_id)
    repo.write("src/app.py", "mine\n")
    repo.git("add", "-A")
    proc = repo.commit("alice", CLAUDE_CODE_SESSION_ID="c-1")
    assert (proc.returncode != 0) == refused, proc.stderr
    if refused:
        assert "src/app.py (modified): being changed by " in proc.stderr


def test_unnamed_conversations_are_writers_of_their_own(repo: Repo) -> None:
    repo.lease(None, "src/app.py", "conv-a")
    repo.write("src/app.py", "a's edit\n")
    repo.git("add", "-A")
    refused = repo.commit(None, CLAUDE_CODE_SESSION_ID="conv-b")
    assert refused.returncode != 0
    assert "being changed by the unnamed agent of conversation conv-a" in refused.stderr
    assert repo.commit(None, CLAUDE_CODE_SESSION_ID="conv-a").returncode == 0


def test_leases_that_do_not_count_never_refuse(repo: Repo, tmp_path: Path) -> None:
    """A lease whose holder is dead, one in another worktree, one that expired, and
    any lease while leases are off (0 lease minutes)."""
    repo.lease("bob", "src/app.py", holder_pid=dead_pid())
    me = writers.Writer("carol", "c-3")
    for rel, worktree, now in (
        ("docs/d.md", "worktrees/other", time.time()),
        ("README.md", repository.worktree_id(str(repo.path)), time.time() - 11 * 60),
    ):
        given = repo.rules(environ={"AGENT_HOOKS_LEASE_MINUTES": "10"}, worktree=worktree)
        lease_store.claim(given, rel, me, now, holder_pid=os.getpid())
    repo.add("src/app.py", "docs/d.md", "README.md")
    assert repo.commit("alice").returncode == 0
    repo.lease("dave", "src/app.py")
    repo.write("src/app.py", "dave's edit\n")
    repo.git("add", "-A")
    assert repo.commit("alice", AGENT_HOOKS_LEASE_MINUTES="0").returncode == 0


def test_leases_off_by_the_repositorys_setting_never_refuse(repo: Repo) -> None:
    """`lease_minutes` 0 in the repository's settings (`agent-hooks settings`), the variable
    unset: the guard reads the setting, as every hook does (one owner: lease_minutes)."""
    repo.lease("dave", "src/app.py")
    repo.write("src/app.py", "dave's edit\n")
    repo.git("add", "-A")
    assert repo.commit("alice").returncode != 0  # leases on: refused
    reservation_store.set_setting(repo.rules(), "lease_minutes", 0, time.time())
    assert repo.commit("alice").returncode == 0


def test_leases_off_refuse_nothing_while_reservations_are_checked(repo: Repo) -> None:
    """With leases off, a lease left in the ledger refuses no commit, even while another
    agent's reservation elsewhere makes the guard look at every staged file."""
    repo.lease("dave", "src/app.py")
    repo.reserve("carol", "docs/**")
    reservation_store.set_setting(repo.rules(), "lease_minutes", 0, time.time())
    repo.write("src/app.py", "dave's edit\n")
    repo.git("add", "-A")
    proc = repo.commit("alice")
    assert proc.returncode == 0, proc.stderr


def test_a_subagents_lease_is_named_as_its_card_describes_it(repo: Repo) -> None:
    """The refusal names a subagent holder by what the Agent call said it does (its
    writer card), as the edit gate does."""
    sub = writers.Writer("bob", "c-1", "a4d71bd7e0")
    lease_release.describe_writer(
        repo.ledger, sub, description="fix login", name=None, now=time.time()
    )
    repo.lease("bob", "src/app.py", "c-1", "a4d71bd7e0")
    repo.write("src/app.py", "the subagent's edit\n")
    repo.git("add", "-A")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert 'being changed by the subagent "fix login" (a4d71bd7) of agent "bob"' in proc.stderr


def test_a_lease_the_edit_gate_took_refuses_the_commit(repo: Repo) -> None:
    """bob's Write through the real PreToolUse hook leases the file as the gate
    records leases; alice's `git add -A && git commit` then meets it."""
    bob = HookRunner(repo.home, repo.path)
    payload = bob.payload("PreToolUse_Write")
    payload["tool_input"] = {"file_path": str(repo.path / "src/app.py"), "content": "b\n"}
    result = bob("PreToolUse", payload, agent="bob")
    assert result.code == 0 and result.out is None, result
    repo.write("src/app.py", "bob's half-done edit\n")
    repo.git("add", "-A")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert 'src/app.py (modified): being changed by agent "bob"' in proc.stderr


# --- reservations (issue 21) ------------------------------------------------------------


def test_the_committers_own_reservations_never_refuse_next_to_anothers(repo: Repo) -> None:
    repo.reserve("alice", "src/**")
    repo.reserve("bob", "docs/**")
    repo.add("src/app.py")
    assert repo.commit("alice").returncode == 0
    repo.add("src/app.py", "docs/d.md")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert 'docs/d.md (modified): agent "bob" holds docs/**' in proc.stderr
    assert "src/app.py" not in proc.stderr and "alice" not in proc.stderr


def test_a_dead_holders_reservation_refuses_only_with_keep(repo: Repo) -> None:
    gone = {"pid": dead_pid(), "start": None, "host": liveness.host()}
    repo.reserve("bob", "src/**", holder=gone)
    repo.add("src/app.py")
    assert repo.commit("alice").returncode == 0
    repo.reserve("bob", "docs/**", holder=gone, keep=True)
    repo.add("docs/d.md")
    proc = repo.commit("alice")
    assert proc.returncode != 0 and 'agent "bob" holds docs/**' in proc.stderr


def test_a_holder_on_another_host_is_judged_by_the_repositorys_lease_minutes(
    repo: Repo,
) -> None:
    """With `lease_minutes` 30 in the repository's settings, a holder on another host
    heard from 15 minutes ago still counts (the default 10 would have let it go)."""
    remote = {"pid": 4242, "start": 1, "host": "other-box/boot-id/pid:[4026531836]"}
    repo.reserve("bob", "src/**", holder=remote)
    reservation_store.set_setting(repo.rules(), "lease_minutes", 30, time.time())
    writer_cards.heartbeat(repo.ledger, writers.Writer("bob", None), None, time.time())
    heard = time.time() - 15 * 60
    os.utime(writer_cards.writer_path(repo.ledger, "bob"), (heard, heard))
    repo.add("src/app.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0 and 'agent "bob" holds src/**' in proc.stderr


def test_a_holder_on_another_host_refuses_while_it_was_heard_from(repo: Repo) -> None:
    """Its process cannot be judged from here: it counts while its owner's card was
    heard from within a lease's time (10 min here), and not after."""
    remote = {"pid": 4242, "start": 1, "host": "other-box/boot-id/pid:[4026531836]"}
    repo.reserve("bob", "src/**", holder=remote)
    writer_cards.heartbeat(repo.ledger, writers.Writer("bob", None), None, time.time())
    card = writer_cards.writer_path(repo.ledger, "bob")
    repo.add("src/app.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0 and 'agent "bob" holds src/**' in proc.stderr
    silent = time.time() - writer_cards.heartbeat_window(10) - 5
    os.utime(card, (silent, silent))
    assert repo.commit("alice").returncode == 0
