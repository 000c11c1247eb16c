"""identity: AGENT_NAME checks, the state directory, agents' files, the project root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks import identity, repository
from agent_hooks.clients import claude_code, qwen_code

GOOD_NAMES = [
    "proj__cc_1",
    "proj__cc_2_opus",
    "myproject__cc_12",
    "BlueLake",
    "a",
    "x" * 128,
    "a.b",
    "a-b c",
    "naïve",
    "名前",
    ".",
    ".x",
    "a.",
    "-rf",
    "name with spaces",
    "a\\b",
]

BAD_NAMES = [
    ("a/b", "'/'"),
    ("/", "'/'"),
    ("../x", "'/'"),
    ("..", "'..'"),
    ("a..b", "'..'"),
    ("a\x00b", "control"),
    ("a\nb", "control"),
    ("\t", "control"),
    ("a\x1b[31m", "control"),
    ("a\x7f", "control"),
    ("a\x85b", "control"),
    ("a\x9b31m", "control"),
    ("x" * 129, "128"),
    ("é" * 129, "128"),
]


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_good_names_pass_unchanged(name: str) -> None:
    assert identity.check_agent_name(name) == name
    agent = identity.resolve_agent({"AGENT_NAME": name, "HOME": "/home/me"})
    assert agent.name == name
    assert agent.state_path == f"/home/me/.claude/state-{name}.json"
    assert os.path.dirname(agent.state_path) == "/home/me/.claude"


@pytest.mark.parametrize(("name", "why"), BAD_NAMES)
def test_bad_names_are_refused_with_a_reason(name: str, why: str) -> None:
    with pytest.raises(identity.IdentityError, match=why) as caught:
        identity.check_agent_name(name)
    assert "\n" not in str(caught.value)
    with pytest.raises(identity.IdentityError):
        identity.resolve_agent({"AGENT_NAME": name, "HOME": "/home/me"})


@pytest.mark.parametrize(
    "name",
    ["x" * 128, "é" * 100, "\U0001f600" * 50],
    ids=["128 characters", "200 bytes of 2", "200 bytes of 4"],
)
def test_every_accepted_name_fits_in_its_files(tmp_path: Path, name: str) -> None:
    """The longest names accepted (128 characters, 200 bytes in UTF-8) are usable: the
    state file, lock file, temp files and corrupt copies all fit the file system's
    255-byte name limit. One character more is refused with the reason."""
    from agent_hooks import storage

    assert identity.check_agent_name(name) == name
    longer = name + name[0]
    with pytest.raises(identity.IdentityError, match=r"the limit is (128|200)"):
        identity.check_agent_name(longer)
    agent = identity.Agent(name, str(tmp_path))
    with storage.Lock(agent.state_path + ".lock") as lock:
        assert lock.acquire(1)
        storage.write_json_atomic(agent.state_path, {"x": 1})
        storage.quarantine(agent.state_path, 0)
    assert len(os.listdir(tmp_path)) == 2


def test_unset_or_empty_name_is_the_shared_agent() -> None:
    for environ in ({"HOME": "/h"}, {"HOME": "/h", "AGENT_NAME": ""}):
        agent = identity.resolve_agent(environ)
        assert agent.name is None
        assert agent.state_path == "/h/.claude/agent-state.json"
        assert agent.key == "agent-state"
        assert "agent-state.json" in agent.label


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"HOME": "/home/me"}, "/home/me/.claude"),
        ({"HOME": "/home/me/"}, "/home/me/.claude"),
        ({"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "/etc/cc"}, "/etc/cc"),
        ({"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "/etc/cc/../cc2/"}, "/etc/cc2"),
        ({"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "~/alt"}, "/home/me/alt"),
        ({"HOME": "/home/me", "CLAUDE_CONFIG_DIR": ""}, "/home/me/.claude"),
    ],
)
def test_state_dir(environ: dict[str, str], expected: str) -> None:
    assert identity.state_dir(environ) == expected


def test_state_dir_relative_config_dir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert identity.state_dir({"HOME": "/h", "CLAUDE_CONFIG_DIR": "cfg"}) == str(tmp_path / "cfg")


def test_state_dir_without_home_uses_the_password_database() -> None:
    import pwd

    expected = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".claude")
    assert identity.state_dir({}) == os.path.normpath(expected)


def test_claude_config_dir_moves_every_file() -> None:
    environ = {"HOME": "/home/me", "CLAUDE_CONFIG_DIR": "/cfg", "AGENT_NAME": "proj__cc_1"}
    agent = identity.resolve_agent(environ)
    assert agent.state_path == "/cfg/state-proj__cc_1.json"
    assert identity.data_dir(agent.state_dir) == "/cfg/agent-hooks"
    assert identity.log_path(agent.state_dir) == "/cfg/agent-hooks.log"


@pytest.mark.parametrize(
    ("file_name", "name"),
    [
        ("state-proj__cc_1.json", "proj__cc_1"),
        ("agent-state.json", None),
        ("state-a.b.json", "a.b"),
    ],
)
def test_agent_from_state_file(file_name: str, name: str | None) -> None:
    agent = identity.agent_from_state_file("/s", file_name)
    assert agent is not None
    assert agent.name == name
    assert agent.state_file == file_name


@pytest.mark.parametrize(
    "file_name",
    [
        "state-.json",
        "state-x.json.bak",
        "state-x.json.lock",
        "settings.json",
        "state-x",
        "state-a..b.json",
        "state-\x01.json",
        "xstate-a.json",
        "agent-state.json.lock",
        "state-" + "x" * 129 + ".json",
        ".state-a.json.1.abcdef01.tmp",
    ],
)
def test_files_that_are_not_state_files(file_name: str) -> None:
    assert identity.agent_from_state_file("/s", file_name) is None


def test_agent_keys_are_distinct() -> None:
    names = [None, "agent", "state", "a", "agent-state"]
    keys = {identity.Agent(n, "/s").key for n in names}
    assert len(keys) == len(names)


# --- project root


def test_project_root_from_the_clients_project_variable(tmp_path: Path) -> None:
    """The directory the client's project variable names (Claude Code's, resolved), only
    the client's: another client's variable is no project of this one's."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    environ = {"CLAUDE_PROJECT_DIR": str(tmp_path / "link")}
    variables = claude_code.PROJECT_VARIABLES
    assert repository.project_root(environ, "/somewhere/else", variables) == os.path.realpath(real)
    assert repository.project_root(environ, "/somewhere/else", ()) is None  # Codex names none
    qwen = {"QWEN_PROJECT_DIR": str(real), "CLAUDE_PROJECT_DIR": "/elsewhere"}
    assert repository.project_root(qwen, None, qwen_code.PROJECT_VARIABLES) == str(real.resolve())


def test_relative_claude_project_dir_is_ignored(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    root = os.path.realpath(tmp_path)
    environ = {"CLAUDE_PROJECT_DIR": "rel"}
    assert repository.project_root(environ, f"{root}/sub", claude_code.PROJECT_VARIABLES) == root


@pytest.mark.parametrize("git_kind", ["dir", "worktree_file", "symlink"])
def test_project_root_is_the_git_top_level_of_cwd(tmp_path: Path, git_kind: str) -> None:
    top = tmp_path / "repo"
    deep = top / "a" / "b"
    deep.mkdir(parents=True)
    if git_kind == "dir":
        (top / ".git").mkdir()
    elif git_kind == "worktree_file":
        (top / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    else:
        os.symlink("/nonexistent/git-dir", top / ".git")
    assert repository.project_root({}, str(deep)) == os.path.realpath(top)
    assert repository.project_root({}, str(top)) == os.path.realpath(top)


def test_nearest_git_wins(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "vendor" / "lib"
    (sub / "src").mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    assert repository.project_root({}, str(sub / "src")) == os.path.realpath(sub)


def test_project_root_through_a_symlinked_cwd(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    os.symlink(tmp_path / "repo" / "src", tmp_path / "shortcut")
    assert repository.project_root({}, str(tmp_path / "shortcut")) == os.path.realpath(
        tmp_path / "repo"
    )


@pytest.mark.parametrize("cwd", [None, "", "relative/dir"])
def test_no_project_without_an_absolute_cwd(cwd: str | None) -> None:
    assert repository.project_root({}, cwd) is None


def test_no_project_outside_git(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    if repository.git_top_level(str(tmp_path)) is not None:
        pytest.skip("the temp directory itself lies inside a git work tree")
    assert repository.project_root({}, str(tmp_path / "plain")) is None


@pytest.mark.parametrize(
    "name",
    [
        "alice\u202e",  # right-to-left override: "alice" shown, something else meant
        "al\u200bice",  # zero-width space
        "alice\u2028",  # line separator
        "\ufeffalice",  # byte order mark
        "alice\udcff",  # a non-UTF-8 byte, as the environment decodes it
        " alice",
        "alice ",
        "alice#sub",
        "~conv",
    ],
)
def test_names_that_can_pose_as_another_are_refused(name: str) -> None:
    """Issue 11: look-alike names (bidi, zero-width, separators, blanks at the ends) and names
    that read as another writer's key are refused with one line, never a traceback."""
    with pytest.raises(identity.IdentityError) as err:
        identity.check_agent_name(name)
    assert "\n" not in str(err.value) and str(err.value).startswith("AGENT_NAME")
