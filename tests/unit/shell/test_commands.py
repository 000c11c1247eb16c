"""What the handlers of `agent_hooks/shell/commands.py` (make-likes and npm-likes,
interpreters, wrappers, xargs and find, shells, git, eval) make of a command: cases that
pin each rule, found by mutation testing (docs/mutation-testing.md) and, for git, checked
against git 2.39 in a scratch repository (what each form does to the work tree is said
beside it). Shaped as tests/unit/shell/test_writes.py's table, with
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
    # a sourced file named like a read-only npm subcommand is still run
    ("source config", [], ["source config"], []),
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
    # ====== interpreters (`interpreter`): code from -c/-e/-m, a script or stdin is opaque
    ("python --version; node -v; ruby -h; python3 --help; python -V; deno --version", [], [], []),
    ("python -V -c 1", [], ["python -c"], []),  # not only asking for the version
    ("python; node", [], ["python reads stdin", "node reads stdin"], []),
    ("python -B; python - < in.txt", [], ["python reads stdin"], []),
    # python's letters bundle: -c or -m in it decides
    (
        "python3 -Bc 1; python -um mod; python -Bm",
        [],
        ["python3 -c", "python -m mod", "python -m"],
        [],
    ),
    ("python run.pyc", [], ["python run.pyc"], []),  # a script whose name ends in c
    # the first of c, m, W, X in the bundle takes the rest of the word, else the next word
    ("python -BW ignore x.py; python -BX dev y.py", [], ["python x.py", "python y.py"], []),
    ("python -Wignore x.py; python -mpytest -q", [], ["python x.py", "python -m pytest"], []),
    ("python -c'print(1)'; python -Bcm x", [], ["python -c"], []),
    ("python -u -B x.py", [], ["python x.py"], []),
    ("python - x.py", [], ["python reads stdin"], []),  # the script is stdin, x.py its argument
    ("python --check-hash-based-pycs never x.py", [], ["python x.py"], []),
    # -c and -m are python's (and pypy's): node -c only checks the syntax of its script
    ("pypy -c 1; pypy3 -Bm x", [], ["pypy -c", "pypy3 -m x"], []),
    ("node -c x.js; ruby -m y.rb", [], ["node x.js", "ruby y.rb"], []),
    (
        "node -e 1; node --eval 1; node -p 1; node --print 1; php -r 1; lua -E",
        [],
        ["node -e", "node --eval", "node -p", "node --print", "php -r", "lua -E"],
        [],
    ),
    ("python -m pytest -q; python -m", [], ["python -m pytest", "python -m"], []),
    # python's -W and -X take a value; node's -W is no such option
    ("python -W ignore x.py; python -X dev -c 1", [], ["python x.py", "python -c"], []),
    ("node -W x.js; python -- y.py", [], ["node x.js", "python y.py"], []),
    ("python3.12 -c 1; pypy3 -m x; bun x.ts", [], ["python3.12 -c", "pypy3 -m x", "bun x.ts"], []),
    # ====== dispatch (`run_command`): a path to a known command is that command
    ("/usr/bin/python3 -c 1", [], ["python3 -c"], []),
    ("/usr/bin/env touch x", ["/repo/x"], [], []),
    ("/opt/tools/fmt x", [], ["script /opt/tools/fmt"], []),
    # a wrapper's long options take their value from the next word
    ("sudo --user root touch x", ["/repo/x"], [], []),
    # xargs -i and --replace: the string replaced (attached, or {} when none is given)
    ("xargs -i% rm %; xargs --replace=% rm %", [], ["xargs rm"], []),
    ("xargs -i rm {}; xargs --replace rm {}", [], ["xargs rm"], []),
    # command -v/-V only tell what a name is
    ("command -v rm x; command -V touch y", [], [], []),
    # GNU time's -o file (bash's own `time` keyword has no -o: then it is the program's)
    (
        "/usr/bin/time -o t.log rm a; /usr/bin/time --output=u.log true; "
        "/usr/bin/time --output v.log true",
        ["/repo/t.log", "entry:/repo/a", "/repo/u.log", "/repo/v.log"],
        [],
        [],
    ),
    # env -S splits its string into a command the analysis does not read
    ("env -S 'rm x'", [], ["env -S"], []),
    ("env --split-string 'rm y'", [], ["env -S"], []),
    # env and sudo: assignments and a lone `-` before the command; --chdir, env -C, sudo -D
    ("env - touch x; env A=1 touch y", ["/repo/x", "/repo/y"], [], []),
    ("env --chdir=sub touch x; sudo --chdir /srv touch y", ["/repo/sub/x", "/srv/y"], [], []),
    ('env -C ~/w touch x; env -C "$PWD/s" touch y', ["/home/me/w/x", "/repo/s/y"], [], []),
    # ====== xargs and find -exec (`_indirect`): the command run, with the input unknown
    ("xargs", [], [], []),
    ("xargs /bin/grep x", [], [], []),  # a path to a command that only reads
    ("xargs cp -t /tmp/d", ["/tmp/d"], ["xargs cp"], []),
    ("xargs mv x", ["entry:/repo/x"], ["xargs mv"], []),  # the input is the destination
    ("xargs rm {}", ["entry:/repo/{}"], ["xargs rm"], []),  # without -i, {} is itself
    # ====== find (`_find`): -delete, or -exec of a command writing what it finds, writes
    # the starting points; followed too after -L or -H (the last of -H, -L, -P wins)
    ("find a b -delete", ["entry:/repo/a", "entry:/repo/b"], [], []),
    (
        "find -L a -delete; find -H b -delete",
        ["entry:/repo/a", "/repo/a", "entry:/repo/b", "/repo/b"],
        [],
        [],
    ),
    ("find -L -P a -delete", ["entry:/repo/a"], [], []),
    ("find -P -L a -delete", ["entry:/repo/a", "/repo/a"], [], []),
    # -D takes a value, -O is one word: neither changes the following
    (
        "find -L -D tree a -delete; find -O3 -L b -delete",
        ["entry:/repo/a", "/repo/a", "entry:/repo/b", "/repo/b"],
        [],
        [],
    ),
    ("find -D stat x -delete", ["entry:/repo/x"], [], []),
    # the starting points end at the expression (an option, `(`, `!`)
    (
        "find a ! -name x -delete; find b \\( -name y \\) -delete",
        ["entry:/repo/a", "entry:/repo/b"],
        [],
        [],
    ),
    ("find -delete; find -name '*.o' -delete", ["/repo"], [], []),  # none: `.`
    # the files find's own actions write
    (
        "find . -fprint a -fprint0 b -fls c -fprintf d %p -name x",
        ["/repo/a", "/repo/b", "/repo/c", "/repo/d"],
        [],
        [],
    ),
    ("find . -fprintf log -delete", ["/repo/log"], [], []),  # a format, not an action
    ("find . -fprint", [], [], []),  # without its file: find refuses it
    ("find; find -L; find a", [], [], []),  # no expression: find only prints
    ("find . -execdir rm {} +; find b -ok rm {} \\;", ["/repo", "entry:/repo/b"], [], []),
    ("find a -okdir rm {} \\;", ["entry:/repo/a"], [], []),
    (
        "find . -exec rm {}",
        ["/repo"],
        [],
        [],
    ),  # unterminated (find refuses it): read as far as it goes
    ("find a -delete -exec grep x {} +", ["entry:/repo/a"], [], []),  # one writing action is enough
    ("find a -exec grep x {} \\; -delete", ["entry:/repo/a"], [], []),  # read after the -exec
    ("find a -exec \\;", [], [], []),  # no command: find refuses it
    # ====== shells (`_shell`): -c strings are read; a script or stdin is not
    ("bash -o errexit s.sh; sh -O extglob t.sh", [], ["script s.sh", "script t.sh"], []),
    (
        "bash --rcfile rc -c 'touch x'; bash --init-file rc -c 'touch y'",
        ["/repo/x", "/repo/y"],
        [],
        [],
    ),
    ("bash build.sh -c x", [], ["script build.sh"], []),  # the script's own -c
    ("bash --version; sh --help", [], [], []),
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
    ("git --work-tree", [], [], []),  # --work-tree without its directory: git refuses it
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
    # bash expands `~` at the start of a word, not after `--work-tree=`
    (
        "git --work-tree ~/w rm f; git --work-tree=~/w rm g",
        ["entry:/home/me/w/f", "entry:/repo/~/w/g"],
        [],
        [],
    ),
    ('git --work-tree "$PWD/w" rm f', ["entry:/repo/w/f"], [], []),
    ('cd "$D"; git --work-tree=/w rm f', ["entry:/w/f"], [], []),
    ("git --work-tree=$W checkout -- f", [], ["relative target f after cd $W"], []),
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
    ("git checkout other f", ["entry:/repo/f"], [], []),
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
    # a wildcard matches across `/` (git 2.39: `git rm '*.py'` removed src/sub/b.py too)
    ("git rm '*.o'", ["glob:/repo/**/*.o"], [], []),
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
    ("git stash push a", ["entry:/repo/a"], [], []),
    ("git stash push -m wip a b", ["entry:/repo/a", "entry:/repo/b"], [], []),
    (
        "git stash -- c; git stash push d -- e",
        ["entry:/repo/c", "entry:/repo/d", "entry:/repo/e"],
        [],
        [],
    ),
    ("git stash push -- '*.py'", ["glob:/repo/**/*.py"], [], []),  # stashed src/sub/b.py
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
    # ====== --pathspec-from-file: the paths are in a file (restored from main, no switch:
    # git 2.39); one that cannot be read leaves the whole work tree at stake
    (
        "git checkout main --pathspec-from-file=list",
        [],
        ["git checkout --pathspec-from-file=list"],
        [("/repo", "git checkout --pathspec-from-file=list")],
    ),
    # the index only: nothing in the work tree
    ("git reset --pathspec-from-file=list; git add --pathspec-from-file=list", [], [], []),
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


# ====== inside or outside `--work-tree`: a directory is inside itself and below, never beside


@pytest.mark.parametrize(
    ("cwd", "work_tree", "target"),
    [
        ("/w/sub", "/w/sub", "/w/sub/f"),
        ("/w/sub/deep", "/w/sub", "/w/sub/deep/f"),
        ("/w/subX", "/w/sub", "/w/sub/f"),  # a longer name beside it is outside
        ("/w/sub", "/w/subX", "/w/subX/f"),
        ("/w/su", "/w/suXX", "/w/suXX/f"),
        ("/w/a ", "/w/a", "/w/a/f"),  # a trailing blank is part of the name
    ],
)
def test_paths_are_taken_from_the_top_of_a_work_tree_git_runs_outside_of(
    cwd: str, work_tree: str, target: str
) -> None:
    res = analyze(f"git --work-tree={work_tree} rm f", cwd, HOME)
    assert ([t.path for t in res.targets], res.opaque) == ([target], [])


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
    path = f"{checkout}/only_here.txt"
    assert _show(f"git checkout {path}", f"{checkout}/src") == ([f"entry:{path}"], [], [])


def test_a_trailing_blank_of_the_directory_is_part_of_its_name(checkout: Path) -> None:
    (checkout / "sp ").mkdir()
    (checkout / "sp " / "f").write_text("")
    cwd = f"{checkout}/sp "
    assert _show("git checkout f", cwd) == ([f"entry:{cwd}/f"], [], [])


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
