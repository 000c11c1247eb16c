"""Briefings on disk, and the project's files changed since a moment (git).

Layout: `<state dir>/agent-hooks/briefings/<agent key>/<project name>-<16 hex>.json`
— one file per agent and project, the hex digits from the SHA-256 of the
project's resolved path (two projects with one base name never share a file).
Updates run under the file's lock and replace it atomically (durable).

"Since the last session" is the end of the agent's previous conversation in the
project: the `last_activity` of its newest archived trail there (trails are
archived when the next conversation begins), else the moment the briefing was
last changed. `changed_since` answers with git, from three short commands, each
with a timeout: files in commits made since then, and uncommitted (staged,
unstaged, untracked but not ignored) files whose modification time is at or after
it. Workspaces (`.tmp/sessions/`) are left out. Without git, or outside a
repository, there is no automatic list.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from agent_hooks import identity, storage
from agent_hooks.agents import trail_archive
from agent_hooks.briefings import briefing
from agent_hooks.repository import WORKSPACES_DIR

GIT_TIMEOUT = 2.0


def path(agent: identity.Agent, project: str) -> str:
    digest = hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = os.path.basename(project.rstrip("/"))
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name).lstrip(".")[:60]
    return os.path.join(
        identity.data_dir(agent.state_dir),
        "briefings",
        agent.key,
        f"{safe or 'root'}-{digest}.json",
    )


def load(agent: identity.Agent, project: str, now: float) -> dict[str, Any] | None:
    """The agent's briefing for `project`, or None when none was recorded."""
    loaded = storage.load_json_object(path(agent, project))
    if loaded.doc is None:
        return None
    return briefing.normalize(loaded.doc, agent.name, project, now)


def update(
    agent: identity.Agent, project: str, mutate: Callable[[dict[str, Any]], None], now: float
) -> dict[str, Any]:
    """Apply `mutate` to the briefing (a fresh one if there is none) under its lock."""
    target = path(agent, project)
    storage.ensure_dir(os.path.dirname(target))
    result: dict[str, Any] = {}

    def apply(loaded: storage.Loaded) -> dict[str, Any]:
        doc = briefing.normalize(loaded.doc, agent.name, project, now)
        mutate(doc)
        result.update(doc)
        return doc

    storage.locked_update(target, apply, now=now)
    return result


def clear(agent: identity.Agent, project: str) -> bool:
    """Delete the briefing; True when there was one."""
    target = path(agent, project)
    if not os.path.isdir(os.path.dirname(target)):
        return False
    lock = storage.Lock(target + ".lock")
    lock.acquire()
    try:
        os.unlink(target)
    except FileNotFoundError:
        return False
    finally:
        lock.release()
    return True


def last_session_end(agent: identity.Agent, project: str, current: str | None) -> float | None:
    """When the agent's previous conversation in `project` was last active."""
    for trail in trail_archive.list_archived(agent):
        if trail.get("project_root") == project and trail.get("conversation_id") != current:
            last = trail.get("last_activity")
            if isinstance(last, int | float) and not isinstance(last, bool):
                return float(last)
    return None


def _git(project: str, *args: str) -> list[str] | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", "-C", project, "-c", "core.quotePath=false", *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [p for p in done.stdout.decode("utf-8", "replace").split("\0") if p]


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def changed_since(project: str, since: float) -> list[str] | None:
    """Project-relative paths changed at or after `since`, sorted; None when the
    project is not a git repository (or git is unavailable)."""
    if _git(project, "rev-parse", "--is-inside-work-tree") is None:
        return None
    found: set[str] = set()
    when = time.strftime("%Y-%m-%d %H:%M:%S +0000", time.gmtime(since))
    committed = _git(
        project,
        "log",
        f"--since={when}",
        "--name-only",
        "--relative",
        "--no-renames",
        "--format=",
        "-z",
    )
    found.update(line.strip("\n") for line in committed or ())
    uncommitted = _git(project, "diff", "HEAD", "--name-only", "--relative", "--no-renames", "-z")
    untracked = _git(project, "ls-files", "--others", "--exclude-standard", "-z")
    for rel in (*(uncommitted or ()), *(untracked or ())):
        try:
            mtime = os.stat(os.path.join(project, rel), follow_symlinks=False).st_mtime
        except OSError:
            continue  # deleted and not committed: when is unknown
        if mtime >= since:
            found.add(rel)
    prefix = WORKSPACES_DIR + "/"
    return sorted(_printable(p) for p in found if p and not p.startswith(prefix))
