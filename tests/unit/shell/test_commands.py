"""What the programs, git and eval handlers of `agent_hooks/shell/commands.py` make of a
command: cases that pin each rule, found by mutation testing (docs/mutation-testing.md)
and, for git, checked against git 2.39 in a scratch repository (what each form does to
the work tree is said beside it). Shaped as tests/unit/shell/test_writes.py's table, with
the git commands that may rewrite a whole work tree (`BashAnalysis.trees`) asserted too;
cwd /repo, home /home/me. Which existing files a git word names is decided on disk: those
cases run in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_hooks.shell.writes import analyze

HOME = "/home/me"
Tree = tuple[str | None, str]

CASES: list[tuple[str, list[str], list[str], list[Tree]]] = [
    # ====== make-likes, source, npm-likes (`_runner`)
    ("make", [], ["make"], []),
    ("make all", [], ["make"], []),
    # each of these only asks: nothing runs
    (
        "make -n; make --dry-run; make -q; make --question; make -v; make --version; "
        "make -h; make --help",
        [],
        [],
        [],
    ),
    ("gmake; ninja -C b; just x; rake", [], ["gmake", "ninja", "just", "rake"], []),
    ("source env.sh a b; . ./x.sh", [], ["source env.sh", "source ./x.sh"], []),
    # the options before the script are not its name
    ("npm --silent run build", [], ["npm run build"], []),
    (
        "npx foo bar baz; pnpx foo bar; bunx foo bar",
        [],
        ["npx foo bar", "pnpx foo bar", "bunx foo bar"],
        [],
    ),
    ("npm run-script build; yarn exec jest", [], ["npm run-script build", "yarn exec jest"], []),
    ("npm install lodash; pnpm add x", [], ["npm install", "pnpm add"], []),
    ("npm view lodash; npm config get x; yarn --version", [], [], []),
    # bare yarn and pnpm install; bare npm only prints its help
    ("yarn; pnpm", [], ["yarn install", "pnpm install"], []),
    ("npm", [], [], []),
    # ====== git's own options, before the subcommand
    ("git", [], [], []),
    ("git --version", [], [], []),
    ("git -C", [], [], []),  # -C without its directory: git refuses it
    ("git -c core.x=1 checkout -- a", ["entry:/repo/a"], [], []),
    ("git -c a=b --no-pager checkout -- x", ["entry:/repo/x"], [], []),
    ("git --no-pager rm a", ["entry:/repo/a"], [], []),
    (
        "git --git-dir .git rm a; git --work-tree . rm b; git --namespace ns rm c",
        ["entry:/repo/a", "entry:/repo/b", "entry:/repo/c"],
        [],
        [],
    ),
    ("git -C ~/w checkout -- a", ["entry:/home/me/w/a"], [], []),
    ('git -C "$PWD/sub" rm a', ["entry:/repo/sub/a"], [], []),
    # --work-tree: from inside it paths are the current directory's, from outside its top's
    ("git --work-tree=/srv/w checkout -- f", ["entry:/srv/w/f"], [], []),
    ("git --work-tree /srv/w rm f", ["entry:/srv/w/f"], [], []),
    (
        "git --work-tree=/ checkout -- f; git --work-tree .. rm g",
        ["entry:/repo/f", "entry:/repo/g"],
        [],
        [],
    ),
    ("git -C sub --work-tree=.. rm f", ["entry:/repo/sub/f"], [], []),
    ("git --work-tree=../o stash", [], ["git stash"], [("/o", "git stash")]),
    (
        "git -C a --work-tree=b reset --hard",
        [],
        ["git reset --hard"],
        [("/repo/a/b", "git reset --hard")],
    ),
    # ====== checkout: a branch switch rewrites the tree, paths are written one by one
    ("git checkout main", [], ["git checkout main"], [("/repo", "git checkout main")]),
    ("git checkout -", [], ["git checkout -"], [("/repo", "git checkout -")]),
    # a new branch at HEAD keeps the work tree ...
    ("git checkout -b feat; git checkout -B feat2; git checkout --orphan gh-pages", [], [], []),
    ("git checkout; git checkout --detach", [], [], []),
    # ... unless forced: -f resets it to HEAD (git 2.39 threw a dirty file's edit away)
    ("git checkout -f", [], ["git checkout -f"], [("/repo", "git checkout -f")]),
    ("git checkout --force", [], ["git checkout -f"], [("/repo", "git checkout -f")]),
    ("git checkout -f -b new", [], ["git checkout -f"], [("/repo", "git checkout -f")]),
    ("git checkout --orphan o -f", [], ["git checkout -f"], [("/repo", "git checkout -f")]),
    # a new branch at another commit switches the tree to it
    (
        "git checkout -b feat origin/main",
        [],
        ["git checkout origin/main"],
        [("/repo", "git checkout origin/main")],
    ),
    # `--` after a branch names it a branch: the tree switches
    ("git checkout other --", [], ["git checkout other"], [("/repo", "git checkout other")]),
    # a tree-ish then paths, with or without `--`: only the paths (no branch switch)
    ("git checkout other f g", ["entry:/repo/f", "entry:/repo/g"], [], []),
    ("git checkout other -- f", ["entry:/repo/f"], [], []),
    # ====== restore: the work tree unless only --staged
    ("git restore -s HEAD~1 a.py", ["entry:/repo/a.py"], [], []),
    ("git restore --source HEAD~1 b.py", ["entry:/repo/b.py"], [], []),
    ("git restore -S x; git restore --staged y", [], [], []),
    (
        "git restore -S -W x; git restore --staged --worktree y",
        ["entry:/repo/x", "entry:/repo/y"],
        [],
        [],
    ),
    ("git restore -W z", ["entry:/repo/z"], [], []),
    # ====== rm, mv: not with --cached or a dry run; mv's paths are not pathspecs
    ("git rm -n a; git rm --dry-run b; git mv -n c d; git rm --cached e", [], [], []),
    ("git rm '*.o'", ["glob:/repo/*.o"], [], []),
    ("git mv '*.o' d", ["entry:/repo/*.o", "entry:/repo/d"], [], []),
    # ====== reset
    (
        "git reset --merge; git reset --keep HEAD~1",
        [],
        ["git reset --merge", "git reset --keep"],
        [
            ("/repo", "git reset --merge"),
            ("/repo", "git reset --keep"),
        ],
    ),
    ("git reset; git reset --soft HEAD~1; git reset --mixed", [], [], []),
    # ====== clean: not a dry run; an option's value is not an option (`-e -n` excludes "-n")
    ("git clean -n; git clean --dry-run; git clean -nd", [], [], []),
    ("git clean -fd", [], ["git clean"], [("/repo", "git clean")]),
    ("git clean -e -n -f", [], ["git clean"], [("/repo", "git clean")]),
    ("git clean --exclude -n -f", [], ["git clean"], [("/repo", "git clean")]),
    # ====== stash
    ("git stash", [], ["git stash"], [("/repo", "git stash")]),
    ("git stash -m wip; git stash --message wip2", [], ["git stash"], [("/repo", "git stash")]),
    ("git stash push", [], ["git stash push"], [("/repo", "git stash push")]),
    # push's pathspecs, after `--` or not: only these are swept
    ("git stash push -- a", ["entry:/repo/a"], [], []),
    ("git stash push -m wip a b", ["entry:/repo/a", "entry:/repo/b"], [], []),
    (
        "git stash -- c; git stash push d -- e",
        ["entry:/repo/c", "entry:/repo/d", "entry:/repo/e"],
        [],
        [],
    ),
    ("git stash push -- '*.py'", ["glob:/repo/*.py"], [], []),
    # save's words are its message: it sweeps everything (git 2.39: `save -- f` did)
    ("git stash save -- f", [], ["git stash save"], [("/repo", "git stash save")]),
    ("git stash save wip", [], ["git stash save"], [("/repo", "git stash save")]),
    (
        "git stash pop; git stash apply stash@{1}",
        [],
        ["git stash pop", "git stash apply"],
        [
            ("/repo", "git stash pop"),
            ("/repo", "git stash apply"),
        ],
    ),
    ("git stash branch b", [], ["git stash branch"], [("/repo", "git stash branch")]),
    (
        "git stash list; git stash show; git stash drop; git stash clear; "
        "git stash create; git stash store abc",
        [],
        [],
        [],
    ),
    # ====== switch: a new branch at HEAD keeps the tree (git 2.39: even with -f)
    ("git switch main", [], ["git switch main"], [("/repo", "git switch main")]),
    ("git switch --detach", [], ["git switch"], [("/repo", "git switch")]),
    (
        "git switch -c a; git switch -C b; git switch --create c; git switch --force-create d",
        [],
        [],
        [],
    ),
    ("git switch -f -c new", [], [], []),
    (
        "git switch -c feat origin/x y",
        [],
        ["git switch origin/x"],
        [("/repo", "git switch origin/x")],
    ),
    # ====== merge-likes: all but their --abort/--quit/--skip (pull has none)
    (
        "git merge x; git rebase y; git cherry-pick z; git revert w; git am p",
        [],
        ["git merge", "git rebase", "git cherry-pick", "git revert", "git am"],
        [
            ("/repo", "git merge"),
            ("/repo", "git rebase"),
            ("/repo", "git cherry-pick"),
            ("/repo", "git revert"),
            ("/repo", "git am"),
        ],
    ),
    (
        "git merge --abort; git rebase --quit; git cherry-pick --skip; git revert --abort",
        [],
        [],
        [],
    ),
    ("git merge --no-ff x", [], ["git merge"], [("/repo", "git merge")]),
    ("git pull --abort", [], ["git pull"], [("/repo", "git pull")]),
    # ====== apply: all but what only reads the patch or touches only the index
    ("git apply p.diff", [], ["git apply"], [("/repo", "git apply")]),
    ("git -C sub apply p.diff", [], ["git apply"], [("/repo/sub", "git apply")]),
    (
        "git apply --check p; git apply --stat p; git apply --numstat p; "
        "git apply --summary p; git apply --cached p",
        [],
        [],
        [],
    ),
    # ====== worktree add: its directory
    ("git worktree add ../wt main", ["/wt"], [], []),
    ("git -C sub worktree add wt", ["/repo/sub/wt"], [], []),
    ("git worktree add --lock --reason why ../wt2 main", ["/wt2"], [], []),
    ("git worktree add; git worktree list; git add wt x", [], [], []),
    # ====== --pathspec-from-file: the paths are in a file
    (
        "git checkout main --pathspec-from-file=list",
        [],
        ["git checkout main", "git checkout --pathspec-from-file"],
        [("/repo", "git checkout main")],
    ),
    # ====== eval: literal text in place, its words joined
    ("eval touch a", ["/repo/a"], [], []),
    ('eval "cd sub"; touch b', ["/repo/sub/b"], [], []),
    # a variable makes it opaque; its text is read again as the shell would ($X runs)
    ('eval "$X" touch c', [], ["eval", "command $X"], []),
]


def _show(command: str, cwd: str = "/repo") -> tuple[list[str], list[str], list[Tree]]:
    res = analyze(command, cwd, HOME)
    assert res.gave_up is None, res.gave_up
    targets = [("glob:" if t.glob else "entry:" if t.entry else "") + t.path for t in res.targets]
    return targets, res.opaque, res.trees


@pytest.mark.parametrize(
    ("command", "targets", "opaque", "trees"), CASES, ids=[c[0][:40] for c in CASES]
)
def test_case(command: str, targets: list[str], opaque: list[str], trees: list[Tree]) -> None:
    assert _show(command) == (targets, opaque, trees)


# ====== eval's nesting: MAX_DEPTH (8) evals inside one another are read, the ninth is not;
# each eval gives its level back when it ends


@pytest.mark.parametrize("before", ["", "eval true; ", "eval true; eval true; eval true; "])
def test_eight_nested_evals_are_read_after_any_number_of_evals(before: str) -> None:
    res = analyze(before + "eval " * 8 + "touch x", "/repo", HOME)
    assert (res.gave_up, [t.path for t in res.targets]) == (None, ["/repo/x"])


@pytest.mark.parametrize("before", ["", "eval true; "])
def test_the_ninth_nested_eval_gives_up(before: str) -> None:
    res = analyze(before + "eval " * 9 + "touch x", "/repo", HOME)
    assert (res.gave_up, res.opaque, res.targets) == (
        "nesting too deep",
        ["nesting too deep"],
        [],
    )


def test_many_evals_one_after_another_are_all_read() -> None:
    res = analyze("eval true; " * 20 + "eval touch x", "/repo", HOME)
    assert (res.gave_up, [t.path for t in res.targets]) == (None, ["/repo/x"])


# ====== `git checkout X` without `--`: a path when one by that name exists where git runs
# (git's own rule picks a branch first), else a branch


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A work tree holding `src/x.py` and `only_here.txt`; its name ends in `X`, a letter
    a wrong strip of its trailing slash would take too."""
    top = tmp_path / "workX"
    (top / "src").mkdir(parents=True)
    (top / "src" / "x.py").write_text("x\n")
    (top / "only_here.txt").write_text("y\n")
    return top


def test_checkout_of_an_existing_path_writes_it(checkout: Path) -> None:
    cwd = str(checkout)
    assert _show("git checkout only_here.txt src/x.py", cwd) == (
        [f"entry:{cwd}/only_here.txt", f"entry:{cwd}/src/x.py"],
        [],
        [],
    )
    assert _show("git checkout src", cwd) == ([f"entry:{cwd}/src"], [], [])


def test_checkout_of_an_existing_absolute_path_writes_it(checkout: Path) -> None:
    path = f"{checkout}/src/x.py"
    assert _show(f"git checkout {path}", "/") == ([f"entry:{path}"], [], [])


def test_checkout_of_a_name_that_is_no_path_switches_the_tree(checkout: Path) -> None:
    cwd = str(checkout)
    assert _show("git checkout feature", cwd) == (
        [],
        ["git checkout feature"],
        [(cwd, "git checkout feature")],
    )


def test_a_word_the_shell_fills_in_is_taken_for_a_branch(checkout: Path) -> None:
    """Even when a file bears the word's literal text."""
    (checkout / "$B").write_text("")
    cwd = str(checkout)
    assert _show('git checkout "$B"', cwd) == ([], ["git checkout $B"], [(cwd, "git checkout $B")])


def test_an_empty_word_is_no_path(checkout: Path) -> None:
    cwd = str(checkout)
    assert _show("git checkout ''", cwd) == ([], ["git checkout "], [(cwd, "git checkout ")])


def test_with_the_directory_unknown_a_name_is_taken_for_a_branch(checkout: Path) -> None:
    assert _show('cd "$D"; git checkout only_here.txt', str(checkout)) == (
        [],
        ["git checkout only_here.txt"],
        [(None, "git checkout only_here.txt")],
    )
