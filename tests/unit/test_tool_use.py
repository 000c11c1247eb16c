"""tool_use: when a shell command ran (`reported_window`), and the one slack around it
(`in_window`, `SLACK`)."""

from __future__ import annotations

import pytest

from agent_hooks.tool_use import SLACK, in_window, reported_window

NOW = 1_790_000_000.0


@pytest.mark.parametrize(
    ("duration_ms", "start"),
    [(1500, NOW - 1.5), (0, NOW), (-20, NOW), (2.5, NOW - 0.0025)],
)
def test_a_reported_duration_ends_now(duration_ms: float, start: float) -> None:
    assert reported_window(duration_ms, NOW) == (start, NOW)


@pytest.mark.parametrize("duration_ms", [None, True, False, "1500", [1500]])
def test_no_number_is_no_window(duration_ms: object) -> None:
    assert reported_window(duration_ms, NOW) is None


def test_a_moment_is_inside_within_one_slack_either_side() -> None:
    window = (NOW - 3, NOW - 1)
    assert SLACK == 1.0
    assert in_window(window, NOW - 3 - SLACK) and in_window(window, NOW - 1 + SLACK)
    assert in_window(window, NOW - 2)
    assert not in_window(window, NOW - 3 - SLACK - 0.01)
    assert not in_window(window, NOW - 1 + SLACK + 0.01)
