"""The real ./install.sh with Codex and Gemini CLI on the machine (issue 19): found by their
directories, named in the output, installed at user level beside the user's own hooks and
settings, and with --project into the project's files with what the user must do to trust
it; `agent-hooks doctor` agrees; uninstall takes exactly that out of every client; purge too.

One module-scoped run does the life cycle and records what it saw; each test checks one
promise. Needs PyPI; select with `-m install`.
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

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"
)
CODEX_CONFIG = 'model = "gpt-5.5"\n\n# the user\'s own\n[tui]\nnotifications = true\n'
CODEX_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
    }
}
GEMINI_SETTINGS = {
    "general": {"vimMode": True},
    "hooks": {"AfterTool": [{"hooks": [{"type": "command", "name": "fmt", "command": "fmt"}]}]},
}


class Run:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.project = base / "project"
        self.data = self.home / ".local" / "share" / "agent-hooks"
        self.cli = self.home / ".local" / "bin" / "agent-hooks"
        self.out: dict[str, subprocess.CompletedProcess[str]] = {}
        self.seen: dict[str, Any] = {}

    def env(self) -> dict[str, str]:
        path = ":".join(
            p
            for p in os.environ.get("PATH", "/usr/bin:/bin").split(":")
            if ".local/bin" not in p
            and not (Path(p) / "codex").exists()
            and not (Path(p) / "gemini").exists()
        )
        return {
            "HOME": str(self.home),
            "PATH": path,
            "PYTHON": os.path.realpath(sys.executable),
            "LANG": "C.UTF-8",
        }

    def sh(self, step: str, *args: str, ok: bool = True) -> str:
        clone = self.base / "clone"
        if not clone.exists():
            shutil.copytree(ROOT, clone, ignore=IGNORE, symlinks=True)
        proc = subprocess.run(
            [str(clone / "install.sh"), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=str(self.base),
            timeout=900,
        )
        self.out[step] = proc
        assert (proc.returncode == 0) is ok, f"{step}: {proc.stdout}\n{proc.stderr}"
        return proc.stdout + proc.stderr

    def doctor(self, step: str) -> None:
        self.out[step] = subprocess.run(
            [str(self.cli), "doctor", "--json"],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=120,
        )

    def files(self) -> dict[str, bytes]:
        found = {}
        for root in (self.home, self.project):
            for path in sorted(root.rglob("*")):
                if path.is_file() and ".local" not in path.parts:
                    found[str(path)] = path.read_bytes()
        return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    r = Run(tmp_path_factory.mktemp("clients"))
    (r.home / ".codex").mkdir(parents=True)
    (r.home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (r.home / ".codex" / "hooks.json").write_text(json.dumps(CODEX_HOOKS, indent=2) + "\n")
    (r.home / ".gemini").mkdir()
    (r.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2) + "\n")
    (r.project / ".git").mkdir(parents=True)
    r.seen["before"] = r.files()

    r.sh("install")
    r.seen["installed"] = r.files()
    r.sh("install again")
    r.seen["installed again"] = r.files()
    r.doctor("doctor")
    r.seen["hook runs"] = _run_installed_hooks(r)
    r.sh("project install", "--project", str(r.project))
    r.doctor("doctor with an untrusted project")
    r.sh("bad clients", "--clients", "claude,cursor", ok=False)
    r.sh("project uninstall", "--uninstall", "--project", str(r.project))
    r.seen["project uninstalled"] = r.files()
    r.sh("uninstall", "--uninstall")
    r.seen["uninstalled"] = r.files()
    r.sh("install for purge", "--clients", "codex,gemini", "--project", str(r.project))
    r.sh("purge", "--uninstall", "--purge", "--yes")
    r.seen["purged"] = r.files()
    r.seen["purged dirs"] = sorted(str(p) for p in r.project.rglob("*"))
    return r


def _run_installed_hooks(r: Run) -> dict[str, Any]:
    """Each client's installed PreToolUse command, run through bash as the client runs it,
    on a payload of that client: it starts and allows (nothing is held)."""
    codex = json.loads((r.home / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    gemini = json.loads((r.home / ".gemini" / "settings.json").read_text())["hooks"]["BeforeTool"]
    commands = {
        "codex": next(
            h["command"] for g in codex for h in g["hooks"] if "entry.py" in h["command"]
        ),
        "gemini": next(
            h["command"] for g in gemini for h in g["hooks"] if "entry.py" in h["command"]
        ),
    }
    payloads = {
        "codex": {
            "session_id": "s1",
            "cwd": str(r.project),
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"},
        },
        "gemini": {
            "session_id": "s2",
            "cwd": str(r.project),
            "hook_event_name": "BeforeTool",
            "tool_name": "write_file",
            "tool_input": {"file_path": "b.txt", "content": "x"},
        },
    }
    seen = {}
    for client, command in commands.items():
        proc = subprocess.run(
            ["/bin/bash", "-c", command],
            input=json.dumps(payloads[client]),
            capture_output=True,
            text=True,
            env={**r.env(), "AGENT_NAME": f"inst__{client}"},
            cwd=str(r.project),
            timeout=60,
        )
        seen[client] = (proc.returncode, proc.stdout, proc.stderr)
    leases = r.project / ".git" / "agent-hooks" / "leases"
    seen["leases"] = sorted(p.name for p in leases.iterdir()) if leases.is_dir() else []
    return seen


def test_each_client_found_is_named_and_installed(run: Run) -> None:
    out = run.out["install"].stdout + run.out["install"].stderr
    assert "  Claude Code: always\n" in out
    assert f"  Codex: found ({run.home}/.codex exists)\n" in out
    assert f"  Gemini CLI: found ({run.home}/.gemini exists)\n" in out
    assert "agent-hooks installed for Codex (7 handlers trusted in " in out
    assert f"{run.home}/.gemini/settings.json: agent-hooks installed" in out


def test_the_users_own_hooks_and_settings_stay(run: Run) -> None:
    config = (run.home / ".codex" / "config.toml").as_posix()
    installed = run.seen["installed"][config].decode()
    assert installed.startswith(CODEX_CONFIG)
    hooks = json.loads(run.seen["installed"][f"{run.home}/.codex/hooks.json"])
    assert hooks["hooks"]["PreToolUse"][0] == CODEX_HOOKS["hooks"]["PreToolUse"][0]
    gemini = json.loads(run.seen["installed"][f"{run.home}/.gemini/settings.json"])
    assert gemini["general"] == {"vimMode": True}
    assert gemini["hooks"]["AfterTool"][0] == GEMINI_SETTINGS["hooks"]["AfterTool"][0]


def test_a_second_install_changes_nothing(run: Run) -> None:
    assert run.seen["installed again"] == run.seen["installed"]


def test_the_installed_hooks_run_as_each_client_runs_them(run: Run) -> None:
    seen = run.seen["hook runs"]
    assert seen["codex"] == (0, "", "")
    assert seen["gemini"] == (0, "", "")
    assert seen["leases"] == ["a.txt", "b.txt"]


def test_doctor_says_every_client_runs_its_hooks(run: Run) -> None:
    proc = run.out["doctor"]
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert [(f["client"], f["ok"]) for f in found] == [
        ("claude", True),
        ("codex", True),
        ("gemini", True),
    ]


def test_a_project_install_says_what_to_do_to_trust_it(run: Run) -> None:
    out = run.out["project install"].stdout
    project = os.path.realpath(run.project)
    assert (
        f'add [projects."{project}"] trust_level = "trusted" to {run.home}/.codex/config.toml'
        in out
    )
    assert f'or add "{project}": "TRUST_FOLDER" to {run.home}/.gemini/trustedFolders.json' in out
    proc = run.out["doctor with an untrusted project"]
    assert proc.returncode == 1
    problems = {(f["client"], f["project"]): f["problems"] for f in json.loads(proc.stdout)}
    assert "is not trusted" in problems[("codex", project)][0]
    assert "is not trusted by Gemini CLI" in problems[("gemini", project)][0]


def test_an_unknown_client_is_refused_before_anything_is_done(run: Run) -> None:
    proc = run.out["bad clients"]
    assert "--clients takes a comma-separated list of claude, codex, gemini, not 'cursor'" in (
        proc.stderr
    )


def test_uninstall_takes_exactly_what_was_added_out_of_every_client(run: Run) -> None:
    project_files = {k for k in run.seen["project uninstalled"] if k.startswith(str(run.project))}
    assert not any("/.codex/" in k or "/.gemini/" in k for k in project_files)
    after = {k: v for k, v in run.seen["uninstalled"].items() if "agent-hooks-backup" not in k}
    before = run.seen["before"]
    for path in (".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json"):
        assert after[f"{run.home}/{path}"] == before[f"{run.home}/{path}"], path


def test_purge_takes_agent_hooks_out_of_every_client_and_leaves_no_backup(run: Run) -> None:
    out = run.out["purge"].stdout
    assert (
        "agent-hooks' Codex hooks taken out" in out
        and "agent-hooks' Gemini CLI hooks taken out" in out
    )
    purged = run.seen["purged"]
    assert not any("agent-hooks-backup" in k for k in purged)
    for path in (".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json"):
        assert purged[f"{run.home}/{path}"] == run.seen["before"][f"{run.home}/{path}"], path
    assert all("/.codex" not in p and "/.gemini" not in p for p in run.seen["purged dirs"])
