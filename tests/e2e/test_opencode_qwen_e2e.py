"""opencode and Qwen Code in the swarm (issue 32), end to end: the real ``opencode`` 1.18.33
(``opencode run``, and its TUI in a tmux pane as ntm runs it) with agent-hooks' plugin, and the
real ``qwen -p`` 0.24.4 with agent-hooks' hooks, each against a loopback mock of the Chat
Completions API, beside the real ``claude -p`` (2.1.328), in one repository and one HOME.

agent-hooks is installed by the real ``./install.sh --clients claude,opencode,qwen``: Claude
Code's and Qwen Code's hooks, and agent-hooks' plugin for opencode.

Each test asserts on the files on disk, on what each model was sent back for each tool call,
and on the repository's ledger. Interleavings are forced by ``wait_until`` steps of the mocks,
judged on the other runs' mocks; the test thread only waits for conditions.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .agent_hooks_install import Installation
from .clients_support import (
    STARTUP,
    STEP,
    InThread,
    Swarm,
    all_up,
    claude_refused,
    process_of,
)
from .mock_api import calls
from .mock_chat_api import MockChatAPI, call
from .mock_routes import (
    MAIN,
    Predicate,
    agent_marker,
    all_of,
    file_exists,
    turns_done,
    wait_until,
)
from .opencode_cli import (
    PATCH_MODEL,
    Tui,
    initialize_home,
)
from .qwen_cli import prepare_home as prepare_qwen_home
from .writers_support import check, leases, ledger_dir, on, snapshot, wait_for, write

if TYPE_CHECKING:
    from .conftest import InstallAgentHooks, MockApiFactory, MockChatFactory

CC, OC1, OC2, QW1, QW2 = "proj__cc_1", "proj__oc_1", "proj__oc_2", "proj__qw_1", "proj__qw_2"


def refused(text: str, rel: str, holder: str) -> None:
    """What opencode's and Qwen Code's models read for a refused call: exactly agent-hooks'
    reason (opencode adds no prefix: PROTOCOL §5; Qwen Code neither: OTHER-CLIENTS.md)."""
    assert text.startswith(f"agent-hooks: {rel} is being changed by {holder}: "), text


def _swarm(install_agent_hooks: InstallAgentHooks, git_project: Path, **bins: str) -> Swarm:
    install = install_agent_hooks(clients="claude,opencode,qwen")
    if "opencode" in bins:
        initialize_home(install.home, bins["opencode"])
    if "qwen" in bins:
        prepare_qwen_home(install.home)
    return Swarm(install, git_project.resolve(), bins, timeout=240)


def _ok(result: Any, api: Any, install: Installation, what: str) -> None:
    context = (
        f"{what}: rc={result.returncode} took {result.duration:.1f}s\n"
        f"stdout={result.stdout[-2000:]!r}\nstderr={result.stderr[-3000:]!r}\n"
        f"requests:\n{api.summary()}\nerrors: {api.errors}\nagent-hooks.log:\n"
        + "\n".join(install.log_lines()[-40:])
    )
    assert result.returncode == 0, context
    assert api.errors == [], context
    assert api.unused_turns == 0, context
    if isinstance(api, MockChatAPI):
        assert all("registry.npmjs.org" in a or "aliyuncs" in a for a in api.outbound_attempts)


def ancestors(pid: int) -> list[int]:
    """The processes above `pid`, nearest first."""
    found: list[int] = []
    while pid > 1 and len(found) < 32:
        pid = process_of(pid)[1]
        found.append(pid)
    return found


def _held_by(ledger: Path, rel: str) -> list[tuple[str, str]]:
    return [(item["writer"], item["client"]) for item in leases(ledger).get(rel, [])]


# --------------------------------------------------------------------------- opencode


def test_two_opencode_panes_are_refused_each_others_files(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    opencode_bin: str,
    mock_chat: MockChatFactory,
) -> None:
    """Pane 1 writes a.txt (write); pane 2 (a gpt model: apply_patch) adds b.txt, then is
    refused a.txt by patch and by bash; pane 1 is refused b.txt by edit and by write; each
    lease is held by its own opencode process; both end, and their leases with them."""
    swarm = _swarm(install_agent_hooks, git_project, opencode=opencode_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    a, b = project / "a.txt", project / "b.txt"
    seen: dict[str, Any] = {}
    one, two = mock_chat(), mock_chat()
    launched: dict[str, int] = {}

    def holders(_state: object) -> bool:
        seen["holders"] = {rel: items[0]["pid"] for rel, items in leases(ledger).items()}
        return True

    one.add(
        all_up(one, two),
        call("write", filePath=str(a), content="from one\n", call_id="one_write_a"),
        wait_until(on(two, turns_done(MAIN, 3), "pane 2 tried a.txt"), timeout=STEP),
        snapshot(ledger, seen, "both hold", a, b),
        wait_until(Predicate(holders, "holders read")),
        call("edit", filePath=str(b), oldString="from two", newString="x", call_id="one_edit_b"),
        call("write", filePath=str(b), content="from one\n", call_id="one_write_b"),
        "Pane 1 done.",
    )
    two.add(
        all_up(one, two),
        wait_until(on(one, turns_done(MAIN, 1), "pane 1 wrote a.txt"), timeout=STEP),
        call("apply_patch", patchText="*** Begin Patch\n*** Add File: b.txt\n+from two\n"
             "*** End Patch", call_id="two_add_b"),
        call("apply_patch", patchText="*** Begin Patch\n*** Update File: a.txt\n@@\n-from one\n"
             "+from two\n*** End Patch", call_id="two_patch_a"),
        call("bash", command="echo two >> a.txt", description="append", call_id="two_bash_a"),
        wait_until(on(one, turns_done(MAIN, 3), "pane 1 tried b.txt"), timeout=STEP),
        "Pane 2 done.",
    )  # fmt: skip
    first = swarm.opencode(one, OC1)
    launched[OC1] = first.process.pid
    second = swarm.opencode(two, OC2, model=PATCH_MODEL)
    launched[OC2] = second.process.pid
    first_result, second_result = first.result(300), second.result(300)

    _ok(first_result, one, swarm.install, "pane 1")
    _ok(second_result, two, swarm.install, "pane 2")
    assert one.tool_result("one_write_a") == "Wrote file successfully."
    assert two.tool_result("two_add_b").startswith("Success. Updated the following files:")
    for call_id in ("two_patch_a", "two_bash_a"):
        refused(two.tool_result(call_id), "a.txt", f'opencode agent "{OC1}"')
    assert "This bash command would write a.txt" in two.tool_result("two_bash_a")
    for call_id in ("one_edit_b", "one_write_b"):
        refused(one.tool_result(call_id), "b.txt", f'opencode agent "{OC2}"')
    assert (a.read_text(), b.read_text()) == ("from one\n", "from two\n")
    held = seen["both hold"]["leases"]
    assert [(i["writer"], i["client"]) for i in held["a.txt"]] == [(OC1, "opencode")]
    assert [(i["writer"], i["client"]) for i in held["b.txt"]] == [(OC2, "opencode")]
    # each lease lives with its own opencode process (the npm bin is the binary itself)
    assert seen["holders"] == {"a.txt": launched[OC1], "b.txt": launched[OC2]}
    assert leases(ledger) == {}  # each `dispose` released its session's leases
    agents = {a["agent"]: a["client"] for a in swarm.install.cli_json("agents", cwd=project)}
    assert agents == {OC1: "opencode", OC2: "opencode"}
    denied = [line for line in swarm.install.log_lines() if " denied " in line]
    assert len(denied) == 4, denied


def test_an_opencode_subagent_is_a_writer_of_its_own(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    opencode_bin: str,
    mock_chat: MockChatFactory,
) -> None:
    """The main session writes p.txt and starts a subagent (a child session) that writes p.txt
    (its parent's lease does not block it) and s.txt; while the subagent runs, another pane is
    refused s.txt naming the subagent; once the subagent is done its leases are gone."""
    swarm = _swarm(install_agent_hooks, git_project, opencode=opencode_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    p, s = project / "p.txt", project / "s.txt"
    seen: dict[str, Any] = {}
    marker = agent_marker("S")
    main, other = mock_chat(), mock_chat()
    main.add(
        all_up(main, other),
        call("write", filePath=str(p), content="parent\n", call_id="main_p"),
        call("task", description="write s", prompt=f"Write s.txt. {marker}",
             subagent_type="general", call_id="main_task"),
        snapshot(ledger, seen, "after the subagent", p, s),
        "Main done.",
    )  # fmt: skip
    main.add(
        call("write", filePath=str(p), content="child\n", call_id="sub_p"),
        call("write", filePath=str(s), content="child\n", call_id="sub_s"),
        snapshot(ledger, seen, "the subagent holds", p, s),
        wait_until(on(other, turns_done(MAIN, 1), "the other pane tried s.txt"), timeout=STEP),
        "Subagent done.",
        conversation=marker,
    )  # fmt: skip
    other.add(
        all_up(main, other),
        wait_until(
            on(main, Predicate(lambda m: len(m.requests_in(marker)) >= 3, "subagent wrote"),
               "the subagent holds s.txt"),
            timeout=STEP,
        ),
        call("write", filePath=str(s), content="other\n", call_id="other_s"),
        "Other done.",
    )  # fmt: skip
    runs = [swarm.opencode(main, OC1), swarm.opencode(other, OC2)]
    main_result, other_result = runs[0].result(300), runs[1].result(300)
    print(f"other pane:\n{other.summary()}\n{other_result.stdout[-3000:]}")

    _ok(main_result, main, swarm.install, "main")
    _ok(other_result, other, swarm.install, "other")
    assert main.unused_agent_turns() == {marker: 0}
    holding = seen["the subagent holds"]["leases"]
    ((writer, agent_id, kind),) = [
        (i["writer"], i["agent_id"], i["agent_type"]) for i in holding["s.txt"]
    ]
    assert writer == f"{OC1}#{agent_id}" and agent_id.startswith("ses_") and kind == "general"
    assert [i["writer"] for i in holding["p.txt"]] == [writer]  # the lease moved to it
    sub = f'the general subagent ({agent_id[:8]}) of opencode agent "{OC1}"'
    refused(other.tool_result("other_s"), "s.txt", sub)
    assert main.tool_result("sub_p") == main.tool_result("sub_s") == "Wrote file successfully."
    assert (p.read_text(), s.read_text()) == ("child\n", "child\n")
    assert "s.txt" not in seen["after the subagent"]["leases"]  # its idle released them
    assert leases(ledger) == {}


def test_a_killed_opencode_run_frees_its_leases_at_once(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    opencode_bin: str,
    mock_chat: MockChatFactory,
    tmp_path: Path,
) -> None:
    """SIGKILL to `opencode run` holding z.txt: no event fires, the lease file stays, and
    it counts for nothing at once (its holder, opencode's process, is gone)."""
    swarm = _swarm(install_agent_hooks, git_project, opencode=opencode_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    never = tmp_path / "never"
    api = mock_chat(
        [
            call("write", filePath=str(project / "z.txt"), content="oc\n", call_id="z"),
            wait_until(file_exists(never), timeout=200),
            "Never sent.",
        ]
    )
    run = swarm.opencode(api, OC1)
    try:
        wait_for(lambda: turns_done(MAIN, 1)(api), "opencode wrote z.txt", timeout=STARTUP)
        (lease,) = leases(ledger)["z.txt"]
        assert (lease["writer"], lease["client"], lease["pid"]) == (
            OC1,
            "opencode",
            run.process.pid,
        )
        held = check(swarm.install, "z.txt", project, CC)
        assert held["allowed"] is False
        assert held["held_by"][0]["holder"] == f'opencode agent "{OC1}"'
        os.killpg(run.process.pid, signal.SIGKILL)
        killed = run.result(60)
    finally:
        never.touch()
    assert killed.returncode == -signal.SIGKILL
    assert _held_by(ledger, "z.txt") == [(OC1, "opencode")]  # on disk; counts not
    assert check(swarm.install, "z.txt", project, CC)["allowed"] is True


@pytest.mark.parametrize("ending", ["pane closed", "kill -9"])
def test_a_killed_opencode_tui_pane_frees_its_leases_at_once(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    opencode_bin: str,
    mock_chat: MockChatFactory,
    tmp_path: Path,
    ending: str,
) -> None:
    """opencode's TUI in a tmux pane, as ntm starts it, a prompt typed into it: it writes z.txt
    and waits. Its pane closed (tmux kill-session: SIGHUP; the TUI then still disposes, and
    the plugin releases) or the process killed with SIGKILL (nothing fires: the lease file
    stays, held by a dead process), its lease stops counting at once. How long until
    `agent-hooks check` says so is measured."""
    swarm = _swarm(install_agent_hooks, git_project, opencode=opencode_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    never = tmp_path / "never"
    api = mock_chat(
        [
            call("write", filePath=str(project / "z.txt"), content="tui\n", call_id="z"),
            wait_until(file_exists(never), timeout=STARTUP),
            "Never sent.",
        ]
    )
    tui = Tui(
        cwd=project,
        home=swarm.install.home,
        server_url=api.url,
        proxy_url=api.proxy_url,
        agent_name=OC1,
        binary=opencode_bin,
        extra_env={"PATH": swarm.install.agent_path()},
    )
    try:
        tui.wait_for_screen("Ask anything", timeout=STARTUP)  # its prompt is up
        tui.type("Write z.txt.")
        wait_for(lambda: turns_done(MAIN, 1)(api), "the TUI wrote z.txt", timeout=STARTUP)
        (lease,) = leases(ledger)["z.txt"]
        comm, _ = process_of(lease["pid"])
        assert (lease["writer"], lease["client"], comm) == (OC1, "opencode", "opencode")
        assert lease["pid"] == tui.pid  # the pane's process is opencode itself
        assert check(swarm.install, "z.txt", project, CC)["allowed"] is False
        killed_at = time.monotonic()
        if ending == "pane closed":
            tui.kill()
        else:
            os.kill(tui.pid, signal.SIGKILL)
        wait_for(lambda: not tui.alive(), "opencode ended", timeout=30)
        gone_after = time.monotonic() - killed_at
        wait_for(
            lambda: check(swarm.install, "z.txt", project, CC)["allowed"],
            "z.txt free",
            timeout=30,
        )
        freed_after = time.monotonic() - killed_at
    finally:
        never.touch()
        tui.close()
    print(
        f"{ending}: opencode gone after {gone_after:.2f}s; `agent-hooks check` said z.txt free "
        f"{freed_after:.2f}s after the kill (its own run included)"
    )
    if ending == "kill -9":
        assert _held_by(ledger, "z.txt") == [(OC1, "opencode")]  # nothing released it
    assert freed_after < 15


# --------------------------------------------------------------------------- Qwen Code


def test_two_qwen_panes_are_refused_each_others_files(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    qwen_bin: str,
    mock_chat: MockChatFactory,
) -> None:
    swarm = _swarm(install_agent_hooks, git_project, qwen=qwen_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    a, b = project / "a.txt", project / "b.txt"
    seen: dict[str, Any] = {}
    one, two = mock_chat(), mock_chat()
    one.add(
        all_up(one, two),
        call("write_file", file_path=str(a), content="from one\n", call_id="one_a"),
        wait_until(on(two, turns_done(MAIN, 3), "pane 2 tried a.txt"), timeout=STEP),
        snapshot(ledger, seen, "both hold", a, b),
        call("write_file", file_path=str(b), content="from one\n", call_id="one_b"),
        call("run_shell_command", command="echo one > b.txt", call_id="one_sh_b"),
        "Pane 1 done.",
    )
    two.add(
        all_up(one, two),
        wait_until(on(one, turns_done(MAIN, 1), "pane 1 wrote a.txt"), timeout=STEP),
        call("write_file", file_path=str(b), content="from two\n", call_id="two_b"),
        call("write_file", file_path=str(a), content="from two\n", call_id="two_a"),
        call("run_shell_command", command="sed -i s/one/two/ a.txt", call_id="two_sh_a"),
        wait_until(on(one, turns_done(MAIN, 3), "pane 1 tried b.txt"), timeout=STEP),
        "Pane 2 done.",
    )
    first, second = swarm.qwen(one, QW1), swarm.qwen(two, QW2)
    first_result, second_result = first.result(300), second.result(300)

    _ok(first_result, one, swarm.install, "pane 1")
    _ok(second_result, two, swarm.install, "pane 2")
    for call_id in ("two_a", "two_sh_a"):
        refused(two.tool_result(call_id), "a.txt", f'Qwen Code agent "{QW1}"')
    for call_id in ("one_b", "one_sh_b"):
        refused(one.tool_result(call_id), "b.txt", f'Qwen Code agent "{QW2}"')
    assert (a.read_text(), b.read_text()) == ("from one\n", "from two\n")
    held = seen["both hold"]["leases"]
    assert [(i["writer"], i["client"]) for i in held["a.txt"]] == [(QW1, "qwen")]
    assert [(i["writer"], i["client"]) for i in held["b.txt"]] == [(QW2, "qwen")]
    agents = {a["agent"]: a["client"] for a in swarm.install.cli_json("agents", cwd=project)}
    assert agents == {QW1: "qwen", QW2: "qwen"}


def test_a_killed_qwen_frees_its_leases_at_once(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    qwen_bin: str,
    mock_chat: MockChatFactory,
    tmp_path: Path,
) -> None:
    """The holder is the Qwen Code process that runs the hooks (the launcher's child); kill
    the run's whole process group (a closed pane) and the lease counts for nothing."""
    swarm = _swarm(install_agent_hooks, git_project, qwen=qwen_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    never = tmp_path / "never"
    api = mock_chat(
        [
            call("write_file", file_path=str(project / "z.txt"), content="qw\n", call_id="z"),
            wait_until(file_exists(never), timeout=200),
            "Never sent.",
        ]
    )
    run = swarm.qwen(api, QW1)
    try:
        wait_for(lambda: turns_done(MAIN, 1)(api), "qwen wrote z.txt", timeout=STARTUP)
        (lease,) = leases(ledger)["z.txt"]
        comm, _ = process_of(lease["pid"])
        assert (lease["writer"], lease["client"], comm) == (QW1, "qwen", "node")
        assert run.process.pid in ancestors(lease["pid"])  # the relaunched CLI, under the launcher
        assert check(swarm.install, "z.txt", project, CC)["allowed"] is False
        os.killpg(run.process.pid, signal.SIGKILL)
        run.result(60)
    finally:
        never.touch()
    assert check(swarm.install, "z.txt", project, CC)["allowed"] is True


# --------------------------------------------------------------------------- with Claude Code


def test_a_claude_held_file_is_refused_to_opencode_and_qwen_and_theirs_to_claude(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    opencode_bin: str,
    qwen_bin: str,
    mock_api: MockApiFactory,
    mock_chat: MockChatFactory,
) -> None:
    """Claude writes x.txt; opencode (write, bash) and Qwen Code (write_file,
    run_shell_command) are refused it and each write a file of their own; Claude is refused
    both of theirs while they hold them."""
    swarm = _swarm(
        install_agent_hooks, git_project, claude=claude_bin, opencode=opencode_bin, qwen=qwen_bin
    )
    project, ledger = swarm.project, ledger_dir(swarm.project)
    x, o, q = project / "x.txt", project / "o.txt", project / "q.txt"
    seen: dict[str, Any] = {}
    oc_api, qw_api = mock_chat(), mock_chat()
    claude_api = mock_api()
    claude_api.add(
        all_up(claude_api, oc_api, qw_api),
        calls(write(x, "from claude\n")),
        wait_until(
            all_of(
                on(oc_api, turns_done(MAIN, 3), "opencode tried x.txt"),
                on(qw_api, turns_done(MAIN, 3), "qwen tried x.txt"),
            ),
            timeout=STEP,
        ),
        snapshot(ledger, seen, "all hold"),
        calls(write(o, "from claude\n")),
        calls(write(q, "from claude\n")),
        "Claude done.",
    )
    claude_wrote = on(claude_api, turns_done(MAIN, 1), "claude wrote x.txt")
    claude_tried = on(claude_api, turns_done(MAIN, 3), "claude tried o.txt and q.txt")
    oc_api.add(
        all_up(claude_api, oc_api, qw_api),
        wait_until(claude_wrote, timeout=STEP),
        call("write", filePath=str(o), content="from opencode\n", call_id="oc_o"),
        call("write", filePath=str(x), content="from opencode\n", call_id="oc_x"),
        call("bash", command="echo oc >> x.txt", description="append", call_id="oc_sh_x"),
        wait_until(claude_tried, timeout=STEP),
        "opencode done.",
    )
    qw_api.add(
        all_up(claude_api, oc_api, qw_api),
        wait_until(claude_wrote, timeout=STEP),
        call("write_file", file_path=str(q), content="from qwen\n", call_id="qw_q"),
        call("write_file", file_path=str(x), content="from qwen\n", call_id="qw_x"),
        call("run_shell_command", command="echo qw >> x.txt", call_id="qw_sh_x"),
        wait_until(claude_tried, timeout=STEP),
        "Qwen done.",
    )
    runs: list[InThread[Any]] = [
        swarm.claude(claude_api, CC),
        swarm.opencode(oc_api, OC1),
        swarm.qwen(qw_api, QW1),
    ]
    results = [run.result(360) for run in runs]

    for result, api, what in zip(results, (claude_api, oc_api, qw_api), ("claude", "opencode",
                                                                          "qwen"), strict=True):  # fmt: skip
        _ok(result, api, swarm.install, what)
    for call_id in ("oc_x", "oc_sh_x"):
        refused(oc_api.tool_result(call_id), "x.txt", f'agent "{CC}"')
    for call_id in ("qw_x", "qw_sh_x"):
        refused(qw_api.tool_result(call_id), "x.txt", f'agent "{CC}"')
    _, on_o, on_q = claude_api.tool_results()
    claude_refused(on_o, "o.txt", f'opencode agent "{OC1}"')
    claude_refused(on_q, "q.txt", f'Qwen Code agent "{QW1}"')
    assert [f.read_text() for f in (x, o, q)] == ["from claude\n", "from opencode\n", "from qwen\n"]
    held = {rel: [(i["writer"], i["client"]) for i in items]
            for rel, items in seen["all hold"]["leases"].items()}  # fmt: skip
    assert held == {
        "x.txt": [(CC, "claude")],
        "o.txt": [(OC1, "opencode")],
        "q.txt": [(QW1, "qwen")],
    }
