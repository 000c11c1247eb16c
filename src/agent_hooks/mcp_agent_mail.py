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

Invariants:

* Only what mcp_agent_mail granted is recorded, and only as this agent's (the
  session's AGENT_NAME, not mcp_agent_mail's agent name), with `source`
  `mcp-agent-mail` and `keep` (they end when mcp_agent_mail's TTL does, or on release,
  not with the Claude session). A release through mcp_agent_mail releases only
  reservations it recorded, never ones made with `agent-hooks reserve`.
* When agent-hooks refuses a grant (another agent holds a conflicting reservation)
  the model is told: mcp_agent_mail said "granted", and the truth is otherwise.
* A result that is not one of the shapes above records nothing and is logged.
* mcp_agent_mail's reservation ids are remembered per project and agent in
  `mcp-agent-mail.json` beside the project's reservation index, so a release by id
  can be mirrored.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agent_hooks import identity, pattern, pattern_text, reservation, reservation_store, storage
from agent_hooks import reservation_index as index

if TYPE_CHECKING:
    from agent_hooks.hook_runtime import HookContext

SOURCE = "mcp-agent-mail"
DEFAULT_SERVER = "mcp-agent-mail"
RESERVE = "file_reservation_paths"
RELEASE = "release_file_reservations"
RENEW = "renew_file_reservations"
START_SESSION = "macro_start_session"
CYCLE = "macro_file_reservation_cycle"
TOOLS = (RESERVE, RELEASE, RENEW, START_SESSION, CYCLE)
MCP_TOOLS = frozenset(f"mcp__{DEFAULT_SERVER}__{tool}" for tool in TOOLS)
MATCHER = "^mcp__.+__(" + "|".join(TOOLS) + ")$"
IDS_FILE = "mcp-agent-mail.json"


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


def tool_of(tool_name: object) -> str | None:
    """`mcp__<any server>__<tool>` → `<tool>` when it is one of TOOLS."""
    if not isinstance(tool_name, str) or not tool_name.startswith("mcp__"):
        return None
    server, _, tool = tool_name[5:].rpartition("__")
    return tool if server and tool in TOOLS else None


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


def actions_from_post_tool_use(payload: dict[str, Any]) -> list[Action]:
    """What a PostToolUse payload of one of TOOLS changed (pure). Raises
    ResultError when the result is unreadable; [] for any other tool."""
    tool = tool_of(payload.get("tool_name"))
    if tool is None:
        return []
    raw_args = payload.get("tool_input")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    result = tool_result(payload.get("tool_response"))
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


# --- applying actions to the store ---------------------------------------------------


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _key_dir(key: str | None) -> str | None:
    if key is None or not key.startswith("/"):
        return None  # a project name such as "Backend": patterns are relative to ours
    real = os.path.realpath(key)
    return real if os.path.isdir(real) else None


def _roots(project: str, key_dir: str | None) -> list[str]:
    """Where patterns of mcp_agent_mail's project `key_dir` may be recorded, in order."""
    if key_dir is None or _within(key_dir, project):
        return [project]
    other = identity.git_top_level(key_dir) or key_dir
    return [project, other] if _within(project, key_dir) else [other]


def _normalize(raw: str, project: str, key: str | None) -> tuple[str, str]:
    """(project root, normalized pattern) for a pattern as mcp_agent_mail stored it.
    An absolute pattern is taken as a path; failing that, as mcp_agent_mail reads
    it (leading `/` stripped, relative to its project)."""
    key_dir = _key_dir(key)
    error: pattern.PatternError | None = None
    texts = [raw, raw.strip().lstrip("/")] if raw.strip().startswith("/") else [raw]
    for text in texts:
        for root in _roots(project, key_dir):
            try:
                if text.startswith("/") or key_dir is None:
                    return root, pattern_text.normalize(text, root)
                if _within(key_dir, root):
                    return root, pattern_text.normalize(text, root, key_dir)
                return root, pattern_text.normalize(key_dir.rstrip("/") + "/" + text, root)
            except pattern.PatternError as exc:
                error = error or exc
    raise error or pattern.PatternError(f"{raw!r} cannot be placed")


def apply(
    ctx: HookContext, agent_name: str | None, project: str, actions: list[Action]
) -> str | None:
    """Record `actions` for `agent_name`; return what the model must be told (or None)."""
    notes: list[str] = []
    done: list[str] = []
    for action in actions:
        try:
            if isinstance(action, Grant):
                _grant(ctx, agent_name, project, action, notes, done)
            elif isinstance(action, Release):
                _release(ctx, agent_name, project, action, done)
            else:
                _renew(ctx, agent_name, project, action, done)
        except reservation.ReservationError as exc:
            ctx.log(f"mcp_agent_mail: {exc}")
            if isinstance(action, Grant):
                notes.append(
                    f"{action.pattern} was not recorded ({exc}); your edits there are not "
                    "protected: reserve it with `agent-hooks reserve`"
                )
    if done:
        ctx.log("mcp_agent_mail: " + "; ".join(done))
    if not notes:
        return None
    return "agent-hooks (mcp_agent_mail reservations): " + "\n".join(notes)


def _grant(
    ctx: HookContext,
    agent: str | None,
    project: str,
    grant: Grant,
    notes: list[str],
    done: list[str],
) -> None:
    try:
        root, norm = _normalize(grant.pattern, project, grant.project_key)
    except pattern.PatternError as exc:
        ctx.log(f"mcp_agent_mail: granted pattern {grant.pattern!r} skipped: {exc}")
        notes.append(
            f"{grant.pattern} (granted by mcp_agent_mail) is not enforced by agent-hooks: {exc}"
        )
        return
    ttl = grant.ttl or reservation.DEFAULT_TTL
    if grant.expires_at is not None:
        ttl = math.ceil(grant.expires_at - ctx.now)
        if ttl <= 0:
            done.append(f"{norm} already expired")
            return
    outcome = reservation_store.reserve(
        ctx.state_dir,
        root,
        agent,
        [(norm, pattern.compile(norm))],
        reason=grant.reason,
        ttl=min(ttl, reservation.MAX_TTL),
        shared=not grant.exclusive,
        keep=True,
        now=ctx.now,
        conversation_id=ctx.environ.get("CLAUDE_CODE_SESSION_ID"),
        source=SOURCE,
    )
    if outcome.conflicts:
        holders = "; ".join(reservation.describe(held, ctx.now) for _, held in outcome.conflicts)
        ctx.log(f"mcp_agent_mail granted {grant.pattern!r} but agent-hooks refused it: {holders}")
        notes.append(
            f"mcp_agent_mail granted you {grant.pattern}, but agent-hooks did NOT record it: "
            f"{holders}. mcp_agent_mail's grants are advisory; agent-hooks enforces its own, so "
            "your edits there will be denied while that reservation lasts. Release it in "
            "mcp_agent_mail (release_file_reservations) and work on something else, or "
            "coordinate with the holder (`agent-hooks reservations`)."
        )
        return
    done.append(f"granted {norm}" + ("" if root == project else f" in {root}"))
    if grant.mcp_id is not None:
        _remember(ctx, root, agent, {grant.mcp_id: norm})


def _release(
    ctx: HookContext, agent: str | None, project: str, release: Release, done: list[str]
) -> None:
    for root in _roots(project, _key_dir(release.project_key)):
        held, _ = reservation_store.live(ctx.state_dir, root, ctx.now)
        mine = [r for r in held if r.get("agent") == agent and r.get("source") == SOURCE]
        if release.patterns is not None:
            named = set()
            for raw in release.patterns:
                try:
                    where, norm = _normalize(raw, project, release.project_key)
                except pattern.PatternError as exc:
                    ctx.log(f"mcp_agent_mail: released pattern {raw!r} ignored: {exc}")
                    continue
                if where == root:
                    named.add(norm)
            mine = [r for r in mine if r["pattern"] in named]
        if release.mcp_ids is not None:
            by_id = set(_recall(ctx.state_dir, root, agent, release.mcp_ids))
            mine = [r for r in mine if r["pattern"] in by_id]
        if mine:
            outcome = reservation_store.release(
                ctx.state_dir, root, agent, ids=[r["id"] for r in mine], now=ctx.now
            )
            done.append("released " + ", ".join(r["pattern"] for r in outcome.changed))


def _renew(
    ctx: HookContext, agent: str | None, project: str, renew: Renew, done: list[str]
) -> None:
    try:
        root, norm = _normalize(renew.pattern, project, renew.project_key)
    except pattern.PatternError as exc:
        ctx.log(f"mcp_agent_mail: renewed pattern {renew.pattern!r} ignored: {exc}")
        return
    ttl = math.ceil(renew.expires_at - ctx.now)
    if ttl > 0:
        outcome = reservation_store.renew(
            ctx.state_dir,
            root,
            agent,
            patterns=[norm],
            ttl=min(ttl, reservation.MAX_TTL),
            now=ctx.now,
        )
        if outcome.changed:
            done.append(f"renewed {norm}")


def _ids_path(state_dir: str, root: str) -> str:
    return os.path.join(index.index_dir(state_dir, root), IDS_FILE)


def _remember(ctx: HookContext, root: str, agent: str | None, ids: dict[int, str]) -> None:
    """Note mcp_agent_mail's ids of the agent's patterns; forget patterns no longer held."""
    held, _ = reservation_store.live(ctx.state_dir, root, ctx.now)
    live = {(r.get("agent") or "", r["pattern"]) for r in held if r.get("source") == SOURCE}

    def mutate(loaded: storage.Loaded) -> dict[str, Any]:
        found = (loaded.doc or {}).get("agents")
        agents: dict[str, Any] = found if isinstance(found, dict) else {}
        mine = agents.get(agent or "")
        agents[agent or ""] = {
            **(mine if isinstance(mine, dict) else {}),
            **{str(k): v for k, v in ids.items()},
        }
        kept: dict[str, Any] = {}
        for name, table in agents.items():
            if isinstance(table, dict):
                live_ids = {k: v for k, v in table.items() if (name, v) in live}
                if live_ids:
                    kept[name] = live_ids
        return {"schema": 1, "agents": kept}

    storage.ensure_dir(index.index_dir(ctx.state_dir, root))
    storage.locked_update(_ids_path(ctx.state_dir, root), mutate, now=ctx.now)


def _recall(state_dir: str, root: str, agent: str | None, ids: tuple[int, ...]) -> list[str]:
    doc = storage.load_json_object(_ids_path(state_dir, root)).doc or {}
    agents = doc.get("agents")
    table = agents.get(agent or "") if isinstance(agents, dict) else None
    if not isinstance(table, dict):
        return []
    return [table[str(i)] for i in ids if isinstance(table.get(str(i)), str)]


def handle(ctx: HookContext) -> str | None:
    """PostToolUse for an `mcp__…` tool: record what mcp_agent_mail did; fail open.
    Returns the text for `additionalContext`, or None."""
    tool = ctx.payload.get("tool_name")
    if tool_of(tool) is None:
        return None
    try:
        actions = actions_from_post_tool_use(ctx.payload)
    except ResultError as exc:
        ctx.log(f"{tool}: {exc}; nothing recorded")
        return None
    if not actions:
        return None
    project = ctx.project_root()
    if project is None:
        ctx.log(f"{tool}: no project (no CLAUDE_PROJECT_DIR, no git top level); nothing recorded")
        return None
    try:
        agent = ctx.agent.name
    except identity.IdentityError as exc:
        ctx.log(f"{tool}: {exc}; nothing recorded")
        return None
    return apply(ctx, agent, project, actions)
