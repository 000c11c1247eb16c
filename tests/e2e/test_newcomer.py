"""Issue 12 inside the real ``claude`` CLI: agents run ``agent-hooks`` without a permission
prompt once ``./install.sh`` has run, and agent-hooks loaded both as a plugin and from settings
handles each tool call once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .agent_hooks_install import REPO
from .mock_api import call, say

if TYPE_CHECKING:
    from .conftest import ClaudeRunner, InstallAgentHooks, MockApiFactory

AGENT_A = "proj__cc_1"
AGENT_B = "proj__cc_2"


def test_agents_run_agent_hooks_without_a_permission_prompt(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    """In the default permission mode a Bash call needs an allow rule or a person's yes
    (``claude -p`` has nobody to ask, so it is refused): install.sh's rules allow the command
    by name and by the absolute path of its link, and nothing else."""
    install = install_agent_hooks()
    link = install.bin_dir / "agent-hooks"
    api = mock_api(
        [
            call("Bash", {"command": "agent-hooks status --json"}),
            call("Bash", {"command": f"{link} reservations"}),
            call("Bash", {"command": "touch not-allowed.txt"}),
            say("Done."),
        ]
    )
    result = claude(
        "Look around.",
        api,
        agent_name=AGENT_A,
        extra_env=install.claude_env(),
        args=["--permission-mode", "default"],
    )
    assert result.returncode == 0, result.stderr
    by_name, by_path, other = api.tool_results()
    assert not by_name.is_error, by_name.content
    assert json.loads(by_name.content)["agent"] == AGENT_A
    assert not by_path.is_error, by_path.content
    assert other.is_error and not (git_project / "not-allowed.txt").exists()  # the control


def test_plugin_and_installed_together_deny_once(
    claude: ClaudeRunner,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
) -> None:
    install = install_agent_hooks()  # hooks in settings.json
    env = install.claude_env(plugin=True)
    args = ["--plugin-dir", str(REPO)]  # ... and the same hooks from the plugin
    project = git_project.resolve()
    install.cli("reserve", "src/**", "--reason", "farmhand-42", cwd=project, agent_name=AGENT_A)
    target = project / "src" / "x.py"
    read_me = project / "README"
    read_me.write_text("hello\n")
    api = mock_api(
        [
            call("Write", {"file_path": str(target), "content": "x = 1\n"}),
            call("Read", {"file_path": str(read_me)}),
            say("Done."),
        ]
    )
    result = claude("Work on src.", api, agent_name=AGENT_B, extra_env=env, args=args)
    assert result.returncode == 0, result.stderr
    write, read = api.tool_results()
    assert write.is_error and "farmhand-42" in write.content and not target.exists()
    assert not read.is_error
    denials = [line for line in install.log_lines() if " denied " in line]
    assert len(denials) == 1, install.log_lines()
    assert install.state(AGENT_B)["files_read"] == [str(read_me)]
    # the context the model starts with comes from one copy only
    first = api.main_requests[0].json
    text = json.dumps(first)
    assert text.count(f'you are agent \\"{AGENT_B}\\"') == 1, text[:2000]
