"""A newcomer's first hour with the real ./install.sh (issue 12): the CLI reachable from a
login shell, and a clean way out.

The life cycle runs once per module in a fresh HOME (a `.profile` and `.bashrc` of the
user's own, nothing else) with a git project outside it: install, use (hooks, CLI, git
guard, reservations, a briefing, a work session), uninstall, install, use again,
`--uninstall --purge` refused without a terminal, then `--uninstall --purge --yes`.
Done when HOME is byte for byte what it was before the first install.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.install,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
AGENT = "newbie__cc_1"
PROFILE = "# the user's own login profile\numask 022\n"
BASHRC = "# the user's own bashrc\nalias ll='ls -l'\n"
IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"
)


def snapshot(home: Path) -> dict[str, str]:
    """Every path under `home`: its type, mode and (files) a hash of its contents."""
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(home):
        for name in dirs + files:
            path = Path(root, name)
            rel = str(path.relative_to(home))
            if path.is_symlink():
                found[rel] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                found[rel + "/"] = f"dir {path.stat().st_mode & 0o777:o}"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
                found[rel] = f"file {path.stat().st_mode & 0o777:o} {digest}"
    return found


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [
        f"{'+' if key not in before else '-' if key not in after else '~'} {key}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


class Life:
    def __init__(self, base: Path, pip_env: dict[str, str]) -> None:
        self.base = base
        self.pip_env = pip_env
        self.home = base / "home"
        self.project = base / "project"
        self.clone = base / "clone"
        self.steps: dict[str, subprocess.CompletedProcess[str]] = {}
        self.snapshots: dict[str, Any] = {}

    @property
    def link(self) -> Path:
        return self.home / ".local" / "bin" / "agent-hooks"

    @property
    def state_dir(self) -> Path:
        return self.home / ".claude"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PYTHON": os.path.realpath(sys.executable),
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            **self.pip_env,
        }
        env.update(extra)
        return env

    def run(
        self, step: str, args: list[str], *, check: bool = True, **kw: Any
    ) -> subprocess.CompletedProcess[str]:
        kw.setdefault("env", self.env())
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("cwd", str(self.base))
        proc = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
        self.steps[step] = proc
        if check:
            assert proc.returncode == 0, f"{step}: {proc.stdout}\n{proc.stderr}"
        return proc

    def install_sh(self, step: str, *args: str, check: bool = True) -> Any:
        return self.run(step, [str(self.clone / "install.sh"), *args], check=check)

    def cli(self, step: str, *args: str) -> subprocess.CompletedProcess[str]:
        # Claude Code names its own process in CLAUDE_PID; here the test is that process,
        # so the second conversation of a round is known to follow the first, not run beside it.
        env = self.env(
            AGENT_NAME=AGENT, CLAUDE_PROJECT_DIR=str(self.project), CLAUDE_PID=str(os.getpid())
        )
        return self.run(step, [str(self.link), *args], env=env, cwd=str(self.project))

    def git(self, *args: str) -> None:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["git", *args], cwd=self.project, env=env, check=True, capture_output=True)

    def hook(self, event: str, fixture: str | None, **overrides: Any) -> None:
        settings = json.loads((self.state_dir / "settings.json").read_text())
        command = next(
            h["command"]
            for g in settings["hooks"][event]
            for h in g["hooks"]
            if "agent-hooks/hooks/entry.py" in h["command"]
        )
        if fixture is None:
            stdin = "this is not JSON"  # fails open, and says so in the log
        else:
            doc = json.loads((PAYLOADS / f"{fixture}.json").read_text())["stdin"]
            raw = json.dumps(doc).replace("/home/dev/myproject", str(self.project))
            doc = json.loads(raw.replace("/home/dev", str(self.home)))
            doc.update(overrides)
            stdin = json.dumps(doc)
        # Claude Code names its own process in CLAUDE_PID; here the test is that process,
        # so the second conversation of a round is known to follow the first, not run beside it.
        env = self.env(
            AGENT_NAME=AGENT, CLAUDE_PROJECT_DIR=str(self.project), CLAUDE_PID=str(os.getpid())
        )
        subprocess.run(
            ["/bin/sh", "-c", command],
            input=stdin,
            env=env,
            cwd=str(self.project),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )

    def use(self, round: int) -> None:
        """What a first hour does: conversations, edits, the CLI, a guard, a work session."""
        for n in (1, 2):  # the second conversation archives the first one's trail
            session = f"{round}{n}000000-0000-4000-8000-000000000000"
            self.hook("SessionStart", "SessionStart_startup", session_id=session)
            self.hook("PreToolUse", "PreToolUse_Write", session_id=session)
            self.hook("PostToolUse", "PostToolUse_Write", session_id=session)
            self.hook("Stop", "Stop", session_id=session)
        self.hook("PreToolUse", None)
        self.cli(f"reserve {round}", "reserve", "src/**", "--reason", "newbie")
        self.cli(f"brief {round}", "brief", "set-goal", "Learn agent-hooks")
        self.cli(f"guard {round}", "guard", "install")
        if round == 1:
            self.cli("session", "session", "start", "--client", "ACME", "--code", "FIRST")
        ledger = self.project / ".git" / "agent-hooks"  # where the repository's ledger lives
        ledger.mkdir(exist_ok=True)
        (ledger / "ledger.json").write_text("{}\n")


@pytest.fixture(scope="module")
def life(tmp_path_factory: pytest.TempPathFactory, pip_from_wheelhouse: dict[str, str]) -> Life:
    life = Life(tmp_path_factory.mktemp("newcomer"), pip_from_wheelhouse)
    life.home.mkdir()
    (life.home / ".profile").write_text(PROFILE)
    (life.home / ".bashrc").write_text(BASHRC)
    life.project.mkdir()
    life.git("init", "-q")
    (life.project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (life.project / ".git" / "hooks" / "pre-commit").chmod(0o755)
    life.snapshots["pre-commit"] = (life.project / ".git" / "hooks" / "pre-commit").read_bytes()
    shutil.copytree(ROOT, life.clone, ignore=IGNORE, symlinks=True)
    life.snapshots["home before"] = snapshot(life.home)

    life.install_sh("install 1")
    profile = life.home / ".profile"
    stderr = life.steps["install 1"].stderr
    said = re.search(r"\(fix: add `(.+)` to (\S+), or run ./install.sh --yes\)", stderr)
    life.snapshots["profile line"] = said.group(1) if said else ""
    life.snapshots["profile told"] = said.group(2) if said else ""
    life.snapshots["profile after install 1"] = profile.read_text()
    profile.write_text(PROFILE + life.snapshots["profile line"] + "\n")  # what it is told to do
    life.install_sh("install with the line in .profile")
    profile.write_text(PROFILE)
    life.install_sh("install --yes", "--yes")  # install.sh adds the line itself
    life.snapshots["profile after --yes"] = profile.read_text()
    life.install_sh("install --yes again", "--yes")
    life.snapshots["profile after --yes again"] = profile.read_text()
    profile.write_text(PROFILE)
    life.snapshots["offer on a terminal"] = _on_a_terminal(life, [], "y\n")
    life.snapshots["profile after yes on a terminal"] = profile.read_text()
    profile.write_text(PROFILE)

    settings = json.loads((life.state_dir / "settings.json").read_text())
    life.snapshots["allow"] = settings["permissions"]["allow"]
    life.use(1)
    life.snapshots["state after use"] = snapshot(life.state_dir)
    life.install_sh("uninstall", "--uninstall")
    life.snapshots["after uninstall"] = snapshot(life.home)
    life.install_sh("install 2")
    life.use(2)
    # Claude Code's own files in the directory install made for it: purge leaves them, and
    # nothing of its own (install.sh's record of that directory included; issue 33 item 7)
    own = life.state_dir / "projects" / "p"
    own.mkdir(parents=True)
    (own / "session.jsonl").write_text("{}\n")

    before_refusal = snapshot(life.home)
    life.install_sh("purge without a terminal", "--uninstall", "--purge", check=False)
    life.snapshots["refusal changed"] = differences(before_refusal, snapshot(life.home))
    life.snapshots["answer n"] = _purge_on_a_terminal(life, "n\n")
    life.snapshots["answer n changed"] = differences(before_refusal, snapshot(life.home))
    life.snapshots["listed"] = snapshot(life.state_dir)

    life.install_sh("purge", "--uninstall", "--purge", "--yes")
    life.snapshots["home after"] = snapshot(life.home)
    return life


def _purge_on_a_terminal(life: Life, answer: str) -> tuple[int, str]:
    """Run `--uninstall --purge` with a terminal on stdin, answering `answer`."""
    return _on_a_terminal(life, ["--uninstall", "--purge"], answer)


def _on_a_terminal(life: Life, args: list[str], answer: str) -> tuple[int, str]:
    """Run install.sh ARGS with a terminal on stdin, answering `answer`."""
    main, child = pty.openpty()
    try:
        os.write(main, answer.encode())
        proc = subprocess.run(
            [str(life.clone / "install.sh"), *args],
            stdin=child,
            capture_output=True,
            text=True,
            env=life.env(),
            cwd=str(life.base),
            timeout=300,
        )
    finally:
        os.close(child)
        os.close(main)
    return proc.returncode, proc.stdout + proc.stderr


CLAUDE_CODES_OWN = {".claude/projects/", ".claude/projects/p/", ".claude/projects/p/session.jsonl"}


def test_home_is_as_it_was_before_the_first_install(life: Life) -> None:
    """Purge leaves nothing of agent-hooks (`created-dirs` included): only Claude Code's own
    files in the directory install once made for it stay, and that directory with them."""
    after = {k: v for k, v in life.snapshots["home after"].items() if k not in CLAUDE_CODES_OWN}
    diff = differences(life.snapshots["home before"], after)
    assert diff == ["+ .claude/"], diff
    assert not (life.home / ".local" / "share" / "agent-hooks").exists()


def test_the_repository_is_as_it_was(life: Life) -> None:
    hooks = life.project / ".git" / "hooks"
    assert (hooks / "pre-commit").read_bytes() == life.snapshots["pre-commit"]
    assert not (hooks / "pre-commit.agent-hooks-chained").exists()
    assert not (life.project / ".git" / "agent-hooks").exists()  # the ledger
    # the work session is the user's work: listed as kept, never removed
    assert (life.project / ".claude" / "sessions").is_dir()
    assert f"{life.project}/.claude/sessions/" in life.steps["purge"].stdout


def test_the_cli_is_allowed_by_name_and_by_path(life: Life) -> None:
    assert life.snapshots["allow"] == ["Bash(agent-hooks *)", f"Bash({life.link} *)"]


def test_install_says_how_to_put_the_cli_on_a_login_shells_path(life: Life) -> None:
    """Without a terminal and without --yes the profile is never edited: the line is said."""
    stderr = life.steps["install 1"].stderr
    assert "is not on the PATH of your login shell (/bin/bash)" in stderr
    assert life.snapshots["profile told"] == f"{life.home}/.profile"
    assert life.snapshots["profile line"] == 'export PATH="$HOME/.local/bin:$PATH"'
    assert life.snapshots["profile after install 1"] == PROFILE
    assert "PATH" not in life.steps["install with the line in .profile"].stderr
    assert (
        f"a login shell finds {life.link}" in life.steps["install with the line in .profile"].stdout
    )


def test_install_yes_adds_the_path_line_once(life: Life) -> None:
    line = 'export PATH="$HOME/.local/bin:$PATH"'
    added = life.snapshots["profile after --yes"]
    assert added.startswith(PROFILE) and added.endswith(f"\n{line}\n")
    assert added.count(line) == 1 and "agent-hooks" in added[len(PROFILE) :]
    assert life.snapshots["profile after --yes again"] == added
    assert "PATH" not in life.steps["install --yes again"].stderr


def test_install_asks_on_a_terminal_before_adding_the_path_line(life: Life) -> None:
    code, out = life.snapshots["offer on a terminal"]
    assert code == 0, out
    assert f'Add `export PATH="$HOME/.local/bin:$PATH"` to {life.home}/.profile? [y/N]' in out
    assert (
        life.snapshots["profile after yes on a terminal"] == life.snapshots["profile after --yes"]
    )


def test_install_says_each_step_as_it_runs(life: Life) -> None:
    out = life.steps["install 1"].stdout
    steps = [line for line in out.splitlines() if line.startswith("==> ")]
    assert [s.split()[1] for s in steps] == [
        "creating",
        "installing",
        "compiling",
        "checking",
        "putting",
    ]


def test_purge_lists_everything_before_removing_anything(life: Life) -> None:
    out = life.steps["purge"].stdout
    first_change = min(out.index(x) for x in ("\nremoved ", "agent-hooks removed") if x in out)
    listing = out[:first_change]
    for expected in (
        f"{life.state_dir}/state-{AGENT}.json:",
        f"{life.state_dir}/state-{AGENT}.json.lock:",
        f"{life.state_dir}/agent-hooks.log:",
        f"{life.state_dir}/agent-hooks/:",
        f"{life.link}:",
        f"{life.home}/.local/share/agent-hooks/:",
        f"{life.project}/.git/hooks/pre-commit:",
        f"{life.project}/.git/agent-hooks/:",
        f"{life.state_dir}/settings.json:",
    ):
        assert expected in listing, out


def test_purge_without_a_terminal_refuses_in_one_line_and_changes_nothing(life: Life) -> None:
    proc = life.steps["purge without a terminal"]
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--yes" in proc.stderr
    assert life.snapshots["refusal changed"] == []


def test_purge_answered_no_changes_nothing(life: Life) -> None:
    code, out = life.snapshots["answer n"]
    assert code == 2 and "Remove all of the above? [y/N]" in out and "Nothing was removed" in out
    assert life.snapshots["answer n changed"] == []


def test_a_plain_uninstall_keeps_state_and_says_how_to_purge(life: Life) -> None:
    assert "--uninstall --purge" in life.steps["uninstall"].stdout
    after = life.snapshots["after uninstall"]
    assert f".claude/state-{AGENT}.json" in after
    assert ".claude/agent-hooks.log" in after
    assert ".local/bin/agent-hooks" not in after
    assert not any(k.startswith(".local/share/agent-hooks/venv") for k in after)
    assert not [k for k in after if "agent-hooks-backup" in k]  # restored: no backup kept


def test_the_first_hour_filled_the_state_purge_removed(life: Life) -> None:
    state = life.snapshots["state after use"]
    assert f"state-{AGENT}.json" in state and "agent-hooks.log" in state
    assert any(k.startswith("agent-hooks/trails/") and k.endswith(".json") for k in state)
    assert "agent-hooks/ledgers.json" in state  # the registry of repository ledgers
    assert any(k.startswith("agent-hooks/briefings/") for k in state)
    assert "agent-hooks/guards.json" in state


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--purge"], "--purge goes with --uninstall"),
        (["--uninstall", "--purge", "--project", "/"], "run it without --project"),
        (["--bogus"], "unknown option --bogus"),
    ],
)
def test_bad_options_fail_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    proc = subprocess.run(
        [str(ROOT / "install.sh"), *args],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"install.sh: {message}"] or message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_purge_honours_claude_config_dir_even_with_nothing_installed(tmp_path: Path) -> None:
    """State left behind (e.g. the installed copy deleted by hand) is still found and
    removed, in the directory CLAUDE_CONFIG_DIR names; nothing else there is touched."""
    home, config = tmp_path / "home", tmp_path / "claude-config"
    home.mkdir()
    config.mkdir()
    ours = [
        "state-a.json",
        "state-a.json.lock",
        "state-a.json.corrupt-20261101T000000Z",
        ".state-a.json.aside",
        "agent-state.json",
        "agent-state.json.lock",
        "agent-hooks.log",
        "agent-hooks.log.1",
        "settings.json.agent-hooks-backup-20261101T000000Z",
    ]
    for name in ours:
        (config / name).write_text("{}")
    (config / "agent-hooks" / "trails").mkdir(parents=True)
    theirs = {"settings.json": '{"model": "opus"}\n', "history.jsonl": "x\n", "state-.json": "{}",
              ".settings.json.aside": "{}"}  # fmt: skip
    for name, text in theirs.items():
        (config / name).write_text(text)
    (home / ".claude").mkdir()
    (home / ".claude" / "state-b.json").write_text("{}")  # not the configured directory
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHON": os.path.realpath(sys.executable),
        "CLAUDE_CONFIG_DIR": str(config),
    }
    proc = subprocess.run(
        [str(ROOT / "install.sh"), "--uninstall", "--purge", "--yes"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in config.iterdir()) == sorted(theirs)
    assert (config / "settings.json").read_text() == theirs["settings.json"]
    assert (home / ".claude" / "state-b.json").exists()
    for name in ours:
        assert f"{config}/{name}:" in proc.stdout
