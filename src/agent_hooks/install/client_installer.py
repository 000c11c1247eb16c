"""What every client's installer module provides (a `Protocol` the type checker holds the
modules of `install.clients.INSTALLERS` to, like pre-commit's `Language`), and the values they
pass back and forth.

A client's installer module knows its client alone: its name and label, where its files
are (`home`, `target`), how it is recognised on this machine (`detect`), its table of
hooks and their command, its trust step (optional), and what it tells `agent-hooks
doctor` (`check`). What is the same for every client — which handlers are ours, the
merge, backups, writes, the fail-open command — is `hooks_file`'s; choosing clients, the
record of installs, uninstall everywhere, purge and doctor are `install.clients`' and `install.purge`'s,
and they reach a client only through this interface.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Setup:
    """One install or uninstall of one client: where, and with what."""

    home: str  # the client's own directory (user level)
    project: str | None  # the resolved project directory, or None for the user level
    now: float
    python: str = ""  # absolute path of the hooks' interpreter (install)
    entry: str = ""  # absolute path of hooks/entry.py[c] (install)
    trust_project: bool = False  # also trust `project` in the client (install --project)
    cli: str | None = None  # the `agent-hooks` link (Claude Code's permission rule by path)
    rules_record: str | None = None  # Claude Code's record of the permission rules it added
    statusline: bool = False  # also set Claude Code's status line


@dataclass
class Outcome:
    """What an install or uninstall did to a client's files: one line per fact."""

    where: str  # the file holding (or that held) agent-hooks' hooks
    lines: list[str] = field(default_factory=list)


@dataclass
class ClientStatus:
    """One install of agent-hooks into a client: whether the client will run it."""

    client: str
    project: str | None
    where: str  # the file holding our handlers
    ok: bool
    lines: list[str] = field(default_factory=list)  # what to tell a person
    problems: list[str] = field(default_factory=list)  # one line each, saying what fixes it

    def as_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "project": self.project,
            "where": self.where,
            "ok": self.ok,
            "problems": self.problems,
        }


def found_on_machine(
    command: str, directory: str, environ: Mapping[str, str], which: Callable[..., str | None]
) -> str | None:
    """Why a client counts as present (its `command` on PATH, else its own `directory`
    exists), or None: the rule every client but Claude Code (always installed) follows."""
    where = which(command, path=environ.get("PATH", os.defpath))
    if where:
        return f"`{command}` is on PATH ({where})"
    return f"{directory} exists" if os.path.isdir(directory) else None


class ClientInstaller(Protocol):
    """A client's installer module (see the module's docstring)."""

    NAME: str  # the name `--clients` takes and the entry script's client argument
    LABEL: str  # how people call it
    # the directory whose presence (or the command on PATH) says it is used here, and how
    # to name it; the project's own directory in `--project DIR`
    PROJECT_DIR: str

    def home(self, environ: Mapping[str, str]) -> str:
        """The client's own directory, where its user-level files live."""
        ...

    def detect(self, environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
        """Why the client counts as present on this machine, or None."""
        ...

    def target(self, home: str, project: str | None) -> str:
        """The file agent-hooks' hooks go into for that scope."""
        ...

    def add(self, setup: Setup) -> Outcome:
        """Put agent-hooks' hooks in (and trust them, where the client asks for that);
        ValueError or OSError (one line) when a file is refused, nothing changed."""
        ...

    def remove(self, setup: Setup) -> Outcome:
        """Take exactly agent-hooks' part out again."""
        ...

    def commands(self, home: str, project: str | None) -> list[list[str]]:
        """The process (`hooks_file.hook_argv`) of each hook of ours in that scope's file."""
        ...

    def check(
        self, home: str, project: str | None, python: str | None, entry: str | None
    ) -> ClientStatus:
        """Whether the client will run the hooks installed for that scope."""
        ...
