"""Recording mcp_agent_mail's reservation actions in agent-hooks' own store.

`handle` is PostToolUse for an MCP server's tool: it reads the call into actions
(`mcp_agent_mail.actions_from_post_tool_use`) and `apply` records them through
`reservation_store` (docs/adr/0011-git-guard-and-mcp-interop.md).

Invariants:

* Only what mcp_agent_mail granted is recorded, and only as this agent's (the
  session's AGENT_NAME, not mcp_agent_mail's agent name), with `source`
  `mcp-agent-mail` and `keep` (they end when mcp_agent_mail's TTL does, or on release,
  not with the Claude session). A release through mcp_agent_mail releases only
  reservations it recorded, never ones made with `agent-hooks reserve`.
* When agent-hooks refuses a grant (another agent holds a conflicting reservation)
  the model is told: mcp_agent_mail said "granted", and the truth is otherwise.
* A result that is not one of mcp_agent_mail's shapes records nothing and is logged;
  every failure is logged and fails open.
* Nothing here waits for the network: in a ledger shared with other machines a
  grant is recorded on this machine only (the model is told), and a release or
  renewal reaches the remote at the next sync (`offline`).
* mcp_agent_mail's reservation ids are remembered per project and agent in
  `mcp-agent-mail.json` beside the project's reservation index, so a release by id
  can be mirrored; ids of patterns no longer held are dropped whenever one is added.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from agent_hooks import identity, liveness, repository, storage, writers
from agent_hooks import posix_fs as fs
from agent_hooks.interop.mcp_agent_mail import (
    Action,
    Grant,
    Release,
    Renew,
    ResultError,
    actions_from_post_tool_use,
    tool_of,
)
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern, pattern_input, reservation

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agent_hooks.hooks.hook_runtime import HookContext

SOURCE = "mcp-agent-mail"
IDS_FILE = "mcp-agent-mail.json"


def _key_dir(key: str | None) -> str | None:
    if key is None or not key.startswith("/"):
        return None  # a project name such as "Backend": patterns are relative to ours
    real = os.path.realpath(key)
    return real if os.path.isdir(real) else None


def _roots(project: str, key_dir: str | None) -> list[str]:
    """Where patterns of mcp_agent_mail's project `key_dir` may be recorded, in order."""
    if key_dir is None or fs.is_within(key_dir, project):
        return [project]
    other = repository.git_top_level(key_dir) or key_dir
    return [project, other] if fs.is_within(project, key_dir) else [other]


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
                    return root, pattern_input.normalize(text, root)
                if fs.is_within(key_dir, root):
                    return root, pattern_input.normalize(text, root, key_dir)
                return root, pattern_input.normalize(key_dir.rstrip("/") + "/" + text, root)
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
        Repo(root, ctx.state_dir, ctx.environ),
        writers.Writer(agent, writers.safe_id(ctx.hook.session)),
        [(norm, pattern.compile(norm))],
        ctx.now,
        reason=grant.reason,
        ttl=min(ttl, reservation.MAX_TTL),
        shared=not grant.exclusive,
        keep=True,
        holder=liveness.process(ctx.client.holder_pid(ctx.environ)),
        source=SOURCE,
        offline=True,  # a hook: a shared ledger keeps it on this machine, never waits
    )
    notes += [note for note in outcome.notes if "recorded on this machine only" in note]
    if outcome.conflicts or outcome.leased:
        from agent_hooks.leases import lease_messages

        holders = "; ".join(
            [reservation.describe(held, ctx.now) for _, held in outcome.conflicts]
            + [
                f"{rel} is being changed by {lease_messages.holder_label(item)}"
                for _, rel, item in outcome.leased
            ]
        )
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
        held, _ = reservation_store.live(Repo(root, ctx.state_dir, ctx.environ), ctx.now)
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
                Repo(root, ctx.state_dir, ctx.environ),
                writers.Writer(agent, None),
                ctx.now,
                ids=[r["id"] for r in mine],
                offline=True,
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
            Repo(root, ctx.state_dir, ctx.environ),
            writers.Writer(agent, None),
            ctx.now,
            patterns=[norm],
            ttl=min(ttl, reservation.MAX_TTL),
            offline=True,
        )
        if outcome.changed:
            done.append(f"renewed {norm}")


def _ids_path(state_dir: str, root: str) -> str:
    return os.path.join(ledger_location.directory(state_dir, root), IDS_FILE)


def _remember(ctx: HookContext, root: str, agent: str | None, ids: dict[int, str]) -> None:
    """Note mcp_agent_mail's ids of the agent's patterns; forget patterns no longer held."""
    held, _ = reservation_store.live(Repo(root, ctx.state_dir, ctx.environ), ctx.now)
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

    ledger_location.ensure(ledger_location.directory(ctx.state_dir, root))
    storage.locked_update(_ids_path(ctx.state_dir, root), mutate, now=ctx.now)


def _recall(state_dir: str, root: str, agent: str | None, ids: tuple[int, ...]) -> list[str]:
    doc = storage.load_json_object(_ids_path(state_dir, root)).doc or {}
    agents = doc.get("agents")
    table = agents.get(agent or "") if isinstance(agents, dict) else None
    if not isinstance(table, dict):
        return []
    return [table[str(i)] for i in ids if isinstance(table.get(str(i)), str)]


def handle(ctx: HookContext, call: Mapping[str, Any]) -> str | None:
    """PostToolUse of an MCP server's tool (`call`: the `mcp` of its `ToolUse`: its
    own name, arguments and result): record what mcp_agent_mail did; fail open.
    Returns the text for `additionalContext`, or None."""
    tool = call.get("tool")
    if tool_of(tool) is None:
        return None
    try:
        actions = actions_from_post_tool_use(tool, call.get("args"), call.get("result"))
    except ResultError as exc:
        ctx.log(f"{tool}: {exc}; nothing recorded")
        return None
    if not actions:
        return None
    project = ctx.project_root()
    if project is None:
        ctx.log(f"{tool}: no project (none the client names, no git top level); nothing recorded")
        return None
    try:
        agent = ctx.agent.name
    except identity.IdentityError as exc:
        ctx.log(f"{tool}: {exc}; nothing recorded")
        return None
    return apply(ctx, agent, project, actions)
