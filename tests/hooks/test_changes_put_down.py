"""Issue 33, item 4: a held file changed inside another writer's shell command is
put down to that command in every client and permission mode — the client need
not report the files a command changed — and that writer is told at its next hook
(`leases.command_windows`, `leases.command_notices`). Real entry scripts, payloads
captured from each real client, HOME in a temp dir.

The moment a file changed is its mtime: a test sets it (`os.utime`) where the rule
it pins needs it, inside or outside a command's window."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from hook_runner import HookResult, HookRunner, context_of, failures

HOLDER, WRITER, THIRD = "proj__cc_1", "proj__cc_2", "proj__cc_3"


class Client(NamedTuple):
    """One client's shell command as its hooks see it: the entry's client argument,
    its before and after events and payloads, and how it names a call."""

    name: str | None  # the entry's first argument (None: Claude Code)
    before: tuple[str, str]  # (event, fixture)
    after: tuple[str, str]
    call_ids: bool  # its payloads carry the call's id
    duration: bool  # its PostToolUse says how long the command ran
    label: str  # how a writer of this client is named


CLAUDE = Client(
    None, ("PreToolUse", "PreToolUse_Bash"), ("PostToolUse", "PostToolUse_Bash"), True, True, ""
)
CODEX = Client(
    "codex",
    ("PreToolUse", "codex/PreToolUse_Bash_shell_write"),
    ("PostToolUse", "codex/PostToolUse_Bash_shell_write"),
    True,
    False,
    "Codex ",
)
GEMINI = Client(
    "gemini",
    ("BeforeTool", "gemini/BeforeTool_run_shell_command"),
    ("AfterTool", "gemini/AfterTool_run_shell_command"),
    False,
    False,
    "Gemini CLI ",
)
QWEN = Client(
    "qwen",
    ("PreToolUse", "qwen/PreToolUse_run_shell_command"),
    ("PostToolUse", "qwen/PostToolUse_run_shell_command"),
    True,
    True,
    "Qwen Code ",
)
CLIENTS = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI, "qwen": QWEN}


def start(run: HookRunner, agent: str, client: Client = CLAUDE) -> None:
    """The agent's SessionStart (its state exists: it can be told)."""
    fixture = {
        None: "SessionStart_startup",
        "codex": "codex/SessionStart_startup",
        "qwen": "qwen/SessionStart",
    }.get(client.name, "gemini/SessionStart")
    assert run("SessionStart", fixture, agent=agent, client=client.name).code == 0


def edit(run: HookRunner, rel: str, text: str, agent: str = HOLDER) -> None:
    """A Write in Claude Code (PreToolUse, the write, PostToolUse): the agent holds it."""
    path = run.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pre = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": text})
    assert run("PreToolUse", pre, agent=agent).out is None
    path.write_text(text)
    post = run.payload("PostToolUse_Write", tool_input={"file_path": str(path), "content": text})
    assert run("PostToolUse", post, agent=agent).code == 0


def said(result: HookResult, client: Client = CLAUDE) -> str:
    """The context a PostToolUse (AfterTool) gave the model, "" for none."""
    if result.out is None:
        return ""
    return context_of(result, client.after[0])


LATER = {  # a tool call that is no shell command, in each client
    None: ("PostToolUse", "PostToolUse_Read"),
    "codex": ("PostToolUse", "codex/PostToolUse_collaborationwait_agent_wait_subagent"),
    "gemini": ("AfterTool", "gemini/AfterTool_read_file"),
    "qwen": ("PostToolUse", "qwen/PostToolUse_read_file"),
}


def later(run: HookRunner, agent: str = HOLDER, client: Client = CLAUDE) -> str:
    """The agent's next hook: the PostToolUse of a tool call that is no shell command
    (a shell command's own window would hold a change made just before it)."""
    event, fixture = LATER[client.name]
    return said(run(event, fixture, agent=agent, client=client.name), client)


class Shell:
    """One shell command of `agent` in `client`: `before` (its PreToolUse), then
    whatever the test does while it runs, then `after` (its PostToolUse)."""

    def __init__(
        self, run: HookRunner, client: Client, agent: str | None, command: str, call: str = "call_x"
    ) -> None:
        self.run, self.client, self.agent, self.command = run, client, agent, command
        self.fields: dict[str, Any] = {"tool_input": {"command": command}}
        if client.call_ids:
            self.fields["tool_use_id"] = call
        self.began = 0.0

    def before(self) -> HookResult:
        self.began = time.time()
        event, fixture = self.client.before
        payload = self.run.payload(fixture, **self.fields)
        result = self.run(event, payload, agent=self.agent, client=self.client.name)
        assert result.code == 0 and not _denied(result), result
        return result

    def after(self, duration_ms: float | None = None) -> HookResult:
        event, fixture = self.client.after
        payload = self.run.payload(fixture, **self.fields)
        if self.client is CLAUDE:  # default mode: no bashEditDiff
            payload["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
        if self.client.duration:
            if duration_ms is None:
                duration_ms = (time.time() - self.began) * 1000 + 50 if self.began else 10
            payload["duration_ms"] = duration_ms
        return self.run(event, payload, agent=self.agent, client=self.client.name)


def _denied(result: HookResult) -> bool:
    text = json.dumps(result.out or {})
    return '"deny"' in text


def change(path: Path, text: str, at: float | None = None) -> float:
    """Someone changes `path` (a script, unseen); its mtime set to `at` when given."""
    path.write_text(text)
    if at is not None:
        os.utime(path, (at, at))
    return path.stat().st_mtime


def lease_of(run: HookRunner, rel: str) -> dict[str, Any]:
    name = rel.replace("/", "%2F")
    doc = json.loads((run.project / ".git" / "agent-hooks" / "leases" / name).read_text())
    [held] = doc["leases"]
    assert isinstance(held, dict)
    return held


@pytest.mark.parametrize("writer_client", CLIENTS.values(), ids=CLIENTS.keys())
def test_a_change_inside_another_writers_command_names_it_and_tells_it(
    run_hook: HookRunner, writer_client: Client
) -> None:
    """Claude Code in default mode, Codex, Gemini CLI: the client reports no files;
    the holder hears whose command it was, with the way back, and the writer hears
    what its command did, at its next hook."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER, writer_client)
    edit(run_hook, "src/app.py", "mine\n")
    command = Shell(run_hook, writer_client, WRITER, "python3 gen.py")
    command.before()
    change(run_hook.project / "src" / "app.py", "generated\n")
    assert said(command.after(), writer_client) == ""  # nothing seen yet: no one checked
    told = later(run_hook)
    who = f'{writer_client.label}agent "{WRITER}"'
    assert f"src/app.py, which you are changing, was changed by {who}'s shell command" in told
    assert "the change fell inside that command, which ran from " in told
    assert f"{who} has been told" in told
    assert "agent-hooks restore src/app.py" in told  # kept versions: the way back
    assert "someone else" not in told
    assert lease_of(run_hook, "src/app.py")["changed"]["by"] == f"{who}'s shell command"
    heard = later(run_hook, WRITER, writer_client)
    assert f'your shell command changed src/app.py, which agent "{HOLDER}" is changing' in heard
    assert f'agent "{HOLDER}" has been told' in heard
    assert later(run_hook, WRITER, writer_client) == ""  # told once
    assert later(run_hook) == ""


@pytest.mark.parametrize("holder_client", [CODEX, GEMINI], ids=["codex", "gemini"])
def test_a_holder_of_any_client_names_the_writer(
    run_hook: HookRunner, holder_client: Client
) -> None:
    """The holder's check is the same in every client: a Codex or Gemini CLI holder
    hears it too (here its file was written by a shell command: a lease of its own)."""
    start(run_hook, HOLDER, holder_client)
    start(run_hook, WRITER)
    (run_hook.project / "app.py").write_text("old\n")
    own = Shell(run_hook, holder_client, HOLDER, "echo mine > app.py", "call_own")
    own.before()
    (run_hook.project / "app.py").write_text("mine\n")
    own.after()
    assert lease_of(run_hook, "app.py")["writer"] == HOLDER
    command = Shell(run_hook, CLAUDE, WRITER, "python3 -c 'rewrite()'", "toolu_w")
    command.before()
    change(run_hook.project / "app.py", "rewritten\n")
    command.after()
    told = later(run_hook, HOLDER, holder_client)
    assert (
        f'app.py, which you are changing, was changed by agent "{WRITER}"\'s shell command' in told
    )
    heard = later(run_hook, WRITER)
    assert f'which {holder_client.label}agent "{HOLDER}" is changing' in heard


def test_overlapping_commands_of_two_writers_are_both_named(run_hook: HookRunner) -> None:
    """Two writers' commands ran when the file changed: each may have made it;
    each is named to the holder, and each is told, naming the other."""
    for agent, client in ((HOLDER, CLAUDE), (WRITER, CLAUDE), (THIRD, CODEX)):
        start(run_hook, agent, client)
    edit(run_hook, "app.py", "mine\n")
    first = Shell(run_hook, CLAUDE, WRITER, "make build", "toolu_b")
    second = Shell(run_hook, CODEX, THIRD, "npm test", "call_c")
    first.before()
    second.before()
    change(run_hook.project / "app.py", "one of them\n")
    first.after()
    second.after()
    told = later(run_hook)
    both = f'agent "{WRITER}" and Codex agent "{THIRD}"'
    assert "app.py, which you are changing, was changed at " in told
    assert f"it fell inside shell commands of {both}" in told
    assert "each may have made the change; each has been told" in told
    by = lease_of(run_hook, "app.py")["changed"]["by"]
    assert by == f'a shell command of agent "{WRITER}" or of Codex agent "{THIRD}"'
    heard_b = later(run_hook, WRITER)
    assert (
        f'your shell command may have changed app.py, which agent "{HOLDER}" is changing' in heard_b
    )
    assert f'inside a shell command of Codex agent "{THIRD}"' in heard_b
    heard_c = later(run_hook, THIRD, CODEX)
    assert f'inside a shell command of agent "{WRITER}"' in heard_c


@pytest.mark.parametrize("writer_client", CLIENTS.values(), ids=CLIENTS.keys())
def test_a_change_outside_every_window_is_still_someone_elses(
    run_hook: HookRunner, writer_client: Client
) -> None:
    """A change made before the writer's command started (by more than the slack)
    is not put down to it, nor to a command that ended before it: the holder hears
    "someone else", the writer nothing."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER, writer_client)
    edit(run_hook, "app.py", "mine\n")
    path = run_hook.project / "app.py"
    command = Shell(run_hook, writer_client, WRITER, "make")
    command.before()
    change(path, "unseen\n", at=command.began - 4)  # 4 s before it started
    command.after()
    told = later(run_hook)
    assert "app.py, which you are changing, was changed by someone else" in told
    assert f'agent "{WRITER}"' not in told
    assert lease_of(run_hook, "app.py")["changed"]["by"] is None
    assert later(run_hook, WRITER, writer_client) == ""
    # ... nor to a command that ended before the change
    edit(run_hook, "app.py", "mine again\n")
    done = Shell(run_hook, writer_client, WRITER, "make again", "call_y")
    done.before()
    done.after()
    time.sleep(1.3)
    change(path, "unseen again\n")  # more than the slack after it ended
    assert "was changed by someone else" in later(run_hook)
    assert later(run_hook, WRITER, writer_client) == ""


def test_a_command_still_running_is_named(run_hook: HookRunner) -> None:
    """The holder's check comes while the writer's command runs (no end yet): its
    start alone names it, and the writer hears it at that command's own end."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER, CODEX)
    edit(run_hook, "app.py", "mine\n")
    command = Shell(run_hook, CODEX, WRITER, "./long-build.sh")
    command.before()
    change(run_hook.project / "app.py", "built\n")
    told = later(run_hook)
    assert f'was changed by Codex agent "{WRITER}"\'s shell command' in told
    heard = said(command.after(), CODEX)
    assert "your shell command changed app.py" in heard


def test_a_turn_that_ended_runs_no_command_on(run_hook: HookRunner) -> None:
    """A command the client ended without a PostToolUse (refused by the person, a
    failure Claude Code reports elsewhere) counts no more once the writer's turn
    ended (Stop); until then it counts as running."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    edit(run_hook, "app.py", "mine\n")
    Shell(run_hook, CLAUDE, WRITER, "rm -rf build", "toolu_refused").before()  # never ran
    assert run_hook("Stop", "Stop", agent=WRITER).code == 0
    change(run_hook.project / "app.py", "unseen\n", at=time.time() + 1.2)
    time.sleep(0.3)
    assert "was changed by someone else" in later(run_hook)


def test_a_change_before_the_holders_short_command_is_someone_elses(
    run_hook: HookRunner,
) -> None:
    """Issue 33's first gap: `duration_ms` is milliseconds. A held file changed by
    someone else 5 s before the holder's 200 ms command is theirs — not "changed
    while your last shell command ran" (as a window read in seconds would say)."""
    edit(run_hook, "app.py", "mine\n")
    change(run_hook.project / "app.py", "someone's\n", at=time.time() - 5)
    told = said(Shell(run_hook, CLAUDE, HOLDER, "git status").after(duration_ms=200))
    assert "app.py, which you are changing, was changed by someone else" in told
    assert "changed while your last shell command ran" not in told


@pytest.mark.parametrize("holder_client", [CODEX, GEMINI], ids=["codex", "gemini"])
def test_without_a_duration_the_holders_command_begins_at_its_start(
    run_hook: HookRunner, holder_client: Client
) -> None:
    """Codex and Gemini CLI say nothing of how long a command ran: its start is the
    one its PreToolUse kept, not the holder's last activity, so a change made
    before it started is someone else's."""
    start(run_hook, HOLDER, holder_client)
    own = Shell(run_hook, holder_client, HOLDER, "echo mine > app.py", "call_own")
    own.before()
    (run_hook.project / "app.py").write_text("mine\n")
    own.after()
    state = run_hook.state(HOLDER)
    state["last_activity"] = time.time() - 60  # its last tool call, a minute ago
    run_hook.state_path(HOLDER).write_text(json.dumps(state))
    change(run_hook.project / "app.py", "someone's\n", at=time.time() - 5)
    command = Shell(run_hook, holder_client, HOLDER, "ls", "call_ls")
    command.before()
    told = said(command.after(), holder_client)
    assert "app.py, which you are changing, was changed by someone else" in told
    assert "changed while your last shell command ran" not in told


@pytest.mark.parametrize("holder_client", CLIENTS.values(), ids=CLIENTS.keys())
def test_a_change_while_the_holders_own_command_ran_may_be_its_own(
    run_hook: HookRunner, holder_client: Client
) -> None:
    """...and a change during the holder's own command is told as maybe its own,
    naming another writer whose command ran then too (which is told as well)."""
    start(run_hook, HOLDER, holder_client)
    start(run_hook, WRITER)
    own = Shell(run_hook, holder_client, HOLDER, "echo mine > app.py", "call_own")
    own.before()
    (run_hook.project / "app.py").write_text("mine\n")
    own.after()
    mine = Shell(run_hook, holder_client, HOLDER, "python3 gen.py", "call_gen")
    theirs = Shell(run_hook, CLAUDE, WRITER, "python3 other.py", "toolu_other")
    mine.before()
    theirs.before()
    change(run_hook.project / "app.py", "one of us\n")
    theirs.after()
    told = said(mine.after(), holder_client)
    assert "app.py, which you are changing, changed while your last shell command ran" in told
    assert f'A shell command of agent "{WRITER}" ran at that moment too' in told
    heard = later(run_hook, WRITER)
    assert "your shell command may have changed app.py" in heard
    assert f'{holder_client.label}agent "{HOLDER}" (its holder) itself' in heard


def test_a_removed_held_file_is_put_down_to_the_command_that_removed_it(
    run_hook: HookRunner,
) -> None:
    """A file that is gone has no mtime: its directory's (a removal moves it) tells
    when, so the command that removed it is named, not whichever runs when the
    holder looks."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER, GEMINI)
    edit(run_hook, "pkg/app.py", "mine\n")
    command = Shell(run_hook, GEMINI, WRITER, "python3 tidy.py")
    command.before()
    (run_hook.project / "pkg" / "app.py").unlink()
    command.after()
    time.sleep(1.2)
    told = later(run_hook)
    assert f'pkg/app.py, which you are changing, was changed by Gemini CLI agent "{WRITER}"' in told


def test_a_writer_of_the_holders_own_agent_is_named_not_told(run_hook: HookRunner) -> None:
    """A subagent's command changed its parent's held file: the parent is told who;
    the agent's alerts are the parent's own, so nothing more is queued."""
    start(run_hook, HOLDER)
    edit(run_hook, "app.py", "mine\n")
    sub = Shell(run_hook, CLAUDE, HOLDER, "python3 fix.py", "toolu_sub")
    sub.fields["agent_id"] = "a4d71bd7c0ffee"
    sub.fields["agent_type"] = "general-purpose"
    sub.before()
    change(run_hook.project / "app.py", "the subagent's\n")
    sub.after()
    told = later(run_hook)
    assert "was changed by the general-purpose subagent (a4d71bd7) of agent" in told
    assert "has been told" not in told
    assert run_hook.state(HOLDER)["alerts"] == []


def test_a_writer_without_state_here_is_named_but_not_said_to_be_told(
    run_hook: HookRunner,
) -> None:
    """A writer whose agent keeps no state in this HOME (another machine, another
    HOME on one ledger) cannot be told: the holder is not told it was."""
    start(run_hook, HOLDER)
    edit(run_hook, "app.py", "mine\n")
    command = Shell(run_hook, CODEX, WRITER, "make")
    command.before()
    change(run_hook.project / "app.py", "theirs\n")
    command.after()
    told = later(run_hook)
    assert f'was changed by Codex agent "{WRITER}"\'s shell command' in told
    assert "has been told" not in told


def test_a_change_another_hook_saw_keeps_its_name(run_hook: HookRunner) -> None:
    """bypassPermissions: the writer's own hook saw its command change the file
    (bashEditDiff) and noted it; that note is what the holder hears."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    edit(run_hook, "app.py", "mine\n")
    change(run_hook.project / "app.py", "sed'ed\n")
    payload = run_hook.payload("PostToolUse_Bash", tool_input={"command": "sed -i s/a/b/ app.py"})
    payload["duration_ms"] = 100
    payload["tool_response"]["bashEditDiff"] = {
        "files": [],
        "changedFiles": [str(run_hook.project / "app.py")],
        "moreFiles": 0,
    }
    assert "changed files that another writer holds" in said(
        run_hook("PostToolUse", payload, agent=WRITER)
    )
    told = later(run_hook)
    assert f'was changed by agent "{WRITER}"\'s shell command at' in told
    assert "fell inside" not in told  # the note, not the windows


@pytest.mark.parametrize("writer_client", [CODEX, GEMINI], ids=["codex", "gemini"])
def test_a_long_command_is_named_from_its_start(
    run_hook: HookRunner, writer_client: Client
) -> None:
    """Codex and Gemini CLI give no duration: the command's start is the one its
    PreToolUse kept, so a change made early in a long command is put down to it."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER, writer_client)
    edit(run_hook, "app.py", "mine\n")
    command = Shell(run_hook, writer_client, WRITER, "./build.sh")
    command.before()
    change(run_hook.project / "app.py", "early in the build\n", at=command.began + 0.05)
    time.sleep(1.3)  # the build goes on: its end is more than the slack after the change
    command.after()
    assert f'{writer_client.label}agent "{WRITER}"\'s shell command' in later(run_hook)


def test_a_refused_command_and_a_skill_line_keep_no_start(run_hook: HookRunner) -> None:
    """A command the gate refused never runs, and a skill's shell line gets no
    PostToolUse: neither counts as running while the file changes."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    edit(run_hook, "app.py", "mine\n")
    refused = Shell(run_hook, CLAUDE, WRITER, "echo theirs > app.py", "toolu_refused")
    payload = run_hook.payload("PreToolUse_Bash", **refused.fields)
    assert _denied(run_hook("PreToolUse", payload, agent=WRITER))
    line = run_hook.payload(
        "PreToolUse_Bash",
        hook_event_name="PreSkillShellCommand",
        tool_input={"command": "echo stamped > stamp.txt && echo ok"},
        tool_use_id="toolu_387554530033:preamble-0",
    )
    assert not _denied(run_hook("PreSkillShellCommand", line, agent=WRITER))
    change(run_hook.project / "app.py", "unseen\n")
    assert "was changed by someone else" in later(run_hook)
    assert not (run_hook.project / ".git" / "agent-hooks" / "commands").exists()


def test_an_unnamed_writer_is_told_in_its_own_conversation(run_hook: HookRunner) -> None:
    """Without AGENT_NAME every conversation is an agent of its own, and all share one
    state file: the notice goes to the conversation whose command it was."""
    start(run_hook, HOLDER)
    for session in ("conv-b", "conv-c"):
        payload = run_hook.payload("SessionStart_startup", session_id=session)
        assert run_hook("SessionStart", payload, agent=None).code == 0
    edit(run_hook, "app.py", "mine\n")
    command = Shell(run_hook, CLAUDE, None, "python3 gen.py", "toolu_b")
    command.fields["session_id"] = "conv-b"
    command.before()
    change(run_hook.project / "app.py", "unnamed\n")
    command.after()
    told = later(run_hook)
    assert "was changed by the unnamed agent of conversation conv-b's shell command" in told
    assert "has been told" in told

    def read_in(session: str) -> str:
        payload = run_hook.payload("PostToolUse_Read", session_id=session)
        return said(run_hook("PostToolUse", payload, agent=None))

    assert read_in("conv-c") == ""  # not the other conversation's
    assert "your shell command changed app.py" in read_in("conv-b")


def test_an_earlier_changes_note_does_not_name_a_later_change(run_hook: HookRunner) -> None:
    """The lease notes who changed the file the first time (the writer's own hook saw
    it); a second change, made inside another writer's command, names that writer."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    start(run_hook, THIRD, CODEX)
    edit(run_hook, "app.py", "mine\n")
    change(run_hook.project / "app.py", "sed'ed\n", at=time.time() - 5)
    payload = run_hook.payload("PostToolUse_Bash", tool_input={"command": "./fix"})
    payload["duration_ms"] = 6000
    payload["tool_response"]["bashEditDiff"] = {
        "files": [{"filePath": str(run_hook.project / "app.py"), "created": False}],
        "changedFiles": [],
        "moreFiles": 0,
    }
    run_hook("PostToolUse", payload, agent=WRITER)
    assert f'was changed by agent "{WRITER}"\'s shell command' in later(run_hook)
    time.sleep(1.1)
    command = Shell(run_hook, CODEX, THIRD, "python3 gen.py")
    command.before()
    change(run_hook.project / "app.py", "generated\n")
    command.after()
    told = later(run_hook)
    assert f'was changed by Codex agent "{THIRD}"\'s shell command' in told
    assert WRITER not in told


def test_one_notice_a_writer_however_many_files(run_hook: HookRunner) -> None:
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    for rel in ("a.py", "b.py"):
        edit(run_hook, rel, "mine\n")
    command = Shell(run_hook, CLAUDE, WRITER, "python3 fmt.py")
    command.before()
    for rel in ("a.py", "b.py"):
        change(run_hook.project / rel, "formatted\n")
    command.after()
    told = later(run_hook)
    assert told.count(f'agent "{WRITER}" has been told') == 2  # a notice a file
    heard = later(run_hook, WRITER)
    assert heard.count("agent-hooks:") == 1
    assert "your shell command changed a.py and b.py, which agent" in heard
    assert "Leave these files to their holder: do not write them again" in heard


def test_a_writer_that_can_hold_nothing_keeps_no_windows(run_hook: HookRunner) -> None:
    """A bad AGENT_NAME is checked against everyone's claims but holds nothing: its
    commands are not kept (and nothing fails)."""
    start(run_hook, HOLDER)
    edit(run_hook, "app.py", "mine\n")
    command = Shell(run_hook, CLAUDE, "bad/name", "ls", "toolu_bad")
    assert not failures(command.before())
    assert [line for line in failures(command.after()) if "AGENT_NAME" not in line] == []
    assert not (run_hook.project / ".git" / "agent-hooks" / "commands").exists()


@pytest.mark.parametrize("damage", ["fifo", "symlinked commands", "junk"])
def test_a_damaged_commands_record_fails_open(
    run_hook: HookRunner, tmp_path: Path, damage: str
) -> None:
    """A FIFO planted in the writer's place, a `commands` that is a symlink out of
    the ledger, a file of junk: the writer's hooks neither wait nor fail (each logs
    what it could not keep), nothing is written outside the ledger, and the holder is
    still told of the change — by someone else, as no window can be read."""
    start(run_hook, HOLDER)
    start(run_hook, WRITER)
    edit(run_hook, "src/app.py", "mine\n")
    commands = run_hook.project / ".git" / "agent-hooks" / "commands"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if damage == "symlinked commands":
        commands.symlink_to(elsewhere)
    else:
        first = Shell(run_hook, CLAUDE, WRITER, "true", "toolu_first")
        first.before()
        first.after()
        [mine] = commands.glob(f"{WRITER}*")  # the writer's own record, then damaged
        mine.unlink()
        if damage == "fifo":
            os.mkfifo(mine)
        else:
            mine.write_bytes(bytes(range(256)) * 200)
    command = Shell(run_hook, CLAUDE, WRITER, "python3 gen.py")
    began = time.monotonic()
    pre = command.before()
    change(run_hook.project / "src" / "app.py", "generated\n")
    post = command.after()
    assert time.monotonic() - began < 20  # no hook waited on the FIFO
    assert pre.code == 0 and post.code == 0
    assert list(elsewhere.iterdir()) == []
    told = later(run_hook)
    assert "src/app.py, which you are changing, was changed by someone else" in told, told
    if damage != "junk":
        logged = "\n".join(run_hook.log_lines())
        assert "when this shell command started not kept" in logged, logged
