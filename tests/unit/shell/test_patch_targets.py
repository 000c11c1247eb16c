"""patch_targets: the files a Codex apply_patch patch names (table-driven).

The cases are in tests/patch_cases.py; tests/e2e/test_patch_grammar_codex.py runs
every one through the real `apply_patch` of the pinned codex binary and checks that
the files it wrote are among these paths, and that it refuses exactly the patches
found faulty here.
"""

from __future__ import annotations

import pytest

from agent_hooks.shell.patch_targets import DELETE, UPDATE, looks_like_patch, parse
from patch_cases import CASES, B, E


@pytest.mark.parametrize("name", list(CASES))
def test_paths_of_each_patch(name: str) -> None:
    text, paths, ok = CASES[name]
    patch = parse(text)
    assert patch.paths() == paths
    assert (patch.problem is None) is ok, patch.problem


def test_a_moved_file_is_its_old_and_new_name() -> None:
    (hunk,) = parse(CASES["move"][0]).hunks
    assert (hunk.op, hunk.path, hunk.move_to) == (UPDATE, "keep.txt", "moved/dst.txt")


def test_a_file_named_twice_is_listed_once() -> None:
    text = B + "*** Delete File: a.txt\n*** Add File: a.txt\n+x\n" + E
    assert parse(text).paths() == [(DELETE, "a.txt")]


def test_the_problem_names_the_fault() -> None:
    assert parse(CASES["a Move to outside an update"][0]).problem == (
        "'*** Move to: m.txt' is not a valid hunk header"
    )
    assert parse("x").problem == "the first line of the patch is not '*** Begin Patch'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (B, True),
        ("  \n" + B, True),
        ("<<'EOF'\n" + B, True),
        ("echo " + B, False),
        ("", False),
    ],
)
def test_looks_like_patch(text: str, expected: bool) -> None:
    assert looks_like_patch(text) is expected


def test_a_large_patch_is_linear() -> None:
    """5,000 files of 20 lines: ~0.1 s of CPU time when linear, minutes when quadratic
    (~10^10 steps). CPU time, not wall time, so a loaded machine does not decide it;
    the bound leaves a margin of ~50x."""
    import time

    text = B + "".join(f"*** Add File: f{i}.txt\n" + "+x\n" * 20 for i in range(5000)) + E
    started = time.process_time()
    assert len(parse(text).paths()) == 5000
    assert time.process_time() - started < 5
