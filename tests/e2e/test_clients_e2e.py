"""Every agent in the swarm under one ledger (issue 19), end to end: agent-hooks installed by the
real ``./install.sh --clients claude,codex,gemini``, the real ``claude -p`` (2.1.328; 2.1.332 for
skill shell lines), ``codex exec`` (0.169.0) and ``gemini -p`` (0.61.0), each against its loopback
model mock, side by side in one repository and one HOME.

Each test asserts on the files on disk, on what each model was sent back for each tool call,
and on the repository's ledger. Every interleaving is forced by ``wait_until`` steps of the
mocks, judged on the other clients' mocks (``on``); the test thread only waits for conditions.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .claude_cli import run_claude
from .clients_support import (
    STEP,
    InThread,
    Swarm,
    all_up,
    claude_refused,
    codex_refused,
    finished_ok,
    gemini_refused,
    is_client_process,
)
from .mock_api import ToolCall, calls
from .mock_gemini_api import calls as gemini_calls
from .mock_gemini_api import replace, run_shell_command, write_file
from .mock_responses_api import MockResponsesAPI, add_file_patch, apply_patch, exec_command
from .mock_routes import MAIN, Predicate, all_of, file_exists, turns_done, wait_until
from .writers_support import check, leases, ledger_dir, on, snapshot, wait_for, write

if TYPE_CHECKING:
    from .conftest import InstallAgentHooks, MockApiFactory, MockGeminiFactory, MockResponsesFactory

CC, CX, GM = "proj__cc_1", "proj__cod_1", "proj__gmi_1"
ALL = "claude,codex,gemini"


def update_patch(rel: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def _swarm(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_bin: str,
    gemini_bin: str,
) -> Swarm:
    install = install_agent_hooks(clients=ALL)
    assert "agent-hooks installed for Codex (7 handlers trusted" in install.output
    assert f"{install.home}/.gemini/settings.json: agent-hooks installed" in install.output
    bins = {"claude": claude_bin, "codex": codex_bin, "gemini": gemini_bin}
    return Swarm(install, git_project.resolve(), bins, timeout=180)


def _codex_output(api: MockResponsesAPI, call_id: str) -> str:
    return api.tool_output(call_id)


# --------------------------------------------------------------------------- Codex <-> Claude Code


def test_a_codex_agent_and_a_claude_agent_are_refused_each_others_files(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_any_bin: str,
    gemini_bin: str,
    mock_api: MockApiFactory,
    mock_responses: MockResponsesFactory,
) -> None:
    """Claude writes x.txt; Codex (patch tool, shell write, shell-run patch) is refused it and
    adds y.txt; Claude is refused y.txt while Codex still runs; both end, leases with them.
    On Codex 0.169.0 and 0.171.0."""
    swarm = _swarm(install_agent_hooks, git_project, claude_bin, codex_any_bin, gemini_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    x, y = project / "x.txt", project / "y.txt"
    seen: dict[str, Any] = {}
    codex_api = mock_responses()
    launched: list[int] = []

    def holder_is_codex(_state: object) -> bool:
        (lease,) = leases(ledger)["y.txt"]
        seen["y holder"] = is_client_process(lease["pid"], launched[0], "codex")
        return True

    claude_api = mock_api(
        [
            calls(write(x, "from claude\n")),
            wait_until(on(codex_api, turns_done(MAIN, 4), "codex tried x.txt three ways")),
            snapshot(ledger, seen, "both hold", x, y),
            wait_until(Predicate(holder_is_codex, "the holder of y.txt is codex")),
            calls(write(y, "from claude\n")),
            "Claude done.",
        ]
    )
    codex_api.add(
        wait_until(on(claude_api, turns_done(MAIN, 1), "claude wrote x.txt")),
        apply_patch(add_file_patch("y.txt", "from codex"), call_id="call_add_y"),
        exec_command("echo codex >> x.txt", call_id="call_sh_x"),
        apply_patch(update_patch("x.txt", "from claude", "from codex"), call_id="call_patch_x"),
        exec_command(
            f"apply_patch <<'EOF'\n{update_patch('x.txt', 'from claude', 'via heredoc')}EOF\n",
            call_id="call_heredoc_x",
        ),
        wait_until(on(claude_api, turns_done(MAIN, 2), "claude tried y.txt")),
        "Codex done.",
    )
    codex = swarm.codex(codex_api, CX)
    launched.append(codex.process.pid)
    claude = swarm.claude(claude_api, CC)
    codex_result, claude_result = codex.result(), claude.result()

    finished_ok(codex_result, codex_api, swarm.install, "codex")
    finished_ok(claude_result, claude_api, swarm.install, "claude")
    holder_cc = f'agent "{CC}"'
    for call_id in ("call_sh_x", "call_patch_x", "call_heredoc_x"):
        codex_refused(_codex_output(codex_api, call_id), "x.txt", holder_cc)
    assert "This shell command would write x.txt" in _codex_output(codex_api, "call_sh_x")
    assert _codex_output(codex_api, "call_add_y").endswith("A y.txt\n")
    wrote_x, refused_y = claude_api.tool_results()
    assert not wrote_x.is_error
    claude_refused(refused_y, "y.txt", f'Codex agent "{CX}"')
    assert x.read_text() == "from claude\n" and y.read_text() == "from codex\n"
    held = seen["both hold"]["leases"]
    (lease_y,) = held["y.txt"]
    assert (lease_y["writer"], lease_y["client"], seen["y holder"]) == (CX, "codex", True)
    assert [item["client"] for item in held["x.txt"]] == ["claude"]
    assert leases(ledger) == {}  # each SessionEnd released its client's leases
    agents = {a["agent"]: a["client"] for a in swarm.install.cli_json("agents", cwd=project)}
    assert agents == {CC: "claude", CX: "codex"}


# --------------------------------------------------------------------------- Gemini <-> Claude Code


def test_a_gemini_agent_and_a_claude_agent_are_refused_each_others_files(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_bin: str,
    gemini_bin: str,
    mock_api: MockApiFactory,
    mock_gemini_api: MockGeminiFactory,
) -> None:
    swarm = _swarm(install_agent_hooks, git_project, claude_bin, codex_bin, gemini_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    x, y = project / "x.txt", project / "y.txt"
    seen: dict[str, Any] = {}
    gemini_api = mock_gemini_api()
    claude_api = mock_api(
        [
            calls(write(x, "from claude\n")),
            wait_until(on(gemini_api, turns_done(MAIN, 1), "gemini tried x.txt")),
            snapshot(ledger, seen, "both hold", x, y),
            calls(write(y, "from claude\n")),
            "Claude done.",
        ]
    )
    gemini_api.add(
        wait_until(on(claude_api, turns_done(MAIN, 1), "claude wrote x.txt")),
        gemini_calls(
            write_file("y.txt", "from gemini\n"),  # relative: to the session's cwd
            write_file(str(x), "from gemini\n"),
            replace(str(x), "from claude", "from gemini"),
            run_shell_command("echo gemini >> x.txt"),
        ),
        wait_until(on(claude_api, turns_done(MAIN, 2), "claude tried y.txt")),
        "Gemini done.",
    )
    claude = swarm.claude(claude_api, CC)
    gemini = swarm.gemini(gemini_api, GM)
    gemini_result, claude_result = gemini.result(), claude.result()

    finished_ok(gemini_result, gemini_api, swarm.install, "gemini")
    finished_ok(claude_result, claude_api, swarm.install, "claude")
    wrote_y, *refused_x = gemini_api.tool_results()
    assert wrote_y.error is None
    assert [r.name for r in refused_x] == ["write_file", "replace", "run_shell_command"]
    for result in refused_x:
        gemini_refused(result, "x.txt", f'agent "{CC}"')
    _, refused_y = claude_api.tool_results()
    claude_refused(refused_y, "y.txt", f'Gemini CLI agent "{GM}"')
    assert x.read_text() == "from claude\n" and y.read_text() == "from gemini\n"
    (lease_y,) = seen["both hold"]["leases"]["y.txt"]
    assert (lease_y["writer"], lease_y["client"]) == (GM, "gemini")
    assert leases(ledger) == {}


# --------------------------------------------------------------------------- all three


def test_a_mixed_swarm_each_refused_the_others_files(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_bin: str,
    gemini_bin: str,
    mock_api: MockApiFactory,
    mock_responses: MockResponsesFactory,
    mock_gemini_api: MockGeminiFactory,
) -> None:
    """One Claude, one Codex and one Gemini agent: each writes its own file, then (all three
    holding) tries both others' files and is refused each in its own client's form."""
    swarm = _swarm(install_agent_hooks, git_project, claude_bin, codex_bin, gemini_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    mine = {"claude": project / "cc.txt", "codex": project / "cx.txt", "gemini": project / "gm.txt"}
    claude_api, codex_api, gemini_api = mock_api(), mock_responses(), mock_gemini_api()
    seen: dict[str, Any] = {}
    all_hold = Predicate(
        lambda _state: set(leases(ledger)) >= {"cc.txt", "cx.txt", "gm.txt"}, "all three hold"
    )
    all_tried = all_of(
        on(claude_api, turns_done(MAIN, 2), "claude tried"),
        on(codex_api, turns_done(MAIN, 3), "codex tried"),
        on(gemini_api, turns_done(MAIN, 2), "gemini tried"),
    )
    # Three node clients start at once: on a loaded 2-core machine the last one can start a
    # minute or more after the first. So each run's first step waits until all three are up
    # (`all_up`); after it every wait is for the others' tool calls alone (`STEP`).
    claude_api.add(
        all_up(claude_api, codex_api, gemini_api),
        calls(write(mine["claude"], "claude\n")),
        wait_until(all_hold, timeout=STEP),
        snapshot(ledger, seen, "all hold"),
        calls(write(mine["codex"], "claude\n"), write(mine["gemini"], "claude\n")),
        wait_until(all_tried, timeout=STEP),
        "Claude done.",
    )
    codex_api.add(
        all_up(claude_api, codex_api, gemini_api),
        apply_patch(add_file_patch("cx.txt", "codex"), call_id="call_own"),
        wait_until(all_hold, timeout=STEP),
        apply_patch(update_patch("cc.txt", "claude", "codex"), call_id="call_cc"),
        exec_command("echo codex > gm.txt", call_id="call_gm"),
        wait_until(all_tried, timeout=STEP),
        "Codex done.",
    )
    gemini_api.add(
        all_up(claude_api, codex_api, gemini_api),
        write_file(str(mine["gemini"]), "gemini\n"),
        wait_until(all_hold, timeout=STEP),
        gemini_calls(write_file("cc.txt", "gemini\n"), run_shell_command("echo gemini >> cx.txt")),
        wait_until(all_tried, timeout=STEP),
        "Gemini done.",
    )
    runs: list[InThread[Any]] = [
        swarm.claude(claude_api, CC),
        swarm.codex(codex_api, CX),
        swarm.gemini(gemini_api, GM),
    ]
    results = [run.result() for run in runs]

    for result, api, what in zip(
        results, (claude_api, codex_api, gemini_api), ALL.split(","), strict=True
    ):
        finished_ok(result, api, swarm.install, what)
    assert {rel: items[0]["client"] for rel, items in seen["all hold"]["leases"].items()} == {
        "cc.txt": "claude",
        "cx.txt": "codex",
        "gm.txt": "gemini",
    }
    _, *claude_tried = claude_api.tool_results()
    claude_refused(claude_tried[0], "cx.txt", f'Codex agent "{CX}"')
    claude_refused(claude_tried[1], "gm.txt", f'Gemini CLI agent "{GM}"')
    codex_refused(_codex_output(codex_api, "call_cc"), "cc.txt", f'agent "{CC}"')
    codex_refused(_codex_output(codex_api, "call_gm"), "gm.txt", f'Gemini CLI agent "{GM}"')
    _, *gemini_tried = gemini_api.tool_results()
    gemini_refused(gemini_tried[0], "cc.txt", f'agent "{CC}"')
    gemini_refused(gemini_tried[1], "cx.txt", f'Codex agent "{CX}"')
    assert {name: path.read_text() for name, path in mine.items()} == {
        "claude": "claude\n",
        "codex": "codex\n",
        "gemini": "gemini\n",
    }
    assert leases(ledger) == {}
    denied = [line for line in swarm.install.log_lines() if " denied " in line]
    assert len(denied) == 6, denied


# --------------------------------------------------------------------------- liveness


def test_a_codex_holder_killed_with_sigkill_stops_blocking_at_once(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    codex_bin: str,
    gemini_bin: str,
    mock_api: MockApiFactory,
    mock_responses: MockResponsesFactory,
    tmp_path: Path,
) -> None:
    swarm = _swarm(install_agent_hooks, git_project, claude_bin, codex_bin, gemini_bin)
    project, ledger = swarm.project, ledger_dir(swarm.project)
    z, never = project / "z.txt", tmp_path / "never"
    codex_api = mock_responses(
        [
            apply_patch(add_file_patch("z.txt", "from codex"), call_id="call_z"),
            wait_until(file_exists(never), timeout=120),
            "Never sent.",
        ]
    )
    codex = swarm.codex(codex_api, CX)
    try:
        wait_for(lambda: turns_done(MAIN, 1)(codex_api), "codex wrote z.txt", timeout=60)
        pid = codex.process.pid
        (lease,) = leases(ledger)["z.txt"]
        assert (lease["writer"], lease["client"]) == (CX, "codex")
        assert is_client_process(lease["pid"], pid, "codex")
        held = check(swarm.install, "z.txt", project, CC)
        assert held["allowed"] is False
        assert held["held_by"][0]["holder"] == f'Codex agent "{CX}"'
        os.killpg(pid, signal.SIGKILL)  # codex and whatever it runs: no SessionEnd
        killed = codex.result(60)
    finally:
        never.touch()
    assert killed.returncode == -signal.SIGKILL
    assert [item["writer"] for item in leases(ledger)["z.txt"]] == [CX]  # on disk, counts not
    assert check(swarm.install, "z.txt", project, CC)["allowed"] is True
    claude_api = mock_api([calls(write(z, "from claude\n")), "Claude wrote z.txt."])
    claude = swarm.claude(claude_api, CC).result()
    finished_ok(claude, claude_api, swarm.install, "claude")
    (wrote,) = claude_api.tool_results()
    assert not wrote.is_error and z.read_text() == "from claude\n"


# --------------------------------------------------------------------------- Claude Code's skill lines


def test_a_skill_shell_line_into_a_held_file_is_refused(
    install_agent_hooks: InstallAgentHooks,
    git_project: Path,
    claude_bin: str,
    claude_skill_bin: str,
    mock_api: MockApiFactory,
    tmp_path: Path,
) -> None:
    """Agent A (Claude Code 2.1.328, which ignores the PreSkillShellCommand key) holds c.txt;
    agent B (2.1.332) loads a skill whose shell line writes c.txt: the line does not run."""
    install = install_agent_hooks()
    assert '"PreSkillShellCommand"' in install.settings_path.read_text()
    project = git_project.resolve()
    skill = project / ".claude" / "skills" / "stamp" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: stamp\ndescription: Stamp c.txt.\n---\nStamped:\n"
        "!`echo stamped > c.txt && echo ok`\n"
    )
    c, done = project / "c.txt", tmp_path / "done"
    options: dict[str, Any] = {
        "cwd": project,
        "home": install.home,
        "extra_env": install.claude_env(),
    }
    holder_api = mock_api(
        [calls(write(c, "from A\n")), wait_until(file_exists(done), timeout=120), "A done."]
    )
    holder = InThread(
        run_claude,
        "Hold c.txt.",
        server_url=holder_api.url,
        agent_name=CC,
        binary=claude_bin,
        timeout=180,
        **options,
    )
    try:
        wait_for(lambda: turns_done(MAIN, 1)(holder_api), "A wrote c.txt", timeout=60)
        loader_api = mock_api([calls(ToolCall("Skill", {"skill": "stamp"})), "B done."])
        loader = run_claude(
            "Stamp it.",
            server_url=loader_api.url,
            agent_name="proj__cc_2",
            binary=claude_skill_bin,
            timeout=120,
            **options,
        )
    finally:
        done.touch()
    finished_ok(holder.result(), holder_api, install, "A (2.1.328)")
    finished_ok(loader, loader_api, install, "B (2.1.332)")
    assert c.read_text() == "from A\n"
    told = "\n".join(str(r.json) for r in loader_api.main_requests[1:])
    assert "[not run: blocked by hook: agent-hooks: c.txt is being changed by" in told, told[-3000:]
    assert f'agent \\"{CC}\\"' in told or f'agent "{CC}"' in told
    denied = [line for line in install.log_lines() if " denied " in line]
    assert (
        len(denied) == 1 and "agent=proj__cc_2 event=PreSkillShellCommand denied Bash" in denied[0]
    )
