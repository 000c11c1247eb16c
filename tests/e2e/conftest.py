"""Fixtures for end-to-end tests that drive the real ``claude`` CLI against a mock API.

Invariants:

* Every test collected under ``tests/e2e`` carries the ``e2e`` marker
  (``pytest -m "not e2e"`` deselects them all).
* When the pinned CLI cannot be installed or run, tests that need ``claude_bin`` are SKIPPED
  with the reason, never passed silently.
* Each test gets its own HOME (``claude_home``) and project directory (``project_dir``) under
  ``tmp_path``; every mock server a test starts is stopped at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from .claude_cli import ClaudeResult, ClaudeUnavailable, ensure_claude, run_claude
from .mock_api import MockAnthropicAPI, ScriptItem

_E2E_DIR = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that lives in this directory (or below) as ``e2e``."""
    for item in items:
        if _E2E_DIR in Path(item.path).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """Path of the pinned ``claude`` binary; skips the test when it is unavailable."""
    try:
        return ensure_claude()
    except ClaudeUnavailable as exc:
        pytest.skip(f"claude CLI unavailable: {exc.reason}")


MockApiFactory = Callable[..., MockAnthropicAPI]


@pytest.fixture
def mock_api() -> Iterator[MockApiFactory]:
    """Factory: ``mock_api(script, **options)`` returns a started :class:`MockAnthropicAPI`."""
    started: list[MockAnthropicAPI] = []

    def factory(script: Iterable[ScriptItem] = (), **options: Any) -> MockAnthropicAPI:
        api = MockAnthropicAPI(script, **options).start()
        started.append(api)
        return api

    yield factory
    for api in started:
        api.stop()


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """An empty HOME for the CLI (``~/.claude`` lives here)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project directory the CLI is started in."""
    project = tmp_path / "project"
    project.mkdir()
    return project


class ClaudeRunner(Protocol):
    def __call__(self, prompt: str, api: MockAnthropicAPI, *, args: Sequence[str] = ...,
                 agent_name: str | None = ..., extra_env: Mapping[str, str] | None = ...,
                 timeout: float = ...) -> ClaudeResult: ...


@pytest.fixture
def claude(claude_bin: str, claude_home: Path, project_dir: Path) -> ClaudeRunner:
    """``claude(prompt, api, ...)``: ``run_claude`` bound to this test's binary, HOME, project."""

    def run(prompt: str, api: MockAnthropicAPI, *, args: Sequence[str] = (),
            agent_name: str | None = None, extra_env: Mapping[str, str] | None = None,
            timeout: float = 60) -> ClaudeResult:
        return run_claude(prompt, cwd=project_dir, home=claude_home, server_url=api.url,
                          agent_name=agent_name, extra_env=extra_env, args=args,
                          timeout=timeout, binary=claude_bin)

    return run
