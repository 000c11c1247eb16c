"""gate.shell_gate.decide in-process: the PreToolUse decision for one shell command
line, each rule of its module docstring pinned over real state in a tmp dir (a
project with a `.git` directory, a private state directory, reservations made
through reservation_store, leases through lease_store) and real command lines read
by the real parser. The hooks that ask are tested in tests/hooks/; these are the
tests mutmut can credit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import repository
from agent_hooks.gate import protected, shell_gate
from agent_hooks.gate.tool_call import ToolCall, Verdict
from agent_hooks.leases import lease_messages, lease_store, writer_cards
from agent_hooks.ledger import remote_view, reservation_store
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

CAROL_LEASE = 'is being changed by agent "carol"'
# A command the parser gives up on (nested deeper than it reads), and the reason said.
TOO_DEEP = "echo " + "$(echo " * 9 + "x" + ")" * 9 + " > /dev/null"
TOO_COMPLEX = "too complex to check"


def decide(state_dir: str, project: str | None, command: object, **kw: Any) -> Verdict:
    return shell_gate.decide(call(state_dir, project, **kw), command)


def allowed(verdict: Verdict) -> None:
    assert verdict.refusal is None
    assert verdict.context == []
    assert verdict.problems == []


def refused(verdict: Verdict) -> str:
    assert verdict.refusal is not None and not verdict.refusal.overridden
    assert verdict.refusal.waiting is None  # the shell gate notes nothing to wait for
    assert verdict.context == []
    return verdict.refusal.reason


def reserved_text(reason: str, shown: str, pattern_text: str = "src/**") -> None:
    """A reservation refusal of a Bash write of `shown`: carol's reservation, named."""
    assert reason.startswith(f"agent-hooks: {shown} is reserved by another agent: ")
    assert '"carol"' in reason and pattern_text in reason and "issue-7" in reason
    assert f"This Bash command would write {shown}; do not run it now." in reason
    assert "Do not edit it now." not in reason


def leased_text(reason: str, leased: str, shown: str) -> None:
    """A lease refusal of a Bash write of `shown`, which includes carol's `leased`."""
    assert reason.startswith(f"agent-hooks: {leased} {CAROL_LEASE}: it last wrote the file ")
    assert f"This Bash command would write {shown}, which includes it; do not run it now." in reason
    assert "Do not edit it now." not in reason


# What is judged at all: the command must be a string the prefilter sees a write in.


@pytest.mark.parametrize("command", [None, 7, b"echo x > src/app.py", ["rm", "-rf", "src"]])
def test_a_command_that_is_not_a_string_yields_an_empty_verdict(
    state_dir: str, project: str, command: object
) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)  # would refuse any write
    allowed(decide(state_dir, project, command))


def test_a_command_the_prefilter_sees_no_write_in_is_allowed_unread(
    state_dir: str, project: str
) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    lease_for(state_dir, project, TARGET, CAROL)
    allowed(decide(state_dir, project, "python3 src/app.py"))  # it may write: not seen


def test_a_lone_surrogate_is_read_as_the_client_writes_it(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "src/a\ufffd.py", CAROL)
    reason = refused(decide(state_dir, project, "echo x > src/a\udc80.py"))
    leased_text(reason, "src/a\ufffd.py", "src/a\ufffd.py")


# When the agent's own project is contended, a write the parser sees is judged.


def test_another_writers_live_lease_refuses_a_plain_write_and_names_holder_and_path(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, "echo x > src/app.py"))
    [theirs] = lease_store.read(ledger(state_dir, project), TARGET)
    card = writer_cards.card(ledger(state_dir, project), "carol")
    assert reason == lease_messages.deny_message(TARGET, theirs, LATER, card).replace(
        "Do not edit it now.",
        f"This Bash command would write {TARGET}, which includes it; do not run it now.",
    )
    leased_text(reason, TARGET, TARGET)
    assert holders(state_dir, project) == ["carol"]  # the shell gate takes no lease


def test_a_write_the_parser_reads_is_refused_by_another_writers_lease(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    leased_text(refused(decide(state_dir, project, "sed -i s/a/b/ src/app.py")), TARGET, TARGET)


def test_every_target_of_a_plain_command_is_judged(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, "echo x > docs/a.md > src/app.py"))
    leased_text(reason, TARGET, TARGET)
    allowed(decide(state_dir, project, "echo x > docs/a.md > docs/b.md"))


def test_every_target_the_parser_reads_is_judged(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, "touch docs/a.md; touch src/app.py"))
    leased_text(reason, TARGET, TARGET)
    allowed(decide(state_dir, project, "touch docs/a.md; touch docs/b.md"))


def test_ones_own_lease_does_not_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, ME)
    lease_for(state_dir, project, "docs/other.md", CAROL)  # contended: the command is read
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_a_lease_whose_holder_process_died_does_not_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, pid=dead_pid())
    lease_for(state_dir, project, "docs/other.md", CAROL)
    allowed(decide(state_dir, project, "echo x > src/app.py"))
    assert holders(state_dir, project) == ["carol"]  # judged, not taken over


def test_a_file_nobody_leases_is_allowed(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "docs/other.md", CAROL)
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_leases_off_do_not_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    off = {"AGENT_HOOKS_LEASE_MINUTES": "0"}
    allowed(decide(state_dir, project, "echo x > src/app.py", environ=off))
    reserve(state_dir, project, "dave", "docs/**")  # contended by a reservation instead
    allowed(decide(state_dir, project, "echo x > src/app.py", environ=off))
    allowed(decide(state_dir, project, "rm -rf src", environ=off))


def test_leases_of_one_minute_still_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    one = {"AGENT_HOOKS_LEASE_MINUTES": "1"}
    leased_text(
        refused(decide(state_dir, project, "echo x > src/app.py", environ=one)), TARGET, TARGET
    )


def test_a_symlink_to_a_leased_file_is_the_leased_file(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    os.symlink(f"{project}/src/app.py", f"{project}/link.py")
    leased_text(refused(decide(state_dir, project, "echo x > link.py")), TARGET, TARGET)


def test_removing_a_symlink_acts_on_the_link_not_what_it_points_to(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    os.symlink(f"{project}/src/app.py", f"{project}/link.py")
    allowed(decide(state_dir, project, "rm link.py"))
    lease_for(state_dir, project, "link.py", CAROL)
    leased_text(refused(decide(state_dir, project, "rm link.py")), "link.py", "link.py")


# Reservations.


def test_another_owners_live_exclusive_reservation_refuses_and_names_it(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    reserved_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET)
    assert holders(state_dir, project) == []


def test_a_shared_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", shared=True)
    reserve(state_dir, project, "dave", "docs/**")  # contended elsewhere
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_ones_own_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "bob", "src/**")
    reserve(state_dir, project, "dave", "docs/**")
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_an_expired_reservation_does_not_refuse(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", at=NOW - 600, ttl=600)  # ends at NOW
    reserve(state_dir, project, "dave", "docs/**")
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_a_reservation_whose_holder_process_died_does_not_refuse(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=dead_pid())
    reserve(state_dir, project, "dave", "docs/**")
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_a_kept_reservation_whose_holder_died_still_refuses(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**", pid=dead_pid(), keep=True)
    reserved_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET)


def test_a_reservation_refuses_before_a_lease_is_judged(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**")
    lease_for(state_dir, project, TARGET, Writer("dave", "c4"))
    reserved_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET)


# Directories and globs: a path and everything below it.


def test_removing_a_directory_is_refused_by_a_lease_on_a_file_below_it(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    Path(project, TARGET).write_text("x")
    leased_text(refused(decide(state_dir, project, "rm -rf src")), TARGET, "src")
    allowed(decide(state_dir, project, "rm -rf docs"))


def test_removing_a_directory_is_refused_by_a_reservation_below_it(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/app.py")
    reserved_text(refused(decide(state_dir, project, "rm -rf src")), "src", "src/app.py")
    allowed(decide(state_dir, project, "rm -rf docs"))


def test_a_directory_named_like_a_leased_files_prefix_is_not_above_it(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, "srcx/app.py", CAROL)
    allowed(decide(state_dir, project, "rm -rf src"))


def test_removing_the_whole_project_is_refused_by_any_lease_in_it(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    leased_text(refused(decide(state_dir, project, "rm -rf .")), TARGET, "the whole project")
    leased_text(
        refused(decide(state_dir, project, "rm -rf ..", cwd=f"{project}/docs")),
        TARGET,
        "the whole project",
    )


def test_removing_the_whole_project_is_refused_by_any_reservation_in_it(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    reserved_text(refused(decide(state_dir, project, "rm -rf .")), "the whole project")


def test_a_glob_is_refused_by_a_lease_on_a_file_it_matches(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    leased_text(refused(decide(state_dir, project, "sed -i s/a/b/ src/*.py")), TARGET, "src/*.py")
    allowed(decide(state_dir, project, "sed -i s/a/b/ src/*.md"))
    allowed(decide(state_dir, project, "sed -i s/a/b/ docs/*.py"))


def test_a_glob_is_refused_by_a_reservation_it_overlaps(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/app.py")
    reserved_text(
        refused(decide(state_dir, project, "sed -i s/a/b/ src/*.py")), "src/*.py", "src/app.py"
    )
    allowed(decide(state_dir, project, "sed -i s/a/b/ docs/*.py"))


# Strict mode.


def test_strict_mode_refuses_a_write_the_writer_has_not_reserved(
    state_dir: str, project: str
) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    reason = refused(decide(state_dir, project, "echo x > src/app.py"))
    assert reason == reservation_messages.strict_message(TARGET)


def test_strict_mode_from_the_environment(state_dir: str, project: str) -> None:
    strict = {"AGENT_HOOKS_STRICT": "1"}
    reason = refused(decide(state_dir, project, "echo x > src/app.py", environ=strict))
    assert reason == reservation_messages.strict_message(TARGET)


def test_strict_mode_allows_the_writers_own_reservation(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    reserve(state_dir, project, "bob", "src/**", shared=True)
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_strict_mode_allows_the_writers_workspace(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    allowed(decide(state_dir, project, f"echo x > {repository.WORKSPACES_DIR}/s1/notes.md"))


def test_strict_mode_asks_no_reservation_for_a_glob(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    allowed(decide(state_dir, project, "sed -i s/a/b/ src/*.py"))
    allowed(decide(state_dir, project, "sed -i s/a/b/ *"))


def test_a_lease_refuses_before_strict_mode_is_asked(state_dir: str, project: str) -> None:
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    lease_for(state_dir, project, TARGET, CAROL)
    leased_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET, TARGET)


# agent-hooks' own files: refused even when nobody holds anything.


@pytest.mark.parametrize("where", ["ledger", "state file", "data"])
def test_writes_into_agent_hooks_own_ledger_and_state_are_refused(
    state_dir: str, project: str, where: str
) -> None:
    target = {
        "ledger": f"{ledger(state_dir, project)}/reservations.json",
        "state file": f"{state_dir}/state-bob.json",
        "data": f"{state_dir}/agent-hooks/ledgers.json",
    }[where]
    what = protected.guarded(target, state_dir, [ledger(state_dir, project)])
    assert what is not None
    reason = refused(decide(state_dir, project, f"echo x > {target}"))
    assert reason == protected.message(what, target)


def test_a_relative_write_into_the_ledger_is_refused_though_nobody_holds_anything(
    state_dir: str, project: str
) -> None:
    book = ledger(state_dir, project)
    assert book == f"{project}/.git/agent-hooks"
    reason = refused(decide(state_dir, project, "touch .git/agent-hooks/x"))
    assert reason == protected.message(f"the repository's ledger {book}", f"{book}/x")


def test_removing_a_directory_holding_the_ledger_is_refused(state_dir: str, project: str) -> None:
    book = ledger(state_dir, project)
    what = f"the repository's ledger {book}"
    assert refused(decide(state_dir, project, "rm -rf .git")) == protected.message(
        what, f"{project}/.git"
    )
    # names no own file and nobody holds anything: not read, so allowed today (a gap,
    # reported in the mutation notes; flip this line if it is closed)
    allowed(decide(state_dir, project, "rm -rf ."))
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)  # contended: read
    assert refused(decide(state_dir, project, "rm -rf .")) == protected.message(what, project)


def test_removing_the_state_directory_is_refused(state_dir: str, project: str) -> None:
    os.makedirs(state_dir)
    reason = refused(decide(state_dir, project, f"rm -rf {state_dir}"))
    assert reason == protected.message(f"agent-hooks' data in {state_dir}/agent-hooks", state_dir)


def test_a_glob_into_the_ledger_is_not_judged_as_protected(state_dir: str, project: str) -> None:
    """Only a path is compared with agent-hooks' own files; a glob is not."""
    allowed(decide(state_dir, project, "rm .git/agent-hooks/*.json"))


def test_a_symlinked_entry_in_the_ledger_is_judged_by_its_own_name(
    state_dir: str, project: str, tmp_path: Path
) -> None:
    book = ledger(state_dir, project)
    os.makedirs(book)
    os.symlink(f"{project}/docs", f"{book}/link")
    reason = refused(decide(state_dir, project, f"rm {book}/link"))
    assert reason == protected.message(f"the repository's ledger {book}", f"{book}/link")


# Writes outside the agent's project: each judged in the ledger it lies in.


def test_a_write_into_another_repository_is_judged_by_its_ledger(
    state_dir: str, project: str, other: str
) -> None:
    reserve(state_dir, other, "carol", "src/**")
    reserved_text(refused(decide(state_dir, project, f"echo x > {other}/src/app.py")), TARGET)
    reserved_text(refused(decide(state_dir, project, "echo x > ../other/src/app.py")), TARGET)
    reserved_text(refused(decide(state_dir, project, "git -C ../other rm src/app.py")), TARGET)


def test_a_relative_write_in_an_uncontended_project_is_not_read(
    state_dir: str, project: str
) -> None:
    """Nobody holds anything in the agent's project: a command that stays inside it
    is not parsed, even where a nested repository's ledger holds the file."""
    os.makedirs(f"{project}/lib/.git")
    reserve(state_dir, f"{project}/lib", "carol", "**")
    allowed(decide(state_dir, project, "echo x > lib/x.py"))
    reserve(state_dir, project, "dave", "docs/**")  # now contended: read and refused
    reserved_text(refused(decide(state_dir, project, "echo x > lib/x.py")), "x.py", "**")


def test_an_agent_in_no_repository_has_every_write_read(
    state_dir: str, tmp_path: Path, other: str
) -> None:
    reserve(state_dir, other, "carol", "src/**")
    reserved_text(
        refused(decide(state_dir, None, "echo x > other/src/app.py", cwd=str(tmp_path))), TARGET
    )


def test_an_agent_in_a_folder_holding_repositories_has_every_write_read(
    state_dir: str, tmp_path: Path, other: str
) -> None:
    reserve(state_dir, other, "carol", "src/**")
    folder = os.path.realpath(tmp_path)
    reserved_text(refused(decide(state_dir, folder, "echo x > other/src/app.py")), TARGET)


def test_an_agent_without_a_working_directory_writes_from_its_project(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    no_cwd = ToolCall(
        writer=ME, cwd=None, project=project, state_dir=state_dir, environ={}, now=LATER,
        holder_pid=ALIVE,
    )  # fmt: skip
    leased_text(refused(shell_gate.decide(no_cwd, "echo x > src/app.py")), TARGET, TARGET)
    leased_text(refused(shell_gate.decide(no_cwd, "sed -i s/a/b/ src/app.py")), TARGET, TARGET)


def test_home_is_the_calls_home(state_dir: str, project: str, tmp_path: Path) -> None:
    home = os.path.dirname(state_dir)
    reason = refused(
        decide(state_dir, project, "sed -i s/a/b/ ~/.claude/state-bob.json", environ={"HOME": home})
    )
    assert reason.startswith(f"agent-hooks: {state_dir}/state-bob.json is an agent's state file")


def test_a_file_of_a_nested_repository_is_judged_by_both_ledgers(
    state_dir: str, project: str
) -> None:
    inner = f"{project}/lib"
    os.makedirs(f"{inner}/.git")
    lease_for(state_dir, project, "lib/x.py", CAROL)
    leased_text(refused(decide(state_dir, project, "echo x > lib/x.py")), "lib/x.py", "lib/x.py")


# Other worktrees and other machines.


def test_a_lease_in_another_worktree_does_not_refuse(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    allowed(decide(state_dir, project, "echo x > src/app.py"))
    allowed(decide(state_dir, project, "rm -rf src"))


def test_a_lease_in_another_worktree_refuses_with_the_deny_setting(
    state_dir: str, project: str
) -> None:
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    lease_for(state_dir, project, TARGET, CAROL, worktree="worktrees/wt")
    leased_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET, TARGET)
    leased_text(refused(decide(state_dir, project, "rm -rf src")), TARGET, "src")


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


def test_another_machines_lease_does_not_refuse_without_the_deny_setting(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "dave", "other/**")  # contended: read
    remote_lease(state_dir, project)
    allowed(decide(state_dir, project, "echo x > src/app.py"))


def test_another_machines_lease_refuses_with_the_deny_setting(state_dir: str, project: str) -> None:
    """The remote lease alone makes the project contended, and refuses."""
    remote_lease(state_dir, project)
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    leased_text(refused(decide(state_dir, project, "echo x > src/app.py")), TARGET, TARGET)
    leased_text(refused(decide(state_dir, project, "rm -rf src")), TARGET, "src")
    allowed(decide(state_dir, project, "echo x > docs/a.md"))


def test_another_machines_silent_lease_does_not_refuse(state_dir: str, project: str) -> None:
    remote_lease(state_dir, project, heard=NOW - 3600)
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    allowed(decide(state_dir, project, "echo x > src/app.py"))


# Enforcement off.


@pytest.mark.parametrize("kind", ["reservation", "lease", "protected", "strict"])
def test_enforce_off_marks_the_refusal_overridden(state_dir: str, project: str, kind: str) -> None:
    if kind == "reservation":
        reserve(state_dir, project, "carol", "src/**")
    elif kind == "lease":
        lease_for(state_dir, project, TARGET, CAROL)
    elif kind == "strict":
        reservation_store.set_strict(Repo(project, state_dir), True, NOW)
    command = "rm -rf .git" if kind == "protected" else "echo x > src/app.py"
    verdict = decide(state_dir, project, command, environ={"AGENT_HOOKS_ENFORCE": "off"})
    assert verdict.refusal is not None and verdict.refusal.overridden
    assert verdict.refusal.reason.startswith("agent-hooks")


# Whether the agent's own project is contended, probed: a nested repository whose
# ledger holds everything refuses `echo x > lib/x.py` only when the command is read.


def probe(state_dir: str, project: str, environ: dict[str, str] | None = None) -> bool:
    """Is the agent's project contended (is a relative command line read at all)?"""
    inner = f"{project}/lib"
    if not os.path.isdir(f"{inner}/.git"):
        os.makedirs(f"{inner}/.git")
        reserve(state_dir, inner, "zed", "**", keep=True)
    verdict = decide(state_dir, project, "echo x > lib/x.py", environ=environ)
    return verdict.refusal is not None


def test_an_untouched_project_is_not_contended(state_dir: str, project: str) -> None:
    assert not probe(state_dir, project)


def test_ones_own_reservation_and_lease_do_not_make_the_project_contended(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "bob", "src/**")
    lease_for(state_dir, project, TARGET, ME)
    assert not probe(state_dir, project)


def test_another_owners_reservation_makes_the_project_contended(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "docs/**")
    assert probe(state_dir, project)


def test_another_owners_expired_reservation_does_not_make_the_project_contended(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "docs/**", at=NOW - 600, ttl=600)
    assert not probe(state_dir, project)


def test_another_writers_lease_makes_the_project_contended(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "docs/a.md", CAROL)
    assert probe(state_dir, project)


def test_with_leases_off_another_writers_lease_does_not_make_the_project_contended(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, "docs/a.md", CAROL)
    assert not probe(state_dir, project, {"AGENT_HOOKS_LEASE_MINUTES": "0"})
    assert probe(state_dir, project, {"AGENT_HOOKS_LEASE_MINUTES": "1"})


def test_strict_mode_makes_the_project_contended(state_dir: str, project: str) -> None:
    assert probe(state_dir, project, {"AGENT_HOOKS_STRICT": "1"})


def test_the_deny_setting_alone_does_not_make_the_project_contended(
    state_dir: str, project: str
) -> None:
    reservation_store.set_setting(Repo(project, state_dir), "worktree_leases", "deny", NOW)
    assert not probe(state_dir, project)


# More of the gate's details.


def test_an_agent_with_neither_project_nor_working_directory_writes_from_the_root(
    state_dir: str, tmp_path: Path, other: str
) -> None:
    reserve(state_dir, other, "carol", "src/**")
    nowhere = ToolCall(
        writer=ME, cwd=None, project=None, state_dir=state_dir, environ={}, now=LATER,
        holder_pid=ALIVE,
    )  # fmt: skip
    relative = f"{other}/src/app.py".lstrip("/")
    reserved_text(refused(shell_gate.decide(nowhere, f"echo x > {relative}")), TARGET)
    reserved_text(refused(shell_gate.decide(nowhere, f"sed -i s/a/b/ {relative}")), TARGET)


def test_a_work_tree_rewrite_after_a_cd_to_an_unknown_place_is_judged_where_the_agent_is(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, 'cd "$X" && git stash'))
    assert f'{TARGET} (agent "carol")' in reason
    no_cwd = ToolCall(
        writer=ME, cwd=None, project=project, state_dir=state_dir, environ={}, now=LATER,
        holder_pid=ALIVE,
    )  # fmt: skip
    assert refused(shell_gate.decide(no_cwd, 'cd "$X" && git stash')) == reason


def test_a_glob_the_pattern_syntax_refuses_is_taken_literally(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "src/b[.py", CAROL)  # `*[.py` would match it as a glob
    allowed(decide(state_dir, project, "rm src/*[.py"))
    lease_for(state_dir, project, "src/*[.py", CAROL)
    leased_text(refused(decide(state_dir, project, "rm src/*[.py")), "src/*[.py", "src/*[.py")


def test_strict_mode_names_the_file_as_the_first_strict_project_sees_it(
    state_dir: str, project: str
) -> None:
    os.makedirs(f"{project}/lib/.git")
    strict = {"AGENT_HOOKS_STRICT": "1"}
    reason = refused(decide(state_dir, project, "echo x > lib/x.py", environ=strict))
    assert reason == reservation_messages.strict_message("x.py")


def test_strict_mode_allows_a_file_one_of_its_projects_reserved_to_the_writer(
    state_dir: str, project: str
) -> None:
    inner = f"{project}/lib"
    os.makedirs(f"{inner}/.git")
    reservation_store.set_strict(Repo(inner, state_dir), True, NOW)
    reserve(state_dir, project, "bob", "lib/**", shared=True)  # the outer project, not strict
    reserve(state_dir, project, "dave", "docs/**")  # contended: read
    allowed(decide(state_dir, project, "echo x > lib/x.py"))


def test_a_symlinked_directory_into_the_ledger_is_the_ledger(state_dir: str, project: str) -> None:
    book = ledger(state_dir, project)
    os.makedirs(book)
    os.symlink(book, f"{project}/docs/book")
    reserve(state_dir, project, "dave", "other/**")  # contended: read (the path names no own file)
    reason = refused(decide(state_dir, project, "echo x > docs/book/reservations.json"))
    assert reason == protected.message(
        f"the repository's ledger {book}", f"{project}/docs/book/reservations.json"
    )


def subagent(state_dir: str, project: str, rel: str) -> Writer:
    """carol's subagent leases `rel`; its card describes it as "fix login"."""
    sub = Writer("carol", "c3", agent_id="a1234567", agent_type="general-purpose")
    lease_for(state_dir, project, rel, sub)
    card_path = writer_cards.writer_path(ledger(state_dir, project), sub.key)
    card = json.loads(Path(card_path).read_text())
    card["description"] = "fix login"
    Path(card_path).write_text(json.dumps(card))
    return sub


SUBAGENT = 'the general-purpose subagent "fix login" (a1234567) of agent "carol"'


def test_the_refusals_name_a_subagent_holder_by_its_card(state_dir: str, project: str) -> None:
    subagent(state_dir, project, TARGET)
    Path(project, TARGET).write_text("x")
    for command in ["echo x > src/app.py", "rm -rf src", "git stash", TOO_DEEP]:
        assert SUBAGENT in refused_or_complex(decide(state_dir, project, command))


def refused_or_complex(verdict: Verdict) -> str:
    assert verdict.refusal is not None
    return verdict.refusal.reason


def test_a_command_given_up_on_is_refused_by_a_lease_of_one_minute(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = decide(state_dir, project, TOO_DEEP, environ={"AGENT_HOOKS_LEASE_MINUTES": "1"})
    assert verdict.refusal is not None and CAROL_LEASE in verdict.refusal.reason


def test_a_work_tree_rewrite_is_refused_by_a_lease_of_one_minute(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    verdict = decide(state_dir, project, "git stash", environ={"AGENT_HOOKS_LEASE_MINUTES": "1"})
    assert verdict.refusal is not None and '(agent "carol")' in verdict.refusal.reason


THIRTY = {"AGENT_HOOKS_LEASE_MINUTES": "30"}


def test_a_reservation_held_on_another_host_refuses_while_heard_from_within_the_lease_minutes(
    state_dir: str, project: str
) -> None:
    reserved_on_another_host(state_dir, project, heard_ago=1000)  # beyond the default 10 min
    reserved_text(
        refused(decide(state_dir, project, "echo x > src/app.py", environ=THIRTY)), TARGET
    )
    verdict = decide(state_dir, project, TOO_DEEP, environ=THIRTY)
    assert verdict.refusal is not None and '"carol"' in verdict.refusal.reason


def test_a_reservation_held_on_another_host_stops_refusing_once_its_owner_is_silent(
    state_dir: str, project: str
) -> None:
    reserved_on_another_host(state_dir, project, heard_ago=1900)
    reservation_store.set_strict(Repo(project, state_dir), True, NOW)  # read, but only a glob
    allowed(decide(state_dir, project, "sed -i s/a/b/ src/*.py", environ=THIRTY))


# Each of these killed a survivor of the first mutation run of shell_gate.


def test_a_work_tree_rewrite_with_no_place_to_judge_is_allowed(
    state_dir: str, tmp_path: Path
) -> None:
    nowhere = ToolCall(
        writer=ME, cwd=None, project=None, state_dir=state_dir, environ={}, now=LATER,
        holder_pid=ALIVE,
    )  # fmt: skip
    allowed(shell_gate.decide(nowhere, 'cd "$X" && git stash'))


def test_a_glob_keeps_its_wildcard_segments_unresolved(state_dir: str, project: str) -> None:
    """A file literally named `*.py` that is a symlink elsewhere does not move the glob."""
    lease_for(state_dir, project, TARGET, CAROL)
    os.symlink(f"{project}/docs/a.md", f"{project}/src/*.py")
    leased_text(refused(decide(state_dir, project, "sed -i s/a/b/ src/*.py")), TARGET, "src/*.py")


def test_a_glob_in_a_nested_repository_is_judged_by_the_agents_project_too(
    state_dir: str, project: str
) -> None:
    os.makedirs(f"{project}/lib/.git")
    lease_for(state_dir, project, "lib/x.py", CAROL)
    leased_text(
        refused(decide(state_dir, project, "sed -i s/a/b/ lib/*.py")), "lib/x.py", "lib/*.py"
    )


def test_a_symlink_to_a_ledger_file_is_the_ledger_file(state_dir: str, project: str) -> None:
    book = ledger(state_dir, project)
    os.makedirs(book)
    Path(book, "reservations.json").write_text("{}")
    os.symlink(f"{book}/reservations.json", f"{project}/docs/res.json")
    reserve(state_dir, project, "dave", "other/**")  # contended: read
    reason = refused(decide(state_dir, project, "echo x > docs/res.json"))
    assert reason == protected.message(
        f"the repository's ledger {book}", f"{project}/docs/res.json"
    )


def test_the_agents_own_ledger_is_protected_where_no_work_tree_holds_it(
    state_dir: str, tmp_path: Path
) -> None:
    """A repository whose git directory lies apart from its work tree
    (`git init --separate-git-dir`): its ledger is in no project."""
    root = os.path.realpath(tmp_path)
    os.makedirs(f"{root}/gitdir")
    Path(root, "gitdir", "HEAD").write_text("ref: refs/heads/main\n")
    os.makedirs(f"{root}/apart")
    Path(root, "apart", ".git").write_text(f"gitdir: {root}/gitdir\n")
    book = ledger(state_dir, f"{root}/apart")
    assert book == f"{root}/gitdir/agent-hooks"
    reason = refused(decide(state_dir, f"{root}/apart", f"echo x > {book}/reservations.json"))
    assert reason == protected.message(
        f"the repository's ledger {book}", f"{book}/reservations.json"
    )


def test_an_agent_in_no_repository_may_write_where_nobody_holds_anything(
    state_dir: str, tmp_path: Path
) -> None:
    os.makedirs(f"{tmp_path}/plain")
    allowed(decide(state_dir, None, "echo x > plain/f", cwd=str(tmp_path)))


def test_a_target_that_is_no_directory_is_judged_by_its_own_lease_only(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, "gone/a.py", CAROL)  # `gone` is no directory (any more)
    allowed(decide(state_dir, project, "rm -rf gone"))
    Path(project, "gone").write_text("a file now")
    allowed(decide(state_dir, project, "rm -rf gone"))


def test_a_directory_is_found_in_the_project_not_where_the_hook_runs(
    state_dir: str, project: str
) -> None:
    os.makedirs(f"{project}/pkg")
    lease_for(state_dir, project, "pkg/a.py", CAROL)
    assert not os.path.exists("pkg")
    leased_text(refused(decide(state_dir, project, "rm -rf pkg")), "pkg/a.py", "pkg")


def test_a_lease_on_a_directorys_own_path_refuses_removing_it(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, "pkg", CAROL)  # leased as a file, a directory now
    os.makedirs(f"{project}/pkg")
    leased_text(refused(decide(state_dir, project, "rm -rf pkg")), "pkg", "pkg")
