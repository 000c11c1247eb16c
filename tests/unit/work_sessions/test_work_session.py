"""Tests for agent_hooks.work_sessions.work_session: ids, the forgiving reader, changes and thresholds."""

from __future__ import annotations

import calendar
import time

import pytest

from agent_hooks import timestamps
from agent_hooks.work_sessions import work_session, work_session_report

NOW = calendar.timegm((2026, 11, 21, 12, 0, 0))


def ts(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> float:
    return float(calendar.timegm((y, mo, d, h, mi, 0)))


def doc_with(**tokens: int) -> dict:
    doc = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW)
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
    assert work_session.make_id(prefix, client, project, now) == expected
    assert work_session.check_id(expected) == expected


@pytest.mark.parametrize(
    "bad", ["acme-corp", "", "   ", "ac me", "ÄCME", "a_b", "../x", "x/y", "A" * 33, "acme.", "é"]
)
def test_id_parts_outside_the_rule_are_refused_in_one_line(bad: str) -> None:
    with pytest.raises(work_session.WorkSessionError) as info:
        work_session.make_id("SES", bad, "AUDIT", NOW)
    message = str(info.value)
    assert "[A-Z0-9]+" in message and "client" in message and "\n" not in message


def test_prefix_and_code_follow_the_same_rule() -> None:
    with pytest.raises(work_session.WorkSessionError, match="prefix"):
        work_session.make_id("S-S", "ACME", "AUDIT", NOW)
    with pytest.raises(work_session.WorkSessionError, match="code"):
        work_session.make_id("SES", "ACME", "audit/..", NOW)
    assert work_session.make_id("A" * 32, "B" * 32, "C" * 32, NOW).count("-") == 2


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
    with pytest.raises(work_session.WorkSessionError, match="PREFIXYYYYMM-CLIENT-PROJECT"):
        work_session.check_id(bad)


def test_check_id_upper_cases() -> None:
    assert work_session.check_id("ses202611-acme-audit") == "SES202611-ACME-AUDIT"


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
    assert work_session.normalize(raw)["tokens"] == expected


def test_token_normalization_keeps_unknown_keys_but_drops_the_migrated_legacy_one() -> None:
    tokens = work_session.normalize_tokens({"saved_by_isolation": 7, "note": "hand-added"})
    assert tokens == {**SEED_DEFAULTS, "saved": 7, "note": "hand-added"}


def test_normalize_reads_anything_into_a_complete_document() -> None:
    doc = work_session.normalize(
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
    assert work_session.normalize(None)["tokens"] == SEED_DEFAULTS
    assert work_session.normalize(
        work_session.new_document("SES202611-A-B", "SES", "A", "B", NOW)
    ) == work_session.new_document("SES202611-A-B", "SES", "A", "B", NOW)


# ------------------------------------------------------------------ thresholds


@pytest.mark.parametrize(
    ("current", "mark"),
    [
        (0, work_session.GREEN),
        (120000, work_session.GREEN),
        (120001, work_session.YELLOW),
        (142500, work_session.YELLOW),
        (142501, work_session.RED),
        (200000, work_session.RED),
    ],
)
def test_indicator_thresholds_are_strict_as_in_the_seed(current: int, mark: str) -> None:
    # 80 % of 150,000 = 120,000 and 95 % = 142,500: exactly at a threshold is not above it
    assert work_session.indicator(doc_with(current=current)) == mark


@pytest.mark.parametrize(
    ("status", "mark"),
    [
        ("paused", work_session.PAUSED),
        ("closed", work_session.CLOSED),
        ("blocked", work_session.RED),
        ("active", work_session.GREEN),
    ],
)
def test_indicator_follows_status(status: str, mark: str) -> None:
    doc = doc_with(current=10)
    doc["status"] = status
    assert work_session.indicator(doc) == mark


def test_warnings_fire_once_each_at_80_and_95_percent() -> None:
    warned: list[int] = []
    seen = []
    for current in (100000, 120000, 120001, 130000, 142500, 142501, 149000, 150000):
        warned, fire = work_session.due_warning(current, 150000, warned)
        seen.append(fire)
    assert seen == [None, None, 80, None, None, 95, None, None]
    assert warned == [80, 95]


def test_a_jump_past_both_thresholds_tells_only_95_and_a_compaction_rearms() -> None:
    warned, fire = work_session.due_warning(149000, 150000, [])
    assert (warned, fire) == ([80, 95], 95)
    warned, fire = work_session.due_warning(30000, 150000, warned)  # after /compact
    assert (warned, fire) == ([], None)
    warned, fire = work_session.due_warning(125000, 150000, warned)
    assert (warned, fire) == ([80], 80)


def test_warning_texts_name_the_session_and_figures() -> None:
    model, user = work_session.warning_texts("SES202611-ACME-AUDIT", 95, 142501, 150000)
    assert "SES202611-ACME-AUDIT" in model and "142,501 of the 150,000-token budget (95%)" in model
    assert "Critical" in model and user.startswith(work_session.RED)
    model, user = work_session.warning_texts("SES202611-ACME-AUDIT", 80, 121000, 150000)
    assert "(80.7%)" in model and user.startswith(work_session.YELLOW) and "121,000/150,000" in user


# ----------------------------------------------------------------------- times


def test_parse_time_round_trips_iso() -> None:
    assert work_session.parse_time(timestamps.iso(NOW)) == NOW
    assert work_session.parse_time("2026-11-21T13:00:00+01:00") == NOW
    assert work_session.parse_time("2026-11-21T12:00:00") == NOW
    assert work_session.parse_time("yesterday") is None and work_session.parse_time(None) is None


# ------------------------------------------------------------------- mutations


def test_milestones_notes_and_summary() -> None:
    doc = doc_with()
    work_session.add_milestone(doc, "Requirements Complete")
    work_session.add_milestone(doc, "Implementation Started")
    with pytest.raises(work_session.WorkSessionError, match="already has"):
        work_session.add_milestone(doc, "Requirements Complete")
    with pytest.raises(work_session.WorkSessionError, match="one non-empty line"):
        work_session.add_milestone(doc, "two\nlines")
    done = work_session.complete_milestone(doc, "Requirements Complete", NOW)
    assert done == {"name": "Requirements Complete", "completed": "2026-11-21T12:00:00Z"}
    work_session.complete_milestone(doc, "Requirements Complete", NOW + 99)  # the first time stays
    assert doc["milestones"][0]["completed"] == "2026-11-21T12:00:00Z"
    with pytest.raises(
        work_session.WorkSessionError, match=r"no milestone named 'Nope'.*milestone add"
    ):
        work_session.complete_milestone(doc, "Nope", NOW)
    work_session.add_note(doc, "Client prefers OAuth2 over JWT")
    work_session.set_summary(doc, "\nWorking on it.\nNext: story 1-2\n")
    assert doc["notes"] == ["Client prefers OAuth2 over JWT"]
    assert doc["context_summary"] == "Working on it.\nNext: story 1-2"
    assert work_session_report.milestone_lines(doc) == [
        "- [x] Requirements Complete",
        "- [ ] Implementation Started",
    ]


def test_finish_agent_counts_saved_tokens_once_and_keeps_imported_savings() -> None:
    doc = doc_with(saved=1000)  # e.g. read from a legacy file
    work_session.spawned_agent(doc, "a1")["type"] = "Explore"
    work_session.finish_agent(doc, "a1", 300, NOW)
    work_session.finish_agent(doc, "a1", 300, NOW + 5)  # a repeated stop
    work_session.finish_agent(doc, "a2", 50, NOW)  # a stop without a start
    assert doc["tokens"]["saved"] == 1000 + 300 + 50
    assert [(a["id"], a["tokens_used"], a["completed"]) for a in doc["agents_spawned"]] == [
        ("a1", 300, "2026-11-21T12:00:00Z"),
        ("a2", 50, "2026-11-21T12:00:00Z"),
    ]


def test_apply_figures_sets_initial_once_current_latest_and_peak_max() -> None:
    doc = doc_with()
    work_session.apply_figures(doc, "conv-1", {"agent": "cc_1", "current": 5000, "peak": 5000}, NOW)
    work_session.apply_figures(
        doc, "conv-2", {"agent": "cc_2", "current": 90000, "peak": 91000}, NOW + 1
    )
    work_session.apply_figures(
        doc, "conv-1", {"agent": "cc_1", "current": 7000, "peak": 7000}, NOW + 2
    )
    assert doc["tokens"] == {**SEED_DEFAULTS, "initial": 5000, "current": 7000, "peak": 91000}
    assert list(doc["conversations"]) == ["conv-2", "conv-1"]  # most recent last
    assert [(c["agent"], c["current"]) for c in work_session.agent_contexts(doc)] == [
        ("cc_2", 90000),
        ("cc_1", 7000),
    ]


def test_record_artifacts_is_one_pass_and_capped() -> None:
    doc = doc_with()
    work_session.record_artifacts(doc, ["a0"], "cc_1", NOW)
    paths = [f"a{i}" for i in range(200_000)] + ["a5"]
    start = time.process_time()
    assert work_session.record_artifacts(doc, paths, "cc_1", NOW) == (100, 199_899)
    # CPU time, which other processes do not stretch; one pass takes ~0.1 s, a quadratic
    # one hours: the bound is wide and still tells them apart.
    assert time.process_time() - start < 30
    assert [a["path"] for a in doc["artifacts"]] == [f"a{i}" for i in range(101)]
    assert work_session.record_artifacts(doc, ["a3", "b", "b"], "cc_1", NOW, limit=5) == (1, 0)


def test_record_artifact_once() -> None:
    doc = doc_with()
    assert work_session.record_artifacts(doc, ["docs/prd.md"], "cc_1", NOW, "Explore") == (1, 0)
    assert work_session.record_artifacts(doc, ["docs/prd.md"], "cc_2", NOW + 5) == (0, 0)
    assert doc["artifacts"] == [
        {
            "path": "docs/prd.md",
            "created": "2026-11-21T12:00:00Z",
            "agent": "cc_1",
            "subagent": "Explore",
        }
    ]
