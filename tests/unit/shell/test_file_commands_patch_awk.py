"""What `patch` and `awk` (`_patch`, `_awk` in agent_hooks/shell/file_commands.py) write:
cases that pin each rule of their option parsing (mutation testing, docs/mutation-testing.md)."""

from __future__ import annotations

import pytest

from agent_hooks.shell.words import norm
from agent_hooks.shell.writes import BashTarget, analyze

HOME = "/home/me"

CASES: list[tuple[str, list[str], list[str]]] = [
    # --- patch: long options taking the next word as their value; a value taken for
    # an operand would be named as patch's FILE. Without FILE or -o: all of /repo
    ("patch --directory sub -p1 < fix.diff", ["/repo/sub"], []),
    ("patch --strip 1 --input fix.diff --fuzz 3 --ifdef DEBUG", ["/repo"], []),
    (
        "patch --prefix old/ --suffix .bak --basename-prefix bak. --version-control simple"
        " --get 0 -p1 < fix.diff",
        ["/repo"],
        [],
    ),
    ("patch --quoting-style literal --reject-format unified -p1 < fix.diff", ["/repo"], []),
    ("patch -F 3 -p1 < fix.diff", ["/repo"], []),  # -F takes a value (a capital letter)
    # --output/--reject-file as words of their own; with --output the files the patch
    # names are left alone
    ("patch --output out.c --reject-file out.rej < fix.diff", ["/repo/out.c", "/repo/out.rej"], []),
    ("patch -o - -r - < fix.diff", [], []),  # output to stdout, rejects discarded
    # -d changes directory before anything is opened: -o/-r are relative to it
    (
        "patch -d sub -o out.c -r out.rej < fix.diff",
        ["/repo/sub/out.c", "/repo/sub/out.rej"],
        [],
    ),
    ("patch -d ~/proj -p1 < fix.diff", ["/home/me/proj"], []),
    ('patch -d "$PWD/sub" -p1 < fix.diff', ["/repo/sub"], []),
    # writing nothing: help, version; -C/--check are BSD patch's dry run (GNU patch
    # refuses them)
    ("patch --help; patch --version; patch -v", [], []),
    ("patch -C -p1 < fix.diff; patch --check -p1 < fix.diff", [], []),
    # --- awk: option values are not the program text
    ("awk -F , -v n=1 '{print > \"out\"}' f", [], ["awk program may write"]),
    ("awk --field-separator , --assign n=1 '{print > \"out\"}' f", [], ["awk program may write"]),
    ("awk -F inplace '{print}' f", [], []),  # a field separator, not the inplace library
    # the program given by -e/--source: every operand is a file
    ("gawk -e '{print > \"out\"}' f", [], ["gawk program may write"]),
    ("gawk --source '{print > \"out\"}' f", [], ["gawk program may write"]),
    ("gawk -i inplace -e '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace --source '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    # ... or read from a file (-f/--file, -E/--exec): unseen, or edited files in place
    ("awk -f prog.awk data", [], ["awk -f"]),
    ("gawk -i inplace --file prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace --exec prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace -E prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    # the inplace library by either name and option; another library edits nothing
    ("gawk --load ordchr --include inplace '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace.awk '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i ord '{print ord($1)}' f", [], []),  # gawk's own ord.awk: functions only
    # each sign of a write in the program text, alone
    ("awk '{system(\"gzip \" $1)}' list", [], ["awk program may write"]),
    ("awk '{print >\"out\"}' f", [], ["awk program may write"]),
    ("awk '{print |\"sort\"}' f", [], ["awk program may write"]),
    ("awk '{print | \"sort\"}' f", [], ["awk program may write"]),
    ("awk '{print}' 'system(1).log'", [], []),  # only the first operand is the program
    # options end at the first operand, as in every awk: what follows is files
    ("awk '{print > \"o1\"}' af -e 1", [], ["awk program may write"]),
    ("gawk '{print}' f -i inplace", [], []),  # -i and inplace are files to read here
]


def _show(command: str) -> tuple[list[str], list[str]]:
    res = analyze(command, "/repo", HOME)
    for t in res.targets:
        assert isinstance(t, BashTarget) and t.path.startswith("/") and norm(t.path) == t.path
    return [("glob:" if t.glob else "entry:" if t.entry else "") + t.path for t in res.targets], (
        res.opaque
    )


@pytest.mark.parametrize(("command", "targets", "opaque"), CASES, ids=[c[0][:40] for c in CASES])
def test_case(command: str, targets: list[str], opaque: list[str]) -> None:
    assert _show(command) == (targets, opaque)
