"""`prefilter.might_write` never says "cannot write" for a command the
parser finds a write in (it lets PreToolUse skip loading the parser)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_writes import CASES

from agent_hooks.shell import commands, prefilter
from agent_hooks.shell.writes import analyze

# Commands in the parser's table that never yield a target themselves: they change
# directory, or run code the parser cannot see into, or run a nested command whose
# text is part of the same string.
NO_TARGETS = (
    {"cd", "pushd", "popd", "eval", "git"} | set(commands._PROGRAM_HANDLERS) | set(commands.SHELLS)
)
GIT_WRITING = ("checkout", "restore", "rm", "mv", "worktree", "clone", "stash", "reset", "clean",
               "switch", "merge", "rebase", "pull", "cherry-pick", "revert", "am", "apply",
               "read-tree", "checkout-index", "merge-file", "submodule")  # fmt: skip


def covered(text: str) -> bool:
    return prefilter.might_write(text)


WRITERS = sorted(set(commands._HANDLERS) - NO_TARGETS)


def test_every_writing_command_of_the_parser_is_covered() -> None:
    assert {"cp", "rm", "tee", "sed", "dd"} <= set(WRITERS), "the parser's table moved"
    for shape in ("{}", "{} x", "/usr/bin/{} x", "cd d && {} x", "a=$({} x)", "(echo|{})"):
        assert not [name for name in WRITERS if not covered(shape.format(name))], shape
    assert all(covered(f"git {sub}") for sub in GIT_WRITING)


def test_every_short_name_is_a_whole_word_or_a_word_of_its_own() -> None:
    for name in prefilter.BASH_WRITE_NAMES:
        assert name in WRITERS, name
        assert not covered(f"echo {name}x b-{name} x.{name} x_{name} a{name}")
    assert not [w for w in WRITERS if not any(x in w for x in prefilter.BASH_WRITE_WORDS)
                and w not in prefilter.BASH_WRITE_NAMES]  # fmt: skip


def _spell(draw: st.DrawFn, name: str) -> str:
    """`name` as a shell word bash reads as it: quotes, backslashes, brace lists,
    continuation lines and $'...' escapes spliced in."""
    out = []
    for c in name:
        way = draw(st.integers(0, 6))
        out.append(
            [c, f"'{c}'", f'"{c}"', "\\" + c, c + "''", "\\\n" + c, f"$'\\x{ord(c):02x}'"][way]
        )
    word = "".join(out)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(word)))
        word = word[:cut] + "{,}" + word[cut:]
    return word


@st.composite
def spelled_commands(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(WRITERS))
    where = draw(st.sampled_from(["{} f x", "x; {} f g", "sudo {} f g", "bash -c '{} f g'"]))
    return where.format(_spell(draw, name))


@settings(max_examples=400, deadline=None)
@given(spelled_commands())
def test_names_spelled_with_quotes_escapes_or_braces_still_pass(command: str) -> None:
    """Whatever the parser sees a write in, however the name is spelled, passes."""
    if analyze(command, "/repo", "/home/me").targets:
        assert prefilter.might_write(command), command


@pytest.mark.parametrize(("command", "targets", "opaque"), CASES, ids=[c[0][:40] for c in CASES])
def test_every_write_the_parser_sees_passes(
    command: str, targets: list[str], opaque: list[str]
) -> None:
    if targets:
        assert prefilter.might_write(command)


@pytest.mark.parametrize(
    "command",
    ["ls -la", "pytest -q tests", "cat README.md | grep agent", "python -c 'print(1)'",
     "git status && git diff --stat", "git commit -m wip",
     "git commit -m 'fixed the tests, reviewed'", "pytest -x tests/ --exitfirst",
     "export A=1; npm ls left-pad", "echo bored exit next", "grep -r index src"],
)  # fmt: skip
def test_commands_that_write_nothing_visible_skip_the_parser(command: str) -> None:
    assert not prefilter.might_write(command)


@pytest.mark.parametrize(
    ("command", "reaches"),
    [
        ("echo x > /abs/f", True),
        ('echo x > "/tmp/x"', True),
        ("echo > ../x", True),
        ("git -C ../other stash", True),
        ("cp a ~/b", True),
        ("cp a $HOME/b", True),
        ("cat a 2>/dev/null", False),
        ("echo x > src/a", False),
        ("sed -i s/a/b/ lib/x.py", False),
    ],
)
def test_reaches_out_says_whether_a_command_can_name_a_path_outside_its_directory(
    command: str, reaches: bool
) -> None:
    assert prefilter.reaches_out(command) is reaches
