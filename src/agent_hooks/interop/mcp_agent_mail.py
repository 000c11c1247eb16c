"""Interop with mcp_agent_mail: reservations made through its MCP tools are recorded
in agent-hooks' own store, so they are enforced like `agent-hooks reserve`
(docs/adr/0011-git-guard-and-mcp-interop.md).

Tool shapes (github.com/Dicklesworthstone/mcp_agent_mail, src/mcp_agent_mail/app.py):

* `file_reservation_paths(project_key, agent_name, paths, ttl_seconds=3600,
  exclusive=True, reason="")` → `{granted: [{id, path_pattern, exclusive, reason,
  expires_ts, reused, ...}], conflicts: [{path, holders}], warnings}`. It grants
  even on conflict: only what is under `granted` counts.
* `release_file_reservations(project_key, agent_name, paths?, file_reservation_ids?)`
  → `{released: <count>, released_at}`; neither filter = all of the agent's; `paths`
  match stored patterns exactly.
* `renew_file_reservations(..., extend_seconds, paths?, file_reservation_ids?)` →
  `{renewed, file_reservations: [{id, path_pattern, old_expires_ts, new_expires_ts}]}`.
* `macro_start_session(human_key, ..., file_reservation_paths?,
  file_reservation_reason="macro-session", file_reservation_ttl_seconds=3600)` →
  `{project, agent, execution, file_reservations: {granted, conflicts}, inbox}`.
* `macro_file_reservation_cycle(project_key, agent_name, paths, ..., auto_release)` →
  `{file_reservations: {granted, ...}, released}`; with auto_release the freshly
  granted (not `reused`) ones are released again in the same call.

Invariants (this module is pure: no file, no clock, no environment):

* Only what mcp_agent_mail granted becomes a `Grant` (entries under `granted`; with
  `auto_release` a cycle's freshly granted ones are dropped), each carrying the
  pattern exactly as mcp_agent_mail stored it.
* A result that is not one of the shapes above raises `ResultError` (one line saying
  why); a tool that is not one of TOOLS gives no actions.
* Recording the actions in agent-hooks' store is `interop.mcp_agent_mail_hook`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DEFAULT_SERVER = "mcp-agent-mail"
RESERVE = "file_reservation_paths"
RELEASE = "release_file_reservations"
RENEW = "renew_file_reservations"
START_SESSION = "macro_start_session"
CYCLE = "macro_file_reservation_cycle"
TOOLS = (RESERVE, RELEASE, RENEW, START_SESSION, CYCLE)
MCP_TOOLS = frozenset(f"mcp__{DEFAULT_SERVER}__{tool}" for tool in TOOLS)
MATCHER = "^mcp__.+__(" + "|".join(TOOLS) + ")$"


class ResultError(ValueError):
    """The tool's result is not a shape this module knows; nothing is recorded."""


@dataclass(frozen=True)
class Grant:
    pattern: str  # as mcp_agent_mail stored it (`path_pattern`)
    exclusive: bool
    expires_at: float | None
    ttl: int | None  # used when `expires_at` is unknown
    reason: str
    mcp_id: int | None
    project_key: str | None


@dataclass(frozen=True)
class Release:
    patterns: tuple[str, ...] | None  # None and mcp_ids None: everything
    mcp_ids: tuple[int, ...] | None
    project_key: str | None


@dataclass(frozen=True)
class Renew:
    pattern: str
    expires_at: float
    project_key: str | None


Action = Grant | Release | Renew


def tool_of(tool: object) -> str | None:
    """An MCP tool's own name (under any server) when it is one of TOOLS, else None."""
    return tool if isinstance(tool, str) and tool in TOOLS else None


def tool_result(response: object) -> dict[str, Any]:
    """The tool's JSON object from `tool_response`: content blocks
    (`[{"type": "text", "text": "<json>"}]`), a structured object, or JSON text."""
    if isinstance(response, str):
        return _unwrap(_json_object(response))
    if isinstance(response, list):
        texts = [
            b["text"]
            for b in response
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        for text in texts:
            try:
                doc = json.loads(text)
            except ValueError:
                continue  # e.g. a human-readable line beside the JSON block
            if isinstance(doc, dict):
                return _unwrap(doc)
        first = texts[0][:120] if texts else ""
        raise ResultError(f"no JSON object in the tool's content blocks ({first!r})")
    if isinstance(response, dict):
        if response.get("isError") is True:
            raise ResultError(f"the tool reported an error: {str(response.get('content'))[:200]}")
        structured = response.get("structuredContent")
        if isinstance(structured, dict):
            return _unwrap(structured)
        if isinstance(response.get("content"), list):
            return tool_result(response["content"])
        return _unwrap(response)
    raise ResultError(f"tool_response is a {type(response).__name__}")


def _json_object(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except ValueError:
        raise ResultError(f"not JSON: {text[:120]!r}") from None
    if not isinstance(doc, dict):
        raise ResultError(f"a JSON {type(doc).__name__}, not an object")
    return doc


def _unwrap(doc: dict[str, Any]) -> dict[str, Any]:
    if set(doc) == {"result"} and isinstance(doc["result"], dict):
        doc = doc["result"]  # FastMCP's wrapping of a structured result
    if doc.get("format") == "toon":
        raise ResultError("TOON output (format=toon) cannot be read; use format=json")
    if doc.get("format") == "json" and isinstance(doc.get("data"), dict):
        doc = doc["data"]
    error = doc.get("error")
    if isinstance(error, dict):
        raise ResultError(f"mcp_agent_mail error {error.get('type')}: {error.get('message')}")
    return doc


def actions_from_post_tool_use(
    tool_name: object, raw_args: object, response: object
) -> list[Action]:
    """What a call of one of TOOLS (its own name, its arguments and result, as the
    client's `ToolUse.mcp` has them) changed (pure). Raises ResultError when the
    result is unreadable; [] for any other tool."""
    tool = tool_of(tool_name)
    if tool is None:
        return []
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    result = tool_result(response)
    key = _text(args.get("human_key" if tool == START_SESSION else "project_key"))
    if tool == RELEASE:
        if "released" not in result:
            raise ResultError("release result without 'released'")
        return [Release(_strings(args.get("paths")), _ints(args.get("file_reservation_ids")), key)]
    if tool == RENEW:
        return _renewals(result, key)
    if tool == START_SESSION:
        section = result.get("file_reservations")
        if section is None:
            return []
        defaults = {
            "exclusive": True,
            "reason": args.get("file_reservation_reason", "macro-session"),
            "ttl_seconds": args.get("file_reservation_ttl_seconds"),
        }
        return _grants(section, defaults, key, drop_fresh=False)
    if tool == CYCLE:
        released = result.get("released")
        fresh_released = args.get("auto_release") is True and isinstance(released, dict)
        return _grants(result.get("file_reservations"), args, key, drop_fresh=fresh_released)
    return _grants(result, args, key, drop_fresh=False)


def _grants(
    section: object, defaults: dict[str, Any], key: str | None, *, drop_fresh: bool
) -> list[Action]:
    if not isinstance(section, dict) or not isinstance(section.get("granted"), list):
        raise ResultError("no 'granted' list in the result")
    ttl = defaults.get("ttl_seconds", 3600)
    out: list[Action] = []
    for entry in section["granted"]:
        if not isinstance(entry, dict) or not _text(entry.get("path_pattern")):
            raise ResultError(f"a granted entry without path_pattern: {str(entry)[:120]}")
        if drop_fresh and entry.get("reused") is not True:
            continue  # granted and released again within the same call
        exclusive = entry.get("exclusive", defaults.get("exclusive", True))
        reason = entry.get("reason")
        out.append(
            Grant(
                pattern=entry["path_pattern"],
                exclusive=exclusive is not False,
                expires_at=_timestamp(entry.get("expires_ts")),
                ttl=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else 3600,
                reason=reason if isinstance(reason, str) else str(defaults.get("reason") or ""),
                mcp_id=_int(entry.get("id")),
                project_key=key,
            )
        )
    return out


def _renewals(result: dict[str, Any], key: str | None) -> list[Action]:
    items = result.get("file_reservations")
    if not isinstance(items, list):
        raise ResultError("renew result without a 'file_reservations' list")
    out: list[Action] = []
    for item in items:
        when = _timestamp(item.get("new_expires_ts")) if isinstance(item, dict) else None
        if when is None or not _text(item.get("path_pattern")):
            raise ResultError(f"a renewed entry lacks path_pattern or new_expires_ts: {item!r:.99}")
        out.append(Renew(item["path_pattern"], when, key))
    return out


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value: object) -> tuple[str, ...] | None:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else None


def _ints(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if _int(v) is not None)


def _timestamp(value: object) -> float | None:
    """An ISO-8601 time (naive = UTC, as mcp_agent_mail stores them) → epoch seconds."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
