"""Tests for agent_hooks.reservations.pattern, cross-checked against pathspec (normalize: test_pattern_input.py).

The oracle is ``PathSpec.from_lines(GitIgnoreSpecPattern, ["/" + pattern])``: pathspec 1.x
registers that class only under the deprecated name "gitwildmatch" (which warns), so the class
is passed directly. One known, deliberate difference: pathspec's bracket classes can match "/"
(``b[!a]b`` matches ``b/b``); ours never do (git's FNM_PATHNAME). Where generated patterns use
``[!a]`` against paths over the alphabet {a, b}, the oracle gets the equivalent ``[b]``.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import PathSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from agent_hooks.reservations import blocking
from agent_hooks.reservations.pattern import (
    PatternError,
    compile,
    first_literal,
    literal,
    matches,
)
from agent_hooks.reservations.pattern_input import normalize
from agent_hooks.reservations.pattern_overlap import overlap, overlap_witness
from hook_runner import ROOT

SRC = ROOT / "src"


@functools.lru_cache(maxsize=4096)
def pathspec_for(pattern: str) -> PathSpec[GitIgnoreSpecPattern]:
    return PathSpec.from_lines(GitIgnoreSpecPattern, ["/" + pattern])


def pathspec_matches(pattern: str, path: str) -> bool:
    return pathspec_for(pattern).match_file(path)


MATCH_CASES = [
    # (pattern, path, expected)
    ("src", "src", True),
    ("src", "src/a/b.py", True),
    ("src", "srcx", False),
    ("src", "lib/src", False),
    ("src/", "src", False),
    ("src/", "src/a", True),
    ("src/**", "src", False),
    ("src/**", "src/a/b", True),
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),
    ("*.py", "a.py/b", True),
    ("**/*.py", "a.py", True),
    ("**/*.py", "src/deep/a.py", True),
    ("**/*.py", "src/a.pyc", False),
    ("**", "anything/at/all", True),
    ("**/", "top", False),
    ("**/", "top/file", True),
    ("*", "x", True),
    ("*/", "x", False),
    ("*/", "x/y", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/x/yb", False),
    ("a/**/b", "b", False),
    ("**/a/", "x/a", False),
    ("**/a/", "x/a/y", True),
    ("a/*", "a/b/c", True),
    ("a/*", "a", False),
    ("a/*/c", "a/b/c", True),
    ("a/*/c", "a/c", False),
    ("a**b", "axyb", True),
    ("a**b", "ax/yb", False),
    ("a?c", "abc", True),
    ("a?c", "ac", False),
    ("[ab]x", "bx", True),
    ("[a-c]x", "cx", True),
    ("[a-c]x", "dx", False),
    ("[!a]x", "bx", True),
    ("[!a]x", "ax", False),
    ("[^a]x", "ax", False),
    ("[]]", "]", True),
    ("[!]]x", "]x", False),
    ("[a-]", "-", True),
    ("src/a*", "src/abc", True),
    ("src/*b", "src/ab", True),
    ("src/*b", "src/ba", False),
    ("*a*b*", "xaybz", True),
    ("*a*b*", "xbya", False),
    (".*", ".env", True),
    ("*.tar.gz", "x.tar.gz", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), MATCH_CASES)
def test_matches_table(pattern: str, path: str, expected: bool) -> None:
    assert pathspec_matches(pattern, path) is expected
    assert matches(compile(pattern), path) is expected


def test_oracle_is_the_class_behind_gitwildmatch() -> None:
    with pytest.warns(DeprecationWarning):
        legacy = PathSpec.from_lines("gitwildmatch", ["/a/*"])
    assert legacy.match_file("a/b/c") and pathspec_matches("a/*", "a/b/c")
    assert matches(compile("a/*"), "a/b/c")
    # the name the deprecation message suggests does not cover a matched directory's contents
    assert not PathSpec.from_lines("gitignore", ["/a/*"]).match_file("a/b/c")


def test_classes_never_match_slash_unlike_pathspec() -> None:
    assert pathspec_matches("b[!a]b", "b/b")  # pathspec quirk: [^a] also matches "/"
    assert not matches(compile("b[!a]b"), "b/b")
    assert not matches(compile("a[.-0]b"), "a/b")


OVERLAP_CASES = [
    # (a, b, expected)
    ("src/a*", "src/*b", True),
    ("src/foo/*.rs", "src/*/bar.rs", True),
    ("app/**", "app/models/user.py", True),
    ("app/models/user.py", "app/**", True),
    ("app/", "app/models/user.py", True),
    ("src/main", "src/main.rs", False),
    ("*.py", "src/x.py", False),
    ("*.py", "a.py/b", True),
    ("**", "deep/x/y.rs", True),
    ("**", "*.md", True),
    ("src/", "src", True),
    ("[ab]x", "[!a]x", True),
    ("[a]x", "[!a]x", False),
    ("**/*.py", "src/**", True),
    ("**/*.py", "*.rs", True),  # a directory named x.rs holding y.py
    ("**/test_*.py", "src/*.py", True),
    ("docs/*.md", "src/*.md", False),
    ("a/**/b", "a/c", True),
    ("a/**/b/", "a/**/c/", True),
    ("*a", "*b", False),  # one root-level name cannot end in both
    ("*a/", "*a*", True),
    ("a?", "?b", True),
    ("a?", "abc", False),
    ("[a-c]*", "[d-f]*", False),
    ("[!a-c]*", "[a-c]*", False),
    (".*", "*", True),
    ("x/**/y", "x/**/z", True),
    ("x/*/y", "x/*/z", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), OVERLAP_CASES)
def test_overlap_table(a: str, b: str, expected: bool) -> None:
    ca, cb = compile(a), compile(b)
    assert overlap(ca, cb) is expected
    assert overlap(cb, ca) is expected
    witness = overlap_witness(ca, cb)
    assert (witness is not None) is expected
    if witness is not None:
        assert pathspec_matches(a, witness), witness
        assert pathspec_matches(b, witness), witness
        assert matches(ca, witness) and matches(cb, witness)


def test_overlap_witness_is_readable() -> None:
    assert overlap_witness(compile("src/a*"), compile("src/*b")) == "src/ab"
    assert overlap_witness(compile("src/"), compile("src")) == "src/x"
    assert overlap_witness(compile(".*"), compile("*")) == ".x"  # never "." or ".."
    assert overlap_witness(compile("src/*"), compile("src/*")) == "src/x"  # never ""
    assert overlap_witness(compile("src/"), compile("src/a")) == "src/a"  # no deeper than needed
    assert overlap_witness(compile("**"), compile("**")) == "x"


@pytest.mark.parametrize(
    ("a", "b", "witness"),
    [
        ("src/*.", "src/a*", "src/a."),  # a name may end in a dot
        ("src/.?.", "src/..?", "src/..."),  # three dots are a name
        ("src/x*", "src/*.", "src/x."),
        ("src/..*", "src/*..", "src/..."),  # ".." first found, then three dots: shortest
        ("src/.?", "src/?.", None),  # their only common name would be ".."
        ("src/?", "src/.*", None),  # ... or "."
    ],
)
def test_names_of_dots_follow_the_dot_rule(a: str, b: str, witness: str | None) -> None:
    """The empty name, "." and ".." are no names (a path never has such a segment); every other
    string of dots is, and a name may end in a dot: the search counts the dots read."""
    assert overlap_witness(compile(a), compile(b)) == witness
    assert overlap(compile(a), compile(b)) is (witness is not None)


def test_a_witness_reads_x_for_each_wildcard() -> None:
    assert overlap_witness(compile("src/*.py"), compile("src/**")) == "src/x.py"
    assert overlap_witness(compile("src/?"), compile("src/**")) == "src/x"


@pytest.mark.parametrize(
    ("cls", "picked"),
    [
        ("[_-x]", "x"),  # the pleasant ones first: x, a, 0, _
        ("[a-c]", "a"),
        ("[0-5]", "0"),
        ("[_-`]", "_"),
        ("[b-d]", "b"),  # else the first printable character of the first range
        ("[,-.]", ","),  # never "." while another is there
        ("[.c]", "c"),  # ... even in a later range
        ("[ -#]", "!"),  # printable: not the space
        ("[\x01-\x05]", "\x01"),  # nothing printable: the first there is
    ],
)
def test_a_witness_picks_a_pleasant_character_of_each_class(cls: str, picked: str) -> None:
    """The character a witness shows for a class is in the class (so both patterns match
    the witness), the most readable one there."""
    a, b = compile(f"src/{cls}"), compile("src/*")
    witness = overlap_witness(a, b)
    assert witness == f"src/{picked}"
    assert matches(a, witness) and matches(b, witness)


def test_compiled_encoding() -> None:
    assert compile("src/**/*.py") == ["", "src", 0, [1, ".py"]]
    assert compile("app/") == ["/", "app"]
    assert compile("app/**") == ["/", "app"]
    assert compile("**") == ["", 0]
    assert compile("**/") == ["/", 0]
    assert compile("a/**/**/b") == ["", "a", 0, "b"]
    assert compile("a?[b-d][!x]***z") == [
        "",
        ["a", 2, [98, 100], [0, 46, 48, 119, 121, 0x10FFFF], 1, "z"],
    ]
    assert compile("[*]x") == ["", "*x"]  # a one-character class is literal text
    compiled = compile("src/[!a]*/x?/")
    assert json.loads(json.dumps(compiled)) == compiled
    assert matches(json.loads(json.dumps(compiled)), "src/b/xy/z")


@pytest.mark.parametrize("bad", ["", "/a", "a//b", "./a", "a/../b", "[ab", "[.]", "x/[.][.]"])
def test_compile_rejects_unnormalized(bad: str) -> None:
    with pytest.raises(PatternError):
        compile(bad)


def test_literal_and_first_literal() -> None:
    lit = literal("src/*.py")
    assert lit == ["", "src", "*.py"]
    assert matches(lit, "src/*.py") and matches(lit, "src/*.py/x")
    assert not matches(lit, "src/a.py")
    assert overlap(lit, compile("src/*.py"))
    assert not overlap(lit, compile("src/a.py"))
    assert literal("") == literal(".") == ["", 0]
    assert first_literal(compile("src/**")) == "src"
    assert first_literal(compile("*.py")) is None
    assert first_literal(compile("**/x")) is None
    with pytest.raises(PatternError):
        literal("a/../b")


ROOT = "/proj"


# --- properties over a small alphabet ---------------------------------------------------

TOKENS = ["a", "b", "*", "?", "[ab]", "[!a]"]
SEGMENTS = ["**", "a", "b", "ab", "ba"] + [
    "".join(t) for n in (1, 2, 3) for t in itertools.product(TOKENS, repeat=n)
]  # one draw per segment keeps hypothesis's own overhead low
PATTERNS = st.builds(
    lambda segs, slash: "/".join(segs) + ("/" if slash else ""),
    st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4),
    st.booleans(),
)
NAMES = ["a", "b", "ab", "ba", "bb", "aab"]
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=5).map("/".join)
UNIVERSE = [  # ~200 paths: short ones over many names, deep ones over few
    "/".join(t)
    for names, depths in (([*NAMES, "aa", "abb", "bab"], (1, 2)), (NAMES[:4], (3,)), ("ab", (4, 5)))
    for n in depths
    for t in itertools.product(names, repeat=n)
]
PROPS = settings(max_examples=500, deadline=None)


def oracle(pattern: str, path: str) -> bool:
    """pathspec, with [!a] spelled [b]: the same set over {a, b}, and unable to match '/'."""
    return pathspec_matches(pattern.replace("[!a]", "[b]"), path)


@PROPS
@given(PATTERNS, PATHS)
def test_prop_matches_agrees_with_pathspec(pattern: str, path: str) -> None:
    compiled = compile(pattern)
    assert normalize(pattern, ROOT) == normalize(normalize(pattern, ROOT), ROOT)
    assert compile(normalize(pattern, ROOT)) == compiled
    for p in [path, *UNIVERSE]:
        assert matches(compiled, p) == oracle(pattern, p), (pattern, p)


@PROPS
@given(PATTERNS, PATHS)
def test_prop_the_second_segment_shortcut_never_rules_out_a_match(pattern: str, path: str) -> None:
    """blocking.may_match rules a reservation out before `pattern` is loaded: never
    one that matches."""
    compiled = compile(pattern)
    for p in [path, *UNIVERSE]:
        if matches(compiled, p):
            second = p.split("/")[1] if "/" in p else None
            assert blocking.may_match(compiled, second), (pattern, p)


@PROPS
@given(PATTERNS, PATTERNS, PATHS)
def test_prop_common_path_implies_overlap(a: str, b: str, path: str) -> None:
    common = [p for p in [path, *UNIVERSE] if oracle(a, p) and oracle(b, p)]
    if common:
        assert overlap(compile(a), compile(b)), (a, b, common[0])


@PROPS
@given(PATTERNS, PATTERNS)
def test_prop_witness_matches_both_and_symmetry(a: str, b: str) -> None:
    ca, cb = compile(a), compile(b)
    assert overlap(ca, cb) == overlap(cb, ca)
    witness = overlap_witness(ca, cb)
    assert (witness is not None) == overlap(ca, cb)
    if witness is not None:
        assert pathspec_matches(a, witness) and pathspec_matches(b, witness), (a, b, witness)
        assert matches(ca, witness) and matches(cb, witness)


def test_no_blowup_on_pathological_patterns() -> None:
    start = time.process_time()  # CPU time: other processes on the machine do not stretch it
    star_soup = compile("*a" * 40 + "*b")
    assert not matches(star_soup, "a" * 200)
    assert not overlap(compile("*a" * 40 + "*"), compile("?" * 39))  # full product search
    assert overlap(compile("*a" * 40 + "*"), compile("*b" * 40 + "*"))
    globstars = compile("/".join(["**", "a"] * 30))
    assert matches(globstars, "/".join(["a"] * 64))
    assert overlap(globstars, compile("/".join(["**", "b", "**", "a"] * 15)))
    assert time.process_time() - start < 5  # each is milliseconds; exponential would hang


def test_import_stays_light() -> None:
    code = f"import sys; sys.path.insert(0, {str(SRC)!r}); import agent_hooks.reservations.pattern"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "agent_hooks.reservations.pattern" in imported
    forbidden = {"re", "typing", "fnmatch", "json", "enum", "dataclasses", "functools"}
    forbidden |= {"collections", "pathlib", "shlex", "pathspec"}
    assert not imported & forbidden, sorted(imported & forbidden)
