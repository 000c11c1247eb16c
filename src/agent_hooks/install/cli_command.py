"""Where the installed `agent-hooks` command is, for texts an agent reads.

Invariant: the answer is an absolute path of this installed copy's command (the link
install.sh made, while it still points into this venv, else the venv's own script), or
None; it never names another installation's command. Only `os` is imported: SessionStart
calls it on every start.
"""

from __future__ import annotations

import os
import sys


def cli_path(python: str | None = None) -> str | None:
    """The `agent-hooks` command of the copy whose interpreter is `python` (default: this one)."""
    python = python or sys.executable
    venv = os.path.dirname(os.path.dirname(python))
    own = os.path.join(venv, "bin", "agent-hooks")
    try:
        with open(os.path.join(os.path.dirname(venv), "cli-link"), encoding="utf-8") as handle:
            link = handle.read().strip()
        if link and os.path.isabs(link) and os.path.realpath(link) == os.path.realpath(own):
            return link
    except (OSError, UnicodeDecodeError):
        pass
    return own if os.path.exists(own) else None
