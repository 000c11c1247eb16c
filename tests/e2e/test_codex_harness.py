"""The Codex harness and installer against the real, pinned ``codex`` CLI (0.169.0).

Hooks are installed by ``agent_hooks.install.codex_config`` (its command line, as an installer
runs it) and run under ``codex exec`` WITHOUT ``--dangerously-bypass-hook-trust``: they run only
because the trust hashes it wrote are the ones Codex computes. The "entry script" is a small
Python file at ``…/hooks/entry.py`` (so the installer recognises its handlers as ours) that logs
what it received and, for the deny tests, prints Codex's JSON deny.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agent_hooks.install import codex_config

from .codex_cli import CODEX_VERSION, list_hooks, run_codex, write_provider_config
from .mock_responses_api import (
    MockResponsesAPI,
    add_file_patch,
    apply_patch,
    exec_command,
    parallel,
)

if TYPE_CHECKING:
    from .codex_cli import CodexResult
    from .conftest import CodexRunner, MockResponsesFactory

DENY_REASON = "agent-hooks e2e: shell.txt is held by agent cx-2"

# Logs {"argv", "stdin", "env"} as one JSON line beside itself; with DENY set, prints Codex's JSON
# deny for PreToolUse. Standard library only (it runs under -IS).
_ENTRY = """\
import json, os, sys
DENY = {deny!r}
payload = json.loads(sys.stdin.read())
record = {{"argv": sys.argv[1:], "stdin": payload, "env": {{"AGENT_NAME": os.environ.get("AGENT_NAME")}}}}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "captures.jsonl"), "a") as log:
    log.write(json.dumps(record) + "\\n")
if DENY and sys.argv[1:] == ["codex", "PreToolUse"]:
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": DENY}}}}))
"""


def _entry(tmp_path: Path, deny: str | None = None) -> Path:
    path = tmp_path / "agent-hooks" / "hooks" / "entry.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_ENTRY.format(deny=deny), encoding="utf-8")
    return path


def _captures(entry: Path) -> list[dict[str, Any]]:
    log = entry.parent / "captures.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _events(entry: Path) -> list[str]:
    """``Event(detail)`` per captured run: SessionStart's source, the tool name, the end reason."""
    out = []
    for rec in _captures(entry):
        stdin = rec["stdin"]
        detail = stdin.get("source") or stdin.get("tool_name") or stdin.get("reason")
        out.append(f"{stdin['hook_event_name']}({detail})" if detail else stdin["hook_event_name"])
    return out


def _install(home: Path, entry: Path, *extra: str, action: str = "install") -> str:
    """Run the installer's command line; return its stdout (it must succeed)."""
    command = [sys.executable, "-m", "agent_hooks.install.codex_config", action]
    command += ["--codex-home", str(home / ".codex")]
    if action == "install":
        command += ["--python", sys.executable, "--entry", str(entry)]
    done = subprocess.run(
        [*command, *extra], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def _ok(result: CodexResult, api: MockResponsesAPI, *, warning: str | None = None) -> None:
    """The run exited 0, the mock had no internal error, nothing tried to leave the machine,
    Codex could create its PATH helpers (TMPDIR is not above CODEX_HOME), it warned about nothing
    in our configuration and no PreToolUse hook failed (Codex fails open on a failed hook)."""
    print(f"codex exec took {result.duration:.2f}s")
    assert result.returncode == 0, (
        f"stdout={result.stdout!r}\nstderr={result.stderr!r}\nrequests:\n{api.summary()}"
    )
    assert "--dangerously-bypass-hook-trust" not in result.args
    assert api.errors == []
    assert api.outbound_attempts == []
    assert "Refusing to create helper binaries" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ([] if warning is None else [f"warning: {warning}"]), result.stderr
    assert "hook: PreToolUse Failed" not in result.stderr, result.stderr


def _git_init(path: Path) -> None:
    subprocess.run(
        ["git", "init", "-q", str(path)],
        check=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(path)},
    )


SCRIPT_CALLS = ("call_sh", "call_ap")
UNTRUSTED_PROJECT = (
    "Untrusted project-local configuration is disabled. Run `codex exec --trust` to allow project "
    "configuration and MCP servers for this and future chats in the project, including MCP "
    "commands outside the sandbox. Explicitly untrusted projects must have their trust setting "
    "updated first."
)


def _two_writes(api_factory: MockResponsesFactory) -> MockResponsesAPI:
    return api_factory(
        [
            exec_command("echo hi > shell.txt", call_id="call_sh"),
            apply_patch(add_file_patch("patched.txt", "patched line"), call_id="call_ap"),
            "Finished.",
        ]
    )


EXPECTED_EVENTS = [
    "SessionStart(startup)",
    "PreToolUse(Bash)",
    "PostToolUse(Bash)",
    "PreToolUse(apply_patch)",
    "PostToolUse(apply_patch)",
    "Stop",
    "SessionEnd(other)",
]


# --------------------------------------------------------------------------- (a) trusted hooks run


@pytest.mark.parametrize("scope", ["user", "project"])
def test_installed_hooks_run_trusted_without_the_bypass_flag(
    mock_responses: MockResponsesFactory,
    codex_user_home: Path,
    codex_any_bin: str,
    project_dir: Path,
    tmp_path: Path,
    scope: str,
) -> None:
    """On Codex 0.169.0 and 0.171.0 alike: the installer's trust hashes are the ones Codex
    computes, so the hooks run without `--dangerously-bypass-hook-trust`."""
    entry = _entry(tmp_path)
    project_args: list[str] = []
    if scope == "project":
        _git_init(project_dir)
        project_args = ["--project", str(project_dir), "--trust-project"]
    out = _install(codex_user_home, entry, *project_args)
    assert "agent-hooks installed for Codex (7 handlers trusted" in out
    api = _two_writes(mock_responses)

    result = run_codex(
        "Run the script.",
        cwd=project_dir,
        home=codex_user_home,
        server_url=api.url,
        proxy_url=api.proxy_url,
        agent_name="cx-1",
        binary=codex_any_bin,
    )

    _ok(result, api)
    assert (project_dir / "shell.txt").read_text() == "hi\n"
    assert (project_dir / "patched.txt").read_text() == "patched line\n"
    assert result.stdout.strip() == "Finished."
    assert _events(entry) == EXPECTED_EVENTS
    records = _captures(entry)
    assert [r["argv"] for r in records] == [
        ["codex", r["stdin"]["hook_event_name"]] for r in records
    ]
    assert {r["env"]["AGENT_NAME"] for r in records} == {"cx-1"}
    assert {r["stdin"]["session_id"] for r in records} == {records[0]["stdin"]["session_id"]}
    pre_patch = records[3]["stdin"]
    assert pre_patch["tool_input"] == {"command": add_file_patch("patched.txt", "patched line")}
    assert pre_patch["tool_use_id"] == "call_ap"
    assert records[1]["stdin"]["tool_input"] == {"command": "echo hi > shell.txt"}
    assert [api.tool_output(c) for c in SCRIPT_CALLS][1].endswith("A patched.txt\n")

    # What agent-hooks doctor will print agrees with what Codex itself reports.
    project = str(project_dir) if scope == "project" else None
    report = codex_config.trust_status(str(codex_user_home / ".codex"), project=project)
    assert report.ok, list(codex_config.status_lines(report))
    listed = {
        h["key"]: h for h in list_hooks(home=codex_user_home, cwd=project_dir, binary=codex_any_bin)
    }
    for handler in report.handlers:
        assert listed[handler.key]["currentHash"] == handler.current_hash
        assert listed[handler.key]["trustStatus"] == "trusted"
    assert len(report.handlers) == len(codex_config.HOOKS)


# --------------------------------------------------------------------------- (b) deny


def test_json_deny_blocks_an_apply_patch_add_and_a_shell_write(
    codex: CodexRunner,
    mock_responses: MockResponsesFactory,
    codex_user_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    entry = _entry(tmp_path, deny=DENY_REASON)
    _install(codex_user_home, entry)
    patch = add_file_patch("denied.txt", "must not appear")
    shell = "echo x > denied_shell.txt"
    api = mock_responses(
        [
            apply_patch(patch, call_id="call_ap"),
            exec_command(shell, call_id="call_sh"),
            "Both were blocked.",
        ]
    )

    result = codex("Try to write two files.", api)

    _ok(result, api)
    assert not (project_dir / "denied.txt").exists()
    assert not (project_dir / "denied_shell.txt").exists()
    prefix = f"Command blocked by PreToolUse hook: {DENY_REASON}. Command: "
    assert api.tool_output("call_ap") == prefix + patch
    assert api.tool_output("call_sh") == prefix + shell
    assert _events(entry) == [
        "SessionStart(startup)",
        "PreToolUse(apply_patch)",
        "PreToolUse(Bash)",
        "Stop",
        "SessionEnd(other)",
    ]  # no PostToolUse: neither tool ran


# --------------------------------------------------------------------------- (c) tampered hash


def test_a_tampered_hash_skips_the_hook_and_status_says_modified(
    codex: CodexRunner,
    mock_responses: MockResponsesFactory,
    codex_user_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    entry = _entry(tmp_path)
    _install(codex_user_home, entry)
    codex_home = str(codex_user_home / ".codex")
    (pre,) = [h for h in codex_config.trust_status(codex_home).handlers if h.event == "PreToolUse"]
    assert pre.current_hash is not None
    config = codex_user_home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(pre.current_hash, "sha256:" + "0" * 64), encoding="utf-8")

    report = codex_config.trust_status(codex_home)
    statuses = {h.event: h.status for h in report.handlers}
    assert statuses.pop("PreToolUse") == "modified"
    assert set(statuses.values()) == {"trusted"}
    assert not report.ok
    listed = {h["key"]: h["trustStatus"] for h in list_hooks(home=codex_user_home, cwd=project_dir)}
    assert listed[pre.key] == "modified"

    api = _two_writes(mock_responses)
    result = codex("Run the script.", api)

    _ok(result, api)
    assert (project_dir / "shell.txt").exists() and (project_dir / "patched.txt").exists()
    assert _events(entry) == [e for e in EXPECTED_EVENTS if not e.startswith("PreToolUse")]

    # Installing again rewrites our hashes: the next run has its PreToolUse hooks back.
    _install(codex_user_home, entry)
    assert codex_config.trust_status(codex_home).ok
    (entry.parent / "captures.jsonl").unlink()
    again = _two_writes(mock_responses)
    _ok(codex("Run the script again.", again), again)
    assert _events(entry) == EXPECTED_EVENTS


# --------------------------------------------------------------------------- project trust


def test_project_hooks_wait_for_the_project_to_be_trusted(
    codex: CodexRunner,
    mock_responses: MockResponsesFactory,
    codex_user_home: Path,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    _git_init(project_dir)
    (project_dir / "sub").mkdir()
    entry = _entry(tmp_path)
    out = _install(codex_user_home, entry, "--project", str(project_dir))
    assert f'[projects."{project_dir.resolve()}"] trust_level = "trusted"' in out
    assert "codex exec --trust" in out
    codex_home = str(codex_user_home / ".codex")
    report = codex_config.trust_status(codex_home, project=str(project_dir))
    assert report.project_trusted is False and not report.ok

    api = mock_responses(["Nothing to do."])
    _ok(codex("Hello.", api, cwd=project_dir / "sub"), api, warning=UNTRUSTED_PROJECT)
    assert _events(entry) == []  # hooks trusted, project not: Codex runs none of them

    # Following the advice (`codex exec --trust`) makes them run, from a subdirectory too.
    api = mock_responses(["Nothing to do."])
    _ok(codex("Hello.", api, cwd=project_dir / "sub", args=["--trust"]), api)
    assert _events(entry) == ["SessionStart(startup)", "Stop", "SessionEnd(other)"]
    assert codex_config.trust_status(codex_home, project=str(project_dir)).ok

    _install(codex_user_home, entry, "--project", str(project_dir), action="uninstall")
    assert not (project_dir / ".codex" / "hooks.json").exists()
    assert (
        codex_config.trust_state(
            codex_config.parse_config("config.toml", Path(codex_home, "config.toml").read_text())
        )
        == {}
    )


# --------------------------------------------------------------------------- the harness itself


def test_parallel_calls_and_outputs_are_recorded_by_call_id(
    codex: CodexRunner, mock_responses: MockResponsesFactory, project_dir: Path
) -> None:
    api = mock_responses(
        [
            parallel(
                exec_command("echo one > one.txt", call_id="call_one"),
                exec_command("printf two", call_id="call_two"),
            ),
            "Both ran.",
        ]
    )
    result = codex("Run two commands at once.", api)
    _ok(result, api)
    assert (project_dir / "one.txt").read_text() == "one\n"
    assert api.tool_output("call_two").endswith("Output:\ntwo")
    assert api.unused_turns == 0
    turn = api.turn_requests[0]
    assert turn.metadata["agent_name"] == "/root"
    assert turn.json["model"] == "gpt-5.5" and turn.json["stream"] is True
    assert f"OpenAI Codex v{CODEX_VERSION}" in result.stderr


def test_the_mock_refuses_connect_and_logs_it(mock_responses: MockResponsesFactory) -> None:
    api = mock_responses()
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
    conn.request("CONNECT", "chatgpt.com:443")
    assert conn.getresponse().status == 403
    conn.close()
    assert api.outbound_attempts == ["CONNECT chatgpt.com:443"]
    assert api.requests_of("proxy")[0].path == "chatgpt.com:443"


def test_the_mock_streams_the_scripted_items_and_then_the_final_text(
    mock_responses: MockResponsesFactory,
) -> None:
    api = mock_responses([apply_patch("*** Begin Patch\n*** End Patch\n", call_id="c1")])
    headers = {
        "content-type": "application/json",
        "x-codex-turn-metadata": '{"agent_name":"/root"}',
    }
    events = []
    for _ in range(2):
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
        conn.request("POST", "/v1/responses", body=json.dumps({"model": "m"}), headers=headers)
        body = conn.getresponse().read().decode()
        conn.close()
        events.append(
            [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
        )
    first, second = events
    assert [e["type"] for e in first] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    item = first[2]["item"]
    assert (item["type"], item["name"], item["call_id"]) == (
        "custom_tool_call",
        "apply_patch",
        "c1",
    )
    assert second[2]["item"]["content"][0]["text"] == "Done."
    assert [r.kind for r in api.requests] == ["turn", "turn"]


def test_the_interactive_clients_title_request_takes_no_scripted_turn(
    mock_responses: MockResponsesFactory,
) -> None:
    """The interactive client asks for a thread's title in a thread of its own
    (``thread_source: thread_title``): answered with the final text, the script left whole."""
    api = mock_responses([apply_patch("*** Begin Patch\n*** End Patch\n", call_id="c1")])
    for source in ("thread_title", "user"):
        headers = {
            "content-type": "application/json",
            "x-codex-turn-metadata": json.dumps({"agent_name": "/root", "thread_source": source}),
        }
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
        conn.request("POST", "/v1/responses", body=json.dumps({"model": "m"}), headers=headers)
        conn.getresponse().read()
        conn.close()
    assert [r.kind for r in api.requests] == ["side", "turn"]
    assert api.unused_turns == 0


def test_the_provider_config_keeps_the_installers_tables(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    user = (
        '# mine\nmodel = "o4"\napproval_policy = "never"\n\n'
        '[model_providers.mock]\nname = "old"\nbase_url = "http://old"\n\n'
        '[hooks.state."/h/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n'
    )
    config.write_text(user, encoding="utf-8")
    write_provider_config(home, "http://127.0.0.1:1/v1")
    write_provider_config(home, "http://127.0.0.1:2/v1")
    text = config.read_text(encoding="utf-8")
    assert text.startswith('model_provider = "mock"\nmodel = "gpt-5.5"\n# mine\n')
    assert '[hooks.state."/h/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n' in text
    assert "http://old" not in text and "http://127.0.0.1:1/" not in text
    assert text.count("[model_providers.mock]") == 1
    assert 'base_url = "http://127.0.0.1:2/v1"' in text
    assert 'approval_policy = "never"' in text
