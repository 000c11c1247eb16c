"""`agent-hooks session …` through click's CliRunner: every command, text and --json."""

from __future__ import annotations

import calendar
import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from agent_hooks.cli import session, statusline
from agent_hooks.cli._common import Env
from agent_hooks.clients import claude_code
from agent_hooks.hooks import hook_runtime
from agent_hooks.work_sessions import (
    work_session,
    work_session_events,
    work_session_store,
)

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))
HOUR = 3600.0
TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PAYLOADS = Path(__file__).resolve().parents[1] / "fixtures" / "payloads"
SUB_ID = "a6a499d345698d83d"


@click.group()
def cli() -> None:
    """The session and statusline commands as the CLI registers them."""


session.register(cli)
statusline.register(cli)


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.project = tmp / "proj"
        (self.project / ".git").mkdir(parents=True)
        self.home = tmp / "home"
        self.home.mkdir()
        self.sessions = self.project / ".claude" / "sessions"
        self.environ = {
            "HOME": str(self.home),
            "AGENT_NAME": "cc_1",
            "CLAUDE_PROJECT_DIR": str(self.project),
        }

    def __call__(
        self,
        *args: str,
        now: float = NOW,
        input: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> Result:
        env = Env(environ=environ or self.environ, now=now)
        return CliRunner().invoke(cli, ["session", *args], obj=env, input=input)

    def ok(self, *args: str, **kw: Any) -> str:
        result = self(*args, **kw)
        assert result.exit_code == 0, (result.output, result.stderr)
        return result.stdout

    def json(self, *args: str, **kw: Any) -> Any:
        return json.loads(self.ok(*args, "--json", **kw))

    def fails(self, *args: str, **kw: Any) -> str:
        result = self(*args, **kw)
        assert result.exit_code == 1, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) >= 1 and lines[-1].startswith("Error: "), result.stderr
        return lines[-1]

    def doc(self, session_id: str) -> dict:
        for path in (
            self.sessions / f"{session_id}.json",
            self.sessions / "archive" / f"{session_id}.json",
        ):
            if path.exists():
                return json.loads(path.read_text())
        raise AssertionError(f"{session_id} has no file")


@pytest.fixture
def run(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


COMMANDS = [
    ["start"],
    ["resume"],
    ["status"],
    ["close"],
    ["list"],
    ["tokens"],
    ["savings"],
    ["switch"],
    ["pause"],
    ["note"],
    ["summary"],
    ["milestone", "add"],
    ["milestone", "done"],
]


@pytest.mark.parametrize("path", COMMANDS)
def test_every_command_has_help_and_json(run: Cli, path: list[str]) -> None:
    text = run.ok(*path, "--help")
    assert "--json" in text and "--sessions-dir" in text and "--project-dir" in text


def test_group_help(run: Cli) -> None:
    text = run.ok("--help")
    for name in (
        "start",
        "resume",
        "status",
        "close",
        "list",
        "tokens",
        "savings",
        "switch",
        "milestone",
        "note",
        "summary",
        "pause",
    ):
        assert name in text


# ----------------------------------------------------------------------- start


def test_start_text_and_json(run: Cli) -> None:
    out = run.ok("start", "--client", "acme", "--code", "audit")
    assert out.splitlines()[0] == f"Started work session SES202611-ACME-AUDIT {work_session.GREEN}"
    assert run.doc("SES202611-ACME-AUDIT")["status"] == "active"
    data = run.json(
        "start",
        "--prefix",
        "eng",
        "--client",
        "tesla",
        "--code",
        "api",
        "--yes",
        "--max-tokens",
        "200000",
        now=NOW + 60,
    )
    assert data["session"]["session_id"] == "ENG202611-TESLA-API"
    assert data["session"]["tokens"]["max"] == 200000
    assert data["closed"]["session_id"] == "SES202611-ACME-AUDIT"
    assert data["path"] == f"{run.sessions}/ENG202611-TESLA-API.json"


def test_the_ids_code_is_code_and_project_is_a_deprecated_alias(run: Cli) -> None:
    """`--project` is a directory in every other command: the id's last part is --code;
    --project still starts the same session, with one line saying so, and is hidden."""
    old = run("start", "--client", "acme", "--project", "audit")
    assert old.exit_code == 0, old.output
    assert old.stderr == (
        "warning: `session start --project` is now --code (--project names a directory in "
        "every other command); --project still works for now\n"
    )
    assert run.doc("SES202611-ACME-AUDIT")["status"] == "active"
    new = run("start", "--client", "acme", "--code", "api", "--yes")
    assert new.exit_code == 0 and new.stderr == "", new.output
    both = run("start", "--client", "acme", "--code", "a", "--project", "b")
    assert both.exit_code == 2 and "--code a and --project b: give one" in both.stderr
    neither = run("start", "--client", "acme")
    assert neither.exit_code == 2 and "Missing option '--code'" in neither.stderr
    shown = run("start", "--help").stdout
    assert "--code CODE" in shown and "--project " not in shown


def test_start_refuses_ids_outside_the_rule(run: Cli) -> None:
    line = run.fails("start", "--client", "acme-corp", "--code", "audit")
    assert "client 'acme-corp' is not allowed" in line and "[A-Z0-9]+" in line
    assert not run.sessions.exists()


def test_start_while_active_asks_and_respects_the_answer(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    refused = run("start", "--client", "acme", "--code", "api", input="n\n")
    assert refused.exit_code == 1
    assert "Active session found: SES202611-ACME-AUDIT. Close it first?" in refused.stderr
    assert "not started: SES202611-ACME-AUDIT is still active" in refused.stderr
    assert not (run.sessions / "SES202611-ACME-API.json").exists()
    assert run("start", "--client", "acme", "--code", "api", input="").exit_code == 1
    accepted = run("start", "--client", "acme", "--code", "api", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "Closed SES202611-ACME-AUDIT" in accepted.stdout
    assert run.doc("SES202611-ACME-AUDIT")["status"] == "closed"
    assert (run.sessions / "archive" / "SES202611-ACME-AUDIT.json").exists()
    assert run.json("status")["session"]["session_id"] == "SES202611-ACME-API"


def test_start_with_yes_closes_without_asking(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    out = run.ok("start", "--client", "acme", "--code", "api", "--yes", input="")
    assert "Close it first?" not in out and "Closed SES202611-ACME-AUDIT" in out


def test_where_the_files_go(run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run.ok("start", "--client", "a", "--code", "b", "--sessions-dir", str(tmp_path / "given"))
    assert (tmp_path / "given" / "SES202611-A-B.json").exists()
    environ = {**run.environ, "AGENT_HOOKS_SESSIONS_DIR": "docs/sessions"}
    run.ok("start", "--client", "c", "--code", "d", environ=environ)
    assert (run.project / "docs" / "sessions" / "SES202611-C-D.json").exists()
    other = tmp_path / "other"
    other.mkdir()
    run.ok("start", "--client", "e", "--code", "f", "--project-dir", str(other))
    assert (other / ".claude" / "sessions" / "SES202611-E-F.json").exists()
    monkeypatch.chdir(other)  # not inside any git repository, no CLAUDE_PROJECT_DIR
    nowhere = {"HOME": str(run.home)}
    assert "no sessions directory" in run.fails("status", environ=nowhere)


# ------------------------------------------------------------------ the others


def seeded(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    run.ok("milestone", "add", "Requirements", "Complete")
    run.ok("milestone", "add", "Implementation Started")
    run.ok("milestone", "done", "Requirements Complete", now=NOW + 2 * HOUR)
    run.ok("note", "Client prefers OAuth2 over JWT")
    run.ok("summary", "Working on the ACME audit.\nNext: story 1-2-user-login")
    s = work_session_store.Store(str(run.sessions))
    s.update_active(
        lambda d: work_session.record_artifacts(d, ["docs/prd.md"], "cc_1", NOW + HOUR), NOW
    )
    s.update_active(lambda d: d["tokens"].update(current=45000, peak=52000) is None, NOW)


def test_resume_status_and_pause(run: Cli) -> None:
    seeded(run)
    now = NOW + 4 * HOUR + 15 * 60
    text = run.ok("status", now=now)
    assert text.splitlines()[:5] == [
        f"Session: SES202611-ACME-AUDIT {work_session.GREEN}",
        "Status: active",
        "Duration: 4h 15m",
        "Tokens: 45,000/150,000 (30%)",
        "Progress Bar: [███░░░░░░░] 30%",
    ]
    assert (
        "- [x] Requirements Complete" in text and "- docs/prd.md (created 3h ago by cc_1)" in text
    )
    data = run.json("status", now=now)
    assert (data["indicator"], data["percent"], data["milestones_done"]) == (
        work_session.GREEN,
        30.0,
        1,
    )
    assert data["duration_seconds"] == 4 * 3600 + 15 * 60

    paused = run.json("pause")
    assert paused["session"]["status"] == "paused" and paused["indicator"] == work_session.PAUSED
    assert "Paused SES202611-ACME-AUDIT" in run.ok("pause")
    assert run.json("status")["indicator"] == work_session.PAUSED

    text = run.ok("resume", now=now)
    assert text.splitlines()[0] == f"Resuming Session: SES202611-ACME-AUDIT {work_session.GREEN}"
    assert (
        "Last Context:\nWorking on the ACME audit." in text
        and "Token Usage: 45,000/150,000" in text
    )
    assert run.doc("SES202611-ACME-AUDIT")["status"] == "active"
    assert run.json("resume")["session"]["context_summary"].startswith("Working on")


def test_commands_without_an_active_session_fail_in_one_line(run: Cli) -> None:
    for args in (
        ["resume"],
        ["status"],
        ["close"],
        ["tokens"],
        ["savings"],
        ["pause"],
        ["note", "x"],
        ["summary", "x"],
        ["milestone", "add", "x"],
    ):
        assert "No active session" in run.fails(*args)


def test_milestones_notes_and_summary_json(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    assert run.json("milestone", "add", "Setup") == {
        "session_id": "SES202611-ACME-AUDIT",
        "milestone": {"name": "Setup", "completed": None},
    }
    assert run.json("milestone", "done", "Setup", now=NOW + 60)["milestone"] == {
        "name": "Setup",
        "completed": "2026-11-21T12:01:00Z",
    }
    assert "(1/1 done)" in run.ok("milestone", "done", "Setup")
    assert "no milestone named 'Missing'" in run.fails("milestone", "done", "Missing")
    assert "already has a milestone" in run.fails("milestone", "add", "Setup")
    assert run.json("note", "first")["notes"] == ["first"]
    assert run.json("note", "two", "words")["notes"] == ["first", "two words"]
    data = run.json("summary", "-", input="line one\nline two\n")
    assert data["context_summary"] == "line one\nline two"
    assert "Context summary of SES202611-ACME-AUDIT saved" in run.ok("summary", "short")


def test_close_writes_the_summary_and_archives(run: Cli) -> None:
    seeded(run)
    text = run.ok("close", now=NOW + 26 * HOUR)
    assert text.splitlines()[:2] == [
        f"Closed Session: SES202611-ACME-AUDIT {work_session.CLOSED}",
        "Duration: 1d 2h",
    ]
    assert "  - Client prefers OAuth2 over JWT" in text
    assert "  - Milestone reached: Requirements Complete (2026-11-21)" in text
    assert "  - Open milestone: Implementation Started" in text
    assert "  - Next: story 1-2-user-login" in text
    archived = run.sessions / "archive" / "SES202611-ACME-AUDIT.json"
    assert text.rstrip().endswith(f"Archived to: {archived}")
    assert archived.exists() and not (run.sessions / "SES202611-ACME-AUDIT.json").exists()
    assert not (run.sessions / "active-session.json").exists()
    run.ok("start", "--client", "acme", "--code", "api")
    data = run.json("close")
    assert data["archived_to"].endswith("archive/SES202611-ACME-API.json")
    assert data["session"]["closing_summary"]["decisions"] == []


def test_list_text_and_json(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    run.ok("close", now=NOW + HOUR)
    run.ok("start", "--client", "tesla", "--code", "api", now=NOW + HOUR)
    run.ok("start", "--client", "acme", "--code", "mvp", "--yes", now=NOW + 2 * HOUR)
    run.ok("switch", "SES202611-TESLA-API", now=NOW + 3 * HOUR)  # reopens it; MVP is paused
    (run.sessions / "notes.json").write_text("{}")  # not a work session: reported, not fatal
    # ages from `created`: TESLA-API NOW+1h -> 3 d 0.5 h; ACME-MVP NOW+2h -> 2 d 23.5 h
    text = run.ok("list", now=NOW + 3 * 86400 + 1.5 * HOUR)
    assert text.splitlines() == [
        "Active Sessions:",
        f"  SES202611-ACME-MVP {work_session.PAUSED} (2 days)",
        f"  SES202611-TESLA-API {work_session.GREEN} (3 days) ← current",
        "",
        "Archived Sessions:",
        f"  SES202611-ACME-AUDIT {work_session.CLOSED} (closed 2026-11-21)",
    ]
    result = run("list")
    assert "warning: not read:" in result.stderr and "notes.json" in result.stderr
    data = run.json("list")
    assert data["active_session"] == "SES202611-TESLA-API"
    assert [e["session_id"] for e in data["live"]] == ["SES202611-ACME-MVP", "SES202611-TESLA-API"]
    assert [e["status"] for e in data["archived"]] == ["closed"]


def test_switch_keeps_both_files_intact(run: Cli) -> None:
    seeded(run)
    audit_before = run.doc("SES202611-ACME-AUDIT")
    run.ok("start", "--client", "tesla", "--code", "api", "--yes")
    run.ok("switch", "SES202611-ACME-AUDIT")  # reopen the closed one
    run.ok("note", "audit again")
    text = run.ok("switch", "ses202611-tesla-api")
    assert text.startswith(
        f"SES202611-ACME-AUDIT is paused {work_session.PAUSED}; switched to SES202611-TESLA-API."
    )
    assert "Resuming Session: SES202611-TESLA-API" in text
    audit, api = run.doc("SES202611-ACME-AUDIT"), run.doc("SES202611-TESLA-API")
    assert audit["status"] == "paused" and api["status"] == "active"
    assert audit["milestones"] == audit_before["milestones"]
    assert audit["notes"] == ["Client prefers OAuth2 over JWT", "audit again"]
    assert audit["artifacts"] == audit_before["artifacts"]
    data = run.json("switch", "SES202611-ACME-AUDIT")
    assert data["previous"] == "SES202611-TESLA-API" and data["session"]["status"] == "active"
    assert "no work session SES202611-NOPE-X" in run.fails("switch", "SES202611-NOPE-X")
    assert "PREFIXYYYYMM-CLIENT-PROJECT" in run.fails("switch", "../../etc/passwd")


def test_tokens_and_savings_reports(run: Cli) -> None:
    seeded(run)
    s = work_session_store.Store(str(run.sessions))

    def agents(doc: dict) -> bool:
        for agent_id, kind, used in (
            ("a1", "analyst", 32000),
            ("a2", "architect", 28000),
            ("a3", "dev", 85000),
        ):
            work_session.spawned_agent(doc, agent_id)["type"] = kind
            work_session.finish_agent(doc, agent_id, used, NOW)
        return True

    s.update_active(agents, NOW)
    text = run.ok("tokens")
    for line in (
        "Token Usage Report: SES202611-ACME-AUDIT",
        "  Used: 45,000 / 150,000 (30%)",
        "  Remaining: 105,000",
        "  analyst a1: 32,000 tokens (isolated)",
        "Total Consumed (if no isolation): 190,000",
        "Tokens Saved: 145,000 (76.3% savings)",
    ):
        assert line in text.splitlines()
    data = run.json("tokens")
    # 32,000 + 28,000 + 85,000 = 145,000 saved; 45,000 + 145,000 = 190,000 without isolation
    assert (data["saved"], data["total_without_isolation"], data["savings_percent"]) == (
        145000,
        190000,
        76.3,
    )
    text = run.ok("savings")
    assert "  Would exceed limit by: 40,000 tokens" in text
    assert text.rstrip().endswith(f"Status: {work_session.GREEN} Within budget")
    assert run.json("savings")["exceeds_without_isolation_by"] == 40000


def test_token_figures_from_the_sample_transcripts(run: Cli, tmp_path: Path) -> None:
    """The hooks' figures for the captured 'extras' run, as `session tokens` reports them."""
    run.ok("start", "--client", "acme", "--code", "audit")
    main = tmp_path / "t" / "main.jsonl"
    (main.parent / "subagents").mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "main-with-subagent.jsonl", main)
    for name in (f"agent-{SUB_ID}.jsonl", f"agent-{SUB_ID}.meta.json"):
        shutil.copy(TRANSCRIPTS / "subagents" / name, main.parent / "subagents" / name)
    environ = {**run.environ, "CLAUDE_PROJECT_DIR": str(run.project)}
    for event in ("SubagentStart", "SubagentStop", "Stop"):
        payload = json.loads((PAYLOADS / f"{event}.json").read_text())["stdin"]
        payload["transcript_path"] = str(main)
        payload.pop("agent_transcript_path", None)  # found beside the main transcript
        ctx = hook_runtime.HookContext(claude_code, event, payload, environ, NOW)
        turn = work_session_events.Turn(ctx.hook, None, None, NOW, ctx.log, transcripts=True)
        getattr(
            work_session_events,
            {"SubagentStart": "subagent_start", "SubagentStop": "subagent_stop", "Stop": "stop"}[
                event
            ],
        )(turn, environ, str(run.project))
    data = run.json("tokens")
    # main: last (and largest) main assistant entry: input 10 + cache 0 + cache 0 = 10
    # subagent Explore: its one entry's context 10 + output 10 = 20 tokens used = saved
    # without isolation: 10 + 20 = 30; savings 20 / 30 = 66.7 %
    assert (data["current"], data["peak"], data["saved"]) == (10, 10, 20)
    assert data["subagents"] == [
        {
            "id": SUB_ID,
            "type": "Explore",
            "tokens_used": 20,
            "completed": "2026-11-21T12:00:00Z",
            "pending": False,
        }
    ]
    assert data["pending"] == 0
    assert (data["total_without_isolation"], data["savings_percent"]) == (30, 66.7)
    assert "  Explore a6a499d3: 20 tokens (isolated)" in run.ok("tokens").splitlines()


def _stop_before_the_transcript_is_written(run: Cli, tmp_path: Path) -> Path:
    """SubagentStop of the sample subagent while its transcript does not exist yet (the client
    writes it late); returns where it will be."""
    late = tmp_path / "t" / "main" / "subagents" / f"agent-{SUB_ID}.jsonl"
    late.parent.mkdir(parents=True)
    payload = json.loads((PAYLOADS / "SubagentStop.json").read_text())["stdin"]
    payload.update(
        transcript_path=str(tmp_path / "t" / "main.jsonl"), agent_transcript_path=str(late)
    )
    environ = {**run.environ, "CLAUDE_PROJECT_DIR": str(run.project)}
    ctx = hook_runtime.HookContext(claude_code, "SubagentStop", payload, environ, NOW)
    turn = work_session_events.Turn(ctx.hook, None, None, NOW, ctx.log, transcripts=True)
    work_session_events.subagent_stop(turn, environ, str(run.project))
    return late


def test_reports_read_pending_subagents_on_before_they_report(run: Cli, tmp_path: Path) -> None:
    session_id = run.json("start", "--client", "acme", "--code", "audit")["session"]["session_id"]
    late = _stop_before_the_transcript_is_written(run, tmp_path)
    assert [p["id"] for p in run.doc(session_id)["pending_subagents"]] == [SUB_ID]
    # still missing: shown as being counted, and nothing is written
    path = run.sessions / f"{session_id}.json"
    before = path.stat().st_ino
    status = run.ok("status", now=NOW + 5).splitlines()
    assert status[-1] == "Token Savings from Isolation: 0 (1 subagent still being counted)"
    assert (
        "  Explore a6a499d3: 0 tokens (isolated, still being counted)"
        in run.ok("tokens", now=NOW + 5).splitlines()
    )
    assert path.stat().st_ino == before
    # written now: the next report reads it, stores the figures and shows them
    shutil.copy(TRANSCRIPTS / "subagents" / f"agent-{SUB_ID}.jsonl", late)
    data = run.json("tokens", now=NOW + 10)
    assert (data["saved"], data["pending"], data["subagents"][0]["tokens_used"]) == (20, 0, 20)
    doc = run.doc(session_id)
    assert doc["pending_subagents"] == [] and doc["tokens"]["saved"] == 20
    assert run.ok("status", now=NOW + 11).splitlines()[-1] == "Token Savings from Isolation: 20"


def test_close_counts_pending_subagents_in_the_closing_summary(run: Cli, tmp_path: Path) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    late = _stop_before_the_transcript_is_written(run, tmp_path)
    shutil.copy(TRANSCRIPTS / "subagents" / f"agent-{SUB_ID}.jsonl", late)
    closed = run.json("close", now=NOW + 60)["session"]
    assert closed["pending_subagents"] == [] and closed["tokens"]["saved"] == 20
    assert (
        "1 subagent spawned; 20 tokens kept out of the main context"
        in closed["closing_summary"]["outcomes"]
    )


def test_other_session_commands_read_pending_subagents_on_too(run: Cli, tmp_path: Path) -> None:
    session_id = run.json("start", "--client", "acme", "--code", "audit")["session"]["session_id"]
    late = _stop_before_the_transcript_is_written(run, tmp_path)
    shutil.copy(TRANSCRIPTS / "subagents" / f"agent-{SUB_ID}.jsonl", late)
    run.ok("note", "Figures", "checked", now=NOW + 5)
    doc = run.doc(session_id)
    assert doc["pending_subagents"] == [] and doc["tokens"]["saved"] == 20


def test_note_counts_notes_in_words(run: Cli) -> None:
    run.ok("start", "--client", "acme", "--code", "audit")
    assert run.ok("note", "first").strip() == "Noted in SES202611-ACME-AUDIT (1 note now)."
    assert run.ok("note", "second").strip() == "Noted in SES202611-ACME-AUDIT (2 notes now)."
    assert "saved (1 character)." in run.ok("summary", "x")
    assert "saved (2 characters)." in run.ok("summary", "xy")
