"""Tests for agent_hooks.work_sessions.work_session_store: locations, start/switch/close, the
archive, crash leftovers and concurrency."""

from __future__ import annotations

import calendar
import json
import multiprocessing
import os
from pathlib import Path

import pytest

from agent_hooks import jsonio, storage, timestamps
from agent_hooks.work_sessions import work_session, work_session_store

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))


def new(
    store_: work_session_store.Store, client: str, project: str, now: float = NOW, **kw: bool
) -> dict:
    doc = work_session.new_document(
        work_session.make_id("SES", client, project, now), "SES", client, project, now
    )
    store_.start(doc, now, close_active=kw.get("close_active", False))
    return doc


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


# ------------------------------------------------------------- start / switch


def test_start_writes_the_document_and_the_pointer(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path / "sessions"))
    doc = new(s, "ACME", "AUDIT")
    path = tmp_path / "sessions" / "SES202611-ACME-AUDIT.json"
    assert read_json(path) == doc
    assert read_json(tmp_path / "sessions" / "active-session.json") == {
        "session_id": "SES202611-ACME-AUDIT",
        "since": "2026-11-21T12:00:00Z",
    }
    assert path.stat().st_mode & 0o777 == 0o600
    assert s.active_id() == "SES202611-ACME-AUDIT"
    found = s.require_active()
    assert found.doc == doc and not found.archived


def test_start_while_active_is_refused_unless_the_active_one_is_closed(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    first = new(s, "ACME", "AUDIT")
    second = work_session.new_document("SES202611-ACME-API", "SES", "ACME", "API", NOW + 60)
    with pytest.raises(work_session_store.ActiveSessionExists) as info:
        s.start(second, NOW + 60, close_active=False)
    assert info.value.session_id == "SES202611-ACME-AUDIT"
    assert "Active session found: SES202611-ACME-AUDIT" in str(info.value)
    assert s.active_id() == "SES202611-ACME-AUDIT"
    assert not (tmp_path / "SES202611-ACME-API.json").exists()
    closed = s.start(second, NOW + 60, close_active=True)
    assert closed is not None and closed.doc["session_id"] == first["session_id"]
    archived = read_json(tmp_path / "archive" / "SES202611-ACME-AUDIT.json")
    assert archived["status"] == "closed" and archived["closing_summary"][
        "closed"
    ] == timestamps.iso(NOW + 60)
    assert not (tmp_path / "SES202611-ACME-AUDIT.json").exists()
    assert s.active_id() == "SES202611-ACME-API"


def test_starting_an_existing_id_is_refused(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    new(s, "ACME", "AUDIT")
    s.close(NOW + 5)
    again = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW + 10)
    with pytest.raises(work_session.WorkSessionError, match=r"already exists \(archived\).*switch"):
        s.start(again, NOW + 10, close_active=True)


def test_switch_keeps_both_files_intact(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    audit = new(s, "ACME", "AUDIT")
    s.update_active(lambda d: work_session.add_milestone(d, "Audit plan") is not None, NOW + 1)
    # a second live (paused) work session, as a hand-made or earlier-switched one would be
    other = work_session.new_document("ENG202611-TESLA-API", "ENG", "TESLA", "API", NOW + 2)
    other.update(notes=["keep me"], status="paused")
    s.save(work_session_store.Found(other, "", False))
    before = {p.name: read_json(p) for p in tmp_path.glob("*20261*.json")}

    target, previous = s.switch("eng202611-tesla-api", NOW + 10)
    assert target.doc["session_id"] == "ENG202611-TESLA-API" and target.doc["status"] == "active"
    assert previous is not None and previous.doc["status"] == "paused"
    assert s.active_id() == "ENG202611-TESLA-API"
    after = {p.name: read_json(p) for p in tmp_path.glob("*20261*.json")}
    assert set(after) == set(before) == {"SES202611-ACME-AUDIT.json", "ENG202611-TESLA-API.json"}
    for name, doc in after.items():  # only status and last_updated changed
        assert {k: v for k, v in doc.items() if k not in ("status", "last_updated")} == {
            k: v for k, v in before[name].items() if k not in ("status", "last_updated")
        }
    assert after["SES202611-ACME-AUDIT.json"]["milestones"] == [
        {"name": "Audit plan", "completed": None}
    ]
    assert after["ENG202611-TESLA-API.json"]["notes"] == ["keep me"]
    assert audit["session_id"] == "SES202611-ACME-AUDIT"

    back, paused = s.switch("SES202611-ACME-AUDIT", NOW + 20)
    assert back.doc["status"] == "active" and paused is not None
    assert read_json(tmp_path / "ENG202611-TESLA-API.json")["status"] == "paused"


def test_switch_to_an_unknown_or_bad_id(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    with pytest.raises(work_session.WorkSessionError, match="no work session SES202611-NO-SUCH"):
        s.switch("SES202611-NO-SUCH", NOW)
    with pytest.raises(work_session.WorkSessionError, match="PREFIXYYYYMM"):
        s.switch("../../etc/passwd", NOW)


def test_close_archives_and_switch_reopens(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    new(s, "ACME", "AUDIT")
    s.update_active(lambda d: work_session.add_note(d, "OAuth2 over JWT") is None, NOW + 1)
    found = s.close(NOW + 3600)
    archived = tmp_path / "archive" / "SES202611-ACME-AUDIT.json"
    assert found.path == str(archived) and found.archived
    assert not (tmp_path / "SES202611-ACME-AUDIT.json").exists()
    assert not (tmp_path / "active-session.json").exists()
    doc = read_json(archived)
    assert doc["status"] == "closed" and doc["closed"] == "2026-11-21T13:00:00Z"
    assert doc["closing_summary"]["decisions"] == ["OAuth2 over JWT"]
    assert doc["closing_summary"]["duration"] == "1h 0m"
    with pytest.raises(work_session_store.NoActiveSession, match="No active session"):
        s.close(NOW + 3601)
    reopened, _ = s.switch("SES202611-ACME-AUDIT", NOW + 7200)
    assert reopened.doc["status"] == "active" and not reopened.archived
    assert not archived.exists() and (tmp_path / "SES202611-ACME-AUDIT.json").exists()


def test_a_crash_leftover_copy_loses_to_the_newer_one(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    doc = new(s, "ACME", "AUDIT")
    live = tmp_path / "SES202611-ACME-AUDIT.json"
    (tmp_path / "archive").mkdir()
    closed = dict(doc, status="closed", last_updated=timestamps.iso(NOW + 100))
    (tmp_path / "archive" / live.name).write_bytes(
        work_session_store.encode(closed)
    )  # close died before unlink
    found = s.find("SES202611-ACME-AUDIT")
    assert found is not None and found.archived and found.doc["status"] == "closed"
    assert [f.doc["status"] for f in s.all()[0]] == ["closed"]  # listed once


def test_pointer_to_a_missing_file_is_reported(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    s.set_pointer("SES202611-GONE-X", NOW)
    with pytest.raises(work_session_store.NoActiveSession, match="pointer names SES202611-GONE-X"):
        s.require_active()
    (tmp_path / "active-session.json").write_text('{"session_id": "../../etc"}')
    assert s.active_id() is None


def test_corrupt_and_planted_files_are_refused_not_overwritten(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    new(s, "ACME", "AUDIT")
    path = tmp_path / "SES202611-ACME-AUDIT.json"
    path.write_text("{broken")
    with pytest.raises(work_session.WorkSessionError, match="is not valid JSON"):
        s.update_active(lambda d: True, NOW)
    assert path.read_text() == "{broken"
    found, problems = s.all()
    assert found == [] and len(problems) == 1 and "SES202611-ACME-AUDIT.json" in problems[0]
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(storage.StorageError, match="symlink"):
        s.find("SES202611-ACME-AUDIT")


def test_update_active_respects_statuses(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    new(s, "ACME", "AUDIT")
    s.update_active(lambda d: d.update(status="paused") is None, NOW)
    calls = []
    assert s.update_active(lambda d: calls.append(1) is None, NOW, statuses=("active",)) is None
    assert calls == []


def test_encode_is_json_one_field_per_line() -> None:
    doc = work_session.new_document("SES202611-ACME-AUDIT", "SES", "ACME", "AUDIT", NOW)
    doc["notes"] = ["a", 'b "quoted"\nnewline']
    doc["conversations"] = {"c1": {"current": 1}}
    data = work_session_store.encode(doc)
    assert jsonio.loads(data) == doc
    lines = data.decode().splitlines()
    assert '  "session_id": "SES202611-ACME-AUDIT",' in lines and '    "a",' in lines


# ------------------------------------------------------------------ concurrency


def _add_artifacts(directory: str, worker: int, count: int) -> None:
    s = work_session_store.Store(directory, durable=False)
    for i in range(count):
        s.update_active(
            lambda d, i=i: work_session.record_artifacts(
                d, [f"w{worker}/f{i}"], f"cc_{worker}", NOW
            ),
            NOW,
        )


def test_concurrent_updates_lose_nothing(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    new(s, "ACME", "AUDIT")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_artifacts, args=(str(tmp_path), w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    paths = {a["path"] for a in s.require_active().doc["artifacts"]}
    assert paths == {f"w{w}/f{i}" for w in range(4) for i in range(25)}


def test_store_writes_are_private(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path / "new" / "sessions"))
    new(s, "ACME", "AUDIT")
    assert os.stat(tmp_path / "new" / "sessions").st_mode & 0o777 == 0o700
    assert os.stat(tmp_path / "new" / "sessions" / "active-session.json").st_mode & 0o777 == 0o600
