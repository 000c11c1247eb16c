"""The shared ledger's protocol, model-checked over real git (issue 35): a
hypothesis state machine drives three machines (clones with their own HOME and
AGENT_HOOKS_HOST) sharing one bare remote over file://, with reserve, release,
release --force, renew and sync on any of them, the clock moving, and the
remote's faults: the ref rewound to any earlier commit, the ref deleted, a
machine's document damaged or made too large, the ledger made unreadable (a
person repairs it), a machine's remote unreachable (failing at once). Once every
machine has synced (`settle`: until a whole round pushes nothing) it checks:

1. no two overlapping exclusive reservations are both live, on any machine, and
   every machine sees the same reservations;
2. every grant that left its machine's ledger was released, expired, or recorded
   as dropped with its holder told;
3. nothing released came back;
4. no fault of the remote lost a machine's local ledger (it still reads, and
   holds every grant of its own that 2 does not account for).

The bounded run is part of the suite (`MODEL_EXAMPLES` examples of `STEPS`
steps, derandomized: the same every run, well under 2 minutes on two loaded
cores). `AGENT_HOOKS_MODEL_EXAMPLES=N` is the long run: N examples of `LONG_STEPS` steps
drawn at random (a failure prints the blob that reproduces it), shrunk to the
shortest sequence. What it found is kept as plain tests in `test_ledger_faults.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from agent_hooks.ledger import remote_git, remote_grants, remote_ledger
from agent_hooks.reservations import reservation
from ledger_machines import (
    NOW,
    REMOTE,
    History,
    Machine,
    World,
    ledger_commit,
    remote_files,
    run_git,
    set_ref_by_hand,
)

MODEL_EXAMPLES = 10
STEPS = 24
LONG_STEPS = 60
HOSTS = ("h1", "h2", "h3")
AGENTS = ("a",)  # one per machine: agents of two machines are two owners already
PATTERNS = ("src/**", "src/app/**", "src/app/main.py", "docs/**")
TTLS = (300, 1200, 3600)


def model_settings() -> settings:
    examples = int(os.environ.get("AGENT_HOOKS_MODEL_EXAMPLES", "0") or 0)
    long_run = examples > 0
    return settings(
        max_examples=examples if long_run else MODEL_EXAMPLES,
        stateful_step_count=LONG_STEPS if long_run else STEPS,
        deadline=None,
        derandomize=not long_run,
        database=None,
        # the bounded run does not shrink: a failure there is rerun long to shrink it
        phases=tuple(Phase) if long_run else (Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


class SharedLedger(RuleBasedStateMachine):
    """Three machines, one remote, and what the model knows must hold."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ledger-model-"))
        self.world = World(self.tmp, None)
        self.hosts: dict[str, Machine] = {}
        self.history = History(self.world.remote)
        self.clock = NOW
        self.released: set[str] = set()  # ids released by a command that said so
        self.held: dict[str, dict[str, dict[str, Any]]] = {}  # host -> own grants seen
        self.unreachable: set[str] = set()
        self.seen: dict[str, set[str]] = {}  # host -> ids ever in its view
        self.gone: dict[str, set[str]] = {}  # host -> released ids it saw go
        self.taken: dict[str, dict[str, tuple[str, int]]] = {}  # host -> other -> version
        self.before_grants: list[str] = []  # the commit each grant's push replaced
        self.log: list[str] = []

    # --- set-up and upkeep ---------------------------------------------------------

    @initialize()
    def machines(self) -> None:
        for name in HOSTS:
            machine = self.world.machine(name)
            assert not machine.switch_on(self.clock).conflicts
            for agent in AGENTS:
                machine.meet(agent, self.clock)
            self.hosts[name] = machine
            self.held[name] = {}
            self.seen[name] = set()
        self.after()

    def teardown(self) -> None:
        try:
            if self.hosts:
                self.settle()
                self.check()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def after(self) -> None:
        """After each step: record the remote's commit (for rewinds) and each
        machine's own live grants (what must never silently disappear); and check
        what holds at every step, synced or not: a machine that saw a release
        never shows the reservation again (a rewound remote's older version is
        never taken back)."""
        self.history.record()
        for name, machine in self.hosts.items():
            live = [r for r in machine.live(self.clock) if not r.get("local")]
            self.no_double_claim(name, live)
            view = {r["id"] for r in live}
            came_back = {
                rid
                for rid in view & self.released
                if rid in self.seen[name] and rid in self.gone.get(name, set())
            }
            assert not came_back, (name, sorted(came_back), self.log[-12:])
            self.gone.setdefault(name, set()).update((self.seen[name] - view) & self.released)
            self.seen[name] |= view
            # the version of another machine's document a machine took never goes
            # back (nor is forgotten within a week): what keeps a rewound one out
            cache = remote_ledger.load_cache(str(machine.ledger))
            before = self.taken.setdefault(name, {})
            for other, (instance, seq) in before.items():
                now_taken = cache.get(other)
                assert now_taken is not None, (name, other, "forgotten", self.log[-12:])
                if now_taken.get("instance") == instance:
                    assert now_taken["seq"] >= seq, (name, other, seq, self.log[-12:])
            self.taken[name] = {o: (d["instance"], d["seq"]) for o, d in cache.items()}
            for res in machine.live(self.clock):
                if res.get("machine") == name and not res.get("local"):
                    self.held[name].setdefault(res["id"], dict(res))

    def no_double_claim(self, name: str, live: list[dict[str, Any]]) -> None:
        """No two overlapping exclusive reservations of two owners live in one
        machine's view, at any step: a reader leaves a double claim's loser out at
        once, and a change is planned against what the view holds."""
        checked = [reservation.checked(r) for r in live]
        for i, one in enumerate(checked):
            clash = reservation.conflicts_with(one, checked[i + 1 :], self.clock, name)
            assert not clash, (name, one["id"], [c["id"] for c in clash], self.log[-12:])

    # --- what agents and people do ----------------------------------------------------

    @rule(
        host=st.sampled_from(HOSTS),
        agent=st.sampled_from(AGENTS),
        text=st.sampled_from(PATTERNS),
        ttl=st.sampled_from(TTLS),
    )
    def reserve(self, host: str, agent: str, text: str, ttl: int) -> None:
        before = ledger_commit(self.world.remote)
        try:
            outcome = self.hosts[host].store_reserve(agent, text, self.clock, ttl=ttl)
        except reservation.ReservationError as exc:
            self.log.append(f"{host} reserve {text}: refused ({exc})")
            assert "\n" not in str(exc)
        else:
            self.log.append(f"{host} {agent} reserve {text}: {bool(outcome.changed)}")
            if outcome.changed and before is not None:
                self.before_grants.append(before)
        self.after()

    @rule(host=st.sampled_from(HOSTS), agent=st.sampled_from(AGENTS))
    def release(self, host: str, agent: str) -> None:
        try:
            outcome = self.hosts[host].store_release(agent, everything=True, now=self.clock)
        except reservation.ReservationError as exc:
            self.log.append(f"{host} release: refused ({exc})")
        else:
            self.released.update(r["id"] for r in outcome.changed)
            self.log.append(f"{host} {agent} release: {[r['id'] for r in outcome.changed]}")
        self.after()

    @rule(host=st.sampled_from(HOSTS), pick=st.integers(0, 20))
    def release_force(self, host: str, pick: int) -> None:
        machine = self.hosts[host]
        others = sorted(
            (r for r in machine.live(self.clock) if r.get("machine") not in (None, host)),
            key=lambda r: r["id"],
        )
        if not others:
            return
        target = others[pick % len(others)]
        try:
            outcome = machine.force_release(target["id"], self.clock)
        except reservation.ReservationError as exc:
            self.log.append(f"{host} release --force: refused ({exc})")
        else:
            self.released.update(r["id"] for r in outcome.changed)
            self.log.append(f"{host} release --force {[r['id'] for r in outcome.changed]}")
        self.after()

    @rule(host=st.sampled_from(HOSTS), agent=st.sampled_from(AGENTS), ttl=st.sampled_from(TTLS))
    def renew(self, host: str, agent: str, ttl: int) -> None:
        machine = self.hosts[host]
        try:
            machine.store_renew(agent, ttl, self.clock)
        except reservation.ReservationError as exc:
            self.log.append(f"{host} renew: refused ({exc})")
        self.after()

    @rule(host=st.sampled_from(HOSTS))
    def sync(self, host: str) -> None:
        result = self.hosts[host].sync(self.clock)
        self.log.append(f"{host} sync: ok={result.ok} pushed={result.pushed} {result.error or ''}")
        assert result.ok or result.error, result.skipped
        self.after()

    @rule()
    def sync_all(self) -> None:
        """Every machine syncs once, in turn (what a few quiet seconds bring)."""
        for name in HOSTS:
            self.sync(name)

    @rule(seconds=st.sampled_from((1, 30, 200, 700)))
    def time_passes(self, seconds: int) -> None:
        self.clock += seconds
        self.after()

    # --- the remote's faults: one rule, so that they come as often as one action --------

    @rule(
        kind=st.sampled_from(
            (
                "rewind",
                "rewind before a grant",
                "rewind before a grant",
                "rewind far",
                "delete",
                "damage",
                "too large",
                "unknown format",
            )
        ),
        host=st.sampled_from(HOSTS),
        pick=st.integers(0, 1000),
    )
    def fault(self, kind: str, host: str, pick: int) -> None:
        commits = len(self.history.commits)
        if kind == "rewind" and commits > 1:  # a few commits back: a mirror slightly stale
            self.history.rewind(max(0, commits - 2 - pick % 8))
        elif kind == "rewind far" and commits > 1:  # any earlier commit
            self.history.rewind(pick % (commits - 1))
        elif kind == "rewind before a grant" and self.before_grants:  # the worst moment
            target = self.before_grants[-1 - pick % min(3, len(self.before_grants))]
            self.history.rewind(self.history.commits.index(target))
        elif kind == "delete" and ledger_commit(self.world.remote) is not None:
            self.history.delete()
        elif kind in ("damage", "too large"):
            files = {k: v.encode() for k, v in remote_files(self.world.remote).items()}
            path = remote_grants.grants_file(host)
            if path not in files:
                return
            big = kind == "too large"
            files[path] = b"x" * (remote_git.MAX_BLOB + 1) if big else files[path][:-7]
            set_ref_by_hand(self.world.remote, files)
        elif kind == "unknown format" and ledger_commit(self.world.remote) is not None:
            files = {k: v.encode() for k, v in remote_files(self.world.remote).items()}
            files["ledger.json"] = b'{"format": 3, "lineage": "x", "generation": 1}'
            set_ref_by_hand(self.world.remote, files)
        else:
            return
        self.log.append(f"fault: {kind} ({host}, {pick}) of {commits} commits")
        self.after()

    @rule(host=st.sampled_from(HOSTS))
    def cut_off(self, host: str) -> None:
        """The machine's remote becomes unreachable (a path that is no repository:
        git fails at once), or reachable again."""
        machine = self.hosts[host]
        if host in self.unreachable:
            self.unreachable.discard(host)
            url = self.world.url
        else:
            self.unreachable.add(host)
            url = f"file://{self.tmp}/unreachable-{host}.git"
        run_git(machine.repo, "remote", "set-url", REMOTE, url, env=machine.environ)
        self.log.append(f"fault: {host} {'cut off' if host in self.unreachable else 'back'}")

    @rule(host=st.sampled_from(HOSTS))
    def repair(self, host: str) -> None:
        """A person runs `agent-hooks ledger repair` and confirms."""
        if host in self.unreachable:
            return
        machine = self.hosts[host]
        git = machine.git()
        state = remote_ledger.parse(git.fetch(REMOTE))
        plan = remote_ledger.repair_plan(state)
        if plan.needed():
            remote_ledger.repair(git, REMOTE, plan, host, self.clock)
            self.log.append(f"{host} repaired: {plan.restart or sorted(plan.remove)}")
        self.after()

    # --- once every machine has synced ---------------------------------------------------

    @rule()
    def settle_and_check(self) -> None:
        self.settle()
        self.check()

    def settle(self) -> None:
        for host in sorted(self.unreachable):
            self.cut_off(host)
        self.repair(HOSTS[0])
        for _ in range(6):
            results = [self.hosts[name].sync(self.clock) for name in HOSTS]
            assert all(r.ok for r in results), [r.error for r in results]
            self.after()
            if not any(r.pushed for r in results):
                return
        raise AssertionError("the machines kept pushing: " + "; ".join(self.log[-12:]))

    def check(self) -> None:
        views = {}
        for name, machine in self.hosts.items():
            doc = machine.truth()  # 4: the local ledger still reads
            live = [
                reservation.checked(r)
                for r in doc.get("reservations") or []
                if not r.get("local") and reservation.is_live(reservation.checked(r), self.clock)
            ]
            views[name] = {r["id"]: r for r in live}
            self.no_double_claim(name, live)  # 1
            dropped = {d.get("id"): d for d in machine.dropped()}
            alerts = " ".join(
                text for agent in AGENTS for text in machine.alerts(agent, self.clock)
            )
            mine = {rid for rid, r in views[name].items() if r.get("machine") == name}
            for rid, res in self.held[name].items():
                if rid in mine:
                    continue
                # 2 and 4: a grant of its own that left: released, expired, or dropped and told
                ended = float(res["expires_at"]) <= self.clock
                told = rid in dropped and (
                    rid in alerts or dropped[rid]["why"].startswith("its holder")
                )
                assert rid in self.released or ended or told, (name, rid, self.log[-20:])
            # 3: nothing released came back
            assert not (set(views[name]) & self.released), (name, self.log[-20:])
        first = views[HOSTS[0]]
        for name in HOSTS[1:]:
            assert set(views[name]) == set(first), (name, sorted(views[name]), sorted(first))
        on_remote = set()
        for path, text in remote_files(self.world.remote).items():
            if path.startswith("grants/"):
                on_remote |= {
                    r["id"]
                    for r in json.loads(text)["reservations"]
                    if float(r["expires_at"]) > self.clock
                }
        assert set(first) <= on_remote  # every machine's grants are back on the remote


SharedLedger.TestCase.settings = model_settings()
TestSharedLedger = SharedLedger.TestCase


# --- sequences kept: the model's rules in an order the random runs reach rarely -------------


def run_sequence(*steps: tuple[str, tuple[Any, ...]]) -> SharedLedger:
    """Drive the state machine through `steps` (rule name, arguments), checking its
    per-step invariants at each and everything once all have synced."""
    model = SharedLedger()
    model.machines()
    try:
        for name, args in steps:
            getattr(model, name)(*args)
        model.settle()
        model.check()
    finally:
        model.teardown()
    return model


def test_a_release_seen_then_a_rewind_then_two_syncs_never_bring_it_back() -> None:
    """What the model found: h2 took h1's document after the release (nothing left
    in it), the remote was rewound to before the release; h2's first sync kept
    the newer version but forgot it, being empty, and its second took the older
    one back."""
    run_sequence(
        ("reserve", ("h1", "a", "src/**", 3600)),
        ("sync_all", ()),
        ("release", ("h1", "a")),
        ("sync_all", ()),
        ("fault", ("rewind", "h1", 3)),
        ("sync", ("h2",)),
        ("sync", ("h2",)),
    )


def test_a_grant_behind_a_rewind_is_never_held_beside_the_earlier_one() -> None:
    run_sequence(
        ("reserve", ("h1", "a", "src/**", 3600)),
        ("fault", ("rewind before a grant", "h1", 0)),
        ("reserve", ("h2", "a", "src/app/**", 3600)),
        ("sync", ("h3",)),
        ("sync", ("h1",)),
        ("sync", ("h3",)),
    )


def test_a_forced_release_is_respected_by_the_grants_machine() -> None:
    run_sequence(
        ("reserve", ("h1", "a", "src/**", 3600)),
        ("sync_all", ()),
        ("release_force", ("h2", 0)),
        ("fault", ("rewind", "h1", 0)),
        ("sync", ("h1",)),
    )
