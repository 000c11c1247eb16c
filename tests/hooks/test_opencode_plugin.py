"""agent-hooks' opencode plugin (hooks/opencode/agent-hooks.js), run under Node.js as opencode
runs it — imported, its function called once, its hooks awaited — with the inputs opencode
1.18.33 gave a plugin (copied from the reference: tests/fixtures/payloads/opencode/plugin/)
and the real hook entry behind it (or a stand-in where a test needs one).

What it must do: a refusal is thrown with exactly the hook's text, and nothing else ever
throws; every hook is spawned asynchronously (calls side by side take as long as one, and
the event loop keeps turning) with opencode's environment; a hook that cannot start, exits
with a failure, answers what is not JSON or outlives its limit lets the call through, said
in agent-hooks' log; a child session is a writer of its own; context reaches the model
through the tool's result and the session's system prompt.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import opencode_plugin
from hook_runner import ENTRY, HookRunner

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "hooks" / "opencode" / "agent-hooks.js"
DRIVER = Path(__file__).with_name("opencode_plugin_driver.mjs")
RAW = ROOT / "tests" / "fixtures" / "payloads" / "opencode" / "plugin"
CAPTURED = ROOT / "tests" / "fixtures" / "payloads" / "opencode"
MARKER, PLACEHOLDER = opencode_plugin.MARKER, opencode_plugin.PLACEHOLDER
OC, CC = "proj__oc_1", "proj__cc_1"
PARENT = "ses_dda6c4856ffejnvZX6qUfRXH1A"  # the reference's subagent run: the parent session
CHILD = "ses_dda6c38f1ffeYWJAU1aPc1mop8"  # ... and its child
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


def render(argv: list[str]) -> str:
    """The plugin as the installer writes it (`install.opencode_plugin.render`)."""
    return opencode_plugin.render(TEMPLATE.read_text(), argv)


def raw(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RAW / f"{name}.json").read_text())
    return doc


class Plugin:
    """The rendered plugin in a test's directory, run by the driver."""

    def __init__(self, run_hook: HookRunner, tmp_path: Path, argv: list[str] | None = None):
        self.run_hook = run_hook
        self.dir = tmp_path / "plugin"
        self.dir.mkdir(exist_ok=True)
        self.path = self.dir / "agent-hooks.js"
        self.path.write_text(render(argv or [sys.executable, "-IS", ENTRY, "opencode"]))

    def run(
        self,
        steps: list[list[dict[str, Any]]],
        *,
        sessions: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        agent: str = OC,
        timeout: float = 120,
    ) -> dict[str, Any]:
        scenario = {
            "directory": str(self.run_hook.project),
            "steps": steps,
            "sessions": sessions or {},
            "env": env or {},
        }
        path = self.dir / "scenario.json"
        path.write_text(
            json.dumps(scenario).replace("/home/dev/myproject", str(self.run_hook.project))
        )
        hook_env = self.run_hook.env(agent, client="opencode")
        hook_env.pop("OPENCODE_PID")  # opencode's own: the driver sets it, as opencode does
        assert NODE is not None
        done = subprocess.run(
            [NODE, str(DRIVER), str(self.path), str(path)],
            capture_output=True,
            text=True,
            env=hook_env,
            cwd=self.run_hook.project,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result


def event(doc: dict[str, Any]) -> dict[str, Any]:
    return {"hook": "event", "input": {"event": doc["event"]}}


def tool(hook: str, name: str, **args: Any) -> dict[str, Any]:
    """A tool call as opencode passes it: `tool.execute.before(input, {args})` or
    `tool.execute.after(input + args, {title, output, metadata})`, from a reference capture."""
    doc = raw(f"{hook}_{name}")
    if hook == "tool.execute.before":
        output = dict(doc["output"])
        output["args"] = {**output["args"], **args}
        return {"hook": hook, "input": doc["input"], "output": output}
    step_input = dict(doc["input"])
    step_input["args"] = {**step_input["args"], **args}
    return {"hook": hook, "input": step_input, "output": dict(doc["output"])}


def claude_write(run_hook: HookRunner, rel: str) -> None:
    payload = run_hook.payload(
        "PreToolUse_Write", tool_input={"file_path": str(run_hook.project / rel), "content": "x"}
    )
    assert run_hook("PreToolUse", payload, agent=CC).out is None


def stand_in(tmp_path: Path, body: str) -> list[str]:
    """A hook command that is a small Python script (the entry's argv shape)."""
    script = tmp_path / "stand_in.py"
    script.write_text(body)
    return [sys.executable, "-I", str(script), "opencode"]


CAPTURE = """
import json, os, sys
with open(os.environ["CAPTURE"], "a") as out:
    out.write(json.dumps({"argv": sys.argv[1:], "stdin": json.load(sys.stdin),
                          "ppid": os.getppid(),
                          "env": {k: os.environ.get(k) for k in ("OPENCODE_PID", "LATE")}}) + "\\n")
"""


def captured(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- the template


def test_the_template_is_the_installers_contract() -> None:
    text = TEMPLATE.read_text()
    assert text.split("\n", 1)[0] == MARKER
    assert text.count(PLACEHOLDER) == 1
    imports = [line for line in text.splitlines() if line.startswith("import ")]
    assert imports and all(line.rstrip(";").endswith(('"node:child_process"', '"node:fs"',
                                                      '"node:os"', '"node:path"'))
                           for line in imports)  # fmt: skip


def test_the_plugin_exports_one_function(run_hook: HookRunner, tmp_path: Path) -> None:
    """opencode calls every function a plugin module exports: there is exactly one."""
    result = Plugin(run_hook, tmp_path).run([])
    assert result["exports"] == ["AgentHooks"]


# --------------------------------------------------------------------------- refusals


def test_a_held_file_is_refused_with_exactly_the_hooks_text(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    claude_write(run_hook, "new.txt")
    held = str(run_hook.project / "new.txt")
    plugin = Plugin(run_hook, tmp_path)
    result = plugin.run(
        [[event(raw("event_session.created"))], [tool("tool.execute.before", "write")]]
    )
    (refused,) = result["groups"][1]["calls"]
    assert refused["isError"] is True
    assert refused["thrown"].startswith(f'agent-hooks: new.txt is being changed by agent "{CC}": ')
    # the hook's own answer, word for word
    payload = run_hook.payload(
        "opencode/tool.execute.before_write", tool_input={"filePath": held, "content": "x"}
    )
    answer = run_hook("tool.execute.before", payload, agent=OC, client="opencode").out
    assert answer is not None and refused["thrown"] == answer["deny"]
    assert [item["writer"] for item in run_hook.leases()["new.txt"]] == [CC]


def test_an_allowed_call_leases_for_opencode_held_by_its_process(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    result = Plugin(run_hook, tmp_path).run(
        [[event(raw("event_session.created"))], [tool("tool.execute.before", "write")]]
    )
    (call,) = result["groups"][1]["calls"]
    assert "thrown" not in call
    (lease,) = run_hook.leases()["new.txt"]
    assert (lease["writer"], lease["client"], lease["pid"]) == (OC, "opencode", result["pid"])


def test_context_reaches_the_model_through_the_tools_result_and_the_system_prompt(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    claude_write(run_hook, "existing.txt")
    (run_hook.project / "new.txt").write_text("hello\n")
    plugin = Plugin(run_hook, tmp_path)
    session = raw("event_session.created")["event"]["properties"]["sessionID"]
    system: dict[str, Any] = {"system": ["opencode's own"]}
    refused = tool("tool.execute.before", "edit")
    result = plugin.run(
        [
            [event(raw("event_session.created"))],
            [{"hook": "experimental.chat.system.transform", "input": {"sessionID": session},
              "output": system}],
            [refused],
        ]
    )  # fmt: skip
    prompt = result["groups"][1]["calls"][0]["output"]["system"]
    assert prompt[0] == "opencode's own" and f'you are agent "{OC}"' in prompt[1]
    assert "thrown" in result["groups"][2]["calls"][0]
    run_hook("SessionEnd", "SessionEnd", agent=CC)  # the holder is done with it
    after = plugin.run([[tool("tool.execute.after", "write")]])
    (told,) = after["groups"][0]["calls"]
    assert told["output"]["output"].startswith("Wrote file successfully.\n\nagent-hooks: ")
    assert "existing.txt is free now" in told["output"]["output"]


def test_a_child_session_is_a_writer_of_its_own(run_hook: HookRunner, tmp_path: Path) -> None:
    """The session map from `session.created`: the child's calls carry its own id and agent,
    and its parent's session as the conversation; its idle ends its leases."""
    capture = tmp_path / "captured.jsonl"
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, CAPTURE))
    plugin.run(
        [
            [{"hook": "event", "input": {"event": {"type": "session.created", "properties": {
                "sessionID": PARENT, "info": {"id": PARENT, "agent": "build"}}}}}],
            [event(raw("event_session.created_subagent"))],
            [tool("tool.execute.before", "write_subagent"),
             tool("tool.execute.before", "bash_subagent")],
            [{"hook": "event", "input": {"event": {"type": "session.idle",
                                                   "properties": {"sessionID": CHILD}}}}],
            [{"hook": "dispose", "input": None, "output": None}],
        ],
        env={"CAPTURE": str(capture)},
    )  # fmt: skip
    by_event: dict[str, list[dict[str, Any]]] = {}
    for record in captured(capture):
        by_event.setdefault(record["argv"][1], []).append(record["stdin"])
    assert [p["session_id"] for p in by_event["session.created"]] == [PARENT]
    (started,) = by_event["subagent.created"]
    assert (started["session_id"], started["agent_id"], started["agent_type"]) == (
        PARENT,
        CHILD,
        "general",
    )
    for payload in by_event["tool.execute.before"]:
        assert (payload["session_id"], payload["agent_id"], payload["agent_type"]) == (
            PARENT,
            CHILD,
            "general",
        )
        assert payload["cwd"] == str(run_hook.project)
    (idle,) = by_event["subagent.idle"]
    assert idle["agent_id"] == CHILD
    assert [p["session_id"] for p in by_event["dispose"]] == [PARENT]  # roots only
    assert "agent_id" not in by_event["dispose"][0]


def test_the_payloads_are_the_captured_ones(run_hook: HookRunner, tmp_path: Path) -> None:
    """Fed what opencode gave a plugin, the plugin sends what it sent under the real
    opencode (tests/fixtures/payloads/opencode/, ids and paths aside)."""
    capture = tmp_path / "captured.jsonl"
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, CAPTURE))
    plugin.run(
        [
            [event(raw("event_session.created"))],
            [tool("tool.execute.before", "write"), tool("tool.execute.before", "bash")],
            [tool("tool.execute.after", "write"), tool("tool.execute.after", "read")],
        ],
        env={"CAPTURE": str(capture)},
    )

    def shape(doc: dict[str, Any]) -> dict[str, Any]:
        keys = dict.fromkeys(doc, "…")
        for nested in ("tool_input", "tool_response"):
            if isinstance(doc.get(nested), dict):
                keys[nested] = sorted(doc[nested])
        return keys

    for record in captured(capture):
        sent = record["stdin"]
        tool_name = sent.get("tool_name")
        name = sent["hook_event_name"] + (f"_{tool_name}" if tool_name else "")
        expected = json.loads((CAPTURED / f"{name}.json").read_text())["stdin"]
        assert shape(sent) == shape(expected), name
        assert sent["hook_event_name"] == record["argv"][1]


def test_a_session_never_announced_is_looked_up_and_started(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    """A resumed session (no `session.created` in this process): its parent is asked of
    opencode, it is started (`resume`), and its calls come after."""
    capture = tmp_path / "captured.jsonl"
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, CAPTURE))
    result = plugin.run(
        [[tool("tool.execute.before", "write_subagent")]],
        sessions={CHILD: {"id": CHILD, "parentID": PARENT, "agent": "general"},
                  PARENT: {"id": PARENT}},
        env={"CAPTURE": str(capture)},
    )  # fmt: skip
    assert result["looked"] == [CHILD, PARENT]
    sent = [(r["argv"][1], r["stdin"]) for r in captured(capture)]
    assert [name for name, _ in sent] == [
        "session.created",
        "subagent.created",
        "tool.execute.before",
    ]
    assert sent[0][1]["source"] == "resume" and sent[0][1]["session_id"] == PARENT
    assert (sent[2][1]["session_id"], sent[2][1]["agent_id"]) == (PARENT, CHILD)


def test_shell_commands_are_told_their_conversation(run_hook: HookRunner, tmp_path: Path) -> None:
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, "import sys; sys.stdin.read()"))
    env: dict[str, Any] = {"env": {"PATH": "/bin"}}
    result = plugin.run(
        [
            [{"hook": "event", "input": {"event": {"type": "session.created", "properties": {
                "info": {"id": PARENT}}}}}],
            [event(raw("event_session.created_subagent"))],
            [{"hook": "shell.env", "input": {"sessionID": CHILD, "callID": "c", "cwd": "/"},
              "output": env}],
        ]
    )  # fmt: skip
    assert result["groups"][2]["calls"][0]["output"]["env"] == {
        "PATH": "/bin",
        "OPENCODE_SESSION_ID": PARENT,
    }


# --------------------------------------------------------------------------- asynchronous


def test_calls_side_by_side_run_side_by_side_and_the_loop_keeps_turning(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    """Three before-hooks of one model response, each taking 1.5 s: together they take
    about as long as one (a synchronous spawn would take 4.5 s and stop opencode's loop)."""
    slow = stand_in(tmp_path, "import sys, time; sys.stdin.read(); time.sleep(1.5)")
    plugin = Plugin(run_hook, tmp_path, slow)
    calls = [tool("tool.execute.before", name) for name in ("write", "edit", "bash")]
    result = plugin.run([calls])
    (group,) = result["groups"]
    assert all("thrown" not in call for call in group["calls"])
    assert 1500 <= group["ms"] < 3500, group["ms"]
    assert group["ticks"] > 100  # a 5 ms timer fired all along


def test_the_hook_gets_opencodes_whole_environment(run_hook: HookRunner, tmp_path: Path) -> None:
    """What opencode sets in its own process.env after it started (OPENCODE_PID) reaches the
    hook: the environment is passed explicitly; the hook's parent is opencode's process."""
    capture = tmp_path / "captured.jsonl"
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, CAPTURE))
    result = plugin.run(
        [[tool("tool.execute.before", "write")]], env={"CAPTURE": str(capture), "LATE": "set"}
    )
    records = captured(capture)
    assert records and all(r["ppid"] == result["pid"] for r in records)
    assert all(r["env"] == {"OPENCODE_PID": str(result["pid"]), "LATE": "set"} for r in records)


# --------------------------------------------------------------------------- failing open


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["/nonexistent/python3", "-IS", "/nonexistent/entry.pyc", "opencode"],
         "the hook could not be started (spawn /nonexistent/python3 ENOENT)"),
        ([sys.executable, "-IS", "/nonexistent/entry.pyc", "opencode"], "the hook exited 2: "),
        (["/bin/sh", "-c", "cat >/dev/null; echo 'not json'", "sh", "opencode"],
         "the hook's answer is not a JSON object: \"not json\""),
        (["/bin/sh", "-c", "cat >/dev/null; echo '[\"deny\"]'", "sh", "opencode"],
         "the hook's answer is not a JSON object"),
        (["/bin/sh", "-c", "cat >/dev/null; echo '{\"deny\": \"x\"}'; exit 3", "sh", "opencode"],
         "the hook exited 3"),
    ],
    ids=["no interpreter", "no entry file", "not JSON", "not an object", "a deny, then a failure"],
)  # fmt: skip
def test_a_hook_that_fails_lets_the_call_through_and_is_logged(
    run_hook: HookRunner, tmp_path: Path, argv: list[str], said: str
) -> None:
    """Uninstalled, broken or garbled: never a refusal (opencode takes any throw as one)."""
    plugin = Plugin(run_hook, tmp_path, argv)
    result = plugin.run(
        [[event(raw("event_session.created"))],
         [tool("tool.execute.before", "write"), tool("tool.execute.before", "bash")],
         [tool("tool.execute.after", "write")]]
    )  # fmt: skip
    for group in result["groups"]:
        assert all("thrown" not in call for call in group["calls"]), group
    after = result["groups"][2]["calls"][0]["output"]
    assert after["output"] == "Wrote file successfully."  # nothing added
    logged = [line for line in run_hook.log_lines() if "event=tool.execute.before" in line]
    assert len(logged) == 2 and all(said in line for line in logged), logged
    assert all(f"agent={OC} " in line and line.endswith("; allowed (fail open)") for line in logged)


def test_a_hook_that_outlives_its_limit_is_killed_and_the_call_goes_on(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    pid_file = tmp_path / "hook.pid"
    hanging = stand_in(
        tmp_path,
        "import os, sys, time\n"
        "if sys.argv[2] == 'tool.execute.before':\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(120)\n",
    )
    plugin = Plugin(run_hook, tmp_path, hanging)
    started = time.monotonic()
    result = plugin.run([[tool("tool.execute.before", "write")]])
    took = time.monotonic() - started
    (call,) = result["groups"][0]["calls"]
    assert "thrown" not in call
    assert 9.5 <= result["groups"][0]["ms"] / 1000 < 30 and took < 60
    hook = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{hook}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # killed: reaped by the driver's exit
    assert not Path(f"/proc/{hook}").exists() or "Z" in Path(f"/proc/{hook}/stat").read_text()
    (line,) = [x for x in run_hook.log_lines() if "event=tool.execute.before" in x]
    assert "the hook did not answer within 10 s (killed); allowed (fail open)" in line


def test_a_log_that_cannot_be_written_changes_nothing(run_hook: HookRunner, tmp_path: Path) -> None:
    run_hook.state_dir.mkdir(parents=True, exist_ok=True)
    (run_hook.state_dir / "agent-hooks.log").mkdir()  # a directory where the log would be
    plugin = Plugin(run_hook, tmp_path, ["/nonexistent/python3", "opencode"])
    result = plugin.run([[tool("tool.execute.before", "write")]])
    assert "thrown" not in result["groups"][0]["calls"][0]


def test_tools_the_hooks_do_not_judge_spawn_nothing(run_hook: HookRunner, tmp_path: Path) -> None:
    capture = tmp_path / "captured.jsonl"
    plugin = Plugin(run_hook, tmp_path, stand_in(tmp_path, CAPTURE))
    glob = {"hook": "tool.execute.before", "input": {"tool": "glob", "sessionID": PARENT,
            "callID": "c"}, "output": {"args": {"pattern": "*"}}}  # fmt: skip
    read = tool("tool.execute.before", "read")
    plugin.run([[glob, read]], env={"CAPTURE": str(capture)})
    assert not capture.exists() or all(
        r["argv"][1] != "tool.execute.before" for r in captured(capture)
    )


def test_the_rendered_plugin_runs_when_installed_where_opencode_looks(
    run_hook: HookRunner, tmp_path: Path
) -> None:
    """The placeholder left unrendered is a plain identifier: the template parses, and
    evaluating it fails loudly at load (never installed so)."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--check", str(TEMPLATE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    loaded = subprocess.run(
        [NODE, "--input-type=module", "-e", f"await import({json.dumps(str(TEMPLATE))})"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert loaded.returncode != 0 and f"{PLACEHOLDER} is not defined" in loaded.stderr
