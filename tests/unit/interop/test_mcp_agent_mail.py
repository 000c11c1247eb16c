"""agent_hooks.interop.mcp_agent_mail(_store): PostToolUse payloads of mcp_agent_mail's tools become
actions, and the actions change the real reservation store (a private state dir).

Results are built in the shapes of mcp_agent_mail's src/mcp_agent_mail/app.py
(file_reservation_paths, release_file_reservations, renew_file_reservations,
macro_start_session, macro_file_reservation_cycle); the payload envelope is the
captured PostToolUse fixture with the tool fields replaced.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import claude_code
from agent_hooks.hooks.hook_runtime import HookContext
from agent_hooks.interop import mcp_agent_mail, mcp_agent_mail_hook
from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookRunner, load_payload

NOW = 1_800_000_000.0
SERVER = "mcp__mcp-agent-mail__"


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def blocks(doc: dict[str, Any]) -> list[dict[str, str]]:
    return [{"type": "text", "text": json.dumps(doc)}]


def granted(
    path: str,
    *,
    rid: int = 101,
    exclusive: bool = True,
    ttl: int = 3600,
    reason: str = "farmhand-42",
    reused: bool = False,
) -> dict[str, Any]:
    return {
        "id": rid,
        "execution_id": None,
        "ancestor_execution_ids": [],
        "origin": "auto",
        "legacy_unscoped": True,
        "orphaned": False,
        "path_pattern": path,
        "exclusive": exclusive,
        "reason": reason,
        "expires_ts": iso(NOW + ttl),
        "reused": reused,
    }


def reserve_result(*entries: dict[str, Any], conflicts: list[Any] | None = None) -> dict[str, Any]:
    return {
        "granted": list(entries),
        "conflicts": conflicts or [],
        "warnings": ["enforcement_off_for_code_paths: ..."],
    }


def payload(
    tool: str, tool_input: dict[str, Any], response: Any, server: str = SERVER
) -> dict[str, Any]:
    return {
        "hook_event_name": "PostToolUse",
        "tool_name": server + tool,
        "tool_input": tool_input,
        "tool_response": response,
    }


def actions_of(data: dict[str, Any]) -> list[Any]:
    """What a PostToolUse of an MCP tool changed, the call read by the Claude Code client
    (`ToolUse.mcp`: the server's own tool name, its arguments and result)."""
    use = claude_code.tool_use("PostToolUse", data)
    assert use is not None and use.mcp is not None, data
    return mcp_agent_mail.actions_from_post_tool_use(
        use.mcp["tool"], use.mcp["args"], use.mcp["result"]
    )


class World:
    """A project, a HOME, and HookContexts for agents working in them."""

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = str(project)
        self.state_dir = str(home / ".claude")

    def ctx(self, data: dict[str, Any], agent: str = "alice", now: float = NOW) -> HookContext:
        full = load_payload("PostToolUse_Write", self.project, str(self.home))
        full["session_id"] = "sess-1"  # the conversation, as in CLAUDE_CODE_SESSION_ID below
        full.update(data)
        environ = {
            "HOME": str(self.home),
            "AGENT_NAME": agent,
            "CLAUDE_PROJECT_DIR": self.project,
            "CLAUDE_CODE_SESSION_ID": "sess-1",
        }
        return HookContext(claude_code, "PostToolUse", full, environ, now)

    def run(self, data: dict[str, Any], agent: str = "alice", now: float = NOW) -> str | None:
        ctx = self.ctx(data, agent, now)
        use = ctx.tool_use()
        if use is None or use.mcp is None:
            return None
        return mcp_agent_mail_hook.handle(ctx, use.mcp)

    def held(self, root: str | None = None, now: float = NOW) -> list[dict[str, Any]]:
        return reservation_store.live(Repo(root or self.project, self.state_dir), now)[0]

    def log(self) -> str:
        path = Path(self.state_dir) / "agent-hooks.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def world(home: Path, project: Path) -> World:
    return World(home, project)


def reserve_cli(world: World, agent: str, *patterns: str, root: str | None = None) -> None:
    outcome = reservation_store.reserve(
        Repo(root or world.project, world.state_dir),
        Writer(agent, None),
        [(p, pattern.compile(p)) for p in patterns],
        NOW,
        reason="cli",
        ttl=3600,
        shared=False,
        keep=False,
    )
    assert not outcome.conflicts


# --- names and matcher -----------------------------------------------------------------


def test_tool_names_under_any_server_name() -> None:
    """Claude Code names an MCP tool `mcp__<server>__<tool>` (its client module reads the
    name); the interop knows the tools by their own names, under any server."""
    assert f"{SERVER}file_reservation_paths" in mcp_agent_mail.MCP_TOOLS
    assert claude_code.mcp_tool(f"{SERVER}release_file_reservations") == (
        SERVER[len("mcp__") : -2],
        "release_file_reservations",
    )
    assert claude_code.mcp_tool("mcp__agentmail__macro_start_session") == (
        "agentmail",
        "macro_start_session",
    )
    assert claude_code.mcp_tool("mcp__plugin_am_mcp-agent-mail__renew_file_reservations") == (
        "plugin_am_mcp-agent-mail",
        "renew_file_reservations",
    )
    for name in ("Write", "mcp__file_reservation_paths", "mcp____x", None, 3):
        assert claude_code.mcp_tool(name) is None
    assert mcp_agent_mail.tool_of("release_file_reservations") == "release_file_reservations"
    for other in ("fetch_inbox", "file_reservation_paths_v2", f"{SERVER}file_reservation_paths",
                  None, 3):  # fmt: skip
        assert mcp_agent_mail.tool_of(other) is None


def test_matcher_is_a_regex_by_the_protocols_rule_and_selects_exactly_these_tools() -> None:
    # PROTOCOL.md: only letters/digits/_/-/|/spaces/commas = exact names; else a regex
    assert re.fullmatch(r"[A-Za-z0-9_\-| ,]*", mcp_agent_mail.MATCHER) is None
    for name in [
        *mcp_agent_mail.MCP_TOOLS,
        "mcp__am__file_reservation_paths",
        "mcp__plugin_x_y__macro_file_reservation_cycle",
    ]:
        assert re.search(mcp_agent_mail.MATCHER, name), name
    for name in (
        "Write",
        "Bash",
        "mcp__am__fetch_inbox",
        "mcp__am__file_reservation_paths_v2",
        "xmcp__am__release_file_reservations",
    ):
        assert not re.search(mcp_agent_mail.MATCHER, name), name


# --- reading results -------------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        blocks({"released": 2}),
        [{"type": "text", "text": "Released 2 file_reservations"}, *blocks({"released": 2})],
        {
            "content": blocks({"released": 2}),
            "structuredContent": {"released": 2},
            "isError": False,
        },
        {"content": blocks({"released": 2})},
        {"released": 2},
        {"result": {"released": 2}},
        {"format": "json", "data": {"released": 2}},
        json.dumps({"released": 2}),
    ],
)
def test_result_shapes_that_are_read(response: Any) -> None:
    assert mcp_agent_mail.tool_result(response) == {"released": 2}


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ({"format": "toon", "data": "granted[1]:...", "meta": {}}, "TOON"),
        ({"error": {"type": "NOT_FOUND", "message": "Project 'x' not found."}}, "NOT_FOUND"),
        ({"content": [{"type": "text", "text": "boom"}], "isError": True}, "reported an error"),
        ([{"type": "text", "text": "Released reservations for BlueOcean"}], "no JSON object"),
        ([{"type": "image", "data": "..."}], "no JSON object"),
        ("[1, 2]", "not an object"),
        (42, "int"),
        (None, "NoneType"),
    ],
)
def test_unreadable_results_raise(response: Any, why: str) -> None:
    with pytest.raises(mcp_agent_mail.ResultError, match=why):
        mcp_agent_mail.tool_result(response)


# --- actions ---------------------------------------------------------------------------


def test_only_granted_entries_become_grants() -> None:
    conflicts = [
        {"path": "src/b.py", "holders": [{"agent": "GreenCastle", "path_pattern": "src/**"}]}
    ]
    result = reserve_result(
        granted("src/a.py", rid=7), granted("docs/*", rid=8, exclusive=False), conflicts=conflicts
    )
    args = {
        "project_key": "/x/proj",
        "agent_name": "BlueLake",
        "paths": ["src/a.py", "docs/*", "src/b.py"],
    }
    actions = actions_of(payload("file_reservation_paths", args, blocks(result)))
    assert actions == [
        mcp_agent_mail.Grant("src/a.py", True, NOW + 3600, 3600, "farmhand-42", 7, "/x/proj"),
        mcp_agent_mail.Grant("docs/*", False, NOW + 3600, 3600, "farmhand-42", 8, "/x/proj"),
    ]


def test_release_renew_and_macro_actions() -> None:
    rel = actions_of(
        payload(
            "release_file_reservations",
            {"project_key": "/p", "agent_name": "A", "paths": ["src/a.py"]},
            blocks({"released": 1, "released_at": iso(NOW)}),
        )
    )
    assert rel == [mcp_agent_mail.Release(("src/a.py",), None, "/p")]
    by_id = actions_of(
        payload(
            "release_file_reservations",
            {"project_key": "/p", "file_reservation_ids": [3, 4]},
            {"released": 2},
        )
    )
    assert by_id == [mcp_agent_mail.Release(None, (3, 4), "/p")]
    assert actions_of(payload("release_file_reservations", {"project_key": "/p"}, {"released": 0}))[
        0
    ] == mcp_agent_mail.Release(None, None, "/p")

    renewed = actions_of(
        payload(
            "renew_file_reservations",
            {"project_key": "/p", "extend_seconds": 600},
            {
                "renewed": 1,
                "file_reservations": [
                    {
                        "id": 3,
                        "path_pattern": "src/**",
                        "old_expires_ts": iso(NOW),
                        "new_expires_ts": iso(NOW + 600),
                    }
                ],
            },
        )
    )
    assert renewed == [mcp_agent_mail.Renew("src/**", NOW + 600, "/p")]

    session = {
        "project": {},
        "agent": {},
        "execution": {},
        "inbox": [],
        "file_reservations": reserve_result(granted("src/**", reason="macro-session")),
    }
    started = actions_of(
        payload(
            "macro_start_session",
            {"human_key": "/p", "file_reservation_paths": ["src/**"]},
            session,
        )
    )
    assert [(a.pattern, a.project_key, a.reason) for a in started] == [
        ("src/**", "/p", "macro-session")
    ]
    session["file_reservations"] = {"granted": [], "conflicts": []}
    assert actions_of(payload("macro_start_session", {}, session)) == []


def test_cycle_with_auto_release_keeps_only_reused_grants() -> None:
    section = reserve_result(granted("a.py", rid=1, reused=True), granted("b.py", rid=2))
    released = {"file_reservations": section, "released": {"released": 1, "released_at": iso(NOW)}}
    args = {"project_key": "/p", "paths": ["a.py", "b.py"], "auto_release": True}
    actions = actions_of(payload("macro_file_reservation_cycle", args, released))
    assert [a.pattern for a in actions] == ["a.py"]
    kept = {"file_reservations": section, "released": None}
    args["auto_release"] = False
    assert len(actions_of(payload("macro_file_reservation_cycle", args, kept))) == 2


def test_malformed_results_and_other_tools() -> None:
    with pytest.raises(mcp_agent_mail.ResultError, match="path_pattern"):
        actions_of(payload("file_reservation_paths", {}, {"granted": [{"id": 1}]}))
    with pytest.raises(mcp_agent_mail.ResultError, match="granted"):
        actions_of(payload("file_reservation_paths", {}, {"conflicts": []}))
    with pytest.raises(mcp_agent_mail.ResultError, match="released"):
        actions_of(payload("release_file_reservations", {}, {"ok": True}))
    assert actions_of(payload("fetch_inbox", {}, "not json at all")) == []


# --- applying to the store -------------------------------------------------------------


def test_grant_is_recorded_as_the_agents_and_enforced(world: World, run_hook: HookRunner) -> None:
    result = reserve_result(granted("./src//api/*.py", ttl=1800))
    data = payload(
        "file_reservation_paths",
        {"project_key": world.project, "paths": ["./src//api/*.py"]},
        blocks(result),
    )
    assert world.run(data) is None
    [res] = world.held()
    assert (res["agent"], res["pattern"], res["mode"], res["source"]) == (
        "alice",
        "src/api/*.py",
        "exclusive",
        "mcp-agent-mail",
    )
    assert res["expires_at"] == int(NOW) + 1800 and res["keep"] is True
    assert res["reason"] == "farmhand-42" and res["conversation_id"] == "sess-1"
    assert "granted src/api/*.py" in world.log()

    target = os.path.join(world.project, "src", "api", "x.py")
    bob = run_hook(
        "PreToolUse",
        run_hook.payload("PreToolUse_Write", tool_input={"file_path": target, "content": "x"}),
        agent="bob",
        env={"AGENT_NAME": "bob"},
    )
    assert bob.out is not None and bob.out["hookSpecificOutput"]["permissionDecision"] == "deny"
    alice = run_hook(
        "PreToolUse",
        run_hook.payload("PreToolUse_Write", tool_input={"file_path": target, "content": "x"}),
        agent="alice",
        env={"AGENT_NAME": "alice"},
    )
    assert alice.out is None


def test_shared_and_absolute_patterns(world: World) -> None:
    absolute = os.path.join(world.project, "lib", "core.py")
    result = reserve_result(granted(absolute, rid=1), granted("docs/**", rid=2, exclusive=False))
    world.run(payload("file_reservation_paths", {"project_key": world.project}, result))
    assert sorted((r["pattern"], r["mode"]) for r in world.held()) == [
        ("docs/**", "shared"),
        ("lib/core.py", "exclusive"),
    ]


def test_leading_slash_outside_the_project_is_read_as_mcp_agent_mail_reads_it(world: World) -> None:
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("/src/**")),
        )
    )
    assert [r["pattern"] for r in world.held()] == ["src/**"]


def test_unusable_pattern_is_skipped_logged_and_told(world: World) -> None:
    result = reserve_result(granted("../elsewhere/**", rid=1), granted("src/ok.py", rid=2))
    note = world.run(payload("file_reservation_paths", {"project_key": world.project}, result))
    assert [r["pattern"] for r in world.held()] == ["src/ok.py"]
    assert (
        note is not None and "../elsewhere/** (granted by mcp_agent_mail) is not enforced" in note
    )
    assert "'../elsewhere/**' skipped" in world.log()


def test_grant_refused_by_agent_hooks_tells_the_truth(world: World) -> None:
    reserve_cli(world, "bob", "src/**")
    result = reserve_result(granted("src/api/*.py", rid=1), granted("docs/a.md", rid=2))
    note = world.run(payload("file_reservation_paths", {"project_key": world.project}, result))
    assert note is not None
    assert "mcp_agent_mail granted you src/api/*.py, but agent-hooks did NOT record it" in note
    assert 'agent "bob" holds src/** (exclusive, reason: cli' in note
    assert "release_file_reservations" in note
    mine = [r["pattern"] for r in world.held() if r["agent"] == "alice"]
    assert mine == ["docs/a.md"]  # the other grant is still recorded
    assert "agent-hooks refused it" in world.log()


def test_expired_grant_is_not_recorded(world: World) -> None:
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("a.py", ttl=3600)),
        ),
        now=NOW + 4000,
    )
    assert world.held(now=NOW + 4000) == []


def test_release_by_pattern_leaves_cli_reservations_alone(world: World) -> None:
    reserve_cli(world, "alice", "tests/**")
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("src/a.py", rid=1), granted("src/b.py", rid=2)),
        )
    )
    world.run(
        payload(
            "release_file_reservations",
            {"project_key": world.project, "paths": ["./src/a.py"]},
            blocks({"released": 1}),
        )
    )
    assert sorted(r["pattern"] for r in world.held()) == ["src/b.py", "tests/**"]
    world.run(payload("release_file_reservations", {"project_key": world.project}, {"released": 1}))
    assert [r["pattern"] for r in world.held()] == ["tests/**"]


def test_release_by_mcp_ids(world: World) -> None:
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("a.py", rid=11), granted("b.py", rid=12)),
        )
    )
    world.run(
        payload(
            "release_file_reservations",
            {"project_key": world.project, "file_reservation_ids": [12, 99]},
            {"released": 1},
        )
    )
    assert [r["pattern"] for r in world.held()] == ["a.py"]


def test_release_of_another_agents_reservation_is_impossible(world: World) -> None:
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("a.py")),
        ),
        agent="bob",
    )
    world.run(payload("release_file_reservations", {"project_key": world.project}, {"released": 0}))
    assert [(r["agent"], r["pattern"]) for r in world.held()] == [("bob", "a.py")]


def test_renew_extends_only_live_reservations(world: World) -> None:
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": world.project},
            reserve_result(granted("a.py", ttl=600)),
        )
    )
    renewal = {
        "renewed": 2,
        "file_reservations": [
            {
                "id": 1,
                "path_pattern": "a.py",
                "old_expires_ts": iso(NOW + 600),
                "new_expires_ts": iso(NOW + 7200),
            },
            {
                "id": 2,
                "path_pattern": "never-recorded.py",
                "old_expires_ts": iso(NOW),
                "new_expires_ts": iso(NOW + 7200),
            },
        ],
    }
    world.run(payload("renew_file_reservations", {"project_key": world.project}, renewal))
    assert [(r["pattern"], r["expires_at"]) for r in world.held()] == [("a.py", int(NOW) + 7200)]


def test_macro_start_session_reserves(world: World) -> None:
    session = {
        "project": {"human_key": world.project},
        "agent": {"name": "BlueLake"},
        "execution": {},
        "inbox": [],
        "file_reservations": reserve_result(granted("src/**", reason="macro-session")),
    }
    world.run(
        payload(
            "macro_start_session",
            {
                "human_key": world.project,
                "program": "claude-code",
                "model": "opus",
                "agent_name": "BlueLake",
                "file_reservation_paths": ["src/**"],
            },
            blocks(session),
        )
    )
    assert [(r["agent"], r["pattern"], r["reason"]) for r in world.held()] == [
        ("alice", "src/**", "macro-session")
    ]


def test_project_key_in_a_subdirectory_and_in_another_repository(
    world: World, tmp_path: Path
) -> None:
    sub = Path(world.project) / "services" / "api"
    sub.mkdir(parents=True)
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": str(sub)},
            reserve_result(granted("handlers/*.py")),
        )
    )
    assert [r["pattern"] for r in world.held()] == ["services/api/handlers/*.py"]

    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    other_root = os.path.realpath(other)
    world.run(
        payload(
            "file_reservation_paths",
            {"project_key": other_root},
            reserve_result(granted("lib/**", rid=5)),
        )
    )
    assert [r["pattern"] for r in world.held(other_root)] == ["lib/**"]
    assert [r["pattern"] for r in world.held()] == ["services/api/handlers/*.py"]


def test_unreadable_results_record_nothing_and_log(world: World) -> None:
    toon = {"format": "toon", "data": "granted[1]{id,path_pattern}:\n  1,src/a.py", "meta": {}}
    assert (
        world.run(payload("file_reservation_paths", {"project_key": world.project}, toon)) is None
    )
    assert world.held() == []
    assert "TOON output" in world.log() and "nothing recorded" in world.log()


def test_bad_agent_name_fails_open(world: World) -> None:
    data = payload(
        "file_reservation_paths", {"project_key": world.project}, reserve_result(granted("a.py"))
    )
    assert world.run(data, agent="../evil") is None
    assert world.held() == []
    assert "nothing recorded" in world.log()
