"""A reserver process for the cross-machine race test: one agent on one machine.

    python tests/ledger_reserver.py STATE_DIR REPO AGENT

For each line `N PATTERN` on stdin it reserves PATTERN exclusively through
`reservation_store.reserve`, as `agent-hooks reserve` does (the ledger's lock, the
store's tidy and plan, written through to the remote the repository's ledger is
shared through) at time NOW + N and prints one line: `granted`, `refused`, or
`unavailable <why>`. The test writes a round number to every reserver at once,
so they race.
"""

from __future__ import annotations

import os
import sys

from agent_hooks.reservations import reservation
from ledger_machines import NOW, store_reserve


def main() -> int:
    state_dir, repo, agent = sys.argv[1:4]
    environ = dict(os.environ)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        number, _, text = line.strip().partition(" ")
        n = int(number)
        try:
            outcome = store_reserve(state_dir, repo, environ, agent, text, NOW + n)
            verdict = "granted" if outcome.changed and not outcome.conflicts else "refused"
            sys.stdout.write(f"{verdict}\n")
        except reservation.ReservationError as exc:
            sys.stdout.write(f"unavailable {exc}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
