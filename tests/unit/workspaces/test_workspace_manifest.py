"""The pure manifest rules: the seed's structure, tracking and untracking files
with the index and `last_activity` in step, the forgiving reader, the search."""

from __future__ import annotations

import calendar

from agent_hooks.workspaces import workspace_manifest

NOW = calendar.timegm((2025, 1, 18, 14, 30, 22))


def test_manifest_operations_keep_index_and_activity_in_step() -> None:
    doc = workspace_manifest.new_manifest("20250118-143022-a4f2", NOW)
    assert list(doc) == [
        "session_id",
        "created_at",
        "last_activity",
        "context_files",
        "context_index",
    ]
    assert doc["created_at"] == doc["last_activity"] == "2025-01-18T14:30:22Z"
    assert workspace_manifest.add_file(
        doc,
        "features/user-auth-context.md",
        NOW + 1,
        recipient="@subagents/core/task-manager",
        keywords=["authentication"],
    )
    assert workspace_manifest.add_file(
        doc, "tasks/user-auth-tasks.md", NOW + 2, keywords=["breakdown"]
    )
    assert doc["last_activity"] == "2025-01-18T14:30:24Z"
    assert doc["context_files"]["features/user-auth-context.md"] == {
        "created": "2025-01-18T14:30:23Z",
        "for": "@subagents/core/task-manager",
        "keywords": ["authentication", "user-auth", "features"],
    }
    assert doc["context_index"]["user-auth"] == [
        "features/user-auth-context.md",
        "tasks/user-auth-tasks.md",
    ]
    assert not workspace_manifest.add_file(
        doc, "tasks/user-auth-tasks.md", NOW + 3, keywords=["more"]
    )
    assert doc["context_files"]["tasks/user-auth-tasks.md"]["created"] == "2025-01-18T14:30:24Z"
    assert "more" in doc["context_index"]
    assert workspace_manifest.remove_file(doc, "tasks/user-auth-tasks.md", NOW + 4)
    assert doc["last_activity"] == "2025-01-18T14:30:26Z"
    assert doc["context_index"] == workspace_manifest.rebuild_index(doc["context_files"])
    assert "breakdown" not in doc["context_index"] and "more" not in doc["context_index"]
    assert doc["context_index"]["user-auth"] == ["features/user-auth-context.md"]
    assert not workspace_manifest.remove_file(doc, "tasks/user-auth-tasks.md", NOW + 5)


def test_normalize_manifest_repairs_types_and_drops_unsafe_paths() -> None:
    raw = {
        "session_id": "other",
        "created_at": "yesterday",
        "last_activity": "2025-01-18T14:35:10Z",
        "context_files": {
            "../escape.md": {},
            "a/b.md": {"keywords": ["X", 3], "for": 7},
            "c.md": "junk",
        },
        "context_index": {"stale": ["gone.md"]},
    }
    doc = workspace_manifest.normalize_manifest(raw, "20250118-143022-a4f2", NOW)
    assert doc["session_id"] == "20250118-143022-a4f2"
    assert doc["created_at"] == "2025-01-18T14:30:22Z"
    assert doc["last_activity"] == "2025-01-18T14:35:10Z"
    assert set(doc["context_files"]) == {"a/b.md", "c.md"}
    assert doc["context_files"]["a/b.md"] == {
        "created": doc["created_at"],
        "for": "",
        "keywords": ["x"],
    }
    assert doc["context_index"] == {"x": ["a/b.md"]}


def test_find_ranks_by_keywords_matched_and_filters_by_category() -> None:
    doc = workspace_manifest.new_manifest("20250118-143022-a4f2", NOW)
    workspace_manifest.add_file(doc, "features/user-auth-context.md", NOW, keywords=["login"])
    workspace_manifest.add_file(doc, "tasks/user-auth-tasks.md", NOW)
    workspace_manifest.add_file(doc, "documentation/api-docs-context.md", NOW)
    assert workspace_manifest.find(doc, ["auth", "login"]) == [
        ("features/user-auth-context.md", 2),
        ("tasks/user-auth-tasks.md", 1),
    ]
    assert workspace_manifest.find(doc, ["user-auth"], "tasks") == [("tasks/user-auth-tasks.md", 1)]
    assert workspace_manifest.find(doc, [], "documentation") == [
        ("documentation/api-docs-context.md", 0)
    ]
    assert workspace_manifest.find(doc, ["nothing"]) == []
