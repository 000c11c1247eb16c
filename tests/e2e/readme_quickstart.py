"""The README's Quickstart as the tmux tests type it: its shell lines, verbatim, and what each
promises (the pane it goes into, the agent name it gives).

Invariants:

* The Quickstart is the first ```sh block after the heading ``## Quickstart`` of README.md;
  every line of it is returned exactly as written (comments included: the shell ignores them).
* A launch line is ``agent-hooks launch CLIENT`` and its comment says ``pane N`` and
  ``named NAME``; a line that does not say so fails the test that reads it, naming the line.
* The refusal the README quotes is the first ```text block of the Quickstart section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .agent_hooks_install import REPO

HEADING = "## Quickstart"
LAUNCH = "agent-hooks launch "


class QuickstartMissing(AssertionError):
    """README.md has no Quickstart in the shape the tests read."""


@dataclass(frozen=True)
class Launch:
    """One ``agent-hooks launch CLIENT`` line and what its comment promises."""

    line: str
    client: str
    pane: int
    name: str


def section() -> str:
    """The text of README.md's Quickstart section, up to the next ``## `` heading."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.find(f"\n{HEADING}\n")
    if start < 0:
        raise QuickstartMissing(f"README.md has no {HEADING!r} heading")
    end = text.find("\n## ", start + len(HEADING) + 2)
    return text[start : end if end >= 0 else len(text)]


def _block(kind: str) -> list[str]:
    found = re.search(rf"^```{kind}\n(.*?)^```$", section(), re.DOTALL | re.MULTILINE)
    if found is None:
        raise QuickstartMissing(f"the Quickstart has no ```{kind} block")
    return found[1].splitlines()


def lines() -> list[str]:
    """The Quickstart's shell lines, verbatim, in order."""
    return [line for line in _block("sh") if line.strip()]


def refusal() -> str:
    """The refusal the Quickstart quotes, its lines joined by newlines."""
    return "\n".join(_block("text"))


def launches() -> list[Launch]:
    """Every launch line, with the pane and name its comment gives."""
    found = []
    for line in lines():
        if not line.startswith(LAUNCH):
            continue
        command, _, comment = line.partition("#")
        pane = re.search(r"\bpane (\d+)\b", comment)
        name = re.search(r"\bnamed (\S+)", comment)
        if pane is None or name is None:
            raise QuickstartMissing(f"this launch line says no pane and name: {line!r}")
        found.append(Launch(line, command.split()[2], int(pane[1]), name[1].rstrip(",.;")))
    return found


def line_starting(prefix: str) -> str:
    """The one Quickstart line that starts with ``prefix``."""
    found = [line for line in lines() if line.startswith(prefix)]
    if len(found) != 1:
        raise QuickstartMissing(f"the Quickstart has {len(found)} lines starting {prefix!r}")
    return found[0]
