"""The end-to-end tests' view of the ledger is the hooks' own: a lease or a writer's card being
written at that moment (its temporary file, half written) is never read — the mixed-swarm test
failed on a loaded machine when a mock's `wait_until` predicate, reading the ledger every 20 ms
while three clients' hooks wrote it, met one and raised a JSON decode error."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.writers import Writer

from .writers_support import leases, writer_cards


def test_a_file_in_the_middle_of_being_written_is_not_read(tmp_path: Path) -> None:
    ledger = tmp_path / "agent-hooks"
    repo = Repo("/repo", str(tmp_path), {}, ledger=str(ledger), worktree="/repo", branch=None)
    lease_store.claim(repo, "a.txt", Writer("alice", "c1"), time.time(), holder_pid=os.getpid())
    for directory in ("leases", "writers"):  # what storage.write_bytes_atomic leaves mid-write
        (ledger / directory / f".b.txt.{os.getpid()}.0badc0de.tmp").write_text('{"path": "b.t')
        (ledger / directory / ".stray").write_text("")
    held = leases(ledger)
    assert list(held) == ["a.txt"] and [item["writer"] for item in held["a.txt"]] == ["alice"]
    assert list(writer_cards(ledger)) == ["alice"]
