"""A held file changed inside another agent's shell command is put down to that command in
every client (issue 33, item 4; ADR-0027), end to end: agent-hooks installed by the real
``./install.sh --clients claude,codex`` (or ``claude,gemini``), the real ``claude -p`` (2.1.328)
holding a file and the real ``codex exec`` (0.169.0) or ``gemini -p`` (0.61.0) whose ``python3 -c``
rewrites it — neither reports the files a command changed, and the gate cannot read that write.
The Claude agent's next tool result names the writer's command; the writer's next tool result
tells it what its command did.

Every interleaving is a ``wait_until`` step of one mock on the other, never a sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .claude_cli import run_claude
from .clients_support import InThread, finished_ok
from .codex_cli import run_codex
from .gemini_cli import FAST_MODEL, run_gemini
from .mock_api import calls
from .mock_gemini_api import run_shell_command
from .mock_responses_api import exec_command
from .mock_routes import MAIN, turns_done, wait_until
from .nothing_lost_support import A_EDIT, AGENT_A, read, shared_repo, told_after
from .writers_support import on, write

if TYPE_CHECKING:
    from .agent_hooks_install import Installation
    from .claude_cli import ClaudeResult
    from .conftest import (
        InstallAgentHooks,
        MockApiFactory,
        MockGeminiFactory,
        MockResponsesFactory,
    )
    from .mock_api import MockAnthropicAPI

CX, GM = "proj__cod_1", "proj__gmi_1"
PYTHON_WRITE = "python3 -c \"open('src/app.py','w').write('by codex')\""
GEMINI_WRITE = "python3 -c \"open('src/app.py','w').write('by gemini')\""


def claude_holder(
    install: Installation, project: Path, api: MockAnthropicAPI, binary: str, mode: str
) -> InThread[ClaudeResult]:
    """The Claude agent that holds src/app.py, in permission mode `mode`."""
    return InThread(
        run_claude,
        "Work on src/app.py.",
        cwd=project,
        home=install.home,
        server_url=api.url,
        agent_name=AGENT_A,
        extra_env=install.claude_env(),
        binary=binary,
        timeout=180,
        args=["--permission-mode", mode, "--allowedTools", "Write,Read"],
    )


def holds_then_looks(api: MockAnthropicAPI, writer_api: Any, other: Path) -> None:
    """The holder writes src/app.py, waits for the writer's command, then looks at another file."""
    app = other.parent / "app.py"
    api.add(
        calls(write(app, A_EDIT)),
        wait_until(on(writer_api, turns_done(MAIN, 1), "the writer's python3 -c ran")),
        calls(read(other)),
        "Claude done.",
    )


def holder_told(api: MockAnthropicAPI, writer: str) -> str:
    """What the holder's look was told, asserted to name `writer`'s command."""
    wrote, looked = api.tool_results()
    assert not wrote.is_error and not looked.is_error
    told = told_after(api, looked)
    assert (
        f"agent-hooks: src/app.py, which you are changing, was changed by {writer}'s shell "
        "command at "
    ) in told, told
    assert "the change fell inside that command, which ran from " in told, told
    assert f"; {writer} has been told." in told, told
    assert "`agent-hooks restore src/app.py`" in told, told
    return told


def test_a_codex_agents_command_is_named_to_a_claude_holder_and_told_what_it_did(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_bin: str,
    mock_api: MockApiFactory,
    mock_responses: MockResponsesFactory,
) -> None:
    install = install_agent_hooks(clients="claude,codex")
    project = git_project.resolve()
    app, other = shared_repo(project)
    claude_api = mock_api()
    codex_api = mock_responses(
        [
            wait_until(on(claude_api, turns_done(MAIN, 1), "claude wrote src/app.py")),
            exec_command(PYTHON_WRITE, call_id="call_python"),
            wait_until(on(claude_api, turns_done(MAIN, 2), "claude's next hook found it")),
            exec_command("git status --short", call_id="call_next"),
            "Codex done.",
        ]
    )
    holds_then_looks(claude_api, codex_api, other)
    codex = InThread(
        run_codex,
        "Work on the repository.",
        cwd=project,
        home=install.home,
        server_url=codex_api.url,
        proxy_url=codex_api.proxy_url,
        agent_name=CX,
        binary=codex_bin,
        timeout=180,
    )
    claude = claude_holder(install, project, claude_api, claude_bin, "default")
    codex_result, claude_result = codex.result(), claude.result()

    finished_ok(codex_result, codex_api, install, "codex")
    finished_ok(claude_result, claude_api, install, "claude")
    assert app.read_text() == "by codex"
    holder_told(claude_api, f'Codex agent "{CX}"')
    # Codex carries a PostToolUse's context to its next request (a developer message)
    heard = "\n".join(str(req.json) for req in codex_api.turn_requests[2:])
    assert "agent-hooks: your shell command changed src/app.py, which agent" in heard, heard[-3000:]
    assert "Leave that file to its holder" in heard, heard[-3000:]
    before = "\n".join(str(req.json) for req in codex_api.turn_requests[:2])
    assert "your shell command changed" not in before  # told after the holder looked, not before


def test_a_gemini_agents_command_is_named_to_a_claude_holder_in_accept_edits_mode(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    gemini_bin: str,
    mock_api: MockApiFactory,
    mock_gemini_api: MockGeminiFactory,
) -> None:
    """Gemini CLI gives no call id and no duration: its command's window is its BeforeTool's
    start to its AfterTool, paired in order. The Claude agent (acceptEdits: no files reported)
    hears the Gemini agent's command named; the Gemini agent hears, in its next tool's result,
    what its command did."""
    install = install_agent_hooks(clients="claude,gemini")
    project = git_project.resolve()
    app, other = shared_repo(project)
    claude_api = mock_api()
    gemini_api = mock_gemini_api(
        [
            wait_until(on(claude_api, turns_done(MAIN, 1), "claude wrote src/app.py")),
            run_shell_command(GEMINI_WRITE),
            wait_until(on(claude_api, turns_done(MAIN, 2), "claude's next hook found it")),
            run_shell_command("git status --short"),
            "Gemini done.",
        ]
    )
    holds_then_looks(claude_api, gemini_api, other)
    gemini = InThread(
        run_gemini,
        "Work on the repository.",
        cwd=project,
        home=install.home,
        server_url=gemini_api.url,
        model=FAST_MODEL,
        agent_name=GM,
        binary=gemini_bin,
        timeout=180,
    )
    claude = claude_holder(install, project, claude_api, claude_bin, "acceptEdits")
    gemini_result, claude_result = gemini.result(), claude.result()

    finished_ok(gemini_result, gemini_api, install, "gemini")
    finished_ok(claude_result, claude_api, install, "claude")
    assert app.read_text() == "by gemini"
    holder_told(claude_api, f'Gemini CLI agent "{GM}"')
    python, status = gemini_api.tool_results()
    assert python.error is None and status.error is None, (python, status)
    assert "your shell command changed" not in python.output  # told after the holder looked
    heard = status.output  # Gemini CLI appends AfterTool's context to the tool's result
    assert (
        f'agent-hooks: your shell command changed src/app.py, which agent "{AGENT_A}" is changing'
    ) in heard, heard
    assert "Leave that file to its holder" in heard, heard
