"""Issue 36, "done when": the README's Quickstart, typed line by line into a real tmux server,
gives three named panes of three clients guarded, and ``agent-hooks watch`` showing them.

Only the Quickstart's lines are typed, verbatim, each into the pane its comment names: the
install line into pane 0 (in this checkout, where a user cloned agent-hooks), each launch line
into a new pane of the project, the watch line into the last. The real interactive clients run:
Claude Code 2.1.328, Codex 0.169.0 and Gemini CLI 0.61.0, pinned, each against its loopback mock.
Around the lines the test sets only the environment:

* a new HOME (temporary), whose ``~/.profile`` puts the pinned clients (and this interpreter,
  as ``python3``) on the login shell's PATH, as a user's profile puts their clients; every
  pane is a login shell, as tmux starts them, so the panes opened after the install find
  ``agent-hooks`` only through the line ``install.sh --yes`` added to that profile;
* the mock endpoints: variables (``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, their
  keys, a proxy that refuses everything else) and what each client reads from its HOME before
  its first run — Codex's provider table, folder trust, and the answers to each client's
  first-run questions (onboarding, a model-migration notice, approval prompts: Claude Code's
  default mode, Codex's ``approval_policy = "never"``, Gemini's ``auto_edit``);
* ``AGENT_HOOKS_HOME``: the e2e tests' shared venv (``data_home``), so the install is the
  quick "nothing changed" one, under the e2e installs' lock.

Two keystrokes are not Quickstart lines: Enter at install's status-line question (its
default, no), and the one message typed to each agent once it is ready (a person asking it
to work; the mock scripts what the model does, whatever the message says).

Invariants: every tmux command goes to this test's own server (``tmux -S``), killed at the
end with everything in it; every wait polls a condition under a deadline.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from . import claude_cli, readme_quickstart
from .agent_hooks_install import REPO, _lock, data_home
from .claude_cli import claude_env, ensure_claude
from .clients_support import GEMINI_BLOCKED, codex_refused, gemini_refused
from .codex_cli import codex_env, ensure_codex, write_provider_config
from .gemini_cli import FAST_MODEL, ensure_gemini, gemini_env, prepare_home
from .mock_api import MockAnthropicAPI, calls
from .mock_gemini_api import MockGeminiAPI, write_file
from .mock_gemini_api import calls as gemini_calls
from .mock_responses_api import MockResponsesAPI, add_file_patch, apply_patch
from .mock_routes import MAIN, Predicate, turns_done, wait_until
from .npm_cli import CliUnavailable, python_bin_dir
from .tmux_server import POLL, Tmux, poll
from .writers_support import leases, ledger_dir, on, write

SESSION = "myproject"
HELD = "src/app.py"  # the file the README's refusal names
START_TIMEOUT = 60.0  # a client's interactive start on a loaded machine
WORK_TIMEOUT = 60.0
MESSAGE = "Please work on the repository."
PAUSE = 0.3  # seconds between a message and its Enter (tmux_server.Tmux.type_line)
ASK_TRIES, ASK_TIMEOUT = 4, 8.0
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy")

# What each client's screen shows once it waits for a message.
READY = {"claude": "\u276f", "codex": "Ask Codex", "gemini": "Type your message"}


@pytest.fixture(scope="session")
def client_bins() -> dict[str, str]:
    """The pinned clients, by the command name the Quickstart launches."""
    try:
        return {"claude": ensure_claude(), "codex": ensure_codex(), "gemini": ensure_gemini()}
    except CliUnavailable as exc:
        pytest.skip(f"a pinned client is unavailable: {exc.reason}")


def client_path(tmp: Path, bins: dict[str, str]) -> str:
    """A directory holding each pinned client under its command name, this interpreter's bin
    (``python3`` for install.sh and the hooks) and node's, as PATH entries."""
    directory = tmp / "clients-bin"
    directory.mkdir()
    for name, binary in bins.items():
        (directory / name).symlink_to(binary)
    node = shutil.which("node")
    dirs = [str(directory), python_bin_dir(), *([str(Path(node).parent)] if node else [])]
    return ":".join(dict.fromkeys(dirs))


def prepare_clients(home: Path, project: Path, claude_url: str, codex_url: str) -> None:
    """What each client reads from HOME before its first interactive run: the mock endpoints,
    folder trust, and the answers to its first-run questions."""
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {
                    "approved": [claude_cli.DUMMY_API_KEY[-20:]],
                    "rejected": [],
                },
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )
    config = write_provider_config(home, codex_url)
    config.write_text(
        'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
        + config.read_text()
        + f'\n[projects."{project}"]\ntrust_level = "trusted"\n'
        + '\n[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n'
        # what codex_cli.OFFLINE_ARGS switches off on the command line
        + "\n[features]\nplugins = false\napps = false\nremote_plugin = false\n"
        + "\n[analytics]\nenabled = false\n"
    )
    settings = prepare_home(home, trust=[project])
    doc = json.loads(settings.read_text())
    doc["general"]["defaultApprovalMode"] = "auto_edit"
    doc["model"] = {"name": FAST_MODEL}
    settings.write_text(json.dumps(doc, indent=2) + "\n")


def waited(probe: Callable[[], Any], timeout: float) -> bool:
    """Whether ``probe()`` held within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL)
    return True


def ask(tmux: Tmux, pane: str, api: Any, diagnose: Callable[[], str]) -> None:
    """Type MESSAGE into the client in ``pane`` and send it; until its model is asked, send it
    again (a client just started may drop keys, or take the Enter for a new line)."""
    tmux.type_line(pane, MESSAGE, pause=PAUSE)
    for _ in range(ASK_TRIES):
        if waited(lambda: len(api.requests_in(MAIN)) > 0, ASK_TIMEOUT):
            return
        if MESSAGE in tmux.screen(pane):
            tmux("send-keys", "-t", pane, "Enter")
        else:
            tmux.type_line(pane, MESSAGE, pause=PAUSE)
    raise AssertionError(f"the model in pane {pane} was never asked\n{diagnose()}")


def shows(tmux: Tmux, pane: str, text: str) -> Callable[[], bool]:
    """Whether ``pane`` shows ``text`` now."""
    return lambda: text in tmux.screen(pane)


def used_up(api: Any) -> Callable[[], bool]:
    """Whether the mock ``api`` was asked, and served its whole script."""
    return lambda: api.unused_turns == 0 and len(api.requests_in(MAIN)) > 0


def stop_started_from(home: Path) -> None:
    """Stop every process whose program lies in ``home``: the interactive Codex starts its
    app-server as a daemon of its own, from a copy in ``~/.codex/packages``, that outlives
    its pane and the tmux server (its agent's hooks run there: it is the lease's holder)."""
    prefix = f"{home}/".encode()
    for entry in Path("/proc").iterdir():
        try:
            program = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
            if entry.name.isdigit() and program.startswith(prefix):
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue  # gone meanwhile, or not ours to read


def update_patch(rel: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def test_the_quickstart_guards_three_clients_in_three_panes(
    client_bins: dict[str, str], tmux_socket: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    install_line = readme_quickstart.line_starting("./install.sh")
    launches = readme_quickstart.launches()
    watch_line = readme_quickstart.line_starting("agent-hooks watch")
    assert [launch.client for launch in launches] == ["claude", "codex", "gemini"], launches
    watch_pane = re.search(r"\bpane (\d+)\b", watch_line)
    assert watch_pane is not None, f"the watch line names no pane: {watch_line!r}"
    names = {launch.client: launch.name for launch in launches}

    home, project = tmp_path / "home", tmp_path / SESSION
    home.mkdir()
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    project = project.resolve()
    held = project / HELD

    # The models: Claude Code writes src/app.py; Codex, once it did, is refused it and adds
    # its own file; Gemini CLI, once Codex is done, is refused both and writes its own.
    claude_api = MockAnthropicAPI([calls(write(held, "from claude\n")), "Claude done."]).start()
    codex_api = MockResponsesAPI(
        [
            wait_until(on(claude_api, turns_done(MAIN, 1), "claude wrote src/app.py")),
            apply_patch(update_patch(HELD, "from claude", "from codex"), call_id="call_held"),
            apply_patch(add_file_patch("src/codex.py", "from codex"), call_id="call_own"),
            "Codex done.",
        ]
    ).start()
    gemini_api = MockGeminiAPI(
        [
            wait_until(
                Predicate(lambda _state: turns_done(MAIN, 2)(codex_api), "codex added its file")
            ),
            gemini_calls(write_file(str(held), "from gemini\n")),
            gemini_calls(write_file(str(project / "src/codex.py"), "from gemini\n")),
            gemini_calls(write_file(str(project / "src/gemini.py"), "from gemini\n")),
            "Gemini done.",
        ]
    ).start()
    mocks: dict[str, Any] = {"claude": claude_api, "codex": codex_api, "gemini": gemini_api}
    try:
        prepare_clients(home, project, claude_api.url, codex_api.url)
        (home / ".profile").write_text(
            f"export PATH={shlex.quote(client_path(tmp_path, client_bins))}:$PATH\n"
        )
        env = {
            **claude_env(home=home, server_url=claude_api.url),
            **codex_env(home=home, proxy_url=codex_api.proxy_url),
            **gemini_env(home=home, server_url=gemini_api.url),
        }
        # The proxy that keeps Codex off the network would keep pip off its index: the
        # agents' panes get it, opened after the install.
        proxy = {name: env.pop(name) for name in PROXY_VARIABLES}
        env.pop("NO_COLOR")
        prompts = tmp_path / "prompts"
        prompts.mkdir()
        env.update(
            PATH="/usr/bin:/bin",
            TMPDIR=str(tmp_path / "tmp"),
            SHELL="/bin/bash",
            TERM="xterm-256color",
            AGENT_HOOKS_HOME=str(data_home()),
            # each prompt a shell shows appends the last exit status to prompts/<pane number>
            PROMPT_COMMAND=f'echo $? >>{prompts}/"${{TMUX_PANE#%}}"',
        )
        tmux = Tmux(tmux_socket, env)

        def diag() -> str:
            return tmux.screens(panes)

        shell = "bash -l"
        tmux("new-session", "-d", "-s", SESSION, "-x", "300", "-y", "90", "-c", str(REPO), shell)
        panes = {"install": tmux("display-message", "-p", "-t", SESSION, "#{pane_id}").strip()}

        # 1. The install line, in the clone.
        data_home().mkdir(parents=True, exist_ok=True)
        profile = home / ".profile"
        statuses = prompts / panes["install"].lstrip("%")

        def install_waits() -> str | None:
            if "status line? [y/N]" in tmux.screen(panes["install"]):
                return "question"
            done = statuses.read_text().split() if statuses.exists() else []
            return f"exit {done[-1]}" if len(done) > 1 else None

        poll("the first prompt", statuses.exists, 30, lambda: tmux.screens(panes))
        with _lock(data_home() / ".e2e-install.lock"):
            tmux.type_line(panes["install"], install_line)
            if poll("install's question", install_waits, 300, diag) == "question":
                tmux("send-keys", "-t", panes["install"], "Enter")
            poll("install to end", lambda: len(statuses.read_text().split()) > 1, 120, diag)
        assert statuses.read_text().split()[-1] == "0", diag()
        installed = tmux.screen(panes["install"], history=True)
        for name, value in proxy.items():
            tmux("set-environment", "-g", name, value)
        assert "agent-hooks installed for Codex" in installed, installed
        assert "$HOME/.local/bin" in profile.read_text(), profile.read_text()

        # 2. The launch lines and the watch line, each in a new pane of the project, at the
        # index its comment names.
        last = panes["install"]
        for launch in launches:
            last = panes[launch.client] = tmux.split(last, project, shell)
        panes["watch"] = tmux.split(last, project, shell)
        for launch in launches:
            assert tmux.show(panes[launch.client], "#{pane_index}") == str(launch.pane), launch
            tmux.type_line(panes[launch.client], launch.line)
        assert tmux.show(panes["watch"], "#{pane_index}") == watch_pane[1], watch_line
        tmux.type_line(panes["watch"], watch_line)

        # 3. Each agent, once its client waits for a message, is asked to work.
        for launch in launches:
            pane = panes[launch.client]
            poll(
                f"{launch.client} to be ready in pane {launch.pane}",
                shows(tmux, pane, READY[launch.client]),
                START_TIMEOUT,
                diag,
            )
        for launch in launches:
            ask(tmux, panes[launch.client], mocks[launch.client], diag)

        def diagnose() -> str:
            log = home / ".claude" / "agent-hooks.log"
            return (
                tmux.screens(panes)
                + "".join(f"\n--- {c} requests:\n{api.summary()}" for c, api in mocks.items())
                + f"\n--- agent-hooks.log:\n{log.read_text() if log.exists() else '(none)'}"
            )

        for client, api in mocks.items():
            poll(
                f"{client}'s script to be used up",
                used_up(api),
                WORK_TIMEOUT,
                diagnose,
            )
            assert api.errors == [], diagnose()

        # 4. Each agent holds its own file; Codex and Gemini CLI were refused the others'.
        owner = f'agent "{names["claude"]}"'
        codex_refused(codex_api.tool_output("call_held"), HELD, owner)
        assert codex_api.tool_output("call_own").endswith("A src/codex.py\n")
        refused_held, refused_codex, own = gemini_api.tool_results()
        gemini_refused(refused_held, HELD, owner)
        gemini_refused(refused_codex, "src/codex.py", f'Codex agent "{names["codex"]}"')
        assert own.error is None, own
        assert held.read_text() == "from claude\n"
        assert (project / "src/codex.py").read_text() == "from codex\n"
        held_by = {
            path: [(lease["writer"], lease["client"]) for lease in found]
            for path, found in leases(ledger_dir(project)).items()
        }
        assert held_by == {
            HELD: [(names["claude"], "claude")],
            "src/codex.py": [(names["codex"], "codex")],
            "src/gemini.py": [(names["gemini"], "gemini")],
        }, held_by

        # The refusal the README quotes is the one Gemini's model read, but for the time.
        quoted = readme_quickstart.refusal()
        real = str(refused_held.error).removeprefix(GEMINI_BLOCKED)
        ago = r"it last wrote the file \d+ (s|min) ago"
        assert re.sub(ago, "", quoted) == re.sub(ago, "", real), (quoted, real)

        # 5. watch shows the three agents, what each holds, and the two clients' refusals.
        refusals = [
            (names["codex"], "apply_patch", HELD, owner),
            (names["gemini"], "write_file", HELD, owner),
            (names["gemini"], "write_file", "src/codex.py", f'Codex agent "{names["codex"]}"'),
        ]
        holders = [
            (owner, "claude", HELD),
            (f'Codex agent "{names["codex"]}"', "codex", "src/codex.py"),
            (f'Gemini CLI agent "{names["gemini"]}"', "gemini", "src/gemini.py"),
        ]

        def watched() -> bool:
            screen = tmux.screen(panes["watch"])
            rows = [
                *(
                    rf"{re.escape(holder)}\s+{client}\s+lease\s+{path}\s"
                    for holder, client, path in holders
                ),
                *(
                    rf"{agent}\s+{tool}\s+{path} is being changed by {re.escape(holder)}"
                    for agent, tool, path, holder in refusals
                ),
            ]
            return all(name in screen for name in names.values()) and all(
                re.search(row, screen) for row in rows
            )

        poll("watch to show the agents, their leases and the refusals", watched, 30, diagnose)
        print(tmux.screen(panes["watch"]))
        print(f"quickstart e2e: {time.monotonic() - started:.1f} s")
    finally:
        for api in mocks.values():
            api.stop()
        stop_started_from(home)
