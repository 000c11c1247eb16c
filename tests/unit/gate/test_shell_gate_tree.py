"""gate.shell_gate.decide in-process, continued from test_shell_gate.py: what the
parser cannot see (not refused), a command the parser gave up on (refused while another
writer holds something), and git commands rewriting a whole work tree (refused while
another writer leases a file there; the forms measured to do so and those writing only
their paths). Reservations under such a rewrite: test_shell_gate_reserved_tree.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_shell_gate import TOO_DEEP, allowed, decide, leased_text, refused

from agent_hooks.leases import lease_messages
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import reservation_messages
from gate_calls import CAROL, ME, NOW, TARGET, lease_for, reserve
from pids import dead_pid

# What the parser cannot see is not refused here.


def test_what_the_parser_cannot_see_is_not_refused(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reserve(state_dir, project, "dave", "docs/**")
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    for command in ["perl -e 'open F, \">src/app.py\"'", "bash ./tools/fix.sh", "echo x > $OUT"]:
        allowed(decide(state_dir, project, command))


# A command the parser gave up on counts as writing the whole project.


def test_a_command_given_up_on_is_refused_while_another_writer_leases_a_file(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = decide(state_dir, project, TOO_DEEP)
    assert verdict.refusal is not None and not verdict.refusal.overridden
    assert verdict.refusal.reason == reservation_messages.too_complex_message(
        "nesting too deep", [f'{TARGET} is being changed by agent "carol"']
    )
    assert verdict.problems == [
        "Bash command too complex to check (nesting too deep): "
        f"it counts as writing anywhere in {project}"
    ]


def test_a_command_given_up_on_is_refused_while_another_owner_reserves_something(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "docs/**")
    verdict = decide(state_dir, project, TOO_DEEP)
    assert verdict.refusal is not None
    reason = verdict.refusal.reason
    assert reason.startswith(
        "agent-hooks: this Bash command is too complex to check for writes (nesting too deep)"
        ", and another writer holds files in this project: "
    )
    assert '"carol"' in reason and "docs/**" in reason and "issue-7" in reason
    assert len(verdict.problems) == 1


def test_a_command_given_up_on_names_at_most_three_reservations(
    state_dir: str, project: str
) -> None:
    for i in range(4):
        reserve(state_dir, project, "carol", f"area{i}/**")
    verdict = decide(state_dir, project, TOO_DEEP)
    assert verdict.refusal is not None
    named = [i for i in range(4) if f"area{i}/**" in verdict.refusal.reason]
    assert len(named) == 3


def test_a_command_given_up_on_is_allowed_when_nobody_else_holds_anything(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, ME)
    reserve(state_dir, project, "bob", "docs/**")
    reserve(state_dir, project, "carol", "src/**", shared=True)
    lease_for(state_dir, project, "docs/x.md", CAROL, pid=dead_pid())
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)  # contended: read
    verdict = decide(state_dir, project, TOO_DEEP)
    assert verdict.refusal is None
    assert verdict.problems == [
        "Bash command too complex to check (nesting too deep): "
        f"it counts as writing anywhere in {project}"
    ]


def test_a_command_given_up_on_with_leases_off_is_judged_by_reservations_only(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    verdict = decide(state_dir, project, TOO_DEEP, environ={"AGENT_HOOKS_LEASE_MINUTES": "0"})
    assert verdict.refusal is None and len(verdict.problems) == 1


def test_a_command_given_up_on_by_an_agent_in_no_repository_is_not_logged(
    state_dir: str, tmp_path: Path
) -> None:
    allowed(decide(state_dir, None, TOO_DEEP, cwd=str(tmp_path)))


def test_a_target_seen_before_giving_up_is_judged_first(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = decide(state_dir, project, "echo {1..100} > src/app.py")
    leased_text(refused(verdict), TARGET, TARGET)
    assert verdict.problems == []


# Git commands that rewrite the whole work tree.


def test_a_work_tree_rewrite_is_refused_while_another_writer_leases_a_file(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    lease_for(state_dir, project, "docs/a.md", ME)
    reason = refused(decide(state_dir, project, "git stash"))
    assert reason == lease_messages.tree_rewrite_message("git stash", [f'{TARGET} (agent "carol")'])
    reason = refused(decide(state_dir, project, "git reset --hard", cwd=f"{project}/docs"))
    assert reason.startswith("agent-hooks: `git reset --hard` would change or sweep away")


@pytest.mark.parametrize(
    ("command", "rewrite"),
    [
        ("git checkout -f -b new", "git checkout -f"),  # -f resets the tree to HEAD
        ("git stash save -- docs/a.md", "git stash save"),  # its words are a message
        ("git checkout main --", "git checkout main"),  # a branch before `--`: a switch
    ],
)
def test_git_forms_measured_to_rewrite_the_tree_are_refused(
    state_dir: str, project: str, command: str, rewrite: str
) -> None:
    """As git 2.39 runs them (tests/unit/shell/test_commands.py)."""
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, command))
    assert reason == lease_messages.tree_rewrite_message(rewrite, [f'{TARGET} (agent "carol")'])


@pytest.mark.parametrize("command", ["git stash push docs/a.md", "git checkout main docs/a.md"])
def test_git_forms_that_write_only_their_paths_are_judged_by_them(
    state_dir: str, project: str, command: str
) -> None:
    """`stash push PATHS` sweeps only those paths and `checkout REF PATHS` switches no
    branch: allowed beside another writer's lease elsewhere, refused on its file."""
    lease_for(state_dir, project, TARGET, CAROL)
    allowed(decide(state_dir, project, command))
    leased_text(refused(decide(state_dir, project, f"{command} {TARGET}")), TARGET, TARGET)


def test_a_work_tree_rewrite_is_allowed_over_ones_own_or_dead_leases(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, ME)
    lease_for(state_dir, project, "docs/a.md", CAROL, pid=dead_pid())
    reserve(state_dir, project, "dave", "other/**")  # contended: read
    allowed(decide(state_dir, project, "git stash"))


def test_a_work_tree_rewrite_with_leases_off_is_allowed(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reserve(state_dir, project, "dave", "other/**")
    allowed(decide(state_dir, project, "git stash", environ={"AGENT_HOOKS_LEASE_MINUTES": "0"}))


def test_a_work_tree_rewrite_outside_any_repository_is_allowed(
    state_dir: str, project: str, tmp_path: Path
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    os.makedirs(f"{tmp_path}/plain")
    allowed(decide(state_dir, project, f"git -C {tmp_path}/plain stash"))


def test_a_work_tree_rewrite_in_another_repository_is_judged_by_its_ledger(
    state_dir: str, project: str, other: str
) -> None:
    lease_for(state_dir, other, TARGET, CAROL)
    reason = refused(decide(state_dir, project, f"git -C {other} stash"))
    assert f'{TARGET} (agent "carol")' in reason
