"""Tests for agent_hooks.work_sessions.subagents: a subagent counted from its own transcript at
its stop, pending while that transcript is not final, read on at later calls, given up after
`PENDING_TTL` or beyond `MAX_PENDING` (with the figures read by then kept)."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from agent_hooks.work_sessions import subagents, work_session, work_session_report

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))


def turn(context: int, output: int, stop_reason: str = "tool_use") -> str:
    entry = {
        "type": "assistant",
        "isSidechain": True,
        "agentId": "a1",
        "message": {
            "model": "claude-opus-5-5",
            "stop_reason": stop_reason,
            "usage": {"input_tokens": context, "output_tokens": output},
        },
    }
    return json.dumps(entry) + "\n"


def new_doc() -> dict:
    return work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW)


class Log(list[str]):
    def __call__(self, text: str) -> None:
        self.append(text)


def test_a_complete_transcript_is_counted_at_the_stop(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_text(turn(100, 5) + turn(900, 40, "end_turn"))
    doc, log = new_doc(), Log()
    assert subagents.record_stop(doc, "a1", str(path), NOW, log) is False
    (record,) = doc["agents_spawned"]
    assert (record["tokens_used"], doc["tokens"]["saved"], doc["pending_subagents"]) == (
        940,
        940,
        [],
    )
    assert record["completed"] == "2026-11-21T12:00:00Z" and log == []


def test_a_missing_transcript_is_pending_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    doc, log = new_doc(), Log()
    assert subagents.record_stop(doc, "a1", str(path), NOW, log) is True
    assert doc["pending_subagents"] == [
        {"id": "a1", "transcript": str(path), "since": "2026-11-21T12:00:00Z"}
    ]
    assert doc["agents_spawned"][0]["completed"] and "read" not in doc["agents_spawned"][0]
    assert subagents.retry(doc, NOW + 1, log) is False  # still missing: nothing changed
    path.write_text(turn(300, 20))
    assert subagents.retry(doc, NOW + 2, log) is True  # a first turn: counted, still pending
    assert (doc["agents_spawned"][0]["tokens_used"], doc["tokens"]["saved"]) == (320, 320)
    assert [p["id"] for p in doc["pending_subagents"]] == ["a1"]
    assert subagents.retry(doc, NOW + 3, log) is False  # nothing new
    with path.open("a") as fh:
        fh.write(turn(4000, 50, "end_turn"))
    assert subagents.retry(doc, NOW + 4, log) is True
    assert (doc["agents_spawned"][0]["tokens_used"], doc["tokens"]["saved"]) == (4050, 4050)
    assert doc["pending_subagents"] == [] and log == []
    assert subagents.retry(doc, NOW + 5, log) is False


def test_retrying_stops_after_the_limit_keeping_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_text(turn(300, 20))
    doc, log = new_doc(), Log()
    subagents.record_stop(doc, "a1", str(path), NOW, log)
    assert subagents.retry(doc, NOW + subagents.PENDING_TTL - 1, log) is False
    assert len(doc["pending_subagents"]) == 1
    assert subagents.retry(doc, NOW + subagents.PENDING_TTL, log) is True
    assert doc["pending_subagents"] == [] and doc["agents_spawned"][0]["tokens_used"] == 320
    assert log == [
        f"subagent a1: transcript {path} still not complete 600 s after its stop; "
        "stopped retrying, 320 tokens counted"
    ]


def test_a_transcript_complete_at_the_first_retry_after_the_limit_still_counts(
    tmp_path: Path,
) -> None:
    """A retry reads before it checks the limit (a machine that slept through it)."""
    path = tmp_path / "agent-a1.jsonl"
    doc, log = new_doc(), Log()
    subagents.record_stop(doc, "a1", str(path), NOW, log)
    path.write_text(turn(700, 7, "end_turn"))
    assert subagents.retry(doc, NOW + 86400, log) is True
    assert doc["agents_spawned"][0]["tokens_used"] == 707 and log == []


def test_at_most_max_pending_wait(tmp_path: Path) -> None:
    doc, log = new_doc(), Log()
    for i in range(subagents.MAX_PENDING + 2):
        subagents.record_stop(doc, f"a{i}", str(tmp_path / f"agent-a{i}.jsonl"), NOW + i, log)
    ids = [p["id"] for p in doc["pending_subagents"]]
    assert ids == [f"a{i}" for i in range(2, subagents.MAX_PENDING + 2)]
    assert [line.split(":")[0] for line in log] == ["subagent a0", "subagent a1"]
    assert "too many subagents pending" in log[0]


def test_a_stop_without_a_transcript_path_is_not_pending() -> None:
    doc, log = new_doc(), Log()
    assert subagents.record_stop(doc, "a1", None, NOW, log) is False
    assert doc["pending_subagents"] == [] and doc["agents_spawned"][0]["completed"]
    assert log == ["subagent a1: no transcript to read; tokens not counted"]


def test_malformed_pending_entries_are_dropped_or_given_up() -> None:
    doc = work_session.normalize(
        {
            "pending_subagents": [
                {"id": "", "transcript": "/x.jsonl"},
                {"transcript": "/y.jsonl"},
                "a9",  # a bare id: no transcript, no time
                {"id": "a1", "transcript": 5, "since": NOW},
                {"id": "a1", "transcript": "/z.jsonl", "since": NOW, "note": "kept"},
            ]
        }
    )
    assert doc["pending_subagents"] == [
        {"id": "a9", "transcript": None, "since": None},
        {"id": "a1", "transcript": "/z.jsonl", "since": "2026-11-21T12:00:00Z", "note": "kept"},
    ]
    log = Log()
    assert subagents.retry(doc, NOW + 1, log) is True  # a9 has no time: given up at once
    assert [p["id"] for p in doc["pending_subagents"]] == ["a1"]
    assert log == [
        "subagent a9: transcript (none) pending since an unknown time; "
        "stopped retrying, 0 tokens counted"
    ]


def test_add_and_drop_pending_keep_one_entry_per_id() -> None:
    doc = new_doc()
    work_session.add_pending(doc, "a1", "/a1.jsonl", NOW)
    work_session.add_pending(doc, "a2", None, NOW)
    work_session.add_pending(doc, "a1", "/a1.jsonl", NOW + 60)
    assert [(p["id"], p["since"]) for p in doc["pending_subagents"]] == [
        ("a2", "2026-11-21T12:00:00Z"),
        ("a1", "2026-11-21T12:01:00Z"),
    ]
    assert work_session.drop_pending(doc, "a1") is True
    assert work_session.drop_pending(doc, "a1") is False
    assert [p["id"] for p in doc["pending_subagents"]] == ["a2"]


@pytest.mark.parametrize("count", [1, 2])
def test_reports_say_which_subagents_are_still_being_counted(tmp_path: Path, count: int) -> None:
    doc = new_doc()
    path = tmp_path / "agent-done.jsonl"
    path.write_text(turn(100, 1, "end_turn"))
    subagents.record_stop(doc, "done", str(path), NOW)
    for i in range(count):
        subagents.record_stop(doc, f"late{i}", str(tmp_path / f"agent-late{i}.jsonl"), NOW)
    report = work_session_report.token_report(doc)
    assert report["pending"] == count
    assert [(a["id"], a["pending"]) for a in report["subagents"]] == [
        ("done", False),
        *((f"late{i}", True) for i in range(count)),
    ]
    text = work_session_report.tokens_text(report)
    assert "  late0: 0 tokens (isolated, still being counted)" in text.splitlines()
    assert "  done: 101 tokens (isolated)" in text.splitlines()
    counting = f" ({count} subagent{'s' if count > 1 else ''} still being counted)"
    status = work_session_report.status_text(doc, NOW).splitlines()
    assert status[-1] == f"Token Savings from Isolation: 101{counting}"
    outcomes = work_session_report.closing_summary(doc, NOW)["outcomes"]
    assert (
        f"{count + 1} subagents spawned; 101 tokens kept out of the main context{counting}"
    ) in outcomes
