"""A private tmux server for the tests that type into panes as a person does (the README's
launch recipe, its Quickstart), and the one way they wait.

Invariants:

* Every command goes to this server only: ``tmux -S <socket> -f /dev/null``, run with the
  environment given and nothing else; a failing command fails the test with tmux's words.
* ``poll`` waits for a condition under a deadline and fails naming it, with what
  ``diagnose`` returns; it stands for no fixed sleep.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
POLL = 0.05  # seconds between two looks


def poll(what: str, probe: Callable[[], T], timeout: float, diagnose: Callable[[], str]) -> T:
    """``probe()``'s first truthy value, asked every POLL seconds until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for {what}\n{diagnose()}"
            )
        time.sleep(POLL)


class Tmux:
    """A private tmux server: ``tmux -S <socket> -f /dev/null``, environment ``env`` only."""

    def __init__(self, socket: Path, env: dict[str, str]) -> None:
        self.socket = socket
        self.env = env

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout

    def show(self, pane: str, fmt: str) -> str:
        """``fmt`` (``#{pane_index}``, …) as tmux expands it for ``pane``."""
        return self("display-message", "-p", "-t", pane, fmt).rstrip("\n")

    def type_line(self, pane: str, line: str, *, pause: float = 0.0) -> None:
        """Type ``line`` into ``pane`` literally, then Enter, ``pause`` seconds apart (a
        client's input takes text followed at once by Enter for a paste, and keeps the Enter
        as a new line in it)."""
        self("send-keys", "-t", pane, "-l", line)
        if pause:
            time.sleep(pause)
        self("send-keys", "-t", pane, "Enter")

    def screen(self, pane: str, *, history: bool = False) -> str:
        """What ``pane`` shows (``history``: and everything scrolled off it)."""
        return self("capture-pane", "-p", "-J", *(["-S", "-"] if history else []), "-t", pane)

    def screens(self, panes: dict[str, str]) -> str:
        """Every pane of ``panes`` (name -> pane id), for a failure's message."""
        return "\n".join(
            f"--- {name} ({pane}):\n{self.screen(pane)}" for name, pane in panes.items()
        )

    def split(self, after: str, cwd: Path, command: str) -> str:
        """A new pane running ``command`` in ``cwd``, right after pane ``after`` (so at the
        next index), the window laid out tiled; its id."""
        pane = self(
            "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", after, "-c", str(cwd), command
        ).strip()
        self("select-layout", "-t", after, "tiled")
        return pane

    def kill(self) -> None:
        """Stop the server and everything running in it (nothing when it is not running)."""
        subprocess.run(
            ["tmux", "-S", str(self.socket), "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=30,
            check=False,
        )
