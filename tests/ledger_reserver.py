"""A reserver process for the cross-machine race test: one agent on one machine.

    python tests/ledger_reserver.py STATE_DIR REPO AGENT

For each line `N PATTERN` on stdin it reserves PATTERN exclusively through
`reservation_store.reserve`, as `agent-hooks reserve` does (the ledger's lock, the
store's tidy and plan, written through to the remote the repository's ledger is
shared through) at time NOW + N and prints one line: `granted <id>`, `refused
<agent of the holder it conflicts with>`, or `unavailable <why>`. The test writes a round number to every reserver at once,
so they race. With `LEDGER_RESERVER_TIMES=1` in its environment each line ends
with ` ms=<milliseconds the reserve took>` (bench/ledger_remote.py).
"""

from __future__ import annotations

import os
import sys
import time

from agent_hooks.reservations import reservation
from ledger_machines import NOW, store_reserve


def main() -> int:
    state_dir, repo, agent = sys.argv[1:4]
    environ = dict(os.environ)
    timed = environ.get("LEDGER_RESERVER_TIMES") == "1"
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        number, _, text = line.strip().partition(" ")
        n = int(number)
        began = time.perf_counter()
        try:
            outcome = store_reserve(state_dir, repo, environ, agent, text, NOW + n)
            if outcome.changed and not outcome.conflicts:
                line = f"granted {outcome.changed[0]['id']}"
            else:
                holder = outcome.conflicts[0][1].get("agent") if outcome.conflicts else None
                line = f"refused {holder}"
        except reservation.ReservationError as exc:
            line = f"unavailable {exc}"
        took = (time.perf_counter() - began) * 1000
        sys.stdout.write(f"{line} ms={took:.1f}\n" if timed else f"{line}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
