"""What the gate's in-process tests (tests/unit/gate/test_edit_gate.py,
test_shell_gate.py) build their calls and ledgers from: a tool call of a writer at a
fixed time, and reservations and leases made through the stores, as the CLI and the
hooks make them. The test process stands in for the clients (a live holder)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent_hooks import liveness
from agent_hooks.gate.tool_call import ToolCall
from agent_hooks.leases import lease_store, writer_cards
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer

NOW = float(int(time.time()))
LATER = NOW + 0.25  # the call's clock: `since` is its whole second
ALIVE = os.getpid()  # this test process stands in for the clients
ME, CAROL = Writer("bob", "c2"), Writer("carol", "c3")
TARGET = "src/app.py"


def ledger(state_dir: str, project: str) -> str:
    return ledger_location.directory(state_dir, project)


def call(
    state_dir: str,
    project: str | None,
    who: Writer = ME,
    environ: dict[str, str] | None = None,
    cwd: str | None = None,
) -> ToolCall:
    return ToolCall(
        writer=who, cwd=cwd or project, project=project, state_dir=state_dir,
        environ=environ or {}, now=LATER, tool_use_id="toolu_1", holder_pid=ALIVE,
    )  # fmt: skip


def reserve(
    state_dir: str,
    project: str,
    owner: str,
    text: str,
    *,
    shared: bool = False,
    keep: bool = False,
    pid: int | None = ALIVE,
    at: float = NOW,
    ttl: int = 600,
) -> str:
    """`owner` reserves `text` (granted, or the test fails): the reservation's id."""
    outcome = reservation_store.reserve(
        Repo(project, state_dir),
        Writer(owner, None),
        [(text, pattern.compile(text))],
        at,
        reason="issue-7",
        ttl=ttl,
        shared=shared,
        keep=keep,
        holder=liveness.process(pid) if pid is not None else None,
    )  # fmt: skip
    assert outcome.changed, "the reservation was granted"
    rid: str = outcome.changed[0]["id"]
    return rid


def lease_for(
    state_dir: str,
    project: str,
    rel: str,
    who: Writer,
    *,
    pid: int = ALIVE,
    worktree: str | None = None,
) -> None:
    """`who` leases `rel` a minute ago, in this work tree or the one named."""
    minutes = {"AGENT_HOOKS_LEASE_MINUTES": "10"}
    if worktree is None:
        repo = Repo(project, state_dir, minutes, branch="other")
    else:
        repo = Repo("/elsewhere/wt", state_dir, minutes, ledger=ledger(state_dir, project),
                    worktree=worktree, branch="other")  # fmt: skip
    lease_store.claim_many(repo, [rel], who, NOW - 60, holder_pid=pid)


def holders(state_dir: str, project: str, rel: str = TARGET) -> list[str]:
    """The writers holding a lease on `rel`."""
    return [str(item.get("writer")) for item in lease_store.read(ledger(state_dir, project), rel)]


def reserved_on_another_host(state_dir: str, project: str, heard_ago: float) -> None:
    """carol's reservation of src/** made on another host (its process cannot be
    judged from here), carol last heard from `heard_ago` seconds before NOW."""
    holder = {"pid": 4242, "start": 1, "host": "another-host"}
    outcome = reservation_store.reserve(
        Repo(project, state_dir),
        Writer("carol", None),
        [("src/**", pattern.compile("src/**"))],
        NOW,
        reason="issue-7",
        ttl=7200,
        shared=False,
        keep=False,
        holder=holder,
    )  # fmt: skip
    assert outcome.changed
    card = writer_cards.writer_path(ledger(state_dir, project), "carol")
    os.makedirs(os.path.dirname(card), exist_ok=True)
    Path(card).write_text("{}")
    os.utime(card, (NOW - heard_ago, NOW - heard_ago))
