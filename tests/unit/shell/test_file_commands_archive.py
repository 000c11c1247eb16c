"""What the archive commands (`_archive` in agent_hooks/shell/file_commands.py) write: cases
that pin each rule of its option parsing (mutation testing, docs/mutation-testing.md)."""

from __future__ import annotations

import pytest

from agent_hooks.shell.words import norm
from agent_hooks.shell.writes import BashTarget, analyze

HOME = "/home/me"

CASES: list[tuple[str, list[str], list[str]]] = [
    # --- unzip: listing (-l), testing (-t), verbose listing (-v), zipinfo (-Z) and piping
    # (-p) extract no file, each alone
    ("unzip -l z.zip", [], []),
    ("unzip -t z.zip", [], []),
    ("unzip -v z.zip", [], []),
    ("unzip -Z z.zip", [], []),
    ("unzip -p z.zip src/a > a.txt", ["/repo/a.txt"], []),
    # -X (restore UID/GID) takes no value: the -d after it is still seen
    ("unzip -X -d dst z.zip", ["/repo/dst"], []),
    # --- tar, old-style bundle as the first word
    ("gunzip -c a.tgz | tar x", [], ["tar -x"]),  # no other word: the archive is stdin
    ('tar xf "$A"', [], ["tar -x"]),  # an unknown archive name after the bundle
    ("tar xfv a.tar -C out", ["/repo/out"], []),  # the bundle's letters after `f`
    # --- tar, long options taking their value from the next word
    ("tar --create --file out.tar src", ["/repo/out.tar"], []),
    ("tar --extract --file a.tar --directory out", ["/repo/out"], []),
    ("tar --get -f a.tar -C out", ["/repo/out"], []),  # --get is --extract
    # a value that begins with a dash is still the value (here a file named `-files.txt`)
    ("tar -cf out.tar --files-from -files.txt", ["/repo/out.tar"], []),
    ("tar -cf out.tar --exclude-from -fx.txt src", ["/repo/out.tar"], []),
    ("tar -cf out.tar --exclude -foo src", ["/repo/out.tar"], []),
    # --- tar, what writes the archive: `-f -` is stdout, no file
    ("tar -czf - src > out.tgz", ["/repo/out.tgz"], []),
    ("tar -rf a.tar new; tar --append -f b.tar new", ["/repo/a.tar", "/repo/b.tar"], []),
    ("tar -uf a.tar src; tar --update -f b.tar src", ["/repo/a.tar", "/repo/b.tar"], []),
    ("tar --delete -f a.tar src/x; tar -Af b.tar more.tar", ["/repo/a.tar", "/repo/b.tar"], []),
    # --- tar's old style: each letter taking a value takes the next word, in order (GNU tar)
    ("tar cfv out.tar src", ["/repo/out.tar"], []),
    ("tar cfb out.tar 20 src", ["/repo/out.tar"], []),
    ("tar xCf out a.tar; tar xfC b.tar out2", ["/repo/out", "/repo/out2"], []),
    # --- the long forms of -A append too
    (
        "tar --concatenate -f a.tar b.tar; tar --catenate -f c.tar d.tar",
        ["/repo/a.tar", "/repo/c.tar"],
        [],
    ),
    # --- each -C is taken from the one before it
    ("tar -xf a.tar -C o -C p", ["/repo/o/p"], []),
    ("tar -xf a.tar -C /abs -C p; tar -x -C o -f b.tar -C ../q", ["/abs/p", "/repo/q"], []),
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
