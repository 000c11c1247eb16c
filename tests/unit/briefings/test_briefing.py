"""Briefings: the seed's shape, trimming at the limit, the store, and the files
changed since the last session (with a real git repository)."""

from __future__ import annotations

import calendar
import os
from pathlib import Path

import pytest

from agent_hooks import identity
from agent_hooks.agents import trail_archive
from agent_hooks.briefings import briefing, briefing_store
from git_repo import git

NOW = float(calendar.timegm((2026, 11, 21, 12, 0, 0)))


def full(now: float = NOW) -> dict[str, object]:
    doc = briefing.empty("proj__cc_1", "/p", now)
    briefing.set_goal(doc, "Ship user authentication", now)
    briefing.add(doc, "decision", "Use JWT in httpOnly cookies", now)
    briefing.add(doc, "decision", "No new dependencies", now + 1)
    briefing.add(doc, "finding", "bcrypt is already vendored", now + 2)
    briefing.add(doc, "change", "The API moved to /v2", now + 3)
    briefing.set_focus(doc, "The login component", now + 4)
    return doc


def test_render_has_the_seeds_shape() -> None:
    assert briefing.render(full()) == (
        "SESSION BRIEFING (from prior work):\n"
        "GOAL: Ship user authentication\n"
        "DECISIONS ALREADY MADE:\n"
        "- Use JWT in httpOnly cookies\n"
        "- No new dependencies\n"
        "FINDINGS ALREADY CONFIRMED:\n"
        "- bcrypt is already vendored\n"
        "WHAT HAS CHANGED SINCE LAST SESSION:\n"
        "- The API moved to /v2\n"
        "FOCUS FOR THIS SESSION:\n"
        "The login component\n"
        "Do not repeat work already completed. Build on the briefing above."
    )


def test_render_of_a_sparse_briefing_says_what_is_missing() -> None:
    doc = briefing.empty(None, "/p", NOW)
    briefing.set_focus(doc, "line one\nline two", NOW)
    text = briefing.render(doc)
    assert "GOAL: (not recorded)" in text
    assert (
        "DECISIONS ALREADY MADE:\n- (none recorded)\nFINDINGS ALREADY CONFIRMED:\n- (none recorded)"
        in text
    )
    assert "WHAT HAS CHANGED SINCE LAST SESSION:\nNo changes\n" in text
    assert "FOCUS FOR THIS SESSION:\nline one\nline two\n" in text


def test_render_lists_the_changed_files() -> None:
    text = briefing.render(
        full(), changed_files=["src/a.py", "pyproject.toml"], since="2026-11-20 18:00 UTC"
    )
    assert (
        "- The API moved to /v2\n"
        "- Files changed in the project since 2026-11-20 18:00 UTC (2):\n"
        "  - src/a.py\n  - pyproject.toml\nFOCUS FOR THIS SESSION:"
    ) in text


def test_a_long_briefing_is_trimmed_oldest_first_at_whole_lines() -> None:
    doc = full()
    for i in range(400):
        briefing.add(
            doc, "decision" if i % 2 else "finding", f"entry {i:03d} " + "x" * 60, NOW + 10 + i
        )
    untrimmed = briefing.render(doc, limit=10**9)
    text = briefing.render(doc)
    assert len(untrimmed) > briefing.LIMIT >= len(text)
    assert len(text) > briefing.LIMIT - 200  # trimmed no more than needed
    whole = set(untrimmed.splitlines()) | {"- (left out to fit; see `agent-hooks brief show`)"}
    note, *rest = text.splitlines()[1:]
    assert note.startswith("[agent-hooks: ") and "oldest entries left out" in note
    assert all(line in whole for line in rest)  # no line was cut
    assert "entry 399" in text and "entry 000" not in text
    kept = sorted(int(line[8:11]) for line in rest if line.startswith("- entry "))
    assert kept == list(range(kept[0], 400))  # exactly the newest survive
    dropped = int(note.split("[agent-hooks: ")[1].split()[0])
    assert dropped == 4 + kept[0]  # the 4 first entries, then entries 0 .. kept[0]-1
    assert text.startswith(briefing.HEADER) and text.endswith(briefing.CLOSING)
    assert "GOAL: Ship user authentication" in text and "The login component" in text


def test_trimming_shrinks_the_file_list_after_the_entries() -> None:
    files = [f"src/module_{i:04d}/file.py" for i in range(3000)]
    assert "left out" not in briefing.render(full(), changed_files=files, since="x")
    text = briefing.render(full(), changed_files=files, since="x", limit=1500)
    assert len(text) <= 1500
    assert "- … and " in text and "changed file names left out" in text
    assert "[agent-hooks: 4 oldest entries and " in text  # the entries go first


def test_at_most_sixty_files_are_listed() -> None:
    text = briefing.render(full(), changed_files=[f"f{i}" for i in range(100)], limit=10**9)
    assert "(100):" in text and "  - f59\n" in text and "  - f60\n" not in text
    assert "  - … and 40 more" in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "empty"),
        ("x" * 2001, "limit is 2000"),
        ("bell\x07", "control character"),
    ],
)
def test_check_text_refuses(text: str, message: str) -> None:
    with pytest.raises(briefing.BriefingError, match=message):
        briefing.check_text(text)


def test_normalize_survives_junk() -> None:
    doc = briefing.normalize(
        {
            "goal": 3,
            "decisions": [{"text": "ok", "at": "x"}, "bad"],
            "focus": "  ",
            "updated_at": True,
        },
        "a",
        "/p",
        NOW,
    )
    assert doc["goal"] is None and doc["focus"] is None
    assert doc["decisions"] == [{"text": "ok", "at": 0}]
    assert doc["updated_at"] == int(NOW)


# --- the store ----------------------------------------------------------------------------


def test_briefings_are_kept_per_agent_and_project(state_dir: Path, tmp_path: Path) -> None:
    one = identity.Agent("proj__cc_1", str(state_dir))
    two = identity.Agent("proj__cc_2", str(state_dir))
    p1, p2 = str(tmp_path / "a" / "app"), str(tmp_path / "b" / "app")
    briefing_store.update(one, p1, lambda d: briefing.set_goal(d, "one in p1", NOW), NOW)
    briefing_store.update(one, p2, lambda d: briefing.set_goal(d, "one in p2", NOW), NOW)
    briefing_store.update(two, p1, lambda d: briefing.add(d, "finding", "two in p1", NOW), NOW)
    assert briefing_store.load(one, p1, NOW)["goal"] == "one in p1"  # type: ignore[index]
    assert briefing_store.load(one, p2, NOW)["goal"] == "one in p2"  # type: ignore[index]
    loaded = briefing_store.load(two, p1, NOW)
    assert (
        loaded is not None
        and loaded["goal"] is None
        and loaded["findings"][0]["text"] == "two in p1"
    )
    assert briefing_store.path(one, p1) != briefing_store.path(one, p2)
    assert (
        Path(briefing_store.path(one, p1)).parent
        == state_dir / "agent-hooks" / "briefings" / "state-proj__cc_1"
    )
    assert (Path(briefing_store.path(one, p1)).stat().st_mode & 0o777) == 0o600
    assert briefing_store.clear(one, p1) and briefing_store.load(one, p1, NOW) is None
    assert not briefing_store.clear(one, p1)
    assert briefing_store.load(one, p2, NOW) is not None


def test_last_session_end_is_the_previous_conversation_in_the_project(state_dir: Path) -> None:
    agent = identity.Agent("proj__cc_1", str(state_dir))
    for conv, project, last, at in (
        ("c1", "/p", 100, NOW - 30),
        ("c2", "/q", 200, NOW - 20),
        ("c3", "/p", 300, NOW - 10),
    ):
        trail_archive.archive(
            agent, {"conversation_id": conv, "project_root": project, "last_activity": last}, at
        )
        path = Path(trail_archive.agent_dir(agent)) / f"{conv}.json"
        os.utime(path, (at, at))
    assert briefing_store.last_session_end(agent, "/p", "c9") == 300
    assert briefing_store.last_session_end(agent, "/p", "c3") == 100
    assert briefing_store.last_session_end(agent, "/r", "c9") is None


def test_changed_since_lists_commits_and_uncommitted_files_after_the_moment(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    since = NOW - 3600
    old = since - 7200
    for name in ("old.py", "edited.py", "committed_later.py", "untouched.py"):
        (repo / name).write_text(name)
    (repo / ".gitignore").write_text("ignored.log\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "old", when=old)
    (repo / "committed_later.py").write_text("new")
    git(repo, "commit", "-qam", "new", when=since + 60)
    (repo / "edited.py").write_text("uncommitted edit")
    (repo / "new_untracked.py").write_text("n")
    (repo / "old_untracked.py").write_text("o")
    (repo / "ignored.log").write_text("i")
    (repo / ".tmp" / "sessions" / "x").mkdir(parents=True)
    (repo / ".tmp" / "sessions" / "x" / "c.md").write_text("workspace")
    for name in ("edited.py", "new_untracked.py", "ignored.log", ".tmp/sessions/x/c.md"):
        os.utime(repo / name, (since + 10, since + 10))
    for name in ("old.py", "untouched.py", "old_untracked.py", "committed_later.py"):
        os.utime(repo / name, (old, old))
    assert briefing_store.changed_since(str(repo), since) == [
        "committed_later.py",
        "edited.py",
        "new_untracked.py",
    ]


def test_changed_since_is_none_outside_a_repository(tmp_path: Path) -> None:
    assert briefing_store.changed_since(str(tmp_path), NOW) is None
