"""Tests for agent_hooks.work_sessions.work_session_report: the texts of status, resume, list,
tokens, savings and close, checked against the seed's examples."""

from __future__ import annotations

import calendar
import copy

import pytest

from agent_hooks import durations
from agent_hooks.work_sessions import work_session, work_session_report


def ts(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> float:
    return float(calendar.timegm((y, mo, d, h, mi, 0)))


# ---------------------------------------------------------- times and pictures


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "5s"),
        (60, "1m"),
        (3599, "59m"),
        (4 * 3600 + 15 * 60, "4h 15m"),
        (3 * 86400 + 4 * 3600, "3d 4h"),
    ],
)
def test_duration(seconds: int, text: str) -> None:
    assert durations.duration(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-3, "just now"), (59, "just now"), (300, "5m ago"), (7200, "2h ago"), (3 * 86400, "3d ago")],
)
def test_ago(seconds: int, text: str) -> None:
    assert durations.ago(seconds) == text


@pytest.mark.parametrize(
    ("fraction", "bar"),
    [(0, "[░░░░░░░░░░]"), (0.8, "[████████░░]"), (0.99, "[█████████░]"), (1.5, "[██████████]")],
)
def test_progress_bar(fraction: float, bar: str) -> None:
    assert work_session_report.progress_bar(fraction) == bar


# ----------------------------------------------------------------------- texts


def seed_example() -> dict:
    """The seed's example session (its token report: 45,000 main + 145,000 isolated)."""
    doc = work_session.new_document(
        "SES202501-ACME-AUDIT", "SES", "ACME", "AUDIT", ts(2025, 1, 15, 10, 30)
    )
    doc["tokens"].update(current=45000, peak=52000, saved=145000)
    for agent_id, kind, used in (
        ("agent-123", "analyst", 32000),
        ("agent-124", "architect", 28000),
        ("agent-125", "dev", 85000),
    ):
        record = work_session.spawned_agent(doc, agent_id)
        record.update(type=kind, tokens_used=used, completed="2025-01-15T10:42:00Z")
    work_session.record_artifacts(doc, ["docs/prd.md"], "pm", ts(2025, 1, 15, 11))
    work_session.record_artifacts(
        doc, ["docs/architecture.md"], "architect", ts(2025, 1, 15, 12, 30)
    )
    for name, done in (
        ("Requirements Complete", ts(2025, 1, 15, 11, 30)),
        ("Architecture Approved", ts(2025, 1, 15, 13)),
        ("Implementation Started", None),
    ):
        work_session.add_milestone(doc, name)
        if done:
            work_session.complete_milestone(doc, name, done)
    work_session.add_note(doc, "Client prefers OAuth2 over JWT")
    work_session.set_summary(
        doc, "Working on ACME security audit project.\nNext: Complete story 1-2-user-login."
    )
    return doc


def test_token_report_matches_the_seeds_example() -> None:
    report = work_session_report.token_report(seed_example())
    # 45,000 + 145,000 = 190,000 without isolation; 190,000 - 150,000 = 40,000 over;
    # 145,000 / 190,000 = 76.3 %; 45,000 / 150,000 = 30 %; 150,000 - 45,000 = 105,000 left
    assert (report["total_without_isolation"], report["exceeds_without_isolation_by"]) == (
        190000,
        40000,
    )
    assert (report["savings_percent"], report["percent"], report["remaining"]) == (
        76.3,
        30.0,
        105000,
    )
    text = work_session_report.tokens_text(report)
    for line in (
        "Token Usage Report: SES202501-ACME-AUDIT",
        "  Used: 45,000 / 150,000 (30%)",
        "  Remaining: 105,000",
        "  analyst agent-12: 32,000 tokens (isolated)",
        "  dev agent-12: 85,000 tokens (isolated)",
        "Total Consumed (if no isolation): 190,000",
        "Actual Main Session: 45,000",
        "Tokens Saved: 145,000 (76.3% savings)",
    ):
        assert line in text.splitlines()


def test_savings_text_within_and_beyond_budget() -> None:
    doc = seed_example()
    text = work_session_report.savings_text(work_session_report.token_report(doc))
    assert "  All agent work in main context: 190,000 tokens" in text
    assert "  Would exceed limit by: 40,000 tokens" in text
    assert "  Agents in subprocesses: 145,000 tokens (not counted)" in text
    assert text.endswith(f"Status: {work_session.GREEN} Within budget")
    doc["tokens"].update(current=130000, saved=10000)
    text = work_session_report.savings_text(work_session_report.token_report(doc))
    assert "Would stay within the limit: 10,000 tokens to spare" in text
    assert text.endswith(f"Status: {work_session.YELLOW} Within budget, above 80%")
    doc["tokens"]["current"] = 160000
    assert work_session_report.savings_text(work_session_report.token_report(doc)).endswith(
        f"{work_session.RED} Over budget by 10,000 tokens"
    )


def test_status_text() -> None:
    doc = seed_example()
    now = ts(2025, 1, 15, 14, 45)
    lines = work_session_report.status_text(doc, now).splitlines()
    assert lines[:5] == [
        "Session: SES202501-ACME-AUDIT 🟢",
        "Status: active",
        "Duration: 4h 15m",
        "Tokens: 45,000/150,000 (30%)",
        "Progress Bar: [███░░░░░░░] 30%",
    ]
    assert "Milestones (2/3):" in lines and "- [ ] Implementation Started" in lines
    assert "- docs/architecture.md (created 2h ago by architect)" in lines
    assert "- docs/prd.md (created 3h ago by pm)" in lines
    assert lines[-2:] == ["Agents Spawned This Session: 3", "Token Savings from Isolation: 145,000"]


def test_resume_text() -> None:
    text = work_session_report.resume_text(seed_example(), ts(2025, 1, 15, 14, 45))
    assert text.splitlines()[:6] == [
        "Resuming Session: SES202501-ACME-AUDIT 🟢",
        "Status: active",
        "Started: 2025-01-15 10:30 UTC (4h ago)",
        "Milestones: 3 (2 completed)",
        "Artifacts: 2",
        "Token Usage: 45,000/150,000 (30%)",
    ]
    assert "Last Context:\nWorking on ACME security audit project." in text
    assert "Notes:\n- Client prefers OAuth2 over JWT" in text


def test_closing_summary() -> None:
    doc = seed_example()
    summary = work_session_report.closing_summary(doc, ts(2025, 1, 16, 10, 30))
    assert summary["decisions"] == ["Client prefers OAuth2 over JWT"]
    assert summary["outcomes"][:2] == [
        "Milestone reached: Requirements Complete (2025-01-15)",
        "Milestone reached: Architecture Approved (2025-01-15)",
    ]
    assert "2 artifacts created: docs/prd.md, docs/architecture.md" in summary["outcomes"]
    assert "3 subagents spawned; 145,000 tokens kept out of the main context" in summary["outcomes"]
    assert summary["next_steps"] == [
        "Open milestone: Implementation Started",
        "Next: Complete story 1-2-user-login.",
    ]
    assert summary["duration"] == "1d 0h" and summary["closed"] == "2025-01-16T10:30:00Z"
    closed = copy.deepcopy(doc)
    closed["closing_summary"] = summary
    text = work_session_report.closing_text(closed, "/x/archive/SES202501-ACME-AUDIT.json")
    assert "Decisions and Learnings:\n  - Client prefers OAuth2 over JWT" in text
    assert text.endswith("Archived to: /x/archive/SES202501-ACME-AUDIT.json")


def test_list_text() -> None:
    live_doc = seed_example()
    paused = work_session.new_document(
        "ENG202501-TESLA-API", "ENG", "TESLA", "API", ts(2025, 1, 10)
    )
    paused["status"] = "paused"
    closed = work_session.new_document(
        "TST202412-INTERNAL-MVP", "TST", "INTERNAL", "MVP", ts(2024, 12, 1)
    )
    closed.update(status="closed", closed="2024-12-15T09:00:00Z")
    now = ts(2025, 1, 18, 11)
    live = [
        work_session_report.list_entry(live_doc, now, False),
        work_session_report.list_entry(paused, now, False),
    ]
    text = work_session_report.list_text(
        "SES202501-ACME-AUDIT", live, [work_session_report.list_entry(closed, now, True)]
    )
    assert text.splitlines() == [
        "Active Sessions:",
        "  SES202501-ACME-AUDIT 🟢 (3 days) ← current",
        "  ENG202501-TESLA-API ⏸️ (8 days)",
        "",
        "Archived Sessions:",
        "  TST202412-INTERNAL-MVP ✅ (closed 2024-12-15)",
    ]
    assert work_session_report.list_text(None, [], []).splitlines() == [
        "Active Sessions:",
        "  (none)",
        "",
        "Archived Sessions:",
        "  (none)",
    ]


def test_people_read_local_times(far_timezone: None) -> None:
    """Documents keep UTC; the texts show local time (here 5:30 ahead of UTC)."""
    text = work_session_report.resume_text(seed_example(), ts(2025, 1, 15, 14, 45))
    assert "Started: 2025-01-15 16:00 IST (4h ago)" in text.splitlines()
    closed = work_session.new_document("TST202412-X-Y", "TST", "X", "Y", ts(2024, 12, 1))
    closed.update(status="closed", closed="2024-12-15T22:00:00Z")
    entry = work_session_report.list_entry(closed, ts(2025, 1, 1), True)
    assert entry["closed"] == "2024-12-15T22:00:00Z"  # --json: as stored, UTC
    text = work_session_report.list_text(None, [], [entry])
    assert "  TST202412-X-Y ✅ (closed 2024-12-16)" in text.splitlines()
