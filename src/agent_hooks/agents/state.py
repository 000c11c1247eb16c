"""The agent's state document: pure functions over a plain dict.

The original ADR's field names are kept exactly, because other tools read them:
`registered`, `agent_name`, `reservations`, `issue_id`, `session_start`,
`files_created`, `files_modified`, `files_read`. Added by agent-hooks:
`schema`, `conversation_id`, `source`, `client` (the client program the latest
conversation runs in: `claude`, `codex`, `gemini`; None in documents written before
it was kept), `conversations`, `project_root`, `pid`, `active`, `last_activity`, `fingerprints`, `notices`, `workspace_files` (files
the agent wrote or read inside its workspaces, kept apart from project files),
`workspace` (the workspace bound to the current conversation: `{"id", "path",
"conversation_id"}` or None), `trail_writers` (for a trail path a subagent or
teammate touched: the writers that did), `waiting` (files a writer was refused,
to be told when they free: `gate.waiting`), `alerts` (messages for
the agent's next hook that can carry context; `alerts_for`: the same for one
conversation, when two share the state file) and `held` (files its writers wrote
and hold, with their fingerprints after the last write: `leases.held_files`).

Invariants:

* `normalize` turns anything (None, an older schema, hand-edited JSON with wrong
  types) into a document with every key present and well-typed; it never raises.
* A trail list holds absolute paths, each once, in first-seen order.
* `conversations` and `notices` are bounded, so the document stays small: it is
  read and rewritten by every PostToolUse.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy treats this name as True; at run time typing is never imported
if TYPE_CHECKING:
    from typing import Any

    Doc = dict[str, Any]

SCHEMA_VERSION = 1
TRAIL_FIELDS = ("files_created", "files_modified", "files_read", "workspace_files")
MAX_CONVERSATIONS = 20
MAX_NOTICES = 20
MAX_WAITING = 20
MAX_WRITERS_PER_PATH = 8
MAX_HELD = 200


def fresh(agent_name: str | None, now: float) -> Doc:
    """A new, empty document for `agent_name`."""
    return {
        "schema": SCHEMA_VERSION,
        "registered": False,
        "agent_name": agent_name,
        "reservations": [],
        "issue_id": None,
        "session_start": int(now),
        "files_created": [],
        "files_modified": [],
        "files_read": [],
        "conversation_id": None,
        "source": None,
        "client": None,
        "conversations": [],
        "project_root": None,
        "pid": None,
        "active": False,
        "last_activity": int(now),
        "workspace_files": [],
        "workspace": None,
        "fingerprints": {},
        "notices": [],
        "trail_writers": {},
        "waiting": [],
        "alerts": [],
        "alerts_for": {},
        "held": {},
    }


def _str_list(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    seen: set[str] = set()
    out = []
    for item in value:
        if isinstance(item, str) and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _number(value: object, default: int) -> int:
    """An epoch time from JSON: finite and within 0..2**40, else `default`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if value != value or not 0 <= value < 1 << 40:  # NaN, negative, infinite, absurd
        return default
    return int(value)


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _earlier_fingerprints(recorded: dict[Any, Any]) -> dict[Any, str]:
    """Fingerprints as strings, those an earlier release stored as lists converted;
    what is neither is dropped."""
    from agent_hooks import fingerprints

    out = {}
    for path, value in recorded.items():
        fingerprint = value if value.__class__ is str else fingerprints.read(value)
        if fingerprint is not None:
            out[path] = fingerprint
    return out


def normalize(raw: Doc | None, agent_name: str | None, now: float) -> Doc:
    """A complete document from whatever was on disk (missing keys get defaults)."""
    doc = fresh(agent_name, now)
    if not raw:
        return doc
    doc["registered"] = raw.get("registered") is True
    doc["agent_name"] = agent_name
    doc["issue_id"] = _optional_str(raw.get("issue_id"))
    doc["session_start"] = _number(raw.get("session_start"), int(now))
    for field in TRAIL_FIELDS:
        doc[field] = _str_list(raw.get(field))
    for field in ("conversation_id", "source", "client", "project_root"):
        doc[field] = _optional_str(raw.get(field))
    pid = raw.get("pid")
    valid_pid = isinstance(pid, int) and not isinstance(pid, bool) and 0 < pid < 1 << 31
    doc["pid"] = pid if valid_pid else None
    doc["active"] = raw.get("active") is True
    doc["last_activity"] = _number(raw.get("last_activity"), doc["session_start"])
    for field in ("reservations", "conversations"):
        value = raw.get(field)
        doc[field] = (
            [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
        )
    recorded = raw.get("fingerprints")
    if isinstance(recorded, dict):
        # strings as they are (`fingerprints.read` judges one when it is used): this
        # runs over every trail file on every hook
        kept = {k: v for k, v in recorded.items() if v.__class__ is str}
        doc["fingerprints"] = (
            kept if len(kept) == len(recorded) else _earlier_fingerprints(recorded)
        )
    doc["notices"] = _str_list(raw.get("notices"))[-MAX_NOTICES:]
    doc["alerts"] = _str_list(raw.get("alerts"))[-MAX_NOTICES:]
    targeted = raw.get("alerts_for")
    if isinstance(targeted, dict):
        doc["alerts_for"] = {
            k: _str_list(v)[-MAX_NOTICES:]
            for k, v in list(targeted.items())[-MAX_CONVERSATIONS:]
            if isinstance(k, str)
        }
    waiting = raw.get("waiting")
    doc["waiting"] = (
        [w for w in waiting if isinstance(w, dict)][-MAX_WAITING:]
        if isinstance(waiting, list)
        else []
    )
    marks = raw.get("trail_writers")
    if isinstance(marks, dict):
        doc["trail_writers"] = {
            k: _str_list(v)[:MAX_WRITERS_PER_PATH] for k, v in marks.items() if isinstance(k, str)
        }
    workspace = raw.get("workspace")
    doc["workspace"] = workspace if isinstance(workspace, dict) else None
    held = raw.get("held")
    if isinstance(held, dict):
        entries = [(k, v) for k, v in held.items() if isinstance(k, str) and isinstance(v, dict)]
        doc["held"] = dict(entries[-MAX_HELD:])
    return doc


def add_notice(doc: Doc, text: str) -> None:
    """Queue a message for the agent's next SessionStart context."""
    notices = doc["notices"]
    notices.append(text)
    del notices[:-MAX_NOTICES]


def take_notices(doc: Doc) -> list[str]:
    notices: list[str] = doc["notices"]
    doc["notices"] = []
    return notices


def add_alert(doc: Doc, text: str, conversation: str | None = None) -> None:
    """Queue a message for the agent's next hook that can carry context — only for
    `conversation`'s hooks when given (two conversations sharing one state file)."""
    alerts = (
        doc["alerts"] if conversation is None else doc["alerts_for"].setdefault(conversation, [])
    )
    if text not in alerts:
        alerts.append(text)
    del alerts[:-MAX_NOTICES]


def take_alerts(doc: Doc, conversation: str | None = None) -> list[str]:
    """The alerts for any conversation of the agent, and those for `conversation`."""
    alerts: list[str] = doc["alerts"]
    doc["alerts"] = []
    if conversation is not None:
        alerts += doc["alerts_for"].pop(conversation, [])
    return alerts


def trail(doc: Doc) -> Doc:
    """The current conversation's trail, as archived when a new one begins."""
    return {
        "conversation_id": doc["conversation_id"],
        "agent_name": doc["agent_name"],
        "project_root": doc["project_root"],
        "session_start": doc["session_start"],
        "last_activity": doc["last_activity"],
        "files_created": doc["files_created"],
        "files_modified": doc["files_modified"],
        "files_read": doc["files_read"],
        "workspace_files": doc["workspace_files"],
        "fingerprints": doc["fingerprints"],
        "workspace": doc["workspace"],
        "trail_writers": doc["trail_writers"],
    }


def has_trail(doc: Doc) -> bool:
    return any(doc[field] for field in TRAIL_FIELDS)


def begin_conversation(
    doc: Doc,
    *,
    conversation_id: str | None,
    source: str,
    project_root: str | None,
    pid: int | None,
    now: float,
    archived: Doc | None = None,
    shared: bool = False,
    client: str | None = None,
) -> Doc | None:
    """Record a SessionStart; return the trail that must be archived, if any.

    startup / clear begin a new trail. resume / compact go on with the current
    trail, except that resuming a conversation other than the current one brings
    back that conversation's archived trail (`archived`) and archives the current.
    An unknown `source` (a newer client) is treated like resume: nothing is reset.
    `shared`: another conversation still running uses this state file (one
    AGENT_NAME in two panes): its trail and held files are left as they are.
    """
    to_archive = None
    if shared:
        pass
    elif source in ("startup", "clear"):
        if has_trail(doc):
            to_archive = trail(doc)
        _reset_trail(doc, now)
    elif archived is not None and conversation_id != doc["conversation_id"]:
        if has_trail(doc):
            to_archive = trail(doc)
        restored = normalize(archived, doc["agent_name"], now)
        for field in (*TRAIL_FIELDS, "fingerprints", "session_start", "workspace", "trail_writers"):
            doc[field] = restored[field]
    if not shared and (conversation_id != doc["conversation_id"] or source in ("startup", "clear")):
        doc["held"] = {}  # the leases of the last conversation ended with it
    doc.update(
        registered=True,
        conversation_id=conversation_id,
        source=source,
        client=client,
        project_root=project_root,
        pid=pid,
        active=True,
        last_activity=int(now),
    )
    conversations = doc["conversations"]
    entry = {"id": conversation_id, "source": source, "started": int(now)}
    if client is not None:
        entry["client"] = client
    conversations.append(entry)
    del conversations[:-MAX_CONVERSATIONS]
    return to_archive


def _reset_trail(doc: Doc, now: float) -> None:
    for field in TRAIL_FIELDS:
        doc[field] = []
    doc["fingerprints"] = {}
    doc["trail_writers"] = {}
    doc["workspace"] = None
    doc["session_start"] = int(now)


ACTIVITY_RESOLUTION = 60  # seconds: a tool call within a minute of the last needs no write


def touch(doc: Doc, now: float, resolution: int = 0) -> bool:
    """Move `last_activity` to `now`; True when it moved by at least `resolution` s."""
    if now - doc["last_activity"] < resolution:
        return False
    doc["last_activity"] = int(now)
    return True


def end_conversation(doc: Doc, now: float) -> None:
    doc["active"] = False
    doc["last_activity"] = int(now)
