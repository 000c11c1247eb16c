"""gate.shell_gate.decide for the git forms of issue 33, in-process over real state in
a tmp dir (as tests/unit/gate/test_shell_gate.py): pathspec magic and wildcards read as
the paths they select, and refused where the selection cannot be known; the plumbing
that rewrites the work tree; `git worktree remove --force` and `git worktree prune` of
a tree holding another writer's work; a shell write inside a submodule judged against
the superproject's reservations and leases. The harmless forms stay allowed. What each
form does in git 2.39 is in tests/unit/shell/test_git_paths.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_shell_gate import allowed, decide, leased_text, refused, reserved_text

from agent_hooks.leases import lease_messages
from gate_calls import CAROL, TARGET, lease_for, reserve
from git_repo import git, init
from pids import dead_pid

HELD = f'{TARGET} (agent "carol")'


@pytest.fixture
def project(tmp_path: Path) -> str:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for directory in ("src", "docs", "lib/sub"):
        (path / directory).mkdir(parents=True)
    return os.path.realpath(path)


@pytest.fixture
def state_dir(tmp_path: Path) -> str:
    return os.path.realpath(tmp_path) + "/home/.claude"


# ====== pathspec magic and wildcards: the paths they select


@pytest.mark.parametrize(
    ("command", "cwd", "shown"),
    [
        ("git restore :/", "docs", "the whole project"),
        ("git restore ':(top)'", "docs", "the whole project"),
        ("git checkout -- :/", "", "the whole project"),
        ("git checkout HEAD -- ':(top)'", "docs", "the whole project"),
        ("git checkout :/", "", "the whole project"),
        ("git stash push -- ':!docs'", "", "the whole project"),
        ("git restore ':!notes.txt'", "", "the whole project"),
        ("git restore ':(exclude)*.py'", "", "the whole project"),  # a wildcard spares nothing
        ("git restore ':/src'", "docs", "src"),
        ("git restore ':(glob)**/*.py'", "", "**/*.py"),
        ("git restore '*.py'", "", "**/*.py"),  # `*` crosses `/`: src/app.py too
        ("git rm -q '*.py'", "", "**/*.py"),
        ("git restore ':(icase)SRC'", "", "[sS][rR][cC]"),
        ("git --icase-pathspecs restore SRC/APP.PY", "", "[sS][rR][cC]/[aA][pP][pP].[pP][yY]"),
        ("git restore ':(top,glob)src/**'", "docs", "src/**"),
        ("git restore ':(literal)src'", "", "src"),
        ("git restore --pathspec-from-file=list", "", "src/app.py"),
        ("git checkout main --pathspec-from-file=list", "", "src/app.py"),
        ("git restore --pathspec-from-file=- <<< src/app.py", "", "src/app.py"),
        ("git rm -rf ':!docs'", "", "the whole project"),
        ("git checkout-index -f src/app.py", "", "src/app.py"),
        ("git merge-file src/app.py base.py theirs.py", "", "src/app.py"),
    ],
)
def test_a_pathspec_selecting_another_writers_leased_file_is_refused(
    state_dir: str, project: str, command: str, cwd: str, shown: str
) -> None:
    Path(project, "list").write_text("src/app.py\n")
    lease_for(state_dir, project, TARGET, CAROL)
    where = f"{project}/{cwd}" if cwd else project
    reason = refused(decide(state_dir, project, command, cwd=where))
    leased_text(reason, TARGET, shown)


@pytest.mark.parametrize(
    "command",
    [
        "git restore ':!src/app.py'",  # the one file held is left alone
        "git restore ':!src'",
        "git checkout -- . ':(exclude)src/app.py'",
        "git stash push -- ':^src'",
        "git restore ':/docs'",
        "git restore ':(glob)*.py'",  # the top level only
        "git restore --staged :/",  # the index only
        "git reset -- :/",
        "git restore --pathspec-from-file=list",  # it lists docs/a.md only
        "git read-tree HEAD",
        "git read-tree -u --prefix=vendor/ HEAD",
        "git checkout-index -a",  # git overwrites no existing file without -f
        "git checkout-index -f --temp -a",
        "git merge-file -p src/app.py base.py theirs.py",
        "git worktree list",
        "git worktree add ../wt2",
        "git worktree prune -n",
        "git submodule update",  # git refuses to throw a submodule's changes away
        "git submodule foreach 'echo x > y.py'",  # no submodules
    ],
)
def test_forms_that_leave_the_leased_file_alone_are_allowed(
    state_dir: str, project: str, command: str
) -> None:
    Path(project, "list").write_text("docs/a.md\n")
    lease_for(state_dir, project, TARGET, CAROL)
    allowed(decide(state_dir, project, command))


def test_an_exclusion_spares_only_the_files_it_names(state_dir: str, project: str) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    lease_for(state_dir, project, "src/b.py", CAROL)
    leased_text(
        refused(decide(state_dir, project, "git restore ':!src/app.py'")),
        "src/b.py",
        "the whole project",
    )
    allowed(decide(state_dir, project, "git restore ':!src/app.py' ':!src/b.py'"))
    allowed(decide(state_dir, project, "git restore :/ ':!src'"))
    leased_text(
        refused(decide(state_dir, project, "git restore ':!src/app.p'")),
        TARGET,
        "the whole project",
    )


def test_a_reservation_refuses_a_pathspec_unless_an_exclusion_holds_all_of_it(
    state_dir: str, project: str
) -> None:
    reserve(state_dir, project, "carol", "src/**")
    reserved_text(
        refused(decide(state_dir, project, "git restore :/")), "the whole project", "src/**"
    )
    reserved_text(refused(decide(state_dir, project, "git restore '*.py'")), "**/*.py", "src/**")
    allowed(decide(state_dir, project, "git restore ':!src'"))
    allowed(decide(state_dir, project, "git restore :/ ':!src' ':!docs/x'"))
    reserved_text(
        refused(decide(state_dir, project, "git restore ':!src/app.py'")),
        "the whole project",
        "src/**",
    )
    reserve(state_dir, project, "carol", "docs/a.md")
    allowed(decide(state_dir, project, "git restore ':!docs/a.md' ':!src'"))
    reserved_text(
        refused(decide(state_dir, project, "git restore ':!docs' ':!src/x'")),
        "the whole project",
        "src/**",
    )


# ====== where the selection cannot be known: the work tree as a whole


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("git restore ':(bogus)x'", "git restore :(bogus)x"),
        ("git restore --pathspec-from-file=missing", "git restore --pathspec-from-file=missing"),
        (
            "git ls-files -m | git restore --pathspec-from-file=-",
            "git restore --pathspec-from-file=-",
        ),
        ('git stash push --pathspec-from-file="$F"', "git stash --pathspec-from-file=$F"),
        ("git read-tree -u --reset HEAD", "git read-tree -u --reset"),
        ("git read-tree -m -u HEAD other", "git read-tree -u -m"),
        ("git checkout-index -f -a", "git checkout-index -f -a"),
        ("git ls-files | git checkout-index -f --stdin", "git checkout-index -f --stdin"),
    ],
)
def test_a_selection_that_cannot_be_known_is_refused_as_a_work_tree_rewrite(
    state_dir: str, project: str, command: str, what: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    reason = refused(decide(state_dir, project, command))
    assert reason == lease_messages.tree_rewrite_message(what, [HELD])


def test_a_selection_that_cannot_be_known_is_allowed_while_nobody_else_holds_a_file(
    state_dir: str, project: str
) -> None:
    lease_for(state_dir, project, TARGET, CAROL, pid=dead_pid())
    reserve(state_dir, project, "dave", "other/**")  # contended: read
    allowed(decide(state_dir, project, "git restore ':(bogus)x'; git read-tree -u --reset HEAD"))


# ====== submodules: judged in the superproject's ledger too, wherever the agent runs


def submodule(project: str) -> str:
    sub = f"{project}/lib/sub"
    Path(sub, ".git").write_text("gitdir: ../../.git/modules/lib/sub\n")
    Path(project, ".gitmodules").write_text('[submodule "s"]\n\tpath = lib/sub\n')
    return sub


def test_a_write_in_a_submodule_is_refused_by_the_superprojects_reservation(
    state_dir: str, project: str
) -> None:
    """Issue 33, item 5: an agent launched in the submodule had its Write refused
    but its `echo x > y.py` allowed (its own ledger held nothing)."""
    sub = submodule(project)
    reserve(state_dir, project, "carol", "lib/sub/**")
    for command in ("echo x > y.py", "sed -i s/a/b/ y.py", "git restore :/", "rm -rf ."):
        reason = refused(decide(state_dir, sub, command))
        assert reason.startswith("agent-hooks: lib/sub") and "lib/sub/**" in reason, command
    allowed(decide(state_dir, sub, "cat y.py > /dev/null"))


def test_a_write_in_a_submodule_is_refused_by_the_superprojects_lease(
    state_dir: str, project: str
) -> None:
    sub = submodule(project)
    lease_for(state_dir, project, "lib/sub/y.py", CAROL)
    leased_text(refused(decide(state_dir, sub, "echo x > y.py")), "lib/sub/y.py", "lib/sub/y.py")
    reason = refused(decide(state_dir, sub, "git stash"))  # a rewrite of the submodule's tree
    assert reason == lease_messages.tree_rewrite_message("git stash", ['y.py (agent "carol")'])


def test_removing_a_submodule_is_refused_by_the_superprojects_reservation(
    state_dir: str, project: str
) -> None:
    submodule(project)
    reserve(state_dir, project, "carol", "lib/sub/**")
    reserved_text(refused(decide(state_dir, project, "rm -rf lib/sub")), "lib/sub", "lib/sub/**")
    reserved_text(
        refused(decide(state_dir, project, "git submodule update --force")),
        "lib/sub",
        "lib/sub/**",
    )
    reserved_text(
        refused(decide(state_dir, project, "git submodule deinit -f --all")),
        "lib/sub",
        "lib/sub/**",
    )
    reason = refused(decide(state_dir, project, "git submodule foreach 'echo x > y.py'"))
    reserved_text(reason, "lib/sub/y.py", "lib/sub/**")
    allowed(decide(state_dir, project, "git submodule update; git submodule deinit --all"))


def test_a_command_given_up_on_in_a_submodule_meets_the_superprojects_reservation(
    state_dir: str, project: str
) -> None:
    sub = submodule(project)
    reserve(state_dir, project, "carol", "lib/sub/**")
    reason = refused(decide(state_dir, sub, "eval " * 9 + "touch x"))
    assert reason.startswith("agent-hooks: this Bash command is too complex to check")
    assert "lib/sub/**" in reason


# ====== worktree remove --force and prune: a real repository with a linked work tree


@pytest.fixture
def repo(tmp_path: Path) -> str:
    top = init(tmp_path / "main")
    git(top, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    return os.path.realpath(top)


FEATURE = "worktrees/feature"


def test_removing_a_work_tree_holding_another_writers_files_is_refused(
    state_dir: str, repo: str
) -> None:
    """Issue 33, item 2: `git worktree remove --force ../feature` deleted a tree with
    its held, uncommitted files."""
    lease_for(state_dir, repo, TARGET, CAROL, worktree=FEATURE)
    tree = os.path.realpath(f"{repo}/../feature")
    for command, what in (
        ("git worktree remove --force ../feature", "git worktree remove --force ../feature"),
        # git takes the unique end of a tree's path too
        ("git worktree remove -f feature", "git worktree remove --force feature"),
        (f"git -C {tree} worktree remove --force .", "git worktree remove --force ."),
        # which tree cannot be known: every one
        ("git worktree remove --force $T", "git worktree remove --force $T"),
    ):
        reason = refused(decide(state_dir, repo, command))
        assert reason == lease_messages.worktree_message(what, tree, [HELD], False)
        assert reason.startswith(f"agent-hooks: `{what}` would delete the work tree {tree} ")
        assert HELD in reason and "`git worktree remove` without --force" in reason
    allowed(decide(state_dir, repo, "git worktree remove ../feature"))  # git refuses a dirty tree
    allowed(decide(state_dir, repo, "git worktree list; git worktree add ../other"))


def test_removing_a_work_tree_nobody_else_holds_anything_in_is_allowed(
    state_dir: str, repo: str
) -> None:
    lease_for(state_dir, repo, TARGET, CAROL)  # in the main work tree
    lease_for(state_dir, repo, "docs/a.md", CAROL, worktree=FEATURE, pid=dead_pid())
    allowed(decide(state_dir, repo, "git worktree remove --force ../feature"))
    allowed(decide(state_dir, repo, "git worktree remove --force ../elsewhere"))  # no such tree


def test_removing_a_work_tree_is_refused_by_a_reservation_as_rm_rf_is(
    state_dir: str, repo: str
) -> None:
    reserve(state_dir, repo, "carol", "src/**")
    tree = os.path.realpath(f"{repo}/../feature")
    reason = refused(decide(state_dir, repo, "git worktree remove --force ../feature"))
    reserved_text(reason, f"the work tree {tree}", "src/**")


def test_pruning_the_record_of_a_moved_tree_holding_another_writers_files_is_refused(
    state_dir: str, repo: str
) -> None:
    lease_for(state_dir, repo, TARGET, CAROL, worktree=FEATURE)
    tree = os.path.realpath(f"{repo}/../feature")
    allowed(decide(state_dir, repo, "git worktree prune"))  # its directory is there: kept
    shutil.move(tree, tree + "-moved")
    reason = refused(decide(state_dir, repo, "git worktree prune"))
    assert reason == lease_messages.worktree_message("git worktree prune", tree, [HELD], True)
    assert reason.startswith(
        f"agent-hooks: `git worktree prune` would drop git's record of the work tree {tree}"
    )
    assert HELD in reason and "git worktree repair <its new path>" in reason
    allowed(decide(state_dir, repo, "git worktree prune -n; git worktree prune --dry-run"))
    reason = refused(decide(state_dir, repo, "git worktree remove --force ../feature"))
    assert HELD in reason  # removing the record by name: the same
    Path(repo, ".git", "worktrees", "feature", "locked").write_text("on a stick\n")
    allowed(decide(state_dir, repo, "git worktree prune"))  # git keeps a locked record


def test_pruning_is_allowed_while_the_holder_of_the_gone_trees_files_is_dead(
    state_dir: str, repo: str
) -> None:
    lease_for(state_dir, repo, TARGET, CAROL, worktree=FEATURE, pid=dead_pid())
    reserve(state_dir, repo, "dave", "other/**")  # contended: read
    shutil.rmtree(os.path.realpath(f"{repo}/../feature"))
    allowed(decide(state_dir, repo, "git worktree prune"))


def test_a_worktree_command_outside_any_repository_is_allowed(
    state_dir: str, project: str, tmp_path: Path
) -> None:
    lease_for(state_dir, project, TARGET, CAROL)
    os.makedirs(f"{tmp_path}/plain")
    allowed(decide(state_dir, project, f"git -C {tmp_path}/plain worktree prune"))
    allowed(decide(state_dir, project, f"git -C {tmp_path}/plain worktree remove --force x"))


def test_a_name_ending_the_main_trees_path_too_is_no_name_git_takes(
    state_dir: str, repo: str, tmp_path: Path
) -> None:
    """git 2.39: with /main and /x/main, `remove --force main` fails ("'main' is not a
    working tree": two end in it), `remove --force x/main` removes /x/main."""
    git(Path(repo), "worktree", "add", "-q", "-b", "other", str(tmp_path / "x" / "main"))
    lease_for(state_dir, repo, TARGET, CAROL, worktree="worktrees/main")
    allowed(decide(state_dir, repo, "git worktree remove --force main"))
    assert HELD in refused(decide(state_dir, repo, "git worktree remove --force x/main"))
    assert HELD in refused(decide(state_dir, repo, "git worktree remove --force ../x/main"))


def test_prune_is_judged_by_the_leases_in_the_tree_it_forgets_only(
    state_dir: str, repo: str
) -> None:
    """A record whose tree lost its `.git` (the directory stays) is pruned; a
    reservation covering the files left there does not refuse it (prune deletes none)."""
    git(Path(repo), "worktree", "add", "-q", "-b", "inside", f"{repo}/inside")
    reserve(state_dir, repo, "carol", "inside/**")
    os.remove(f"{repo}/inside/.git")
    allowed(decide(state_dir, repo, "git worktree prune"))


def test_a_tree_named_from_a_directory_not_known_is_found_by_its_name_only(
    state_dir: str, repo: str
) -> None:
    lease_for(state_dir, repo, TARGET, CAROL, worktree=FEATURE)
    allowed(decide(state_dir, repo, 'cd "$D"; git worktree remove --force other'))
    assert HELD in refused(decide(state_dir, repo, 'cd "$D"; git worktree remove --force feature'))


def test_the_main_work_tree_is_no_tree_git_removes(state_dir: str, repo: str) -> None:
    reserve(state_dir, repo, "carol", "src/**")
    allowed(decide(state_dir, repo, "git worktree remove --force main"))  # git: the main one


def test_a_repository_whose_git_dir_lies_apart_has_its_trees_found(
    state_dir: str, tmp_path: Path
) -> None:
    top = tmp_path / "apart"
    top.mkdir()
    git(top, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp_path / "apart.git"))
    git(top, "commit", "-q", "--allow-empty", "-m", "first")
    git(top, "worktree", "add", "-q", "-b", "f", str(tmp_path / "f"))
    repo = os.path.realpath(top)
    lease_for(state_dir, repo, TARGET, CAROL, worktree="worktrees/f")
    assert HELD in refused(decide(state_dir, repo, "git worktree remove --force f"))


def test_a_submodule_of_a_submodule_meets_the_outer_superprojects_reservation(
    state_dir: str, project: str
) -> None:
    """git keeps a nested submodule's git dir in the outermost superproject's
    (`.git/modules/lib/sub/modules/deep`): that superproject judges it."""
    sub = submodule(project)
    inner = f"{sub}/deep"
    os.makedirs(inner)
    os.makedirs(f"{project}/.git/modules/lib/sub/modules/deep")
    Path(inner, ".git").write_text("gitdir: ../../../.git/modules/lib/sub/modules/deep\n")
    reserve(state_dir, project, "carol", "lib/sub/deep/**")
    reason = refused(decide(state_dir, inner, "echo x > y.py"))
    assert reason.startswith("agent-hooks: lib/sub/deep/y.py is reserved")


def test_a_submodule_is_judged_only_by_what_its_superproject_holds_in_it(
    state_dir: str, project: str
) -> None:
    sub = submodule(project)
    reserve(state_dir, project, "carol", "docs/**")
    lease_for(state_dir, project, "docs/a.md", CAROL)
    allowed(decide(state_dir, sub, "git stash"))  # docs/ lies outside the submodule
    assert decide(state_dir, sub, "eval " * 9 + "touch x").refusal is None  # given up, logged


def test_exclusions_of_everything_leave_everything_alone(state_dir: str, project: str) -> None:
    reserve(state_dir, project, "carol", "src/**")
    allowed(decide(state_dir, project, "git restore ':(exclude)'"))  # git restores nothing
