"""`prefilter.might_write` never says "cannot write" for a command the
parser finds a write in (it lets PreToolUse skip loading the parser)."""

from __future__ import annotations

import pytest
from test_bash_writes import CASES

from agent_hooks.reservations.bash import commands as bash_commands
from agent_hooks.reservations.bash import prefilter

# Commands in the parser's table that never yield a target themselves: they change
# directory, or run code the parser cannot see into, or run a nested command whose
# text is part of the same string.
NO_TARGETS = (
    {"cd", "pushd", "popd", "eval", "git"}
    | set(bash_commands._PROGRAM_HANDLERS)
    | set(bash_commands.SHELLS)
)
GIT_WRITING = ("checkout", "restore", "rm", "mv", "worktree", "clone")


def covered(text: str) -> bool:
    return any(word in text for word in prefilter.BASH_WRITE_WORDS)


def test_every_writing_command_of_the_parser_is_covered() -> None:
    writers = set(bash_commands._HANDLERS) - NO_TARGETS
    assert {"cp", "rm", "tee", "sed", "dd"} <= writers, "the parser's table moved: update this test"
    assert not [name for name in writers if not covered(name)]
    assert all(covered(f"git {sub}") for sub in GIT_WRITING)


@pytest.mark.parametrize(("command", "targets", "opaque"), CASES, ids=[c[0][:40] for c in CASES])
def test_every_write_the_parser_sees_passes(
    command: str, targets: list[str], opaque: list[str]
) -> None:
    if targets:
        assert prefilter.might_write(command)


@pytest.mark.parametrize(
    "command",
    ["ls -la", "pytest -q tests", "cat README.md | grep agent", "python -c 'print(1)'",
     "git status && git diff --stat", "git commit -m wip"],
)  # fmt: skip
def test_commands_that_write_nothing_visible_skip_the_parser(command: str) -> None:
    assert not prefilter.might_write(command)
