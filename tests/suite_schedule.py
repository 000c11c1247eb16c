"""How the whole suite shares the machine's cores under pytest-xdist (ADR-0030).

`./test.sh` runs pytest with `-n 2`; `tests/conftest.py` then hands xdist this schedule in
place of its default (`--dist load`), and xdist's other modes (`--dist loadscope`, ...) stay
as they are. `-n 0` or `-p no:xdist` runs everything in one process, in collection order.

Invariants:

* Every test under `tests/e2e/` is one unit of work: the real clients run one at a time, on
  one worker, as in a serial run (two real clients at once on two cores time out), while the
  other worker takes everything else.
* Each module under `tests/install/` is one unit: its module-scoped life cycle (real
  `install.sh` runs) happens once, not once on each worker that gets one of its tests.
* Any other test is a unit of its own, handed to whichever worker is free.
* Units start largest first (xdist's reordering of scopes by size): the e2e unit, then the
  install modules, then the single tests.

(xdist's own `--dist loadgroup` with `xdist_group` markers does not group under pytest 9:
it renames a test's node id, which pytest 9 no longer reads back.)
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

E2E = "tests/e2e/"
INSTALL = "tests/install/"


def work_unit(nodeid: str) -> str:
    """The unit of work the test `nodeid` (relative to the repository) belongs to."""
    if nodeid.startswith(E2E):
        return "e2e"
    if nodeid.startswith(INSTALL):
        return nodeid.split("::", 1)[0]
    return nodeid


class SuiteScheduling(LoadScopeScheduling):
    """xdist's scheduling by scope, the scope being :func:`work_unit`."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)
