"""Several machines sharing one ledger through a real git remote (file:// and git
daemon on 127.0.0.1): reservations exact across machines, leases told after a
sync, double claims, silent hosts, and what faults leave behind (ADR-0016)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ledger_machines
from agent_hooks import jsonio, writers
from agent_hooks.leases import lease, lease_messages, lease_release
from agent_hooks.ledger import ledger_sync, remote_git, remote_ledger, remote_view
from agent_hooks.reservations import index_records, reservation_index
from ledger_machines import NOW, REMOTE, Machine, lock_held_elsewhere, remote_files, run_git

ROOT = Path(__file__).resolve().parents[3]


def remote_reservations(world: Any) -> list[dict[str, Any]]:
    return ledger_machines.remote_reservations(world.remote)


def three(world: Any) -> list[Machine]:
    machines = [world.machine(name) for name in ("alpha", "beta", "gamma")]
    for machine in machines:
        assert not machine.switch_on().conflicts
    return machines


# --- reservations: exact across machines -----------------------------------------------


def reservers(machines: list[Machine], count: int) -> list[subprocess.Popen[str]]:
    """`count` reserver processes (`tests/ledger_reserver.py`) spread over `machines`,
    each ready for its first round."""
    path = f"{ROOT / 'src'}:{ROOT / 'tests'}"
    procs = []
    for n in range(count):
        machine = machines[n % len(machines)]
        argv = [machine.state_dir, str(machine.repo), f"agent-{n}"]
        procs.append(
            subprocess.Popen(
                [sys.executable, str(ROOT / "tests" / "ledger_reserver.py"), *argv],
                env={**machine.environ, "PYTHONPATH": path},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return procs


def race(procs: list[subprocess.Popen[str]], lines: list[str]) -> list[list[str]]:
    """Give each reserver its line at once; their answers, in order."""
    for proc, line in zip(procs, lines, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    return [proc.stdout.readline().split() for proc in procs if proc.stdout]


def finish(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(60)


def test_eight_reservers_on_three_machines_have_one_winner_in_each_of_ten_rounds(
    any_world: Any,
) -> None:
    """Who wins is decided by what the remote recorded: the one reserver that says
    granted is the holder of the one grant there (its id), every other is refused
    naming that holder, and every machine enforces that grant after a sync."""
    machines = three(any_world)
    procs = reservers(machines, 8)
    try:
        for rnd in range(10):
            answers = race(procs, [f"{rnd} round-{rnd}/**"] * 8)
            held = [r for r in remote_reservations(any_world) if r["pattern"] == f"round-{rnd}/**"]
            assert len(held) == 1, (rnd, answers)
            winner = int(held[0]["agent"].removeprefix("agent-"))
            assert answers[winner] == ["granted", held[0]["id"]], (rnd, answers)
            for n, answer in enumerate(answers):
                if n != winner:
                    assert answer == ["refused", held[0]["agent"]], (rnd, n, answers)
            for machine in machines:
                machine.sync(NOW + rnd)
                mine = [r for r in machine.live(NOW + rnd) if r["pattern"] == f"round-{rnd}/**"]
                assert [r["id"] for r in mine] == [held[0]["id"]]
    finally:
        finish(procs)


def generation(world: Any) -> int:
    files = remote_files(world.remote)
    return int(json.loads(files["ledger.json"])["generation"]) if files else 0


def test_eight_reservers_of_separate_files_at_once_lose_no_update(any_world: Any) -> None:
    """Nothing conflicts, so each reserver is granted unless it lost every one of
    its attempts to other machines' pushes (CAS is lock-free, not wait-free). The
    oracle decides each case from the remote: every grant is there and is exactly
    one push (the generations the round added); a reserver refused as busy lost
    `ATTEMPTS` races, so the round saw at least that many other pushes; and a
    busy one asked again alone is granted."""
    machines = three(any_world)
    procs = reservers(machines, 8)
    granted: set[str] = set()
    try:
        for rnd in range(3):
            wanted = [f"r{rnd}/agent-{n}.py" for n in range(8)]
            before = generation(any_world)
            answers = race(procs, [f"{rnd} {text}" for text in wanted])
            pushes = generation(any_world) - before
            busy = [n for n, answer in enumerate(answers) if answer[0] != "granted"]
            for n in busy:
                assert " ".join(answers[n]).endswith(
                    "lost to other machines' writes; nothing was reserved: run the command again"
                ), answers[n]
            assert pushes == 8 - len(busy), (pushes, answers)
            assert not busy or pushes >= remote_ledger.ATTEMPTS, (pushes, answers)
            for n in busy:  # alone, nothing to lose to
                [answer] = race([procs[n]], [f"{rnd} {wanted[n]}"])
                assert answer[0] == "granted", answer
            granted.update(wanted)
            on_remote = {r["pattern"]: r["id"] for r in remote_reservations(any_world)}
            assert set(on_remote) == granted
    finally:
        finish(procs)


def test_a_reservation_made_on_one_machine_refuses_another_and_is_enforced_after_a_sync(
    any_world: Any,
) -> None:
    alpha, beta = any_world.machine("alpha"), any_world.machine("beta")
    alpha.switch_on()
    beta.switch_on()
    granted, done = alpha.reserve("a", "src/**")
    assert granted and done.pushed
    assert [r["pattern"] for r in alpha.live()] == ["src/**"]
    assert beta.live() == []  # not yet synced
    refused, _ = beta.reserve("b", "src/app/main.py")
    assert not refused  # planned against the remote, not beta's stale copy
    assert beta.sync(NOW + 1).ok
    hot = reservation_index.load_hot(str(beta.ledger))
    assert hot is not None and [rec[index_records.PATTERN] for rec in hot.candidates("src")] == [
        "src/**"
    ]
    [entry] = beta.live()
    assert entry["machine"] == "alpha" and entry["agent"] == "a"


def test_an_unreachable_remote_refuses_in_one_line_and_nothing_is_half_written(
    any_world: Any,
) -> None:
    alpha = any_world.machine("alpha")
    alpha.switch_on()
    assert alpha.reserve("a", "docs/**")[0]
    assert alpha.sync().ok
    before_local = (alpha.ledger / "reservations.json").read_bytes()
    before_remote = remote_files(any_world.remote)
    dead = (
        f"git://127.0.0.1:{any_world.daemon.port + 0}/nowhere.git"
        if any_world.daemon
        else f"file://{any_world.tmp}/nowhere.git"
    )
    run_git(alpha.repo, "remote", "set-url", REMOTE, dead, env=alpha.environ)
    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        alpha.reserve("a", "src/**")
    message = str(caught.value)
    assert "\n" not in message
    assert (
        "nothing was reserved" in message
        and "--local" in message
        and "run the command again" in message
    )
    assert (alpha.ledger / "reservations.json").read_bytes() == before_local
    assert remote_files(any_world.remote) == before_remote
    result = alpha.sync(NOW + 30)
    assert not result.ok and result.error and "\n" not in result.error
    view = remote_view.load(str(alpha.ledger))
    assert view is not None and view.header["ok"] is False and view.synced_at == NOW
    assert (alpha.ledger / "reservations.json").read_bytes() == before_local


def test_a_closed_port_is_unreachable_at_once(world: Any) -> None:
    from ledger_machines import free_port

    alpha = world.machine("alpha")
    run_git(
        alpha.repo,
        "remote",
        "set-url",
        REMOTE,
        f"git://127.0.0.1:{free_port()}/x.git",
        env=alpha.environ,
    )
    with pytest.raises(remote_ledger.RemoteUnavailable, match="did not answer"):
        alpha.switch_on()
    assert remote_ledger.remote_of(alpha.truth()) is None


# --- leases: local first, told after a sync ----------------------------------------------


def test_a_lease_on_one_machine_is_told_to_another_after_one_sync(any_world: Any) -> None:
    alpha, beta = any_world.machine("alpha"), any_world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    alpha.claim("src/app.py", "a")
    assert alpha.sync(NOW + 1).ok
    assert beta.sync(NOW + 2).ok
    view = remote_view.load(str(beta.ledger))
    assert view is not None
    [seen] = view.leases_on("src/app.py")
    assert seen["machine"] == "alpha" and seen["writer"] == "a"
    judged = lease.judge(
        view.leases_on("src/app.py"),
        writers.Writer("b", "c"),
        str(beta.repo),
        NOW + 3,
        lambda _: None,
    )
    assert judged.blockers == [] and judged.elsewhere == [seen]  # like another worktree's
    note = lease_messages.elsewhere_note("src/app.py", judged.elsewhere, NOW + 63)
    assert "alpha:" in note and "1 min ago" in note
    assert remote_view.load(str(alpha.ledger)).leases_on("src/app.py") == []  # its own


def test_a_double_claim_is_found_and_both_sides_are_told(any_world: Any) -> None:
    alpha, beta = any_world.machine("alpha"), any_world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    alpha.claim("src/app.py", "a", NOW)
    beta.claim("src/app.py", "b", NOW + 5)  # inside the window: beta has not synced
    assert alpha.sync(NOW + 6).ok
    found = beta.sync(NOW + 7)
    [claim] = found.double_claims
    assert claim["path"] == "src/app.py" and claim["winner"] == "alpha"
    assert {h["machine"] for h in claim["holders"]} == {"alpha", "beta"}
    # alpha's lease ends before alpha syncs again: it still hears of it from beta
    lease_release.release(str(alpha.ledger), lambda item: True, NOW + 8)
    told = alpha.sync(NOW + 9)
    assert [c["id"] for c in told.double_claims] == [claim["id"]]
    for machine in (alpha, beta):
        view = remote_view.load(str(machine.ledger))
        assert view is not None and [c["id"] for c in view.double_claims()] == [claim["id"]]


def test_a_silent_host_holds_nothing_after_its_lease_minutes(any_world: Any) -> None:
    alpha, beta = any_world.machine("alpha"), any_world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    alpha.claim("src/app.py", "a", NOW)
    assert alpha.sync(NOW).ok
    assert beta.sync(NOW + 60).ok
    view = remote_view.load(str(beta.ledger))
    assert view is not None and view.heard_from("alpha", NOW + 60)
    assert len(view.leases_on("src/app.py")) == 1
    later = NOW + 10 * 60 + 1
    assert beta.sync(later).ok
    view = remote_view.load(str(beta.ledger))
    assert view is not None and not view.heard_from("alpha", later)
    assert view.leases_on("src/app.py") == []
    report = ledger_sync.read_report(str(beta.ledger))
    assert report["hosts"]["alpha"]["silent"] is True


# --- faults ----------------------------------------------------------------------------


def test_two_syncs_at_once_on_one_host_the_second_returns_at_once(world: Any) -> None:
    alpha = world.machine("alpha")
    alpha.switch_on()
    with lock_held_elsewhere(str(alpha.ledger / ledger_sync.LOCK)):
        result = alpha.sync()
        assert result.skipped == "another sync of this ledger is running" and not result.error
    assert alpha.sync().ok


def test_two_real_syncs_started_together_both_end_well(world: Any) -> None:
    alpha = world.machine("alpha")
    alpha.switch_on()
    alpha.claim("src/app.py", "a")
    code = (
        "import sys;sys.path.insert(0,sys.argv[1]);from agent_hooks.ledger import ledger_sync;"
        "sys.exit(ledger_sync.main(sys.argv[2:]))"
    )
    argv = [sys.executable, "-c", code, str(ROOT / "src"), str(alpha.ledger)]
    procs = [subprocess.Popen(argv, env=alpha.environ) for _ in range(2)]
    assert [proc.wait(60) for proc in procs] == [
        0,
        0,
    ]  # one synced, the other synced or stood aside
    _valid_local(alpha)
    doc = json.loads(remote_files(world.remote)["hosts/alpha.json"])
    assert [x["path"] for x in doc["leases"]] == ["src/app.py"]


def _valid_local(machine: Machine) -> None:
    loaded = reservation_index.load_truth(str(machine.ledger))
    assert loaded.problem is None
    reservation_index.load_hot(str(machine.ledger))
    view_file = machine.ledger / remote_view.VIEW
    if view_file.exists():
        assert remote_view.load(str(machine.ledger)) is not None
    report = machine.ledger / remote_view.REPORT
    if report.exists():
        jsonio.loads(report.read_bytes())


def test_a_sync_never_undoes_a_reservation_written_through_while_it_ran(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reserve on this machine lands between the sync's fetch and its push: the
    sync reads the local truth only under the ledger's lock, after its fetch, and
    a push built before the reserve loses its race; the grant stays here and on
    the remote."""
    alpha = world.machine("alpha")
    alpha.switch_on()
    alpha.claim("src/a.py", "a")
    git = alpha.git()
    real_fetch = git.fetch
    fetched: list[int] = []

    def fetch(remote: str) -> remote_git.Snapshot:
        snap = real_fetch(remote)
        if not fetched:
            fetched.append(1)
            assert alpha.reserve("a", "lib/**", NOW + 1)[0]
        return snap

    monkeypatch.setattr(git, "fetch", fetch)
    result = ledger_sync.sync(str(alpha.ledger), git, REMOTE, "alpha", NOW + 2)
    assert result.ok, result.error
    assert [r["pattern"] for r in alpha.live(NOW + 2)] == ["lib/**"]
    assert [r["pattern"] for r in remote_reservations(world)] == ["lib/**"]
    assert alpha.sync(NOW + 3).ok and not alpha.sync(NOW + 4).pushed


def test_a_sync_killed_half_way_leaves_the_local_ledger_valid_and_the_next_one_recovers(
    world: Any,
) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    assert beta.reserve("b", "lib/**")[0]
    alpha.claim("src/app.py", "a")
    code = (
        "import sys;sys.path.insert(0,sys.argv[1]);from agent_hooks.ledger import ledger_sync;"
        "sys.exit(ledger_sync.main(sys.argv[2:]))"
    )
    for step in range(12):  # killed at twelve different moments of its work
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(ROOT / "src"), str(alpha.ledger)],
            env=alpha.environ,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=0.02 + step * 0.03)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        _valid_local(alpha)
        result = alpha.sync()
        assert result.ok, result.error
        _valid_local(alpha)
    assert [r["pattern"] for r in alpha.live()] == ["lib/**"]
    files = remote_files(world.remote)
    assert json.loads(files["hosts/alpha.json"])["leases"][0]["path"] == "src/app.py"


def test_one_host_name_used_by_two_ledgers_is_refused_with_what_to_do(world: Any) -> None:
    alpha = world.machine("alpha")
    twin = world.machine("twin")
    twin.environ["AGENT_HOOKS_HOST"] = "alpha"
    twin.name = "alpha"
    alpha.switch_on()
    twin.switch_on()
    assert alpha.sync().ok
    result = twin.sync(NOW + 1)
    assert not result.ok and "AGENT_HOOKS_HOST" in (result.error or "")
    later = NOW + 11 * 60  # once the first falls silent, the name can be taken over
    assert twin.sync(later).ok


def test_reservations_of_this_hosts_dead_holders_are_dropped_from_the_remote(world: Any) -> None:
    """Only the machine a holder ran on judges its process: beta keeps alpha's
    reservation; alpha's sync drops it, records why, and its document on the
    remote follows."""
    from agent_hooks import liveness

    alpha, beta = world.machine("alpha"), world.machine("beta")
    for machine in (alpha, beta):
        machine.switch_on()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    holder = {"pid": gone.pid, "start": liveness.start_time(gone.pid), "host": liveness.host()}
    gone.wait()
    assert alpha.store_reserve("a", "src/**", holder=holder).changed
    assert [r["pattern"] for r in remote_reservations(world)] == ["src/**"]
    assert beta.sync(NOW + 1).ok
    assert len(beta.live(NOW + 1)) == 1  # beta cannot judge alpha's process
    result = alpha.sync(NOW + 2)
    assert result.ok and result.pushed and remote_reservations(world) == []
    assert alpha.live(NOW + 2) == []
    assert alpha.dropped()[-1]["why"] == "its holder's process is gone"
    assert beta.sync(NOW + 3).ok and beta.live(NOW + 3) == []


def test_the_users_repository_gets_no_ledger_objects_refs_or_fetch_head(world: Any) -> None:
    alpha = world.machine("alpha")
    before = run_git(alpha.repo, "count-objects", "-v", env=alpha.environ)
    refs_before = run_git(alpha.repo, "for-each-ref", env=alpha.environ)
    alpha.switch_on()
    assert alpha.reserve("a", "src/**")[0]
    alpha.claim("src/app.py", "a")
    assert alpha.sync().ok
    assert run_git(alpha.repo, "count-objects", "-v", env=alpha.environ) == before
    assert run_git(alpha.repo, "for-each-ref", env=alpha.environ) == refs_before
    assert not (alpha.common / "FETCH_HEAD").exists()
    private = alpha.ledger / remote_git.PRIVATE_REPO
    refs = subprocess.run(
        ["git", f"--git-dir={private}", "for-each-ref"],
        capture_output=True,
        text=True,
        env=alpha.environ,
    ).stdout
    assert refs == ""  # fetch refs are deleted before a fetch returns
