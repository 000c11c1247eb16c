"""The real Gemini CLI (0.61.0) runs hooks installed by ``agent_hooks.install.gemini_settings``.

Each test installs a stand-in for agent-hooks' entry script (``<copy>/hooks/entry.py``, so the
installer's ``"<python>" -IS "<entry>" gemini <Event>`` handlers point at it) with the real
installer, runs the real ``gemini -p`` against the mock Gemini API, and asserts on what the hook
was given (its stdin, argv, environment, parent process), on files on disk and on what the model
got back for each function call. The stand-in appends one JSON line per call to
``<copy>/captures.jsonl`` and, for an event named in ``<copy>/behaviour.json`` whose tool input
mentions the rule's ``when``, prints the rule's ``output`` (that is how a hook answers Gemini).

What these tests pin (PROTOCOL.md of ``reference/gemini-cli-0.61.0``, measured again here):

* every event agent-hooks installs fires, with ``argv == [entry, "gemini", Event]``, and the
  anchored tool matcher lets exactly the four tools through;
* Gemini obeys ``{"decision": "deny", "reason": R}`` (the model reads ``Tool execution blocked:
  R``) and IGNORES Claude Code's ``hookSpecificOutput.permissionDecision`` deny: a hook that
  answers Gemini in Claude's shape lets every write through. That is why hooks have a client layer;
* the hook's parent process is the long-lived Gemini worker (the launcher's child): the same pid
  for every hook of a session, alive while the session runs, gone once ``gemini`` exited. The
  liveness rule for leases may use ``os.getppid()`` of a Gemini hook as the holder's process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agent_hooks.install import gemini_settings

from .gemini_cli import FAST_MODEL, RUN_SETTINGS, GeminiResult, user_settings_path
from .mock_gemini_api import FunctionCall as GeminiCall
from .mock_gemini_api import (
    MockGeminiAPI,
    agent_marker,
    calls,
    complete_task,
    invoke_agent,
    read_file,
    replace,
    run_shell_command,
    say,
    write_file,
)
from .mock_routes import Predicate, wait_until

if TYPE_CHECKING:
    from .conftest import GeminiRunner, MockGeminiFactory

# The stand-in for hooks/entry.py. Standard library only: it runs under `-IS`.
_CAPTURE_ENTRY = """\
import json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\\0") if a]
    except OSError:
        return None


def _parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


raw = sys.stdin.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {"unparsed": raw}
ppid = os.getppid()
record = {
    "argv": sys.argv,
    "stdin": payload,
    "pid": os.getpid(),
    "ppid": ppid,
    "ppid_cmdline": _cmdline(ppid),
    "grandparent": _parent_of(ppid),
    "cwd": os.getcwd(),
    "env": {
        k: v
        for k, v in os.environ.items()
        if k.startswith(("GEMINI_", "AGENT_", "CLAUDE_")) and k != "GEMINI_API_KEY"
    },
}
with open(os.path.join(ROOT, "captures.jsonl"), "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\\n")
try:
    with open(os.path.join(ROOT, "behaviour.json"), encoding="utf-8") as handle:
        behaviour = json.load(handle)
except FileNotFoundError:
    behaviour = {}
rule = behaviour.get(sys.argv[-1])
if rule and rule["when"] in json.dumps(payload.get("tool_input", {})):
    print(json.dumps(rule["output"]))
    sys.exit(rule.get("exit", 0))
"""

TOOL_EVENTS = ("BeforeTool", "AfterTool")
REASON = "agent-hooks e2e: that file is held by another agent"


class Copy:
    """A stand-in copy of agent-hooks (``<root>/hooks/entry.py``) and what its hook recorded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entry = root / "hooks" / "entry.py"
        self.entry.parent.mkdir(parents=True)
        self.entry.write_text(_CAPTURE_ENTRY, encoding="utf-8")
        self.log = root / "captures.jsonl"

    def behave(self, event: str, *, when: str, output: dict[str, Any], exit: int = 0) -> None:
        (self.root / "behaviour.json").write_text(
            json.dumps({event: {"when": when, "output": output, "exit": exit}}), encoding="utf-8"
        )

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def events(self) -> list[str]:
        """``Event`` or ``Event(tool)`` per hook call, in order."""
        out = []
        for rec in self.records():
            stdin = rec["stdin"]
            tool = stdin.get("tool_name")
            out.append(f"{stdin['hook_event_name']}({tool})" if tool else stdin["hook_event_name"])
        return out


def _installer(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m agent_hooks.install.gemini_settings ARGS``, as an install script runs it
    (Gemini's system settings of this machine out of the picture, as for the CLI's runs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = os.devnull + "-no-system-settings.json"
    return subprocess.run(
        [sys.executable, "-m", "agent_hooks.install.gemini_settings", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.fixture
def hook_copy(tmp_path: Path, gemini_home: Path) -> Copy:
    """A stand-in copy installed with the real installer into this HOME's ~/.gemini/settings.json."""
    copy = Copy(tmp_path / "agent-hooks")
    done = _installer(
        "install",
        "--gemini-home",
        str(gemini_home / ".gemini"),
        "--python",
        sys.executable,
        "--entry",
        str(copy.entry),
    )
    assert done.returncode == 0, done.stderr
    return copy


def _ok(result: GeminiResult, api: MockGeminiAPI) -> None:
    """The run exited 0 and the mock answered every request without an internal error."""
    print(f"gemini -p took {result.duration:.2f}s")
    assert result.returncode == 0, (
        f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}"
    )
    assert api.errors == []


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(condition: Any, seconds: float = 30.0) -> bool:
    """Poll ``condition()`` until it holds or ``seconds`` passed; its last value."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return bool(condition())
        time.sleep(0.05)
    return True


# --------------------------------------------------------------------------- (a) events


def test_installed_handlers_run_for_every_event_with_the_gemini_argv(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    hook_copy: Copy,
    gemini_home: Path,
    project_dir: Path,
) -> None:
    a, b = project_dir / "a.txt", project_dir / "b.txt"
    session = str(uuid.uuid4())
    api = mock_gemini_api(
        [
            write_file(str(a), "alpha\n"),
            replace("a.txt", "alpha", "beta"),  # relative: as the model wrote it
            run_shell_command("echo hi > b.txt"),
            read_file(str(a)),
            GeminiCall("list_directory", {"dir_path": str(project_dir)}),  # not matched
            say("All done."),
        ]
    )

    result = gemini("Run the scripted steps.", api, session_id=session, agent_name="gmi-1")

    _ok(result, api)
    assert result.stdout.strip() == "All done."
    assert a.read_text() == "beta\n" and b.read_text() == "hi\n"
    assert [r.error for r in api.tool_results()] == [None] * 5
    assert hook_copy.events() == [
        "SessionStart",
        "BeforeTool(write_file)",
        "AfterTool(write_file)",
        "BeforeTool(replace)",
        "AfterTool(replace)",
        "BeforeTool(run_shell_command)",
        "AfterTool(run_shell_command)",
        "BeforeTool(read_file)",
        "AfterTool(read_file)",
        "AfterAgent",
        "SessionEnd",
    ]
    records = hook_copy.records()
    for rec in records:
        event = rec["stdin"]["hook_event_name"]
        assert rec["argv"] == [str(hook_copy.entry), "gemini", event]
        assert rec["stdin"]["session_id"] == session
        assert rec["cwd"] == os.path.realpath(project_dir)
        assert rec["env"]["AGENT_NAME"] == "gmi-1"
        assert rec["env"]["GEMINI_SESSION_ID"] == session
        assert rec["env"]["GEMINI_PROJECT_DIR"] == os.path.realpath(project_dir)
    assert records[0]["stdin"]["source"] == "startup"
    assert records[-1]["stdin"]["reason"] == "exit"
    replace_input = records[3]["stdin"]["tool_input"]
    assert replace_input["file_path"] == "a.txt"  # Gemini passes the model's path through
    assert records[-2]["stdin"]["prompt_response"].strip() == "All done."

    # run_gemini merged its run settings without clobbering the installed hooks, and the
    # installer takes out exactly its handlers afterwards.
    settings = json.loads(user_settings_path(gemini_home).read_text())
    assert gemini_settings.ours_block(settings) == gemini_settings.hooks_block(
        sys.executable, str(hook_copy.entry)
    )
    done = _installer("uninstall", "--gemini-home", str(gemini_home / ".gemini"))
    assert done.returncode == 0, done.stderr
    assert json.loads(user_settings_path(gemini_home).read_text()) == RUN_SETTINGS


# --------------------------------------------------------------------------- (b) deny


DENY_SHAPES = {
    "gemini": {"decision": "deny", "reason": REASON},
    "claude": {
        "hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "permissionDecision": "deny",
            "permissionDecisionReason": REASON,
        }
    },
}


@pytest.mark.parametrize("shape", list(DENY_SHAPES))
def test_gemini_obeys_its_own_deny_shape_and_ignores_claudes(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    hook_copy: Copy,
    project_dir: Path,
    shape: str,
) -> None:
    existing = project_dir / "blocked_existing.txt"
    existing.write_text("old\n")
    new, shell, ok = (
        project_dir / "blocked_new.txt",
        project_dir / "blocked_sh.txt",
        project_dir / "ok.txt",
    )
    hook_copy.behave("BeforeTool", when="blocked", output=DENY_SHAPES[shape])
    api = mock_gemini_api(
        [
            write_file(str(new), "new\n"),
            replace(str(existing), "old", "new"),
            run_shell_command("echo hi > blocked_sh.txt"),
            write_file(str(ok), "ok\n"),
            say("Finished."),
        ]
    )

    result = gemini("Try to write.", api, model=FAST_MODEL)

    _ok(result, api)
    assert ok.read_text() == "ok\n"  # the turn went on after the refusals
    results = api.tool_results()
    assert [r.name for r in results] == ["write_file", "replace", "run_shell_command", "write_file"]
    assert results[-1].error is None
    events = hook_copy.events()
    if shape == "gemini":
        blocked = f"Tool execution blocked: {REASON}"
        assert [r.error for r in results[:3]] == [blocked] * 3
        assert not new.exists() and not shell.exists()
        assert existing.read_text() == "old\n"
        assert events.count("AfterTool(write_file)") == 1  # only ok.txt's
        assert "AfterTool(replace)" not in events
        assert "AfterTool(run_shell_command)" not in events
    else:  # Claude's shape is not Gemini's: nothing was refused
        assert [r.error for r in results] == [None] * 4
        assert new.read_text() == "new\n" and shell.read_text() == "hi\n"
        assert existing.read_text() == "new\n"
        assert events.count("AfterTool(write_file)") == 2
        assert "AfterTool(replace)" in events and "AfterTool(run_shell_command)" in events


# --------------------------------------------------------------------------- (c) the hook's parent


def test_the_hooks_parent_is_the_gemini_worker_alive_during_the_session_and_gone_after(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    hook_copy: Copy,
    project_dir: Path,
) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to read a process's parent and state")
    seen: dict[str, Any] = {}

    def worker_seen_alive(_state: object) -> bool:
        """Looked at from the test while the session runs (between two model turns)."""
        first = next(iter(hook_copy.records()), None)
        if first is None:
            return False
        seen["pid"] = first["ppid"]
        seen["alive"] = _alive(first["ppid"])
        return True

    api = mock_gemini_api(
        [
            write_file(str(project_dir / "one.txt"), "1\n"),
            wait_until(Predicate(worker_seen_alive, "the worker seen alive"), timeout=60),
            calls(
                write_file(str(project_dir / "two.txt"), "2\n"),
                run_shell_command("echo 3 > three.txt"),
            ),
            say("Done."),
        ]
    )
    launcher: list[int] = []

    result = gemini(
        "Write three files.", api, model=FAST_MODEL, on_start=lambda p: launcher.append(p.pid)
    )

    _ok(result, api)
    records = hook_copy.records()
    assert records[0]["stdin"]["hook_event_name"] == "SessionStart"
    assert records[-1]["stdin"]["hook_event_name"] == "SessionEnd"
    parents = {r["ppid"] for r in records}
    assert len(parents) == 1, f"hooks of one session had several parents: {parents}"
    (worker,) = parents
    assert worker != launcher[0] == result.pid
    assert {r["grandparent"] for r in records} == {result.pid}  # the worker is the launcher's child
    cmdline = records[0]["ppid_cmdline"]
    assert cmdline is not None and cmdline[0].endswith("node")
    assert any(arg.endswith("gemini") for arg in cmdline) and "-p" in cmdline
    assert seen == {"pid": worker, "alive": True}
    assert _wait_for(lambda: not _alive(worker)), f"worker {worker} outlived gemini"
    print(f"launcher {result.pid}, worker {worker}: {' '.join(cmdline[:3])} ...")


# --------------------------------------------------------------------------- subagents


def test_a_subagents_writes_pass_the_same_hooks_and_cannot_be_told_from_its_parents(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    hook_copy: Copy,
    project_dir: Path,
) -> None:
    """Gemini's subagents (``invoke_agent``) run their tools in the same worker, through the same
    BeforeTool/AfterTool handlers, with the parent's session id and no agent id: a deny reaches
    the subagent's model, and nothing in the payload tells the subagent's writes from the
    parent's (PROTOCOL.md §3)."""
    marker = agent_marker("A")
    blocked, ok = project_dir / "blocked_sub.txt", project_dir / "ok_sub.txt"
    hook_copy.behave("BeforeTool", when="blocked", output=DENY_SHAPES["gemini"])
    api = mock_gemini_api(
        [invoke_agent(f"{marker} write two files"), say("Main done.")],
        agents={
            marker: [
                write_file(str(blocked), "sub\n"),
                write_file(str(ok), "sub\n"),
                complete_task("Sub done."),
            ]
        },
    )

    result = gemini("Delegate.", api, model=FAST_MODEL)

    _ok(result, api)
    assert not blocked.exists() and ok.read_text() == "sub\n"
    assert [r.error for r in api.tool_results(marker)] == [
        f"Tool execution blocked: {REASON}",
        None,
    ]
    assert [r.name for r in api.tool_results()] == ["invoke_agent"]
    assert hook_copy.events() == [
        "SessionStart",
        "BeforeTool(write_file)",
        "BeforeTool(write_file)",
        "AfterTool(write_file)",
        "AfterAgent",
        "SessionEnd",
    ]
    records = hook_copy.records()
    assert len({r["stdin"]["session_id"] for r in records}) == 1
    assert len({r["ppid"] for r in records}) == 1
    (before,) = {
        frozenset(r["stdin"]) for r in records if r["stdin"]["hook_event_name"] == "BeforeTool"
    }
    assert before == {
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "timestamp",
        "tool_name",
        "tool_input",
    }


# --------------------------------------------------------------------------- installer facts


def test_a_project_install_runs_only_once_the_folder_is_trusted(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    gemini_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    copy = Copy(tmp_path / "project-copy")
    args = ["--gemini-home", str(gemini_home / ".gemini"), "--project", str(project_dir)]
    done = _installer("install", *args, "--python", sys.executable, "--entry", str(copy.entry))
    assert done.returncode == 0 and "is not trusted by Gemini CLI" in done.stdout
    assert _installer("status", *args).returncode == 3

    untrusted = gemini("Say hi.", mock_gemini_api(["Hi."]), model=FAST_MODEL, trust=False)

    assert untrusted.returncode == 55, untrusted.stderr  # what the installer's note says
    assert copy.records() == []
    done = _installer(
        "install", *args, "--trust", "--python", sys.executable, "--entry", str(copy.entry)
    )
    assert done.returncode == 0 and "not trusted" not in done.stdout
    assert _installer("status", *args).returncode == 0
    api = mock_gemini_api([write_file(str(project_dir / "p.txt"), "p\n"), "Done."])

    trusted = gemini("Write p.", api, model=FAST_MODEL, trust=False)

    _ok(trusted, api)
    # Gemini itself tells the user, by our handlers' names, that project hooks will run, and
    # records them in ~/.gemini/trusted_hooks.json (its file: uninstall leaves it alone).
    assert "project-level hooks have been detected" in trusted.stderr
    assert "agent-hooks-BeforeTool" in trusted.stderr
    assert (gemini_home / ".gemini" / "trusted_hooks.json").exists()
    assert copy.events() == [
        "SessionStart",
        "BeforeTool(write_file)",
        "AfterTool(write_file)",
        "AfterAgent",
        "SessionEnd",
    ]


@pytest.mark.parametrize(
    "config",
    [
        {"enabled": False},
        {"disabled": [f"agent-hooks-{event}" for event in gemini_settings.EVENTS]},
    ],
    ids=["all hooks", "ours by name"],
)
def test_hooks_disabled_in_settings_run_nowhere_as_status_says(
    gemini: GeminiRunner,
    mock_gemini_api: MockGeminiFactory,
    hook_copy: Copy,
    gemini_home: Path,
    project_dir: Path,
    config: dict[str, Any],
) -> None:
    path = user_settings_path(gemini_home)
    settings = json.loads(path.read_text())
    path.write_text(json.dumps({**settings, "hooksConfig": config}))
    done = _installer("status", "--gemini-home", str(gemini_home / ".gemini"))
    assert done.returncode == 3 and gemini_settings.HOOKS_DISABLED in done.stdout
    api = mock_gemini_api([write_file(str(project_dir / "x.txt"), "x\n"), "Done."])

    result = gemini("Write x.", api, model=FAST_MODEL)

    _ok(result, api)
    assert (project_dir / "x.txt").read_text() == "x\n"
    assert hook_copy.records() == []
