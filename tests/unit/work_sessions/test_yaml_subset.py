"""Tests for agent_hooks.work_sessions.yaml_subset: the seed's YAML format, read by the
parser and imported by the store on first write."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from agent_hooks.work_sessions import work_session, work_session_store, yaml_subset

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


SEED_YAML = """\
# SES202501-ACME-AUDIT.yaml
session_id: "SES202501-ACME-AUDIT"
created: "2025-01-15T10:30:00Z"
last_updated: "2025-01-15T14:45:00Z"
status: "active"  # active, paused, closed

# Identification
client: "ACME"
project: "AUDIT"
prefix: "SES"

# Token tracking
tokens:
  max: 150000              # Token budget limit (default: 150000)
  initial: 0
  current: 45000
  peak: 52000              # Highest token usage during session
  saved_by_isolation: 145000

# Agent tracking
agents_spawned:
  - id: "agent-123"
    type: "analyst"
    started: "2025-01-15T10:35:00Z"
    completed: "2025-01-15T10:42:00Z"
    tokens_used: 32000
    output_file: "_bmad-output/temp/analyst-123.md"

# Artifacts produced
artifacts:
  - path: "docs/prd.md"
    created: "2025-01-15T11:00:00Z"
    agent: "pm"
  - path: docs/architecture.md
    created: 2025-01-15T12:30:00Z
    agent: 'architect'

# Progress tracking
milestones:
  - name: "Requirements Complete"
    completed: "2025-01-15T11:30:00Z"
  - name: "Implementation Started"
    completed: null

# Context for resume
context_summary: |
  Working on ACME security audit project.
  PRD complete, architecture approved.

  Next: Complete story 1-2-user-login.

# Session notes
notes:
  - "Client prefers OAuth2 over JWT"
  - "Performance requirement: <200ms response time"
"""


def test_the_seeds_yaml_format_is_read() -> None:
    doc = work_session.normalize(yaml_subset.parse_yaml(SEED_YAML))
    assert doc["tokens"] == {
        "max": 150000,
        "initial": 0,
        "current": 45000,
        "peak": 52000,
        "saved": 145000,
    }
    assert doc["agents_spawned"] == [
        {
            "id": "agent-123",
            "type": "analyst",
            "started": "2025-01-15T10:35:00Z",
            "completed": "2025-01-15T10:42:00Z",
            "tokens_used": 32000,
            "output_file": "_bmad-output/temp/analyst-123.md",
        }
    ]
    assert doc["artifacts"] == [
        {"path": "docs/prd.md", "created": "2025-01-15T11:00:00Z", "agent": "pm"},
        {"path": "docs/architecture.md", "created": "2025-01-15T12:30:00Z", "agent": "architect"},
    ]
    assert doc["milestones"] == [
        {"name": "Requirements Complete", "completed": "2025-01-15T11:30:00Z"},
        {"name": "Implementation Started", "completed": None},
    ]
    assert doc["context_summary"] == (
        "Working on ACME security audit project.\nPRD complete, architecture approved.\n\n"
        "Next: Complete story 1-2-user-login.\n"
    )
    assert doc["notes"] == [
        "Client prefers OAuth2 over JWT",
        "Performance requirement: <200ms response time",
    ]
    assert (doc["status"], doc["client"], doc["last_updated"]) == (
        "active",
        "ACME",
        "2025-01-15T14:45:00Z",
    )


def test_the_seeds_start_template_with_empty_flow_values() -> None:
    raw = yaml_subset.parse_yaml(
        'session_id: "X"\ntokens:\n  max: 150000\n  saved: 0\nagents_spawned: []\n'
        "artifacts: []\nmilestones: []\ncontext_summary: \"\"\nnotes:\n- a\n- 'it''s'\nextra: {}\n"
    )
    assert raw == {
        "session_id": "X",
        "tokens": {"max": 150000, "saved": 0},
        "agents_spawned": [],
        "artifacts": [],
        "milestones": [],
        "context_summary": "",
        "notes": ["a", "it's"],
        "extra": {},
    }


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\n  b: 2\n", 2),
        ("a: [1, 2]\n", 1),
        ("a: &anchor 1\n", 1),
        ("a:\n\t- x\n", 2),
        ('a: "open\n', 1),
        ("just text\n", 1),
        ('a: "x" trailing\n', 1),
    ],
)
def test_yaml_beyond_the_subset_is_refused_with_the_line(text: str, line: int) -> None:
    with pytest.raises(
        work_session.WorkSessionError, match=f"f.yaml: line {line}: .*convert the file to JSON"
    ):
        yaml_subset.parse_yaml(text, "f.yaml")


def test_a_yaml_session_is_found_listed_and_imported_on_first_write(tmp_path: Path) -> None:
    s = work_session_store.Store(str(tmp_path))
    (tmp_path / "SES202501-ACME-AUDIT.yaml").write_text(SEED_YAML)
    found, problems = s.all()
    assert problems == [] and [f.doc["session_id"] for f in found] == ["SES202501-ACME-AUDIT"]
    target, _ = s.switch("SES202501-ACME-AUDIT", NOW)
    assert target.doc["tokens"]["saved"] == 145000
    assert (
        read_json(tmp_path / "SES202501-ACME-AUDIT.json")["milestones"][0]["name"]
        == "Requirements Complete"
    )
    assert not (tmp_path / "SES202501-ACME-AUDIT.yaml").exists()
    assert (tmp_path / "SES202501-ACME-AUDIT.yaml.imported").read_text() == SEED_YAML
    assert s.active_id() == "SES202501-ACME-AUDIT"
