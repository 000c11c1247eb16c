"""A reserver process for the cross-machine race test: one agent on one machine.

    python tests/ledger_reserver.py LEDGER COMMON HOST AGENT

For each line `N PATTERN` on stdin it reserves PATTERN exclusively (through
`ledger_machines.reserve_through`: the ledger's lock, the store's tidy,
`reservation.plan_reserve`, written through to the remote) at time NOW + N and
prints one line: `granted <attempts>`, `refused <attempts>` or `unavailable <why>`.
The test writes a round number to every reserver at once, so they race.
"""

from __future__ import annotations

import os
import sys

from agent_hooks.ledger import remote_git, remote_ledger
from ledger_machines import NOW, reserve_through


def main() -> int:
    ledger, common, host, agent = sys.argv[1:5]
    git = remote_git.Git(common, ledger, os.environ)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        number, _, text = line.strip().partition(" ")
        n = int(number)
        try:
            granted, done = reserve_through(ledger, git, host, agent, text, NOW + n)
            verdict = "granted" if granted else "refused"
            sys.stdout.write(f"{verdict} {done.transacted.attempts}\n")
        except remote_ledger.RemoteUnavailable as exc:
            sys.stdout.write(f"unavailable {exc}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
