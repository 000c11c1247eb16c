"""Issue 12, "done when" (issue 36: the recipe is now ``agent-hooks launch claude``): the
README's launch line, run in tmux panes with the real ``claude`` CLI, names each agent after its
session and pane, and relaunching an agent in its pane keeps its name, whatever the interactive
client did to the pane's title meanwhile.

The launch line is read from README.md's Quickstart (so the two cannot drift) and typed into the panes of a private
tmux server laid out as ntm lays out a project: session ``myproject``, a user pane 0, agent panes
1 and 2 titled ``myproject__cc_1`` and ``myproject__cc_2``. Only the recipe's last word,
``claude``, is replaced: by the non-interactive ``claude -p`` the e2e harness drives against the
mock API. The interactive client retitles its pane (``✳ Claude Code``) and clears the title on
exit; the test does the same with the same escape sequence (OSC 2) and relaunches. (``claude -p``
itself leaves the pane's title alone: observed with the pinned 2.1.328.)

Invariants:

* Every tmux command goes to a server of this test's own (``tmux -S <socket> -f /dev/null``),
  started with an environment built from scratch and killed at teardown; the panes run
  ``bash --norc --noprofile``.
* Each launch talks to its own mock API (exported as ``ANTHROPIC_BASE_URL`` on the line typed),
  so what the model was told at SessionStart is read from that launch's first request.
* A launch is finished when its exit status file appears; every wait polls under a deadline.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agent_hooks import identity

from . import readme_quickstart
from .agent_hooks_install import Installation
from .claude_cli import claude_env
from .mock_api import MockAnthropicAPI, say
from .mock_routes import file_exists, wait_until
from .tmux_server import Tmux, poll

if TYPE_CHECKING:
    from .conftest import InstallAgentHooks, MockApiFactory

SESSION = "myproject"
RECIPE_START = "agent-hooks launch "
# The recipe the README gave before issue 12: the name is whatever the pane is titled at launch.
OLD_RECIPE = """AGENT_NAME="$(tmux display-message -t "$TMUX_PANE" -p '#{pane_title}')" claude"""
CLIENT_TITLE = "✳ Claude Code"  # what the interactive client titles its pane
LAUNCH_TIMEOUT = 90.0  # one claude -p run; generous for a loaded machine


# --------------------------------------------------------------------------- the recipe


def readme_recipe() -> str:
    """The README's launch line for Claude Code: the Quickstart's ``agent-hooks launch claude``
    line, without its comment."""
    try:
        found = [launch for launch in readme_quickstart.launches() if launch.client == "claude"]
    except readme_quickstart.QuickstartMissing as exc:
        pytest.fail(f"README.md: {exc}: the launch recipe this test runs is missing")
    assert len(found) == 1, f"README.md gives {len(found)} launch lines for claude: {found}"
    recipe = found[0].line.partition("#")[0].strip()
    assert recipe.startswith(RECIPE_START), recipe
    return recipe


@pytest.fixture
def recipe() -> str:
    """The README's recipe (first in a test's arguments: a missing recipe fails before setup)."""
    return readme_recipe()


def with_invocation(recipe: str, invocation: str) -> str:
    """``recipe`` with its last word ``claude`` replaced by ``invocation``, the rest verbatim."""
    assert recipe.endswith(" claude"), f"the recipe does not end with the word claude: {recipe!r}"
    return recipe[: -len("claude")] + invocation


# --------------------------------------------------------------------------- tmux


def retitle(tmux: Tmux, pane: str, title: str) -> None:
    """Title ``pane`` the way a program in it does (OSC 2, as Claude Code's client does), and
    wait until tmux shows the new title."""
    tmux.type_line(pane, f"printf '\\033]2;%s\\033\\\\' {shlex.quote(title)}")

    def titled() -> bool:
        return tmux.show(pane, "#{pane_title}") == title

    poll(f"pane {pane} to be titled {title!r}", titled, 30, lambda: tmux.screen(pane))


# --------------------------------------------------------------------------- launches


@dataclass
class Launch:
    """One recipe typed into one pane, against its own mock API."""

    pane: str
    api: MockAnthropicAPI
    status_file: Path


@dataclass
class Project:
    """The tmux session of one project, its agents' HOME and the claude invocation."""

    tmux: Tmux
    install: Installation
    root: Path
    claude_bin: str
    runs: Path
    mock_api: MockApiFactory
    panes: list[str] = field(default_factory=list)  # the agents' panes, by id
    launches: int = 0

    def launch(self, pane: str, recipe: str, api: MockAnthropicAPI | None = None) -> Launch:
        """Type ``recipe`` (its ``claude`` made a ``claude -p`` run) into ``pane``."""
        self.launches += 1
        api = api if api is not None else self.mock_api([say("Hello from the mock.")])
        status = self.runs / f"launch-{self.launches}.status"
        invocation = (
            f"{shlex.quote(self.claude_bin)} -p {shlex.quote(f'launch {self.launches}: hi')} "
            "--permission-mode bypassPermissions"
        )
        line = (
            f"export ANTHROPIC_BASE_URL={api.url}; {with_invocation(recipe, invocation)}; "
            f"echo $? >{status}.tmp && mv {status}.tmp {status}"
        )
        self.tmux.type_line(pane, line)
        return Launch(pane, api, status)

    def wait_for_request(self, launch: Launch) -> None:
        """Wait until the model of ``launch`` was sent its first request (SessionStart is done)."""

        def requested() -> bool:
            return bool(launch.api.main_requests)

        what = f"the first request from pane {launch.pane}"
        poll(what, requested, LAUNCH_TIMEOUT, lambda: self.diagnose(launch))

    def wait(self, *launches: Launch) -> None:
        """Wait until every launch has exited, and check each exited 0."""
        for launch in launches:
            self._wait_one(launch)

    def _wait_one(self, launch: Launch) -> None:
        status = launch.status_file

        def exited() -> str:  # written whole (a rename): never empty once there
            return status.read_text() if status.exists() else ""

        what = f"the launch in pane {launch.pane} to exit"
        code = poll(what, exited, LAUNCH_TIMEOUT, lambda: self.diagnose(launch)).strip()
        assert code == "0", f"claude exited {code}\n{self.diagnose(launch)}"
        assert launch.api.errors == [], self.diagnose(launch)

    def diagnose(self, launch: Launch) -> str:
        log = self.install.log_path
        return (
            f"pane {launch.pane}:\n{self.tmux.screen(launch.pane, history=True)}\n"
            f"requests:\n{launch.api.summary()}\n"
            f"agent-hooks.log:\n{log.read_text() if log.exists() else '(none)'}"
        )

    def state_files(self) -> set[str]:
        return {p.name for p in self.install.state_dir.glob("*.json") if p.name != "settings.json"}


def told(launch: Launch) -> str:
    """The SessionStart context the model of ``launch`` was given: in its first request, the
    text after ``SessionStart hook additional context:`` up to the client's next section (the
    client appends its ``# Environment`` after a blank line; agent-hooks' lines have none)."""
    text = launch.api.first_main_request_text()
    found = re.search(r"SessionStart hook additional context: (.*?)(?:\n\n|$)", text, re.DOTALL)
    assert found, f"no SessionStart context in the first request:\n{text[:3000]}"
    return found[1]


def conversation_of(launch: Launch) -> str:
    """The conversation id SessionStart named to the model of ``launch``."""
    found = re.search(r"; conversation (\S+) \(startup\)", told(launch))
    assert found, told(launch)
    return found[1]


# --------------------------------------------------------------------------- the test


@pytest.fixture
def project(
    claude_bin: str,
    claude_home: Path,
    mock_api: MockApiFactory,
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    tmux_socket: Path,
    tmp_path: Path,
) -> Project:
    """ntm's layout: session ``myproject`` in the git project, user pane 0, agent panes 1 and 2
    titled ``myproject__cc_1`` and ``myproject__cc_2``; agent-hooks installed into HOME."""
    install = install_agent_hooks()
    env = claude_env(home=claude_home, server_url="", extra_env=install.claude_env())
    del env["ANTHROPIC_BASE_URL"]  # each launch exports its own mock's
    tmux = Tmux(tmux_socket, env)
    root = git_project.resolve()
    shell = "bash --norc --noprofile"
    tmux("new-session", "-d", "-s", SESSION, "-x", "200", "-y", "60", "-c", str(root), shell)
    panes = [tmux.show(SESSION, "#{pane_id}")]  # pane 0, the user's
    for index in (1, 2):  # split the last pane, so that the new one comes last
        split = ("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", panes[-1], "-c", str(root))
        panes.append(tmux(*split, shell).strip())
        tmux("select-pane", "-t", panes[-1], "-T", f"{SESSION}__cc_{index}")
    runs = tmp_path / "runs"
    runs.mkdir()
    return Project(tmux, install, root, claude_bin, runs, mock_api, panes=panes[1:])


def test_relaunching_in_the_pane_keeps_the_agents_name(recipe: str, project: Project) -> None:
    tmux, install = project.tmux, project.install
    one, two = project.panes
    names = {pane: f"{SESSION}__cc_{tmux.show(pane, '#{pane_index}')}" for pane in (one, two)}
    # On a fresh ntm pane the recipe's name is the pane's title.
    assert names == {pane: tmux.show(pane, "#{pane_title}") for pane in (one, two)}
    assert sorted(names.values()) == ["myproject__cc_1", "myproject__cc_2"]

    # 1. Both panes launch; each model's first request is held until both agents were seen
    # active side by side, under two names.
    release = project.runs / "release"
    held = [
        project.mock_api([wait_until(file_exists(release), timeout=LAUNCH_TIMEOUT), say("Hi.")])
        for _ in (one, two)
    ]
    first = {
        pane: project.launch(pane, recipe, api) for pane, api in zip((one, two), held, strict=True)
    }
    for launch in first.values():
        project.wait_for_request(launch)
    agents = {row["agent"]: row for row in install.cli_json("agents", cwd=project.root)}
    assert set(agents) == set(names.values()), agents
    assert all(
        row["active"] and row["project_root"] == str(project.root) for row in agents.values()
    )
    release.touch()
    project.wait(*first.values())

    # 2. The interactive client titles its pane, and clears the title on exit: pane 1 is left
    # with the client's title, pane 2 with none. Relaunch in both.
    retitle(tmux, one, CLIENT_TITLE)
    retitle(tmux, two, "")
    second = {pane: project.launch(pane, recipe) for pane in (one, two)}
    project.wait(*second.values())

    for pane, name in names.items():
        context = told(second[pane])
        assert context.startswith(
            f'agent-hooks: you are agent "{name}" in project {project.root}'
        ), context
        assert "Warning" not in context and "not a chosen name" not in context, context
        doc = install.state(name)
        assert doc["agent_name"] == name
        before, after = conversation_of(first[pane]), conversation_of(second[pane])
        assert before != after
        assert [(c["id"], c["source"]) for c in doc["conversations"]] == [
            (before, "startup"),
            (after, "startup"),
        ], doc["conversations"]
        assert (doc["conversation_id"], doc["registered"], doc["active"]) == (after, True, False)
    assert project.state_files() == {f"state-{name}.json" for name in names.values()}
    assert not (install.state_dir / identity.SHARED_STATE_FILE).exists()

    # 3. The contrast: the old recipe, launched in the same panes now, takes the title the client
    # left behind. Pane 1's agent is named "✳ Claude Code" and warned; pane 2's has no name at all
    # and falls back to the shared agent-state.json. Neither continues its agent.
    old = {pane: project.launch(pane, OLD_RECIPE) for pane in (one, two)}
    project.wait(*old.values())
    doc = install.state(CLIENT_TITLE)
    assert doc["agent_name"] == CLIENT_TITLE
    assert identity.suspicious(doc["agent_name"]) is not None
    warned = told(old[one])
    assert f'you are agent "{CLIENT_TITLE}"' in warned
    assert f"Warning: AGENT_NAME {CLIENT_TITLE!r} is probably not a chosen name" in warned, warned
    unnamed = told(old[two])
    assert unnamed.startswith("agent-hooks: you are an agent without AGENT_NAME"), unnamed
    assert project.state_files() == {
        *(f"state-{name}.json" for name in names.values()),
        f"state-{CLIENT_TITLE}.json",
        identity.SHARED_STATE_FILE,
    }
    for name in names.values():
        assert len(install.state(name)["conversations"]) == 2
