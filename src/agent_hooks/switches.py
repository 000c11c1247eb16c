"""On/off settings from the environment (`AGENT_HOOKS_STRICT`, `AGENT_HOOKS_ENFORCE`,
`AGENT_HOOKS_GUARD`, …): the one place that reads them.

Invariant: a value is on when it is one of `1 on true yes`, off when it is one of
`0 off false no` (case and surrounding blanks ignored), and unset otherwise, so a
typo never silently flips a setting. Built-ins only: hooks read these on every call.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping

ON = ("1", "on", "true", "yes")
OFF = ("0", "off", "false", "no")

STRICT = "AGENT_HOOKS_STRICT"
ENFORCE = "AGENT_HOOKS_ENFORCE"
GUARD = "AGENT_HOOKS_GUARD"


def read(environ: Mapping[str, str], name: str) -> bool | None:
    """True (on), False (off) or None (unset or not a recognised value)."""
    value = str(environ.get(name, "")).strip().lower()
    if value in ON:
        return True
    if value in OFF:
        return False
    return None


def is_off(environ: Mapping[str, str], name: str) -> bool:
    return read(environ, name) is False


def strict(environ: Mapping[str, str], project_setting: bool) -> bool:
    """Strict mode: `AGENT_HOOKS_STRICT` when set, else the project's own setting."""
    value = read(environ, STRICT)
    return project_setting if value is None else value
