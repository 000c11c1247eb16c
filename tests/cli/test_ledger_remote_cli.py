"""`agent-hooks ledger remote | sync | status` against a real bare remote: switching on
and off, syncing, the status people read, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import Cli, one_line_error
from click.testing import Result

import ledger_machines
from agent_hooks.cli import ledger_remote
from agent_hooks.reservations import index_build, pattern
from ledger_machines import NOW, REMOTE, Machine, World, remote_files, run_git


class Box:
    """One machine and the CLI as run on it."""

    def __init__(self, world: World, name: str) -> None:
        self.machine: Machine = world.machine(name)
        self.cli = Cli(self.machine.home, self.machine.repo, ledger_remote)

    def __call__(self, *args: str, now: float = NOW) -> Result:
        return self.cli(*args, env=self.machine.environ, now=now)

    def ok(self, *args: str, now: float = NOW) -> Result:
        result = self(*args, now=now)
        assert result.exit_code == 0, (result.output, result.exception)
        return result


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path, None)


def test_switch_on_sync_status_and_off(world: World) -> None:
    alpha, beta = Box(world, "alpha"), Box(world, "beta")
    assert "off" in alpha.ok("ledger", "status").output
    out = alpha.ok("ledger", "remote", REMOTE).output
    assert f"shared through remote {REMOTE}" in out and "this machine is host alpha" in out
    assert "synced with origin" in out
    assert "refs/agent-hooks/v2/ledger" in alpha.ok("ledger", "remote").output
    beta.ok("ledger", "remote", REMOTE, now=NOW + 1)
    alpha.machine.claim("src/app.py", "a", NOW + 2)
    alpha.ok("ledger", "sync", now=NOW + 3)
    beta.machine.claim("src/app.py", "b", NOW + 4)
    synced = beta.ok("ledger", "sync", now=NOW + 5).output
    assert "1 other host(s), 1 lease(s) of theirs, 1 double claim(s)" in synced
    assert "double claim: src/app.py is leased by" in synced and "alpha claimed it first" in synced
    status = beta.ok("ledger", "status", now=NOW + 20).output
    assert "last sync: 15s ago, ok" in status
    assert "alpha: heartbeat 17s ago, 1 lease(s), lease minutes 10" in status
    assert "beta (this machine)" in status and "double claim: src/app.py" in status
    stale = beta.ok("ledger", "status", now=NOW + 700).output
    assert "older than 30 s" in stale and "silent: holds nothing" in stale
    data = json.loads(beta.ok("ledger", "status", "--json", now=NOW + 20).output)
    assert data["remote"] == REMOTE and data["host"] == "beta" and data["ok"] is True
    assert sorted(data["hosts"]) == ["alpha", "beta"] and len(data["double_claims"]) == 1
    off = beta.ok("ledger", "remote", "--off").output
    assert "no longer shared through origin" in off
    assert "off" in beta.ok("ledger", "status").output
    assert "already off" in beta.ok("ledger", "remote", "--off").output


def test_switching_on_pushes_reservations_and_reports_json(world: World) -> None:
    alpha = Box(world, "alpha")
    entry = {
        "id": "r-1",
        "agent": "a",
        "pattern": "src/**",
        "compiled": pattern.compile("src/**"),
        "mode": "exclusive",
        "expires_at": NOW + 600,
    }
    index_build.write(str(alpha.machine.ledger), {"reservations": [entry]})
    data = json.loads(alpha.ok("ledger", "remote", REMOTE, "--json").output)
    assert data["pushed"] == ["r-1"] and data["host"] == "alpha" and data["sync"]["ok"] is True
    assert [r["id"] for r in remote_reservations(world)] == ["r-1"]
    synced = json.loads(alpha.ok("ledger", "sync", "--json").output)
    assert synced["ok"] is True and synced["remote"] == REMOTE


def test_a_conflict_refuses_switching_on_in_one_line(world: World) -> None:
    alpha, beta = Box(world, "alpha"), Box(world, "beta")
    beta.ok("ledger", "remote", REMOTE)
    assert beta.machine.reserve("b", "src/**")[0]
    entry = {
        "id": "r-a",
        "agent": "a",
        "pattern": "src/x.py",
        "mode": "exclusive",
        "expires_at": NOW + 600,
    }
    index_build.write(
        str(alpha.machine.ledger),
        {"reservations": [{**entry, "compiled": pattern.compile("src/x.py")}]},
    )
    line = one_line_error(alpha("ledger", "remote", REMOTE))
    assert (
        'not switched on: agent "a" holds src/x.py' in line
        and 'agent "b" on machine beta holds src/**' in line
    )
    assert "off" in alpha.ok("ledger", "status").output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("ledger", "remote", "upstream"), "this repository has no remote named 'upstream'"),
        (("ledger", "sync"), "the shared ledger is off for this repository"),
    ],
)
def test_bad_requests_fail_in_one_line(world: World, args: tuple[str, ...], expected: str) -> None:
    alpha = Box(world, "alpha")
    assert expected in one_line_error(alpha(*args))


def test_usage_errors(world: World) -> None:
    alpha = Box(world, "alpha")
    both = alpha("ledger", "remote", REMOTE, "--off")
    assert both.exit_code == 2 and "give a remote NAME or --off, not both" in both.output
    assert alpha("ledger", "remote", "bad name").exit_code == 2
    bad_host = alpha.cli(
        "ledger", "remote", REMOTE, env={**alpha.machine.environ, "AGENT_HOOKS_HOST": "a/b"}
    )
    assert "AGENT_HOOKS_HOST" in one_line_error(bad_host)


def test_an_unreachable_remote_fails_in_one_line_with_what_to_do(world: World) -> None:
    alpha = Box(world, "alpha")
    run_git(
        alpha.machine.repo,
        "remote",
        "set-url",
        REMOTE,
        f"file://{world.tmp}/gone.git",
        env=alpha.machine.environ,
    )
    line = one_line_error(alpha("ledger", "remote", REMOTE))
    assert "did not answer" in line and "nothing was switched on" in line
    index_build.write(
        str(alpha.machine.ledger), {"settings": {"remote": REMOTE}, "reservations": []}
    )
    line = one_line_error(alpha("ledger", "sync"))
    assert line.startswith("Error: sync with origin failed: cannot fetch the ledger from origin")
    status = alpha.ok("ledger", "status").output
    assert "failed: cannot fetch the ledger" in status and "last good sync never" in status


def test_outside_a_git_work_tree(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "plain"
    home.mkdir()
    project.mkdir()
    cli = Cli(home, project, ledger_remote)
    assert "is not a git work tree" in one_line_error(cli("ledger", "status"))


def test_help_texts() -> None:
    from click.testing import CliRunner

    for args in (
        ["--help"],
        ["remote", "--help"],
        ["sync", "--help"],
        ["status", "--help"],
        ["repair", "--help"],
    ):
        result = CliRunner().invoke(ledger_remote.ledger_group, args)
        assert result.exit_code == 0 and "Usage:" in result.output


def test_the_group_is_registered_in_the_command_line() -> None:
    from agent_hooks.cli import main

    assert sorted(main.commands["ledger"].commands) == ["remote", "repair", "status", "sync"]  # type: ignore[attr-defined]


def test_reserve_release_renew_through_the_cli_with_the_remote_and_without_it(
    world: World,
) -> None:
    """Reservation changes go to the remote first; an unreachable remote refuses them
    in one line naming --local, and nothing is written anywhere; --local works here
    (reserve: this machine only; release: here now, the remote at the next sync)."""
    from agent_hooks.cli import reservations as reservations_module
    from agent_hooks.cli import reserve as reserve_module
    from ledger_machines import wait_for_syncs

    alpha, beta = Box(world, "alpha"), Box(world, "beta")
    for box in (alpha, beta):
        box.cli = Cli(
            box.machine.home, box.machine.repo, ledger_remote, reserve_module, reservations_module
        )
        box.ok("ledger", "remote", REMOTE)
    alpha.ok("reserve", "src/**", "--reason", "issue-20")
    assert [r["pattern"] for r in remote_reservations(world)] == ["src/**"]
    refused = beta("reserve", "src/x.py", now=NOW + 1)  # beta never synced: the remote says
    assert refused.exit_code == 1 and "conflict: src/x.py overlaps" in refused.output
    beta.ok("ledger", "sync", now=NOW + 2)
    listed = beta.ok("reservations", now=NOW + 3).output
    assert "on machine alpha" in listed and "src/**" in listed
    truth = alpha.machine.ledger / "reservations.json"
    url = run_git(alpha.machine.repo, "remote", "get-url", REMOTE)
    run_git(alpha.machine.repo, "remote", "set-url", REMOTE, f"file://{world.tmp}/gone.git")
    before, remote_before = truth.read_bytes(), remote_files(world.remote)
    for args in (("reserve", "docs/**"), ("release", "src/**"), ("renew", "src/**")):
        line = one_line_error(alpha(*args, now=NOW + 4))
        assert "did not answer" in line and "--local" in line and "nothing was" in line
        assert truth.read_bytes() == before and remote_files(world.remote) == remote_before
    alpha.ok("reserve", "--local", "docs/**", now=NOW + 5)
    assert [r["pattern"] for r in alpha.machine.live(NOW + 5) if r.get("local")] == ["docs/**"]
    alpha.ok("release", "docs/**", now=NOW + 6)  # made here only: no remote needed
    alpha.ok("release", "--local", "src/**", now=NOW + 7)
    assert alpha.machine.live(NOW + 7) == []
    assert remote_files(world.remote) == remote_before
    wait_for_syncs(alpha.machine.ledger)  # the one --local started could not reach it
    assert [r["pattern"] for r in remote_reservations(world)] == ["src/**"]
    run_git(alpha.machine.repo, "remote", "set-url", REMOTE, url)
    alpha.ok("ledger", "sync", now=NOW + 8)  # this machine's document follows its ledger
    assert remote_reservations(world) == []


def test_repair_with_nothing_to_repair_and_without_a_shared_ledger(world: World) -> None:
    alpha = Box(world, "alpha")
    assert "nothing to repair" in one_line_error(alpha("ledger", "repair"))
    alpha.ok("ledger", "remote", REMOTE)
    assert alpha.ok("ledger", "repair").output.startswith("nothing to repair")
    assert json.loads(alpha.ok("ledger", "repair", "--json").output)["repaired"] == []


def remote_reservations(world: World) -> list[dict[str, object]]:
    return ledger_machines.remote_reservations(world.remote)
