"""What a fault of the shared remote may and may not take, over real git (issue 35):
a machine never drops its own live grant because the remote forgot it (a rewound
ref, a deleted one), releases stay released, a double claim is decided by one
rule and its loser told, and nothing that cannot be read is written over. Each
machine is a clone with its own HOME and AGENT_HOOKS_HOST; the remote is a bare
repository over file:// (and git daemon where the transport matters)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from agent_hooks.cli import main
from agent_hooks.cli._common import Env
from agent_hooks.ledger import remote_git, remote_ledger
from agent_hooks.reservations import reservation
from ledger_machines import (
    NOW,
    History,
    Machine,
    World,
    ledger_commit,
    remote_files,
    remote_reservations,
    remote_tombstones,
    set_ref_by_hand,
    wait_for_syncs,
)


def machines(world: World, *names: str) -> list[Machine]:
    found = [world.machine(name) for name in names]
    for machine in found:
        assert not machine.switch_on().conflicts
        machine.meet("a")
        machine.meet("b")
    return found


def patterns(machine: Machine, now: float = NOW) -> list[str]:
    return sorted(r["pattern"] for r in machine.live(now))


def settle(*hosts: Machine, now: float = NOW) -> None:
    """Every host syncs until a whole round pushes nothing (the point at which the
    invariants are stated: once every host has synced)."""
    for _ in range(4):
        pushed = [host.sync(now) for host in hosts]
        assert all(r.ok for r in pushed), [r.error for r in pushed]
        if not any(r.pushed for r in pushed):
            return
    raise AssertionError("the hosts kept pushing")


def granted_behind_a_rewind(
    world: World, first: Machine, first_text: str, second: Machine, second_text: str
) -> None:
    """`first` is granted `first_text`; the ref is set back to the commit before;
    `second` is granted `second_text` (it cannot see the first grant)."""
    history = History(world.remote)
    history.record()
    assert first.reserve("a", first_text, NOW)[0]
    history.record()
    history.rewind(-2)
    assert second.reserve("b", second_text, NOW + 5)[0]  # granted: the remote forgot it


def cli_on(machine: Machine, *args: str, input: str | None = None, now: float = NOW) -> Any:
    """`agent-hooks ARGS` on `machine`, at `now`."""
    env = {**machine.environ, "AGENT_NAME": "person"}
    return CliRunner().invoke(
        main,
        [*args, "--project", str(machine.repo)],
        obj=Env(environ=env, now=now),
        input=input,
        catch_exceptions=False,
    )


# --- a rewound ref ---------------------------------------------------------------------------


def test_a_rewound_ref_loses_no_live_grant_and_the_later_double_claim_is_dropped_and_told(
    world: World,
) -> None:
    """The issue's second case: a1 on host1 holds src/**; the ref is set back to the
    commit before; a2 on host2 is granted src/** (it cannot see a1's). Once both
    synced: a1 still holds it on both machines (never refused its own area), a2's
    grant is dropped on host2 with a2 told, `reservations --dropped` says so, and
    `ledger status` shows it."""
    host1, host2 = machines(world, "host1", "host2")
    granted_behind_a_rewind(world, host1, "src/**", host2, "src/**")
    assert cli_on(host1, "ledger", "sync", now=NOW + 10).exit_code == 0  # as a person runs it
    assert cli_on(host2, "ledger", "sync", now=NOW + 10).exit_code == 0
    settle(host1, host2, now=NOW + 10)
    for host in (host1, host2):
        [held] = host.live(NOW + 10)
        assert (held["agent"], held["machine"]) == ("a", "host1")
    assert host1.blockers("a", "src/x.py", NOW + 10) == []  # its own area, still its own
    assert host2.blockers("b", "src/x.py", NOW + 10) == ["src/**"]
    [lost] = host2.dropped()
    assert lost["agent"] == "b" and "lost a double claim to" in lost["why"]
    assert any("src/**" in text and "was dropped" in text for text in host2.alerts("b"))
    assert host1.alerts("a") == []
    shown = cli_on(host2, "reservations", "--dropped")
    assert shown.exit_code == 0 and "lost a double claim" in shown.output
    status = cli_on(host2, "ledger", "status")
    assert "dropped here" in status.output and "double claim" in status.output
    assert "double claims: none" not in status.output
    assert [r["agent"] for r in remote_reservations(world.remote)] == ["a"]


def test_the_double_claim_is_won_by_the_earlier_grant_even_from_a_machine_that_sorts_last(
    world: World,
) -> None:
    """zulu grants first, alpha (first by name) later after a rewind: zulu's stands."""
    zulu, alpha = machines(world, "zulu", "alpha")
    granted_behind_a_rewind(world, zulu, "lib/**", alpha, "lib/x/**")
    settle(alpha, zulu, now=NOW + 10)
    for host in (alpha, zulu):
        assert [(r["machine"], r["pattern"]) for r in host.live(NOW + 10)] == [("zulu", "lib/**")]
    assert "lost a double claim" in alpha.dropped()[-1]["why"]


def test_a_release_stays_released_when_the_ref_is_rewound_to_before_it(world: World) -> None:
    """host1 releases src/**; the ref is set back to a commit that still holds it.
    host2 never takes the older version back (it took a newer one), and host1
    writes its own again: src/** is free everywhere once both synced."""
    host1, host2 = machines(world, "host1", "host2")
    history = History(world.remote)
    assert host1.reserve("a", "src/**", NOW)[0]
    history.record()
    settle(host1, host2, now=NOW + 1)
    assert patterns(host2, NOW + 1) == ["src/**"]
    host1.store_release("a", everything=True, now=NOW + 2)
    settle(host1, host2, now=NOW + 3)
    assert patterns(host2, NOW + 3) == []
    history.rewind(0)
    assert host2.sync(NOW + 4).ok
    assert patterns(host2, NOW + 4) == []  # the older version is not taken back
    settle(host1, host2, now=NOW + 5)
    assert patterns(host1, NOW + 5) == [] and patterns(host2, NOW + 5) == []
    assert remote_reservations(world.remote) == []


def test_a_forced_release_from_another_machine_stays_released_across_a_rewind(
    world: World,
) -> None:
    """host2 releases host1's grant with --force: a tombstone in host2's document.
    The ref is rewound to before it; host1 (not yet synced) re-asserts its grant,
    host2 re-asserts its tombstone: the grant is dropped on host1, its holder told,
    and never comes back."""
    host1, host2 = machines(world, "host1", "host2")
    history = History(world.remote)
    assert host1.reserve("a", "src/**", NOW)[0]
    history.record()
    settle(host1, host2, now=NOW + 1)
    [held] = host2.live(NOW + 1)
    forced = host2.force_release(held["id"], NOW + 2)
    assert [r["id"] for r in forced.changed] == [held["id"]]
    [stone] = remote_tombstones(world.remote)
    assert (stone["id"], stone["machine"], stone["by"]) == (held["id"], "host1", "host2")
    assert "release --force" in stone["why"]
    history.rewind(0)
    settle(host1, host2, now=NOW + 3)
    assert patterns(host1, NOW + 3) == [] and patterns(host2, NOW + 3) == []
    assert "release --force" in host1.dropped()[-1]["why"]
    assert any("was dropped" in text for text in host1.alerts("a"))
    assert remote_reservations(world.remote) == []


# --- a deleted ref -----------------------------------------------------------------------------


def test_a_deleted_ref_loses_no_live_grant_of_any_machine(world: World) -> None:
    """The ref deleted: host1's own next sync puts its grant back (it used to wipe
    it); host3, which syncs before host2 does, keeps host2's as it last took it
    until host2 writes it again."""
    host1, host2, host3 = machines(world, "host1", "host2", "host3")
    assert host1.reserve("a", "src/**", NOW)[0]
    assert host2.reserve("b", "lib/**", NOW)[0]
    settle(host1, host2, host3, now=NOW + 1)
    History(world.remote).delete()
    assert host1.sync(NOW + 2).ok
    assert patterns(host1, NOW + 2) == ["lib/**", "src/**"]
    assert [r["pattern"] for r in remote_reservations(world.remote)] == ["src/**"]
    assert host3.sync(NOW + 3).ok
    assert patterns(host3, NOW + 3) == ["lib/**", "src/**"]  # host2's, as last taken
    settle(host1, host2, host3, now=NOW + 4)
    assert sorted(r["pattern"] for r in remote_reservations(world.remote)) == ["lib/**", "src/**"]
    for host in (host1, host2, host3):
        assert patterns(host, NOW + 4) == ["lib/**", "src/**"]
        assert host.dropped() == []


# --- what cannot be read is never written over ----------------------------------------------


def big_document(host: str, count: int) -> bytes:
    entries = [
        {
            "id": f"r-{n:06d}",
            "agent": "b",
            "pattern": f"src/module_{n:05d}/implementation_file_{n:05d}.py",
            "mode": "exclusive",
            "reason": "refactoring the whole source tree in one pass",
            "created_at": NOW,
            "expires_at": NOW + 3600,
            "keep": False,
            "holder": None,
            "conversation_id": None,
            "source": "cli",
        }
        for n in range(count)
    ]
    doc = {
        "format": 2,
        "host": host,
        "instance": "f" * 16,
        "seq": 5,
        "written_at": NOW,
        "reservations": entries,
        "tombstones": [],
    }
    return json.dumps(doc).encode()


def test_a_reservation_past_the_read_limit_is_refused_in_one_line_before_anything_is_pushed(
    world: World,
) -> None:
    """The issue's first case, as it starts: one `reserve` of 3,000 files would make
    this machine's document 1.2 MB, past the 1 MiB every machine reads."""
    (host2,) = machines(world, "host2")
    assert host2.reserve("b", "docs/**", NOW)[0]
    before = remote_files(world.remote)
    local = (host2.ledger / "reservations.json").read_bytes()
    texts = [f"src/module_{n:05d}/implementation_file_{n:05d}.py" for n in range(3000)]
    with pytest.raises(reservation.ReservationError) as caught:
        host2.store_reserve_all("b", texts, NOW + 1, reason="refactoring the whole source tree")
    message = str(caught.value)
    assert "\n" not in message and f"over the {remote_git.MAX_BLOB}-byte limit" in message
    assert "nothing was reserved" in message and "src/**" in message
    assert remote_files(world.remote) == before
    assert (host2.ledger / "reservations.json").read_bytes() == local


def test_another_machines_document_past_the_read_limit_is_never_written_over(
    world: World,
) -> None:
    """host2's document is 1.2 MB (an older agent-hooks, or by hand): host1 cannot
    read it. host1 refuses a `reserve` (it cannot check against it) in one line
    naming why and the repair; its sync still shares its leases and carries
    host2's document over byte for byte; host2 drops none of its own; `ledger
    status` says so; `ledger repair`, confirmed, removes it and host2 writes its
    own again."""
    host1, host2 = machines(world, "host1", "host2")
    assert host2.reserve("b", "lib/**", NOW)[0]
    settle(host1, host2, now=NOW + 1)
    files = {k: v.encode() for k, v in remote_files(world.remote).items()}
    files["grants/host2.json"] = big_document("host2", 3600)
    assert len(files["grants/host2.json"]) > remote_git.MAX_BLOB
    set_ref_by_hand(world.remote, files)
    with pytest.raises(reservation.ReservationError) as caught:
        host1.store_reserve("a", "docs/**", NOW + 2)
    message = str(caught.value)
    assert "\n" not in message and "nothing was reserved" in message
    assert "grants/host2.json" in message and "ledger repair" in message
    host1.claim("src/app.py", "a", NOW + 3)
    result = host1.sync(NOW + 3)
    assert result.ok and result.pushed
    assert remote_files(world.remote)["grants/host2.json"].encode() == files["grants/host2.json"]
    assert json.loads(remote_files(world.remote)["hosts/host1.json"])["leases"][0]["path"] == (
        "src/app.py"
    )
    assert patterns(host1, NOW + 3) == ["lib/**"]  # as last read: never taken as empty
    status = cli_on(host1, "ledger", "status")
    assert "unreadable on the remote: grants/host2.json" in status.output
    assert host2.sync(NOW + 4).ok  # its own document: rewritten from its own ledger
    assert patterns(host2, NOW + 4) == ["lib/**"] and host2.dropped() == []
    set_ref_by_hand(world.remote, files)
    refused = cli_on(host1, "ledger", "repair", input="n\n")
    assert refused.exit_code == 1 and "nothing was changed" in refused.output
    assert remote_files(world.remote)["grants/host2.json"].encode() == files["grants/host2.json"]
    done = cli_on(host1, "ledger", "repair", input="y\n")
    assert done.exit_code == 0, done.output
    assert "would remove grants/host2.json" in done.output
    assert "grants/host2.json" not in remote_files(world.remote)
    settle(host1, host2, now=NOW + 5)
    assert [r["pattern"] for r in remote_reservations(world.remote)] == ["lib/**"]
    assert host1.store_reserve("a", "docs/**", NOW + 6).changed


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (b'{"format": 2, "host": "host2", "reserv', "not JSON"),
        (b'{"format": 3, "host": "host2"}', "format 3 where this agent-hooks reads format 2"),
    ],
)
def test_another_machines_damaged_or_newer_document_refuses_a_reserve_and_stands(
    world: World, damage: bytes, why: str
) -> None:
    host1, host2 = machines(world, "host1", "host2")
    assert host2.reserve("b", "lib/**", NOW)[0]
    settle(host1, host2, now=NOW + 1)
    files = {k: v.encode() for k, v in remote_files(world.remote).items()}
    files["grants/host2.json"] = damage
    set_ref_by_hand(world.remote, files)
    with pytest.raises(reservation.ReservationError, match=why):
        host1.store_reserve("a", "docs/**", NOW + 2)
    assert host1.sync(NOW + 2).ok
    assert patterns(host1, NOW + 2) == ["lib/**"]
    assert remote_files(world.remote)["grants/host2.json"].encode() == damage
    released = host1.store_reserve("a", "docs/**", NOW + 3, local=True)
    assert released.changed  # --local needs no remote


@pytest.mark.parametrize(
    ("files", "kind", "why"),
    [
        ({"x": b"not a commit"}, "blob", "names a blob, not a commit"),
        ({"ledger.json": b'{"format": 3, "lineage": "n", "generation": 1}'}, "commit", "format 3"),
        (
            {"reservations.json": b'{"reservations": []}', "ledger.json": b'{"schema": 1}'},
            "commit",
            "format None",
        ),
    ],
)
def test_a_ledger_that_cannot_be_read_at_all_is_never_written_over_until_repaired(
    world: World, files: dict[str, bytes], kind: str, why: str
) -> None:
    """A ref naming a blob, a ledger.json of a format this version does not know (a
    newer one; the first layout's): every sync and every change is refused in one
    line naming why and the repair, and the remote stays exactly as it was; local
    reservations stand; `ledger repair --yes` starts a new ledger and every
    machine writes its own again."""
    host1, host2 = machines(world, "host1", "host2")
    assert host1.reserve("a", "src/**", NOW)[0]
    assert host2.reserve("b", "lib/**", NOW)[0]
    settle(host1, host2, now=NOW + 1)
    target = set_ref_by_hand(world.remote, files, kind)
    result = host1.sync(NOW + 2)
    assert not result.ok and result.error and why in result.error and "\n" not in result.error
    assert "ledger repair" in result.error and result.blocked
    with pytest.raises(reservation.ReservationError, match="ledger repair"):
        host1.store_reserve("a", "docs/**", NOW + 2)
    with pytest.raises(reservation.ReservationError, match="cannot be read"):
        host1.store_release("a", everything=True, now=NOW + 2)
    assert ledger_commit(world.remote) == target
    assert patterns(host1, NOW + 2) == ["lib/**", "src/**"]
    status = cli_on(host1, "ledger", "status")
    assert "cannot be read" in status.output and "ledger repair" in status.output
    repaired = cli_on(host1, "ledger", "repair", "--yes")
    assert repaired.exit_code == 0, repaired.output
    assert "would start the shared ledger anew" in repaired.output
    settle(host1, host2, now=NOW + 3)
    assert sorted(r["pattern"] for r in remote_reservations(world.remote)) == ["lib/**", "src/**"]
    assert patterns(host2, NOW + 3) == ["lib/**", "src/**"]
    assert cli_on(host1, "ledger", "repair").output.startswith("nothing to repair")


# --- judged elsewhere: a clock ahead, a silent machine ----------------------------------------


def test_a_grant_over_one_expired_on_a_clock_ahead_leaves_a_tombstone_its_holder_respects(
    world: World,
) -> None:
    """host2's clock runs 2 minutes ahead: it judges host1's src/** expired and
    grants src/app/** over it, writing a tombstone. host1 (whose clock still has
    it) drops its own at its sync, tells its holder, and never puts it back: one
    holder, not two."""
    host1, host2 = machines(world, "host1", "host2")
    assert host1.reserve("a", "src/**", NOW, ttl=600)[0]
    settle(host1, host2, now=NOW + 1)
    ahead = NOW + 600 + 1  # host2's clock; host1's reads NOW + 480
    assert host2.reserve("b", "src/app/**", ahead)[0]
    [stone] = remote_tombstones(world.remote)
    assert stone["machine"] == "host1" and "clock had it expired" in stone["why"]
    assert host1.sync(NOW + 480).ok
    assert patterns(host1, NOW + 480) == ["src/app/**"]
    assert "clock had it expired" in host1.dropped()[-1]["why"]
    assert any("was dropped" in text for text in host1.alerts("a"))
    settle(host1, host2, now=NOW + 481)
    assert [r["agent"] for r in remote_reservations(world.remote)] == ["b"]


def test_a_grant_over_a_silent_machines_reservation_ends_it_there_when_it_comes_back(
    world: World,
) -> None:
    """host1's holder-bound src/** counts elsewhere while host1 is heard from; silent
    past its lease minutes it holds nothing, host2 is granted over it (tombstone),
    and host1, back, drops its own and tells its holder."""
    import os

    from agent_hooks import liveness

    host1, host2 = machines(world, "host1", "host2")
    holder = liveness.process(os.getpid())
    assert host1.store_reserve("a", "src/**", NOW, holder=holder).changed
    settle(host1, host2, now=NOW + 1)
    assert host2.store_reserve("b", "src/app.py", NOW + 60).conflicts  # heard from: it holds
    later = NOW + 11 * 60
    assert host2.store_reserve("b", "src/app.py", later).changed
    [stone] = remote_tombstones(world.remote)
    assert "silent" in stone["why"]
    assert host1.sync(later + 1).ok
    assert patterns(host1, later + 1) == ["src/app.py"]
    assert "silent" in host1.dropped()[-1]["why"]


# --- transports ----------------------------------------------------------------------------


def test_a_rewound_ref_over_git_daemon_loses_no_live_grant(any_world: World) -> None:
    host1, host2, host3 = machines(any_world, "host1", "host2", "host3")
    granted_behind_a_rewind(any_world, host1, "src/**", host3, "src/app.py")
    settle(host1, host2, host3, now=NOW + 2)
    for host in (host1, host2, host3):
        assert [(r["machine"], r["pattern"]) for r in host.live(NOW + 2)] == [("host1", "src/**")]
    assert "lost a double claim" in host3.dropped()[-1]["why"]


def test_status_and_reservations_json_show_the_order_key(world: World) -> None:
    host1, host2 = machines(world, "host1", "host2")
    assert host1.reserve("a", "src/**", NOW)[0]
    settle(host1, host2, now=NOW + 1)
    shown = cli_on(host2, "reservations", "--json")
    [row] = [r for r in json.loads(shown.output) if r["kind"] == "reservation"]
    assert row["order"] == [NOW, "host1", row["id"]]


def test_a_remote_that_refuses_refs_agent_hooks_is_said_in_one_line_and_nothing_changes(
    world: World,
) -> None:
    """A server that accepts branches but not `refs/agent-hooks/*` (a hosted forge's
    rule, here a pre-receive hook): switching on fails in one line naming the ref,
    and the ledger stays this machine's alone."""
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "while read old new ref; do case $ref in refs/agent-hooks/*)"
        ' echo "refs/agent-hooks/* are not allowed here" >&2; exit 1;; esac; done\n'
    )
    hook.chmod(0o755)
    alpha = world.machine("alpha")
    with pytest.raises(remote_ledger.RemoteUnavailable) as caught:
        alpha.switch_on()
    message = str(caught.value)
    assert "\n" not in message and "refs/agent-hooks/v2/ledger" in message
    assert (
        "nothing was switched on" in message
        and "must accept pushes to refs/agent-hooks/*" in message
    )
    assert "did not answer" not in message
    assert ledger_commit(world.remote) is None
    assert alpha.truth().get("settings", {}).get("remote") is None


def test_a_forced_release_made_here_only_reaches_the_remote_as_a_tombstone_at_the_next_sync(
    world: World,
) -> None:
    """`release --force --local` (the remote not waited for): the grant is gone here at
    once, the tombstone is kept in this machine's ledger, its next sync pushes it,
    and the grant's machine drops it and tells its holder."""
    from agent_hooks.ledger import reservation_store
    from agent_hooks.writers import Writer

    host1, host2 = machines(world, "host1", "host2")
    assert host1.reserve("a", "src/**", NOW)[0]
    settle(host1, host2, now=NOW + 1)
    [held] = host2.live(NOW + 1)
    outcome = reservation_store.release(
        host2.place(), Writer("person", None), NOW + 2, ids=[held["id"]], force=True,
        forced_by="person", offline=True,
    )  # fmt: skip
    assert [r["id"] for r in outcome.changed] == [held["id"]]
    assert host2.live(NOW + 2) == []
    wait_for_syncs(host2.ledger)  # the one the release started (with the real clock)
    [stone] = host2.truth()["tombstones"]
    assert stone["id"] == held["id"] and "release --force" in stone["why"]
    settle(host2, host1, now=NOW + 3)
    assert [t["id"] for t in remote_tombstones(world.remote)] == [held["id"]]
    assert host1.live(NOW + 3) == [] and "release --force" in host1.dropped()[-1]["why"]
    assert any("was dropped" in text for text in host1.alerts("a"))
