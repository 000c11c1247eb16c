"""The real ./install.sh, run from a copy of the repository with HOME in a temp dir,
against settings files that already hold the user's own hooks and settings.

One module-scoped run does the whole life cycle (install, install again, the --project
variant, deleting the clone, using the installed hooks and CLI, uninstalling) and
records what it saw; each test checks one promise. Needs PyPI; select with `-m install`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import hooks_file

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
AGENT = "inst__cc_1"
USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "~/bin/notify.sh", "timeout": 3}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "~/bin/ping"}]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
}
PROJECT_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Edit"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "make fmt"}]}]
    },
}
IGNORE = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
)


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"


class Run:
    """Everything the life cycle observed."""

    def __init__(self, base: Path, pip_env: dict[str, str]) -> None:
        self.base = base
        self.pip_env = pip_env
        self.home = base / "home"
        self.project = base / "project"
        self.settings = self.home / ".claude" / "settings.json"
        self.project_settings = self.project / ".claude" / "settings.json"
        self.data = self.home / ".local" / "share" / "agent-hooks"
        self.link = self.home / ".local" / "bin" / "agent-hooks"
        self.steps: dict[str, subprocess.CompletedProcess[str]] = {}
        self.snapshots: dict[str, Any] = {}

    def env(self, **extra: str) -> dict[str, str]:
        path = ":".join(
            p for p in os.environ.get("PATH", "/usr/bin:/bin").split(":") if ".local/bin" not in p
        )
        env = {
            "HOME": str(self.home),
            "PATH": path,
            "PYTHON": os.path.realpath(sys.executable),
            "LANG": "C.UTF-8",
            **self.pip_env,
        }
        env.update(extra)
        return env

    def install_sh(self, clone: Path, step: str, *args: str) -> None:
        proc = subprocess.run(
            [str(clone / "install.sh"), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=str(self.base),
            timeout=600,
        )
        self.steps[step] = proc
        assert proc.returncode == 0, f"{step}: {proc.stdout}\n{proc.stderr}"

    def snapshot(self, name: str) -> None:
        self.snapshots[name] = {
            "settings": self.settings.read_bytes() if self.settings.exists() else None,
            "settings_mtime": self.settings.stat().st_mtime_ns if self.settings.exists() else None,
            "project_settings": self.project_settings.read_bytes()
            if self.project_settings.exists()
            else None,
            "backups": sorted(p.name for p in self.settings.parent.iterdir() if "backup" in p.name),
            "backup_bytes": {
                p.name: p.read_bytes()
                for p in self.settings.parent.iterdir()
                if "agent-hooks-backup" in p.name
            },
            "project_backups": sorted(
                p.name for p in self.project_settings.parent.iterdir() if "backup" in p.name
            )
            if self.project_settings.parent.exists()
            else [],
        }

    def our_commands(self, settings_file: Path) -> dict[str, str]:
        doc = json.loads(settings_file.read_text())
        found = {}
        for event, groups in doc["hooks"].items():
            for group in groups:
                for handler in group.get("hooks", []):
                    if "agent-hooks/hooks/entry.py" in handler.get("command", ""):
                        found[event] = handler["command"]
        return found


def _copy_repo(target: Path) -> Path:
    shutil.copytree(ROOT, target, ignore=IGNORE, symlinks=True)
    return target


def _payload(name: str, run: Run, **overrides: Any) -> str:
    doc = json.loads((ROOT / "tests" / "fixtures" / "payloads" / f"{name}.json").read_text())[
        "stdin"
    ]
    raw = (
        json.dumps(doc)
        .replace("/home/dev/myproject", str(run.project))
        .replace("/home/dev", str(run.home))
    )
    data = json.loads(raw)
    data.update(overrides)
    return json.dumps(data)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, pip_from_wheelhouse: dict[str, str]) -> Run:
    r = Run(tmp_path_factory.mktemp("install"), pip_from_wheelhouse)
    r.home.mkdir()
    (r.project / ".git").mkdir(parents=True)
    r.settings.parent.mkdir(parents=True)
    r.settings.write_text(text(USER_SETTINGS))
    r.settings.chmod(0o644)
    r.project_settings.parent.mkdir(parents=True)
    r.project_settings.write_text(text(PROJECT_SETTINGS))
    r.snapshot("before")

    clone = _copy_repo(r.base / "clone")
    r.install_sh(clone, "install")
    r.snapshot("installed")
    r.install_sh(clone, "install again")
    r.snapshot("installed again")
    r.install_sh(clone, "project install", "--project", str(r.project))
    r.snapshot("project installed")
    r.install_sh(clone, "project install again", "--project", str(r.project))
    r.snapshot("project installed again")
    shutil.rmtree(clone)  # non-editable: the installed copy must not need the clone

    outside = r.base / "elsewhere"
    outside.mkdir()
    hook_env = r.env(AGENT_NAME=AGENT, CLAUDE_PROJECT_DIR=str(r.project))
    commands = r.our_commands(r.settings)
    r.snapshots["commands"] = commands
    (r.project / "a.txt").write_text("alpha\nline two\n")
    for event, fixture in (
        ("SessionStart", "SessionStart_startup"),
        ("PreToolUse", "PreToolUse_Write"),
        ("PostToolUse", "PostToolUse_Write"),
        ("Stop", "Stop"),
        ("SessionEnd", "SessionEnd"),
    ):
        proc = subprocess.run(
            ["/bin/sh", "-c", commands[event]],
            input=_payload(fixture, r),
            capture_output=True,
            text=True,
            env=hook_env,
            cwd=str(outside),
            timeout=60,
        )
        r.steps[f"hook {event}"] = proc
    state = r.home / ".claude" / f"state-{AGENT}.json"
    r.snapshots["state"] = json.loads(state.read_text()) if state.exists() else None
    r.snapshots["log"] = (
        (r.home / ".claude" / "agent-hooks.log").read_text()
        if (r.home / ".claude" / "agent-hooks.log").exists()
        else ""
    )
    r.steps["cli"] = subprocess.run(
        [str(r.link), "status", "--json"],
        capture_output=True,
        text=True,
        env=hook_env,
        cwd=str(outside),
        timeout=60,
    )
    r.snapshots["link_target"] = os.readlink(r.link) if r.link.is_symlink() else None
    r.snapshots["record"] = json.loads((r.data / "install-record.json").read_text())

    kept = r.home / ".claude" / "state-keep__cc_9.json"
    kept.write_text('{"registered": true}')
    clone = _copy_repo(r.base / "clone2")
    r.install_sh(clone, "project uninstall", "--uninstall", "--project", str(r.project))
    r.snapshot("project uninstalled")
    r.install_sh(clone, "uninstall", "--uninstall")
    r.snapshot("uninstalled")
    r.snapshots["state_kept"] = kept.exists()
    return r


def test_install_merges_the_hooks_with_absolute_paths(run: Run) -> None:
    doc = json.loads(run.snapshots["installed"]["settings"])
    venv_python = run.data / "venv" / "bin" / "python"
    entry = run.data / "hooks" / "entry.pyc"  # compiled: no compile on every run
    commands = run.snapshots["commands"]
    assert set(commands) >= {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    for event, command in commands.items():
        assert command == hooks_file.hook_command(str(venv_python), str(entry), event)
    for key, value in USER_SETTINGS.items():
        if key not in ("hooks", "permissions"):
            assert doc[key] == value
    assert doc["permissions"] == {
        "allow": [*USER_SETTINGS["permissions"]["allow"], *rules(run)],
        "deny": USER_SETTINGS["permissions"]["deny"],
    }
    for event, groups in USER_SETTINGS["hooks"].items():
        assert doc["hooks"][event][: len(groups)] == groups
    assert "is not on the PATH of your login shell" in run.steps["install"].stderr


def test_install_backs_up_the_users_file_first(run: Run) -> None:
    (backup,) = run.snapshots["installed"]["backups"]
    assert backup.startswith("settings.json.agent-hooks-backup-")
    assert run.snapshots["installed"]["backup_bytes"][backup] == run.snapshots["before"]["settings"]


def test_a_second_install_changes_nothing(run: Run) -> None:
    once, twice = run.snapshots["installed"], run.snapshots["installed again"]
    assert twice["settings"] == once["settings"]
    assert twice["settings_mtime"] == once["settings_mtime"]
    assert twice["backups"] == once["backups"]
    assert "unchanged" in run.steps["install again"].stdout


def test_the_project_variant_touches_only_the_project(run: Run) -> None:
    installed = run.snapshots["project installed"]
    assert installed["settings"] == run.snapshots["installed again"]["settings"]
    doc = json.loads(installed["project_settings"])
    assert doc["permissions"] == {"allow": [*PROJECT_SETTINGS["permissions"]["allow"], *rules(run)]}
    assert doc["hooks"]["PostToolUse"][0] == PROJECT_SETTINGS["hooks"]["PostToolUse"][0]
    assert set(_ours(doc)) >= {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    again = run.snapshots["project installed again"]
    assert again["project_settings"] == installed["project_settings"]
    assert (
        again["project_backups"] == installed["project_backups"]
        and len(installed["project_backups"]) == 1
    )


def rules(run: Run) -> list[str]:
    """What install allows: the agent-hooks command by name and by its link's path."""
    return ["Bash(agent-hooks *)", f"Bash({run.link} *)"]


def _ours(doc: dict[str, Any]) -> list[str]:
    return [
        event
        for event, groups in doc["hooks"].items()
        for g in groups
        for h in g.get("hooks", [])
        if "agent-hooks/hooks/entry.py" in h.get("command", "")
    ]


@pytest.mark.parametrize(
    "event", ["SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
)
def test_installed_hooks_run_from_outside_after_the_clone_is_gone(run: Run, event: str) -> None:
    proc = run.steps[f"hook {event}"]
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    if event == "SessionStart":
        context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert AGENT in context
    else:
        assert proc.stdout == ""


def test_installed_hooks_did_their_work(run: Run) -> None:
    state = run.snapshots["state"]
    assert state is not None, run.snapshots["log"]
    assert state["registered"] is True and state["active"] is False  # SessionEnd ran last
    assert state["files_created"] == [f"{run.project}/a.txt"]
    assert run.snapshots["log"] == ""


def test_the_cli_link_works_without_the_clone(run: Run) -> None:
    assert run.snapshots["link_target"] == str(run.data / "venv" / "bin" / "agent-hooks")
    proc = run.steps["cli"]
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["agent"] == AGENT
    assert status["state_file"] == str(run.home / ".claude" / f"state-{AGENT}.json")


def test_uninstall_gives_the_user_their_settings_back_exactly(run: Run) -> None:
    after = run.snapshots["uninstalled"]["settings"]
    assert json.loads(after) == USER_SETTINGS
    assert list(json.loads(after)) == list(USER_SETTINGS)
    assert after == run.snapshots["before"]["settings"]


def test_project_uninstall_gives_the_project_settings_back(run: Run) -> None:
    after = run.snapshots["project uninstalled"]
    assert after["project_settings"] == run.snapshots["before"]["project_settings"]
    assert (
        after["settings"] == run.snapshots["installed again"]["settings"]
    )  # the user file untouched


def test_uninstall_removes_the_venv_and_link_and_keeps_state(run: Run) -> None:
    assert not (run.data / "venv").exists()
    assert not (run.data / "hooks").exists()
    assert not run.link.exists() and not run.link.is_symlink()
    assert run.snapshots["state_kept"] is True


def test_uninstall_keeps_no_backup_once_the_file_is_restored(run: Run) -> None:
    assert run.snapshots["uninstalled"]["backups"] == []
    assert run.snapshots["project uninstalled"]["project_backups"] == []


def test_the_install_record_names_each_settings_file_until_its_uninstall(run: Run) -> None:
    recorded = run.snapshots["record"]
    assert set(recorded["settings"]) == {
        os.path.realpath(run.settings),
        os.path.realpath(run.project_settings),
    }
    assert all(e["allow"] == rules(run) for e in recorded["settings"].values())
    assert not (run.data / "install-record.json").exists()
    assert not run.data.exists()  # nothing of the install is left
