"""tool_use.Window: when a shell command ran, and the one slack around it."""

from __future__ import annotations

import pytest

from agent_hooks.tool_use import SLACK, Window

NOW = 1_790_000_000.0


@pytest.mark.parametrize(
    ("duration_ms", "start"),
    [(1500, NOW - 1.5), (0, NOW), (-20, NOW), (2.5, NOW - 0.0025)],
)
def test_a_reported_duration_ends_now(duration_ms: float, start: float) -> None:
    window = Window.reported(duration_ms, NOW)
    assert window is not None and (window.start, window.end) == (start, NOW)


@pytest.mark.parametrize("duration_ms", [None, True, False, "1500", [1500]])
def test_no_number_is_no_window(duration_ms: object) -> None:
    assert Window.reported(duration_ms, NOW) is None


def test_a_moment_is_inside_within_one_slack_either_side() -> None:
    window = Window(NOW - 3, NOW - 1)
    assert SLACK == 1.0
    assert window.holds(NOW - 3 - SLACK) and window.holds(NOW - 1 + SLACK) and window.holds(NOW - 2)
    assert not window.holds(NOW - 3 - SLACK - 0.01) and not window.holds(NOW - 1 + SLACK + 0.01)
