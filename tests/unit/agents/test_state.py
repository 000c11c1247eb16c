"""state: the agent's document (pure): defaults, normalization, conversations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_hooks.agents import state

NOW = 1_800_000_000.0
SEED_FIELDS = (
    "registered",
    "agent_name",
    "reservations",
    "issue_id",
    "session_start",
    "files_created",
    "files_modified",
    "files_read",
)

SEED_ADR_DOCUMENT = {  # the seed ADR's example, as an older tool wrote it
    "registered": True,
    "agent_name": "BlueLake",
    "reservations": [
        {
            "paths": ["src/**/*.py"],
            "reason": "farmhand-42",
            "created_at": 1735320000,
            "expires_at": 1735323600,
        }
    ],
    "issue_id": "farmhand-42",
    "session_start": 1735319000,
    "files_created": ["src/new_file.py"],
    "files_modified": ["src/existing.py"],
    "files_read": ["README.md", "docs/arch.md"],
}


def _types_ok(doc: dict[str, Any]) -> None:
    fresh = state.fresh("x", NOW)
    assert set(doc) == set(fresh)
    for field in state.TRAIL_FIELDS:
        assert isinstance(doc[field], list) and all(isinstance(p, str) for p in doc[field])
        assert len(doc[field]) == len(set(doc[field]))
    for field in ("reservations", "conversations"):
        assert all(isinstance(item, dict) for item in doc[field])
    assert isinstance(doc["registered"], bool) and isinstance(doc["active"], bool)
    assert type(doc["session_start"]) is int and type(doc["last_activity"]) is int
    assert doc["pid"] is None or type(doc["pid"]) is int
    assert isinstance(doc["fingerprints"], dict)
    assert doc["workspace"] is None or isinstance(doc["workspace"], dict)
    assert all(isinstance(n, str) for n in doc["notices"])
    for field in ("issue_id", "conversation_id", "source", "project_root"):
        assert doc[field] is None or isinstance(doc[field], str)


def test_fresh_has_the_seed_fields_and_a_schema() -> None:
    doc = state.fresh("proj__cc_1", NOW)
    for field in SEED_FIELDS:
        assert field in doc
    assert doc["schema"] == state.SCHEMA_VERSION
    assert doc["agent_name"] == "proj__cc_1"
    assert doc["registered"] is False
    assert doc["session_start"] == doc["last_activity"] == int(NOW)
    _types_ok(doc)


@pytest.mark.parametrize("raw", [None, {}])
def test_missing_document_gets_defaults(raw: dict[str, Any] | None) -> None:
    assert state.normalize(raw, "a", NOW) == state.fresh("a", NOW)


def test_seed_adr_document_keeps_its_values() -> None:
    doc = state.normalize(copy.deepcopy(SEED_ADR_DOCUMENT), "BlueLake", NOW)
    for field in SEED_FIELDS:
        assert doc[field] == SEED_ADR_DOCUMENT[field]
    assert doc["schema"] == state.SCHEMA_VERSION
    assert doc["last_activity"] == SEED_ADR_DOCUMENT["session_start"]
    _types_ok(doc)


MISTYPED: list[tuple[str, Any, Any]] = [
    ("registered", "yes", False),
    ("registered", 1, False),
    ("issue_id", 42, None),
    ("session_start", "2026-01-01", int(NOW)),
    ("session_start", True, int(NOW)),
    ("session_start", 12.7, 12),
    ("files_created", "a.py", []),
    ("files_created", None, []),
    ("files_modified", ["/a", 3, None, "/a", "/b"], ["/a", "/b"]),
    ("files_read", {"a": 1}, []),
    ("workspace_files", [["x"]], []),
    ("conversation_id", ["x"], None),
    ("source", 3, None),
    ("project_root", {}, None),
    ("pid", "123", None),
    ("pid", True, None),
    ("pid", 3.5, None),
    ("active", "true", False),
    ("last_activity", None, int(NOW)),
    ("reservations", {"a": 1}, []),
    ("reservations", [1, {"id": "r"}, "x"], [{"id": "r"}]),
    ("conversations", "c", []),
    ("fingerprints", [], {}),
    ("fingerprints", {"/a": "1:2:3", "/b": 5, "/c": None}, {"/a": "1:2:3"}),
    # strings are kept as they are: `fingerprints.read` judges one where it is used
    ("fingerprints", {"/a": "1:2:3", "/c": "x"}, {"/a": "1:2:3", "/c": "x"}),
    # an earlier release's lists, in today's form
    ("fingerprints", {"/a": [1, 2, 10], "/b": [1, 2], "/c": "x"}, {"/a": "1:2:a", "/c": "x"}),
    ("notices", "n", []),
    ("notices", ["a", 1, "b"], ["a", "b"]),
    ("workspace", "w", None),
    ("agent_name", "someone-else", "a"),
    ("schema", 99, state.SCHEMA_VERSION),
    # numbers JSON allows but Python's int() refuses or a later os call cannot take
    ("session_start", 1e400, int(NOW)),
    ("last_activity", -1e400, int(NOW)),
]


@pytest.mark.parametrize(("field", "value", "expected"), MISTYPED)
def test_mistyped_fields_get_defaults(field: str, value: Any, expected: Any) -> None:
    doc = state.normalize({field: value}, "a", NOW)
    assert doc[field] == expected
    _types_ok(doc)


def test_normalize_bounds_notices_and_unknown_keys_drop() -> None:
    doc = state.normalize({"notices": [f"n{i}" for i in range(50)], "mystery": 1}, "a", NOW)
    assert doc["notices"] == [f"n{i}" for i in range(50 - state.MAX_NOTICES, 50)]
    assert "mystery" not in doc


def test_notices_are_taken_once() -> None:
    doc = state.fresh("a", NOW)
    for i in range(state.MAX_NOTICES + 5):
        state.add_notice(doc, f"n{i}")
    taken = state.take_notices(doc)
    assert taken == [f"n{i}" for i in range(5, state.MAX_NOTICES + 5)]
    assert state.take_notices(doc) == []


def _with_trail(conversation: str | None = "c1") -> dict[str, Any]:
    doc = state.fresh("a", NOW - 100)
    doc.update(
        conversation_id=conversation,
        files_created=["/p/new"],
        files_modified=["/p/mod"],
        files_read=["/p/r"],
        workspace_files=["/p/.tmp/sessions/x/n.md"],
        fingerprints={"/p/new": "1:2:3"},
        workspace={"id": "w", "path": "/p/w", "conversation_id": conversation},
    )
    return doc


def _begin(
    doc: dict[str, Any],
    source: str,
    conversation: str | None = "c2",
    archived: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    return state.begin_conversation(
        doc,
        conversation_id=conversation,
        source=source,
        project_root="/p",
        pid=4242,
        now=NOW,
        archived=archived,
    )


@pytest.mark.parametrize("source", ["startup", "clear"])
def test_startup_and_clear_begin_a_new_trail_and_hand_back_the_old(source: str) -> None:
    doc = _with_trail()
    before = copy.deepcopy(doc)
    archived = _begin(doc, source)
    assert archived is not None
    assert archived["conversation_id"] == "c1"
    for field in (*state.TRAIL_FIELDS, "fingerprints", "workspace", "session_start"):
        assert archived[field] == before[field]
    for field in state.TRAIL_FIELDS:
        assert doc[field] == []
    assert doc["fingerprints"] == {} and doc["workspace"] is None
    assert doc["session_start"] == int(NOW)
    _check_registered(doc, source)


def test_startup_without_a_trail_archives_nothing() -> None:
    doc = state.fresh("a", NOW - 100)
    assert _begin(doc, "startup") is None
    _check_registered(doc, "startup")


@pytest.mark.parametrize("source", ["resume", "compact", "unknown", "some-future-source"])
def test_resume_compact_and_unknown_sources_keep_the_trail(source: str) -> None:
    doc = _with_trail()
    before = copy.deepcopy(doc)
    assert _begin(doc, source, conversation="c1") is None
    for field in (*state.TRAIL_FIELDS, "fingerprints", "workspace", "session_start"):
        assert doc[field] == before[field]
    _check_registered(doc, source, conversation="c1")


def test_resume_of_an_archived_conversation_restores_it_and_archives_the_current() -> None:
    old = _with_trail("c1")
    archived_c1 = state.trail(old)
    current = state.fresh("a", NOW - 50)
    current.update(conversation_id="c2", files_modified=["/p/other"], session_start=int(NOW - 50))
    handed_back = _begin(current, "resume", conversation="c1", archived=archived_c1)
    assert handed_back is not None and handed_back["conversation_id"] == "c2"
    assert handed_back["files_modified"] == ["/p/other"]
    for field in (*state.TRAIL_FIELDS, "fingerprints", "workspace", "session_start"):
        assert current[field] == archived_c1[field], field
    _check_registered(current, "resume", conversation="c1")


def test_resume_of_the_current_conversation_ignores_the_archive() -> None:
    doc = _with_trail("c1")
    stale = state.trail(_with_trail("c1")) | {"files_read": ["/p/stale"]}
    doc["files_read"] = ["/p/fresh"]
    assert _begin(doc, "resume", conversation="c1", archived=stale) is None
    assert doc["files_read"] == ["/p/fresh"]


def test_resume_restores_a_malformed_archive_safely() -> None:
    doc = _with_trail("c2")
    assert (
        _begin(doc, "resume", conversation="c1", archived={"files_read": "oops", "fingerprints": 3})
        is not None
    )
    assert doc["files_read"] == [] and doc["fingerprints"] == {}
    _types_ok(doc)


def _check_registered(doc: dict[str, Any], source: str, conversation: str = "c2") -> None:
    assert doc["registered"] is True and doc["active"] is True
    assert doc["conversation_id"] == conversation
    assert doc["source"] == source
    assert doc["project_root"] == "/p" and doc["pid"] == 4242
    assert doc["last_activity"] == int(NOW)
    assert doc["conversations"][-1] == {"id": conversation, "source": source, "started": int(NOW)}
    _types_ok(doc)


def test_conversations_are_bounded() -> None:
    doc = state.fresh("a", NOW)
    for i in range(state.MAX_CONVERSATIONS + 7):
        _begin(doc, "startup", conversation=f"c{i}")
    ids = [c["id"] for c in doc["conversations"]]
    assert ids == [f"c{i}" for i in range(7, state.MAX_CONVERSATIONS + 7)]


def test_touch_and_end_conversation() -> None:
    doc = _with_trail()
    _begin(doc, "startup")
    state.touch(doc, NOW + 5.9)
    assert doc["last_activity"] == int(NOW + 5) and doc["active"] is True
    state.end_conversation(doc, NOW + 10)
    assert doc["active"] is False and doc["last_activity"] == int(NOW + 10)
    assert doc["conversation_id"] == "c2"  # kept: the CLI still names the last conversation


def test_has_trail() -> None:
    doc = state.fresh("a", NOW)
    assert not state.has_trail(doc)
    doc["workspace_files"] = ["/p/.tmp/sessions/x"]
    assert state.has_trail(doc)
