"""The real ./install.sh with Codex, Gemini CLI, Qwen Code and opencode on the machine
(issues 19, 32): found by their directories, named in the output, installed at user level
beside the user's own hooks and settings, and with --project into the project's files with
what the user must do to trust it; `agent-hooks doctor` agrees; a plain uninstall takes
exactly that out of every client and every project it went into; a hook left behind (a
project file committed with these paths) lets every call through once the copy is gone;
purge too.

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
QWEN_SETTINGS = {
    "model": {"name": "qwen3-coder"},
    "hooks": {"PreToolUse": [{"matcher": "edit", "hooks": [{"type": "command", "command": "x"}]}]},
}
OPENCODE_PLUGIN = "export const Mine = async () => ({});\n"
USER_FILES = (
    ".codex/config.toml",
    ".codex/hooks.json",
    ".gemini/settings.json",
    ".qwen/settings.json",
    ".config/opencode/plugin/mine.js",
)


class Run:
    def __init__(self, base: Path, pip_env: dict[str, str]) -> None:
        self.base = base
        self.pip_env = pip_env
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
            and not any((Path(p) / c).exists() for c in ("codex", "gemini", "qwen", "opencode"))
        )
        return {
            "HOME": str(self.home),
            "PATH": path,
            "PYTHON": os.path.realpath(sys.executable),
            "LANG": "C.UTF-8",
            **self.pip_env,
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
def run(tmp_path_factory: pytest.TempPathFactory, pip_from_wheelhouse: dict[str, str]) -> Run:
    r = Run(tmp_path_factory.mktemp("clients"), pip_from_wheelhouse)
    (r.home / ".codex").mkdir(parents=True)
    (r.home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (r.home / ".codex" / "hooks.json").write_text(json.dumps(CODEX_HOOKS, indent=2) + "\n")
    (r.home / ".gemini").mkdir()
    (r.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2) + "\n")
    (r.home / ".qwen").mkdir()
    (r.home / ".qwen" / "settings.json").write_text(json.dumps(QWEN_SETTINGS, indent=4) + "\n")
    (r.home / ".config" / "opencode" / "plugin").mkdir(parents=True)
    (r.home / ".config" / "opencode" / "plugin" / "mine.js").write_text(OPENCODE_PLUGIN)
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
    r.sh("project install again", "--project", str(r.project))
    r.seen["project files"] = {
        k: v for k, v in r.files().items() if k.startswith(str(r.project)) and "/.git/" not in k
    }
    r.sh("uninstall", "--uninstall")  # the project's hooks too: the copy they run goes
    r.seen["uninstalled"] = r.files()
    r.seen["leftover runs"] = _run_left_behind(r)
    r.sh(
        "install for purge", "--clients", "codex,gemini,qwen,opencode", "--project", str(r.project)
    )
    r.sh("purge", "--uninstall", "--purge", "--yes")
    r.seen["purged"] = r.files()
    r.seen["purged dirs"] = sorted(str(p) for p in r.project.rglob("*"))
    r.seen["data after purge"] = r.data.exists()
    return r


def _run_left_behind(r: Run) -> dict[str, tuple[int, str, str]]:
    """The project's files as they were installed (committed, then cloned by a teammate, or
    restored from a backup) after the installed copy is gone: each hook command, run by the
    shell its client runs it with, on a payload, exits 0 and says nothing — Claude Code,
    Codex and Gemini CLI read exit 2 + stderr (Gemini CLI also 127 + stderr) as a deny."""
    shells = {
        ".claude": "/bin/sh",
        ".codex": "/bin/bash",
        ".gemini": "/bin/bash",
        ".qwen": "/bin/bash",
    }
    seen = {}
    for path, data in r.seen["project files"].items():
        if not path.endswith(".json") or "backup" in path:
            continue
        shell = next(sh for d, sh in shells.items() if f"/{d}/" in path)
        for groups in json.loads(data).get("hooks", {}).values():
            for group in groups:
                for handler in group["hooks"]:
                    if "entry.py" not in handler["command"]:
                        continue
                    proc = subprocess.run(
                        [shell, "-c", handler["command"]],
                        input='{"tool_name": "write_file", "tool_input": {"file_path": "x"}}',
                        capture_output=True,
                        text=True,
                        env=r.env(),
                        cwd=str(r.project),
                        timeout=60,
                    )
                    seen[f"{path} {handler['command'].split()[-4]}"] = (
                        proc.returncode,
                        proc.stdout,
                        proc.stderr,
                    )
    return seen


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
    assert f"  Qwen Code: found ({run.home}/.qwen exists)\n" in out
    assert f"  opencode: found ({run.home}/.config/opencode exists)\n" in out
    assert "agent-hooks installed for Codex (7 handlers trusted in " in out
    assert f"{run.home}/.gemini/settings.json: agent-hooks installed" in out
    assert f"{run.home}/.qwen/settings.json: agent-hooks installed" in out
    assert f"{run.home}/.config/opencode/plugin/agent-hooks.js: agent-hooks installed" in out


def test_the_users_own_hooks_and_settings_stay(run: Run) -> None:
    config = (run.home / ".codex" / "config.toml").as_posix()
    installed = run.seen["installed"][config].decode()
    assert installed.startswith(CODEX_CONFIG)
    hooks = json.loads(run.seen["installed"][f"{run.home}/.codex/hooks.json"])
    assert hooks["hooks"]["PreToolUse"][0] == CODEX_HOOKS["hooks"]["PreToolUse"][0]
    gemini = json.loads(run.seen["installed"][f"{run.home}/.gemini/settings.json"])
    assert gemini["general"] == {"vimMode": True}
    assert gemini["hooks"]["AfterTool"][0] == GEMINI_SETTINGS["hooks"]["AfterTool"][0]
    qwen = json.loads(run.seen["installed"][f"{run.home}/.qwen/settings.json"])
    assert qwen["model"] == QWEN_SETTINGS["model"]
    assert qwen["hooks"]["PreToolUse"][0] == QWEN_SETTINGS["hooks"]["PreToolUse"][0]
    mine = f"{run.home}/.config/opencode/plugin/mine.js"
    assert run.seen["installed"][mine] == OPENCODE_PLUGIN.encode()


def test_a_second_install_changes_nothing(run: Run) -> None:
    assert run.seen["installed again"] == run.seen["installed"]


def test_the_installed_hooks_run_as_each_client_runs_them(run: Run) -> None:
    seen = run.seen["hook runs"]
    assert seen["codex"] == (0, "", "")
    assert seen["gemini"] == (0, "", "")
    assert seen["leases"] == ["a.txt", "b.txt"]


def test_doctor_says_every_client_runs_its_hooks(run: Run) -> None:
    proc = run.out["doctor"]
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert [(f["client"], f["ok"]) for f in doc["clients"]] == [
        ("claude", True),
        ("codex", True),
        ("gemini", True),
        ("qwen", True),
        ("opencode", True),
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
    problems = {
        (f["client"], f["project"]): f["problems"] for f in json.loads(proc.stdout)["clients"]
    }
    assert "is not trusted" in problems[("codex", project)][0]
    assert "is not trusted by Gemini CLI" in problems[("gemini", project)][0]
    assert problems[("qwen", project)] == []  # Qwen Code's folder trust is off by default


def test_an_unknown_client_is_refused_before_anything_is_done(run: Run) -> None:
    proc = run.out["bad clients"]
    assert (
        "--clients takes a comma-separated list of claude, codex, gemini, qwen, opencode, "
        "not 'cursor'" in proc.stderr
    )


def test_uninstall_takes_exactly_what_was_added_out_of_every_client(run: Run) -> None:
    for step in ("project uninstalled", "uninstalled"):
        project_files = {k for k in run.seen[step] if k.startswith(str(run.project))}
        assert not any(
            f"/{d}/" in k
            for k in project_files
            for d in (".claude", ".codex", ".gemini", ".qwen", ".opencode")
        ), (step, project_files)
    after = {k: v for k, v in run.seen["uninstalled"].items() if "agent-hooks-backup" not in k}
    before = run.seen["before"]
    for path in USER_FILES:
        assert after[f"{run.home}/{path}"] == before[f"{run.home}/{path}"], path
    assert "agent-hooks.js" not in " ".join(after)
    out = run.out["uninstall"].stdout
    assert f"Gemini CLI in {os.path.realpath(run.project)}:" in out


def test_a_hook_left_behind_lets_every_call_through_once_the_copy_is_gone(run: Run) -> None:
    seen = run.seen["leftover runs"]
    assert len(seen) >= 4 * 5, seen  # Claude Code's, Codex's, Gemini CLI's and Qwen Code's
    assert not (run.data / "venv").exists()
    assert {k: v for k, v in seen.items() if v != (0, "", "")} == {}


def test_purge_takes_agent_hooks_out_of_every_client_and_leaves_nothing(run: Run) -> None:
    out = run.out["purge"].stdout
    for label in ("Codex", "Gemini CLI", "Qwen Code", "opencode"):
        assert f"agent-hooks' {label} hooks taken out" in out, label
    purged = run.seen["purged"]
    assert not any("agent-hooks-backup" in k for k in purged)
    for path in USER_FILES:
        assert purged[f"{run.home}/{path}"] == run.seen["before"][f"{run.home}/{path}"], path
    for d in ("/.codex", "/.gemini", "/.qwen", "/.opencode", "/.claude"):
        assert all(d not in p for p in run.seen["purged dirs"]), d
    assert run.seen["data after purge"] is False
