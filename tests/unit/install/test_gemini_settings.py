"""gemini_settings: merging agent-hooks into a Gemini CLI settings.json and taking it out again."""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import gemini_settings as gs
from agent_hooks.install import hooks_file

ROOT = Path(__file__).resolve().parents[3]
PY = "/opt/agent hooks/venv/bin/python"
ENTRY = "/opt/agent hooks/share/agent-hooks/hooks/entry.pyc"
TOOL_MATCHER = "^(write_file|replace|run_shell_command|read_file)$"


@pytest.fixture(autouse=True)
def _no_gemini_files_of_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line also reads Gemini's system settings and honours GEMINI_CLI_* paths:
    point them at nothing, so the machine's own files cannot change a result."""
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "no-system" / "s.json"))
    monkeypatch.delenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", raising=False)
    monkeypatch.delenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)


def block(python: str = PY, entry: str = ENTRY) -> gs.Block:
    return gs.hooks_block(python, entry)


USER_HOOK = {"name": "notify", "type": "command", "command": "~/bin/notify.sh", "timeout": 3000}
OTHER_TOOL_HOOK = {
    "name": "other-tool-guard",
    "type": "command",
    "command": "/usr/local/bin/other-guard --client gemini BeforeTool",
}
# another client's handler of agent-hooks, here by mistake: still ours (one rule for all)
CLAUDE_HOOK = {"type": "command", "command": f"'{PY}' -IS '{ENTRY}' PreToolUse"}
USER_SETTINGS: dict[str, Any] = {
    "model": {"name": "gemini-2.5-pro"},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"vimMode": True},
    "hooksConfig": {"enabled": True, "disabled": ["something-else"]},
    "hooks": {
        "BeforeTool": [{"matcher": "write_file|replace", "hooks": [OTHER_TOOL_HOOK]}],
        "AfterAgent": [{"hooks": [USER_HOOK]}],
        "Notification": [{"hooks": [USER_HOOK]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}],
    },
}

ROUND_TRIPS: list[tuple[str, dict[str, Any]]] = [
    ("empty", {}),
    ("user settings and other tools' hooks", USER_SETTINGS),
    ("no hooks key", {"ui": {"theme": "GitHub"}}),
    (
        "user handler in a group with the matcher we use",
        {"hooks": {"AfterTool": [{"matcher": TOOL_MATCHER, "hooks": [USER_HOOK]}]}},
    ),
    (
        "odd shapes left alone",
        {
            "hooks": {
                "SessionEnd": [{"matcher": "exit"}, "junk", {"hooks": "nope"}],
                "Custom": {"x": 1},
                "enabled": False,
            }
        },
    ),
]
IDS = [name for name, _ in ROUND_TRIPS]
DOCS = [doc for _, doc in ROUND_TRIPS]


def commands(doc: dict[str, Any]) -> list[str]:
    return [
        h.get("command")
        for groups in doc.get("hooks", {}).values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
        if isinstance(h, dict)
    ]


def run(*args: str) -> tuple[int, str, str]:
    """`main(args)` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = gs.main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def install_cmd(home: Path, *extra: str) -> tuple[int, str, str]:
    return run("install", "--gemini-home", str(home), "--python", PY, "--entry", ENTRY, *extra)


def backups(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if hooks_file.BACKUP_INFIX in p.name)


# --------------------------------------------------------------------------- the block


def test_the_block_runs_the_entry_for_the_gemini_client_with_millisecond_timeouts() -> None:
    assert list(block()) == ["SessionStart", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]
    for event, groups in block().items():
        (group,) = groups
        (handler,) = group["hooks"]
        assert handler == {
            "name": f"agent-hooks-{event}",
            "type": "command",
            "command": hooks_file.hook_command(PY, ENTRY, "gemini", event),
            "timeout": handler["timeout"],
        }
        assert isinstance(handler["timeout"], int) and 1_000 <= handler["timeout"] <= 30_000
        assert gs.is_ours(handler)
    for event in ("BeforeTool", "AfterTool"):
        assert block()[event][0]["matcher"] == TOOL_MATCHER
    for event in ("SessionStart", "AfterAgent", "SessionEnd"):
        assert "matcher" not in block()[event][0]
    assert block()["SessionEnd"][0]["hooks"][0]["timeout"] <= 5_000  # awaited by `gemini -p`


def test_the_command_is_one_word_per_path_for_bash_whatever_the_path_holds(
    tmp_path: Path,
) -> None:
    """Gemini runs the command with `bash -c`: spaces, quotes, `$` and backquotes in a path
    reach the entry script unchanged."""
    odd = tmp_path / 'a b "c" $HOME `x` \\d' / "hooks"
    odd.mkdir(parents=True)
    entry = odd / "entry.py"
    entry.write_text("import json, sys\nprint(json.dumps(sys.argv))\n")
    command = gs.hook_command(sys.executable, str(entry), "BeforeTool")
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, check=True, env={}
    )
    assert json.loads(done.stdout) == [str(entry), "gemini", "BeforeTool"]
    assert gs.is_ours({"command": command})
    assert hooks_file.command_argv(command) == [
        sys.executable,
        "-IS",
        str(entry),
        "gemini",
        "BeforeTool",
    ]


@pytest.mark.parametrize(
    "command",
    [
        f'"{PY}" -IS "{ENTRY}" gemini BeforeTool',
        f"{shlex.quote(PY)} -IS {shlex.quote(ENTRY)} gemini AfterTool",
        "/usr/bin/python3 -IS /srv/agent-hooks/hooks/entry.py gemini SessionStart",
        f'"{PY}" -IS "{ENTRY}" gemini BeforeModel',  # an event an older version installed
        f'"{PY}" -IS "{ENTRY}" codex BeforeTool',  # one rule for every client
        f'"{PY}" -IS "{ENTRY}" gemini Before-Tool',  # and any event
        CLAUDE_HOOK["command"],
        hooks_file.hook_command(PY, ENTRY, "gemini", "AfterAgent"),  # the guarded form
    ],
)
def test_ours_is_any_copy_of_the_entry_for_the_gemini_client(command: str) -> None:
    assert gs.is_ours({"type": "command", "command": command})


@pytest.mark.parametrize(
    "handler",
    [
        OTHER_TOOL_HOOK,
        USER_HOOK,
        {"command": f'"{PY}" -IS "/opt/x/hooks/entry.py.bak" gemini BeforeTool'},
        {"command": f'"{PY}" -IS "{ENTRY}"'},  # the entry last: no event, not a hook of ours
        {"command": f"cat '{ENTRY}' 'unbalanced"},
        {"command": "gemini BeforeTool"},
        {"command": 42},
        {"type": "command"},
        "a string",
        None,
    ],
)
def test_ours_is_nothing_else(handler: object) -> None:
    assert not gs.is_ours(handler)


# --------------------------------------------------------------------------- the merge


@pytest.mark.parametrize("original", DOCS, ids=IDS)
def test_install_keeps_everything_else_and_uninstall_takes_exactly_ours_out(
    original: dict[str, Any],
) -> None:
    before = copy.deepcopy(original)
    installed = gs.install(original, block())
    assert original == before  # the input is not mutated
    for key, value in original.items():
        if key != "hooks":
            assert installed[key] == value
    assert "hooksConfig" not in installed or installed["hooksConfig"] == original["hooksConfig"]
    for command in commands(original):
        assert command in commands(installed)
    for event, groups in block().items():
        assert installed["hooks"][event][-len(groups) :] == groups
    restored = gs.uninstall(installed)
    assert restored == original
    assert json.dumps(restored) == json.dumps(original)  # key order kept too


@pytest.mark.parametrize("original", DOCS, ids=IDS)
def test_install_is_idempotent(original: dict[str, Any]) -> None:
    once = gs.install(original, block())
    twice = gs.install(once, block())
    assert json.dumps(twice) == json.dumps(once)


def test_install_replaces_an_older_copy_and_drops_events_it_no_longer_has() -> None:
    old = gs.install(USER_SETTINGS, block("/old/python", "/old/hooks/entry.py"))
    old["hooks"]["BeforeModel"] = [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": '"/old/python" -IS "/old/hooks/entry.py" gemini BeforeModel',
                }
            ]
        }
    ]
    new = gs.install(old, block())
    assert gs.ours_block(new) == block()
    assert "BeforeModel" not in new["hooks"]
    assert [c for c in commands(new) if "/old/" in c] == []
    assert gs.uninstall(new) == USER_SETTINGS


def test_uninstall_removes_ours_from_a_group_the_user_shares_and_keeps_theirs() -> None:
    ours = block()["BeforeTool"][0]["hooks"][0]
    doc = {
        "hooks": {
            "BeforeTool": [
                {"matcher": TOOL_MATCHER, "sequential": True, "hooks": [USER_HOOK, ours]},
                {"matcher": "write_file", "hooks": [ours]},
                {"matcher": "glob", "hooks": []},  # the user's own empty group stays
            ]
        }
    }
    assert gs.uninstall(doc) == {
        "hooks": {
            "BeforeTool": [
                {"matcher": TOOL_MATCHER, "sequential": True, "hooks": [USER_HOOK]},
                {"matcher": "glob", "hooks": []},
            ]
        }
    }


def test_uninstall_of_a_file_without_ours_changes_nothing() -> None:
    for doc in DOCS:
        assert json.dumps(gs.uninstall(doc)) == json.dumps(doc)
    assert gs.uninstall({"hooks": {}}) == {"hooks": {}}


@pytest.mark.parametrize("hooks", [[], "text", 3])
def test_install_refuses_a_hooks_value_that_is_not_an_object(hooks: Any) -> None:
    with pytest.raises(ValueError, match='"hooks"'):
        gs.install({"hooks": hooks}, block())


def test_install_refuses_an_event_of_ours_that_is_not_a_list() -> None:
    with pytest.raises(ValueError, match=r'"hooks\.BeforeTool"'):
        gs.install({"hooks": {"BeforeTool": {"matcher": "x"}}}, block())


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("original", DOCS, ids=IDS)
def test_uninstall_restores_the_file_byte_for_byte(
    tmp_path: Path, original: dict[str, Any]
) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    text = json.dumps(original, indent=4, ensure_ascii=True) + "\n\n"  # the user's own formatting
    path.write_text(text)
    path.chmod(0o640)
    assert install_cmd(home)[0] == 0
    assert len(backups(path)) == 1
    assert path.stat().st_mode & 0o777 == 0o640
    assert gs.ours_block(json.loads(path.read_text())) == block()
    code, out, _ = run("uninstall", "--gemini-home", str(home))
    assert code == 0 and "restored exactly" in out
    assert path.read_bytes() == text.encode()
    assert path.stat().st_mode & 0o777 == 0o640
    assert backups(path) == []  # the file itself is that copy now


def test_a_second_install_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS))
    assert install_cmd(home)[0] == 0
    first = path.stat()
    code, out, _ = install_cmd(home)
    assert code == 0 and "already up to date" in out
    again = path.stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    assert len(backups(path)) == 1


def test_at_most_one_backup_across_installs_of_moved_copies_and_uninstalls(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    text = json.dumps(USER_SETTINGS, indent=2) + "\n"
    path.write_text(text)
    path.chmod(0o644)
    for round_ in range(3):
        assert install_cmd(home)[0] == 0
        assert len(backups(path)) == 1
        moved = ("--gemini-home", str(home), "--python", f"/py{round_}", "--entry", ENTRY)
        assert run("install", *moved)[0] == 0  # a change of ours: the same backup still fits
        assert len(backups(path)) == 1
        assert path.stat().st_mode & 0o777 == 0o644
        assert run("uninstall", "--gemini-home", str(home))[0] == 0
        assert path.read_text() == text
        assert backups(path) == []


def test_an_uninstall_that_cannot_restore_removes_only_ours_and_keeps_one_backup(
    tmp_path: Path,
) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS))
    assert install_cmd(home)[0] == 0
    doc = json.loads(path.read_text())
    doc["ui"] = {"theme": "ANSI"}  # the user (or the CLI) changed something since
    path.write_text(json.dumps(doc))
    code, out, _ = run("uninstall", "--gemini-home", str(home))
    assert code == 0 and "restored" not in out
    assert json.loads(path.read_text()) == {**USER_SETTINGS, "ui": {"theme": "ANSI"}}
    (backup,) = backups(path)
    assert json.loads((home / backup).read_text()) == doc  # what uninstall changed


def test_a_file_install_created_is_removed_when_only_ours_was_in_it(tmp_path: Path) -> None:
    home = tmp_path / "new" / ".gemini"
    path = home / "settings.json"
    assert install_cmd(home)[0] == 0
    assert path.stat().st_mode & 0o777 == 0o600 and backups(path) == []
    code, out, _ = run("uninstall", "--gemini-home", str(home))
    assert code == 0 and "removed" in out
    assert not path.exists()


def test_a_file_install_created_stays_when_something_else_was_added(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    path = home / "settings.json"
    assert install_cmd(home)[0] == 0
    doc = json.loads(path.read_text())
    doc["security"] = {"auth": {"selectedType": "gemini-api-key"}}  # Gemini's auth dialog
    path.write_text(json.dumps(doc))
    assert run("uninstall", "--gemini-home", str(home))[0] == 0
    assert json.loads(path.read_text()) == {
        "security": {"auth": {"selectedType": "gemini-api-key"}}
    }


def test_an_empty_object_file_of_the_user_survives(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    path.write_text("{}")
    assert install_cmd(home)[0] == 0
    assert run("uninstall", "--gemini-home", str(home))[0] == 0
    assert path.read_text() == "{}"


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '["a list"]',
        '{"a": 1,}',
        '"text"',
        '{\n  // a comment Gemini accepts\n  "ui": {}\n}\n',
    ],
)
@pytest.mark.parametrize("action", ["install", "uninstall", "status"])
def test_a_file_that_is_not_a_json_object_is_refused_untouched(
    tmp_path: Path, content: str, action: str
) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    path.write_text(content)
    path.chmod(0o644)
    code, _, err = run(action, "--gemini-home", str(home), "--python", PY, "--entry", ENTRY)
    assert code == 1
    assert err.startswith("agent-hooks: ") and err.count("\n") == 1 and str(path) in err
    assert path.read_text() == content and path.stat().st_mode & 0o777 == 0o644
    assert sorted(os.listdir(home)) == ["settings.json"]  # no backup, no temporary file


def test_a_symlinked_settings_file_is_written_through(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "gemini-settings.json"
    target.write_text(json.dumps(USER_SETTINGS))
    (home / "settings.json").symlink_to(target)
    assert install_cmd(home)[0] == 0
    assert (home / "settings.json").is_symlink()
    assert gs.ours_block(json.loads(target.read_text())) == block()
    assert run("uninstall", "--gemini-home", str(home))[0] == 0
    assert (home / "settings.json").is_symlink()
    assert json.loads(target.read_text()) == USER_SETTINGS


def test_the_module_runs_as_a_command_with_the_standard_library_only(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    # -S: no site-packages (no click, no orjson): the standard library and our source only
    command = [sys.executable, "-S", "-m", "agent_hooks.install.gemini_settings"]
    env = {"PYTHONPATH": str(ROOT / "src")}
    args = ["install", "--gemini-home", str(home), "--python", PY, "--entry", ENTRY]
    done = subprocess.run([*command, *args], capture_output=True, text=True, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    assert gs.ours_block(json.loads((home / "settings.json").read_text())) == block()
    done = subprocess.run(
        [*command, "status", "--gemini-home", str(home)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0 and "installed" in done.stdout
    done = subprocess.run([*command, "install"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "--python and --entry are required" in done.stderr


# --------------------------------------------------------------------------- status


def test_status_of_a_fresh_install_is_ok(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    assert install_cmd(home)[0] == 0
    found = gs.status(str(home / "settings.json"), python=PY, entry=ENTRY)
    assert found.ok and found.installed and found.current is True and found.problems == ()
    assert found.events == gs.EVENTS
    moved = gs.status(str(home / "settings.json"), python="/other/python", entry=ENTRY)
    assert not moved.ok and "not for this copy" in moved.lines()[0]
    code, out, _ = run("status", "--gemini-home", str(home), "--python", PY, "--entry", ENTRY)
    assert code == 0 and "installed" in out


def test_status_of_nothing_installed(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    code, out, _ = run("status", "--gemini-home", str(home))
    assert code == 3 and "not installed" in out
    assert not home.exists()  # status writes nothing


@pytest.mark.parametrize(
    ("config", "finding"),
    [
        ({"enabled": False}, "hooksConfig.enabled is false"),
        ({"disabled": ["agent-hooks-BeforeTool"]}, "lists agent-hooks-BeforeTool"),
    ],
)
def test_hooks_disabled_in_settings_are_reported_and_left_alone(
    tmp_path: Path, config: dict[str, Any], finding: str
) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    path = home / "settings.json"
    path.write_text(json.dumps({"hooksConfig": config}))
    code, out, _ = install_cmd(home)
    assert code == 0
    assert f"note: {gs.HOOKS_DISABLED}" in out and finding in out
    assert json.loads(path.read_text())["hooksConfig"] == config  # never overridden
    found = gs.status(str(path))
    assert not found.ok and found.installed
    assert [p for p in found.problems if p.startswith(gs.HOOKS_DISABLED) and finding in p]
    code, out, _ = run("status", "--gemini-home", str(home))
    assert code == 3 and gs.HOOKS_DISABLED in out


def test_the_last_scope_that_sets_hooks_enabled_wins(tmp_path: Path) -> None:
    user, project = tmp_path / "user.json", tmp_path / "project.json"
    user.write_text(json.dumps({"hooksConfig": {"enabled": False}}))
    project.write_text(json.dumps(gs.install({"hooksConfig": {"enabled": True}}, block())))
    assert gs.status(str(project), scopes=[str(user), str(project)]).ok
    project.write_text(json.dumps(gs.install({}, block())))
    found = gs.status(str(project), scopes=[str(user), str(project)])
    assert [p for p in found.problems if str(user) in p and gs.HOOKS_DISABLED in p]


# --------------------------------------------------------------------------- project and trust


def test_a_project_install_reports_what_trusting_the_folder_takes(tmp_path: Path) -> None:
    home, project = tmp_path / "home" / ".gemini", tmp_path / "project"
    project.mkdir()
    code, out, _ = install_cmd(home, "--project", str(project))
    assert code == 0
    settings = project / ".gemini" / "settings.json"
    assert gs.ours_block(json.loads(settings.read_text())) == block()
    assert "is not trusted by Gemini CLI" in out and "trustedFolders.json" in out
    assert not (home / "trustedFolders.json").exists()  # never trusted on the user's behalf
    assert not (home / "settings.json").exists()  # the user's file is not the project's
    code, out, _ = run("status", "--gemini-home", str(home), "--project", str(project))
    assert code == 3 and "not trusted" in out


def test_trust_is_added_only_when_asked_and_kept_by_uninstall(tmp_path: Path) -> None:
    home, project = tmp_path / "home" / ".gemini", tmp_path / "project"
    project.mkdir()
    home.mkdir(parents=True)
    folders = home / "trustedFolders.json"
    folders.write_text(json.dumps({"/srv/other": "DO_NOT_TRUST"}))
    folders.chmod(0o600)
    code, out, _ = install_cmd(home, "--project", str(project), "--trust")
    assert code == 0 and "not trusted" not in out
    assert json.loads(folders.read_text()) == {
        "/srv/other": "DO_NOT_TRUST",
        os.path.realpath(project): "TRUST_FOLDER",
    }
    assert folders.stat().st_mode & 0o777 == 0o600
    assert run("status", "--gemini-home", str(home), "--project", str(project))[0] == 0
    assert run("uninstall", "--gemini-home", str(home), "--project", str(project))[0] == 0
    assert not (project / ".gemini" / "settings.json").exists()
    assert os.path.realpath(project) in json.loads(folders.read_text())
    code, _, err = run(
        "install", "--gemini-home", str(home), "--trust", "--python", PY, "--entry", ENTRY
    )
    assert code == 2 and "--trust goes with install --project" in err


@pytest.mark.parametrize(
    ("rules", "level"),
    [
        ({}, None),
        ({"{root}": "TRUST_FOLDER"}, "TRUST_FOLDER"),
        ({"{root}/project/sub": "TRUST_PARENT"}, "TRUST_PARENT"),
        ({"{root}": "TRUST_FOLDER", "{root}/project": "DO_NOT_TRUST"}, "DO_NOT_TRUST"),
        ({"{root}": "DO_NOT_TRUST", "{root}/project": "TRUST_FOLDER"}, "TRUST_FOLDER"),
        ({"{root}/proj": "TRUST_FOLDER"}, None),  # a prefix of the name is no parent
    ],
)
def test_trust_follows_gemini_rule_the_longest_covering_path_decides(
    tmp_path: Path, rules: dict[str, str], level: str | None
) -> None:
    root = os.path.realpath(tmp_path)
    project = Path(root) / "project"
    project.mkdir()
    folders = tmp_path / "trustedFolders.json"
    folders.write_text(json.dumps({k.format(root=root): v for k, v in rules.items()}))
    assert gs.trust_of(str(project), str(folders)) == level
    problem = gs.trust_problem(str(project), str(folders), {})
    assert (problem is None) == (level in ("TRUST_FOLDER", "TRUST_PARENT"))
    assert (
        gs.trust_problem(
            str(project), str(folders), {"security": {"folderTrust": {"enabled": False}}}
        )
        is None
    )


def test_another_file_that_cannot_be_read_is_a_problem_line_not_an_error(tmp_path: Path) -> None:
    """Gemini accepts comments in its files; the one we change is refused, the ones we only
    read for status are named as unchecked."""
    home = tmp_path / ".gemini"
    system = tmp_path / "system.json"
    system.write_text('{\n  // set by the admin\n  "ui": {}\n}\n')
    path = home / "settings.json"
    assert install_cmd(home)[0] == 0
    found = gs.status(str(path), scopes=[str(path), str(system)])
    assert found.installed and [p for p in found.problems if p.startswith(f"cannot check {system}")]


def test_trust_into_a_bad_trusted_folders_file_changes_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home" / ".gemini", tmp_path / "project"
    project.mkdir()
    home.mkdir(parents=True)
    (home / "trustedFolders.json").write_text("[]")
    code, _, err = install_cmd(home, "--project", str(project), "--trust")
    assert code == 1 and "trustedFolders.json" in err
    assert not (project / ".gemini").exists()
    assert (home / "trustedFolders.json").read_text() == "[]"
