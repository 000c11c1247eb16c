"""agent_hooks.interop.git_guard in real temporary git repositories: the installed hook is
run by real `git commit`s, reservations are made through reservation_store in a
private state directory, and the committing agent is AGENT_NAME in git's environment.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_hooks.interop import git_guard, git_guard_check
from agent_hooks.reservations import pattern
from agent_hooks.reservations import store as reservation_store

PYTHON = os.path.abspath(sys.executable)


class Repo:
    """One work tree, its private HOME, and helpers to stage, commit and reserve."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.home = home
        self.state_dir = str(home / ".claude")

    def env(self, agent: str | None = None, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "LC_ALL": "C",
        }
        if agent is not None:
            env["AGENT_NAME"] = agent
        env.update(extra)
        return env

    def git(
        self, *args: str, agent: str | None = None, check: bool = True, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=self.env(agent, **extra),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {args}: {proc.stderr}")
        return proc

    def write(self, rel: str, text: str = "x\n") -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def add(self, *rels: str) -> None:
        for rel in rels:
            self.write(rel, f"{rel}\n")
        self.git("add", "-A")

    def commit(
        self, agent: str | None = None, *extra_args: str, **env: str
    ) -> subprocess.CompletedProcess[str]:
        args = ("commit", "-q", "-m", "change", *extra_args)
        return self.git(*args, agent=agent, check=False, **env)

    def commits(self) -> int:
        proc = self.git("rev-list", "--count", "HEAD", check=False)
        return int(proc.stdout.strip()) if proc.returncode == 0 else 0

    def reserve(
        self,
        agent: str | None,
        *patterns: str,
        shared: bool = False,
        root: str | None = None,
        reason: str = "farmhand-42",
    ) -> None:
        outcome = reservation_store.reserve(
            self.state_dir,
            root or str(self.path),
            agent,
            [(p, pattern.compile(p)) for p in patterns],
            reason=reason,
            ttl=3600,
            shared=shared,
            keep=False,
            now=time.time(),
        )
        assert not outcome.conflicts

    @property
    def hook(self) -> Path:
        return self.path / ".git" / "hooks" / "pre-commit"


def init_repo(path: Path, home: Path) -> Repo:
    path.mkdir(parents=True)
    repo = Repo(Path(os.path.realpath(path)), home)
    repo.git("init", "-q")
    repo.git("config", "user.name", "Test")
    repo.git("config", "user.email", "test@example.com")
    repo.git("config", "commit.gpgsign", "false")
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return init_repo(tmp_path / "repo", home)


def install(repo: Repo, mode: str = "block", where: Path | None = None) -> str:
    _, done = git_guard.install(str(where or repo.path), PYTHON, mode)
    return done


def write_hook(path: Path, body: str, mode: int = 0o755) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = f"#!/bin/sh\n{body}\n".encode()
    path.write_bytes(data)
    path.chmod(mode)
    return data


# --- blocking and allowing ------------------------------------------------------------


def test_commit_staging_a_path_another_agent_holds_is_refused(repo: Repo) -> None:
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("src/auth/login.py", "README.md")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert repo.commits() == 0
    expected = 'src/auth/login.py (added): agent "bob" holds src/** (exclusive, reason: farmhand-42'
    assert expected in proc.stderr
    assert "min left" in proc.stderr
    assert "README.md" not in proc.stderr
    assert "git restore --staged" in proc.stderr
    assert "agent-hooks reservations" in proc.stderr
    assert "AGENT_HOOKS_GUARD=off" in proc.stderr and "--no-verify" in proc.stderr


def test_the_agents_own_reservation_does_not_block(repo: Repo) -> None:
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("bob")
    assert proc.returncode == 0, proc.stderr
    assert repo.commits() == 1


def test_shared_reservations_and_unreserved_paths_pass(repo: Repo) -> None:
    install(repo)
    repo.reserve("bob", "docs/**", shared=True)
    repo.reserve("carol", "src/**")
    repo.add("docs/guide.md", "tests/test_a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_without_agent_name_the_committer_is_the_shared_identity(repo: Repo) -> None:
    install(repo)
    repo.reserve(None, "lib/**")
    repo.add("lib/x.py")
    refused = repo.commit("alice")
    assert refused.returncode != 0
    assert "an agent without AGENT_NAME" in refused.stderr
    assert repo.commit(None).returncode == 0  # a person without AGENT_NAME holds it


def test_rename_is_checked_under_both_names(repo: Repo) -> None:
    repo.add("old/f.py")
    assert repo.commit("alice").returncode == 0
    install(repo)
    repo.reserve("bob", "old/**")
    (repo.path / "new").mkdir()
    repo.git("mv", "old/f.py", "new/f.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "old/f.py (renamed from)" in proc.stderr
    assert "new/f.py" not in proc.stderr

    reservation_store.release(
        repo.state_dir, str(repo.path), "bob", everything=True, now=time.time()
    )
    repo.reserve("bob", "new/**")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "new/f.py (renamed to)" in proc.stderr


def test_deleting_a_held_file_is_refused(repo: Repo) -> None:
    repo.add("src/a.py")
    assert repo.commit("alice").returncode == 0
    install(repo)
    repo.reserve("bob", "src/a.py")
    repo.git("rm", "-q", "src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "src/a.py (deleted)" in proc.stderr
    assert repo.commits() == 1


def test_expired_reservations_stop_counting(repo: Repo) -> None:
    install(repo)
    reservation_store.reserve(
        repo.state_dir,
        str(repo.path),
        "bob",
        [("src/**", pattern.compile("src/**"))],
        reason="",
        ttl=60,
        shared=False,
        keep=False,
        now=time.time() - 120,
    )
    repo.add("src/a.py")
    assert repo.commit("alice").returncode == 0


def test_a_project_nested_in_the_repository_is_checked_too(repo: Repo) -> None:
    install(repo)
    sub = repo.path / "services" / "api"
    sub.mkdir(parents=True)
    repo.reserve("bob", "handlers/**", root=str(sub))  # agents started in services/api
    repo.add("services/api/handlers/user.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "services/api/handlers/user.py (added) [project " in proc.stderr


# --- modes and bypasses ----------------------------------------------------------------


def test_warn_only_prints_and_lets_the_commit_through(repo: Repo) -> None:
    install(repo, "warn")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert repo.commits() == 1
    assert "(warn-only)" in proc.stderr and 'agent "bob" holds src/**' in proc.stderr


def test_bypass_env_var_and_no_verify(repo: Repo) -> None:
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice", AGENT_HOOKS_GUARD="off")
    assert proc.returncode == 0
    assert "AGENT_HOOKS_GUARD=off" in proc.stderr
    repo.add("src/b.py")
    warned = repo.commit("alice", AGENT_HOOKS_GUARD="warn")
    assert warned.returncode == 0 and "(warn-only)" in warned.stderr
    repo.add("src/c.py")
    assert repo.commit("alice", "--no-verify").returncode == 0
    assert repo.commits() == 3


def test_missing_interpreter_fails_open_with_a_warning(repo: Repo, tmp_path: Path) -> None:
    git_guard.install(str(repo.path), str(tmp_path / "gone" / "python"), "block")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "missing: reservations not checked" in proc.stderr


@pytest.mark.parametrize("chained", [False, True])
def test_a_guard_whose_agent_hooks_is_gone_says_how_to_remove_it_by_hand(
    repo: Repo, tmp_path: Path, chained: bool
) -> None:
    """After agent-hooks is uninstalled there is no `agent-hooks guard uninstall` to run:
    the message gives the exact commands, and they put the original hook back."""
    original = write_hook(repo.hook, "exit 0") if chained else None
    git_guard.install(str(repo.path), str(tmp_path / "gone" / "python"), "block")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "agent-hooks guard uninstall'" not in proc.stderr.splitlines()[1]
    (command,) = [line.strip() for line in proc.stderr.splitlines() if line.startswith("    rm ")]
    hook = os.path.realpath(repo.hook)
    if chained:
        assert command == (
            f'rm -f -- "{hook}" && mv -- "{os.path.dirname(hook)}/{git_guard.CHAINED}" "{hook}"'
        )
    else:
        assert command == f'rm -f -- "{hook}"'
    subprocess.run(["sh", "-c", command], check=True, cwd="/")
    if chained:
        assert repo.hook.read_bytes() == original
        assert not (repo.hook.parent / git_guard.CHAINED).exists()
    else:
        assert not repo.hook.exists()


def test_a_crashing_check_fails_open_with_a_warning(repo: Repo, tmp_path: Path) -> None:
    broken = tmp_path / "broken-python"
    write_hook(broken, "exit 1")  # an interpreter that cannot import agent_hooks
    git_guard.install(str(repo.path), str(broken), "block")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "check failed (exit 1): commit allowed" in proc.stderr


# --- chaining an existing hook ---------------------------------------------------------


def test_a_failing_chained_hook_still_blocks(repo: Repo) -> None:
    write_hook(repo.hook, "echo lint failed >&2\nexit 3")
    assert install(repo) == "installed, chaining the existing hook"
    repo.add("docs/a.md")  # nothing reserved: only the chained hook can refuse
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "lint failed" in proc.stderr
    assert repo.commits() == 0


def test_chained_hook_success_plus_guard_pass_commits(repo: Repo) -> None:
    marker = repo.path.parent / "chained-ran"
    write_hook(repo.hook, f"echo ran > '{marker}'")
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("docs/a.md")
    assert repo.commit("alice").returncode == 0
    assert marker.read_text() == "ran\n"
    marker.unlink()
    repo.add("src/a.py")
    refused = repo.commit("alice")
    assert refused.returncode != 0 and marker.exists()  # it ran first, then the guard refused


def test_non_executable_chained_hook_is_ignored_as_git_would(repo: Repo) -> None:
    write_hook(repo.hook, "exit 1", mode=0o644)
    install(repo)
    repo.add("docs/a.md")
    assert repo.commit("alice").returncode == 0


# --- where the hook goes ---------------------------------------------------------------


def test_relative_core_hooks_path_is_honoured(repo: Repo) -> None:
    repo.git("config", "core.hooksPath", ".githooks")
    original = write_hook(repo.path / ".githooks" / "pre-commit", "exit 0")
    install(repo)
    assert not repo.hook.exists()
    assert git_guard.read_meta(str(repo.path / ".githooks" / "pre-commit")) is not None
    assert (repo.path / ".githooks" / git_guard.CHAINED).read_bytes() == original
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    assert repo.commit("alice").returncode != 0


def test_absolute_core_hooks_path_is_honoured(repo: Repo, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    repo.git("config", "core.hooksPath", str(shared))
    install(repo)  # the directory does not exist yet: it is created
    assert git_guard.read_meta(str(shared / "pre-commit")) is not None
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    assert repo.commit("alice").returncode != 0


def test_worktree_with_a_git_file(repo: Repo, tmp_path: Path) -> None:
    repo.add("README.md")
    assert repo.commit("alice").returncode == 0
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"))
    wt = Repo(Path(os.path.realpath(tmp_path / "wt")), repo.home)
    assert (wt.path / ".git").is_file()
    install(wt, where=wt.path)
    assert repo.hook.exists()  # worktrees share the common hooks directory
    wt.reserve("bob", "src/**")  # the worktree's own top level is its project
    wt.add("src/a.py")
    proc = wt.commit("alice")
    assert proc.returncode != 0 and "src/a.py (added)" in proc.stderr


# --- install / uninstall bookkeeping ---------------------------------------------------


def test_install_is_idempotent_and_uninstall_restores_byte_for_byte(repo: Repo) -> None:
    original = write_hook(repo.hook, "# \xe9\x00 odd bytes\nexit 0", mode=0o750)
    inode = repo.hook.stat().st_ino
    assert install(repo) == "installed, chaining the existing hook"
    guard_bytes = repo.hook.read_bytes()
    assert install(repo) == "unchanged"
    assert repo.hook.read_bytes() == guard_bytes
    hooks = sorted(p.name for p in repo.hook.parent.iterdir() if p.name.startswith("pre-commit"))
    assert hooks == ["pre-commit", git_guard.CHAINED, "pre-commit.sample"]
    repo.hook.chmod(0o644)  # an inert guard is rewritten, not "unchanged"
    assert install(repo) == "updated" and os.access(repo.hook, os.X_OK)
    assert install(repo, "warn") == "updated"
    assert git_guard.read_meta(str(repo.hook)) == {"version": 1, "python": PYTHON, "mode": "warn"}

    _, done = git_guard.uninstall(str(repo.path))
    assert done == "removed; the original hook is back"
    assert repo.hook.read_bytes() == original
    assert stat.S_IMODE(repo.hook.stat().st_mode) == 0o750
    assert repo.hook.stat().st_ino == inode
    assert not (repo.hook.parent / git_guard.CHAINED).exists()
    assert git_guard.uninstall(str(repo.path))[1] == "not installed"


def test_uninstall_without_an_original_removes_the_hook(repo: Repo) -> None:
    assert install(repo) == "installed"
    assert os.access(repo.hook, os.X_OK)
    assert git_guard.uninstall(str(repo.path))[1] == "removed"
    assert not repo.hook.exists()


def test_ambiguous_layouts_are_refused_untouched(repo: Repo) -> None:
    foreign = write_hook(repo.hook, "exit 0")
    chained = write_hook(repo.hook.parent / git_guard.CHAINED, "exit 1")
    with pytest.raises(git_guard.GuardError, match="not the guard"):
        git_guard.install(str(repo.path), PYTHON, "block")
    with pytest.raises(git_guard.GuardError, match="not the guard"):
        git_guard.uninstall(str(repo.path))
    assert repo.hook.read_bytes() == foreign
    assert (repo.hook.parent / git_guard.CHAINED).read_bytes() == chained


def test_not_a_work_tree(tmp_path: Path) -> None:
    with pytest.raises(git_guard.GuardError, match="not inside a git work tree"):
        git_guard.install(str(tmp_path), PYTHON, "block")


def test_status_reports_the_layout(repo: Repo) -> None:
    write_hook(repo.hook, "exit 0")
    before = git_guard.status(str(repo.path))
    assert before["installed"] is False and before["other_hook"] is True
    install(repo)
    info = git_guard.status(str(repo.path))
    assert info["installed"] is True and info["mode"] == "block" and info["python_ok"] is True
    assert info["chained"] == str(repo.hook.parent / git_guard.CHAINED)
    assert info["repo"] == str(repo.path)


# --- pure parts ------------------------------------------------------------------------


def test_parse_name_status_reads_every_kind_of_change() -> None:
    raw = "M\0a.py\0R087\0old/x\0new/x\0D\0gone\0C100\0src\0copy\0A\0we ird\nname\0T\0link\0"
    assert git_guard_check.parse_name_status(raw) == [
        git_guard_check.Staged("a.py", "modified"),
        git_guard_check.Staged("old/x", "renamed from"),
        git_guard_check.Staged("new/x", "renamed to"),
        git_guard_check.Staged("gone", "deleted"),
        git_guard_check.Staged("copy", "copied to"),
        git_guard_check.Staged("we ird\nname", "added"),
        git_guard_check.Staged("link", "type changed"),
    ]
    assert git_guard_check.parse_name_status("") == []


def test_rendered_script_quotes_the_interpreter_path(repo: Repo, tmp_path: Path) -> None:
    odd = tmp_path / "dir with 'quote'" / "python"
    write_hook(odd, f'exec "{PYTHON}" "$@"')  # a wrapper: a symlink would leave the venv
    git_guard.install(str(repo.path), str(odd), "block")
    meta = git_guard.read_meta(str(repo.hook))
    assert meta == {"version": 1, "python": str(odd), "mode": "block"}
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0 and 'agent "bob" holds src/**' in proc.stderr
