"""One ledger per repository (issue 10), with real `git worktree add` repositories:
a reservation made in one worktree holds in every worktree; a lease held in
another worktree gives context, not a deny (unless the repository says deny);
two HOMEs on one repository (as two containers would) see each other's claims;
an earlier release's per-HOME ledger is picked up on first use; the git guard
checks a commit in any worktree against the repository's ledger.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import identity
from agent_hooks.ledger import ledger_location, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from hook_runner import HookResult, HookRunner

ME, OTHER = "proj__cc_1", "proj__cc_2"


def git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with one commit, and a second worktree on branch `feature`."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "src" / "auth").mkdir(parents=True)
    (main / "src" / "auth" / "login.py").write_text("v1\n")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "one")
    git(main, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    return Path(os.path.realpath(main)), Path(os.path.realpath(tmp_path / "wt"))


def runner(home: Path, top: Path) -> HookRunner:
    home.mkdir(exist_ok=True)
    return HookRunner(home, top)


def reserve(home: Path, top: Path, agent: str, text: str) -> None:
    outcome = reservation_store.reserve(
        Repo(str(top), identity.state_dir({"HOME": str(home)})),
        Writer(agent, None),
        [(text, pattern.compile(text))],
        time.time(),
        reason="farmhand-42",
        ttl=3600,
        shared=False,
        keep=True,
    )
    assert outcome.changed and not outcome.conflicts


def edit(run_hook: HookRunner, rel: str, agent: str = ME) -> HookResult:
    payload = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / rel), "content": "x\n"}
    )
    return run_hook("PreToolUse", payload, agent=agent)


def decision(result: HookResult) -> tuple[str | None, str]:
    assert result.code == 0, result.err
    if result.out is None:
        return None, ""
    specific: dict[str, Any] = result.out["hookSpecificOutput"]
    return specific["permissionDecision"], specific.get("permissionDecisionReason") or specific.get(
        "additionalContext", ""
    )


def test_the_ledger_lives_in_the_common_git_dir_shared_by_worktrees(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    main, wt = repo
    state_dir = str(tmp_path / "home" / ".claude")
    assert (
        ledger_location.directory(state_dir, str(main))
        == ledger_location.directory(state_dir, str(wt))
        == str(main / ".git" / "agent-hooks")
    )


@pytest.mark.parametrize("where", ["main", "worktree"])
def test_a_reservation_made_in_one_worktree_holds_in_the_other(
    repo: tuple[Path, Path], tmp_path: Path, where: str
) -> None:
    main, wt = repo
    home = tmp_path / "home"
    made_in, edited_in = (main, wt) if where == "main" else (wt, main)
    reserve(home, made_in, OTHER, "src/auth/**")
    verdict, reason = decision(edit(runner(home, edited_in), "src/auth/login.py"))
    assert verdict == "deny" and 'agent "proj__cc_2" holds src/auth/**' in reason
    assert decision(edit(runner(home, edited_in), "README.md"))[0] is None


def test_a_lease_in_another_worktree_is_context_not_a_deny_unless_set_to_deny(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    main, wt = repo
    home = tmp_path / "home"
    assert decision(edit(runner(home, main), "src/auth/login.py", agent=OTHER))[0] is None
    verdict, note = decision(edit(runner(home, wt), "src/auth/login.py"))
    assert verdict == "allow"
    assert "also being changed in another worktree" in note and "on branch main" in note
    assert 'agent "proj__cc_2"' in note and "merge conflict" in note
    state_dir = identity.state_dir({"HOME": str(home)})
    reservation_store.set_setting(Repo(str(wt), state_dir), "worktree_leases", "deny", time.time())
    verdict, reason = decision(edit(runner(home, wt), "src/auth/login.py"))
    assert verdict == "deny" and 'agent "proj__cc_2"' in reason


def test_two_homes_on_one_repository_see_each_others_claims(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    """Two containers mounting one repository, each with its own HOME."""
    main, wt = repo
    first, second = tmp_path / "home1", tmp_path / "home2"
    reserve(first, main, OTHER, "src/**")
    assert decision(edit(runner(second, wt), "src/auth/login.py"))[0] == "deny"
    assert decision(edit(runner(first, main), "docs/a.md", agent=OTHER))[0] is None
    assert decision(edit(runner(second, main), "docs/a.md"))[0] == "deny"


def test_an_earlier_releases_ledger_is_picked_up_on_first_use(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    main, _ = repo
    home = tmp_path / "home"
    state_dir = str(home / ".claude")
    old = Path(ledger_location.legacy_directory(state_dir, str(main)))
    old.mkdir(parents=True)
    compiled = pattern.compile("src/**")
    (old / "reservations.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "project_root": str(main),
                "strict": False,
                "reservations": [
                    {
                        "id": "r-0ld00001",
                        "agent": OTHER,
                        "project_root": str(main),
                        "pattern": "src/**",
                        "compiled": compiled,
                        "mode": "exclusive",
                        "reason": "old",
                        "created_at": int(time.time()),
                        "expires_at": int(time.time()) + 3600,
                        "keep": False,
                        "conversation_id": None,
                        "source": "cli",
                    }
                ],
            }
        )
    )
    verdict, reason = decision(edit(runner(home, main), "src/auth/login.py"))
    assert (
        verdict == "deny"
        and "r-0ld00001" not in reason
        and 'agent "proj__cc_2" holds src/**' in reason
    )
    adopted = json.loads((main / ".git" / "agent-hooks" / "reservations.json").read_text())
    assert [r["id"] for r in adopted["reservations"]] == ["r-0ld00001"]
    assert not (old / "reservations.json").exists()
    assert list(old.glob("reservations.json.migrated-*"))


def test_session_start_names_files_the_branch_shares_with_another_worktree(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    main, wt = repo
    home = tmp_path / "home"
    assert decision(edit(runner(home, main), "src/auth/login.py", agent=OTHER))[0] is None
    (wt / "src" / "auth" / "login.py").write_text("v2\n")  # the branch changes it too
    text = runner(home, wt)("SessionStart", "SessionStart_startup").out["hookSpecificOutput"][
        "additionalContext"
    ]
    assert "Files your branch changed that agents in other worktrees are also changing" in text
    assert "src/auth/login.py" in text and "on main" in text


def test_the_git_guard_in_a_worktree_checks_the_repositorys_ledger(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    main, wt = repo
    home = tmp_path / "home"
    home.mkdir()
    reserve(home, main, OTHER, "src/auth/**")
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENT_NAME": ME,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    env.pop("CLAUDE_CONFIG_DIR", None)
    check = subprocess.run(
        [sys.executable, "-m", "agent_hooks.cli", "guard", "install"],
        cwd=wt,
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    (wt / "src" / "auth" / "login.py").write_text("v2\n")
    subprocess.run(["git", "add", "."], cwd=wt, env=env, check=True)
    commit = subprocess.run(
        ["git", "commit", "-q", "-m", "two"], cwd=wt, env=env, capture_output=True, text=True
    )
    assert commit.returncode != 0
    assert "src/auth/login.py (modified)" in commit.stderr and 'agent "proj__cc_2"' in commit.stderr


def _mounted_run(
    mount: Path, source: Path, home: Path, event: str, payload: dict[str, Any]
) -> HookResult:
    """Run a hook inside a private mount namespace where `source` is bind-mounted at
    `mount`: a container that mounts the repository at another path."""
    run = runner(home, mount)
    script = (
        f"mount --bind {source} {mount} && "
        f"exec {sys.executable} -IS {Path(__file__).resolve().parents[2] / 'hooks' / 'entry.py'} {event}"
    )
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=run.env(OTHER),
        timeout=60,
    )
    if b"mount" in proc.stderr or b"unshare" in proc.stderr:
        pytest.skip(f"cannot bind-mount here: {proc.stderr.decode().strip()}")
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return HookResult(proc.returncode, out, proc.stderr.decode())


def test_one_checkout_reached_through_another_path_is_one_work_tree(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    """Issue 18, defect 8: a container mounting the repository at /workspace is the
    same work tree: a lease held through one path refuses an edit through the other,
    and no "another worktree" note is made up."""
    main, _ = repo
    mount = tmp_path / "workspace"
    mount.mkdir()
    home = tmp_path / "home"
    alice = runner(home, main)
    write = alice.payload(
        "PreToolUse_Write",
        tool_input={"file_path": str(main / "src/auth/login.py"), "content": "x"},
        cwd=str(main),
    )
    assert alice("PreToolUse", write, agent=ME).out is None  # leased by alice
    through = alice.payload(
        "PreToolUse_Write",
        tool_input={"file_path": str(mount / "src/auth/login.py"), "content": "y"},
        cwd=str(mount),
    )
    through["session_id"] = "other-conversation"
    result = _mounted_run(mount, main, home, "PreToolUse", through)
    decision = result.out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", decision
    assert "another worktree" not in json.dumps(result.out)
    assert 'agent "proj__cc_1"' in decision["permissionDecisionReason"]


def test_a_submodule_path_is_held_by_the_superprojects_reservation(tmp_path: Path) -> None:
    """Issue 18, defect 11: a reservation in the superproject over `lib/sub/**` did
    not hold for an agent launched inside the submodule."""
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "code.py").write_text("v1\n")
    git(library, "add", ".")
    git(library, "commit", "-q", "-m", "lib")
    top = tmp_path / "super"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib/sub")
    top = Path(os.path.realpath(top))
    home = tmp_path / "home"
    home.mkdir()
    state_dir = identity.state_dir({"HOME": str(home)})
    reservation_store.reserve(
        Repo(str(top), state_dir),
        Writer(OTHER, None),
        [("lib/sub/**", pattern.compile("lib/sub/**"))],
        time.time(),
        reason="",
        ttl=3600,
        shared=False,
        keep=True,
    )  # fmt: skip
    inside = top / "lib" / "sub"
    run = runner(home, inside)  # the agent was launched in the submodule
    payload = run.payload(
        "PreToolUse_Write", tool_input={"file_path": str(inside / "code.py"), "content": "x"}
    )
    decision = run("PreToolUse", payload, agent=ME).out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "lib/sub/**" in decision["permissionDecisionReason"]


def test_an_agent_launched_above_the_repositories_is_judged_in_each_ones_ledger(
    tmp_path: Path,
) -> None:
    """Issue 18, defect 9: an agent launched one directory up (a folder of several
    repositories) was refused a Write into a repository but not its Bash writes
    there, which were checked against the launch folder's empty ledger and
    reported to it."""
    folder = Path(os.path.realpath(tmp_path / "work"))
    repo = folder / "r"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("v1\n")
    home = tmp_path / "home"
    bob = runner(home, repo)
    hold = bob.payload(
        "PreToolUse_Write", tool_input={"file_path": str(repo / "app.py"), "content": "x"}
    )
    assert bob("PreToolUse", hold, agent=OTHER).out is None  # bob leases r/app.py
    above = runner(home, folder)  # CLAUDE_PROJECT_DIR is the folder, no repository
    for command in ("echo x > r/app.py", "sed -i s/v1/v2/ r/app.py", "rm -rf r"):
        payload = above.payload("PreToolUse_Bash", tool_input={"command": command}, cwd=str(folder))
        decision = above("PreToolUse", payload, agent=ME).out["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", (command, decision)
        assert 'agent "proj__cc_2"' in decision["permissionDecisionReason"]
    (repo / "new.py").write_text("made by the command\n")
    post = above.payload(
        "PostToolUse_Bash", tool_input={"command": "echo y > r/new.py"}, cwd=str(folder)
    )
    post["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    assert above("PostToolUse", post, agent=ME).code == 0
    lease = json.loads((repo / ".git" / "agent-hooks" / "leases" / "new.py").read_text())
    assert lease["leases"][0]["writer"] == ME  # in r's own ledger
