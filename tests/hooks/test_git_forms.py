"""The git forms of issue 33 that destroyed held, uncommitted work, against the real
hooks: a real repository (and a linked work tree, a submodule), the real entry script,
payloads on stdin, HOME in a temp dir. Agent proj__cc_1 holds a file it changed (a
lease taken by its Write); agent proj__cc_2's command is refused, naming the holder —
or allowed, and then run by real git, leaving the held edit where it was.

Issue 33, "Why": 1 pathspec magic (also a skill's shell line), 2 `git worktree remove
--force` (and `prune`), 4 plumbing, 5 a Bash write in a submodule. (3, a reservation
under a whole-tree rewrite, is not here.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_git_commands import refused

from agent_hooks.ledger import reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern
from agent_hooks.writers import Writer
from git_repo import git, init
from hook_runner import HookResult, HookRunner

ME, OTHER = "proj__cc_1", "proj__cc_2"
WORK = "work in progress\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = init(tmp_path / "proj")
    for rel in ("src/app.py", "src/lib/util.py", "docs/guide.md", "notes.txt"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("committed\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "files")
    return Path(os.path.realpath(top))


@pytest.fixture
def run(tmp_path: Path, repo: Path) -> HookRunner:
    home = tmp_path / "home"
    home.mkdir()
    return HookRunner(home, repo)


def hold(run: HookRunner, path: Path, agent: str = ME) -> None:
    """`agent` changes `path` through its Write: the hook leases it."""
    payload = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": "x"})
    assert run("PreToolUse", payload, agent=agent).out is None
    path.write_text(WORK)


def bash(run: HookRunner, command: str, agent: str = OTHER, cwd: Path | None = None) -> HookResult:
    where = str(cwd or run.project)
    payload = run.payload("PreToolUse_Bash", tool_input={"command": command}, cwd=where)
    return run("PreToolUse", payload, agent=agent, cwd=where)


def sh(command: str, cwd: Path) -> None:
    """Run what the gate let through, as the client would."""
    env = {
        "PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
    }  # fmt: skip
    subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, check=False)


# ====== 1. pathspec magic: the paths it selects


@pytest.mark.parametrize(
    ("command", "cwd"),
    [
        ("git restore :/", ""),
        ("git restore :/", "docs"),  # the common whole-tree idiom, from anywhere
        ("git checkout -- :/", ""),
        ("git checkout HEAD -- ':(top)'", "docs"),
        ("git checkout :/", ""),
        ("git restore ':!notes.txt'", ""),
        ("git restore ':(glob)**/*.py'", ""),
        ("git restore '*.py'", ""),  # git's `*` crosses `/`: src/app.py too
        ("git restore ':(icase)SRC'", ""),
        ("git stash push -- ':!notes.txt'", ""),
        ("git rm -rf ':/src'", "docs"),
        ("git restore --pathspec-from-file=list", ""),
        ("git ls-files -m | git restore --pathspec-from-file=-", ""),  # cannot be known
        ("git restore ':(bogus)src'", ""),  # magic git does not know
        # pathspecs filled in by the shell or read by xargs: any path at all
        ("git ls-files -m | xargs git checkout --", ""),
        ("echo src/app.py | xargs git restore", "docs"),
        ("xargs git checkout -- <<< src/app.py", ""),
        ('F=src/app.py; git restore "$F"', ""),
        ("git checkout -- $(cat list)", ""),
    ],
)
def test_a_pathspec_selecting_a_held_file_is_refused_naming_its_holder(
    run: HookRunner, repo: Path, command: str, cwd: str
) -> None:
    """Issue 33, defect 1: the magic was an "opaque" note and the command ran, the
    holder's edit gone."""
    hold(run, repo / "src/app.py")
    (repo / "list").write_text("src/app.py\n")
    reason = refused(bash(run, command, cwd=repo / cwd if cwd else None))
    assert 'agent "proj__cc_1"' in reason and "src/app.py" in reason
    assert "Do not run it now" in reason or "do not run it now" in reason
    assert (repo / "src/app.py").read_text() == WORK


@pytest.mark.parametrize(
    ("command", "restored"),
    [
        ("git restore ':!src/app.py'", "docs/guide.md"),  # everything but the held file
        ("git checkout -- . ':(exclude)src'", "notes.txt"),
        ("git restore ':/docs'", "docs/guide.md"),
        ("git restore ':(glob)*.md' docs/guide.md", "docs/guide.md"),
        ("git restore --staged :/", None),  # the index only
        ("git read-tree HEAD", None),
        ("git checkout-index -a", None),  # git overwrites nothing without -f
    ],
)
def test_a_pathspec_leaving_the_held_file_alone_runs_and_leaves_it(
    run: HookRunner, repo: Path, command: str, restored: str | None
) -> None:
    hold(run, repo / "src/app.py")
    for rel in ("docs/guide.md", "notes.txt"):
        (repo / rel).write_text("mine\n")
    assert bash(run, command).out is None
    sh(command, repo)
    assert (repo / "src/app.py").read_text() == WORK  # the holder's edit stays
    if restored is not None:
        assert (repo / restored).read_text() == "committed\n"  # the command did its work


def test_a_skill_shell_line_with_pathspec_magic_is_refused(run: HookRunner, repo: Path) -> None:
    """A skill's `!`git restore :/`` line (Claude Code 2.1.332's PreSkillShellCommand)."""
    hold(run, repo / "src/app.py")
    payload = run.payload("PreSkillShellCommand", tool_input={"command": "git restore :/"})
    reason = refused(run("PreSkillShellCommand", payload, agent=OTHER))
    assert 'agent "proj__cc_1"' in reason
    assert (repo / "src/app.py").read_text() == WORK


# ====== 4. plumbing that rewrites the work tree


@pytest.mark.parametrize(
    "command",
    [
        "git read-tree -u --reset HEAD",
        "git read-tree -m -u HEAD",
        "git checkout-index -f -a",
        "git checkout-index --force src/app.py",
        "git merge-file src/app.py docs/guide.md notes.txt",
    ],
)
def test_plumbing_rewriting_a_held_file_is_refused(
    run: HookRunner, repo: Path, command: str
) -> None:
    """Issue 33, defect 4: unknown to the parser, allowed, the edit thrown away."""
    hold(run, repo / "src/app.py")
    reason = refused(bash(run, command))
    assert 'src/app.py (agent "proj__cc_1")' in reason or (
        'src/app.py is being changed by agent "proj__cc_1"' in reason
    )


# ====== 2. a linked work tree deleted, or its record pruned


@pytest.fixture
def feature(repo: Path) -> Path:
    tree = repo.parent / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tree))
    return Path(os.path.realpath(tree))


def test_removing_a_work_tree_holding_another_writers_work_is_refused(
    run: HookRunner, repo: Path, feature: Path, tmp_path: Path
) -> None:
    """Issue 33, defect 2: `git worktree remove --force ../feature` deleted the tree
    with its held, uncommitted files (`rm -rf ../feature` was refused)."""
    holder = HookRunner(tmp_path / "home", feature)  # the holder works in the feature tree
    hold(holder, feature / "src/app.py")
    for command in ("git worktree remove --force ../feature", "git worktree remove -f feature"):
        reason = refused(bash(run, command))
        assert f"would delete the work tree {feature}" in reason
        assert 'src/app.py (agent "proj__cc_1")' in reason
    assert bash(run, "git worktree list").out is None
    assert bash(run, "git worktree remove ../feature").out is None
    sh("git worktree remove ../feature", repo)  # git itself refuses a tree holding changes
    assert (feature / "src/app.py").read_text() == WORK


def test_pruning_the_record_of_a_moved_tree_holding_another_writers_work_is_refused(
    run: HookRunner, repo: Path, feature: Path, tmp_path: Path
) -> None:
    """Its directory moved (or unmounted): prune would drop its index and branch for
    good, while its holder works on."""
    holder = HookRunner(tmp_path / "home", feature)
    hold(holder, feature / "src/app.py")
    shutil.move(feature, str(feature) + "-moved")
    reason = refused(bash(run, "git worktree prune"))
    assert "would drop git's record of the work tree" in reason
    assert 'src/app.py (agent "proj__cc_1")' in reason
    assert bash(run, "git worktree prune -n").out is None


# ====== 5. a Bash write in a submodule, wherever the agent was launched


@pytest.fixture
def submodule(repo: Path, tmp_path: Path) -> Path:
    library = init(tmp_path / "library")
    (library / "y.py").write_text("v1\n")
    git(library, "add", ".")
    git(library, "commit", "-q", "-m", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib/sub")
    return repo / "lib" / "sub"


def reserve(run: HookRunner, glob: str, agent: str) -> None:
    """`agent` reserves `glob` in the runner's project (as `--keep`: no
    holder process to outlive)."""
    reservation_store.reserve(
        Repo(str(run.project), str(run.state_dir)), Writer(agent, None),
        [(glob, pattern.compile(glob))], time.time(),
        reason="issue-33", ttl=3600, shared=False, keep=True,
    )  # fmt: skip


def test_a_bash_write_in_a_submodule_meets_the_superprojects_reservation(
    run: HookRunner, submodule: Path
) -> None:
    """Issue 33, defect 5: launched in the submodule (`cd lib/sub && claude`), the
    agent's Write into y.py was refused, its `echo x > y.py` allowed."""
    reserve(run, "lib/sub/**", OTHER)
    inside = HookRunner(run.home, submodule)
    for command in ("echo x > y.py", "sed -i s/v1/v2/ y.py", "git restore :/", "rm -rf ."):
        reason = refused(bash(inside, command, agent=ME))
        assert "lib/sub/**" in reason and 'agent "proj__cc_2"' in reason, command
    assert bash(inside, "cat y.py", agent=ME).out is None
    # launched at the top, the same writes and the submodule's own rewrites
    for command in ("echo x > lib/sub/y.py", "rm -rf lib/sub", "git submodule update --force"):
        assert "lib/sub/**" in refused(bash(run, command, agent=ME)), command
