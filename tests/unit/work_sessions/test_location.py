"""work_sessions.location: the one rule for where work sessions live."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_hooks.work_sessions import location


@pytest.mark.parametrize(
    ("project", "environ", "given", "expected"),
    [
        ("/p", {}, None, "/p/.claude/sessions"),
        ("/p", {"AGENT_HOOKS_SESSIONS_DIR": "/elsewhere/s/"}, None, "/elsewhere/s"),
        ("/p", {"AGENT_HOOKS_SESSIONS_DIR": "notes/sessions"}, None, "/p/notes/sessions"),
        ("/p", {"AGENT_HOOKS_SESSIONS_DIR": "~/ws", "HOME": "/home/u"}, None, "/home/u/ws"),
        ("/p", {"AGENT_HOOKS_SESSIONS_DIR": "/e"}, "/given", "/given"),
        (None, {}, None, None),
        (None, {"AGENT_HOOKS_SESSIONS_DIR": "rel"}, None, None),
        (None, {"AGENT_HOOKS_SESSIONS_DIR": "/abs"}, None, "/abs"),
    ],
)
def test_sessions_dir(
    project: str | None, environ: dict[str, str], given: str | None, expected: str | None
) -> None:
    assert location.sessions_dir(project, environ, given) == expected


def test_active_dir_is_the_sessions_dir_once_it_holds_the_pointer(tmp_path: Path) -> None:
    project = str(tmp_path)
    assert location.active_dir({}, project) is None
    directory = tmp_path / ".claude" / "sessions"
    directory.mkdir(parents=True)
    assert location.active_dir({}, project) is None
    (directory / "active-session.json").write_text("{}")
    assert location.active_dir({}, project) == str(directory)
    assert location.active_dir({}, None) is None
