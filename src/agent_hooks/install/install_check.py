"""Is agent-hooks loaded twice — as a plugin (`claude --plugin-dir`, hooks through
`hooks/run`) and installed into a settings file — and if so, which copy acts?
Also: where the installed `agent-hooks` command is (for SessionStart's text).

Claude Code merges the hooks of every settings file and every plugin, so with both
copies active each event would be handled twice (two denies, two trail entries).
The installed copy wins: it is what the person set up on purpose. The plugin's
SessionStart (`hooks.plugin_session_start`) decides once per conversation:

* it reads the files Claude Code merges — the user's (`$CLAUDE_CONFIG_DIR` or
  `~/.claude`)`/settings.json`, `<project>/.claude/settings.json` and
  `<project>/.claude/settings.local.json` — for handlers of ours that are not the
  plugin's, whose interpreter and entry script exist, and whose groups carry every
  matcher the plugin has for that event;
* for each such event it leaves an empty file
  `<state dir>/agent-hooks/plugin-stands-aside/<CLAUDE_CODE_SESSION_ID>/<Event>`,
  which `hooks/run` (POSIX sh) tests with one `[ -e … ]` before starting Python, and
  exits 0 when it is there. Other events' files are removed, so every SessionStart
  (startup, resume, clear, compact) decides afresh;
* the person is told which copy runs in a `systemMessage` (shown to the user, not
  the model) the first time a conversation is decided.

Failure direction: whatever cannot be decided (no session id, an unreadable
settings file, an installed interpreter that is gone) leaves the plugin running —
an event handled twice is better than one handled by nobody.
"""

from __future__ import annotations

import os
import time
from typing import Any

from agent_hooks import identity
from agent_hooks.agents import trail_spill
from agent_hooks.install import claude_settings, hooks_file

MARKER_DIR = "plugin-stands-aside"
MARKER_MAX_AGE = 7 * 86400


def settings_files(environ: Any, project: str | None) -> list[str]:
    """The settings files whose hooks Claude Code merges, user first."""
    files = [os.path.join(identity.state_dir(environ), "settings.json")]
    if project:
        files += [
            os.path.join(project, ".claude", "settings.json"),
            os.path.join(project, ".claude", "settings.local.json"),
        ]
    return files


class Installed:
    """Our installed handlers found in the settings files."""

    def __init__(self) -> None:
        self.matchers: dict[str, set[str | None]] = {}  # event -> matchers of runnable groups
        self.files: list[str] = []  # the files that hold any
        self.broken: list[str] = []  # "<file>: <why>" for handlers that cannot run

    def covers(self, event: str) -> bool:
        wanted = {matcher for name, matcher, _ in claude_settings.HOOKS if name == event}
        return bool(wanted) and wanted <= self.matchers.get(event, set())

    def covered(self) -> list[str]:
        return [e for e in dict.fromkeys(e for e, _, _ in claude_settings.HOOKS) if self.covers(e)]


def _runnable(command: str) -> str | None:
    """Why an installed hook command cannot run (None: it can)."""
    argv = hooks_file.command_argv(command)
    if argv is None:
        return f"cannot parse {command!r}"
    return hooks_file.missing_part(argv)


def find_installed(files: list[str]) -> Installed:
    found = Installed()
    for path in files:
        try:
            doc = claude_settings.read_settings(path)
        except (ValueError, OSError):
            continue
        for event, groups in claude_settings.ours_block(doc).items():
            for group in groups:
                handlers = [
                    h
                    for h in group.get("hooks", [])
                    if claude_settings.is_ours(h)
                    and not h["command"].startswith(claude_settings.PLUGIN_COMMAND.rstrip())
                ]
                if not handlers:
                    continue
                if path not in found.files:
                    found.files.append(path)
                why = _runnable(handlers[0]["command"])
                if why is not None:
                    found.broken.append(f"{path}: {why}")
                    continue
                found.matchers.setdefault(event, set()).add(group.get("matcher"))
    return found


def marker_dir(state_dir: str, session_id: str) -> str:
    return os.path.join(identity.data_dir(state_dir), MARKER_DIR, session_id)


def record_decision(state_dir: str, session_id: str, events: list[str], now: float) -> bool:
    """Leave one empty file per event the plugin stands aside for (and none for the
    others) in this conversation's directory; return whether the conversation had
    no directory yet (the person has not been told). Old conversations' directories
    are swept."""
    directory = marker_dir(state_dir, session_id)
    first = not os.path.isdir(directory)
    parent = os.path.dirname(directory)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for name in _listdir(directory):
        if name not in events:
            os.unlink(os.path.join(directory, name))
    for event in events:
        path = os.path.join(directory, event)
        if not os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    os.utime(directory)  # a live conversation's directory is not swept
    _sweep(parent, now)
    return first


def forget(state_dir: str, session_id: str) -> None:
    """No decision for this conversation: the plugin handles every event."""
    directory = marker_dir(state_dir, session_id)
    for name in _listdir(directory):
        os.unlink(os.path.join(directory, name))
    try:
        os.rmdir(directory)
    except FileNotFoundError:
        pass


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _sweep(parent: str, now: float) -> None:
    for name in _listdir(parent):
        path = os.path.join(parent, name)
        try:
            if os.stat(path, follow_symlinks=False).st_mtime < now - MARKER_MAX_AGE:
                for inner in _listdir(path):
                    os.unlink(os.path.join(path, inner))
                os.rmdir(path)
        except OSError:
            continue


def plugin_session_start(
    environ: Any, project: str | None, now: float | None = None
) -> tuple[list[str], str | None]:
    """Decide for this conversation: the events the plugin stands aside for, and the
    message for the person (None when there is nothing to say)."""
    now = time.time() if now is None else now
    installed = find_installed(settings_files(environ, project))
    session_id = trail_spill.safe_id(environ.get("CLAUDE_CODE_SESSION_ID"))
    if not installed.files:
        if session_id is not None:  # installed earlier in this conversation, not any more
            forget(identity.state_dir(environ), session_id)
        return [], None
    twice = (
        f"agent-hooks is loaded twice: as a plugin ({environ.get('CLAUDE_PLUGIN_ROOT') or '?'}) "
        f"and installed in {', '.join(installed.files)}"
    )
    keep_one = "To keep one: drop --plugin-dir, or run ./install.sh --uninstall."
    if session_id is None:
        return [], f"{twice}; without CLAUDE_CODE_SESSION_ID every hook runs twice. {keep_one}"
    events = installed.covered()
    first = record_decision(identity.state_dir(environ), session_id, events, now)
    if not first:
        return events, None
    if not events:
        why = (
            f"the installed hooks cannot run ({'; '.join(installed.broken)})"
            if installed.broken
            else "the installed hooks are from another version"
        )
        return [], (
            f"{twice}; {why}, so the plugin's hooks run (and any installed one that works runs "
            f"too). Re-run ./install.sh, or ./install.sh --uninstall to keep only the plugin."
        )
    left = [e for e in dict.fromkeys(e for e, _, _ in claude_settings.HOOKS) if e not in events]
    partly = (
        f" (for {', '.join(left)} the installed block is from another version, so the plugin "
        "handles those too; re-run ./install.sh)"
        if left
        else ""
    )
    return events, f"{twice}: the installed hooks run, the plugin's stand aside{partly}. {keep_one}"
