"""How long a lease lasts without a write: the one place that decides it.

The minutes come from `AGENT_HOOKS_LEASE_MINUTES` when it holds a whole number
from 0 to `MAXIMUM` (one agent's or one test's choice), else from the repository
setting `lease_minutes` (`agent-hooks settings lease-minutes N`), else `DEFAULT`.
0 turns leases off: no edit takes one, and a Bash command leaves none.

Every reader of lease minutes — the gate on an edit or a Bash command, the Bash
aftermath, the git guard, `agent-hooks reservations` — asks `effective`; the
index keeps the setting as `from_setting` reads it. Built-ins only: the gate
asks on every edit.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

ENV = "AGENT_HOOKS_LEASE_MINUTES"
DEFAULT = 10
MAXIMUM = 1440  # a day


def from_setting(value: object) -> int:
    """A stored repository setting as minutes: a whole number 0..MAXIMUM, else DEFAULT."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAXIMUM:
        return value
    return DEFAULT


def from_environ(environ: Mapping[str, str]) -> int | None:
    """`AGENT_HOOKS_LEASE_MINUTES` as minutes, or None when unset or not 0..MAXIMUM."""
    raw = environ.get(ENV, "")
    if raw.isascii() and raw.isdigit() and len(raw) < 5 and int(raw) <= MAXIMUM:
        return int(raw)
    return None


def effective(environ: Mapping[str, str], settings: Mapping[str, Any] | None) -> int:
    """The lease minutes that hold for this process in a repository whose index
    has `settings` (None: no reservations file, so no setting)."""
    chosen = from_environ(environ)
    if chosen is not None:
        return chosen
    return from_setting(settings.get("lease_minutes") if settings is not None else None)
