"""Claude Code's `statusLine` command (not a hook event): one short line about
the active work session, printed on every status refresh. Run through the
same entry script as the hooks so it starts as fast: `entry.py StatusLine`."""

from __future__ import annotations

from agent_hooks.work_sessions import status_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def main(client: ModuleType, event: str) -> int:
    return status_text.main()
