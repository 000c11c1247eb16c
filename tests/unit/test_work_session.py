"""Tests for agent_hooks.work_session: ids, the forgiving reader, thresholds and the texts."""

from __future__ import annotations

import calendar
import copy
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import work_session as ws

NOW = calendar.timegm((2026, 11, 21, 12, 0, 0))


def ts(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> float:
    return float(calendar.timegm((y, mo, d, h, mi, 0)))


def doc_with(**tokens: int) -> dict:
    doc = ws.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW)
    doc["tokens"].update(tokens)
    return doc


# ----------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("prefix", "client", "project", "now", "expected"),
    [
        ("SES", "acme", "audit", NOW, "SES202611-ACME-AUDIT"),
        ("eng", "Tesla", "API", ts(2025, 1, 15), "ENG202501-TESLA-API"),
        ("TST", "internal", "rewrite2", ts(2025, 1, 31, 23, 59), "TST202501-INTERNAL-REWRITE2"),
        ("SES", " acme ", "x", ts(2024, 12, 1), "SES202412-ACME-X"),
    ],
)
def test_make_id(prefix: str, client: str, project: str, now: float, expected: str) -> None:
    assert ws.make_id(prefix, client, project, now) == expected
    assert ws.check_id(expected) == expected


@pytest.mark.parametrize(
    "bad", ["acme-corp", "", "   ", "ac me", "ÄCME", "a_b", "../x", "x/y", "A" * 33, "acme.", "é"]
)
def test_id_parts_outside_the_rule_are_refused_in_one_line(bad: str) -> None:
    with pytest.raises(ws.WorkSessionError) as info:
        ws.make_id("SES", bad, "AUDIT", NOW)
    message = str(info.value)
    assert "[A-Z0-9]+" in message and "client" in message and "\n" not in message


def test_prefix_and_project_follow_the_same_rule() -> None:
    with pytest.raises(ws.WorkSessionError, match="prefix"):
        ws.make_id("S-S", "ACME", "AUDIT", NOW)
    with pytest.raises(ws.WorkSessionError, match="project"):
        ws.make_id("SES", "ACME", "audit/..", NOW)
    assert ws.make_id("A" * 32, "B" * 32, "C" * 32, NOW).count("-") == 2


@pytest.mark.parametrize(
    "bad",
    [
        "../etc/passwd",
        "SES2026-ACME-X",
        "SES202611-ACME",
        "SES202611-AC/ME-X",
        "202611-ACME-X",
        "SES202611-ACME-AUDIT-2",
        "SES20261A-ACME-X",
        "SES202611--X",
        "SES202611-ACME-AUDIT.json",
        "",
    ],
)
def test_check_id_refuses_what_is_not_an_id(bad: str) -> None:
    with pytest.raises(ws.WorkSessionError, match="PREFIXYYYYMM-CLIENT-PROJECT"):
        ws.check_id(bad)


def test_check_id_upper_cases() -> None:
    assert ws.check_id("ses202611-acme-audit") == "SES202611-ACME-AUDIT"


# ------------------------------------------------------- deserialization defaults

SEED_DEFAULTS = {"max": 150000, "initial": 0, "current": 0, "peak": 0, "saved": 0}


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        # rule 1: max missing or null -> 150000; rule 2: any other field missing -> 0
        (None, SEED_DEFAULTS),
        ({}, SEED_DEFAULTS),
        ({"max": None}, SEED_DEFAULTS),
        ({"max": 200000}, {**SEED_DEFAULTS, "max": 200000}),
        ({"current": 45000}, {**SEED_DEFAULTS, "current": 45000}),
        (
            {"max": 100000, "initial": 5, "current": 45000, "peak": 52000, "saved": 145000},
            {"max": 100000, "initial": 5, "current": 45000, "peak": 52000, "saved": 145000},
        ),
        ({"peak": None, "initial": None}, SEED_DEFAULTS),
        # rule 3: legacy saved_by_isolation is read as saved (saved itself wins when present)
        ({"saved_by_isolation": 145000}, {**SEED_DEFAULTS, "saved": 145000}),
        ({"saved": 10, "saved_by_isolation": 99}, {**SEED_DEFAULTS, "saved": 10}),
        ({"saved": None, "saved_by_isolation": 99}, SEED_DEFAULTS),
        # unusable values count as missing; a non-positive budget as a missing one
        ({"max": "lots", "current": "abc", "peak": -5, "saved": True}, SEED_DEFAULTS),
        ({"max": 0}, SEED_DEFAULTS),
        (
            {"max": "200000", "current": "45,000", "peak": 52000.0},
            {**SEED_DEFAULTS, "max": 200000, "current": 45000, "peak": 52000},
        ),
        ("not a mapping", SEED_DEFAULTS),
        ([1, 2], SEED_DEFAULTS),
    ],
)
def test_token_deserialization_defaults(tokens: object, expected: dict) -> None:
    raw = {"session_id": "SES202611-ACME-AUDIT"}
    if tokens is not None:
        raw["tokens"] = tokens
    assert ws.normalize(raw)["tokens"] == expected


def test_token_normalization_keeps_unknown_keys_but_drops_the_migrated_legacy_one() -> None:
    tokens = ws.normalize_tokens({"saved_by_isolation": 7, "note": "hand-added"})
    assert tokens == {**SEED_DEFAULTS, "saved": 7, "note": "hand-added"}


def test_normalize_reads_anything_into_a_complete_document() -> None:
    doc = ws.normalize(
        {
            "session_id": "SES202611-ACME-AUDIT",
            "status": "Weird",
            "created": NOW,
            "milestones": [
                "Setup",
                {"name": "Done", "completed": "2026-11-20T10:00:00Z"},
                {"x": 1},
                5,
            ],
            "artifacts": ["docs/prd.md", {"path": 3}],
            "agents_spawned": [{"id": "a1", "tokens_used": "12"}],
            "notes": "one note",
            "conversations": {"c1": {"current": 1}, "c2": "junk"},
            "extra": [1],
        }
    )
    assert doc["status"] == "active"
    assert doc["created"] == "2026-11-21T12:00:00Z" and doc["last_updated"] == doc["created"]
    assert doc["milestones"] == [
        {"name": "Setup", "completed": None},
        {"name": "Done", "completed": "2026-11-20T10:00:00Z"},
    ]
    assert doc["artifacts"] == [{"path": "docs/prd.md", "created": None, "agent": ""}]
    assert doc["agents_spawned"] == [
        {
            "id": "a1",
            "type": "",
            "started": None,
            "completed": None,
            "tokens_used": 12,
            "output_file": None,
        }
    ]
    assert doc["notes"] == ["one note"]
    assert doc["conversations"] == {"c1": {"current": 1}}
    assert doc["extra"] == [1]  # nothing unknown is dropped
    assert ws.normalize(None)["tokens"] == SEED_DEFAULTS
    assert ws.normalize(ws.new_document("SES202611-A-B", "SES", "A", "B", NOW)) == ws.new_document(
        "SES202611-A-B", "SES", "A", "B", NOW
    )


# ------------------------------------------------------------------ thresholds


@pytest.mark.parametrize(
    ("current", "mark"),
    [
        (0, ws.GREEN),
        (120000, ws.GREEN),
        (120001, ws.YELLOW),
        (142500, ws.YELLOW),
        (142501, ws.RED),
        (200000, ws.RED),
    ],
)
def test_indicator_thresholds_are_strict_as_in_the_seed(current: int, mark: str) -> None:
    # 80 % of 150,000 = 120,000 and 95 % = 142,500: exactly at a threshold is not above it
    assert ws.indicator(doc_with(current=current)) == mark


@pytest.mark.parametrize(
    ("status", "mark"),
    [("paused", ws.PAUSED), ("closed", ws.CLOSED), ("blocked", ws.RED), ("active", ws.GREEN)],
)
def test_indicator_follows_status(status: str, mark: str) -> None:
    doc = doc_with(current=10)
    doc["status"] = status
    assert ws.indicator(doc) == mark


def test_warnings_fire_once_each_at_80_and_95_percent() -> None:
    warned: list[int] = []
    seen = []
    for current in (100000, 120000, 120001, 130000, 142500, 142501, 149000, 150000):
        warned, fire = ws.due_warning(current, 150000, warned)
        seen.append(fire)
    assert seen == [None, None, 80, None, None, 95, None, None]
    assert warned == [80, 95]


def test_a_jump_past_both_thresholds_tells_only_95_and_a_compaction_rearms() -> None:
    warned, fire = ws.due_warning(149000, 150000, [])
    assert (warned, fire) == ([80, 95], 95)
    warned, fire = ws.due_warning(30000, 150000, warned)  # after /compact
    assert (warned, fire) == ([], None)
    warned, fire = ws.due_warning(125000, 150000, warned)
    assert (warned, fire) == ([80], 80)


def test_warning_texts_name_the_session_and_figures() -> None:
    model, user = ws.warning_texts("SES202611-ACME-AUDIT", 95, 142501, 150000)
    assert "SES202611-ACME-AUDIT" in model and "142,501 of the 150,000-token budget (95%)" in model
    assert "Critical" in model and user.startswith(ws.RED)
    model, user = ws.warning_texts("SES202611-ACME-AUDIT", 80, 121000, 150000)
    assert "(80.7%)" in model and user.startswith(ws.YELLOW) and "121,000/150,000" in user


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
    assert ws.duration(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-3, "just now"), (59, "just now"), (300, "5m ago"), (7200, "2h ago"), (3 * 86400, "3d ago")],
)
def test_ago(seconds: int, text: str) -> None:
    assert ws.ago(seconds) == text


@pytest.mark.parametrize(
    ("fraction", "bar"),
    [(0, "[░░░░░░░░░░]"), (0.8, "[████████░░]"), (0.99, "[█████████░]"), (1.5, "[██████████]")],
)
def test_progress_bar(fraction: float, bar: str) -> None:
    assert ws.progress_bar(fraction) == bar


@given(st.integers(min_value=-2_000_000_000, max_value=8_000_000_000))
def test_parse_time_fast_path_agrees_with_datetime(t: int) -> None:
    text = ws.iso(t)
    assert (
        ws.parse_time(text) == t == datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    )


def test_parse_time_round_trips_iso() -> None:
    assert ws.parse_time(ws.iso(NOW)) == NOW
    assert ws.parse_time("2026-11-21T13:00:00+01:00") == NOW
    assert ws.parse_time("2026-11-21T12:00:00") == NOW
    assert ws.parse_time("yesterday") is None and ws.parse_time(None) is None


# ------------------------------------------------------------------- mutations


def test_milestones_notes_and_summary() -> None:
    doc = doc_with()
    ws.add_milestone(doc, "Requirements Complete")
    ws.add_milestone(doc, "Implementation Started")
    with pytest.raises(ws.WorkSessionError, match="already has"):
        ws.add_milestone(doc, "Requirements Complete")
    with pytest.raises(ws.WorkSessionError, match="one non-empty line"):
        ws.add_milestone(doc, "two\nlines")
    done = ws.complete_milestone(doc, "Requirements Complete", NOW)
    assert done == {"name": "Requirements Complete", "completed": "2026-11-21T12:00:00Z"}
    ws.complete_milestone(doc, "Requirements Complete", NOW + 99)  # the first time stays
    assert doc["milestones"][0]["completed"] == "2026-11-21T12:00:00Z"
    with pytest.raises(ws.WorkSessionError, match=r"no milestone named 'Nope'.*milestone add"):
        ws.complete_milestone(doc, "Nope", NOW)
    ws.add_note(doc, "Client prefers OAuth2 over JWT")
    ws.set_summary(doc, "\nWorking on it.\nNext: story 1-2\n")
    assert doc["notes"] == ["Client prefers OAuth2 over JWT"]
    assert doc["context_summary"] == "Working on it.\nNext: story 1-2"
    assert ws.milestone_lines(doc) == [
        "- [x] Requirements Complete",
        "- [ ] Implementation Started",
    ]


def test_finish_agent_counts_saved_tokens_once_and_keeps_imported_savings() -> None:
    doc = doc_with(saved=1000)  # e.g. read from a legacy file
    ws.spawned_agent(doc, "a1")["type"] = "Explore"
    ws.finish_agent(doc, "a1", 300, NOW)
    ws.finish_agent(doc, "a1", 300, NOW + 5)  # a repeated stop
    ws.finish_agent(doc, "a2", 50, NOW)  # a stop without a start
    assert doc["tokens"]["saved"] == 1000 + 300 + 50
    assert [(a["id"], a["tokens_used"], a["completed"]) for a in doc["agents_spawned"]] == [
        ("a1", 300, "2026-11-21T12:00:00Z"),
        ("a2", 50, "2026-11-21T12:00:00Z"),
    ]


def test_apply_figures_sets_initial_once_current_latest_and_peak_max() -> None:
    doc = doc_with()
    ws.apply_figures(doc, "conv-1", {"agent": "cc_1", "current": 5000, "peak": 5000}, NOW)
    ws.apply_figures(doc, "conv-2", {"agent": "cc_2", "current": 90000, "peak": 91000}, NOW + 1)
    ws.apply_figures(doc, "conv-1", {"agent": "cc_1", "current": 7000, "peak": 7000}, NOW + 2)
    assert doc["tokens"] == {**SEED_DEFAULTS, "initial": 5000, "current": 7000, "peak": 91000}
    assert list(doc["conversations"]) == ["conv-2", "conv-1"]  # most recent last
    assert [(c["agent"], c["current"]) for c in ws.agent_contexts(doc)] == [
        ("cc_2", 90000),
        ("cc_1", 7000),
    ]


def test_record_artifact_once() -> None:
    doc = doc_with()
    assert ws.record_artifact(doc, "docs/prd.md", "cc_1", NOW, "Explore")
    assert not ws.record_artifact(doc, "docs/prd.md", "cc_2", NOW + 5)
    assert doc["artifacts"] == [
        {
            "path": "docs/prd.md",
            "created": "2026-11-21T12:00:00Z",
            "agent": "cc_1",
            "subagent": "Explore",
        }
    ]


# ----------------------------------------------------------------------- texts


def seed_example() -> dict:
    """The seed's example session (its token report: 45,000 main + 145,000 isolated)."""
    doc = ws.new_document("SES202501-ACME-AUDIT", "SES", "ACME", "AUDIT", ts(2025, 1, 15, 10, 30))
    doc["tokens"].update(current=45000, peak=52000, saved=145000)
    for agent_id, kind, used in (
        ("agent-123", "analyst", 32000),
        ("agent-124", "architect", 28000),
        ("agent-125", "dev", 85000),
    ):
        record = ws.spawned_agent(doc, agent_id)
        record.update(type=kind, tokens_used=used, completed="2025-01-15T10:42:00Z")
    ws.record_artifact(doc, "docs/prd.md", "pm", ts(2025, 1, 15, 11))
    ws.record_artifact(doc, "docs/architecture.md", "architect", ts(2025, 1, 15, 12, 30))
    for name, done in (
        ("Requirements Complete", ts(2025, 1, 15, 11, 30)),
        ("Architecture Approved", ts(2025, 1, 15, 13)),
        ("Implementation Started", None),
    ):
        ws.add_milestone(doc, name)
        if done:
            ws.complete_milestone(doc, name, done)
    ws.add_note(doc, "Client prefers OAuth2 over JWT")
    ws.set_summary(
        doc, "Working on ACME security audit project.\nNext: Complete story 1-2-user-login."
    )
    return doc


def test_token_report_matches_the_seeds_example() -> None:
    report = ws.token_report(seed_example())
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
    text = ws.tokens_text(report)
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
    text = ws.savings_text(ws.token_report(doc))
    assert "  All agent work in main context: 190,000 tokens" in text
    assert "  Would exceed limit by: 40,000 tokens" in text
    assert "  Agents in subprocesses: 145,000 tokens (not counted)" in text
    assert text.endswith(f"Status: {ws.GREEN} Within budget")
    doc["tokens"].update(current=130000, saved=10000)
    text = ws.savings_text(ws.token_report(doc))
    assert "Would stay within the limit: 10,000 tokens to spare" in text
    assert text.endswith(f"Status: {ws.YELLOW} Within budget, above 80%")
    doc["tokens"]["current"] = 160000
    assert ws.savings_text(ws.token_report(doc)).endswith(f"{ws.RED} Over budget by 10,000 tokens")


def test_status_text() -> None:
    doc = seed_example()
    now = ts(2025, 1, 15, 14, 45)
    lines = ws.status_text(doc, now).splitlines()
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
    text = ws.resume_text(seed_example(), ts(2025, 1, 15, 14, 45))
    assert text.splitlines()[:6] == [
        "Resuming Session: SES202501-ACME-AUDIT 🟢",
        "Status: active",
        "Started: 2025-01-15T10:30:00Z (4h ago)",
        "Milestones: 3 (2 completed)",
        "Artifacts: 2",
        "Token Usage: 45,000/150,000 (30%)",
    ]
    assert "Last Context:\nWorking on ACME security audit project." in text
    assert "Notes:\n- Client prefers OAuth2 over JWT" in text


def test_closing_summary() -> None:
    doc = seed_example()
    summary = ws.closing_summary(doc, ts(2025, 1, 16, 10, 30))
    assert summary["decisions"] == ["Client prefers OAuth2 over JWT"]
    assert summary["outcomes"][:2] == [
        "Milestone reached: Requirements Complete (2025-01-15)",
        "Milestone reached: Architecture Approved (2025-01-15)",
    ]
    assert "2 artifact(s) created: docs/prd.md, docs/architecture.md" in summary["outcomes"]
    assert (
        "3 subagent(s) spawned; 145,000 tokens kept out of the main context" in summary["outcomes"]
    )
    assert summary["next_steps"] == [
        "Open milestone: Implementation Started",
        "Next: Complete story 1-2-user-login.",
    ]
    assert summary["duration"] == "1d 0h" and summary["closed"] == "2025-01-16T10:30:00Z"
    closed = copy.deepcopy(doc)
    closed["closing_summary"] = summary
    text = ws.closing_text(closed, "/x/archive/SES202501-ACME-AUDIT.json")
    assert "Decisions and Learnings:\n  - Client prefers OAuth2 over JWT" in text
    assert text.endswith("Archived to: /x/archive/SES202501-ACME-AUDIT.json")


def test_list_text() -> None:
    live_doc = seed_example()
    paused = ws.new_document("ENG202501-TESLA-API", "ENG", "TESLA", "API", ts(2025, 1, 10))
    paused["status"] = "paused"
    closed = ws.new_document("TST202412-INTERNAL-MVP", "TST", "INTERNAL", "MVP", ts(2024, 12, 1))
    closed.update(status="closed", closed="2024-12-15T09:00:00Z")
    now = ts(2025, 1, 18, 11)
    live = [ws.list_entry(live_doc, now, False), ws.list_entry(paused, now, False)]
    text = ws.list_text("SES202501-ACME-AUDIT", live, [ws.list_entry(closed, now, True)])
    assert text.splitlines() == [
        "Active Sessions:",
        "  SES202501-ACME-AUDIT 🟢 (3 days) ← current",
        "  ENG202501-TESLA-API ⏸️ (8 days)",
        "",
        "Archived Sessions:",
        "  TST202412-INTERNAL-MVP ✅ (closed 2024-12-15)",
    ]
    assert ws.list_text(None, [], []).splitlines() == [
        "Active Sessions:",
        "  (none)",
        "",
        "Archived Sessions:",
        "  (none)",
    ]
