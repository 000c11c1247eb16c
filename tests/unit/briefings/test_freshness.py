"""Stale-context detection: the decision table, fingerprints, critical files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import tool_use
from agent_hooks.agents import state, trail
from agent_hooks.briefings import freshness
from agent_hooks.briefings.freshness import Decision

NOW = 1_795_000_000.0


def touched(project: Path, names: list[str], field: str = tool_use.READ) -> dict[str, Any]:
    """A state document whose trail read (or modified) `names`, as PostToolUse records them."""
    doc = state.fresh("proj__cc_1", NOW)
    found = []
    for name in names:
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(f"original {name}\n")
        found.append((field, str(path)))
    trail.record(doc, found, 500, trail.workspace_prefix(str(project)))
    return doc


def change(path: Path, text: str = "changed by someone else\n") -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a distinct mtime


def verdict(doc: dict[str, Any], project: Path, **kw: Any) -> freshness.Report:
    return freshness.check(doc, str(project), freshness.critical_globs({}, str(project)), **kw)


NAMES = [f"src/m{i}.py" for i in range(8)]


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (0, Decision.RESUME),
        (1, Decision.RESUME_WITH_UPDATE),
        (5, Decision.RESUME_WITH_UPDATE),
        (6, Decision.START_FRESH_WITH_BRIEFING),
    ],
)
def test_the_decision_table(project: Path, changed: int, expected: Decision) -> None:
    doc = touched(project, NAMES)
    for name in NAMES[:changed]:
        change(project / name)
    report = verdict(doc, project)
    assert report.decision is expected
    assert report.examined == len(NAMES)
    assert sorted(report.changed) == sorted(str(project / n) for n in NAMES[:changed])
    assert report.critical == []


def test_one_critical_file_means_start_fresh(project: Path) -> None:
    doc = touched(project, ["src/a.py", "pyproject.toml", "web/package-lock.json"])
    change(project / "web" / "package-lock.json")
    report = verdict(doc, project)
    assert report.decision is Decision.START_FRESH_WITH_BRIEFING
    assert report.critical == [str(project / "web" / "package-lock.json")]
    line = "\n".join(freshness.context_lines(report, str(project)))
    assert "start_fresh_with_briefing" in line and "web/package-lock.json (critical)" in line


def test_the_agents_own_edit_does_not_count(project: Path) -> None:
    doc = touched(project, ["src/a.py", "src/b.py"])
    own = project / "src" / "a.py"
    change(own, "my own edit\n")
    # PostToolUse records the agent's Edit and refreshes the fingerprint
    trail.record(doc, [(tool_use.MODIFIED, str(own))], 500)
    assert verdict(doc, project).decision is Decision.RESUME
    change(project / "src" / "b.py")
    report = verdict(doc, project)
    assert (report.decision, report.changed) == (
        Decision.RESUME_WITH_UPDATE,
        [str(project / "src/b.py")],
    )


def test_the_agents_edit_in_another_conversation_does_not_count(project: Path) -> None:
    resumed = touched(project, ["src/a.py"])
    later = touched(project, [])
    change(project / "src" / "a.py", "edited in a later conversation\n")
    trail.record(later, [(tool_use.MODIFIED, str(project / "src/a.py"))], 500)
    assert verdict(resumed, project).decision is Decision.RESUME_WITH_UPDATE
    marks = freshness.own_contents([state.trail(later)])
    assert verdict(resumed, project, own=marks).decision is Decision.RESUME
    # what it merely read in the later conversation is not its own change
    reader = touched(project, [])
    change(project / "src" / "a.py", "someone else again\n")
    trail.record(reader, [(tool_use.READ, str(project / "src/a.py"))], 500)
    marks = freshness.own_contents([state.trail(reader)])
    assert verdict(resumed, project, own=marks).decision is Decision.RESUME_WITH_UPDATE


def as_earlier_release(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc`'s trail as a release before the string form stored it: each fingerprint
    a list `[mtime_ns, size, checksum]`."""
    lists = {p: [int(x, 16) for x in m.split(":")] for p, m in doc["fingerprints"].items()}
    return {**doc, "fingerprints": lists}


def test_fingerprints_an_earlier_release_stored_are_judged_alike(project: Path) -> None:
    """An archived trail (never normalized) keeps the lists it was written with: the
    conversation resumed after an upgrade is judged exactly as before it."""
    resumed = touched(project, ["src/a.py", "src/b.py"])
    later = touched(project, [])
    change(project / "src" / "a.py", "edited in a later conversation\n")
    trail.record(later, [(tool_use.MODIFIED, str(project / "src/a.py"))], 500)
    old, old_later = as_earlier_release(resumed), as_earlier_release(state.trail(later))
    assert isinstance(old["fingerprints"][str(project / "src/b.py")], list)
    assert verdict(old, project).changed == [str(project / "src/a.py")]
    own = freshness.own_contents([old_later])
    assert own == freshness.own_contents([state.trail(later)]) and own
    assert verdict(old, project, own=own).decision is Decision.RESUME


def test_a_touch_without_a_content_change_does_not_count(project: Path) -> None:
    doc = touched(project, ["src/a.py"])
    path = project / "src" / "a.py"
    os.utime(path, (NOW + 500, NOW + 500))
    assert verdict(doc, project).decision is Decision.RESUME


def test_same_size_same_mtime_is_trusted_without_reading(project: Path) -> None:
    doc = touched(project, ["src/a.py"])
    path = project / "src" / "a.py"
    st = path.stat()
    path.write_text("X" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the cheap test cannot see it
    assert verdict(doc, project).decision is Decision.RESUME


def test_deleted_and_appeared_files_count(project: Path) -> None:
    doc = touched(project, ["src/a.py"])
    (project / "src" / "a.py").unlink()
    assert verdict(doc, project).changed == [str(project / "src/a.py")]
    doc = state.fresh("x", NOW)
    doc["files_read"] = [str(project / "later.py")]  # recorded without a fingerprint: absent then
    assert verdict(doc, project).decision is Decision.RESUME
    (project / "later.py").write_text("now here")
    assert verdict(doc, project).changed == [str(project / "later.py")]


def test_workspace_files_are_not_project_context(project: Path) -> None:
    ws_file = project / ".tmp" / "sessions" / "20261121-120000-aaaa" / "code" / "x-context.md"
    doc = touched(project, [str(ws_file.relative_to(project))])
    assert doc["workspace_files"] == [str(ws_file)]
    change(ws_file)
    report = verdict(doc, project)
    assert (report.decision, report.examined) == (Decision.RESUME, 0)


def test_critical_globs_from_the_environment_and_the_project_file(project: Path) -> None:
    defaults = freshness.critical_globs({}, str(project))
    assert "pyproject.toml" in defaults and "*.lock" in defaults
    assert freshness.critical_globs({"AGENT_HOOKS_CRITICAL_FILES": "a.txt, docs/*.md"}, None) == [
        "a.txt",
        "docs/*.md",
    ]
    (project / ".agent-hooks").mkdir()
    (project / ".agent-hooks" / "critical-files").write_text("# ours\nschema/*.sql\n\n/Makefile\n")
    assert freshness.critical_globs({"AGENT_HOOKS_CRITICAL_FILES": "a.txt"}, str(project)) == [
        "a.txt",
        "schema/*.sql",
        "/Makefile",
    ]
    match = freshness.CriticalMatcher(["schema/*.sql", "/Makefile", "*.lock", "bad["])
    assert match("schema/users.sql") and not match("x/schema/users.sql")
    assert match("Makefile") and not match("sub/Makefile")
    assert match("Cargo.lock") and match("deep/dir/poetry.lock")
    assert not match("src/lock.py") and not match(None)
    assert match.invalid == ["bad["]


def test_a_configured_critical_file_starts_fresh(project: Path) -> None:
    doc = touched(project, ["schema/users.sql"])
    change(project / "schema" / "users.sql")
    assert verdict(doc, project).decision is Decision.RESUME_WITH_UPDATE
    report = freshness.check(
        doc,
        str(project),
        freshness.critical_globs({"AGENT_HOOKS_CRITICAL_FILES": "schema/*.sql"}, str(project)),
    )
    assert report.decision is Decision.START_FRESH_WITH_BRIEFING


def test_decide_is_one_enum_value() -> None:
    assert [freshness.decide(n, 0) for n in (0, 1, 5, 6)] == [
        Decision.RESUME,
        Decision.RESUME_WITH_UPDATE,
        Decision.RESUME_WITH_UPDATE,
        Decision.START_FRESH_WITH_BRIEFING,
    ]
    assert freshness.decide(1, 1) is Decision.START_FRESH_WITH_BRIEFING
    assert Decision.RESUME_WITH_UPDATE == "resume_with_update"


def test_critical_globs_are_a_gitignore_list_with_exclusions() -> None:
    match = freshness.CriticalMatcher(["*.lock", "!docs/*.lock", "config/"])
    assert match("Cargo.lock") and match("deep/poetry.lock")
    assert not match("docs/example.lock")  # excluded by the later `!` line
    assert match("config/app.toml") and not match("src/config.py")
