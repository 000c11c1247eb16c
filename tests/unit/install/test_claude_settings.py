"""settings: merging agent-hooks into a user's settings.json and taking it out again."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import claude_settings, hooks_file

ROOT = Path(__file__).resolve().parents[3]
PY = "/opt/agent hooks/venv/bin/python"
ENTRY = "/opt/agent hooks/share/agent-hooks/hooks/entry.pyc"
EXAMPLE_PY = "/home/you/.local/share/agent-hooks/venv/bin/python"
EXAMPLE_ENTRY = "/home/you/.local/share/agent-hooks/hooks/entry.pyc"
EXAMPLE_CLI = "/home/you/.local/bin/agent-hooks"
CLI = "/opt/agent hooks/bin/agent-hooks"
RULES = ["Bash(agent-hooks *)", f"Bash({CLI} *)"]
NOW = 1_800_000_000.0


def block() -> dict[str, Any]:
    return claude_settings.hooks_block(claude_settings.installed_command(PY, ENTRY))


USER_HOOK = {"type": "command", "command": "~/bin/notify.sh", "timeout": 3}
USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/guard"}]}
        ],
        "Stop": [{"hooks": [USER_HOOK]}],
        "Notification": [{"hooks": [USER_HOOK]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
}

ROUND_TRIPS: list[tuple[str, dict[str, Any]]] = [
    ("empty", {}),
    ("user settings and hooks", USER_SETTINGS),
    ("no hooks key", {"model": "sonnet"}),
    ("empty hooks object", {"model": "sonnet", "hooks": {}}),
    ("empty event list", {"hooks": {"Stop": []}}),
    (
        "user handler in a group with a matcher we also use",
        {
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Write|Edit|MultiEdit|NotebookEdit|Read|Bash", "hooks": [USER_HOOK]}
                ]
            }
        },
    ),
    (
        "odd shapes left alone",
        {"hooks": {"Stop": [{"matcher": "x"}, "junk", {"hooks": "nope"}], "Custom": {"x": 1}}},
    ),
]


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


def test_the_block_uses_absolute_paths_and_dash_is() -> None:
    for event, groups in block().items():
        for group in groups:
            (handler,) = group["hooks"]
            assert handler["command"] == hooks_file.hook_command(PY, ENTRY, event)
            assert hooks_file.command_argv(handler["command"]) == [PY, "-IS", ENTRY, event]
            assert handler["type"] == "command" and isinstance(handler["timeout"], int)
    core = {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    assert core <= set(block())
    assert set(block()["PreToolUse"][0]["matcher"].split("|")) >= {
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Bash",
    }
    assert set(block()["PostToolUse"][0]["matcher"].split("|")) >= {
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Read",
        "Bash",
    }
    for event in ("SessionStart", "Stop", "SessionEnd"):
        assert "matcher" not in block()[event][0]  # every occurrence
    assert block()["SessionEnd"][0]["hooks"][0]["timeout"] <= 5


def test_the_plugin_block_runs_the_plugin_runner() -> None:
    for event, groups in claude_settings.hooks_block(claude_settings.plugin_command).items():
        for group in groups:
            assert group["hooks"][0]["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/run" {event}'


@pytest.mark.parametrize(("original"), [d for _, d in ROUND_TRIPS], ids=[n for n, _ in ROUND_TRIPS])
def test_install_keeps_everything_else_and_uninstall_restores_it(original: dict[str, Any]) -> None:
    before = copy.deepcopy(original)
    installed = claude_settings.install(original, block())
    assert original == before  # the input is not mutated
    for key, value in original.items():
        if key != "hooks":
            assert installed[key] == value
    for cmd in commands(original):
        assert cmd in commands(installed)
    for event, groups in block().items():
        assert installed["hooks"][event][-len(groups) :] == groups
    restored = claude_settings.uninstall(installed)
    if _has_empty_containers(original):
        # The pure function cannot know an empty container was the user's; the file-level
        # uninstall restores those exactly from the backup (test_uninstall_restores_the_file_exactly).
        assert _without_empty_containers(restored) == _without_empty_containers(original)
        return
    assert restored == original
    assert list(restored) == list(original)  # key order kept
    assert json.dumps(restored) == json.dumps(original)


def _has_empty_containers(doc: dict[str, Any]) -> bool:
    hooks = doc.get("hooks")
    return isinstance(hooks, dict) and (not hooks or any(v == [] for v in hooks.values()))


def _without_empty_containers(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        for event in [e for e, v in hooks.items() if v == []]:
            del hooks[event]
        if not hooks:
            del out["hooks"]
    return out


@pytest.mark.parametrize(("original"), [d for _, d in ROUND_TRIPS], ids=[n for n, _ in ROUND_TRIPS])
def test_uninstall_restores_the_file_exactly(tmp_path: Path, original: dict[str, Any]) -> None:
    path = tmp_path / "settings.json"
    text = json.dumps(original, indent=4) + "\n"  # the user's own formatting
    path.write_text(text)
    assert (
        _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY).returncode == 0
    )
    assert _run("uninstall", "--settings", str(path)).returncode == 0
    assert path.read_text() == text


@pytest.mark.parametrize(("original"), [d for _, d in ROUND_TRIPS], ids=[n for n, _ in ROUND_TRIPS])
def test_install_is_idempotent(original: dict[str, Any]) -> None:
    once = claude_settings.install(original, block())
    twice = claude_settings.install(once, block())
    assert twice == once
    assert json.dumps(twice) == json.dumps(once)


def test_install_replaces_an_older_block_of_ours() -> None:
    old = claude_settings.hooks_block(
        claude_settings.installed_command("/old/python", "/old/agent-hooks/hooks/entry.py")
    )
    old["PreToolUse"][0]["matcher"] = "Write|Edit"
    doc = claude_settings.install(USER_SETTINGS, old)
    doc["hooks"]["Custom"] = [
        {"hooks": [{"type": "command", "command": "/old/agent-hooks/hooks/entry.py Stop"}]}
    ]
    new = claude_settings.install(doc, block())
    assert not any(c and c.startswith("/old/python") for c in commands(new))
    for event, groups in block().items():
        assert [g for g in new["hooks"][event] if g in groups] == groups
    assert claude_settings.uninstall(new) == USER_SETTINGS


def test_uninstall_removes_exactly_ours() -> None:
    user_plugin_like = {
        "type": "command",
        "command": "/usr/bin/agent-hooks-helper",
    }  # not our entry
    doc = copy.deepcopy(USER_SETTINGS)
    doc["hooks"]["Stop"][0]["hooks"].append(user_plugin_like)
    installed = claude_settings.install(doc, block())
    removed = claude_settings.uninstall(installed)
    assert removed == doc
    assert claude_settings.uninstall(removed) == doc
    plugin = {"hooks": claude_settings.hooks_block(claude_settings.plugin_command)}
    assert claude_settings.uninstall(plugin) == {}


STATUS = hooks_file.hook_command(PY, ENTRY, "StatusLine")


def test_our_status_line_is_set_only_when_the_user_has_none() -> None:
    mine = claude_settings.install({"model": "x"}, block(), STATUS)
    assert mine["statusLine"] == claude_settings.status_line(STATUS)
    assert claude_settings.install(mine, block(), STATUS) == mine
    assert claude_settings.uninstall(mine) == {"model": "x"}
    users = claude_settings.install(USER_SETTINGS, block(), STATUS)
    assert users["statusLine"] == USER_SETTINGS["statusLine"]
    assert claude_settings.uninstall(users) == USER_SETTINGS


@pytest.mark.parametrize("hooks", [[], "x", 3])
def test_install_refuses_a_hooks_value_that_is_not_an_object(hooks: Any) -> None:
    with pytest.raises(ValueError, match="not an object"):
        claude_settings.install({"hooks": hooks}, block())
    assert claude_settings.uninstall({"hooks": hooks}) == {"hooks": hooks}


def test_install_refuses_an_event_that_is_not_a_list() -> None:
    with pytest.raises(ValueError, match="not a list"):
        claude_settings.install({"hooks": {"Stop": {"hooks": []}}}, block())


# --- files


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-m", "agent_hooks.install.claude_settings", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src")},
        cwd="/",
    )


def test_write_settings_backs_up_first_and_keeps_the_users_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = json.dumps(USER_SETTINGS, indent=4)
    path.write_text(original)
    path.chmod(0o640)
    change = hooks_file.commit(_plan(path), NOW)
    backup = change.backup
    assert backup is not None and Path(backup).read_text() == original
    assert Path(backup).stat().st_mode & 0o777 == 0o640
    assert path.stat().st_mode & 0o777 == 0o640
    assert json.loads(path.read_text()) == change.after
    assert hooks_file.commit(_plan(path), NOW + 5).backup is None  # unchanged: no backup


def _plan(path: Path) -> hooks_file.Change:
    return hooks_file.plan_install(str(path), lambda doc: claude_settings.install(doc, block()))


def test_backups_in_the_same_second_never_overwrite_each_other(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS))
    first = hooks_file.write_text(str(path), "{}", NOW)
    second = hooks_file.write_text(str(path), "[]", NOW)
    assert first is not None and second is not None and first != second
    assert json.loads(Path(first).read_text()) == USER_SETTINGS
    assert Path(second).read_text() == "{}"


def test_a_file_install_created_is_gone_after_uninstall(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert (
        _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY).returncode == 0
    )
    assert path.exists()
    assert _run("uninstall", "--settings", str(path)).returncode == 0
    assert not path.exists()


def test_an_empty_object_file_of_the_user_survives_install_and_uninstall(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}\n")
    assert (
        _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY).returncode == 0
    )
    assert _run("uninstall", "--settings", str(path)).returncode == 0
    assert path.exists() and json.loads(path.read_text()) == {}


def test_a_new_settings_file_gets_no_backup(tmp_path: Path) -> None:
    path = tmp_path / "new" / ".claude" / "settings.json"
    assert hooks_file.commit(_plan(path), NOW).backup is None
    assert path.stat().st_mode & 0o777 == 0o600
    assert os.listdir(path.parent) == ["settings.json"]


@pytest.mark.parametrize("content", ["{not json", '["a list"]', '{"a": 1,}', '"text"'])
def test_invalid_settings_are_refused_without_touching_the_file(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    mtime = path.stat().st_mtime_ns
    result = _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY)
    assert result.returncode == 1
    assert "nothing was changed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert path.read_text() == content and path.stat().st_mtime_ns == mtime
    assert os.listdir(tmp_path) == ["settings.json"]
    assert _run("uninstall", "--settings", str(path)).returncode == 1
    assert path.read_text() == content


@pytest.mark.parametrize("content", ["", "  \n"])
def test_an_empty_settings_file_counts_as_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    assert claude_settings.read_settings(str(path)) == {}


def test_the_command_line_installs_once_and_uninstalls(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    first = _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY)
    assert first.returncode == 0, first.stderr
    assert "installed" in first.stdout and "backup" in first.stdout
    content = path.read_bytes()
    backups = sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name)
    second = _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY)
    assert second.returncode == 0 and "unchanged" in second.stdout
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name) == backups
    third = _run("uninstall", "--settings", str(path))
    assert third.returncode == 0 and "removed" in third.stdout
    assert json.loads(path.read_text()) == USER_SETTINGS


def test_a_symlinked_settings_file_is_not_replaced_by_a_copy(tmp_path: Path) -> None:
    """Many people keep ~/.claude/settings.json as a link into a dotfiles repository."""
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps(USER_SETTINGS))
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    os.symlink(dotfiles, link)
    result = _run("install", "--settings", str(link), "--python", PY, "--entry", ENTRY)
    if result.returncode != 0:  # refusing with a clear message is acceptable
        assert link.is_symlink() and json.loads(dotfiles.read_text()) == USER_SETTINGS
        return
    assert link.is_symlink(), "install replaced the user's symlink with a regular file"
    assert json.loads(dotfiles.read_text()) == claude_settings.install(
        USER_SETTINGS, claude_settings.hooks_block(claude_settings.installed_command(PY, ENTRY))
    )


# --- shipped files generated from HOOKS


def test_plugin_hooks_json_is_what_settings_generates() -> None:
    shipped = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    assert shipped == {"hooks": claude_settings.hooks_block(claude_settings.plugin_command)}
    printed = _run("plugin")
    assert json.loads(printed.stdout) == shipped


def test_settings_example_is_the_installed_block_with_example_paths() -> None:
    shipped = json.loads((ROOT / "settings.example.json").read_text())
    expected = claude_settings.hooks_block(
        claude_settings.installed_command(EXAMPLE_PY, EXAMPLE_ENTRY)
    )
    allow = ["Bash(agent-hooks *)", f"Bash({EXAMPLE_CLI} *)"]
    assert shipped == {"permissions": {"allow": allow}, "hooks": expected}
    printed = _run("print", "--python", EXAMPLE_PY, "--entry", EXAMPLE_ENTRY, "--cli", EXAMPLE_CLI)
    assert json.loads(printed.stdout) == shipped


def test_plugin_manifest_exists_and_does_not_list_hooks_twice() -> None:
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest.get("name")
    assert "hooks" not in manifest  # hooks/hooks.json loads by itself; listing it loads it twice


def test_plugin_runner_is_executable_and_uses_dash_is() -> None:
    run = ROOT / "hooks" / "run"
    assert os.access(run, os.X_OK)
    assert "-IS" in run.read_text()


# --- the agent-hooks command allowed in permissions.allow, and the record of it


def _install_cmd(path: Path, record: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["install", "--settings", str(path), "--python", PY, "--entry", ENTRY]
    return _run(*args, "--cli", CLI, "--record", str(record), *extra)


def _uninstall_cmd(path: Path, record: Path) -> subprocess.CompletedProcess[str]:
    return _run("uninstall", "--settings", str(path), "--record", str(record))


def _backups(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if ".agent-hooks-backup-" in p.name)


def test_cli_rules_are_the_bash_form_by_name_and_by_path() -> None:
    assert claude_settings.cli_rules() == ["Bash(agent-hooks *)"]
    assert claude_settings.cli_rules(CLI) == RULES


def test_install_allows_the_cli_and_uninstall_takes_out_exactly_that(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "data" / "install-record.json"
    text = json.dumps(USER_SETTINGS, indent=4) + "\n"
    path.write_text(text)
    assert _install_cmd(path, record).returncode == 0
    doc = json.loads(path.read_text())
    assert doc["permissions"]["allow"] == ["Bash(ls:*)", *RULES]  # the user's first
    assert doc["permissions"]["deny"] == []
    saved = json.loads(record.read_text())["settings"][os.path.realpath(path)]
    assert saved == {"allow": RULES, "created": False}
    assert _uninstall_cmd(path, record).returncode == 0
    assert path.read_text() == text  # byte for byte
    assert not record.exists()  # it named nothing else


def test_a_rule_the_user_had_before_stays_after_uninstall(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    mine = {"permissions": {"allow": ["Bash(agent-hooks *)", "Read"]}, "model": "x"}
    path.write_text(json.dumps(mine))
    assert _install_cmd(path, record).returncode == 0
    assert json.loads(path.read_text())["permissions"]["allow"] == [
        *mine["permissions"]["allow"],
        RULES[1],
    ]
    # the user changes something else, so uninstall cannot simply restore the backup
    doc = json.loads(path.read_text())
    doc["model"] = "y"
    path.write_text(json.dumps(doc))
    assert _uninstall_cmd(path, record).returncode == 0
    after = json.loads(path.read_text())
    assert after == {"permissions": {"allow": ["Bash(agent-hooks *)", "Read"]}, "model": "y"}


def test_rules_added_after_install_by_the_user_are_kept(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    path.write_text(json.dumps({"model": "x"}))
    assert _install_cmd(path, record).returncode == 0
    doc = json.loads(path.read_text())
    doc["permissions"]["allow"].append("Bash(make *)")
    path.write_text(json.dumps(doc))
    assert _uninstall_cmd(path, record).returncode == 0
    assert json.loads(path.read_text()) == {
        "model": "x",
        "permissions": {"allow": ["Bash(make *)"]},
    }


def test_without_a_record_no_rule_is_added_or_removed(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": RULES}}))
    assert (
        _run("install", "--settings", str(path), "--python", PY, "--entry", ENTRY).returncode == 0
    )
    assert json.loads(path.read_text())["permissions"] == {"allow": RULES}
    assert _run("uninstall", "--settings", str(path)).returncode == 0
    assert json.loads(path.read_text()) == {"permissions": {"allow": RULES}}


def test_a_moved_cli_replaces_the_old_path_rule(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    path.write_text("{}\n")
    assert _install_cmd(path, record).returncode == 0
    moved = _run(
        "install",
        "--settings",
        str(path),
        "--python",
        PY,
        "--entry",
        ENTRY,
        "--cli",
        "/elsewhere/agent-hooks",
        "--record",
        str(record),
    )
    assert moved.returncode == 0
    allow = json.loads(path.read_text())["permissions"]["allow"]
    assert allow == ["Bash(agent-hooks *)", "Bash(/elsewhere/agent-hooks *)"]
    assert _uninstall_cmd(path, record).returncode == 0
    assert path.read_text() == "{}\n"


@pytest.mark.parametrize("permissions", [[], "x", {"allow": "Bash"}])
def test_odd_permissions_are_refused_without_touching_the_file(
    tmp_path: Path, permissions: Any
) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    text = json.dumps({"permissions": permissions})
    path.write_text(text)
    result = _install_cmd(path, record)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "permissions" in result.stderr
    assert path.read_text() == text and not record.exists()


def test_at_most_one_backup_across_install_uninstall_cycles(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    text = json.dumps(USER_SETTINGS, indent=4) + "\n"
    path.write_text(text)
    for _ in range(3):
        assert _install_cmd(path, record).returncode == 0
        assert len(_backups(path)) == 1
        assert _install_cmd(path, record, "--statusline").returncode == 0  # a change of ours
        assert len(_backups(path)) == 1
        assert _uninstall_cmd(path, record).returncode == 0
        assert path.read_text() == text
        assert _backups(path) == []  # restored: the file itself is that copy


def test_an_uninstall_that_cannot_restore_keeps_one_backup(tmp_path: Path) -> None:
    path, record = tmp_path / "settings.json", tmp_path / "install-record.json"
    path.write_text(json.dumps(USER_SETTINGS))
    assert _install_cmd(path, record).returncode == 0
    doc = json.loads(path.read_text())
    doc["model"] = "haiku"
    path.write_text(json.dumps(doc))
    assert _uninstall_cmd(path, record).returncode == 0
    (backup,) = _backups(path)
    assert json.loads((tmp_path / backup).read_text()) == doc  # what uninstall changed
    assert json.loads(path.read_text()) == {**USER_SETTINGS, "model": "haiku"}


def test_a_file_install_created_is_removed_by_uninstall_with_its_record(tmp_path: Path) -> None:
    path, record = tmp_path / ".claude" / "settings.json", tmp_path / "install-record.json"
    assert _install_cmd(path, record).returncode == 0
    assert json.loads(record.read_text())["settings"][os.path.realpath(path)]["created"] is True
    assert _uninstall_cmd(path, record).returncode == 0
    assert not path.exists() and not record.exists()
