"""`agent-hooks statusline`: the line, where its figure comes from, and that it stays cheap."""

from __future__ import annotations

import calendar
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agent_hooks.cli import statusline
from agent_hooks.cli._common import Env
from agent_hooks.work_sessions import status_text, work_session, work_session_store

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SAMPLE = ROOT / "tests" / "fixtures" / "transcripts" / "main-with-subagent.jsonl"
NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))
ENTRY = ROOT / "hooks" / "entry.py"  # the status line runs as `entry.py StatusLine`


class Project:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "proj"
        (self.root / ".git").mkdir(parents=True)
        self.sessions = self.root / ".claude" / "sessions"
        self.environ = {"HOME": str(tmp), "AGENT_NAME": "proj__cc_1", "PATH": "/usr/bin:/bin"}

    def start(self, **tokens: int) -> dict:
        doc = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW)
        doc["tokens"].update(tokens)
        work_session_store.Store(str(self.sessions)).start(doc, NOW, close_active=False)
        return doc

    def payload(self, **extra: object) -> dict:
        return {
            "session_id": "conv-1",
            "cwd": str(self.root),
            "workspace": {"current_dir": str(self.root), "project_dir": str(self.root)},
            "model": {"id": "claude-opus-5-5", "display_name": "Opus"},
            **extra,
        }


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (950, "950"),
        (45000, "45.0k"),
        (99999, "100.0k"),
        (150000, "150k"),
        (1234567, "1.2M"),
    ],
)
def test_short(n: int, text: str) -> None:
    assert status_text.short(n) == text


def test_without_a_work_session_the_line_is_the_agent(project: Project) -> None:
    assert status_text.line(project.payload(), project.environ) == "proj__cc_1"
    assert status_text.line(project.payload(), {"HOME": "/x"}) == ""
    assert status_text.line({}, {"AGENT_NAME": "a"}) == "a"


def test_the_clients_own_context_figure_comes_first(project: Project) -> None:
    project.start(current=5)
    usage = {
        "input_tokens": 1000,
        "cache_creation_input_tokens": 20000,
        "cache_read_input_tokens": 100000,
        "output_tokens": 999,
    }
    payload = project.payload(
        context_window={"context_window_size": 200000, "current_usage": usage},
        transcript_path=str(SAMPLE),
    )
    # 1,000 + 20,000 + 100,000 = 121,000 of 150,000 = 80.7 % (> 80 %: yellow)
    assert (
        status_text.line(payload, project.environ)
        == f"SES202611-ACME-AUDIT {work_session.YELLOW} 121k/150k (80.7%) · proj__cc_1"
    )


def test_then_the_transcript_tail_then_the_stored_figures(project: Project) -> None:
    doc = project.start(current=777)
    payload = project.payload(transcript_path=str(SAMPLE))
    # the sample's last main assistant entry: 10 + 0 + 0 = 10
    assert (
        status_text.line(payload, project.environ)
        == f"SES202611-ACME-AUDIT {work_session.GREEN} 10/150k (0%) · proj__cc_1"
    )
    assert status_text.figures(project.payload(), project.environ)["current"] == 777
    s = work_session_store.Store(str(project.sessions))
    s.update_active(
        lambda d: (
            work_session.apply_figures(d, "conv-1", {"current": 143000, "peak": 143000}, NOW)
            is None
        ),
        NOW,
    )
    s.update_active(
        lambda d: work_session.apply_figures(d, "conv-2", {"current": 50, "peak": 50}, NOW) is None,
        NOW,
    )
    found = status_text.figures(project.payload(), project.environ)
    assert found is not None and (found["current"], found["indicator"]) == (
        143000,
        work_session.RED,
    )
    assert doc["session_id"] == found["session_id"]


def test_a_paused_session_shows_paused(project: Project) -> None:
    project.start(current=30000)
    work_session_store.Store(str(project.sessions)).update_active(
        lambda d: d.update(status="paused") is None, NOW
    )
    assert (
        status_text.line(project.payload(), project.environ)
        == f"SES202611-ACME-AUDIT {work_session.PAUSED} 30.0k/150k (20%) · proj__cc_1"
    )


def test_the_project_can_come_from_the_environment(project: Project) -> None:
    project.start(current=1500)
    environ = {**project.environ, "CLAUDE_PROJECT_DIR": str(project.root)}
    assert status_text.line({}, environ).startswith("SES202611-ACME-AUDIT 🟢 1.5k/150k (1%)")


def test_click_command_text_and_json(project: Project) -> None:
    project.start(current=45000)

    @click.group()
    def cli() -> None:
        pass

    statusline.register(cli)
    env = Env(environ=project.environ, now=NOW)
    result = CliRunner().invoke(cli, ["statusline"], input=json.dumps(project.payload()), obj=env)
    assert (
        result.exit_code == 0
        and result.stdout
        == f"SES202611-ACME-AUDIT {work_session.GREEN} 45.0k/150k (30%) · proj__cc_1\n"
    )
    result = CliRunner().invoke(
        cli, ["statusline", "--json"], input=json.dumps(project.payload()), obj=env
    )
    data = json.loads(result.stdout)
    assert data == {
        "agent": "proj__cc_1",
        "figures": {
            "session_id": "SES202611-ACME-AUDIT",
            "status": "active",
            "indicator": work_session.GREEN,
            "current": 45000,
            "max": 150000,
            "percent": 30.0,
        },
    }
    assert "--json" in CliRunner().invoke(cli, ["statusline", "--help"], obj=env).stdout


def run_entry(
    project: Project, stdin: bytes, importtime: bool = False
) -> subprocess.CompletedProcess[bytes]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, "-IS", *flags, str(ENTRY), "StatusLine"],
        input=stdin,
        capture_output=True,
        env=project.environ,
        timeout=60,
        check=False,
    )


def test_the_tiny_entry_prints_the_line_without_click_or_orjson(project: Project) -> None:
    project.start(current=45000)
    proc = run_entry(project, json.dumps(project.payload()).encode(), importtime=True)
    assert proc.returncode == 0
    assert (
        proc.stdout.decode()
        == f"SES202611-ACME-AUDIT {work_session.GREEN} 45.0k/150k (30%) · proj__cc_1\n"
    )
    loaded = {
        line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines() if "|" in line
    }
    assert not loaded & {
        "click",
        "orjson",
        "agent_hooks.cli",
        "typing",
        "re",
        "json",
        "os",
        "datetime",
    }


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b"\xff\xfe"])
def test_the_tiny_entry_never_fails(project: Project, stdin: bytes) -> None:
    proc = run_entry(project, stdin)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"proj__cc_1\n", b"")
