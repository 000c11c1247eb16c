"""What `agent_hooks/shell/git_paths.py` makes of git's pathspec magic, wildcards and
pathspec files, and of the plumbing that rewrites a work tree (issue 33): one table,
each row beside what git 2.39 did with it in a scratch repository, then the same forms
run by real git against the analysis (everything git changed must be a target).

The table runs in a work tree `{w}` (a `.git` directory, `src/sub/`) from `{w}/src`;
a target is written as in test_commands.py ("glob:", "entry:"), followed by " but P…"
for the paths it leaves alone (`BashTarget.but`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_hooks.reservations import pattern
from agent_hooks.shell import git_paths
from agent_hooks.shell.writes import analyze
from git_repo import git

HOME = "/home/me"
Tree = tuple[str | None, str]

CASES: list[tuple[str, list[str], list[str], list[Tree]]] = [
    # ====== top: `:/`, `:(top)` are the whole work tree, wherever git runs
    ("git restore :/", ["{w}"], [], []),  # git 2.39 restored every file, from src/ too
    ("git restore ':(top)'", ["{w}"], [], []),
    ("git checkout -- :/", ["{w}"], [], []),
    ("git checkout HEAD -- ':(top)'", ["{w}"], [], []),
    ("git stash push -- :/", ["{w}"], [], []),
    ("git rm -rf :/", ["{w}"], [], []),  # removed every file
    ("git -C .. restore :/", ["{w}"], [], []),
    # `:` alone is the directory git runs in (restored src/'s files only)
    ("git restore :", ["{w}/src"], [], []),
    ("git restore ':/src/sub'", ["entry:{w}/src/sub"], [], []),
    ("git restore ':/:a.py'", ["entry:{w}/a.py"], [], []),  # a second `:` ends the magic
    ("git restore '::x'", ["entry:{w}/src/x"], [], []),
    ("git restore ':(top,)x'", ["entry:{w}/x"], [], []),  # an empty magic word is none
    # a character git does not take for magic starts the path (git: did not match)
    ("git restore ':.x'; git restore ':ax'", ["entry:{w}/src/.x", "entry:{w}/src/ax"], [], []),
    # `checkout :/` without `--`: git 2.39 restored every file ("Updated 6 paths from the
    # index"); `:/TEXT` may also name a commit (a switch): both
    ("git checkout :/", ["{w}"], ["git checkout :/"], [("{w}/src", "git checkout :/")]),
    # only the index
    ("git restore --staged :/; git restore -S ':(top)'", [], [], []),
    ("git reset -- :/; git reset HEAD ':(top)'", [], [], []),  # git: the index only
    ("git restore -S -W :/", ["{w}"], [], []),
    # ====== exclusions: everything but them, in the work tree (restore, checkout, stash)
    ("git restore ':!a.py'", ["{w} but {w}/src/a.py"], [], []),  # all but src/a.py
    ("git restore ':!a.py' ':!sub'", ["{w} but {w}/src/a.py {w}/src/sub"], [], []),
    ("git checkout -- ':^sub'", ["{w} but {w}/src/sub"], [], []),
    ("git restore ':(exclude)sub'", ["{w} but {w}/src/sub"], [], []),
    ("git checkout HEAD -- ':!a.py'", ["{w} but {w}/src/a.py"], [], []),
    ("git stash push -- ':!a.py'", ["{w} but {w}/src/a.py"], [], []),
    ("git restore ':!/notes.txt'", ["{w} but {w}/notes.txt"], [], []),  # all but notes.txt
    ("git restore ':/!notes.txt'", ["{w} but {w}/notes.txt"], [], []),
    ("git restore ':(top,exclude)notes.txt'", ["{w} but {w}/notes.txt"], [], []),
    ("git restore ':(exclude)'", ["{w} but {w}/src"], [], []),  # all but src/
    # ... in the directory git runs in for rm (git 2.39 removed src/sub/b.py, src/c.txt)
    ("git rm -rf ':!a.py'", ["{w}/src but {w}/src/a.py"], [], []),
    # with a pathspec too: only inside it
    ("git restore sub ':!sub/b.py'", ["entry:{w}/src/sub but {w}/src/sub/b.py"], [], []),
    # an exclusion with a wildcard or folded case carves nothing out
    ("git restore ':(exclude)*.py'", ["{w}"], [], []),
    ("git restore ':(icase,exclude)a.py'", ["{w}"], [], []),
    ("git restore ':!sub/[ab].py'", ["{w}"], [], []),
    # ====== wildcards: without glob magic `*` matches across `/` (git 2.39: `*.py`
    # restored src/sub/b.py too)
    ("git restore '*.py'", ["glob:{w}/src/**/*.py"], [], []),
    ("git restore sub/'*'", ["{w}/src/sub"], [], []),  # everything below sub/
    ("git restore 'a*b/c.py'", ["glob:{w}/src/**/*b/c.py"], [], []),
    ("git restore '*/x.py'", ["glob:{w}/src/**/x.py"], [], []),
    ("git restore 'a*b*c.py'", ["glob:{w}/src/**/*c.py"], [], []),  # after the last `*`
    ("git restore ~/'*.py'", ["glob:/home/me/**/*.py"], [], []),
    # a shell glob git receives unexpanded is git's too
    ("git checkout -- *.py", ["glob:{w}/src/**/*.py"], [], []),
    ("git restore \"$PWD\"/'*.py'", ["glob:{w}/src/**/*.py"], [], []),
    # `?`, a class or a backslash: the literal directories before it, as a whole
    ("git restore 's?b/x'", ["{w}/src"], [], []),  # git 2.39: `s?c/a.py` restored src/a.py
    ("git restore 'sub/[ab].py'", ["{w}/src/sub"], [], []),
    ("git restore 'sub/a\\*.py'", ["{w}/src/sub"], [], []),
    # ====== glob magic: `*` within a segment, `**` across (git 2.39: `:(glob)src/*`
    # restored src/a.py and src/c.txt, not src/sub/b.py; `:(glob)**/*.py` both .py)
    ("git restore ':(glob)sub/*'", ["glob:{w}/src/sub/*"], [], []),
    ("git restore ':(glob)**/*.py'", ["glob:{w}/src/**/*.py"], [], []),
    ("git restore ':(top,glob)src/**'", ["glob:{w}/src/**"], [], []),
    ("git restore ':(glob)sub/a\\*.py'", ["glob:{w}/src/sub/a[*].py"], [], []),
    ("git restore ':(glob)sub/[ab].py'", ["{w}/src/sub"], [], []),
    ("git restore ':(glob)sub/a\\*'", ["glob:{w}/src/sub/a[*]"], [], []),
    ("git restore ':(glob)sub/*\\'", ["{w}/src/sub"], [], []),  # a backslash ending it
    ("git restore ':(glob)sub/\\X\\a*'", ["glob:{w}/src/sub/Xa*"], [], []),  # quotes any
    ("git restore ':(glob)sub'", ["entry:{w}/src/sub"], [], []),
    # ====== icase: each letter either case (git 2.39: `:(icase)SRC` restored src/)
    ("git restore ':(icase)SUB'", ["glob:{w}/src/[sS][uU][bB]"], [], []),
    ("git restore ':(icase,glob)SUB/*.PY'", ["glob:{w}/src/[sS][uU][bB]/*.[pP][yY]"], [], []),
    ("git restore ':(top,icase)A.py'", ["glob:{w}/[aA].[pP][yY]"], [], []),
    ("git --icase-pathspecs restore x", ["glob:{w}/src/[xX]"], [], []),
    ("git --icase-pathspecs --no-pager restore x", ["glob:{w}/src/[xX]"], [], []),
    ("GIT_ICASE_PATHSPECS=1 git restore x", ["glob:{w}/src/[xX]"], [], []),
    ("export GIT_ICASE_PATHSPECS=1; git rm -r x", ["glob:{w}/src/[xX]"], [], []),
    # ====== literal: the text is the path; attr: only narrows
    ("git restore ':(literal)a*b'", ["entry:{w}/src/a*b"], [], []),
    ("git restore ':(attr:gen)sub'", ["entry:{w}/src/sub"], [], []),
    ("git restore ':(attr:x,top)sub'", ["entry:{w}/sub"], [], []),  # the words after it too
    ("git restore ':(top)a)b'", ["entry:{w}/a)b"], [], []),  # the first `)` ends the magic
    ("git restore ':Xy'", ["entry:{w}/src/Xy"], [], []),
    # ====== magic git does not know: it fails; the whole work tree at stake
    (
        "git restore ':(bogus)x'",
        [],
        ["git restore :(bogus)x"],
        [("{w}/src", "git restore :(bogus)x")],
    ),
    ("git restore ':(TOP)x'", [], ["git restore :(TOP)x"], [("{w}/src", "git restore :(TOP)x")]),
    (
        "git restore ':(prefix:1)x'",  # git 2.39 aborted (BUG)
        [],
        ["git restore :(prefix:1)x"],
        [("{w}/src", "git restore :(prefix:1)x")],
    ),
    ("git checkout -- ':#x'", [], ["git checkout :#x"], [("{w}/src", "git checkout :#x")]),
    ("git restore ':(top'", [], ["git restore :(top"], [("{w}/src", "git restore :(top")]),
    (
        "git restore ':(literal,glob)x'",
        [],
        ["git restore :(literal,glob)x"],
        [("{w}/src", "git restore :(literal,glob)x")],
    ),
    ("git rm ':(attr:)x'", [], ["git rm :(attr:)x"], [("{w}/src", "git rm :(attr:)x")]),
    # ====== where the top cannot be known
    ("git --git-dir=../.git restore :/", [], ["git restore :/"], [("{w}/src", "git restore :/")]),
    (
        "git --git-dir ../.git --no-pager restore :/",
        [],
        ["git restore :/"],
        [("{w}/src", "git restore :/")],
    ),
    # --work-tree is the top (from outside it, where paths are read from too)
    ("git --work-tree=.. restore :/", ["{w}"], [], []),
    ("git --work-tree=/srv/w restore :/ x", ["/srv/w", "entry:/srv/w/x"], [], []),
    ('cd "$D"; git restore :/', [], ["git restore :/"], [(None, "git restore :/")]),
    # relative to an unknown directory: unknown, as any relative path there
    ('cd "$D"; git restore :!x', [], ["relative target :!x after cd $D"], []),
    # a pathspec the shell fills in may be any: the whole work tree (as `:/`)
    ('git restore "$F"', [], ["git restore $F"], [("{w}/src", "git restore $F")]),
    ("git checkout -- $(cat l)", [], ["git checkout $(...)"], [("{w}/src", "git checkout $(...)")]),
    ('git stash push "$F"', [], ["git stash $F"], [("{w}/src", "git stash $F")]),
    ('git rm -r "$F"', [], ["git rm $F"], [("{w}/src", "git rm $F")]),
    ('git rm --cached "$F"', [], [], []),  # the index only
    ('git restore --staged "$F"', [], [], []),
    ("git restore \"$F\"/'*.py'", [], ["git restore $F"], [("{w}/src", "git restore $F")]),
    (
        "git restore \"$F\" '*.py'",
        ["glob:{w}/src/**/*.py"],
        ["git restore $F"],
        [("{w}/src", "git restore $F")],
    ),
    # ... and so may the paths xargs reads (its input), wherever the pipe comes from
    (
        "git diff --name-only | xargs git checkout --",
        [],
        ["xargs git checkout {}", "xargs git"],
        [("{w}/src", "xargs git checkout {}")],
    ),
    (
        "xargs -I{} git restore -- {} < list",
        [],
        ["xargs git restore {}", "xargs git"],
        [("{w}/src", "xargs git restore {}")],
    ),
    ("xargs git stash", [], ["xargs git stash", "xargs git"], [("{w}/src", "xargs git stash")]),
    ("xargs git add", [], ["xargs git"], []),
    (
        "cd \"$D\"; git restore x ':/y'",
        [],
        ["relative target x after cd $D", "git restore :/y"],
        [(None, "git restore :/y")],
    ),
    (
        "git --git-dir=../.git restore ':!x'",  # all but x, in a work tree not known
        [],
        ["git restore :!x"],
        [("{w}/src", "git restore :!x")],
    ),
    # magic git does not know, beside a pathspec it does: both
    (
        "git restore ':(bogus)x' a.py",
        ["entry:{w}/src/a.py"],
        ["git restore :(bogus)x"],
        [("{w}/src", "git restore :(bogus)x")],
    ),
    # ====== --pathspec-from-file: the file names them (see the fixtures below)
    ("git restore --pathspec-from-file=list", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    ("git restore --pathspec-from-file list", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    ("git checkout --pathspec-from-file=list", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    (  # git 2.39: restored from HEAD, no switch
        "git checkout HEAD --pathspec-from-file=list",
        ["entry:{w}/src/a.py", "entry:{w}/docs"],
        [],
        [],
    ),
    ("git stash --pathspec-from-file=list", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    (
        "git restore --pathspec-from-file=quoted",
        ["entry:{w}/src/a.py", "entry:{w}/src/é.py"],
        [],
        [],
    ),
    (
        "git restore --pathspec-from-file=nul --pathspec-file-nul",
        ["entry:{w}/src/a.py", "entry:{w}/docs"],
        [],
        [],
    ),
    # without --pathspec-file-nul git reads up to the NUL: the rest is taken too
    ("git restore --pathspec-from-file=nul", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    ("git restore --pathspec-from-file=crlf", ["entry:{w}/src/a.py"], [], []),
    ("git restore --pathspec-from-file=spaced", ["entry:{w}/src/a b.py"], [], []),
    (  # another file written first: this one is known
        "echo x > other; git restore --pathspec-from-file=crlf",
        ["{w}/src/other", "entry:{w}/src/a.py"],
        [],
        [],
    ),
    (  # ... or a directory named like its own and more: known too
        "rm -rf subX 'sub '; git restore --pathspec-from-file=sub/list",
        ["entry:{w}/src/subX", "entry:{w}/src/sub ", "entry:{w}/src/a.py"],
        [],
        [],
    ),
    (  # ... its directory removed first: not
        "rm -rf sub; git restore --pathspec-from-file=sub/list",
        ["entry:{w}/src/sub"],
        ["git restore --pathspec-from-file=sub/list"],
        [("{w}/src", "git restore --pathspec-from-file=sub/list")],
    ),
    # with --pathspec-file-nul a newline is part of a name
    ("git restore --pathspec-from-file=nulnl --pathspec-file-nul", ["entry:{w}/src/x\ny"], [], []),
    ("git restore --pathspec-from-file=nulnl", ["entry:{w}/src/x", "entry:{w}/src/y"], [], []),
    # pathspecs beside the file: git refuses them together; both are taken
    (
        "git restore b.py --pathspec-from-file=crlf",
        ["entry:{w}/src/b.py", "entry:{w}/src/a.py"],
        [],
        [],
    ),
    ("git restore --pathspec-from-file=magic", ["{w} but {w}/src/a.py"], [], []),
    (
        "git -C .. restore --pathspec-from-file=src/list",
        ["entry:{w}/a.py", "entry:{w}/docs"],
        [],
        [],
    ),
    ("git restore --staged --pathspec-from-file=missing", [], [], []),
    ("git rm --cached --pathspec-from-file=list; git rm -n --pathspec-from-file=list", [], [], []),
    ("git rm -r --pathspec-from-file=list", ["entry:{w}/src/a.py", "entry:{w}/docs"], [], []),
    ("git reset --pathspec-from-file=missing", [], [], []),
    ("git restore --pathspec-from-file=- <<< a.py", ["entry:{w}/src/a.py"], [], []),
    (
        "git restore --pathspec-from-file=- <<'E'\nc.txt\n:/docs\nE",
        ["entry:{w}/src/c.txt", "entry:{w}/docs"],
        [],
        [],
    ),
    # ... and where they cannot be known before it runs
    (
        "git restore --pathspec-from-file=missing",
        [],
        ["git restore --pathspec-from-file=missing"],
        [("{w}/src", "git restore --pathspec-from-file=missing")],
    ),
    (
        "git restore --pathspec-from-file=sub",  # a directory
        [],
        ["git restore --pathspec-from-file=sub"],
        [("{w}/src", "git restore --pathspec-from-file=sub")],
    ),
    (
        "git restore --pathspec-from-file=badquote",
        [],
        ["git restore --pathspec-from-file=badquote"],
        [("{w}/src", "git restore --pathspec-from-file=badquote")],
    ),
    (
        "git ls-files -m > list; git restore --pathspec-from-file=list",  # written first
        ["{w}/src/list"],
        ["git restore --pathspec-from-file=list"],
        [("{w}/src", "git restore --pathspec-from-file=list")],
    ),
    (
        "git ls-files | git checkout --pathspec-from-file=-",
        [],
        ["git checkout --pathspec-from-file=-"],
        [("{w}/src", "git checkout --pathspec-from-file=-")],
    ),
    (
        'git stash push --pathspec-from-file="$F"',
        [],
        ["variable in target $F", "git stash --pathspec-from-file=$F"],
        [("{w}/src", "git stash --pathspec-from-file=$F")],
    ),
    # ====== read-tree: -u with -m or --reset rewrites the work tree (git 2.39: `-u --reset
    # HEAD` threw every change away; `-m -u` switched unchanged files); else the index only
    (
        "git read-tree -u --reset HEAD",
        [],
        ["git read-tree -u --reset"],
        [("{w}/src", "git read-tree -u --reset")],
    ),
    (
        "git read-tree --reset -u HEAD",
        [],
        ["git read-tree -u --reset"],
        [("{w}/src", "git read-tree -u --reset")],
    ),
    (
        "git read-tree -mu HEAD HEAD~1",
        [],
        ["git read-tree -u -m"],
        [("{w}/src", "git read-tree -u -m")],
    ),
    # -u alone fails; -n is a dry run; --prefix never overwrites a file (git: "would be
    # overwritten"); without -u only the index changes
    ("git read-tree -u HEAD; git read-tree -n -u --reset HEAD", [], [], []),
    ("git read-tree --dry-run -u --reset HEAD; git read-tree -u -m --prefix=p/ HEAD", [], [], []),
    (  # an option's value is no option
        "git read-tree -u --reset --exclude-per-directory -n --index-output -n HEAD",
        [],
        ["git read-tree -u --reset"],
        [("{w}/src", "git read-tree -u --reset")],
    ),
    (
        "git read-tree -u --prefix=p/ HEAD; git read-tree --reset HEAD; git read-tree -m HEAD",
        [],
        [],
        [],
    ),
    # ====== checkout-index: -f overwrites what it names (files relative to where git runs,
    # no pathspecs: `:/x` and `*` were "not in the cache"); without -f git 2.39 left every
    # existing file alone ("already exists, no checkout")
    (
        "git checkout-index -f a.py ../notes.txt",
        ["entry:{w}/src/a.py", "entry:{w}/notes.txt"],
        [],
        [],
    ),
    ("git checkout-index -f -- '*.py'", ["entry:{w}/src/*.py"], [], []),
    (
        "git checkout-index -fa",
        [],
        ["git checkout-index -f -a"],
        [("{w}/src", "git checkout-index -f -a")],
    ),
    (
        "git checkout-index --all --force",
        [],
        ["git checkout-index -f -a"],
        [("{w}/src", "git checkout-index -f -a")],
    ),
    (
        "git checkout-index -n -f -a",
        [],
        ["git checkout-index -f -a"],
        [("{w}/src", "git checkout-index -f -a")],
    ),
    ("git checkout-index -a; git checkout-index a.py; git checkout-index -f -a --temp", [], [], []),
    ("git checkout-index -f --stdin <<< a.py", ["entry:{w}/src/a.py"], [], []),
    (
        "printf 'a.py\\0b.py' | git checkout-index -f -z --stdin",
        [],
        ["git checkout-index -f --stdin"],
        [("{w}/src", "git checkout-index -f --stdin")],
    ),
    # --prefix: below it, from the top of the work tree (git 2.39 wrote out/src/a.py)
    ("git checkout-index -f -a --prefix=out/", ["{w}/out"], [], []),
    ("git checkout-index -f -a --prefix out/", ["{w}/out"], [], []),
    ("git checkout-index -f -a --prefix ~/out/", ["/home/me/out"], [], []),
    ('git checkout-index -f -a --prefix="$PWD/o-"', ["glob:{w}/src/o-*"], [], []),
    ("git checkout-index -f --stage 2 a.py", ["entry:{w}/src/a.py"], [], []),
    (
        'git checkout-index -f -a --prefix="$P"',
        [],
        ["git checkout-index --prefix=$P"],
        [("{w}/src", "git checkout-index --prefix=$P")],
    ),
    (  # below a top that cannot be known
        "git --git-dir=../.git checkout-index -f -a --prefix=out/",
        [],
        ["git checkout-index --prefix=out/"],
        [("{w}/src", "git checkout-index --prefix=out/")],
    ),
    (
        "git -C .. checkout-index -f a.py --stdin <<< b.py",
        ["entry:{w}/a.py", "entry:{w}/b.py"],
        [],
        [],
    ),
    ("git checkout-index -f --stdin <<< 'a b'", ["entry:{w}/src/a b"], [], []),
    # with -z the entries end at NULs: the here-string's newline is part of the name
    ("git checkout-index -f -z --stdin <<< 'a b'", ["entry:{w}/src/a b\n"], [], []),
    ("git checkout-index -f --prefix=/tmp/x- a.py", ["glob:/tmp/x-*"], [], []),
    # ====== merge-file: its first file, through a symlink (git 2.39), unless -p
    ("git merge-file a.py base.py other.py", ["{w}/src/a.py"], [], []),
    ("git merge-file -L x -L y -L z --marker-size 9 -q a.py b c", ["{w}/src/a.py"], [], []),
    ("git merge-file -p a.py b c; git merge-file --stdout a.py b c", [], [], []),
    ("git merge-file --object-id a b c", [], [], []),  # git 2.43: writes a blob
    ("git -C .. merge-file a.py b c", ["{w}/a.py"], [], []),
    # ====== worktree: remove --force and prune (judged by the gate); list/add/plain remove
    (
        "git worktree remove --force ../../feature",
        [],
        ["git worktree remove --force ../../feature"],
        [],
    ),
    ("git worktree prune", [], ["git worktree prune"], []),
    (
        "git worktree list; git worktree remove x; git worktree prune -n; git worktree prune --dry-run",
        [],
        [],
        [],
    ),
]


def _cases() -> list[tuple[str, list[str], list[str], list[Tree]]]:
    return CASES


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The work tree the table runs in, with the pathspec files it names."""
    top = tmp_path / "w"
    (top / ".git").mkdir(parents=True)
    (top / "src" / "sub").mkdir(parents=True)
    src = top / "src"
    (src / "list").write_text("a.py\n:/docs\n")
    (src / "quoted").write_text('"a.py"\n"\\303\\251.py"\n')
    (src / "nul").write_bytes(b"a.py\0:/docs\0")
    (src / "crlf").write_bytes(b"a.py\r\n")
    (src / "magic").write_text(":!a.py\n")
    (src / "badquote").write_text('"a.py\n')
    (src / "nulnl").write_bytes(b"x\ny\0")
    (src / "spaced").write_text("a b.py\n")
    (src / "sub" / "list").write_text("a.py\n")
    return top


def _show(command: str, cwd: str) -> tuple[list[str], list[str], list[Tree]]:
    res = analyze(command, cwd, HOME)
    assert res.gave_up is None, res.gave_up
    targets = [
        ("glob:" if t.glob else "entry:" if t.entry else "")
        + t.path
        + (" but " + " ".join(t.but) if t.but else "")
        for t in res.targets
    ]
    return targets, res.opaque, res.trees


def _fill(value: object, top: str) -> object:
    if isinstance(value, str):
        return value.replace("{w}", top)
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, top) for v in value)
    return value


@pytest.mark.parametrize(
    ("command", "targets", "opaque", "trees"), _cases(), ids=[c[0][:50] for c in CASES]
)
def test_case(
    work: Path, command: str, targets: list[str], opaque: list[str], trees: list[Tree]
) -> None:
    top = str(work)
    assert _show(command, f"{top}/src") == (_fill(targets, top), opaque, _fill(trees, top))


# ====== the same forms run by real git: every file it changed, created or removed lies
# in what the analysis says the command writes (a target, less what it leaves alone, or
# a work tree it rewrites as a whole). Every tracked file is changed before each run.

FILES = (
    "src/a.py",
    "src/sub/b.py",
    "src/sub/d.txt",
    "src/c.txt",
    "docs/x.md",
    "notes.txt",
    "Top.txt",
)

ORACLE: list[tuple[str, str]] = [  # (command, the directory it runs in below the top)
    ("git restore :/", "src"),
    ("git restore :", "src"),
    ("git restore ':(top)'", "src"),
    ("git restore ':!a.py'", "src"),
    ("git restore ':!a.py' ':!sub'", "src"),
    ("git checkout -- ':^sub'", "src"),
    ("git restore ':(exclude)sub'", "src"),
    ("git restore ':!/notes.txt'", "src"),
    ("git restore ':/!notes.txt'", "src"),
    ("git restore ':(exclude)*.py'", ""),
    ("git restore ':!sub/[ab].py'", "src"),
    ("git restore ':!*.md'", ""),
    ("git rm -q -rf ':!a.py'", "src"),
    ("git rm -q -rf ':/'", "src"),
    ("git stash push -q -- ':!a.py'", "src"),
    ("git stash push -q -- ':/docs'", "src"),
    ("git stash push -q -- '*.py'", ""),
    ("git checkout -q -- :/", ""),
    ("git checkout -q :/", ""),
    ("git checkout -q HEAD -- ':(top)'", "src"),
    ("git checkout -q HEAD -- ':!a.py'", "src"),
    ("git restore '*.py'", ""),
    ("git restore 'src/*.py'", ""),
    ("git restore 'src/*'", ""),
    ("git restore 's?c/a.py'", ""),
    ("git restore 'src/[ab].py'", ""),
    ("git restore ':(glob)**/*.py'", ""),
    ("git restore ':(glob)src/*'", ""),
    ("git restore ':(top,glob)src/**'", "src"),
    ("git restore ':(glob,icase)SRC/*.PY'", ""),
    ("git restore ':(icase)SRC'", ""),
    ("git restore ':(icase)top.TXT'", ""),
    ("git --icase-pathspecs restore SRC", ""),
    ("GIT_ICASE_PATHSPECS=1 git restore 'SRC'", ""),
    ("git restore ':(literal)src'", ""),
    ("git restore ':/src/sub'", "src"),
    ("git restore --pathspec-from-file=list", "src"),
    ("git restore --pathspec-from-file=../quoted", "src"),
    ("git restore --pathspec-from-file=../nul --pathspec-file-nul", "src"),
    ("git checkout -q HEAD --pathspec-from-file=list", "src"),
    ("git stash push -q --pathspec-from-file=list", "src"),
    ("git restore --pathspec-from-file=- <<'E'\nc.txt\n:/docs\nE", "src"),
    ("git restore --staged :/", "src"),
    ("git checkout-index -f -a", ""),
    ("git checkout-index -f a.py sub/b.py", "src"),
    ("git checkout-index -f --stdin <<< a.py", "src"),
    ("git checkout-index -a", ""),
    ("git checkout-index -n -f -a", ""),
    ("git checkout-index -f -a --prefix=out/", "src"),
    ("git read-tree -u --reset HEAD", ""),
    ("git read-tree HEAD", ""),
]


# ... of which these change no file: the index only, or nothing git would overwrite
CHANGE_NOTHING = ("git restore --staged :/", "git checkout-index -a", "git read-tree HEAD")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("template") / "r"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    for rel in FILES:
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("committed\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "first")
    return top


def _snapshot(top: Path) -> dict[str, bytes]:
    found = {}
    for directory, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(directory) / name
            found[str(path.relative_to(top))] = path.read_bytes()
    return found


def _covered(rel: str, top: str, res: object) -> bool:
    from agent_hooks.shell.words import BashAnalysis

    assert isinstance(res, BashAnalysis)
    if any(d is not None and (d == top or d.startswith(top + "/")) for d, _ in res.trees):
        return True  # a work tree rewritten as a whole: every file in it
    for t in res.targets:
        if not (t.path == top or t.path.startswith(top + "/")):
            continue
        mine = t.path[len(top) + 1 :]
        compiled = pattern.compile(mine) if t.glob else pattern.literal(mine)
        spared = [b[len(top) + 1 :] for b in t.but]
        if pattern.matches(compiled, rel) and not any(
            rel == s or rel.startswith(s + "/") for s in spared
        ):
            return True
    return False


@pytest.mark.parametrize(("command", "where"), ORACLE, ids=[c[0][:50] for c in ORACLE])
def test_what_real_git_changes_is_what_the_analysis_says_it_writes(
    template: Path, tmp_path: Path, command: str, where: str
) -> None:
    top = tmp_path / "r"
    shutil.copytree(template, top, symlinks=True)
    (top / "src" / "list").write_text("a.py\n:/docs\n")
    (top / "quoted").write_text('"a.py"\n"sub/\\142.py"\n')
    (top / "nul").write_bytes(b"a.py\0:/docs\0")
    for rel in FILES:
        (top / rel).write_text("changed\n")
    before = _snapshot(top)
    env = {
        "PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
    }  # fmt: skip
    cwd = top / where if where else top
    subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, check=False)
    after = _snapshot(top)
    changed = sorted(
        rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)
    )
    res = analyze(command, str(cwd), HOME)
    assert res.gave_up is None
    assert bool(changed) != (command in CHANGE_NOTHING), changed  # git ran as measured
    missed = [rel for rel in changed if not _covered(rel, str(top), res)]
    assert missed == [], (changed, res)


# ====== submodules: `.gitmodules` names them (git 2.39: `update --force` threw lib/sub's
# change away; `update` alone and `deinit` without -f refused; `foreach` ran its command
# in lib/sub)


@pytest.fixture
def superproject(tmp_path: Path) -> Path:
    top = tmp_path / "sup"
    (top / ".git").mkdir(parents=True)
    (top / "lib" / "sub").mkdir(parents=True)
    (top / "lib" / "sub" / ".git").write_text("gitdir: ../../.git/modules/lib/sub\n")
    (top / "lib" / "sub" / "inner").mkdir()
    (top / "lib" / "sub" / ".gitmodules").write_text('[submodule "in"]\n\tpath = inner\n')
    (top / ".gitmodules").write_text(
        '[submodule "lib/sub"]\n\tpath = lib/sub\n\turl = ../lib\n'
        '[submodule "q"]\n\tpath = "quoted dir"\n[submodule "again"]\n  path=lib/sub\n'
    )
    return top


SUBMODULE_CASES: list[tuple[str, list[str], list[str], list[Tree]]] = [
    ("git submodule update --force", ["{w}/lib/sub", "{w}/quoted dir"], [], []),
    ("git submodule update --init -f -j 2 --depth 1", ["{w}/lib/sub", "{w}/quoted dir"], [], []),
    ("git submodule update --force -- lib/sub", ["entry:{w}/lib/sub"], [], []),
    ("git submodule -q update --force ':(top)lib'", ["entry:{w}/lib"], [], []),
    ("git submodule deinit -f --all", ["{w}/lib/sub", "{w}/quoted dir"], [], []),
    ("git submodule deinit --force lib", ["entry:{w}/lib"], [], []),
    # git refuses to throw local changes away without --force; -f alone is a usage error
    ("git submodule update; git submodule deinit --all; git submodule deinit -f", [], [], []),
    ("git submodule status; git submodule sync; git submodule", [], [], []),
    ("git submodule foreach 'echo x > y.py'", ["{w}/lib/sub/y.py", "{w}/quoted dir/y.py"], [], []),
    (
        "git submodule foreach rm 'a b'",
        ["entry:{w}/lib/sub/a b", "entry:{w}/quoted dir/a b"],
        [],
        [],
    ),
    (
        "git submodule foreach --recursive git reset --hard",
        [],
        ["git reset --hard"],
        [
            ("{w}/lib/sub", "git reset --hard"),
            ("{w}/quoted dir", "git reset --hard"),
            ("{w}/lib/sub/inner", "git reset --hard"),
        ],
    ),
    (
        "git submodule foreach git reset --hard",
        [],
        ["git reset --hard"],
        [("{w}/lib/sub", "git reset --hard"), ("{w}/quoted dir", "git reset --hard")],
    ),
    # what the shell fills in for each submodule is unknown, as anywhere
    ("git submodule foreach 'touch $name'", [], ["variable in target $name"], []),
    ("git submodule foreach", [], [], []),
    ("git --icase-pathspecs submodule update --force :/LIB", ["glob:{w}/[lL][iI][bB]"], [], []),
    ("git submodule --cached -q update --force", ["{w}/lib/sub", "{w}/quoted dir"], [], []),
    ("git submodule --quiet update --force", ["{w}/lib/sub", "{w}/quoted dir"], [], []),
    (  # the options' values are no pathspecs
        "git submodule update --force --reference ../r -j 2 --jobs 2 --filter blob:none "
        "--depth 1 :/lib/sub",
        ["entry:{w}/lib/sub"],
        [],
        [],
    ),
    ("git submodule update --force ':!/lib/sub'", ["{w} but {w}/lib/sub"], [], []),
    (
        "git submodule update --force ':(bogus)x'",
        [],
        ["git submodule update --force :(bogus)x"],
        [("{w}", "git submodule update --force :(bogus)x")],
    ),
    (
        "git --git-dir=.git submodule update --force",  # its work tree is not known
        [],
        ["git submodule update --force"],
        [("{w}", "git submodule update --force")],
    ),
    (
        "git submodule foreach --recursive -q --quiet 'touch n'",
        ["{w}/lib/sub/n", "{w}/quoted dir/n", "{w}/lib/sub/inner/n"],
        [],
        [],
    ),
    # a word the shell fills in stays unknown in each submodule
    ('git submodule foreach touch "$name"', [], ["variable in target $name"], []),
    ('git submodule foreach "$X" a', [], ["command $X"], []),
    ('git submodule foreach "$CMD"', [], ["git submodule foreach $CMD", "command $CMD"], []),
    (
        'git submodule foreach touch "a\'b"',
        ["{w}/lib/sub/a'b", "{w}/quoted dir/a'b"],
        [],
        [],
    ),
    (
        "git --git-dir=.git submodule foreach 'echo > f'",  # which work tree: not known
        [],
        ["git submodule foreach"],
        [("{w}", "git submodule foreach")],
    ),
]


@pytest.mark.parametrize(
    ("command", "targets", "opaque", "trees"),
    SUBMODULE_CASES,
    ids=[c[0][:50] for c in SUBMODULE_CASES],
)
def test_submodule_case(
    superproject: Path, command: str, targets: list[str], opaque: list[str], trees: list[Tree]
) -> None:
    top = str(superproject)
    got = _show(command, top)
    assert got == (_fill(targets, top), opaque, _fill(trees, top))
    if " lib" not in command and not trees:  # nothing relative to where git runs: the same
        assert _show(command, top + "/lib") == got


def test_submodules_that_cannot_be_read_leave_the_work_tree_at_stake(superproject: Path) -> None:
    (superproject / ".gitmodules").unlink()
    (superproject / ".gitmodules").mkdir()
    top = str(superproject)
    for command, what in [
        ("git submodule update --force", "git submodule update --force"),
        ("git submodule deinit -f --all", "git submodule deinit --force"),
        ("git submodule foreach 'echo > f'", "git submodule foreach"),
    ]:
        assert _show(command, top) == ([], [what], [(top, what)])


def test_a_work_tree_without_submodules_has_none(work: Path) -> None:
    assert _show("git submodule update --force; git submodule foreach rm x", str(work)) == (
        [],
        [],
        [],
    )
    assert git_paths.submodules(str(work)) == []


def test_foreach_is_read_in_at_most_64_submodules(superproject: Path) -> None:
    listed = "".join(f'[submodule "m{i}"]\n\tpath = m{i}\n' for i in range(65))
    (superproject / ".gitmodules").write_text(listed)
    top = str(superproject)
    assert _show("git submodule foreach 'echo > f'", top) == (
        [],
        ["git submodule foreach"],
        [(top, "git submodule foreach")],
    )
    (superproject / ".gitmodules").write_text(listed.rpartition("[submodule")[0])
    assert len(_show("git submodule foreach 'echo > f'", top)[0]) == 64


def test_foreach_recursive_follows_submodules_four_deep(tmp_path: Path) -> None:
    here = tmp_path / "top"
    (here / ".git").mkdir(parents=True)
    chain = []
    for level in range(5):
        (here / ".gitmodules").write_text(f"[submodule]\n\tpath = s{level}\n")
        here = here / f"s{level}"
        (here / ".git").mkdir(parents=True)
        chain.append(str(here))
    res = analyze("git submodule foreach --recursive 'echo > f'", str(tmp_path / "top"), HOME)
    assert [t.path for t in res.targets] == [f"{d}/f" for d in chain[:4]]


# ====== git's own files, read without blocking and within bounds


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert git_paths.read_small(str(fifo)) is None  # and it did not block


def test_a_file_of_any_mode_and_bytes_is_read(tmp_path: Path) -> None:
    listed = tmp_path / "listed"
    listed.write_bytes(b"caf\xe9.py\n")  # Latin-1, no UTF-8
    listed.chmod(0o755)
    assert git_paths.read_small(str(listed)) == "caf\udce9.py\n"


def test_a_file_past_the_bound_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"a\n" * (git_paths.MAX_FILE // 2))
    assert git_paths.read_small(str(big)) == "a\n" * (git_paths.MAX_FILE // 2)
    big.write_bytes(b"a\n" * (git_paths.MAX_FILE // 2) + b"b")
    assert git_paths.read_small(str(big)) is None
    assert git_paths.read_small(str(tmp_path / "missing")) is None


def test_a_pathspec_file_of_more_than_256_entries_is_not_taken(work: Path) -> None:
    src = work / "src"
    (src / "many").write_text("".join(f"f{i}\n" for i in range(256)))
    assert len(_show("git restore --pathspec-from-file=many", str(src))[0]) == 256
    (src / "many").write_text("".join(f"f{i}\n" for i in range(257)))
    assert _show("git restore --pathspec-from-file=many", str(src))[2] == [
        (str(src), "git restore --pathspec-from-file=many")
    ]


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ('"a.py"', "a.py"),
        ('"sub/\\303\\251.py"', "sub/é.py"),
        ('"\\a\\b\\f\\n\\r\\t\\v\\\\\\""', '\a\b\f\n\r\t\v\\"'),
        ('"a"b', None),  # something after the closing quote
        ('"a', None),  # no closing quote
        ('"a\\', None),
        ('"a\\x41"', None),  # no such escape
        ('"\\48"', None),  # not octal
        ('"\\400"', None),  # past a byte
        ('"\\1"', None),  # cut short
        ('"a\\040b"', "a b"),  # octal, from 0
        ('"\\177"', "\x7f"),  # ... to 7
        ('"\\018"', None),  # 8 is no octal digit
        ('"\\1x7"', None),  # ... nor x, in the middle
        ('"\\377.py"', "\udcff.py"),  # a byte that is no UTF-8, kept as git has it
        ('"\udcff.py"', "\udcff.py"),  # ... and one read from the file so
    ],
)
def test_a_quoted_line_is_unquoted_as_git_does(line: str, text: str | None) -> None:
    assert git_paths.c_unquote(line) == text


@pytest.mark.parametrize("name", ["w ", "wX"])
def test_a_directory_whose_name_ends_in_a_blank_is_read_as_named(tmp_path: Path, name: str) -> None:
    top = tmp_path / name
    (top / ".git").mkdir(parents=True)
    (top / ".gitmodules").write_text(
        '[submodule]\n\tpath = m\n\tpath = a=b\n\tpath = "\n\tpath = ""\n\tpath = m\n'
    )
    assert git_paths.work_tree_top(f"{top}") == f"{top}"
    # after the first `=`, quotes around it dropped, none empty, none twice
    assert git_paths.submodules(f"{top}") == ["m", "a=b", '"']


def test_the_top_is_the_nearest_directory_holding_git(tmp_path: Path) -> None:
    (tmp_path / "a" / ".git").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / ".git").write_text("gitdir: x\n")  # a file counts too
    assert git_paths.work_tree_top(f"{tmp_path}/a/b/c") == f"{tmp_path}/a/b"
    assert git_paths.work_tree_top(f"{tmp_path}/a") == f"{tmp_path}/a"
    (tmp_path / "a" / ".git").rmdir()
    assert git_paths.work_tree_top(f"{tmp_path}/a") != f"{tmp_path}/a"


def test_a_pathspec_path_is_taken_up_to_path_max(work: Path) -> None:
    src = str(work / "src")
    name = "n" * (4096 - len(src) - 1)
    assert _show(f"git restore ':{name}' '*.py'", src)[0] == [
        f"entry:{src}/{name}",
        f"glob:{src}/**/*.py",
    ]
    res = analyze(f"git restore ':{name}x' '*.py'", src, HOME)
    assert (res.gave_up, [t.path for t in res.targets]) == ("path too long", [f"{src}/**/*.py"])


@pytest.mark.parametrize(
    ("command", "worktrees"),
    [
        (
            "git worktree remove --force ../../feature",
            [
                (
                    "remove",
                    "{w}/src",
                    "git worktree remove --force ../../feature",
                    "../../feature",
                    "{up}/feature",
                )
            ],
        ),
        (
            "git -C .. worktree remove -f -f x",
            [("remove", "{w}", "git worktree remove --force x", "x", "{w}/x")],
        ),
        (
            'git worktree remove --force "$T"',
            [("remove", "{w}/src", "git worktree remove --force $T", None, None)],
        ),
        (
            "git worktree prune; git worktree prune -v",
            [("prune", "{w}/src", "git worktree prune", None, None)],
        ),
        (
            "git worktree prune --expire -n",
            [("prune", "{w}/src", "git worktree prune", None, None)],
        ),
        ("git worktree remove --force; git worktree remove x; git worktree prune -n", []),
    ],
)
def test_a_linked_work_tree_deleted_or_its_record_dropped_is_for_the_gate(
    work: Path, command: str, worktrees: list[tuple[str | None, ...]]
) -> None:
    """Which tree, as named and as a path from where git runs (the gate finds it:
    test_shell_gate_git.py); without --force, and `prune -n`, nothing."""
    res = analyze(command, f"{work}/src", HOME)
    assert res.gave_up is None
    top, up = str(work), str(work.parent)

    def filled(v: str | None) -> str | None:
        return v.replace("{w}", top).replace("{up}", up) if v is not None else None

    assert res.worktrees == [tuple(map(filled, item)) for item in worktrees]


@pytest.mark.parametrize(
    ("command", "by_git"),
    [
        ("git restore a.py", True),
        ("git rm -r ':!x'", True),
        ("git mv a.py b.py", False),  # git mv moves the entries named: no pathspec
        ("git checkout-index -f a.py", True),
        ("git checkout-index -f --stdin <<< a.py", True),
        ("git checkout-index -f -a --prefix=out/", True),
        ("git checkout-index -f -a --prefix=out-", True),
        ("git submodule update --force", True),
        ("git submodule update --force lib/sub", True),
        ("git merge-file a.py b c", False),  # a file git writes through, like a redirection
        ("git worktree add ../wt; git ls-files > list", False),
        ("git submodule foreach 'echo > f'", False),
    ],
)
def test_what_git_writes_as_a_path_of_its_work_tree_is_told_apart(
    superproject: Path, command: str, by_git: bool
) -> None:
    """`BashTarget.by_git`: git never writes inside a `.git` directory (the gate's
    ledger check)."""
    res = analyze(command, str(superproject), HOME)
    assert res.targets and {t.by_git for t in res.targets} == {by_git}


def test_stdin_of_more_than_256_paths_is_the_whole_tree(work: Path) -> None:
    src = str(work / "src")
    for n, tree in ((256, []), (257, [(src, "git checkout-index -f --stdin")])):
        body = "".join(f"f{i}\n" for i in range(n - 1)) + f"f{n - 1}"
        res = analyze(f"git checkout-index -f --stdin <<'E'\n{body}\nE", src, HOME)
        assert (len(res.targets), res.trees) == (min(n, 256), tree)


@pytest.mark.parametrize(
    ("command", "loaded"),
    [
        ("git restore a.py; git rm -r src; git checkout -- .; git stash push -- x", False),
        ('git mv "*.o" d', False),
        ('git restore "$F"', True),
        ("git restore :/", True),
        ("git restore '*.py'", True),
        ("git restore 'a\\b'", True),
        ("git restore --pathspec-from-file=l", True),
        ("git --icase-pathspecs restore a.py", True),
        ("git read-tree HEAD", True),
    ],
)
def test_git_paths_is_loaded_only_for_what_needs_it(command: str, loaded: bool) -> None:
    """The hot path: a pathspec git takes as the path it spells is read without it."""
    code = (
        "import sys; from agent_hooks.shell.writes import analyze; "
        f"analyze({command!r}, '/repo', '/home/me'); "
        "print('agent_hooks.shell.git_paths' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == str(loaded)
