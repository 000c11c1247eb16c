"""agent_hooks.git_guard.guard_hooks in real temporary git repositories: the installed hooks
are run by real `git commit`s, reservations are made through reservation_store in a
private state directory, and the committing agent is AGENT_NAME in git's environment.
Branch updates other than commits are `test_ref_check.py`; the scripts themselves
`test_guard_script.py`.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from agent_hooks.git_guard import commit_check, guard_hooks
from agent_hooks.ledger import reservation_store
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from guard_repo import (
    BYPASS_WORDS,
    PYTHON,
    Repo,
    guard_python,
    init_repo,
    install,
    write_hook,
)

HOOKS = guard_hooks.HOOKS


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return init_repo(tmp_path / "repo", home)


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
    assert "stop and ask the user how to proceed" in proc.stderr
    assert not [word for word in BYPASS_WORDS if word in proc.stderr]  # an agent reads this


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
    assert "lib/x.py (added): a person holds lib/**" in refused.stderr  # made at a shell
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

    repo.release("bob")
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
        repo.rules(),
        Writer("bob", None),
        [("src/**", pattern.compile("src/**"))],
        time.time() - 120,
        reason="",
        ttl=60,
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


def test_a_nested_projects_reservations_meet_only_its_own_files(repo: Repo) -> None:
    """A file beside the nested project, whose path has the same length and the same
    tail, is not its file; a staged file outside it, listed first, does not end the check
    of the files inside it."""
    install(repo)
    sub = repo.path / "services" / "api"
    sub.mkdir(parents=True)
    repo.reserve("bob", "handlers/**", root=str(sub))
    repo.add("services/web/handlers/user.py")  # "services/web" is as long as "services/api"
    assert repo.commit("alice").returncode == 0
    repo.add("docs/a.md", "services/api/handlers/user.py")  # docs/ sorts first
    proc = repo.commit("alice")
    assert proc.returncode != 0
    assert "services/api/handlers/user.py (added) [project " in proc.stderr
    assert "docs/a.md" not in proc.stderr


# --- modes and bypasses ----------------------------------------------------------------


def test_warn_only_prints_and_lets_the_commit_through(repo: Repo) -> None:
    install(repo, "warn")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert repo.commits() == 1
    assert "(warn-only)" in proc.stderr and 'agent "bob" holds src/**' in proc.stderr


def test_the_bypass_env_var_lets_one_commit_through_and_leaves_a_trace(repo: Repo) -> None:
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice", AGENT_HOOKS_GUARD="off")
    assert proc.returncode == 0
    assert proc.stderr == "agent-hooks guard: AGENT_HOOKS_GUARD=off: commit not checked\n"
    repo.add("src/b.py")
    warned = repo.commit("alice", AGENT_HOOKS_GUARD="warn")
    assert warned.returncode == 0 and warned.stderr.count("(warn-only)") == 1  # reported once
    assert repo.commits() == 2
    log = (repo.home / ".claude" / "agent-hooks.log").read_text()
    assert "agent=alice event=guard bypassed AGENT_HOOKS_GUARD=off: commit in " in log
    assert "agent=alice event=guard warned commit in " in log and "src/b.py (bob)" in log


def test_no_verify_skips_pre_commit_but_not_the_branch_check(repo: Repo) -> None:
    """git's --no-verify skips pre-commit; the branch still may not move onto the change."""
    repo.commit_files("first", {"README.md": "x\n"})
    install(repo)
    repo.reserve("bob", "src/**")
    repo.add("src/c.py")
    proc = repo.commit("alice", "--no-verify")
    assert proc.returncode != 0 and repo.commits() == 1
    assert "branch main not moved: the update changes files another agent holds:" in proc.stderr
    assert "src/c.py (added)" in proc.stderr
    assert "git restore --staged" in proc.stderr  # what it staged stays staged
    assert not [word for word in BYPASS_WORDS if word in proc.stderr]
    assert repo.out("diff", "--cached", "--name-only") == "src/c.py"
    assert repo.commit("alice", "--no-verify", AGENT_HOOKS_GUARD="off").returncode == 0


def test_missing_interpreter_fails_open_with_a_warning(repo: Repo, tmp_path: Path) -> None:
    guard_hooks.install(str(repo.path), str(tmp_path / "gone" / "python"), "block")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "is missing: the commit is not checked" in proc.stderr


@pytest.mark.parametrize("chained", [False, True])
def test_a_guard_whose_agent_hooks_is_gone_says_how_to_remove_it_by_hand(
    repo: Repo, tmp_path: Path, chained: bool
) -> None:
    """After agent-hooks is uninstalled there is no `agent-hooks guard uninstall` to run:
    the message gives the exact commands for every guard file, and they put the
    original hooks back."""
    originals = {name: write_hook(repo.hooks / name, "exit 0") for name in HOOKS if chained}
    guard_hooks.install(str(repo.path), str(tmp_path / "gone" / "python"), "block")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "agent-hooks guard uninstall'" not in proc.stderr.splitlines()[1]
    commands = [line.strip() for line in proc.stderr.splitlines() if line.startswith("    rm ")]
    hooks = os.path.realpath(repo.hooks)
    expected = [
        f'rm -f -- "{hooks}/{name}" && mv -- "{hooks}/{name}.agent-hooks-chained" "{hooks}/{name}"'
        if chained
        else f'rm -f -- "{hooks}/{name}"'
        for name in HOOKS
    ]
    assert commands[: len(HOOKS)] == expected
    for command in expected:
        subprocess.run(["sh", "-c", command], check=True, cwd="/")
    for name in HOOKS:
        if chained:
            assert (repo.hooks / name).read_bytes() == originals[name]
            assert not guard_hooks.read_meta(str(repo.hooks / name))
        else:
            assert not (repo.hooks / name).exists()
    assert not list(repo.hooks.glob("*.agent-hooks-chained"))


def test_a_crashing_check_fails_open_with_a_warning(repo: Repo, tmp_path: Path) -> None:
    broken = tmp_path / "broken-python"
    write_hook(broken, "exit 1")  # an interpreter that cannot import agent_hooks
    guard_hooks.install(str(repo.path), str(broken), "block")
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode == 0
    assert "check failed (exit 1): commit allowed" in proc.stderr


# --- chaining an existing hook ---------------------------------------------------------


def test_a_failing_chained_hook_still_blocks(repo: Repo) -> None:
    write_hook(repo.hook, "echo lint failed >&2\nexit 3")
    assert install(repo) == ["installed, chaining the existing hook", "installed"]
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
    assert guard_hooks.read_meta(str(repo.path / ".githooks" / "pre-commit")) is not None
    assert (repo.path / ".githooks" / "pre-commit.agent-hooks-chained").read_bytes() == original
    assert guard_hooks.read_meta(str(repo.path / ".githooks" / "reference-transaction"))
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    assert repo.commit("alice").returncode != 0


def test_absolute_core_hooks_path_is_honoured(repo: Repo, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    repo.git("config", "core.hooksPath", str(shared))
    install(repo)  # the directory does not exist yet: it is created
    assert all(guard_hooks.read_meta(str(shared / name)) is not None for name in HOOKS)
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
    assert all((repo.hooks / name).exists() for name in HOOKS)  # the common hooks directory
    wt.reserve("bob", "src/**")  # the worktree's own top level is its project
    wt.add("src/a.py")
    proc = wt.commit("alice")
    assert proc.returncode != 0 and "src/a.py (added)" in proc.stderr


# --- install / uninstall bookkeeping ---------------------------------------------------


@pytest.mark.parametrize("name", HOOKS)
def test_install_is_idempotent_and_uninstall_restores_byte_for_byte(repo: Repo, name: str) -> None:
    hook = repo.hooks / name
    other = next(n for n in HOOKS if n != name)
    original = write_hook(hook, "# \xe9\x00 odd bytes\nexit 0", mode=0o750)
    inode = hook.stat().st_ino
    done = dict(zip(HOOKS, install(repo), strict=True))
    assert done == {name: "installed, chaining the existing hook", other: "installed"}
    guard_bytes = hook.read_bytes()
    assert install(repo) == ["unchanged", "unchanged"]
    assert hook.read_bytes() == guard_bytes
    mine = sorted(p.name for p in repo.hooks.iterdir() if p.name.startswith(name))
    assert [n for n in mine if not n.endswith(".sample")] == [name, f"{name}.agent-hooks-chained"]
    hook.chmod(0o644)  # an inert guard is rewritten, not "unchanged"
    assert dict(zip(HOOKS, install(repo), strict=True))[name] == "updated"
    assert os.access(hook, os.X_OK)
    assert install(repo, "warn") == ["updated", "updated"]
    python = guard_python(repo.home)  # PYTHON, or mutmut's wrapper
    assert guard_hooks.read_meta(str(hook)) == {"version": 1, "python": python, "mode": "warn"}

    _, removed = guard_hooks.uninstall(str(repo.path))
    assert dict(removed) == {
        str(hook): "removed; the original hook is back",
        str(repo.hooks / other): "removed",
    }
    assert hook.read_bytes() == original
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert hook.stat().st_ino == inode
    assert not (repo.hooks / other).exists()
    assert not list(repo.hooks.glob("*.agent-hooks-chained"))
    assert [r for _, r in guard_hooks.uninstall(str(repo.path))[1]] == ["not installed"] * 2


def test_uninstall_without_an_original_removes_the_hooks(repo: Repo) -> None:
    assert install(repo) == ["installed", "installed"]
    assert all(os.access(repo.hooks / name, os.X_OK) for name in HOOKS)
    assert [r for _, r in guard_hooks.uninstall(str(repo.path))[1]] == ["removed", "removed"]
    assert not any((repo.hooks / name).exists() for name in HOOKS)


def test_an_earlier_pre_commit_only_guard_is_completed(repo: Repo) -> None:
    """A guard installed by an earlier release has only pre-commit: install adds the rest."""
    python = guard_python(repo.home)  # what install() below installs with
    (repo.hooks / "pre-commit").write_text(guard_hooks.render("pre-commit", python, "block"))
    (repo.hooks / "pre-commit").chmod(0o755)
    assert guard_hooks.status(str(repo.path))["installed"] is False
    assert install(repo) == ["unchanged", "installed"]
    assert guard_hooks.status(str(repo.path))["installed"] is True


@pytest.mark.parametrize("name", HOOKS)
def test_ambiguous_layouts_are_refused_untouched(repo: Repo, name: str) -> None:
    foreign = write_hook(repo.hooks / name, "exit 0")
    chained = write_hook(repo.hooks / f"{name}.agent-hooks-chained", "exit 1")
    before = sorted(p.name for p in repo.hooks.iterdir())
    with pytest.raises(guard_hooks.GuardError, match="not the guard"):
        guard_hooks.install(str(repo.path), PYTHON, "block")
    assert sorted(p.name for p in repo.hooks.iterdir()) == before  # no hook installed at all
    with pytest.raises(guard_hooks.GuardError, match="not the guard"):
        guard_hooks.uninstall(str(repo.path))
    assert (repo.hooks / name).read_bytes() == foreign
    assert (repo.hooks / f"{name}.agent-hooks-chained").read_bytes() == chained


def test_not_a_work_tree(tmp_path: Path) -> None:
    with pytest.raises(guard_hooks.GuardError, match="not inside a git work tree"):
        guard_hooks.install(str(tmp_path), PYTHON, "block")


def test_status_reports_every_hook(repo: Repo, tmp_path: Path) -> None:
    write_hook(repo.hooks / "reference-transaction", "exit 0")
    before = guard_hooks.status(str(repo.path))
    assert before["installed"] is False
    states = {h["name"]: (h["installed"], h["other_hook"]) for h in before["hooks"]}
    assert states == {"pre-commit": (False, False), "reference-transaction": (False, True)}
    install(repo)
    info = guard_hooks.status(str(repo.path))
    assert info["installed"] is True and info["repo"] == str(repo.path)
    assert info["git_version"] and info["git_version"][0].isdigit()
    by_name = {h["name"]: h for h in info["hooks"]}
    for name in HOOKS:
        item = by_name[name]
        assert item["hook"] == str(repo.hooks / name)
        assert item["installed"] is True and item["mode"] == "block" and item["python_ok"] is True
        assert item["git_runs_it"] is True  # git >= 2.28 runs reference-transaction
    chained = by_name["reference-transaction"]["chained"]
    assert chained == str(repo.hooks / "reference-transaction.agent-hooks-chained")
    assert by_name["pre-commit"]["chained"] is None

    guard_hooks.install(str(repo.path), str(tmp_path / "gone"), "warn")
    for item in guard_hooks.status(str(repo.path))["hooks"]:
        assert item["mode"] == "warn" and item["python_ok"] is False


def test_git_versions_that_run_reference_transaction() -> None:
    assert guard_hooks.runs_reference_transaction((2, 28, 0))
    assert guard_hooks.runs_reference_transaction((3, 0))
    assert not guard_hooks.runs_reference_transaction((2, 27, 9))
    assert not guard_hooks.runs_reference_transaction(None)


# --- pure parts ------------------------------------------------------------------------


def test_parse_name_status_reads_every_kind_of_change() -> None:
    raw = "M\0a.py\0R087\0old/x\0new/x\0D\0gone\0C100\0src\0copy\0A\0we ird\nname\0T\0link\0"
    assert commit_check.parse_name_status(raw) == [
        commit_check.Staged("a.py", "modified"),
        commit_check.Staged("old/x", "renamed from"),
        commit_check.Staged("new/x", "renamed to"),
        commit_check.Staged("gone", "deleted"),
        commit_check.Staged("copy", "copied to"),
        commit_check.Staged("we ird\nname", "added"),
        commit_check.Staged("link", "type changed"),
    ]
    assert commit_check.parse_name_status("") == []
    # without the last NUL git writes (a truncated read): every whole entry, no error
    assert commit_check.parse_name_status("M\0a.py\0D\0b.py") == [
        commit_check.Staged("a.py", "modified"),
        commit_check.Staged("b.py", "deleted"),
    ]
    # an unmerged path (U) or an unknown code is still a path the commit touches
    assert commit_check.parse_name_status("U\0c.py\0X\0d.py\0") == [
        commit_check.Staged("c.py", "changed"),
        commit_check.Staged("d.py", "changed"),
    ]


def test_rendered_script_quotes_the_interpreter_path(repo: Repo, tmp_path: Path) -> None:
    odd = tmp_path / "dir with 'quote'" / "python"
    write_hook(odd, f'exec "{PYTHON}" "$@"')  # a wrapper: a symlink would leave the venv
    guard_hooks.install(str(repo.path), str(odd), "block")
    meta = guard_hooks.read_meta(str(repo.hook))
    assert meta == {"version": 1, "python": str(odd), "mode": "block"}
    repo.reserve("bob", "src/**")
    repo.add("src/a.py")
    proc = repo.commit("alice")
    assert proc.returncode != 0 and 'agent "bob" holds src/**' in proc.stderr


def test_the_projects_a_commit_is_checked_in_are_its_own_and_those_nested_or_around_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reservation made with another project root still holds for a commit here when
    that root lies inside this work tree (a sub-project) or contains it (a folder of
    repositories): `_projects` lists them, the top level first."""
    known = [
        "/w/repo",
        "/w/repo/lib/sub",
        "/w",
        "/w/",
        "/w/repo-other",
        "/w/re",
        "/wX",
        "/x/repo",
        "/",
    ]
    monkeypatch.setattr(
        commit_check.reservation_store, "known_projects", lambda state_dir: list(known)
    )
    assert commit_check._projects("/state", "/w/repo") == [
        "/w/repo",
        "/w/repo/lib/sub",
        "/w",
        "/w/",
        "/",
    ]
