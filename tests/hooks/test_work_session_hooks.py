"""Tests for agent_hooks.work_sessions.work_session_events.

The functions are run the way the hooks run them: in a `python -IS` process, through
`hook_runtime.run`, with a captured payload on stdin and HOME in a temp dir. (The adapters in
hooks/*.py call these functions once the lead wires them in; a small driver stands in for the
adapter here.) A few checks run in-process where they count system calls or imports.
"""

from __future__ import annotations

import calendar
import json
import posix
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.agents import trail
from agent_hooks.clients import claude_code
from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import work_session, work_session_events, work_session_store

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
FIXTURES = ROOT / "tests" / "fixtures"
PAYLOADS = FIXTURES / "payloads"
TRANSCRIPTS = FIXTURES / "transcripts"
SUB_ID = "a6a499d345698d83d"
NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))

DRIVER = """
import json
import sys
sys.path.insert(0, sys.argv[1])
from agent_hooks.agents import trail
from agent_hooks.clients import claude_code
from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import work_session_events

event = sys.argv[2]


class Driver:  # a client that prints what the handler returned, as JSON
    NAME = "claude"
    CONTEXT_LIMIT = 1 << 30
    TRANSCRIPTS = True
    holder_pid = staticmethod(claude_code.holder_pid)
    hook_event = staticmethod(claude_code.hook_event)
    tool_use = staticmethod(claude_code.tool_use)
    PROJECT_VARIABLES = claude_code.PROJECT_VARIABLES
    SESSION_VARIABLES = claude_code.SESSION_VARIABLES

    @staticmethod
    def render(event, answer):
        return json.loads(answer.context)


def found(ctx):
    use = ctx.tool_use()
    return trail.absolute(use.files if use else [], ctx.cwd)


def turn(ctx):
    return work_session_events.Turn(
        ctx.hook, ctx.tool_use(), ctx.agent.name, ctx.now, ctx.log, transcripts=ctx.client.TRANSCRIPTS
    )


def work(ctx):
    project = ctx.project_root()
    if event == "PostToolUse":
        said = work_session_events.post_tool_use(turn(ctx), ctx.environ, project, found(ctx))
        return None if said is None else {"model": said[0], "person": said[1]}
    if event == "SubagentStart":
        return work_session_events.subagent_start(turn(ctx), ctx.environ, project)
    if event == "SubagentStop":
        return work_session_events.subagent_stop(turn(ctx), ctx.environ, project)
    if event == "Stop":
        return work_session_events.stop(turn(ctx), ctx.environ, project)
    if event == "SessionStart":
        return {"lines": work_session_events.session_start_lines(project, ctx.now, ctx.environ)}
    if event == "Modules":  # which modules the no-session and active paths load
        before = set(sys.modules)
        work_session_events.post_tool_use(turn(ctx), ctx.environ, project, found(ctx))
        return {"loaded": sorted(set(sys.modules) - before)}


def handle(ctx):
    result = work(ctx)
    return None if result is None else hook_runtime.Answer(context=json.dumps(result))


sys.exit(hook_runtime.run(Driver, event, handle))
"""


class World:
    """A project, a HOME, a copy of the sample transcripts, and a way to run hooks."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "myproject"
        (self.project / "sub").mkdir(parents=True)
        self.home.mkdir()
        tdir = self.home / ".claude" / "projects" / "-p"
        (tdir / "subagents").mkdir(parents=True)
        self.transcript = tdir / "main.jsonl"
        shutil.copy(TRANSCRIPTS / "main-with-subagent.jsonl", self.transcript)
        for name in (f"agent-{SUB_ID}.jsonl", f"agent-{SUB_ID}.meta.json"):
            shutil.copy(TRANSCRIPTS / "subagents" / name, tdir / "subagents" / name)
        self.sub_transcript = tdir / "subagents" / f"agent-{SUB_ID}.jsonl"
        self.sessions = self.project / ".claude" / "sessions"
        self.env = {
            "HOME": str(self.home),
            "AGENT_NAME": "cc_1",
            "PATH": "/usr/bin:/bin",
            "CLAUDE_PROJECT_DIR": str(self.project),
        }

    def store(self) -> work_session_store.Store:
        return work_session_store.Store(str(self.sessions))

    def start(self, max_tokens: int = work_session.DEFAULT_MAX) -> dict:
        doc = work_session.new_document(
            "SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW, max_tokens
        )
        self.store().start(doc, NOW, close_active=False)
        return doc

    def doc(self) -> dict:
        return self.store().require_active().doc

    def payload(self, name: str, **changes: object) -> dict:
        raw = (
            (PAYLOADS / f"{name}.json")
            .read_text()
            .replace("/home/dev/myproject", str(self.project))
        )
        stdin = json.loads(raw)["stdin"]
        stdin["transcript_path"] = str(self.transcript)
        stdin.update(changes)
        return stdin

    def run(self, event: str, payload: dict) -> dict | None:
        proc = subprocess.run(
            [sys.executable, "-IS", "-c", DRIVER, str(SRC), event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        return json.loads(proc.stdout) if proc.stdout else None

    def log(self) -> str:
        path = self.home / ".claude" / "agent-hooks.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def assistant_line(context: int) -> str:
    """A real assistant entry from the sample whose context size is `context`
    (split over input, cache creation and cache read)."""
    for line in (TRANSCRIPTS / "main-with-subagent.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "assistant":
            entry["message"]["usage"].update(
                input_tokens=context // 3,
                cache_creation_input_tokens=context // 3,
                cache_read_input_tokens=context - 2 * (context // 3),
                output_tokens=42,
            )
            return json.dumps(entry) + "\n"
    raise AssertionError


# ---------------------------------------------------------------- no work session


def test_without_a_work_session_nothing_happens_and_nothing_is_written(world: World) -> None:
    assert world.run("PostToolUse", world.payload("PostToolUse_Write")) is None
    assert world.run("Stop", world.payload("Stop")) is None
    assert world.run("SubagentStop", world.payload("SubagentStop")) is None
    assert world.run("SessionStart", world.payload("SessionStart_startup")) == {"lines": []}
    assert not (world.project / ".claude").exists()
    assert world.log() == ""


def test_the_no_session_path_costs_one_stat_and_imports_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = world.payload("PostToolUse_Write")
    ctx = hook_runtime.HookContext(claude_code, "PostToolUse", payload, world.env, NOW)
    found = trail.absolute(claude_code.tool_use("PostToolUse", payload).files, payload.get("cwd"))
    turn = work_session_events.Turn(
        ctx.hook, ctx.tool_use(), "cc_1", NOW, ctx.log, transcripts=True
    )
    stats: list[object] = []
    real_stat = posix.stat

    def counting_stat(*args: object, **kwargs: object) -> object:
        stats.append(args[0])
        return real_stat(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(posix, "stat", counting_stat)
    before = set(sys.modules)
    assert work_session_events.post_tool_use(turn, world.env, str(world.project), found) is None
    assert stats == [f"{world.project}/.claude/sessions/active-session.json"]
    assert set(sys.modules) == before


def test_module_loads_under_dash_IS(world: World) -> None:
    """work_session_events itself brings in nothing but built-ins; the active path loads only
    agent_hooks modules and built-ins (no os, typing, re, json, datetime, click, orjson …)."""
    probe = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); import agent_hooks.hooks.hook_runtime; "
        "b = set(sys.modules); import agent_hooks.work_sessions.work_session_events; "
        "print(sorted(set(sys.modules) - b))"
    )
    out = subprocess.run(
        [sys.executable, "-IS", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env=world.env,
    ).stdout
    assert json.loads(out.replace("'", '"')) == [
        "agent_hooks.work_sessions",
        "agent_hooks.work_sessions.location",
        "agent_hooks.work_sessions.work_session_events",
    ]
    assert world.run("Modules", world.payload("PostToolUse_Write")) == {"loaded": []}
    world.start()
    loaded = world.run("Modules", world.payload("PostToolUse_Write"))
    assert loaded is not None
    hot_builtins = {"posix", "sys", "time", "marshal", "errno", "_signal", "_json", "__future__"}
    assert [
        m for m in loaded["loaded"] if m.split(".")[0] != "agent_hooks" and m not in hot_builtins
    ] == []
    assert "agent_hooks.work_sessions.work_session_store" in loaded["loaded"]


# ------------------------------------------------------------------ PostToolUse


def test_created_files_become_artifacts_and_tokens_come_from_the_transcript(world: World) -> None:
    world.start()
    assert world.run("PostToolUse", world.payload("PostToolUse_Write")) is None
    doc = world.doc()
    assert doc["artifacts"] == [
        {"path": "a.txt", "created": doc["artifacts"][0]["created"], "agent": "cc_1"}
    ]
    # sample main transcript: the last of its 7 main assistant entries has input 10 +
    # cache_creation 0 + cache_read 0 = 10, and none is larger: current 10, peak 10
    conv = doc["conversations"]["df60326c-8124-4026-a376-50ee7bfe6c4e"]
    assert (conv["current"], conv["peak"], conv["agent"]) == (10, 10, "cc_1")
    assert conv["offset"] == world.transcript.stat().st_size
    assert doc["tokens"] == {"max": 150000, "initial": 10, "current": 10, "peak": 10, "saved": 0}
    # an edit (not a creation), a read, and a second write of the same file add no artifact
    for name in ("PostToolUse_Edit", "PostToolUse_Read", "PostToolUse_Write"):
        world.run("PostToolUse", world.payload(name))
    assert [a["path"] for a in world.doc()["artifacts"]] == ["a.txt"]


def test_nothing_new_means_no_write(world: World) -> None:
    """Parallel tool calls of one turn see no new transcript bytes: the file is left alone."""
    world.start()
    path = world.sessions / "SES202611-ACME-AUDIT.json"
    world.run("PostToolUse", world.payload("PostToolUse_Read"))
    first = path.stat().st_ino  # every save replaces the file (a new inode)
    world.run("PostToolUse", world.payload("PostToolUse_Read"))
    world.run("Stop", world.payload("Stop", session_id="df60326c-8124-4026-a376-50ee7bfe6c4e"))
    assert path.stat().st_ino == first
    with world.transcript.open("a") as fh:
        fh.write(assistant_line(500))
    world.run("PostToolUse", world.payload("PostToolUse_Read"))
    assert path.stat().st_ino != first and world.doc()["tokens"]["current"] == 500


def test_files_outside_the_project_or_in_scratch_places_are_not_artifacts(world: World) -> None:
    world.start()
    for path in (
        "/tmp/elsewhere.txt",
        f"{world.project}/.tmp/sessions/x/notes.md",
        f"{world.sessions}/hand-made.json",
    ):
        payload = world.payload("PostToolUse_Write", tool_input={"file_path": path, "content": ""})
        world.run("PostToolUse", payload)
    payload = world.payload(
        "PostToolUse_Write", tool_input={"file_path": "docs/prd.md", "content": "x"}
    )  # relative to cwd
    world.run("PostToolUse", payload)
    assert [a["path"] for a in world.doc()["artifacts"]] == ["docs/prd.md"]


def test_warnings_at_exactly_80_and_95_percent_once_each(world: World) -> None:
    world.start(max_tokens=150000)  # 80 % = 120,000; 95 % = 142,500 (strictly above warns)
    world.transcript.write_text("")
    read = world.payload("PostToolUse_Read")
    told = []
    for context in (119999, 120000, 120001, 130000, 142500, 142501, 149000):
        with world.transcript.open("a") as fh:
            fh.write(assistant_line(context))
        told.append(world.run("PostToolUse", read))
    assert [t is not None for t in told] == [False, False, True, False, False, True, False]
    first, second = told[2], told[5]
    assert first is not None and second is not None
    assert "120,001 of the 150,000-token budget (80%)" in first["model"]
    assert (
        first["person"].startswith(work_session.YELLOW)
        and "SES202611-ACME-AUDIT" in first["person"]
    )
    assert "142,501 of the 150,000-token budget (95%)" in second["model"]
    assert second["person"].startswith(work_session.RED)
    conv = world.doc()["conversations"][read["session_id"]]
    assert (conv["current"], conv["peak"], conv["warned"]) == (149000, 149000, [80, 95])
    assert world.run("PostToolUse", read) is None  # still above both: told already


def test_a_crossing_seen_at_stop_is_told_at_the_next_tool_call(world: World) -> None:
    world.start(max_tokens=1000)
    world.transcript.write_text(assistant_line(900))  # 90 % of 1,000
    assert world.run("Stop", world.payload("Stop")) is None
    assert world.doc()["tokens"]["current"] == 900
    told = world.run("PostToolUse", world.payload("PostToolUse_Read"))
    assert told is not None and "(90%)" in told["model"]


def test_a_paused_work_session_records_nothing(world: World) -> None:
    world.start()
    world.store().update_active(lambda d: d.update(status="paused") is None, NOW)
    assert world.run("PostToolUse", world.payload("PostToolUse_Write")) is None
    world.run("Stop", world.payload("Stop"))
    doc = world.store().require_active().doc
    assert doc["artifacts"] == [] and doc["conversations"] == {} and doc["status"] == "paused"


def test_tool_calls_inside_a_subagent_record_artifacts_but_not_main_figures(world: World) -> None:
    world.start()
    payload = world.payload("PostToolUse_Write", agent_id=SUB_ID, agent_type="Explore")
    world.run("PostToolUse", payload)
    doc = world.doc()
    assert doc["artifacts"][0]["subagent"] == "Explore" and doc["conversations"] == {}


def test_the_agent_tool_records_the_output_file(world: World) -> None:
    world.start()
    world.run("PostToolUse", world.payload("PostToolUse_Agent"))
    record = world.doc()["agents_spawned"][0]
    assert (record["id"], record["output_file"]) == (SUB_ID, "/tmp/claude-1000/notes")


def test_a_broken_work_session_file_fails_open_and_is_logged(world: World) -> None:
    world.start()
    path = world.sessions / "SES202611-ACME-AUDIT.json"
    path.write_text("{not json")
    assert world.run("PostToolUse", world.payload("PostToolUse_Write")) is None
    assert path.read_text() == "{not json"
    assert "not updated" in world.log() and "is not valid JSON" in world.log()


# ------------------------------------------------------------------- subagents


def test_subagent_start_and_stop_record_the_agent_and_its_tokens(world: World) -> None:
    world.start()
    world.run("SubagentStart", world.payload("SubagentStart"))
    record = world.doc()["agents_spawned"][0]
    assert (record["id"], record["type"], record["completed"], record["agent"]) == (
        SUB_ID,
        "Explore",
        None,
        "cc_1",
    )
    stop = world.payload("SubagentStop", agent_transcript_path=str(world.sub_transcript))
    world.run("SubagentStop", stop)
    world.run("SubagentStop", stop)  # a repeated stop counts once
    doc = world.doc()
    record = doc["agents_spawned"][0]
    # the subagent's one assistant entry: context 10 + 0 + 0 plus output 10 = 20 tokens used
    assert record["tokens_used"] == 20 and record["completed"] is not None
    assert record["output_file"] == str(world.sub_transcript)
    assert doc["tokens"]["saved"] == 20 and len(doc["agents_spawned"]) == 1


def test_subagent_stop_finds_the_transcript_beside_the_main_one(world: World) -> None:
    world.start()
    stop = world.payload("SubagentStop", agent_type="")
    del stop["agent_transcript_path"]
    world.run("SubagentStop", stop)
    record = world.doc()["agents_spawned"][0]
    assert (record["tokens_used"], record["type"]) == (20, "Explore")  # type from .meta.json


def sub_lines() -> tuple[str, str, str]:
    """The sample subagent transcript cut in three: the lines before its one assistant entry,
    that entry (its final one: stop_reason end_turn, 10 + 0 + 0 context, 10 output), the rest."""
    lines = (TRANSCRIPTS / "subagents" / f"agent-{SUB_ID}.jsonl").read_text().splitlines(True)
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "assistant")
    return "".join(lines[:at]), lines[at], "".join(lines[at + 1 :])


def sub_turn(context: int, output: int, stop_reason: str = "tool_use") -> str:
    """A subagent assistant entry (from the sample) with its usage and stop reason replaced."""
    entry = json.loads(sub_lines()[1])
    entry["message"]["stop_reason"] = stop_reason
    entry["message"]["usage"].update(
        input_tokens=context, cache_creation_input_tokens=0, cache_read_input_tokens=0
    )
    entry["message"]["usage"]["output_tokens"] = output
    return json.dumps(entry) + "\n"


def pending(world: World) -> list[str]:
    return [item["id"] for item in world.doc()["pending_subagents"]]


def test_a_subagent_stop_without_any_transcript_is_logged(world: World) -> None:
    world.start()
    stop = world.payload("SubagentStop", agent_id="b0", transcript_path="relative.jsonl")
    del stop["agent_transcript_path"]
    world.run("SubagentStop", stop)
    assert world.doc()["agents_spawned"][0]["tokens_used"] == 0 and pending(world) == []
    assert "subagent b0: no transcript to read; tokens not counted" in world.log()


LATER_HOOKS = {
    "PostToolUse": lambda w: w.payload("PostToolUse_Read"),
    "PostToolUse in a subagent": lambda w: w.payload(
        "PostToolUse_Read", agent_id="other", agent_type="Explore"
    ),
    "Stop": lambda w: w.payload("Stop"),
    "SubagentStart": lambda w: w.payload("SubagentStart", agent_id="other"),
    "SubagentStop": lambda w: w.payload(
        "SubagentStop", agent_id="other", agent_transcript_path=str(w.sub_transcript)
    ),
}


@pytest.mark.parametrize("later", sorted(LATER_HOOKS))
def test_a_transcript_missing_at_subagent_stop_is_counted_at_the_next_hook(
    world: World, later: str
) -> None:
    """The client fires SubagentStop before it wrote the subagent's transcript: the subagent is
    pending (its id and transcript in the document), and the next hook that touches the work
    session counts it once the file is there."""
    world.start()
    late = world.sub_transcript.with_name("agent-late.jsonl")
    world.run("SubagentStop", world.payload("SubagentStop", agent_transcript_path=str(late)))
    doc = world.doc()
    (item,) = doc["pending_subagents"]
    assert (item["id"], item["transcript"]) == (SUB_ID, str(late)) and item["since"]
    record = doc["agents_spawned"][0]
    assert (record["tokens_used"], doc["tokens"]["saved"]) == (0, 0) and record["completed"]
    assert world.log() == ""  # routine, not a failure

    shutil.copy(world.sub_transcript, late)  # the client flushes its writes
    event = later.split()[0]
    world.run(event, LATER_HOOKS[later](world))
    doc = world.doc()
    assert doc["pending_subagents"] == []
    record = next(a for a in doc["agents_spawned"] if a["id"] == SUB_ID)
    # the sample's one assistant entry: context 10 + 0 + 0 plus output 10
    assert record["tokens_used"] == 20
    assert doc["tokens"]["saved"] == 20 + (20 if later == "SubagentStop" else 0)
    assert record["read"] == {
        "transcript": str(late),
        "device": late.stat().st_dev,
        "inode": late.stat().st_ino,
        "offset": late.stat().st_size,
    }
    assert world.log() == ""


def test_a_partial_transcript_counts_what_it_shows_until_its_final_entry(world: World) -> None:
    """What the client wrote by SubagentStop (a first turn) counts at once, and the subagent stays
    pending; its final entry, written later, replaces that figure (saved is not summed twice)."""
    world.start()
    head, _, tail = sub_lines()
    world.sub_transcript.write_text(head + sub_turn(300, 20))
    stop = world.payload("SubagentStop", agent_transcript_path=str(world.sub_transcript))
    world.run("SubagentStop", stop)
    assert world.doc()["agents_spawned"][0]["tokens_used"] == 320 and pending(world) == [SUB_ID]
    assert world.doc()["tokens"]["saved"] == 320
    # nothing new: nothing changes, nothing is written
    path = world.sessions / "SES202611-ACME-AUDIT.json"
    world.run("Stop", world.payload("Stop"))
    inode = path.stat().st_ino
    world.run("PostToolUse", world.payload("PostToolUse_Read"))
    assert path.stat().st_ino == inode and pending(world) == [SUB_ID]
    # the final entry arrives, with part of the next line still being written
    with world.sub_transcript.open("a") as fh:
        fh.write(sub_turn(4000, 50, "end_turn") + tail[:40])
    world.run("PostToolUse", world.payload("PostToolUse_Read"))
    doc = world.doc()
    assert (doc["agents_spawned"][0]["tokens_used"], doc["tokens"]["saved"]) == (4050, 4050)
    assert doc["pending_subagents"] == []
    assert doc["agents_spawned"][0]["read"]["offset"] < world.sub_transcript.stat().st_size


def test_a_transcript_that_never_appears_is_given_up_after_the_limit(world: World) -> None:
    world.start()
    missing = world.sub_transcript.with_name("agent-never.jsonl")
    world.run("SubagentStop", world.payload("SubagentStop", agent_transcript_path=str(missing)))
    world.run("Stop", world.payload("Stop"))
    assert pending(world) == [SUB_ID]  # retried, still missing: still pending

    def age(doc: dict) -> bool:
        doc["pending_subagents"][0]["since"] = "2020-01-01T00:00:00Z"
        return True

    world.store().update_active(age, NOW)
    world.run("Stop", world.payload("Stop"))
    doc = world.doc()
    assert doc["pending_subagents"] == [] and doc["agents_spawned"][0]["tokens_used"] == 0
    assert f"subagent {SUB_ID}: transcript {missing} still not complete 600 s after its stop" in (
        world.log()
    )
    shutil.copy(world.sub_transcript, missing)  # too late: no hook reads it any more
    world.run("Stop", world.payload("Stop"))
    assert world.doc()["agents_spawned"][0]["tokens_used"] == 0


def test_a_resumed_subagent_counts_its_new_turns_at_its_next_stop(world: World) -> None:
    """A subagent that goes on after its stop (a SubagentStop hook blocked it, a message resumed
    it): its next stop reads on from where the last one stopped, so the final entry of its first
    stop does not end the wait for the second."""
    world.start()
    stop = world.payload("SubagentStop", agent_transcript_path=str(world.sub_transcript))
    world.run("SubagentStop", stop)
    assert world.doc()["agents_spawned"][0]["tokens_used"] == 20 and pending(world) == []
    world.run("SubagentStop", stop)  # stopped again before its new turns were written
    assert pending(world) == [SUB_ID] and world.doc()["tokens"]["saved"] == 20
    with world.sub_transcript.open("a") as fh:
        fh.write(sub_turn(900, 10))  # not its final entry yet
    world.run("Stop", world.payload("Stop"))
    assert world.doc()["agents_spawned"][0]["tokens_used"] == 910 and pending(world) == [SUB_ID]
    with world.sub_transcript.open("a") as fh:
        fh.write(sub_turn(1500, 25, "end_turn"))
    world.run("Stop", world.payload("Stop"))
    doc = world.doc()
    assert (doc["agents_spawned"][0]["tokens_used"], doc["tokens"]["saved"]) == (1525, 1525)
    assert doc["pending_subagents"] == []


def test_an_empty_pending_list_costs_post_tool_use_no_import(world: World) -> None:
    world.start()
    loaded = world.run("Modules", world.payload("PostToolUse_Read"))
    assert loaded is not None and "agent_hooks.work_sessions.subagents" not in loaded["loaded"]
    late = world.sub_transcript.with_name("agent-late.jsonl")
    world.run("SubagentStop", world.payload("SubagentStop", agent_transcript_path=str(late)))
    loaded = world.run("Modules", world.payload("PostToolUse_Read"))
    assert loaded is not None and "agent_hooks.work_sessions.subagents" in loaded["loaded"]


# ------------------------------------------------------------ Stop, SessionStart


def test_stop_refreshes_incrementally(world: World) -> None:
    world.start()
    world.run("Stop", world.payload("Stop"))
    first = world.doc()["conversations"]["df60326c-8124-4026-a376-50ee7bfe6c4e"]
    with world.transcript.open("a") as fh:
        fh.write(assistant_line(3000))
    world.run("Stop", world.payload("Stop"))
    again = world.doc()["conversations"]["df60326c-8124-4026-a376-50ee7bfe6c4e"]
    assert again["offset"] > first["offset"] and (again["current"], again["peak"]) == (3000, 3000)


def test_several_agents_keep_their_own_figures(world: World) -> None:
    world.start()
    world.run("Stop", world.payload("Stop"))
    other = world.transcript.with_name("other.jsonl")
    other.write_text(assistant_line(5000))
    world.env["AGENT_NAME"] = "cc_2"
    world.run("Stop", world.payload("Stop", session_id="conv-2", transcript_path=str(other)))
    doc = world.doc()
    assert [(c["agent"], c["current"]) for c in work_session.agent_contexts(doc)] == [
        ("cc_1", 10),
        ("cc_2", 5000),
    ]
    assert (doc["tokens"]["current"], doc["tokens"]["peak"]) == (5000, 5000)


def test_session_start_lines(world: World) -> None:
    world.start()
    world.store().update_active(
        lambda d: work_session.set_summary(d, "Auditing auth.\nNext: login") is None, NOW
    )
    lines = world.run("SessionStart", world.payload("SessionStart_startup"))
    assert lines is not None
    first, second = lines["lines"]
    assert first.startswith(
        f"Work session SES202611-ACME-AUDIT {work_session.GREEN} (active): 0/0 milestones"
    )
    assert "0/150,000 tokens (0%)" in first and second == "Last context: Auditing auth."
    assert "0/0 milestones done, 0 artifacts," in first
    world.store().update_active(
        lambda d: d["artifacts"].append({"path": "a.md", "created": None, "agent": None}) is None,
        NOW,
    )
    one = world.run("SessionStart", world.payload("SessionStart_startup"))
    assert one is not None and ", 1 artifact," in one["lines"][0]
    world.store().update_active(lambda d: d.update(status="paused") is None, NOW)
    paused = world.run("SessionStart", world.payload("SessionStart_startup"))
    assert paused is not None and "is paused" in paused["lines"][0]


# ------------------------------------------- through the real entry script (once wired)


def wired(module: str, event: str) -> bool:
    """Whether hooks/<module>.py calls work_session_events and entry.py knows `event`."""
    path = SRC / "agent_hooks" / "hooks" / f"{module}.py"
    return (
        event in claude_code.EVENTS and path.exists() and "work_session_events" in path.read_text()
    )


def entry_world(run_hook: Any, tmp_path: Path, max_tokens: int = work_session.DEFAULT_MAX) -> Path:
    """An active work session in run_hook's project and a copy of the sample transcripts."""
    doc = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW, max_tokens)
    work_session_store.Store(str(run_hook.project / ".claude" / "sessions")).start(
        doc, NOW, close_active=False
    )
    main = tmp_path / "transcripts" / "main.jsonl"
    (main.parent / "subagents").mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "main-with-subagent.jsonl", main)
    for name in (f"agent-{SUB_ID}.jsonl", f"agent-{SUB_ID}.meta.json"):
        shutil.copy(TRANSCRIPTS / "subagents" / name, main.parent / "subagents" / name)
    return main


def active_doc(run_hook: Any) -> dict:
    return (
        work_session_store.Store(str(run_hook.project / ".claude" / "sessions"))
        .require_active()
        .doc
    )


@pytest.mark.skipif(
    not wired("post_tool_use", "PostToolUse"),
    reason="hooks/post_tool_use.py does not call work_session_events yet (lead)",
)
def test_entry_post_tool_use_records_and_warns(run_hook: Any, tmp_path: Path) -> None:
    main = entry_world(run_hook, tmp_path, max_tokens=1000)
    with main.open("a") as fh:
        fh.write(assistant_line(801))  # 80.1 % of 1,000
    result = run_hook(
        "PostToolUse", run_hook.payload("PostToolUse_Write", transcript_path=str(main))
    )
    assert result.code == 0 and isinstance(result.out, dict), result
    assert "801 of the 1,000-token budget" in result.out["hookSpecificOutput"]["additionalContext"]
    assert result.out["systemMessage"].startswith(work_session.YELLOW)
    doc = active_doc(run_hook)
    assert [a["path"] for a in doc["artifacts"]] == ["a.txt"] and doc["tokens"]["current"] == 801
    again = run_hook("PostToolUse", run_hook.payload("PostToolUse_Read", transcript_path=str(main)))
    assert again.code == 0 and again.out is None
    assert run_hook.log_lines() == [] or all("told the model" in ln for ln in run_hook.log_lines())


@pytest.mark.skipif(
    not (wired("subagent_start", "SubagentStart") and wired("subagent_stop", "SubagentStop")),
    reason="SubagentStart/SubagentStop adapters are not wired yet (lead)",
)
def test_entry_subagents(run_hook: Any, tmp_path: Path) -> None:
    main = entry_world(run_hook, tmp_path)
    for event in ("SubagentStart", "SubagentStop"):
        payload = run_hook.payload(event, transcript_path=str(main))
        payload.pop("agent_transcript_path", None)
        assert run_hook(event, payload).code == 0
    record = active_doc(run_hook)["agents_spawned"][0]
    assert (record["id"], record["type"], record["tokens_used"]) == (SUB_ID, "Explore", 20)
    assert active_doc(run_hook)["tokens"]["saved"] == 20


@pytest.mark.skipif(
    not wired("stop", "Stop"), reason="hooks/stop.py does not call work_session_events yet (lead)"
)
def test_entry_stop_refreshes_figures(run_hook: Any, tmp_path: Path) -> None:
    main = entry_world(run_hook, tmp_path)
    assert run_hook("Stop", run_hook.payload("Stop", transcript_path=str(main))).code == 0
    assert active_doc(run_hook)["tokens"]["current"] == 10


@pytest.mark.skipif(
    not wired("session_start", "SessionStart"),
    reason="hooks/session_start.py does not call work_session_events yet (lead)",
)
def test_entry_session_start_mentions_the_work_session(run_hook: Any, tmp_path: Path) -> None:
    entry_world(run_hook, tmp_path)
    result = run_hook("SessionStart", "SessionStart_startup")
    text = result.out["hookSpecificOutput"]["additionalContext"]
    assert f"Work session SES202611-ACME-AUDIT {work_session.GREEN} (active)" in text
