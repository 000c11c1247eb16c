"""Running click commands as `agent-hooks` would, for the CLI tests: a group holding
the command modules under test, with HOME, AGENT_NAME, the project and the clock
given through `Env`, and SessionStart's effect on the agent's state (`begin`); what a
refusal looks like (`one_line_error`)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from click.testing import CliRunner, Result

from agent_hooks import identity
from agent_hooks.agents import state, state_file
from agent_hooks.cli._common import Env, Group

NOW = 1_800_000_000.0
AGENT = "proj__cc_1"


class Cli:
    def __init__(self, home: Path, project: Path, *modules: ModuleType) -> None:
        self.home = home
        self.project = project
        self.group = Group("agent-hooks")
        for module in modules:
            module.register(self.group)

    def __call__(
        self,
        *args: str,
        agent: str | None = AGENT,
        now: float = NOW,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> Result:
        environ = {"HOME": str(self.home), "CLAUDE_PROJECT_DIR": str(self.project)}
        if agent is not None:
            environ["AGENT_NAME"] = agent
        environ.update(env or {})
        return CliRunner().invoke(
            self.group, list(args), obj=Env(environ=environ, now=now), input=input
        )

    def ok(self, *args: str, **kw: Any) -> Result:
        result = self(*args, **kw)
        assert result.exit_code == 0, (result.output, result.exception)
        return result

    def agent(self, name: str = AGENT) -> identity.Agent:
        return identity.Agent(name, str(self.home / ".claude"))

    def begin(self, conversation: str, agent: str = AGENT) -> None:
        """What SessionStart does: the agent's state names its current conversation."""
        state_file.update(
            self.agent(agent),
            lambda d: state.begin_conversation(
                d,
                conversation_id=conversation,
                source="startup",
                project_root=str(self.project),
                pid=None,
                now=NOW,
            ),
            NOW,
            print,
        )


def no_traceback(result: Result) -> None:
    """The command ended on its own terms (an exit code), not by an exception let through."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.output,
        repr(result.exception),
    )
    assert "Traceback" not in result.output


def one_line_error(result: Result, *needles: str) -> str:
    """A refusal as the CLI gives one: exit 1, nothing on stdout, one line on stderr that
    starts `Error: ` and holds each of `needles`. Returns that line."""
    no_traceback(result)
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert result.stdout == "", result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
