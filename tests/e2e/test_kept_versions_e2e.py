"""Every held change can be brought back (issue 34), with the real clients: agent-hooks installed
by the real ``./install.sh``, each client against its loopback model mock.

* Claude Code 2.1.328 in ``default`` mode: agent B's ``python3 -c`` (the gate cannot see its
  write, and the client reports no changed files) clobbers agent A's held file; A's next tool
  result carries the notice naming the commands; A runs them through its Bash tool (the rule
  install added lets ``agent-hooks`` run without a prompt) and its file is back, and A's next
  hook says nothing of its own restore.
* Codex 0.169.0 and Gemini CLI 0.61.0: the agent writes a file with its own edit tool (an
  ``apply_patch``, a ``write_file``), a process it does not see overwrites it, the agent's next
  tool call brings it the notice, and its shell runs ``agent-hooks restore``.

Each interleaving is a ``wait_until`` step of a mock (or an ``act`` that does something at the
moment the mock takes it), never a sleep.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from .clients_support import InThread, finished_ok
from .codex_cli import run_codex
from .gemini_cli import FAST_MODEL, run_gemini
from .mock_api import calls
from .mock_gemini_api import read_file, run_shell_command, write_file
from .mock_gemini_api import request_text as gemini_request_text
from .mock_responses_api import add_file_patch, apply_patch, exec_command
from .nothing_lost_support import (
    A_EDIT,
    AGENT_A,
    act,
    after,
    bash,
    read,
    run_pair,
    shared_repo,
    told_after,
)
from .writers_support import ok, write

if TYPE_CHECKING:
    from .conftest import InstallAgentHooks, MockApiFactory, MockGeminiFactory, MockResponsesFactory

CX, GM = "proj__cod_1", "proj__gmi_1"
PYTHON_WRITE = "python3 -c \"open('src/app.py','w').write('by B')\""


def clobber(path: Path, text: str) -> None:
    """A process no client runs (a script, an editor) overwrites `path`."""
    subprocess.run(
        ["python3", "-c", f"open({str(path)!r}, 'w').write({text!r})"], check=True, timeout=60
    )


def test_claude_code_in_default_mode_puts_back_what_a_python_write_clobbered(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()
    project = git_project.resolve()
    app, other = shared_repo(project)
    a_api = mock_api()
    b_api = mock_api([after(a_api, 1, "A wrote src/app.py"), calls(bash(PYTHON_WRITE)), "B done."])
    a_api.add(
        calls(write(app, A_EDIT)),
        after(b_api, 1, "B's python3 -c ran"),
        calls(read(other)),
        calls(bash("agent-hooks restore src/app.py --diff")),
        calls(bash("agent-hooks restore src/app.py")),
        calls(read(app)),
        "A done.",
    )
    mode = ["--permission-mode", "default", "--allowedTools", "Write,Read"]
    b_args = ["--permission-mode", "default", "--allowedTools", "Bash"]

    pair = run_pair(
        claude_bin, claude_home, project, install, a_api, b_api, a_args=mode, b_args=b_args
    )

    ok(pair.a, pair.a_api, install)
    ok(pair.b, pair.b_api, install)
    wrote, looked, diff, restored, reread = a_api.tool_results()
    assert not any(r.is_error for r in (wrote, looked, diff, restored, reread)), a_api.summary()
    told = told_after(a_api, looked)
    assert (
        'agent-hooks: src/app.py, which you are changing, was changed by agent "proj__cc_2"\'s '
        "shell command"
    ) in told, told
    assert (
        "Your last version of it is kept: `agent-hooks restore src/app.py --diff` shows what "
        "changed, `agent-hooks restore src/app.py` puts it back (with its mode)."
    ) in told, told
    assert "-edited_by_a = 1" in diff.content and "+by B" in diff.content, diff.content
    assert "restored src/app.py to version" in restored.content, restored.content
    assert app.read_text() == A_EDIT
    assert "agent-hooks" not in told_after(a_api, reread)  # its own restore: nothing to tell
    assert any(" event=restore " in line and AGENT_A in line for line in install.log_lines())


def test_a_codex_agent_restores_its_patched_file(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    codex_bin: str,
    mock_responses: MockResponsesFactory,
) -> None:
    install = install_agent_hooks(clients="claude,codex")
    project = git_project.resolve()
    target = project / "cx.py"
    cli = install.bin_dir / "agent-hooks"
    api = mock_responses(
        [
            apply_patch(add_file_patch("cx.py", "codex work"), call_id="call_add"),
            act(lambda: clobber(target, "overwritten\n"), "a process overwrote cx.py"),
            exec_command("cat cx.py", call_id="call_look"),
            exec_command(f"{cli} restore cx.py", call_id="call_restore"),
            "Codex done.",
        ]
    )
    result = run_codex(
        "Work on the repository.",
        cwd=project,
        home=install.home,
        server_url=api.url,
        proxy_url=api.proxy_url,
        agent_name=CX,
        binary=codex_bin,
        timeout=180,
    )

    finished_ok(result, api, install, "codex")
    assert target.read_text() == "codex work\n"
    assert "restored cx.py to version" in api.tool_output("call_restore")
    later = "\n".join(str(req.json) for req in api.turn_requests[3:])
    assert "`agent-hooks restore cx.py --diff`" in later, later[-3000:]
    assert "cx.py, which you are changing, " in later, later[-3000:]


def test_a_gemini_agent_restores_its_written_file(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    gemini_bin: str,
    mock_gemini_api: MockGeminiFactory,
) -> None:
    install = install_agent_hooks(clients="claude,gemini")
    project = git_project.resolve()
    target = project / "gm.txt"
    cli = install.bin_dir / "agent-hooks"
    api = mock_gemini_api(
        [
            write_file(str(target), "gemini work\n"),
            act(lambda: clobber(target, "overwritten\n"), "a process overwrote gm.txt"),
            read_file(str(target)),
            run_shell_command(f"{cli} restore gm.txt"),
            "Gemini done.",
        ]
    )
    run = InThread(
        run_gemini,
        "Work on the repository.",
        cwd=project,
        home=install.home,
        server_url=api.url,
        model=FAST_MODEL,
        agent_name=GM,
        binary=gemini_bin,
        timeout=180,
    )
    result = run.result()

    finished_ok(result, api, install, "gemini")
    assert target.read_text() == "gemini work\n"
    wrote, looked, restored = api.tool_results()
    assert wrote.error is None and looked.error is None and restored.error is None
    assert "restored gm.txt to version" in restored.output, restored.output
    later = "\n".join(gemini_request_text(req.json) for req in api.main_requests[2:])
    assert "`agent-hooks restore gm.txt --diff`" in later, later[-3000:]
