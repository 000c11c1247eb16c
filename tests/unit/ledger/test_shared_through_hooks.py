"""A ledger shared by machines, seen through the real hook entry script (issue 20):
each machine is a clone with its own HOME and AGENT_HOOKS_HOST, and its hooks run
as Claude Code runs them (`hooks/entry.py EVENT`, the payload on stdin). Times are
real (the hooks read the clock); every sync a test relies on is run by the test,
and a sync a hook starts is waited for by its process, never by a sleep.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import liveness
from agent_hooks.ledger import ledger_sync, remote_view, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import reservation
from hook_runner import HookResult, HookRunner
from ledger_machines import (
    REMOTE,
    Machine,
    World,
    remote_files,
    remote_reservations,
    run_git,
    sync_running,
    wait_for_syncs,
)


class Host:
    """One machine, its agent, and its hooks."""

    def __init__(self, world: World, name: str, agent: str) -> None:
        self.world = world
        self.machine: Machine = world.machine(name)
        self.agent = agent
        self.hooks = HookRunner(self.machine.home, self.machine.repo)
        self.session = f"conv-{name}-{agent}"

    @property
    def ledger(self) -> Path:
        return self.machine.ledger

    def switch_on(self, now: float) -> None:
        assert not self.machine.switch_on(now).conflicts
        assert self.machine.sync(now).ok

    def sync(self, now: float | None = None) -> ledger_sync.SyncResult:
        result = self.machine.sync(time.time() if now is None else now)
        assert result.ok, result.error
        return result

    def hook(self, event: str, payload: dict[str, Any]) -> HookResult:
        payload = {**payload, "session_id": self.session}
        result = self.hooks(event, payload, agent=self.agent, env=self.machine.environ)
        assert result.code == 0, result.err
        return result

    def write(self, rel: str) -> HookResult:
        payload = self.hooks.payload("PreToolUse_Write")
        payload["tool_input"] = {"file_path": str(self.machine.repo / rel), "content": "x\n"}
        return self.hook("PreToolUse", payload)

    def bash(self, command: str) -> HookResult:
        payload = self.hooks.payload("PreToolUse_Bash")
        payload["tool_input"] = {**payload["tool_input"], "command": command}
        return self.hook("PreToolUse", payload)

    def wrote(self, rel: str) -> HookResult:
        """PostToolUse of a Write of `rel` (what delivers alerts to the writer)."""
        path = self.machine.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        payload = self.hooks.payload("PostToolUse_Write")
        payload["tool_input"] = {"file_path": str(path), "content": "x\n"}
        payload["tool_response"] = {"type": "create", "filePath": str(path)}
        return self.hook("PostToolUse", payload)

    def idle_stamp(self, ago: float) -> None:
        """The last sync was started `ago` seconds before now (a hook finds it due)."""
        stamp = self.ledger / remote_view.STAMP
        moment = time.time() - ago
        os.utime(stamp, (moment, moment))


def deny_of(result: HookResult) -> str | None:
    out = result.out or {}
    specific = out.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") == "deny":
        reason: str = specific["permissionDecisionReason"]
        return reason
    return None


def context(result: HookResult) -> str:
    out = result.out or {}
    text = (out.get("hookSpecificOutput") or {}).get("additionalContext")
    return text if isinstance(text, str) else ""


class SilentServer:
    """A git:// server that accepts connections and never answers (a network that
    hangs, not one that refuses): a git talking to it waits until the connection
    closes, or until its own timeout kills it."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.url = f"git://127.0.0.1:{self.socket.getsockname()[1]}/hangs.git"
        self.held: list[socket.socket] = []

    def a_git_is_waiting(self) -> bool:
        """Take the next connection a git made (the detached sync's) and say whether
        that git is still there, waiting for an answer. Decided by the connection,
        not by the clock: a hook that had waited for the network would have
        returned only once git gave up, and its connection would be closed."""
        self.socket.settimeout(60)  # readiness of a process started detached, not an outcome
        conn, _ = self.socket.accept()
        self.held.append(conn)
        conn.settimeout(60)
        request = conn.recv(4096)  # git:// sends its request first, then waits
        conn.setblocking(False)
        try:
            closed = conn.recv(1) == b""
        except BlockingIOError:
            closed = False
        return bool(request) and not closed

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.socket.close()


@contextmanager
def silent_remote() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pair(any_world: World) -> tuple[Host, Host]:
    now = time.time()
    alpha, beta = Host(any_world, "alpha", "a"), Host(any_world, "beta", "b")
    alpha.switch_on(now)
    beta.switch_on(now)
    return alpha, beta


# --- reservations --------------------------------------------------------------------------


@pytest.mark.parametrize("beta_agent", ["b", "a"])
def test_a_reservation_made_on_one_machine_refuses_an_edit_on_another_after_its_sync(
    any_world: World, beta_agent: str
) -> None:
    """Through PreToolUse on beta; an agent there of the same name as the holder is
    not its owner (`a@alpha`)."""
    now = time.time()
    alpha, beta = Host(any_world, "alpha", "a"), Host(any_world, "beta", beta_agent)
    alpha.switch_on(now)
    beta.switch_on(now)
    holder = liveness.process(os.getpid())
    done = alpha.machine.store_reserve("a", "src/**", time.time(), holder=holder)
    assert done.changed and not done.conflicts
    assert deny_of(beta.write("src/app.py")) is None  # beta has not synced yet
    beta.sync()
    reason = deny_of(beta.write("src/app.py"))
    assert reason is not None and 'agent "a" on machine alpha holds src/**' in reason
    assert deny_of(beta.bash("echo hi > src/new.txt")) is not None
    assert deny_of(beta.write("docs/readme.md")) is None
    assert deny_of(alpha.write("src/app.py")) is None  # its own
    alpha.machine.store_release("a", everything=True, now=time.time())
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is None


def test_a_silent_machine_holds_nothing_after_its_lease_minutes(any_world: World) -> None:
    """alpha's reservation (its holder a live process there, not --keep) counts on
    beta while alpha was heard from within its lease minutes (10), not after."""
    now = time.time()
    alpha, beta = Host(any_world, "alpha", "a"), Host(any_world, "beta", "b")
    long_ago = now - 11 * 60
    alpha.switch_on(long_ago)
    beta.switch_on(now)
    holder = liveness.process(os.getpid())
    assert alpha.machine.store_reserve("a", "src/**", long_ago, holder=holder).changed
    alpha.sync(long_ago)  # alpha's last heartbeat: 11 min ago
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is None
    status = remote_view.load(str(beta.ledger))
    assert status is not None and not status.heard_from("alpha", time.time())
    alpha.sync(now - 60)  # heard from a minute ago
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is not None


def test_an_unreachable_remote_refuses_the_change_and_a_hook_release_never_waits(
    pair: tuple[Host, Host],
) -> None:
    """A reserve with the remote gone is refused in one line, nothing written
    anywhere; SessionEnd releases the agent's reservations while the remote hangs:
    here at once, on the remote at the next sync that reaches it."""
    alpha, beta = pair
    repo, environ = alpha.machine.repo, alpha.machine.environ
    url = run_git(repo, "remote", "get-url", REMOTE, env=environ)
    assert alpha.machine.store_reserve("a", "src/**", time.time()).changed
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is not None
    run_git(repo, "remote", "set-url", REMOTE, f"file://{alpha.machine.home}/gone.git", env=environ)
    before, remote_before = (
        (alpha.ledger / "reservations.json").read_bytes(),
        remote_files_of(alpha),
    )
    with pytest.raises(reservation.ReservationError) as caught:
        alpha.machine.store_reserve("a", "docs/**", time.time())
    message = str(caught.value)
    assert "\n" not in message and "nothing was reserved" in message and "--local" in message
    assert (alpha.ledger / "reservations.json").read_bytes() == before
    assert remote_files_of(alpha) == remote_before
    with silent_remote() as hanging:
        run_git(repo, "remote", "set-url", REMOTE, hanging.url, env=environ)
        alpha.hook("SessionEnd", alpha.hooks.payload("SessionEnd"))
        assert alpha.machine.live() == []  # released here at once
        assert hanging.a_git_is_waiting()  # the sync it started still waits on the network
        assert sync_running(alpha.ledger)
    wait_for_syncs(alpha.ledger)  # the server closed: that sync failed
    run_git(repo, "remote", "set-url", REMOTE, url, env=environ)
    assert remote_files_of(alpha) == remote_before  # nothing reached the remote meanwhile
    assert [r["pattern"] for r in remote_reservations(alpha.world.remote)] == ["src/**"]
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is not None
    alpha.sync()  # this machine's document follows its ledger: the release reaches the remote
    assert alpha.machine.live() == []
    assert remote_reservations(alpha.world.remote) == []
    beta.sync()
    assert deny_of(beta.write("src/app.py")) is None


# --- leases ----------------------------------------------------------------------------


def test_an_edit_on_one_machine_is_told_to_the_writer_on_another_after_one_sync(
    pair: tuple[Host, Host],
) -> None:
    alpha, beta = pair
    assert deny_of(alpha.write("src/app.py")) is None  # alpha's writer leases it
    alpha.sync()
    beta.sync()
    told = beta.write("src/app.py")
    assert deny_of(told) is None
    note = context(told)
    assert "src/app.py is also being changed" in note and 'agent "a"' in note
    assert f"alpha:{alpha.machine.repo}" in note and "last write" in note
    assert deny_of(beta.write("src/other.py")) is None and context(beta.write("src/other.py")) == ""
    reservation_store.set_setting(
        Repo(str(beta.machine.repo), beta.machine.state_dir),
        "worktree_leases",
        "deny",
        time.time(),
    )
    reason = deny_of(beta.write("src/app.py"))
    assert reason is not None and 'agent "a"' in reason
    assert deny_of(beta.bash("echo hi > src/app.py")) is not None
    assert deny_of(beta.bash("rm -r src")) is not None
    assert deny_of(beta.bash("echo hi > docs/x.md")) is None


def test_a_double_claim_inside_the_interval_is_found_and_both_writers_are_told_once(
    pair: tuple[Host, Host],
) -> None:
    alpha, beta = pair
    assert deny_of(alpha.write("src/app.py")) is None
    assert deny_of(beta.write("src/app.py")) is None  # neither knows of the other yet
    for host in (alpha, beta):
        assert "double claim" not in context(host.wrote("src/app.py"))
    alpha.sync()
    beta.sync()  # beta finds it
    alpha.sync()  # alpha reads beta's finding
    for host, first in ((alpha, "you claimed it first"), (beta, "machine alpha claimed it first")):
        text = context(host.wrote("src/app.py"))
        assert "double claim: src/app.py" in text and first in text, text
    alpha.sync()
    beta.sync()
    for host in (alpha, beta):
        assert "double claim" not in context(host.wrote("src/app.py"))  # told once
    report = json.loads((beta.ledger / remote_view.REPORT).read_text())
    assert [c["path"] for c in report["double_claims"]] == ["src/app.py"]


# --- the hooks' side: never waiting, saying when the view is behind ------------------------


def test_a_hook_starts_the_sync_when_due_and_never_waits_for_it(pair: tuple[Host, Host]) -> None:
    alpha, _ = pair
    url = run_git(alpha.machine.repo, "remote", "get-url", REMOTE, env=alpha.machine.environ)
    alpha.idle_stamp(60)
    with silent_remote() as hanging:
        run_git(alpha.machine.repo, "remote", "set-url", REMOTE, hanging.url)
        result = alpha.write("src/app.py")
        assert deny_of(result) is None
        assert "last synced" not in context(result)  # idle, not behind: no note
        assert hanging.a_git_is_waiting()  # the hook returned; the sync it started waits
        assert sync_running(alpha.ledger)
        # the sync is waiting on the network; the next hook does not start another
        assert alpha.write("src/b.py").code == 0
    wait_for_syncs(alpha.ledger)
    run_git(alpha.machine.repo, "remote", "set-url", REMOTE, url)
    report = json.loads((alpha.ledger / remote_view.REPORT).read_text())
    assert report["ok"] is False and report["error"]


def test_a_view_behind_is_said_in_pre_tool_use_context_until_a_sync_succeeds(
    pair: tuple[Host, Host],
) -> None:
    alpha, _ = pair
    url = run_git(alpha.machine.repo, "remote", "get-url", REMOTE, env=alpha.machine.environ)
    alpha.sync(time.time() - 120)  # the last good sync: 2 min ago
    run_git(alpha.machine.repo, "remote", "set-url", REMOTE, f"file://{alpha.machine.home}/gone")
    assert not ledger_sync.sync_repository(str(alpha.ledger), alpha.machine.environ, time.time()).ok
    text = context(alpha.write("src/app.py"))
    assert "last synced the shared ledger 2 min ago" in text
    assert "Reservation changes are refused" in text
    wait_for_syncs(alpha.ledger)
    run_git(alpha.machine.repo, "remote", "set-url", REMOTE, url)
    alpha.sync()
    assert "last synced" not in context(alpha.write("src/app.py"))


def test_stop_and_session_start_start_the_sync(pair: tuple[Host, Host]) -> None:
    """A turn's leases reach the other machines when it ends, not at the next call."""
    alpha, beta = pair
    assert deny_of(alpha.write("src/app.py")) is None  # leased; the last sync was just now
    alpha.hook("Stop", alpha.hooks.payload("Stop"))
    wait_for_syncs(alpha.ledger)
    host_file = json.loads(remote_files_of(alpha)["hosts/alpha.json"])
    assert [lease["path"] for lease in host_file["leases"]] == ["src/app.py"]
    alpha.hook("Stop", alpha.hooks.payload("Stop"))  # nothing leased since, none due
    assert not sync_running(alpha.ledger)
    start = alpha.hook("SessionStart", alpha.hooks.payload("SessionStart_startup"))
    assert "shared with agents on other machines through git remote origin" in context(start)
    wait_for_syncs(alpha.ledger)
    beta.sync()
    assert "src/app.py is also being changed" in context(beta.write("src/app.py"))


def remote_files_of(host: Host) -> dict[str, str]:
    return remote_files(host.world.remote)


# --- a reservation a hook records (mcp_agent_mail) ---------------------------------------


def test_a_grant_mcp_agent_mail_reports_is_recorded_on_this_machine_only_and_never_pushed(
    pair: tuple[Host, Host],
) -> None:
    """PostToolUse of mcp_agent_mail's file_reservation_paths on a shared ledger: a
    hook never waits for the network, so the grant is kept here (`local`), the
    model is told so, no sync ever pushes it, and the other machine never has it."""
    alpha, beta = pair
    expires = datetime.fromtimestamp(time.time() + 3600, UTC).isoformat()
    result = {
        "granted": [
            {
                "id": 41,
                "path_pattern": "src/**",
                "exclusive": True,
                "reason": "farmhand-7",
                "expires_ts": expires,
            }
        ],
        "conflicts": [],
    }
    payload = {
        **alpha.hooks.payload("PostToolUse_Write"),
        "tool_name": "mcp__mcp-agent-mail__file_reservation_paths",
        "tool_input": {"project_key": str(alpha.machine.repo), "paths": ["src/**"]},
        "tool_response": [{"type": "text", "text": json.dumps(result)}],
    }
    told = alpha.hook("PostToolUse", payload)
    [entry] = alpha.machine.live(time.time())
    assert entry["pattern"] == "src/**" and entry["source"] == "mcp-agent-mail"
    assert entry["local"] is True
    assert "recorded on this machine only" in context(told)
    wait_for_syncs(alpha.ledger)
    alpha.sync()
    assert remote_reservations(alpha.world.remote) == []
    beta.sync()
    assert beta.machine.live(time.time()) == []
    assert deny_of(beta.write("src/app.py")) is None
