"""agent_hooks.git_guard.ref_check with real git (the reference-transaction hook):
every way a local branch moves besides `git commit` — merge (fast-forward and
--no-ff), pull, cherry-pick, revert, rebase, am, commit-tree + update-ref, branch -f,
fetch into a local branch — is refused while another agent holds a path it changes,
says how to get back, and the way back works; it goes through when nobody else
holds those paths, for the holder itself, and with the bypass env var (for people).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_hooks.git_guard import ref_check
from guard_repo import BYPASS_WORDS, Repo, init_repo, install


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """main: README, src/a.py, docs/d.md; branch `side` changes src/a.py; the guard in."""
    home = tmp_path / "home"
    home.mkdir()
    repo = init_repo(tmp_path / "repo", home)
    repo.commit_files("first", {"README.md": "r\n", "src/a.py": "v1\n", "docs/d.md": "d1\n"})
    repo.git("branch", "side")
    repo.git("checkout", "-q", "side")
    repo.commit_files("side changes src/a.py", {"src/a.py": "v2\n"})
    repo.git("checkout", "-q", "main")
    install(repo)
    return repo


def diverge(repo: Repo) -> None:
    repo.commit_files("main adds docs/m.md", {"docs/m.md": "m\n"})


def patch(repo: Repo) -> None:
    (repo.path.parent / "patches").mkdir()
    repo.git("format-patch", "-q", "-1", "side", "-o", str(repo.path.parent / "patches"))


def topic(repo: Repo) -> None:
    """Branch `topic` (docs only) checked out; main moves on with a change to src/a.py."""
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit_files("topic docs", {"docs/t.md": "t\n"})
    repo.git("checkout", "-q", "main")
    repo.commit_files("main changes src/a.py", {"src/a.py": "v3\n"})
    repo.git("checkout", "-q", "topic")


def crafted(repo: Repo) -> None:
    tree = repo.head("side^{tree}")
    commit = repo.out("commit-tree", "-p", "main", "-m", "crafted", tree)
    repo.git("tag", "crafted", commit)


def other_branch(repo: Repo) -> None:
    repo.git("branch", "other")
    crafted(repo)


def to_revert(repo: Repo) -> None:
    repo.commit_files("main changes src/a.py", {"src/a.py": "v3\n"})


@dataclass(frozen=True)
class Op:
    name: str
    setup: Callable[[Repo], None] | None
    command: tuple[str, ...]
    branch: str  # the branch the operation moves
    back: str | None  # the way back the refusal names (None: nothing else changed)


def am_args(repo: Repo) -> tuple[str, ...]:
    return (str(next((repo.path.parent / "patches").iterdir())),)


OPS = [
    Op("merge-ff", None, ("merge", "-q", "side"), "main", "git reset --merge"),
    Op(
        "merge-no-ff",
        diverge,
        ("merge", "-q", "--no-ff", "-m", "m", "side"),
        "main",
        "git merge --abort",
    ),
    Op("pull-ff", None, ("pull", "-q", ".", "side"), "main", "git reset --merge"),
    Op("cherry-pick", diverge, ("cherry-pick", "side"), "main", "git cherry-pick --abort"),
    Op("revert", to_revert, ("revert", "--no-edit", "HEAD"), "main", "git status"),
    Op("rebase", topic, ("rebase", "-q", "main"), "topic", "git rebase --abort"),
    Op("am", patch, ("am", "-q"), "main", "git am --abort"),
    Op("update-ref", crafted, ("update-ref", "refs/heads/main", "crafted"), "main", None),
    Op(
        "update-ref-other",
        other_branch,
        ("update-ref", "refs/heads/other", "crafted"),
        "other",
        None,
    ),
    Op("branch-f", other_branch, ("branch", "-f", "other", "side"), "other", None),
    Op("fetch-into-branch", other_branch, ("fetch", "-q", ".", "side:other"), "other", None),
    Op(
        "checkout-B", other_branch, ("checkout", "-q", "-B", "other", "side"), "other", "git status"
    ),
]


def run(repo: Repo, op: Op, agent: str = "alice", **env: str):
    args = op.command + (am_args(repo) if op.name == "am" else ())
    return repo.git(*args, agent=agent, check=False, **env)


def prepare(repo: Repo, op: Op) -> tuple[str, str]:
    """The operation's starting point: (HEAD's symbolic ref, the moved branch's commit)."""
    if op.setup:
        op.setup(repo)
    return repo.out("symbolic-ref", "HEAD"), repo.head(op.branch)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_an_operation_changing_a_held_path_is_refused_and_the_way_back_works(
    repo: Repo, op: Op
) -> None:
    checked_out, before = prepare(repo, op)
    repo.reserve("bob", "src/**")
    proc = run(repo, op)
    assert proc.returncode != 0, proc.stderr
    assert repo.head(op.branch) == before
    text = proc.stderr
    assert (
        f"agent-hooks guard: branch {op.branch} not moved: the update changes files another agent holds:"
        in text
    )
    assert (
        '  - src/a.py (modified): agent "bob" holds src/** (exclusive, reason: farmhand-42' in text
    )
    assert "`agent-hooks reservations`" in text and "stop and ask the user" in text
    assert not [word for word in BYPASS_WORDS if word in text]  # an agent reads this
    if op.back is None:
        assert "(nothing else changed: it keeps the commit it had)" in text
        assert repo.clean()
        return
    assert f"`{op.back}`" in text
    if op.back == "git status":  # what the command left staged stays: unstage, or wait
        assert "git restore --staged" in text
        return
    repo.git(*op.back.split()[1:], agent="alice")  # the way back is not refused itself
    assert repo.clean(), repo.out("status", "--porcelain")
    assert repo.out("symbolic-ref", "HEAD") == checked_out
    assert repo.head(op.branch) == before


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
@pytest.mark.parametrize("who", ["nobody", "holder", "elsewhere"])
def test_an_operation_goes_through_when_no_other_agent_holds_what_it_changes(
    repo: Repo, op: Op, who: str
) -> None:
    _, before = prepare(repo, op)
    if who == "holder":
        repo.reserve("alice", "src/**")
    elif who == "elsewhere":
        repo.reserve("bob", "docs/d.md", "lib/**")
    proc = run(repo, op)
    assert proc.returncode == 0, proc.stderr
    assert repo.head(op.branch) != before
    assert "agent-hooks guard" not in proc.stderr


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_the_bypass_env_var_lets_an_operation_through_and_says_so(repo: Repo, op: Op) -> None:
    _, before = prepare(repo, op)
    repo.reserve("bob", "src/**")
    proc = run(repo, op, AGENT_HOOKS_GUARD="off")
    assert proc.returncode == 0, proc.stderr
    assert repo.head(op.branch) != before
    assert (
        f"agent-hooks guard: AGENT_HOOKS_GUARD=off: branch {op.branch} not checked" in proc.stderr
    )
    log = (repo.home / ".claude" / "agent-hooks.log").read_text()
    assert f"event=guard bypassed AGENT_HOOKS_GUARD=off: branch {op.branch} in " in log


def test_warn_mode_reports_a_merge_once_and_lets_it_through(repo: Repo) -> None:
    repo.reserve("bob", "src/**")
    install(repo, "warn")
    proc = repo.git("merge", "-q", "side", agent="alice")
    assert repo.head("main") == repo.head("side")
    assert proc.stderr.count("agent-hooks guard (warn-only): moving branch main changes") == 1
    assert "src/a.py (modified)" in proc.stderr


def test_a_commit_is_judged_once_even_in_warn_mode(repo: Repo) -> None:
    """pre-commit reports the commit; its branch update is not reported again."""
    install(repo, "warn")
    repo.reserve("bob", "src/**")
    repo.write("src/a.py", "mine\n")
    proc = repo.git("commit", "-q", "-am", "c", agent="alice")
    assert proc.stderr.count("agent-hooks guard") == 1
    assert "this commit stages files another agent holds" in proc.stderr
    amended = repo.git("commit", "-q", "--amend", "-m", "c2", agent="alice")
    assert amended.stderr.count("agent-hooks guard") == 0  # the amend itself stages nothing new


def test_the_judged_commit_is_the_one_pre_commit_saw(repo: Repo) -> None:
    """The record of the judged commit skips nothing but that commit: another agent's
    commit of the same tree is checked; the judged agent's commit of it is not."""
    repo.write("docs/d.md", "d2\n")
    repo.git("add", "-A")
    # an empty message ends the commit after pre-commit: its record stays to be read
    assert repo.git("commit", "-q", "-m", "", agent="alice", check=False).returncode != 0
    judged = Path(ref_check.judged_path(str(repo.path))).read_text().splitlines()
    head, tree, _at, outcome = judged[0].split(" ")
    assert (head, tree, outcome) == (repo.head("HEAD"), repo.out("write-tree"), "passed")
    assert judged[1:] == ["alice|", "refs/heads/main", ""]  # main's first commit: no parents
    repo.reserve("bob", "docs/**")
    assert "branch main not moved" in repo.commit("carol", "--no-verify").stderr
    assert repo.commit("alice", "--no-verify").returncode == 0  # the very commit judged
    assert repo.head("HEAD^{tree}") == tree
    assert not Path(ref_check.judged_path(str(repo.path))).exists()  # used up


def test_a_judgement_older_than_a_minute_skips_nothing(repo: Repo) -> None:
    """The judged commit's update is skipped only within a minute of its judgement
    (`guard_script.JUDGED_FOR`): a commit whose message took longer is checked again."""
    repo.write("docs/d.md", "d2\n")
    repo.git("add", "-A")
    assert repo.git("commit", "-q", "-m", "", agent="alice", check=False).returncode != 0
    record = Path(ref_check.judged_path(str(repo.path)))
    first, rest = record.read_text().split("\n", 1)
    head, tree, at, outcome = first.split(" ")
    stale = int(at) - 62
    record.write_text(f"{head} {tree} {stale} {outcome}\n{rest}")
    repo.reserve("bob", "docs/**")
    assert "branch main not moved" in repo.commit("alice", "--no-verify").stderr


LANDINGS = {
    "merge-ff": ("merge", "-q", "feat"),
    "merge-no-ff": ("merge", "-q", "--no-ff", "-m", "m", "feat"),
    "cherry-pick": ("cherry-pick", "feat"),
    "reset-hard": ("reset", "-q", "--hard", "feat"),
}


@pytest.mark.parametrize("how", sorted(LANDINGS))
def test_a_commit_judged_on_one_branch_is_checked_again_where_it_lands(
    repo: Repo, how: str
) -> None:
    """Issue 18, defect 6: alice's commit on `feat` was judged when nobody held
    src/a.py; bob reserves src/** after it. Landing that commit (its tree, by the
    same agent, within seconds) on main is a new branch update, checked now."""
    repo.git("checkout", "-q", "-b", "feat", agent="alice")
    repo.write("src/a.py", "feat\n")
    assert repo.git("commit", "-q", "-am", "feat", agent="alice").returncode == 0
    repo.git("checkout", "-q", "main", agent="alice")
    before = repo.head("main")
    repo.reserve("bob", "src/**")
    proc = repo.git(*LANDINGS[how], agent="alice", check=False)
    assert proc.returncode != 0, proc.stderr
    assert "branch main not moved" in proc.stderr
    assert '  - src/a.py (modified): agent "bob" holds src/**' in proc.stderr
    assert repo.head("main") == before


def test_a_judged_commit_is_skipped_once(repo: Repo) -> None:
    """The record of a judged commit is used up by that commit's branch update: the
    same commit put back on the same branch later is checked like any other."""
    repo.write("src/a.py", "mine\n")
    assert repo.git("commit", "-q", "-am", "mine", agent="alice").returncode == 0
    mine = repo.head()
    repo.git("reset", "-q", "--hard", "HEAD~1", agent="alice")
    repo.reserve("bob", "src/**")
    proc = repo.git("reset", "-q", "--hard", mine, agent="alice", check=False)
    assert proc.returncode != 0 and "branch main not moved" in proc.stderr


def test_branches_being_created_deleted_or_outside_refs_heads_are_not_checked(
    repo: Repo,
) -> None:
    repo.reserve("bob", "src/**")
    for args in (
        ("branch", "fresh", "side"),
        ("checkout", "-q", "-b", "fresh2", "side"),
        ("checkout", "-q", "main"),
        ("fetch", "-q", ".", "side:refs/remotes/origin/side"),
        ("tag", "t1", "side"),
        ("update-ref", "refs/notes/x", "side"),
        ("branch", "-D", "fresh"),
        ("branch", "-m", "fresh2", "fresh3"),
        ("pack-refs", "--all"),
        ("gc", "-q"),
    ):
        proc = repo.git(*args, agent="alice", check=False)
        assert proc.returncode == 0 and "agent-hooks" not in proc.stderr, (args, proc.stderr)


def test_a_rebase_that_changes_no_held_path_goes_through(repo: Repo) -> None:
    """Rebasing a branch whose own commits touch a held path lands nothing new there:
    what is checked is the difference between the branch before and after."""
    repo.git("checkout", "-q", "side")
    repo.git("checkout", "-q", "main")
    repo.commit_files("main docs", {"docs/x.md": "x\n"})
    repo.reserve("bob", "src/**")
    repo.git("checkout", "-q", "side")
    proc = repo.git("rebase", "-q", "main", agent="alice", check=False)
    assert proc.returncode == 0, proc.stderr
    assert repo.out("log", "-1", "--format=%s") == "side changes src/a.py"


def test_a_worktree_checks_the_repositorys_ledger(repo: Repo, tmp_path: Path) -> None:
    wt_path = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feature", str(wt_path), "main")
    wt = Repo(Path(str(wt_path.resolve())), repo.home)
    repo.reserve("bob", "src/**")  # made in the main work tree
    proc = wt.git("merge", "-q", "side", agent="alice", check=False)
    assert proc.returncode != 0
    assert "branch feature not moved" in proc.stderr and "`git reset --merge`" in proc.stderr
    wt.git("reset", "-q", "--merge")
    assert wt.clean()


# --- pure parts ------------------------------------------------------------------------


def test_one_transaction_moving_several_branches_names_the_branch_of_each_path(
    repo: Repo,
) -> None:
    """`git update-ref --stdin` moves main and a new-born `other` together onto `side`'s
    commit: each path held is reported once per branch that would change it, prefixed
    with that branch (one branch alone needs no prefix)."""
    repo.git("branch", "other")
    repo.reserve("bob", "src/**")
    side = repo.head("side")
    script = f"start\nupdate refs/heads/main {side}\nupdate refs/heads/other {side}\ncommit\n"
    proc = subprocess.run(
        ["git", "update-ref", "--stdin"],
        cwd=repo.path,
        env=repo.env("alice"),
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("  - ")]
    assert [ln.split(" (")[0] for ln in lines] == ["  - main: src/a.py", "  - other: src/a.py"]


def test_parse_updates_keeps_local_branches_set_to_an_object() -> None:
    zero, a, b = "0" * 40, "a" * 40, "b" * 40
    text = "\n".join(
        [
            f"{a} {b} refs/heads/main",
            f"{a} {b} HEAD",
            f"{zero} {b} refs/heads/new",
            f"{a} {zero} refs/heads/gone",
            f"{a} {b} refs/remotes/origin/main",
            f"{a} {b} refs/tags/v1",
            "garbage",
            "",
        ]
    )
    updates = ref_check.parse_updates(text)
    assert [(u.ref, u.branch) for u in updates] == [
        ("refs/heads/main", "main"),
        ("refs/heads/new", "new"),
    ]
    assert ref_check.parse_updates(f"{'0' * 64} {'c' * 64} refs/heads/x\n")[0].new == "c" * 64
