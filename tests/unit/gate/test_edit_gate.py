"""gate.edit_gate.decide in-process: the PreToolUse decision for one file edit, each
rule of its module docstring pinned over real state in a tmp dir (a project with a
`.git` directory, a private state directory, reservations made through
reservation_store, leases through lease_store). The hooks that ask are tested in
tests/hooks/; these are the tests mutmut can credit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import liveness, repository, writers
from agent_hooks.gate import edit_gate, protected
from agent_hooks.gate.tool_call import ToolCall, Verdict
from agent_hooks.leases import lease_messages, lease_store, writer_cards
from agent_hooks.ledger import known_ledgers, remote_view, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import reservation_messages
from agent_hooks.writers import Writer
from gate_calls import (
    ALIVE,
    CAROL,
    LATER,
    ME,
    NOW,
    TARGET,
    call,
    holders,
    lease_for,
    ledger,
    reserve,
    reserved_on_another_host,
)
from pids import dead_pid


@pytest.fixture
def project(tmp_path: Path) -> str:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return os.path.realpath(path)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return os.path.realpath(tmp_path) + "/home/.claude"


def allowed(verdict: Verdict) -> None:
    assert verdict.refusal is None
    assert verdict.problems == []


# Reservations.


def test_another_owners_live_exclusive_reservation_refuses_and_names_it(
    state_dir: str, project: str
) -> None:
    rid = reserve(state_dir, project, "carol", "src/**")
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and not verdict.refusal.overridden
    assert verdict.refusal.reason.startswith(
        f"agent-hooks: {TARGET} is reserved by another agent: "
    )
    assert '"carol"' in verdict.refusal.reason and "src/**" in verdict.refusal.reason
    assert "issue-7" in verdict.refusal.reason
    assert verdict.refusal.waiting == {
        "writer": "bob", "project_root": project, "rel": TARGET,
        "kind": "reservation", "holder": rid, "since": int(NOW),
    }  # fmt: skip
    assert holders(state_dir, project) == []  # refused: no lease taken


def test_a_relative_target_is_judged_from_the_calls_working_directory(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    os.makedirs(f"{project}/src")
    verdict = edit_gate.decide(call(state_dir, project, cwd=f"{project}/src"), "app.py")
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["rel"] == TARGET


def test_a_shared_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", shared=True)
    allowed(edit_gate.decide(call(state_dir, project), TARGET))
    assert holders(state_dir, project) == ["bob"]


def test_ones_own_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "bob", "src/**")
    allowed(edit_gate.decide(call(state_dir, project), TARGET))


def test_an_expired_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", at=NOW - 600, ttl=600)  # ends at NOW
    allowed(edit_gate.decide(call(state_dir, project), TARGET))


def test_a_reservation_elsewhere_in_the_project_does_not_refuse(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "docs/**")
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    allowed(verdict)
    assert verdict.context == []


def test_a_reservation_whose_holder_process_died_does_not_refuse(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=dead_pid())
    allowed(edit_gate.decide(call(state_dir, project), TARGET))
    assert holders(state_dir, project) == ["bob"]


def test_a_kept_reservation_whose_holder_died_still_refuses(state_dir: str, project: str) -> None:
    rid = reserve(state_dir, project, "carol", "src/**", pid=dead_pid(), keep=True)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["holder"] == rid


def test_a_reservation_refuses_before_a_lease_is_judged(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "dave", "src/**")  # a reservation is refused over a lease
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["kind"] == "reservation"
    assert "reserved by another agent" in verdict.refusal.reason


# Strict mode.


def test_strict_mode_refuses_a_file_the_writer_has_not_reserved(
    state_dir: str, project: str
) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None
    assert verdict.refusal.reason == reservation_messages.strict_message(TARGET)
    assert verdict.refusal.waiting is None  # nothing to wait for: reserve it
    assert holders(state_dir, project) == []


def test_strict_mode_from_the_environment_without_a_reservations_file(
    state_dir: str, project: str
) -> None:
    verdict = edit_gate.decide(
        call(state_dir, project, environ={"AGENT_HOOKS_STRICT": "1"}), TARGET
    )
    assert verdict.refusal is not None
    assert verdict.refusal.reason == reservation_messages.strict_message(TARGET)


def test_strict_mode_allows_the_writers_own_reservation(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    reserve(state_dir, project, "bob", "src/**", shared=True)
    allowed(edit_gate.decide(call(state_dir, project), TARGET))
    assert holders(state_dir, project) == ["bob"]


def test_strict_mode_allows_the_writers_workspace(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    rel = f"{repository.WORKSPACES_DIR}/s1/notes.md"
    allowed(edit_gate.decide(call(state_dir, project), rel))
    assert holders(state_dir, project, rel) == ["bob"]


def test_without_strict_mode_an_unreserved_file_is_allowed(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), False, NOW)
    allowed(edit_gate.decide(call(state_dir, project), TARGET))


# Nested repositories: every project the target lies in judges it.


@pytest.fixture
def inner(project: str) -> str:
    path = f"{project}/lib"
    os.makedirs(f"{path}/.git")
    return path


def test_a_reservation_of_the_outer_project_refuses_a_file_of_a_nested_repository(
    state_dir: str, project: str, inner: str
) -> None:
    reserve(state_dir, project, "carol", "lib/**")
    verdict = edit_gate.decide(call(state_dir, project), "lib/x.py")
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["project_root"] == project
    assert verdict.refusal.waiting["rel"] == "lib/x.py"


def test_strict_mode_names_the_file_as_the_first_strict_project_sees_it(
    state_dir: str, project: str, inner: str
) -> None:
    verdict = edit_gate.decide(
        call(state_dir, project, environ={"AGENT_HOOKS_STRICT": "1"}), "lib/x.py"
    )
    assert verdict.refusal is not None
    assert verdict.refusal.reason == reservation_messages.strict_message("x.py")


def test_strict_mode_allows_a_file_one_of_its_projects_reserved_to_the_writer(
    state_dir: str, project: str, inner: str
) -> None:
    reservation_store.set_strict(Repo(inner, state_dir), True, NOW)
    reserve(state_dir, project, "bob", "lib/**")  # the outer project, not strict
    allowed(edit_gate.decide(call(state_dir, project), "lib/x.py"))


def test_a_workspace_of_the_outer_project_needs_no_reservation_in_the_nested_one(
    state_dir: str, project: str
) -> None:
    nested = f"{project}/{repository.WORKSPACES_DIR}/s1"
    os.makedirs(f"{nested}/.git")
    rel = f"{repository.WORKSPACES_DIR}/s1/notes.md"
    allowed(edit_gate.decide(call(state_dir, project, environ={"AGENT_HOOKS_STRICT": "1"}), rel))


def test_another_writers_lease_in_the_outer_ledger_refuses_a_file_of_a_nested_repository(
    state_dir: str, project: str, inner: str
) -> None:
    lease_for(state_dir, project, "lib/x.py", CAROL)
    verdict = edit_gate.decide(call(state_dir, project), "lib/x.py")
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["project_root"] == project
    assert holders(state_dir, inner, "x.py") == ["bob"]  # taken in the first ledger


def test_an_allowed_edit_takes_the_lease_in_every_ledger(
    state_dir: str, project: str, inner: str
) -> None:
    allowed(edit_gate.decide(call(state_dir, project), "lib/x.py"))
    assert holders(state_dir, inner, "x.py") == ["bob"]
    assert holders(state_dir, project, "lib/x.py") == ["bob"]


# agent-hooks' own files.


@pytest.mark.parametrize(
    "where",
    ["ledger", "state file", "data"],
)
def test_writes_into_agent_hooks_own_ledger_and_state_are_refused(
    state_dir: str, project: str, where: str
) -> None:
    target = {
        "ledger": f"{ledger(state_dir, project)}/leases/src%2Fapp.py",
        "state file": f"{state_dir}/state-bob.json",
        "data": f"{state_dir}/agent-hooks/ledgers.json",
    }[where]
    what = protected.guarded(target, state_dir, [ledger(state_dir, project)])
    assert what is not None
    verdict = edit_gate.decide(call(state_dir, project), target)
    assert verdict.refusal is not None
    assert verdict.refusal.reason == protected.message(what, target)
    assert verdict.refusal.waiting is None
    assert not os.path.exists(f"{ledger(state_dir, project)}/leases")


def test_a_protected_write_is_refused_even_with_claim_false(state_dir: str, project: str) -> None:
    target = f"{ledger(state_dir, project)}/reservations.json"
    verdict = edit_gate.decide(call(state_dir, project), target, claim=False)
    assert verdict.refusal is not None
    assert "the repository's ledger" in verdict.refusal.reason


# Leases.


def test_another_writers_live_lease_refuses_and_names_it(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and not verdict.refusal.overridden
    assert verdict.refusal.reason.startswith(
        f'agent-hooks: {TARGET} is being changed by agent "carol": it last wrote the file '
    )
    assert verdict.refusal.waiting == {
        "writer": "bob", "project_root": project, "rel": TARGET,
        "kind": "lease", "holder": "carol", "since": int(NOW),
    }  # fmt: skip
    assert holders(state_dir, project) == ["carol"]  # untouched


def test_the_refusal_names_a_subagent_holder_by_its_card(state_dir: str, project: str) -> None:
    sub = Writer("carol", "c3", agent_id="a1234567", agent_type="general-purpose")
    lease_for(state_dir, project, TARGET, sub)
    card_path = writer_cards.writer_path(ledger(state_dir, project), sub.key)
    with open(card_path) as handle:
        card = json.load(handle)
    card["description"] = "fix login"
    with open(card_path, "w") as handle:
        json.dump(card, handle)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None
    assert 'the general-purpose subagent "fix login" (a1234567) of agent "carol"' in (
        verdict.refusal.reason
    )


def test_a_lease_whose_holder_process_died_does_not_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, pid=dead_pid())
    assert holders(state_dir, project) == ["carol"]
    allowed(edit_gate.decide(call(state_dir, project), TARGET))
    assert holders(state_dir, project) == ["bob"]


def test_an_allowed_edit_takes_the_lease(state_dir: str, project: str) -> None:
    book = ledger(state_dir, project)
    assert lease_store.read(book, TARGET) == []
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    allowed(verdict)
    assert verdict.context == []
    [taken] = lease_store.read(book, TARGET)
    expected = {
        "writer": "bob", "agent": "bob", "conversation": "c2", "pid": ALIVE,
        "host": liveness.host(), "worktree": ".", "worktree_path": project, "branch": "main",
        "claimed": int(NOW), "written": int(NOW), "expires": int(NOW) + 600,
        "tool_use_id": "toolu_1", "source": "edit",
    }  # fmt: skip
    assert {key: taken.get(key) for key in expected} == expected
    # the first lease in this repository: its ledger is remembered
    assert known_ledgers.ledgers(state_dir) == {book: project}


def test_the_lease_lasts_the_repositorys_lease_minutes(state_dir: str, project: str) -> None:
    edit_gate.decide(call(state_dir, project, environ={"AGENT_HOOKS_LEASE_MINUTES": "3"}), TARGET)
    [taken] = lease_store.read(ledger(state_dir, project), TARGET)
    assert taken["expires"] == int(NOW) + 180


def test_a_ledger_that_had_leases_is_not_remembered_again(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "other.py", CAROL)
    allowed(edit_gate.decide(call(state_dir, project), TARGET))
    assert holders(state_dir, project) == ["bob"]
    assert not os.path.exists(known_ledgers.path(state_dir))


def test_leases_off_neither_refuse_nor_are_taken(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(
        call(state_dir, project, environ={"AGENT_HOOKS_LEASE_MINUTES": "0"}), TARGET
    )
    allowed(verdict)
    assert holders(state_dir, project) == ["carol"]
    assert holders(state_dir, project, "other.py") == []
    allowed(
        edit_gate.decide(
            call(state_dir, project, environ={"AGENT_HOOKS_LEASE_MINUTES": "0"}), "other.py"
        )
    )
    assert holders(state_dir, project, "other.py") == []


def test_claim_false_judges_without_taking_anything(state_dir: str, project: str) -> None:
    allowed(edit_gate.decide(call(state_dir, project), TARGET, claim=False))
    assert holders(state_dir, project) == []
    assert not os.path.exists(known_ledgers.path(state_dir))
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(call(state_dir, project), TARGET, claim=False)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["holder"] == "carol"
    assert holders(state_dir, project) == ["carol"]


def test_claim_false_still_sees_a_dead_holders_lease_as_no_lease(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL, pid=dead_pid())
    allowed(edit_gate.decide(call(state_dir, project), TARGET, claim=False))
    assert holders(state_dir, project) == ["carol"]


def test_a_writer_that_can_hold_nothing_takes_nothing_and_is_never_noted(
    state_dir: str, project: str
) -> None:
    nobody = writers.nobody()
    allowed(edit_gate.decide(call(state_dir, project, nobody), TARGET))
    assert holders(state_dir, project) == []
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(call(state_dir, project, nobody), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is None
    assert "carol" in verdict.refusal.reason
    reserve(state_dir, project, "dave", "docs/**")
    verdict = edit_gate.decide(call(state_dir, project, nobody), "docs/a.md")
    assert verdict.refusal is not None and verdict.refusal.waiting is None


def test_a_lease_holder_that_is_not_named_is_noted_as_none(state_dir: str, project: str) -> None:
    book = ledger(state_dir, project)
    odd = {**liveness.process(ALIVE), "writer": 7, "worktree": ".", "expires": int(NOW) + 300}
    os.makedirs(f"{book}/leases")
    lease_store.write_doc(lease_store.lease_path(book, TARGET), {"path": TARGET, "leases": [odd]})
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["kind"] == "lease"
    assert verdict.refusal.waiting["holder"] is None


def test_an_unreadable_lease_file_is_logged_as_a_problem_and_replaced(
    state_dir: str, project: str
) -> None:
    book = ledger(state_dir, project)
    os.makedirs(f"{book}/leases")
    path = lease_store.lease_path(book, TARGET)
    Path(path).write_text("{not json")
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is None
    assert verdict.problems == [f"lease file {path} is unreadable; taken as no lease"]
    assert holders(state_dir, project) == ["bob"]


# Other worktrees and other machines.


def test_a_lease_in_another_worktree_is_told_not_refused(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    [theirs] = lease_store.read(ledger(state_dir, project), TARGET)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    allowed(verdict)
    assert verdict.context == [lease_messages.elsewhere_note(TARGET, [theirs], LATER)]
    assert "/elsewhere/wt (on branch other)" in verdict.context[0]
    assert sorted(holders(state_dir, project)) == ["bob", "carol"]


def test_claim_false_tells_a_lease_in_another_worktree_too(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    verdict = edit_gate.decide(call(state_dir, project), TARGET, claim=False)
    allowed(verdict)
    assert len(verdict.context) == 1 and "another worktree" in verdict.context[0]


def test_a_lease_in_another_worktree_refuses_with_the_deny_setting(
    state_dir: str, project: str
) -> None:
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["holder"] == "carol"
    assert 'is being changed by agent "carol"' in verdict.refusal.reason
    assert verdict.context == []
    assert holders(state_dir, project) == ["carol"]  # refused: the writer took no lease


def test_under_the_deny_setting_a_refused_edit_never_locks_the_holder_out(
    state_dir: str, project: str, tmp_path: Path
) -> None:
    """Two worktrees of one repository: the holder in the linked one edits on after
    the writer in the main one was refused (a lease taken by the refused writer would
    refuse the holder in turn: both locked out)."""
    wt = os.path.realpath(tmp_path) + "/wt"  # a linked worktree of the same repository
    gitdir = f"{project}/.git/worktrees/wt"
    os.makedirs(gitdir)
    Path(gitdir, "commondir").write_text("../..\n")
    Path(gitdir, "HEAD").write_text("ref: refs/heads/feature\n")
    os.makedirs(wt)
    Path(wt, ".git").write_text(f"gitdir: {gitdir}\n")
    assert repository.worktree_id(wt) == "worktrees/wt"
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    assert edit_gate.decide(call(state_dir, wt, CAROL), TARGET).refusal is None  # carol's
    assert edit_gate.decide(call(state_dir, project), TARGET).refusal is not None  # bob's
    assert holders(state_dir, project) == ["carol"]
    again = edit_gate.decide(call(state_dir, wt, CAROL), TARGET)
    assert again.refusal is None


def test_a_deny_refusal_found_under_the_lock_takes_no_lease(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worktree's lease taken between the look and the lock: the claim judges
    again under the lock and, under the deny setting, refuses there too."""
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    real = lease_store.read
    calls: list[str] = []

    def first_look_empty(ledger_dir: str, rel: str) -> list[dict[str, Any]]:
        calls.append(rel)
        if len(calls) == 1:  # the look before the lock: nobody yet; then carol leases
            lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
            return []
        return real(ledger_dir, rel)

    monkeypatch.setattr(lease_store, "read", first_look_empty)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and "carol" in verdict.refusal.reason
    assert holders(state_dir, project) == ["carol"]


def remote_lease(state_dir: str, project: str, *, heard: float = NOW) -> dict[str, Any]:
    """A ledger shared with another machine `m2`, whose last sync saw carol lease TARGET."""
    reservation_store.set_setting(Repo(project, state_dir), "remote", "origin", NOW)
    theirs = {
        "writer": "carol", "agent": "carol", "conversation": "c3", "machine": "m2",
        "worktree": ".", "worktree_path": "m2:/srv/proj", "branch": "main",
        "written": int(NOW) - 60, "expires": int(NOW) + 540,
    }  # fmt: skip
    header = {"host": "here", "synced_at": NOW, "hosts": {"m2": (heard, 10)}}
    view = remote_view.encode(header, {TARGET: [theirs]})
    Path(ledger(state_dir, project), remote_view.VIEW).write_bytes(view)
    return theirs


def test_another_machines_lease_is_told_like_another_worktrees(
    state_dir: str, project: str
) -> None:
    theirs = remote_lease(state_dir, project)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    allowed(verdict)
    assert verdict.context == [lease_messages.elsewhere_note(TARGET, [theirs], LATER)]
    assert holders(state_dir, project) == ["bob"]


def test_another_machines_silent_lease_is_not_told(state_dir: str, project: str) -> None:
    remote_lease(state_dir, project, heard=NOW - 3600)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    allowed(verdict)
    assert verdict.context == []


def test_another_machines_lease_refuses_with_the_deny_setting_and_nothing_is_taken(
    state_dir: str, project: str
) -> None:
    remote_lease(state_dir, project)
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    verdict = edit_gate.decide(call(state_dir, project), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["holder"] == "carol"
    assert holders(state_dir, project) == []


def test_with_the_deny_setting_a_shared_ledger_without_other_leases_takes_the_lease(
    state_dir: str, project: str
) -> None:
    remote_lease(state_dir, project)
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    allowed(edit_gate.decide(call(state_dir, project), "other.py"))
    assert holders(state_dir, project, "other.py") == ["bob"]


# Enforcement off, bad targets, a verdict passed in.


@pytest.mark.parametrize("kind", ["reservation", "lease"])
def test_enforce_off_marks_the_refusal_overridden(state_dir: str, project: str, kind: str) -> None:
    if kind == "reservation":
        reserve(state_dir, project, "carol", "src/**")
    else:
        lease_for(state_dir, project, TARGET, CAROL)
    verdict = edit_gate.decide(
        call(state_dir, project, environ={"AGENT_HOOKS_ENFORCE": "off"}), TARGET
    )
    assert verdict.refusal is not None and verdict.refusal.overridden
    assert verdict.refusal.waiting is not None and verdict.refusal.waiting["kind"] == kind
    assert "carol" in verdict.refusal.reason
    assert holders(state_dir, project) == ([] if kind == "reservation" else ["carol"])


@pytest.mark.parametrize("target", [None, "", "src/a\x00b.py", 7, b"src/app.py"])
def test_a_target_that_is_not_a_usable_path_yields_an_empty_verdict(
    state_dir: str, project: str, target: object
) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)  # would refuse any path
    given = Verdict()
    verdict = edit_gate.decide(call(state_dir, project), target, verdict=given)
    assert verdict is given
    assert verdict.refusal is None and verdict.context == [] and verdict.problems == []
    assert not os.path.exists(f"{ledger(state_dir, project)}/leases")


def test_a_verdict_passed_in_is_added_to(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    given = Verdict()
    given.context.append("earlier")
    given.problems.append("earlier problem")
    verdict = edit_gate.decide(call(state_dir, project), TARGET, verdict=given)
    assert verdict is given
    assert verdict.refusal is None
    assert verdict.context[0] == "earlier" and len(verdict.context) == 2
    assert "another worktree" in verdict.context[1]
    assert verdict.problems == ["earlier problem"]
    reserve(state_dir, project, "dave", "docs/**")
    again = edit_gate.decide(call(state_dir, project), "docs/a.md", verdict=given)
    assert again is given and again.refusal is not None
    assert again.context[0] == "earlier"


def test_without_a_verdict_each_call_gets_a_fresh_one(state_dir: str, project: str) -> None:
    first = edit_gate.decide(call(state_dir, project), TARGET)
    second = edit_gate.decide(call(state_dir, project), TARGET)
    assert first is not second
    assert first.context == [] and second.context == []


# Each of these killed a survivor of the first mutation run of edit_gate.


def test_a_relative_target_without_a_working_directory_is_judged_from_the_project(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    no_cwd = ToolCall(
        writer=ME, cwd=None, project=project, state_dir=state_dir, environ={}, now=LATER,
        holder_pid=ALIVE,
    )  # fmt: skip
    verdict = edit_gate.decide(no_cwd, TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["rel"] == TARGET


# 30 lease minutes: a holder on another host counts 30 min + 60 s after it was heard from.
THIRTY = {"AGENT_HOOKS_LEASE_MINUTES": "30"}


def test_a_reservation_held_on_another_host_refuses_while_heard_from_within_the_lease_minutes(
    state_dir: str, project: str
) -> None:
    reserved_on_another_host(state_dir, project, heard_ago=1000)  # beyond the default 10 min
    verdict = edit_gate.decide(call(state_dir, project, environ=THIRTY), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["kind"] == "reservation"


def test_a_reservation_held_on_another_host_stops_refusing_once_its_owner_is_silent(
    state_dir: str, project: str
) -> None:
    reserved_on_another_host(state_dir, project, heard_ago=1900)
    allowed(edit_gate.decide(call(state_dir, project, environ=THIRTY), TARGET))


def test_leases_of_one_minute_still_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    one = {"AGENT_HOOKS_LEASE_MINUTES": "1"}
    verdict = edit_gate.decide(call(state_dir, project, environ=one), TARGET)
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["holder"] == "carol"


def test_a_lease_refusal_in_the_first_project_takes_no_lease_in_the_next(
    state_dir: str, project: str, inner: str
) -> None:
    lease_for(state_dir, inner, "x.py", CAROL)
    verdict = edit_gate.decide(call(state_dir, project), "lib/x.py")
    assert verdict.refusal is not None and verdict.refusal.waiting is not None
    assert verdict.refusal.waiting["project_root"] == inner
    assert holders(state_dir, project, "lib/x.py") == []
    assert holders(state_dir, inner, "x.py") == ["carol"]


# One edit writing several files (a patch).


def test_a_patch_is_refused_as_a_whole_before_any_file_is_leased(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, "src/b.py", CAROL)
    verdict = edit_gate.decide_all(call(state_dir, project), ["src/a.py", "src/b.py", "c.py"])
    assert verdict.refusal is not None and "src/b.py" in verdict.refusal.reason
    assert holders(state_dir, project, "src/a.py") == [] == holders(state_dir, project, "c.py")


def test_each_file_of_a_patch_is_located_and_judged_once(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged as a whole, then leased: a file's place, our own files, reservations
    and strict mode are asked once (its claim judges the lease again, under the lock)."""
    from agent_hooks.gate import places

    located: list[str] = []
    real = places.resolve

    def resolve(path: str, cwd: str | None, root: str | None) -> str:
        located.append(path)
        return real(path, cwd, root)

    monkeypatch.setattr(places, "resolve", resolve)
    allowed(edit_gate.decide_all(call(state_dir, project), ["src/a.py", "src/b.py", "c.py"]))
    assert located == ["src/a.py", "src/b.py", "c.py"]
    assert [holders(state_dir, project, rel) for rel in ("src/a.py", "src/b.py", "c.py")] == [
        ["bob"],
        ["bob"],
        ["bob"],
    ]


def test_a_refused_edit_reads_its_repositorys_git_layout_once(
    state_dir: str, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger, the worktree id and the branch of the lease come from one look at
    `.git` and one read of `commondir` (a Codex deny once read `commondir` 3 times)."""
    lease_for(state_dir, project, TARGET, CAROL)
    read: list[str] = []
    real = repository._read_small

    def counted(path: str) -> str | None:
        read.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(repository, "_read_small", counted)
    looked: list[str] = []
    real_git_dir = repository.git_dir
    monkeypatch.setattr(repository, "git_dir", lambda top: looked.append(top) or real_git_dir(top))
    verdict = edit_gate.decide_all(call(state_dir, project), [TARGET])
    assert verdict.refusal is not None
    assert read.count("commondir") == 1 and looked == [project]
