"""Work sessions: a named unit of work that spans conversations (design document 003) — the
document model: ids, times, the forgiving reader, the changes (milestones,
notes, artifacts, subagents, context figures) and the token thresholds. The
texts people read are in work_session_report.

Pure: every function takes the document, `now` and figures as arguments; no
file is touched here (work_session_store does that). Only built-in modules are
imported, so the hooks may load this module once a work session is active.

Invariants (docs/adr/0009-work-sessions.md):

* An id is `{PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}`: each part upper-cased and made
  of `[A-Z0-9]` only (1-32 characters), the month taken from `now` in UTC. An id
  that passes `check_id` is safe as a file name.
* `normalize` reads anything (a hand-edited file, an older layout, wrong types)
  into a document with every field present and well typed, following the design document's
  "Token Deserialization and Defaults": `tokens.max` missing, null (or not a
  positive integer) -> 150000; any other token field missing or unusable -> 0;
  a legacy `tokens.saved_by_isolation` is read as `saved` when `saved` is absent.
  Fields it does not know are kept as they are: nothing is dropped.
* Thresholds are strict, as in the design document: yellow when current/max > 80 %, red when
  > 95 % (computed in integers: exactly 80 % is still green).
* Times in documents are ISO 8601 UTC strings (`2026-11-21T19:46:23Z`).
* `pending_subagents` holds at most one entry per subagent id: the subagents
  whose transcripts were not final yet when they stopped (work_sessions/subagents).
"""

from __future__ import annotations

import time

from agent_hooks.timestamps import iso, parse_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_PREFIX = "SES"
DEFAULT_MAX = 150_000
WARN_PERCENT = 80
CRITICAL_PERCENT = 95
STATUSES = ("active", "paused", "closed", "blocked")
TOKEN_FIELDS = ("max", "initial", "current", "peak", "saved")
MAX_PART = 32
MAX_CONVERSATIONS = 20
ID_RULE = "letters and digits only ([A-Z0-9]+, upper-cased, at most 32)"
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

GREEN, YELLOW, RED, PAUSED, CLOSED = "🟢", "🟡", "🔴", "⏸️", "✅"


class WorkSessionError(ValueError):
    """A request that cannot be carried out; the message is one line for people."""


# ----------------------------------------------------------------------------- ids


def check_part(label: str, value: str) -> str:
    """`value` upper-cased if it is `[A-Z0-9]+` (1-32), else WorkSessionError naming the rule."""
    text = value.strip().upper()
    if not text or len(text) > MAX_PART or not set(text) <= _ALNUM:
        raise WorkSessionError(f"{label} {value!r} is not allowed: use {ID_RULE}, e.g. ACME")
    return text


def make_id(prefix: str, client: str, project: str, now: float) -> str:
    """`{PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}`, e.g. SES202611-ACME-AUDIT (month in UTC)."""
    month = time.strftime("%Y%m", time.gmtime(now))
    return (
        f"{check_part('prefix', prefix)}{month}-{check_part('client', client)}-"
        f"{check_part('code', project)}"
    )


def check_id(text: str) -> str:
    """The id upper-cased when it has the id form, else WorkSessionError."""
    parts = text.strip().upper().split("-")
    ok = (
        len(parts) == 3
        and all(part and set(part) <= _ALNUM for part in parts)
        and 7 <= len(parts[0]) <= MAX_PART + 6
        and parts[0][-6:].isdigit()
        and len(parts[1]) <= MAX_PART
        and len(parts[2]) <= MAX_PART
    )
    if not ok:
        raise WorkSessionError(
            f"work session id {text!r} is not of the form PREFIXYYYYMM-CLIENT-PROJECT "
            f"(e.g. SES202611-ACME-AUDIT; {ID_RULE})"
        )
    return "-".join(parts)


# ----------------------------------------------------------------------- times


def parse_time(value: object) -> float | None:
    """Seconds since the epoch for a time in a work-session file: an ISO 8601 string
    (`timestamps.parse_iso`) or, in a hand-edited file, a number."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if value == value and abs(value) < 1 << 40 else None
    return parse_iso(value.strip() if isinstance(value, str) else value)


def elapsed(doc: dict[str, Any], now: float) -> float:
    """Seconds from `created` to `closed` (closed sessions) or to `now`."""
    start = parse_time(doc["created"])
    end = parse_time(doc.get("closed")) if doc["status"] == "closed" else None
    return max(0.0, (end or now) - start) if start is not None else 0.0


# -------------------------------------------------------------------- document


def new_document(
    session_id: str,
    prefix: str,
    client: str,
    project: str,
    now: float,
    max_tokens: int = DEFAULT_MAX,
) -> dict[str, Any]:
    """A fresh document with the design document's fields (and `conversations`, see the ADR)."""
    return {
        "session_id": session_id,
        "created": iso(now),
        "last_updated": iso(now),
        "status": "active",
        "client": client,
        "project": project,
        "prefix": prefix,
        "tokens": {"max": max_tokens, "initial": 0, "current": 0, "peak": 0, "saved": 0},
        "agents_spawned": [],
        "artifacts": [],
        "milestones": [],
        "context_summary": "",
        "notes": [],
        "conversations": {},
        "pending_subagents": [],
    }


def _count(value: object) -> int | None:
    """A non-negative integer from an int, an integral float or a digit string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().replace(",", "").replace("_", "").isdigit():
        return int(value.strip().replace(",", "").replace("_", ""))
    return None


def normalize_tokens(raw: object) -> dict[str, Any]:
    """The design document's token defaults (see the module docstring); unknown keys are kept."""
    src = raw if isinstance(raw, dict) else {}
    out = {k: v for k, v in src.items() if k not in TOKEN_FIELDS and k != "saved_by_isolation"}
    budget = _count(src.get("max"))
    out["max"] = budget if budget else DEFAULT_MAX
    for field in ("initial", "current", "peak"):
        out[field] = _count(src.get(field)) or 0
    saved = _count(src["saved"]) if "saved" in src else _count(src.get("saved_by_isolation"))
    out["saved"] = saved or 0
    return out


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value)


def _time_text(value: object) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return iso(float(value))
    return value if isinstance(value, str) and value else None


def _records(raw: object, key: str) -> list[dict[str, Any]]:
    """A list of dicts; bare strings become `{key: string}`; other items are dropped."""
    out = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict):
            out.append(dict(item))
        elif isinstance(item, str) and item:
            out.append({key: item})
    return out


def _pending(raw: object) -> list[dict[str, Any]]:
    """Pending subagents: records with a string `id`, `transcript` a string or None,
    `since` an ISO time or None; one per id (the last)."""
    out: dict[str, dict[str, Any]] = {}
    for item in _records(raw, "id"):
        agent_id = item.get("id")
        if not isinstance(agent_id, str) or not agent_id:
            continue
        path = item.get("transcript")
        item["transcript"] = path if isinstance(path, str) and path else None
        item["since"] = _time_text(item.get("since"))
        out.pop(agent_id, None)
        out[agent_id] = item
    return list(out.values())


def normalize(raw: object) -> dict[str, Any]:
    """A complete, well-typed document from whatever was read; never raises."""
    src = raw if isinstance(raw, dict) else {}
    doc = dict(src)
    for field in ("session_id", "client", "project", "prefix", "context_summary"):
        doc[field] = _text(src.get(field))
    doc["created"] = _time_text(src.get("created")) or ""
    doc["last_updated"] = _time_text(src.get("last_updated")) or doc["created"]
    status = _text(src.get("status")).strip().lower()
    doc["status"] = status if status in STATUSES else "active"
    doc["tokens"] = normalize_tokens(src.get("tokens"))
    agents = _records(src.get("agents_spawned"), "id")
    for agent in agents:
        agent.setdefault("type", "")
        agent["started"] = _time_text(agent.get("started"))
        agent["completed"] = _time_text(agent.get("completed"))
        agent["tokens_used"] = _count(agent.get("tokens_used")) or 0
        agent.setdefault("output_file", None)
    doc["agents_spawned"] = agents
    artifacts = [
        a for a in _records(src.get("artifacts"), "path") if isinstance(a.get("path"), str)
    ]
    for artifact in artifacts:
        artifact["created"] = _time_text(artifact.get("created"))
        artifact["agent"] = _text(artifact.get("agent"))
    doc["artifacts"] = artifacts
    milestones = [m for m in _records(src.get("milestones"), "name") if m.get("name")]
    for milestone in milestones:
        milestone["name"] = _text(milestone["name"])
        milestone["completed"] = _time_text(milestone.get("completed"))
    doc["milestones"] = milestones
    notes = src.get("notes")
    doc["notes"] = (
        [_text(n) for n in notes if n is not None]
        if isinstance(notes, list)
        else ([notes] if isinstance(notes, str) and notes else [])
    )
    doc["pending_subagents"] = _pending(src.get("pending_subagents"))
    conversations = src.get("conversations")
    doc["conversations"] = (
        {k: v for k, v in conversations.items() if isinstance(v, dict)}
        if (isinstance(conversations, dict))
        else {}
    )
    return doc


def touch(doc: dict[str, Any], now: float) -> None:
    doc["last_updated"] = iso(now)


# ------------------------------------------------------------------- mutations


def _one_line(label: str, text: str, limit: int) -> str:
    value = text.strip()
    if not value or "\n" in value or "\r" in value or len(value) > limit:
        raise WorkSessionError(f"{label} must be one non-empty line of at most {limit} characters")
    return value


def add_milestone(doc: dict[str, Any], name: str) -> dict[str, Any]:
    name = _one_line("a milestone name", name, 200)
    if any(m["name"] == name for m in doc["milestones"]):
        raise WorkSessionError(f"{doc['session_id']} already has a milestone named {name!r}")
    milestone = {"name": name, "completed": None}
    doc["milestones"].append(milestone)
    return milestone


def complete_milestone(doc: dict[str, Any], name: str, now: float) -> dict[str, Any]:
    name = name.strip()
    milestones: list[dict[str, Any]] = doc["milestones"]
    for milestone in milestones:
        if milestone["name"] == name:
            if milestone["completed"] is None:
                milestone["completed"] = iso(now)
            return milestone
    known = ", ".join(repr(m["name"]) for m in doc["milestones"]) or "none yet"
    raise WorkSessionError(
        f"{doc['session_id']} has no milestone named {name!r} (known: {known}); "
        "add it first with `agent-hooks session milestone add NAME`"
    )


def add_note(doc: dict[str, Any], text: str) -> None:
    doc["notes"].append(_one_line("a note", text, 2000))


def set_summary(doc: dict[str, Any], text: str) -> None:
    if len(text) > 20_000:
        raise WorkSessionError("the context summary is limited to 20,000 characters")
    doc["context_summary"] = text.strip("\n")


MAX_NEW_ARTIFACTS = 100  # artifacts one tool call adds (a Bash command may create 100,000s)


def record_artifacts(
    doc: dict[str, Any],
    paths: list[str],
    agent: str,
    now: float,
    subagent: str | None = None,
    limit: int = MAX_NEW_ARTIFACTS,
) -> tuple[int, int]:
    """Add the created files (project-relative paths) not recorded yet, at most
    `limit` of them, in one pass: (how many were added, how many new ones were
    left out)."""
    known = {a["path"] for a in doc["artifacts"]}
    added = left = 0
    for path in paths:
        if path in known:
            continue
        known.add(path)
        if added >= limit:
            left += 1
            continue
        artifact: dict[str, Any] = {"path": path, "created": iso(now), "agent": agent}
        if subagent:
            artifact["subagent"] = subagent
        doc["artifacts"].append(artifact)
        added += 1
    return added, left


def spawned_agent(doc: dict[str, Any], agent_id: str) -> dict[str, Any]:
    """The `agents_spawned` record for `agent_id`, created when it is missing."""
    agents: list[dict[str, Any]] = doc["agents_spawned"]
    for agent in agents:
        if agent.get("id") == agent_id:
            return agent
    agent = {
        "id": agent_id,
        "type": "",
        "started": None,
        "completed": None,
        "tokens_used": 0,
        "output_file": None,
    }
    doc["agents_spawned"].append(agent)
    return agent


def finish_agent(doc: dict[str, Any], agent_id: str, tokens_used: int, now: float) -> None:
    """Record a subagent's end and its tokens; `saved` grows by the change, so a
    repeated stop counts once and a `saved` imported from elsewhere is kept."""
    agent = spawned_agent(doc, agent_id)
    previous = agent["tokens_used"]
    agent["tokens_used"] = tokens_used
    agent["completed"] = agent["completed"] or iso(now)
    doc["tokens"]["saved"] = max(0, doc["tokens"]["saved"] + tokens_used - previous)


def add_pending(doc: dict[str, Any], agent_id: str, transcript: str | None, now: float) -> None:
    """Put a stopped subagent whose transcript is not final yet on the pending list
    (replacing an older entry of the same id; the list keeps the most recent last)."""
    drop_pending(doc, agent_id)
    doc["pending_subagents"].append({"id": agent_id, "transcript": transcript, "since": iso(now)})


def drop_pending(doc: dict[str, Any], agent_id: str) -> bool:
    """Take `agent_id` off the pending list; True when it was there."""
    pending: list[dict[str, Any]] = doc["pending_subagents"]
    kept = [item for item in pending if item.get("id") != agent_id]
    doc["pending_subagents"] = kept
    return len(kept) != len(pending)


def apply_figures(
    doc: dict[str, Any], conversation: str, entry: dict[str, Any], now: float
) -> None:
    """Store one conversation's context figures; `tokens.current` becomes the
    figure reported most recently, `peak` the largest ever seen, `initial` the
    first figure measured in this work session."""
    conversations = doc["conversations"]
    if not conversations and doc["tokens"]["initial"] == 0:
        doc["tokens"]["initial"] = entry["current"]
    entry["updated"] = iso(now)
    conversations.pop(conversation, None)
    conversations[conversation] = entry
    while len(conversations) > MAX_CONVERSATIONS:
        del conversations[next(iter(conversations))]
    tokens = doc["tokens"]
    tokens["current"] = entry["current"]
    tokens["peak"] = max(tokens["peak"], entry["peak"], entry["current"])


def agent_contexts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The latest conversation figures of each agent, most recent last."""
    latest: dict[str, dict[str, Any]] = {}
    for conversation, entry in doc["conversations"].items():
        agent = _text(entry.get("agent")) or "-"
        latest.pop(agent, None)
        latest[agent] = {
            "agent": agent,
            "conversation": conversation,
            "current": _count(entry.get("current")) or 0,
            "peak": _count(entry.get("peak")) or 0,
            "updated": entry.get("updated"),
        }
    return list(latest.values())


# ---------------------------------------------------------------------- tokens


def over(current: int, budget: int, percent: int) -> bool:
    """current/budget > percent %, in integers (no rounding at the boundary)."""
    return current * 100 > budget * percent


def percent(current: int, budget: int) -> float:
    return current * 100 / budget if budget > 0 else 0.0


def pct_text(value: float) -> str:
    """`30%`, `80.7%`: one decimal unless the value is whole."""
    rounded = round(value, 1)
    return f"{int(rounded)}%" if rounded.is_integer() else f"{rounded}%"


def level_indicator(current: int, budget: int) -> str:
    if over(current, budget, CRITICAL_PERCENT):
        return RED
    return YELLOW if over(current, budget, WARN_PERCENT) else GREEN


def indicator(doc: dict[str, Any], current: int | None = None) -> str:
    """✅ closed, ⏸️ paused, 🔴 blocked or > 95 %, 🟡 > 80 %, else 🟢."""
    status = doc["status"]
    if status == "closed":
        return CLOSED
    if status == "paused":
        return PAUSED
    if status == "blocked":
        return RED
    tokens = doc["tokens"]
    return level_indicator(tokens["current"] if current is None else current, tokens["max"])


def due_warning(current: int, budget: int, warned: list[int]) -> tuple[list[int], int | None]:
    """The thresholds already told and the one to tell now (95, 80 or None).

    Each threshold is told once while the context stays above it; a jump past
    both tells only 95. A context that falls back to or below a threshold (after
    a compaction) re-arms it.
    """
    crossed = [t for t in (CRITICAL_PERCENT, WARN_PERCENT) if over(current, budget, t)]
    fire = next((t for t in crossed if t not in warned), None)
    return sorted(crossed), fire


def warning_texts(session_id: str, threshold: int, current: int, budget: int) -> tuple[str, str]:
    """(text for the model, text for the user) when a conversation passes `threshold`."""
    share = pct_text(percent(current, budget))
    figures = f"{current:,} of the {budget:,}-token budget ({share})"
    if threshold >= CRITICAL_PERCENT:
        advice = (
            "Critical: write the context summary now (`agent-hooks session summary TEXT`), "
            "mark finished milestones, and hand further work to subagents or a fresh "
            "conversation before the context runs out."
        )
        mark = RED
    else:
        advice = (
            "Keep the rest of this conversation lean: delegate large reads and searches "
            "to subagents and record progress (`agent-hooks session summary TEXT`)."
        )
        mark = YELLOW
    model = (
        f"agent-hooks: work session {session_id}: this conversation's context is {figures}. "
        f"{advice}"
    )
    user = f"{mark} work session {session_id}: context {current:,}/{budget:,} tokens ({share})"
    return model, user
