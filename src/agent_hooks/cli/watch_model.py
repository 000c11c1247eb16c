"""What `agent-hooks watch` shows, as data: one read-only snapshot of a project.

`snapshot(env, project, now)` reads every agent's state file, the project's
reservations and leases (`cli.reservations.rows_for`), the tail of the hook log
and the active work session, and returns plain values. No terminal library is
imported here, so `--once` and the unit tests never load one.

Invariants: nothing is written or created (no lock taken, no directory made, no
sweep); an unreadable source becomes a line in `problems`, never an exception;
the same files and the same `now` give the same snapshot. Its fields are named
as the other commands' `--json` names them (`agents`: `agent`, None for the
agent without AGENT_NAME, and `active`; `reservations`: `holder_label`).
"""

from __future__ import annotations

import calendar
import dataclasses
import os
import re
import time
from typing import Any

from agent_hooks import durations, fingerprints, identity
from agent_hooks.agents import roster
from agent_hooks.cli._common import Env, relative
from agent_hooks.cli.reservations import rows_for
from agent_hooks.work_sessions import location, work_session, work_session_store

DENIALS = 10  # how many recent denials are shown
LOG_TAIL = 256 << 10  # bytes read from the end of each log file
DROPPED_WINDOW = 86400  # "dropped lately": within the last day
_LOG_LINE = re.compile(r"(\S+) pid=\d+ agent=(.*?) event=(\S+) (.*)")
UNNAMED_LOG_LABEL = identity.Agent(None, "/").label  # how the log names an unnamed agent


@dataclasses.dataclass(frozen=True)
class Agent:
    agent: str | None  # its AGENT_NAME; None: the agents without one (agent-state.json)
    client: str | None  # the client its latest conversation runs in (claude, codex, gemini)
    active: bool
    last_activity: int
    ago: str
    work: str  # its issue_id, else the last file it modified, else ""
    project_root: str | None
    elsewhere: bool  # working in another project than the one watched
    problem: str | None


@dataclasses.dataclass(frozen=True)
class Holding:
    kind: str  # "reservation" or "lease"
    holder_label: str
    client: str | None  # the holder's client, when known
    pattern: str
    mode: str
    minutes_left: int
    state: str  # cli.reservations.holder_state's words
    reason: str
    id: str | None


@dataclasses.dataclass(frozen=True)
class Denial:
    at: int  # epoch seconds (the log's UTC stamp)
    agent: str | None  # None: an agent without AGENT_NAME
    tool: str
    text: str  # the first line of the refusal, without the "agent-hooks: " prefix
    project_root: str | None = None  # the denied agent's project, when its state says
    elsewhere: bool = False  # that project is not the watched one


@dataclasses.dataclass(frozen=True)
class WorkSession:
    session_id: str
    status: str
    indicator: str
    current: int
    max: int
    percent: float
    contexts: list[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class Snapshot:
    project: str
    state_dir: str
    now: float
    agents: list[Agent]
    holdings: list[Holding]
    dropped_lately: int
    denials: list[Denial]
    work_session: WorkSession | None
    problems: list[str]

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def snapshot(env: Env, project: str, now: float) -> Snapshot:
    """Everything the watch view shows for `project`, read at `now`."""
    problems: list[str] = []
    holdings, dropped = _holdings(env.state_dir, project, now, problems)
    listed = agents(env.state_dir, project, now)
    return Snapshot(
        project=project,
        state_dir=env.state_dir,
        now=now,
        agents=listed,
        holdings=holdings,
        dropped_lately=dropped,
        denials=placed(denials(env.state_dir), listed, project),
        work_session=active_work_session(env.environ, project, problems),
        problems=problems,
    )


def agents(state_dir: str, project: str, now: float) -> list[Agent]:
    """Every agent with a state file: the watched project's first, each group by name."""
    found = []
    for record in roster.load_all(state_dir, now):
        if not roster.ever_ran(record):
            continue
        doc = record.doc
        root = doc["project_root"]
        found.append(
            Agent(
                agent=record.agent.name,
                client=doc["client"],
                active=roster.is_active(doc, now),
                last_activity=doc["last_activity"],
                ago=durations.ago(now - doc["last_activity"]),
                work=doc["issue_id"] or _last_modified(doc),
                project_root=root,
                elsewhere=root is not None and root != project,
                problem=record.problem,
            )
        )
    found.sort(key=lambda a: a.elsewhere)  # stable: names stay in order within each group
    return found


def _last_modified(doc: dict[str, Any]) -> str:
    """The file the agent changed last: the newest fingerprint among its created and
    modified files (a trail keeps first-seen order), else the trail's last entry."""
    changed = doc["files_modified"] + doc["files_created"]
    if not changed:
        return ""
    recorded = doc["fingerprints"]
    order = {path: i for i, path in enumerate(changed)}

    def recency(path: str) -> tuple[int, int]:
        fingerprint = fingerprints.read(recorded.get(path))
        stamp = fingerprints.mtime_ns(fingerprint) if fingerprint is not None else -1
        return stamp, order[path]

    return relative(max(changed, key=recency), doc["project_root"])


def _holdings(
    state_dir: str, project: str, now: float, problems: list[str]
) -> tuple[list[Holding], int]:
    rows, listing = rows_for(state_dir, project, now)
    problems += listing.problems
    held = [
        Holding(
            kind=row["kind"],
            holder_label=row["holder_label"],
            client=row["client"],
            pattern=row["pattern"],
            mode=row["mode"],
            minutes_left=row["minutes_left"],
            state=row["state"],
            reason=row.get("reason") or "",
            id=row.get("id"),
        )
        for row in rows
    ]
    held.sort(key=lambda h: (h.kind != "reservation", h.minutes_left, h.pattern))
    lately = sum(1 for d in listing.dropped if now - _number(d.get("at")) < DROPPED_WINDOW)
    return held, lately


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def denials(state_dir: str, limit: int = DENIALS) -> list[Denial]:
    """The last `limit` denials in the hook log (and its rotated copy), newest first."""
    path = identity.log_path(state_dir)
    found: list[Denial] = []
    for name in (path, path + ".1"):
        for line in reversed(_tail_lines(name)):
            denial = parse_denial(line)
            if denial is not None:
                found.append(denial)
                if len(found) == limit:
                    return found
    return found


def placed(found: list[Denial], listed: list[Agent], project: str) -> list[Denial]:
    """The denials with their agent's project (from its state), marked `elsewhere`
    when that is not the watched one, as the agents panel marks agents."""
    roots = {a.agent: a.project_root for a in listed}
    return [
        dataclasses.replace(
            d,
            project_root=roots.get(d.agent),
            elsewhere=roots.get(d.agent) not in (None, project),
        )
        for d in found
    ]


def parse_denial(line: str) -> Denial | None:
    """A log line whose message is `denied TOOL: REASON`, else None."""
    match = _LOG_LINE.fullmatch(line)
    if match is None or not match[4].startswith("denied "):
        return None
    try:
        at = calendar.timegm(time.strptime(match[1], "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return None
    tool, _, text = match[4].removeprefix("denied ").partition(": ")
    agent = None if match[2] in ("-", UNNAMED_LOG_LABEL) else match[2]
    return Denial(at=at, agent=agent, tool=tool, text=text.removeprefix("agent-hooks: "))


def _tail_lines(path: str) -> list[str]:
    """The whole lines in the last LOG_TAIL bytes of `path` (none if unreadable)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - LOG_TAIL)
            handle.seek(start)
            data = handle.read(LOG_TAIL)
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[1:] if start else lines


def active_work_session(
    environ: dict[str, str], project: str, problems: list[str]
) -> WorkSession | None:
    """The project's active work session and its token figures, or None."""
    directory = location.sessions_dir(project, environ)
    if directory is None:
        return None
    try:
        found = work_session_store.Store(directory).active()
    except (OSError, work_session.WorkSessionError) as exc:
        problems.append(f"work session not read: {exc}")
        return None
    if found is None or found.archived:
        return None
    doc = found.doc
    tokens = doc["tokens"]
    return WorkSession(
        session_id=doc["session_id"],
        status=doc["status"],
        indicator=work_session.indicator(doc),
        current=tokens["current"],
        max=tokens["max"],
        percent=round(work_session.percent(tokens["current"], tokens["max"]), 1),
        contexts=work_session.agent_contexts(doc),
    )
