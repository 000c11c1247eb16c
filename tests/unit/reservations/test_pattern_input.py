"""Tests for agent_hooks.reservations.pattern_input: normalizing the patterns users type."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_hooks.reservations import pattern
from agent_hooks.reservations.pattern import PatternError
from agent_hooks.reservations.pattern_input import normalize

ROOT = "/proj"


@pytest.mark.parametrize(
    ("pattern", "cwd", "expected"),
    [
        ("./src//a/", None, "src/a/"),
        ("src\\auth\\**", None, "src/auth/**"),
        ("src/../lib/x", None, "lib/x"),
        ("  src/a.py \t", None, "src/a.py"),
        ("a/**/**/b", None, "a/**/b"),
        (".", None, "**"),
        ("./", None, "**"),
        ("src/..", None, "**"),
        ("**", None, "**"),
        ("/proj/src/x.py", None, "src/x.py"),
        ("/proj/src/*.py", None, "src/*.py"),
        ("/proj", None, "**"),
        ("a.py", "/proj/src", "src/a.py"),
        ("../lib/", "/proj/src", "lib/"),
        (".", "/proj/src", "src"),
        ("a.py", "/elsewhere", "a.py"),
        ("x", "/proj/we*rd", "we[*]rd/x"),
        ("../y", "/proj/we*rd", "y"),
    ],
)
def test_normalize(pattern: str, cwd: str | None, expected: str) -> None:
    assert normalize(pattern, ROOT, cwd) == expected
    assert normalize(pattern, ROOT + "/", cwd) == expected
    assert normalize(expected, ROOT) == expected  # idempotent


def test_normalize_absolute_through_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    for root in (str(real), str(link), str(link) + "/"):
        for base in (real, link):
            assert normalize(f"{base}/src/*.py", root) == "src/*.py"
            assert normalize(f"{base}/src/new/", root) == "src/new/"
        assert normalize("x", root, cwd=str(link / "src")) == "src/x"
    with pytest.raises(PatternError, match="outside"):
        normalize(str(tmp_path / "other" / "x"), str(link))


@pytest.mark.parametrize(
    ("pattern", "cwd", "why"),
    [
        ("../x", None, "leaves the project"),
        ("..", None, "leaves the project"),
        ("src/../../x", None, "leaves the project"),
        ("../../x", "/proj/src", "leaves the project"),
        ("/etc/passwd", None, "outside the project"),
        ("", None, "empty"),
        ("   \t ", None, "empty"),
        ("src/[ab", None, "unclosed '['"),
        ("!x", None, "negation"),
        ("#x", None, "comment"),
        ("a\x00b", None, "control character U+0000"),
        ("a\x1bb", None, "control character U+001B"),
        ("a/" * 65 + "a", None, "more than 64 segments"),
        ("a" * 1025, None, "longer than 1024"),
        ("*/../x", None, "ambiguous"),
        ("[z-a]", None, "reversed"),
        ("[[:alpha:]]", None, "POSIX"),
        ("[.]", None, "names no file"),
    ],
)
def test_normalize_errors(pattern: str, cwd: str | None, why: str) -> None:
    with pytest.raises(PatternError) as info:
        normalize(pattern, ROOT, cwd)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert why in message
    assert "\n" not in message and len(message) < 200


# --- brackets that are names on disk (issue 18, defect 10) ------------------------------


@pytest.fixture
def routes(tmp_path: Path) -> str:
    """A project with Next.js / SvelteKit route folders and pages-router files."""
    root = tmp_path / "web"
    for rel in ("app/[slug]/[id]/page.tsx", "app/[...all]/page.tsx", "pages/[id].js", "src/a.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    return str(root)


@pytest.mark.parametrize(
    ("typed", "expected", "covers"),
    [
        ("app/[slug]/**", "app/[[]slug]/**", "app/[slug]/page.tsx"),
        ("app/[slug]", "app/[[]slug]", "app/[slug]/new.tsx"),
        ("app/[slug]/[id]/", "app/[[]slug]/[[]id]/", "app/[slug]/[id]/page.tsx"),
        ("app/[...all]/**", "app/[[]...all]/**", "app/[...all]/page.tsx"),
        ("pages/[id].js", "pages/[[]id].js", "pages/[id].js"),
        ("app/[[]slug]/[id]/x", "app/[[]slug]/[[]id]/x", "app/[slug]/[id]/x"),
    ],
)
def test_a_bracket_segment_that_exists_on_disk_is_taken_literally(
    routes: str, typed: str, expected: str, covers: str
) -> None:
    notes: list[str] = []
    assert normalize(typed, routes, notes=notes) == expected
    assert pattern.matches(pattern.compile(expected), covers)
    assert normalize(expected, routes) == expected  # idempotent
    assert notes and all("exists" in note and "literally" in note for note in notes)


def test_a_bracket_segment_reached_from_the_cwd_or_an_absolute_path(routes: str) -> None:
    assert normalize("[id]/x", routes, cwd=routes + "/app/[slug]") == "app/[[]slug]/[[]id]/x"
    assert normalize(routes + "/app/[slug]/**", routes) == "app/[[]slug]/**"


@pytest.mark.parametrize(
    ("typed", "literal"),
    [("app/[name]/**", "app/[[]name]/**"), ("src/[ab].py", "src/[[]ab].py")],
)
def test_a_bracket_segment_not_on_disk_stays_a_class_and_says_how_to_mean_the_name(
    routes: str, typed: str, literal: str
) -> None:
    notes: list[str] = []
    assert normalize(typed, routes, notes=notes) == typed
    assert pattern.matches(
        pattern.compile(typed), typed.replace("[ab]", "a").replace("[name]", "n")
    )
    [note] = notes
    assert "character class" in note and repr(literal) in note


def test_a_bracket_below_a_wildcard_is_not_looked_up(routes: str) -> None:
    notes: list[str] = []
    assert normalize("*/[slug]/**", routes, notes=notes) == "*/[slug]/**"
    assert notes == []
