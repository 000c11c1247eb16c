"""The pure workspace rules: ids, timestamps, names, keywords, the template."""

from __future__ import annotations

import calendar
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.workspaces import workspace

NOW = calendar.timegm((2025, 1, 18, 14, 30, 22))


# --- ids and time ---------------------------------------------------------------


def test_id_has_the_seed_shape_in_utc() -> None:
    assert workspace.make_id(NOW, "a4f2") == "20250118-143022-a4f2"
    assert workspace.is_workspace_id("20250118-143022-a4f2")


@pytest.mark.parametrize(
    "name",
    [
        "20250118-143022-A4F2",
        "20250118-143022-a4f",
        "20250118_143022-a4f2",
        "2025011-1430220-a4f2",
        "../20250118-14302-a4",
        "20250118-143022-a4f2/",
        "20250118-14302x-a4f2",
        "",
        "\uff12\uff10\uff12\uff150118-143022-a4f2",  # full-width digits
    ],
)
def test_other_names_are_not_ids(name: str) -> None:
    assert not workspace.is_workspace_id(name)


def test_random_suffix_is_four_alphabet_characters() -> None:
    seen = {workspace.random_suffix() for _ in range(300)}
    assert all(len(s) == 4 and set(s) <= set(workspace.ID_ALPHABET) for s in seen)
    assert len(seen) > 290  # 36**4 possibilities: repeats are rare
    assert set("".join(seen)) == set(workspace.ID_ALPHABET)


# --- names ------------------------------------------------------------------------


def test_categories_are_the_seeds() -> None:
    for name in ("features", "documentation", "code", "refactoring", "testing", "tasks", "general"):
        assert workspace.check_category(name) == name
    with pytest.raises(workspace.WorkspaceError) as err:
        workspace.check_category("feature")
    assert "features, documentation, code, refactoring, testing, tasks, general" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("User Auth", "user-auth"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("  spaced   out  ", "spaced-out"),
        ("tab\tnew\nline\x00nul", "tab-new-line-nul"),
        ("Café Déjà-vu", "cafe-deja-vu"),
        ("api docs context", "api-docs"),
        ("snake_case_name", "snake_case_name"),
        ("..hidden", "hidden"),
    ],
)
def test_slug(task: str, expected: str) -> None:
    assert workspace.slug(task) == expected


@pytest.mark.parametrize("task", ["", "   ", "../..", "///", "\x00\x01", "日本語"])
def test_slug_refuses_names_without_letters(task: str) -> None:
    with pytest.raises(workspace.WorkspaceError):
        workspace.slug(task)


@given(st.text(max_size=200))
def test_slug_is_always_a_safe_file_name(task: str) -> None:
    try:
        out = workspace.slug(task)
    except workspace.WorkspaceError:
        return
    assert re.fullmatch(r"[a-z0-9_][a-z0-9_-]*", out)
    assert len(out) <= workspace.MAX_SLUG and ".." not in out
    assert workspace.check_relative(workspace.context_path("general", out))


@pytest.mark.parametrize(
    "rel",
    [
        "",
        "/abs/x.md",
        "a//b.md",
        "./a.md",
        "a/../b.md",
        "..",
        "a/..",
        ".manifest.json",
        ".manifest.json.lock",
        "a\x00b",
        "a\nb.md",
        "features/.x.md.123.abcdef01.tmp",
    ],
)
def test_check_relative_refuses_escapes_and_our_own_files(rel: str) -> None:
    with pytest.raises(workspace.WorkspaceError):
        workspace.check_relative(rel)


def test_check_relative_accepts_context_paths() -> None:
    for rel in ("features/x-context.md", "notes.md", "a/b/c.txt", "features/.manifest.json"):
        assert workspace.check_relative(rel) == rel


def test_split_workspace_path() -> None:
    root = "/p/.tmp/sessions"
    assert workspace.split_workspace_path(
        root, "/p/.tmp/sessions/20250118-143022-a4f2/code/x.md"
    ) == (
        "20250118-143022-a4f2",
        "code/x.md",
    )
    for path in (
        "/p/.tmp/sessions/20250118-143022-a4f2",
        "/p/.tmp/sessions/20250118-143022-a4f2/",
        "/p/.tmp/sessions/notanid/code/x.md",
        "/p/.tmp/sessionsX/20250118-143022-a4f2/a",
        "/p/.tmp/sessions/20250118-143022-a4f2/.manifest.json",
        "/q/x.md",
    ):
        assert workspace.split_workspace_path(root, path) is None


# --- keywords -----------------------------------------------------------------------


def test_keywords_from_path_follow_the_seed_example() -> None:
    assert workspace.keywords_from_path("features/user-auth-context.md") == [
        "user-auth",
        "features",
    ]
    assert workspace.keywords_from_path("tasks/user-auth-tasks.md") == [
        "user-auth",
        "user-auth-tasks",
        "tasks",
    ]
    assert workspace.keywords_from_path("Notes.MD") == ["notes"]


def test_merge_keywords_normalizes_and_dedupes() -> None:
    assert workspace.merge_keywords(["User Auth", " login "], ["user-auth", "", "LOGIN"]) == [
        "user-auth",
        "login",
    ]
    assert len(workspace.merge_keywords([f"k{i}" for i in range(100)])) == workspace.MAX_KEYWORDS


# --- the context file ---------------------------------------------------------------


def test_render_context_is_the_seed_template() -> None:
    text = workspace.render_context(
        "User Auth", "20250118-143022-a4f2", summary="Build login.", constraints="No new deps."
    )
    assert text == (
        "# Context: User Auth\nSession: 20250118-143022-a4f2\n\n"
        "## Request Summary\nBuild login.\n\n"
        "## Background\n[Relevant context and information]\n\n"
        "## Expected Output\n[What the subagent should produce]\n\n"
        "## Constraints\nNo new deps.\n"
    )


def test_wrap_body_adds_the_heading_only_when_missing() -> None:
    own = "# Context: Mine\nSession: x\n\nbody"
    assert workspace.wrap_body("T", "id", own) == own + "\n"
    assert (
        workspace.wrap_body("T  x", "id", "just text\n")
        == "# Context: T x\nSession: id\n\njust text\n"
    )


# --- hand-off ---------------------------------------------------------------------


def test_delegate_block_is_the_seeds() -> None:
    assert workspace.delegate_block(
        [".tmp/sessions/x/features/a-context.md", ".tmp/sessions/x/tasks/b.md"]
    ) == (
        "Related context available at:\n"
        "- .tmp/sessions/x/features/a-context.md\n"
        "- .tmp/sessions/x/tasks/b.md\n\n"
        "Read these files for full context on requirements and task breakdown."
    )


def test_recipient_is_one_printable_line() -> None:
    assert (
        workspace.validate_recipient(" @subagents/core/task-manager ")
        == "@subagents/core/task-manager"
    )
    for bad in ("", "a\nb", "x" * 201):
        with pytest.raises(workspace.WorkspaceError):
            workspace.validate_recipient(bad)
