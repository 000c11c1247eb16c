"""Fuzzed hook payloads through the real entry script (issue 11).

Each example builds a world (a HOME, a git project, a directory outside it), maybe
gives another agent a reservation of `held/**` and a lease on `leased.txt` (with a
live, dead or `--keep` holder), then runs one to four hooks with payloads the
client sends, mutated (payload_strategies), in environments that vary AGENT_NAME,
CLAUDE_PID, CLAUDE_PROJECT_DIR and the switches. After every run:

* the protocol: exit 0, nothing on stderr, stdout empty or one JSON object the
  client accepts (`fuzz_world.check_protocol`);
* no file written but in HOME and the project's ledger; agent-hooks' files 0600,
  its directories 0700; no hook crashed (the log names no unexpected exception);
* PreToolUse of an edit is denied exactly when the oracle says: the target,
  resolved as `os.path.realpath` resolves it, is agent-hooks' own file, or lies
  under `held/` while another owner's reservation counts, or is a file on which a
  lease of a writer that blocks this one counts (ADR-0014's table) — or strict mode
  is on. A Bash command is denied only for such a reason;
* every state and ledger document a hook wrote is a JSON object.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzz_world as fw
import payload_strategies as ps
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

PROTECTED_TEXT = "only through the `agent-hooks` command"
STRICT_TEXT = "strict"
HELD_ID = "r-held0001"


@functools.cache
def dead_holder() -> dict[str, Any]:
    pid, start = fw.reaped_child()
    return {"pid": pid, "start": start, "host": fw.HOST}


def live_holder() -> dict[str, Any]:
    return {"pid": os.getpid(), "start": fw.proc_start(os.getpid()), "host": fw.HOST}


@dataclass
class Setup:
    held: str  # none | cli (no holder) | live | dead | kept (dead, but --keep)
    leased: str  # none | live | dead | expired
    my_state: Any
    strict_doc: Any

    def apply(self, world: fw.World, now: float) -> None:
        if self.held != "none":
            holder = {"cli": None, "live": live_holder(), "dead": dead_holder()}.get(
                self.held, dead_holder()
            )
            entry = {
                "id": HELD_ID,
                "agent": fw.OTHER,
                "project_root": str(world.project),
                "pattern": "held/**",
                "mode": "exclusive",
                "reason": "farmhand-7",
                "created_at": int(now),
                "expires_at": int(now) + 3600,
                "keep": self.held == "kept",
                "holder": holder,
                "source": "cli",
            }
            doc = {"schema": 2, "project_root": str(world.project), "reservations": [entry]}
            if self.strict_doc is not None:
                doc["strict"] = self.strict_doc
            fw.write_json(world.ledger / "reservations.json", doc)
        if self.leased != "none":
            holder = dead_holder() if self.leased == "dead" else live_holder()
            expires = int(now) + (-60 if self.leased == "expired" else 600)
            lease = {
                "writer": fw.OTHER,
                "agent": fw.OTHER,
                "conversation": fw.OTHER_SESSION,
                "agent_id": None,
                "agent_type": None,
                **holder,
                "worktree": str(world.project),
                "branch": "main",
                "claimed": int(now),
                "written": int(now),
                "expires": expires,
                "tool_use_id": None,
                "source": "edit",
            }
            fw.write_json(
                world.ledger / "leases" / "leased.txt", {"path": "leased.txt", "leases": [lease]}
            )
            card = {"writer": fw.OTHER, "agent": fw.OTHER, **holder, "since": int(now)}
            fw.write_json(world.ledger / "writers" / fw.OTHER, card)
        if self.my_state is not None:
            fw.write_json(world.state_dir / f"state-{fw.ME}.json", self.my_state)


setups = st.builds(
    Setup,
    held=st.sampled_from(["none", "none", "cli", "live", "dead", "kept"]),
    leased=st.sampled_from(["none", "none", "live", "dead", "expired"]),
    my_state=st.none()
    | st.fixed_dictionaries(
        {"files_modified": st.lists(ps.paths() | ps.junk, max_size=3)},
        optional={k: ps.junk for k in ("waiting", "alerts", "reservations", "conversation_id")},
    )
    | ps.junk,
    strict_doc=st.sampled_from([None, None, "yes", 1, "true", [True]]),
)


def agent_name(env: dict[str, str | bytes]) -> str | None:
    raw = env.get("AGENT_NAME")
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    return raw or None


def me_key(env: dict[str, str | bytes], payload: dict[str, Any]) -> str:
    """The writer a hook event comes from (ADR-0014): the agent (or `~<conversation>`),
    `#<agent_id>` inside a subagent; a bad AGENT_NAME holds nothing (`~\\x00`)."""
    name = agent_name(env)
    if name is not None and not fw.valid_agent_name(name):
        return "~\x00"
    session = env.get("CLAUDE_CODE_SESSION_ID")
    conversation = fw.safe_id(payload.get("session_id")) or fw.safe_id(
        os.fsdecode(session) if isinstance(session, bytes) else session
    )
    owner = name if name is not None else "~" + (conversation or "")
    agent_id = fw.safe_id(payload.get("agent_id"))
    return owner + (f"#{agent_id}" if agent_id else "")


def state_dir_of(world: fw.World, env: dict[str, str | bytes]) -> str:
    configured = env.get("CLAUDE_CONFIG_DIR", "")
    configured = os.fsdecode(configured) if isinstance(configured, bytes) else configured
    if configured:
        if configured == "~" or configured.startswith("~/"):
            configured = str(world.home) + configured[1:]
        return os.path.normpath(configured)
    return str(world.state_dir)


def classify(world: fw.World, env: dict[str, str | bytes], resolved: str) -> str:
    """What a resolved edit target is to the hooks (README, ADR-0015)."""
    state_dir = state_dir_of(world, env)
    if fw.within(resolved, os.path.join(state_dir, "agent-hooks")):
        return "protected"
    if os.path.dirname(resolved) == state_dir:
        base = os.path.basename(resolved).split(".corrupt-")[0].removesuffix(".lock")
        if base == "agent-state.json" or base.startswith("agent-hooks.log"):
            return "protected"
        if base.startswith("state-") and base.endswith(".json"):
            name = base[len("state-") : -len(".json")]
            return "protected" if name and fw.valid_agent_name(name) else "free"
    if fw.within(resolved, str(world.ledger)):
        return "protected"
    return "free"


def lease_minutes(env: dict[str, str | bytes]) -> int:
    raw = env.get("AGENT_HOOKS_LEASE_MINUTES", "")
    raw = os.fsdecode(raw) if isinstance(raw, bytes) else raw
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 5 else 10


def held_blocks(world: fw.World, rel: str, owner: str, now: float) -> bool:
    """Does the setup's `held/**` reservation, if still in the ledger, block `owner`?"""
    try:
        doc = world.ledger_doc()
    except ValueError:
        return False
    entries = doc.get("reservations") if isinstance(doc, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if not (isinstance(entry, dict) and entry.get("id") == HELD_ID):
            continue
        if entry["agent"] == owner or entry["expires_at"] <= now:
            return False
        if not fw.glob_matches(entry["pattern"], rel):
            return False
        holder = entry.get("holder")
        return holder is None or entry.get("keep") is True or fw.alive(holder) is not False
    return False


def check_decision(
    world: fw.World,
    ran_event: str,
    data: bytes,
    env: dict[str, str | bytes],
    out: dict[str, Any] | None,
    now: float,
) -> None:
    decision = fw.decision_of(out)
    event(f"{ran_event}: {decision}")
    if ran_event != "PreToolUse":
        return
    try:
        payload = fw.parse_strict(data)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        assert out is None, out
        return
    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool_input, dict) or tool not in [*ps.EDIT_TOOLS, "Bash"]:
        assert out is None, out  # reads and other tools are never blocked
        return
    enforce_off = env.get("AGENT_HOOKS_ENFORCE") == "off"
    strict = env.get("AGENT_HOOKS_STRICT") == "1"
    reason = fw.reason_of(out)
    if decision == "deny":
        assert not enforce_off, reason
    me = me_key(env, payload)
    owner = fw.key_parts(me)[0]
    minutes = lease_minutes(env)
    if tool == "Bash":
        if decision == "deny":  # which writes the parser sees is shell_gate's business
            someone = any(
                fw.lease_blocks(lease.get("writer"), me)
                and fw.lease_counts(lease, now)
                and lease.get("worktree") == fw.MAIN_WORKTREE
                for _, lease in fw.all_leases(world.ledger)
            )
            held = any(held_blocks(world, rel, owner, now) for rel in ("held/file.txt", "held/x"))
            assert PROTECTED_TEXT in reason or strict or someone or held, reason
        return
    target = tool_input.get(ps.EDIT_TOOLS[tool])
    if not (isinstance(target, str) and target and "\x00" not in target):
        assert decision != "deny", reason
        return
    resolved = fw.resolve_target(target, payload, env)
    category = classify(world, env, resolved)
    must = category == "protected"
    project = str(world.project)
    rel = resolved[len(project) + 1 :] if resolved.startswith(project + "/") else None
    if rel is not None and category == "free":
        leased = minutes > 0 and any(
            fw.lease_blocks(lease.get("writer"), me)
            and fw.lease_counts(lease, now)
            and lease.get("worktree") == fw.MAIN_WORKTREE
            for lease in fw.leases_on(world.ledger, rel)
        )
        must = leased or held_blocks(world, rel, owner, now)
    event(f"edit target: {category}, must deny: {must}")
    if enforce_off:
        return
    if must:
        assert decision == "deny", (category, resolved, me, out)
    elif decision == "deny":
        assert strict and STRICT_TEXT in reason, (category, resolved, me, reason)


CWDS = {"project": "", "src": "src", "outside": "../outside"}


def run_all(base: Path, setup: Setup, runs: list[ps.HookRun]) -> None:
    with fw.World(base) as world:
        now = time.time()
        setup.apply(world, now)
        for run in runs:
            data = ps.encode(world, run.payload, run.encoding)
            env = world.env(run.agent, run.env)
            cwd = (world.project / CWDS[run.cwd]).resolve()
            before = fw.snapshot(world.root)
            ran = world.run(run.event, data, env, cwd)
            out = fw.check_all(world, ran, before)
            check_decision(world, run.event, data, env, out, time.time())


@fw.fuzz_settings()
@given(setup=setups, runs=st.lists(ps.hook_runs(), min_size=1, max_size=4))
def test_fuzzed_payloads_never_break_the_protocol_or_deny_without_a_holder(
    tmp_path_factory: pytest.TempPathFactory, setup: Setup, runs: list[ps.HookRun]
) -> None:
    run_all(tmp_path_factory.getbasetemp(), setup, runs)


@fw.fuzz_settings()
@given(
    setup=setups,
    runs=st.lists(ps.hook_runs(events=["PreToolUse", "PostToolUse"]), min_size=1, max_size=4),
)
def test_fuzzed_tool_calls_never_break_the_protocol_or_deny_without_a_holder(
    tmp_path_factory: pytest.TempPathFactory, setup: Setup, runs: list[ps.HookRun]
) -> None:
    """The hot events, where decisions are made, get most of the examples."""
    run_all(tmp_path_factory.getbasetemp(), setup, runs)
