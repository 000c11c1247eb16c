"""agent_hooks.git_guard.guard_script: the installed scripts, run by real git — the
hook they chain gets git's arguments and stdin and can still refuse; Python starts
only when a branch really moves; a missing or crashing check lets git go on and
says so; what the scripts print never names a way around the guard.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_hooks.git_guard import guard_hooks, guard_script
from guard_repo import BYPASS_WORDS, PYTHON, Repo, init_repo, install, write_hook


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    repo = init_repo(tmp_path / "repo", home)
    repo.commit_files("first", {"src/a.py": "v1\n"})
    repo.git("branch", "side")
    return repo


def counting_python(tmp_path: Path) -> tuple[Path, Path]:
    """An interpreter that records each run of the check, then runs the real one."""
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "python"
    write_hook(wrapper, f'echo "$*" >> "{calls}"\nexec "{PYTHON}" "$@"')
    return wrapper, calls


def runs(calls: Path) -> list[str]:
    lines = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return ["ref-updates" if "--ref-updates" in line else "commit" for line in lines]


def test_the_check_starts_only_when_a_branch_really_moves(repo: Repo, tmp_path: Path) -> None:
    python, calls = counting_python(tmp_path)
    guard_hooks.install(str(repo.path), str(python), "block")
    repo.write("src/a.py", "v2\n")
    repo.git("commit", "-q", "-am", "two", agent="alice")
    assert runs(calls) == ["commit"]  # its branch update was judged by pre-commit
    repo.git("commit", "-q", "--amend", "-m", "two again", agent="alice")
    assert runs(calls) == ["commit"]
    for args in (
        ("branch", "fresh"),
        ("checkout", "-q", "-b", "fresh2"),
        ("checkout", "-q", "main"),
        ("tag", "t1"),
        ("fetch", "-q", ".", "main:refs/remotes/origin/main"),
        ("branch", "-D", "fresh"),
        ("pack-refs", "--all"),
        ("reset", "-q", "--hard", "HEAD"),
    ):
        repo.git(*args, agent="alice")
        assert runs(calls) == [], args
    repo.git("branch", "-f", "side", "main", agent="alice")
    assert runs(calls) == ["ref-updates"]
    repo.write("src/a.py", "v3\n")
    repo.git("commit", "-q", "--no-verify", "-am", "three", agent="alice")
    assert runs(calls) == ["ref-updates"]  # pre-commit did not run: nothing was judged
    repo.write("src/a.py", "v4\n")
    repo.git("commit", "-q", "-am", "four", agent="bob")
    repo.git("reset", "-q", "--soft", "HEAD~1", agent="bob")
    assert runs(calls) == ["commit", "ref-updates"]
    # the very commit bob's pre-commit judged, made by another agent: checked
    repo.git("commit", "-q", "--no-verify", "-m", "four again", agent="alice")
    assert runs(calls) == ["ref-updates"]


@pytest.mark.parametrize(
    "variable",
    [
        "CLAUDE_CODE_SESSION_ID",
        "CODEX_THREAD_ID",
        "GEMINI_SESSION_ID",
        "QWEN_CODE_SESSION_ID",
        "OPENCODE_SESSION_ID",
    ],
)
def test_a_commit_judged_in_one_conversation_is_checked_in_another_of_the_same_agent(
    repo: Repo, tmp_path: Path, variable: str
) -> None:
    """One AGENT_NAME in two conversations of any client (each names its conversation in
    its own variable): the commit one conversation's pre-commit judged is judged again
    when the other lands it; the same conversation's lands unchecked."""
    python, calls = counting_python(tmp_path)
    guard_hooks.install(str(repo.path), str(python), "block")
    stop = tmp_path / "stop"  # a commit-msg hook that ends the commit after pre-commit judged it
    write_hook(repo.hooks / "commit-msg", f'[ -e "{stop}" ] && exit 1\nexit 0')
    for other, checked in (("conv-1", []), ("conv-2", ["ref-updates"])):
        repo.write("src/a.py", f"{other}\n")
        repo.git("add", "-A")
        stop.touch()
        failed = repo.git("commit", "-q", "-m", "judged", agent="bob", check=False,
                          **{variable: "conv-1"})  # fmt: skip
        assert failed.returncode != 0 and runs(calls) == ["commit"]  # judged, not made
        stop.unlink()
        repo.git("commit", "-q", "--no-verify", "-m", "landed", agent="bob", **{variable: other})
        assert runs(calls) == checked, other
        assert guard_script.judged_identity({"AGENT_NAME": "bob", variable: other}) == (
            f"bob|{other}"
        )


def test_a_chained_reference_transaction_hook_gets_gits_stdin_and_can_refuse(
    repo: Repo, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    write_hook(
        repo.hooks / "reference-transaction",
        f'echo "state $1" >> "{seen}"\ncat >> "{seen}"\n'
        f'[ -e "{tmp_path}/refuse" ] && [ "$1" = prepared ] && exit 3\nexit 0',
    )
    install(repo)
    repo.git("update-ref", "refs/heads/side", "main", "side", agent="alice")  # a no-op update
    main = repo.head("main")
    lines = seen.read_text().splitlines()
    assert lines == [
        "state prepared",
        f"{main} {main} refs/heads/side",
        "state committed",
        f"{main} {main} refs/heads/side",
    ]
    (tmp_path / "refuse").touch()
    repo.write("src/a.py", "v2\n")
    proc = repo.git("commit", "-q", "-am", "two", agent="alice", check=False)
    assert proc.returncode != 0 and repo.head("main") == main
    assert "agent-hooks guard" not in proc.stderr  # the chained hook refused, not the guard


def test_a_missing_interpreter_lets_a_merge_through_and_says_how_to_remove_the_guard(
    repo: Repo, tmp_path: Path
) -> None:
    guard_hooks.install(str(repo.path), str(tmp_path / "gone" / "python"), "block")
    repo.git("checkout", "-q", "side")
    repo.commit_files("side", {"src/a.py": "v2\n"})
    repo.git("checkout", "-q", "main")
    repo.reserve("bob", "src/**")
    proc = repo.git("merge", "-q", "side", agent="alice")
    assert repo.head("main") == repo.head("side")
    assert "is missing: the branch update is not checked" in proc.stderr
    hooks = repo.hooks.resolve()
    for name in guard_hooks.HOOKS:
        assert f'    rm -f -- "{hooks}/{name}"\n' in proc.stderr


def test_a_crashing_check_lets_a_branch_move_with_a_warning(repo: Repo, tmp_path: Path) -> None:
    broken = tmp_path / "broken-python"
    write_hook(broken, "exit 1")
    guard_hooks.install(str(repo.path), str(broken), "block")
    repo.reserve("bob", "src/**")
    repo.commit_files("a change", {"src/a.py": "v2\n"})  # bypassed: its update is judged
    proc = repo.git("branch", "-f", "side", "main", agent="alice")
    assert "check failed (exit 1): branch update allowed" in proc.stderr
    assert repo.head("side") == repo.head("main")


@pytest.mark.parametrize("hook", guard_hooks.HOOKS)
def test_the_scripts_are_posix_sh_and_print_no_way_around(hook: str) -> None:
    script = guard_script.render(hook, "/opt/py'thon", "block")
    for shell in ("sh", "dash", "bash"):
        if shutil.which(shell):
            subprocess.run([shell, "-n", "-c", script], check=True)
    printed = "\n".join(
        line for line in script.splitlines() if "echo" in line or line.startswith("#")
    )
    assert not [word for word in BYPASS_WORDS if word in printed]
    assert guard_hooks.render(hook, "/opt/py'thon", "warn") != script
