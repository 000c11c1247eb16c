"""A small world for the `agent-hooks watch` tests, made of real files: agents' state
files, a reservation, a lease, hook-log lines and a work session, in a temp HOME and
project (the same stores and formats the hooks write)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent_hooks import identity
from agent_hooks.agents import state
from agent_hooks.leases import lease_store
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.work_sessions import location, work_session, work_session_store
from agent_hooks.writers import Writer
from pids import dead_pid

ALIVE = {"CLAUDE_PID": str(os.getpid())}  # this test process stands in for claude


class World:
    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.state_dir = identity.state_dir({"HOME": str(home)})
        self.environ = {"HOME": str(home)}

    def agent(
        self,
        name: str,
        now: float,
        *,
        alive: bool,
        idle: float = 0,
        issue: str | None = None,
        modified: dict[str, int] | None = None,  # relative path -> mtime_ns fingerprint
        project: Path | None = None,
        client: str | None = None,
    ) -> None:
        """An agent's state file as SessionStart and PostToolUse leave it."""
        root = str(project or self.project)
        doc = state.fresh(name, now)
        doc.update(
            registered=True,
            issue_id=issue,
            project_root=root,
            active=True,
            pid=os.getpid() if alive else dead_pid(),
            last_activity=int(now - idle),
            client=client,
        )
        for rel, mtime_ns in (modified or {}).items():
            path = f"{root}/{rel}"
            doc["files_modified"].append(path)
            doc["fingerprints"][path] = f"{mtime_ns:x}:a:4d2"
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        Path(identity.Agent(name, self.state_dir).state_path).write_text(json.dumps(doc))

    def reserve(self, agent: str, text: str, now: float, *, reason: str, ttl: int) -> None:
        outcome = reservation_store.reserve(
            Repo(str(self.project), self.state_dir),
            Writer(agent, None),
            [(text, pattern.compile(text))],
            now,
            reason=reason,
            ttl=ttl,
            shared=False,
            keep=False,
        )
        assert outcome.changed, outcome

    def lease(self, writer: Writer, rel: str, now: float, minutes: int = 10) -> None:
        minutes_set = {"AGENT_HOOKS_LEASE_MINUTES": str(minutes)}
        repo = Repo(str(self.project), self.state_dir, minutes_set, branch="main")
        claim = lease_store.claim(repo, rel, writer, now, holder_pid=int(ALIVE["CLAUDE_PID"]))
        assert not claim.blockers, claim

    def log(self, at: float, agent: str, message: str, event: str = "PreToolUse") -> None:
        """One hook-log line, in `log.log`'s format."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        with open(identity.log_path(self.state_dir), "a") as handle:
            handle.write(f"{stamp} pid=4242 agent={agent} event={event} {message}\n")

    def deny(
        self, at: float, agent: str, rel: str, holder: str = "proj__cc_1", held: str = "src/**"
    ) -> None:
        """The line PreToolUse logs when it refuses an edit (`denied TOOL: REASON`)."""
        self.log(
            at,
            agent,
            f"denied Write: agent-hooks: {rel} is reserved by another agent: agent "
            f'"{holder}" holds {held} (exclusive, reason farmhand-42, 117 min left).',
        )

    def work_session(self, now: float, current: int, max_tokens: int = 200_000) -> str:
        directory = location.sessions_dir(str(self.project), self.environ)
        assert directory is not None
        session_id = work_session.make_id("SES", "ACME", "AUDIT", now)
        doc = work_session.new_document(session_id, "SES", "ACME", "AUDIT", now, max_tokens)
        doc["tokens"]["current"] = current
        work_session_store.Store(directory).start(doc, now, close_active=False)
        return session_id
