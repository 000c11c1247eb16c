"""Fixtures for end-to-end tests that drive the real ``claude``, ``codex`` and ``gemini`` CLIs
against loopback mocks of their model APIs.

Invariants:

* Every test collected under ``tests/e2e`` carries the ``e2e`` marker
  (``pytest -m "not e2e"`` deselects them all).
* When the pinned CLI cannot be installed or run, tests that need ``claude_bin`` are SKIPPED
  with the reason, never passed silently.
* Each test gets its own HOME (``claude_home``) and project directory (``project_dir``) under
  ``tmp_path``; every mock server a test starts is stopped at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from .claude_cli import (
    CLAUDE_SKILL_VERSION,
    ClaudeResult,
    ClaudeUnavailable,
    ensure_claude,
    run_claude,
)
from .mock_api import MockAnthropicAPI

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


@pytest.fixture(scope="session")
def claude_skill_bin() -> str:
    """Path of ``claude`` :data:`CLAUDE_SKILL_VERSION` (2.1.332, the first with the
    ``PreSkillShellCommand`` event), beside the pinned one; skips when unavailable."""
    try:
        return ensure_claude(CLAUDE_SKILL_VERSION)
    except ClaudeUnavailable as exc:
        pytest.skip(f"claude CLI {CLAUDE_SKILL_VERSION} unavailable: {exc.reason}")


class Mock(Protocol):
    """A loopback mock of a model API: started, then stopped."""

    def start(self) -> Any: ...
    def stop(self) -> None: ...


def started_mocks(make: Callable[..., Mock]) -> Iterator[Callable[..., Any]]:
    """A fixture's factory: each call starts a mock made by ``make(*args, **options)``
    and returns it; every one is stopped when the test ends."""
    started: list[Mock] = []

    def factory(*args: Any, **options: Any) -> Any:
        api = make(*args, **options).start()
        started.append(api)
        return api

    yield factory
    for api in started:
        api.stop()


MockApiFactory = Callable[..., MockAnthropicAPI]


@pytest.fixture
def mock_api() -> Iterator[MockApiFactory]:
    """Factory: ``mock_api(script, **options)`` returns a started :class:`MockAnthropicAPI`."""
    yield from started_mocks(MockAnthropicAPI)


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
    def __call__(
        self,
        prompt: str,
        api: MockAnthropicAPI,
        *,
        args: Sequence[str] = ...,
        agent_name: str | None = ...,
        extra_env: Mapping[str, str] | None = ...,
        timeout: float = ...,
    ) -> ClaudeResult: ...


@pytest.fixture
def claude(claude_bin: str, claude_home: Path, project_dir: Path) -> ClaudeRunner:
    """``claude(prompt, api, ...)``: ``run_claude`` bound to this test's binary, HOME, project."""

    def run(
        prompt: str,
        api: MockAnthropicAPI,
        *,
        args: Sequence[str] = (),
        agent_name: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        timeout: float = 60,
    ) -> ClaudeResult:
        return run_claude(
            prompt,
            cwd=project_dir,
            home=claude_home,
            server_url=api.url,
            agent_name=agent_name,
            extra_env=extra_env,
            args=args,
            timeout=timeout,
            binary=claude_bin,
        )

    return run


# --------------------------------------------------------------------------- agent-hooks installed
# Used by test_scenarios.py: agent-hooks installed by the real install.sh into this test's HOME.

import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

from .agent_hooks_install import Installation, data_home, install  # noqa: E402


@pytest.fixture(scope="session")
def agent_hooks_data() -> Path:
    """``AGENT_HOOKS_HOME`` shared by every install of the session (a cache: see ``data_home``)."""
    return data_home()


@pytest.fixture
def git_project(project_dir: Path) -> Path:
    """``project_dir`` made a git repository, as agents' projects are.

    The hooks get the project from ``CLAUDE_PROJECT_DIR``, but the agent's Bash tool does not have
    that variable: ``agent-hooks`` run there finds the project by its git top level.
    """
    if shutil.which("git"):
        subprocess.run(
            ["git", "init", "-q", str(project_dir)],
            check=True,
            timeout=60,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(project_dir)},
        )
    else:
        (project_dir / ".git").mkdir()
    return project_dir


InstallAgentHooks = Callable[..., Installation]


@pytest.fixture
def install_agent_hooks(claude_home: Path, agent_hooks_data: Path) -> InstallAgentHooks:
    """``install_agent_hooks(settings=True)``: run ``./install.sh`` for this test's HOME
    (``settings=False`` passes ``--no-settings``, for the plugin form; ``clients="claude,codex"``
    passes ``--clients``)."""

    def run(*, settings: bool = True, clients: str | None = None) -> Installation:
        return install(claude_home, agent_hooks_data, settings=settings, clients=clients)

    return run


# --------------------------------------------------------------------------- Codex CLI
# Used by test_codex_harness.py: the pinned `codex` CLI against a mock of the Responses API.

from .codex_cli import (  # noqa: E402
    CODEX_VERSIONS,
    CodexResult,
    CodexUnavailable,
    ensure_codex,
    run_codex,
)
from .mock_responses_api import MockResponsesAPI  # noqa: E402


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """Path of the pinned ``codex`` binary; skips the test when it is unavailable."""
    try:
        return ensure_codex()
    except CodexUnavailable as exc:
        pytest.skip(f"codex CLI unavailable: {exc.reason}")


@pytest.fixture(scope="session", params=CODEX_VERSIONS, ids=lambda v: f"codex-{v}")
def codex_any_bin(request: pytest.FixtureRequest) -> str:
    """Path of each measured ``codex`` (0.169.0, the pinned one, and 0.171.0) in turn: a test
    taking it runs on both; skips a version that is unavailable."""
    try:
        return ensure_codex(request.param)
    except CodexUnavailable as exc:
        pytest.skip(f"codex CLI {request.param} unavailable: {exc.reason}")


MockResponsesFactory = Callable[..., MockResponsesAPI]


@pytest.fixture
def mock_responses() -> Iterator[MockResponsesFactory]:
    """Factory: ``mock_responses(script, **options)`` returns a started
    :class:`MockResponsesAPI`; every one is stopped at teardown."""
    yield from started_mocks(MockResponsesAPI)


@pytest.fixture
def codex_user_home(tmp_path: Path) -> Path:
    """The HOME of a Codex run (``$CODEX_HOME`` is ``<it>/.codex``); the same directory as
    ``claude_home`` when a test uses both (one person's HOME)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return home


class CodexRunner(Protocol):
    def __call__(
        self,
        prompt: str,
        api: MockResponsesAPI,
        *,
        args: Sequence[str] = ...,
        cwd: Path | None = ...,
        model: str | None = ...,
        agent_name: str | None = ...,
        extra_env: Mapping[str, str] | None = ...,
        timeout: float = ...,
    ) -> CodexResult: ...


@pytest.fixture
def codex(codex_bin: str, codex_user_home: Path, project_dir: Path) -> CodexRunner:
    """``codex(prompt, api, ...)``: ``run_codex`` bound to this test's binary, HOME and project
    (``cwd`` overrides the project as the directory codex starts in)."""

    def run(
        prompt: str,
        api: MockResponsesAPI,
        *,
        args: Sequence[str] = (),
        cwd: Path | None = None,
        model: str | None = "gpt-5.5",
        agent_name: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        timeout: float = 60,
    ) -> CodexResult:
        return run_codex(
            prompt,
            cwd=cwd or project_dir,
            home=codex_user_home,
            server_url=api.url,
            proxy_url=api.proxy_url,
            model=model,
            agent_name=agent_name,
            extra_env=extra_env,
            args=args,
            timeout=timeout,
            binary=codex_bin,
        )

    return run


# --------------------------------------------------------------------------- Gemini CLI
# Used by test_gemini_harness.py: the real, pinned `gemini` against a mock of the Gemini API.

from .gemini_cli import GeminiResult, GeminiUnavailable, ensure_gemini, run_gemini  # noqa: E402
from .mock_gemini_api import MockGeminiAPI  # noqa: E402


@pytest.fixture(scope="session")
def gemini_bin() -> str:
    """Path of the pinned ``gemini`` CLI; skips the test when it is unavailable."""
    try:
        return ensure_gemini()
    except GeminiUnavailable as exc:
        pytest.skip(f"gemini CLI unavailable: {exc.reason}")


MockGeminiFactory = Callable[..., MockGeminiAPI]


@pytest.fixture
def mock_gemini_api() -> Iterator[MockGeminiFactory]:
    """Factory: ``mock_gemini_api(script, **options)`` returns a started :class:`MockGeminiAPI`."""
    yield from started_mocks(MockGeminiAPI)


@pytest.fixture
def gemini_home(claude_home: Path) -> Path:
    """The HOME of a ``gemini`` run (``~/.gemini`` lives here): the same HOME as ``claude``'s,
    as one person's swarm shares it."""
    return claude_home


class GeminiRunner(Protocol):
    def __call__(
        self,
        prompt: str,
        api: MockGeminiAPI,
        *,
        model: str | None = ...,
        session_id: str | None = ...,
        agent_name: str | None = ...,
        extra_env: Mapping[str, str] | None = ...,
        args: Sequence[str] = ...,
        trust: bool = ...,
        timeout: float = ...,
        on_start: Callable[[subprocess.Popen[str]], object] | None = ...,
    ) -> GeminiResult: ...


@pytest.fixture
def gemini(gemini_bin: str, gemini_home: Path, project_dir: Path) -> GeminiRunner:
    """``gemini(prompt, api, ...)``: ``run_gemini`` bound to this test's binary, HOME, project."""

    def run(
        prompt: str,
        api: MockGeminiAPI,
        *,
        model: str | None = None,
        session_id: str | None = None,
        agent_name: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        trust: bool = True,
        timeout: float = 120,
        on_start: Callable[[subprocess.Popen[str]], object] | None = None,
    ) -> GeminiResult:
        return run_gemini(
            prompt,
            cwd=project_dir,
            home=gemini_home,
            server_url=api.url,
            model=model,
            session_id=session_id,
            agent_name=agent_name,
            extra_env=extra_env,
            args=args,
            trust=trust,
            timeout=timeout,
            binary=gemini_bin,
            on_start=on_start,
        )

    return run


# --------------------------------------------------------------------------- opencode, Qwen Code
# Used by test_opencode_qwen_e2e.py: the pinned clients against a mock of Chat Completions.

from .mock_chat_api import MockChatAPI  # noqa: E402
from .opencode_cli import OpencodeUnavailable, ensure_opencode  # noqa: E402
from .qwen_cli import QwenUnavailable, ensure_qwen  # noqa: E402


@pytest.fixture(scope="session")
def opencode_bin() -> str:
    """Path of the pinned ``opencode``; skips the test when it is unavailable."""
    try:
        return ensure_opencode()
    except OpencodeUnavailable as exc:
        pytest.skip(f"opencode unavailable: {exc.reason}")


@pytest.fixture(scope="session")
def qwen_bin() -> str:
    """Path of the pinned ``qwen``; skips the test when it is unavailable."""
    try:
        return ensure_qwen()
    except QwenUnavailable as exc:
        pytest.skip(f"qwen CLI unavailable: {exc.reason}")


MockChatFactory = Callable[..., MockChatAPI]


@pytest.fixture
def mock_chat() -> Iterator[MockChatFactory]:
    """Factory: ``mock_chat(script, agents=..., **options)`` returns a started
    :class:`MockChatAPI`; every one is stopped at teardown."""
    yield from started_mocks(MockChatAPI)


# --------------------------------------------------------------------------- tmux
# Used by the tests that type into panes (test_launch_recipe.py, test_quickstart_e2e.py).

import tempfile  # noqa: E402

from .tmux_server import Tmux  # noqa: E402


@pytest.fixture
def tmux_socket() -> Iterator[Path]:
    """A socket path short enough for a unix socket, removed (and its server killed) at the
    end; skips the test when tmux is not installed."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the test types into its panes")
    directory = Path(tempfile.mkdtemp(prefix="ah-tmux-"))
    socket = directory / "sock"
    yield socket
    Tmux(socket, {"PATH": "/usr/bin:/bin"}).kill()
    shutil.rmtree(directory, ignore_errors=True)
