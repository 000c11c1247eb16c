"""`agent-hooks demo`: a newcomer's first run, without Claude Code.

Two simulated agents, alice and bob, share a throw-away project. Every hook call is
made exactly as Claude Code makes it — a new `<python> -IS hooks/entry.py <Event>`
process with a realistic payload on stdin — and every `agent-hooks` command is the
real command, run in-process. First the automatic part: alice writes `src/app.py`
and so holds it (a lease), bob's Write of it is denied (the real message is
shown). Then a reservation: bob claims `docs/**`, alice's Write there is denied;
alice's conversation ends and her lease with it, bob's Write passes, bob releases,
and both trails are printed.

Invariants:

* Everything happens under one temporary directory with its own HOME; hook
  processes get an environment built from scratch (only PATH is kept), so the
  user's own `~/.claude` (or CLAUDE_CONFIG_DIR) is never read or written.
* The directory is removed at the end unless `--keep` is given.
* Every step checks its outcome: a step that does not behave as narrated (say, a
  hook that cannot find the package and so allows everything) stops the demo with
  a one-line error and exit status 1, so the demo doubles as an installation check.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import click

import agent_hooks
from agent_hooks.cli._common import Env, emit_json, json_option
from agent_hooks.clients import claude_code

ALICE = "alice"
BOB = "bob"
LEASED = "src/app.py"
RESERVED = "docs/**"
REASON = "demo-42"
HOOK_TIMEOUT = 30
ALICE_WRITES = 'print("hello from alice")\n'
BOB_WRITES = 'print("hello from bob")\n'


class DemoError(Exception):
    """A step did not behave as the demo says it does."""


def entry_candidates() -> list[Path]:
    """Where hooks/entry.py may be: beside `src/` in a clone (or the plugin), else in
    the data directory install.sh made (`<data>/venv` next to `<data>/hooks`)."""
    package = Path(agent_hooks.__file__).resolve().parent
    return [
        package.parent.parent / "hooks" / "entry.py",
        Path(sys.prefix).parent / "hooks" / "entry.py",
    ]


def find_entry() -> Path:
    for candidate in entry_candidates():
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in entry_candidates())
    raise click.ClickException(f"cannot find the hook entry script (looked for {looked})")


def _field(answer: dict[str, Any] | None, name: str) -> str | None:
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    value = specific.get(name) if isinstance(specific, dict) else None
    return value if isinstance(value, str) else None


class Demo:
    """One run: the temp project, the two agents, and the transcript of its steps."""

    def __init__(self, base: Path, entry: Path, narrate: bool, commands: click.Command) -> None:
        self.base = base
        self.commands = commands  # the `agent-hooks` group, to run its commands in-process
        self.home = base / "home"
        self.project = base / "project"
        self.entry = entry
        self.narrate = narrate
        self.steps: list[dict[str, Any]] = []
        self.sessions = {ALICE: str(uuid.uuid4()), BOB: str(uuid.uuid4())}
        self.tool_uses = 0

    def set_up(self) -> None:
        self.home.mkdir()
        (self.project / "src").mkdir(parents=True)
        (self.project / "docs").mkdir()
        (self.project / ".git").mkdir()  # marks the project root (hooks look for .git, not git)
        (self.project / "README.md").write_text("# demo project\n")
        (self.project / "docs" / "index.md").write_text("# docs\n")
        (self.project / "src" / "app.py").write_text('print("hello")\n')
        self.project = Path(os.path.realpath(self.project))

    def environ(self, agent: str) -> dict[str, str]:
        """A hook's environment as Claude Code gives it: the project and the conversation in
        its variables (`clients.claude_code`)."""
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.home),
            "AGENT_NAME": agent,
            claude_code.PROJECT_VARIABLES[0]: str(self.project),
            claude_code.SESSION_VARIABLES[0]: self.sessions[agent],
        }

    def payload(self, agent: str, event: str, **fields: Any) -> dict[str, Any]:
        """What the client sends on stdin (the shapes of tests/fixtures/payloads)."""
        session = self.sessions[agent]
        slug = str(self.project).replace("/", "-")
        if event == "PreToolUse":
            self.tool_uses += 1
        if "tool_name" in fields:
            fields["tool_use_id"] = f"toolu_demo_{self.tool_uses:04d}"
        return {
            "session_id": session,
            "transcript_path": f"{self.home}/.claude/projects/{slug}/{session}.jsonl",
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }

    def hook(self, agent: str, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Run the real entry script as Claude Code does; its JSON answer, or None."""
        try:
            proc = subprocess.run(
                [sys.executable, "-IS", str(self.entry), event],
                input=json.dumps(payload).encode(),
                capture_output=True,
                check=False,
                env=self.environ(agent),
                cwd=str(self.project),
                timeout=HOOK_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise DemoError(f"the {event} hook took longer than {HOOK_TIMEOUT} s") from None
        problem = proc.stderr.decode(errors="replace").strip()
        if proc.returncode != 0 or problem:
            raise DemoError(f"the {event} hook exited {proc.returncode}: {problem[-300:]}")
        text = proc.stdout.decode(errors="replace").strip()
        if not text:
            return None
        try:
            answer: dict[str, Any] = json.loads(text)
        except ValueError:
            raise DemoError(f"the {event} hook printed non-JSON: {text[:200]!r}") from None
        return answer

    def cli(self, agent: str, *args: str) -> str:
        """Run a real `agent-hooks` command in-process as `agent`; what it printed."""
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                self.commands.main(
                    args=list(args),
                    prog_name="agent-hooks",
                    obj=Env(environ=self.environ(agent)),
                    standalone_mode=False,
                )
        except click.ClickException as exc:
            raise DemoError(f"`agent-hooks {shlex.join(args)}`: {exc.format_message()}") from None
        return out.getvalue()

    def say(self, text: str = "", prefix: str = "") -> None:
        if self.narrate:
            for line in text.rstrip("\n").splitlines() or [""]:
                click.echo(prefix + line)

    def step(self, title: str, agent: str, kind: str, **record: Any) -> dict[str, Any]:
        entry = {"step": len(self.steps) + 1, "title": title, "agent": agent, "kind": kind}
        entry.update(record)
        self.steps.append(entry)
        self.say()
        self.say(click.style(f"Step {entry['step']}. {title}", bold=True))
        return entry

    # -- the scenario -------------------------------------------------------------

    def start(self, agent: str) -> None:
        entry = self.step(
            f"{agent} starts a conversation; SessionStart registers {agent} and tells its model:",
            agent,
            "hook",
            event="SessionStart",
        )
        payload = self.payload(agent, "SessionStart", source="startup")
        answer = self.hook(agent, "SessionStart", payload)
        context = _field(answer, "additionalContext")
        if not context:
            raise DemoError("SessionStart gave the model no context")
        entry.update(output=answer, text=context)
        self.say(context, "    | ")

    def command(self, agent: str, title: str, *args: str) -> None:
        entry = self.step(title, agent, "cli", command=["agent-hooks", *args])
        entry["text"] = self.cli(agent, *args)
        self.say(f"$ AGENT_NAME={agent} agent-hooks {shlex.join(args)}", "    ")
        self.say(entry["text"], "    ")

    def tool(
        self,
        agent: str,
        tool: str,
        rel: str,
        title: str,
        *,
        content: str | None = None,
        expect_deny: bool = False,
    ) -> None:
        """One tool call: PreToolUse, then (when allowed) the tool's effect and PostToolUse."""
        path = self.project / rel
        tool_input: dict[str, Any] = {"file_path": str(path)}
        if content is not None:
            tool_input["content"] = content
        entry = self.step(title, agent, "hook", event="PreToolUse", tool=tool, path=rel)
        answer = self.hook(
            agent,
            "PreToolUse",
            self.payload(agent, "PreToolUse", tool_name=tool, tool_input=tool_input),
        )
        reason = _field(answer, "permissionDecisionReason")
        entry.update(output=answer, decision=_field(answer, "permissionDecision") or "allow")
        if expect_deny:
            if entry["decision"] != "deny" or not reason:
                raise DemoError(f"{agent}'s {tool} of {rel} was allowed; it should be denied")
            entry["text"] = reason
            self.say(
                f'PreToolUse answered "deny": the {tool} does not run, and {agent}\'s model reads:',
                "    ",
            )
            self.say(reason, "    | ")
            return
        if entry["decision"] == "deny":
            raise DemoError(f"{agent}'s {tool} of {rel} was denied: {reason}")
        response: dict[str, Any]
        if content is None:  # a Read
            text = path.read_text()
            response = {"type": "text", "file": {"filePath": str(path), "content": text}}
            done = f"Allowed (reads are never blocked); {rel} is now in {agent}'s trail as read."
        else:  # what Claude Code's Write tool now does
            response = {
                "type": "update" if path.exists() else "create",
                "filePath": str(path),
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            }
            path.write_text(content)
            done = f"Allowed; {rel} was written and PostToolUse added it to {agent}'s trail."
        entry["post_tool_use"] = self.hook(
            agent,
            "PostToolUse",
            self.payload(
                agent, "PostToolUse", tool_name=tool, tool_input=tool_input, tool_response=response
            ),
        )
        entry["text"] = done
        self.say(done, "    ")

    def end(self, agent: str) -> None:
        entry = self.step(
            f"{agent}'s conversation ends (SessionEnd): what it held goes with it.",
            agent,
            "hook",
            event="SessionEnd",
        )
        entry["output"] = self.hook(
            agent, "SessionEnd", self.payload(agent, "SessionEnd", reason="prompt_input_exit")
        )
        entry["text"] = f"{agent}'s lease on {LEASED} is released."
        self.say(entry["text"], "    ")

    def run(self) -> None:
        self.say(f"agent-hooks demo: two simulated agents, {ALICE} and {BOB}, share one project.")
        self.say(f"It all happens in {self.base}, with its own HOME: your ~/.claude is untouched.")
        self.say("Each hook runs exactly as Claude Code runs it, as a new process:")
        self.say(f"{sys.executable} -IS {self.entry} <Event>", "    ")
        self.start(ALICE)
        self.start(BOB)
        # 1. The automatic part: an edit holds its file (a lease); nobody reserves anything.
        self.tool(
            ALICE,
            "Write",
            LEASED,
            f"{ALICE} writes {LEASED}; the file is now hers while she works on it (a lease):",
            content=ALICE_WRITES,
        )
        self.tool(
            BOB,
            "Write",
            LEASED,
            f"{BOB} tries to write {LEASED}, which {ALICE} is changing:",
            content=BOB_WRITES,
            expect_deny=True,
        )
        # 2. Claiming an area ahead: a reservation.
        self.command(
            BOB,
            f"{BOB} claims everything under docs/ before rewriting it:",
            "reserve",
            RESERVED,
            "--reason",
            REASON,
        )
        self.tool(
            ALICE,
            "Write",
            "docs/guide.md",
            f"{ALICE} tries to write docs/guide.md, inside {BOB}'s reservation:",
            content="# guide\n",
            expect_deny=True,
        )
        self.end(ALICE)
        self.tool(
            BOB,
            "Write",
            LEASED,
            f"{BOB} tries {LEASED} again, now that {ALICE} is done:",
            content=BOB_WRITES,
        )
        self.command(BOB, f"{BOB} is done with docs/ and releases it:", "release", RESERVED)
        for agent in (ALICE, BOB):
            self.command(
                agent,
                f"{agent}'s trail: the files {agent} created, modified and read:",
                "trail",
                agent,
            )
        if (self.project / LEASED).read_text() != BOB_WRITES:
            raise DemoError(f"{LEASED} does not hold bob's write")


@click.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary project and HOME to look around.")
@json_option
def demo(keep: bool, as_json: bool) -> None:
    """Watch two simulated agents share a project; no Claude Code needed.

    alice writes src/app.py and so holds it (a lease: automatic), bob's Write of
    it is denied with the real message; bob reserves docs/**, alice's Write there
    is denied; alice's conversation ends, bob's Write passes, and both trails are
    shown. The real hook
    entry points run with realistic payloads in a temporary directory with its
    own HOME: nothing of yours is read or changed. Exits 1 if a step does not
    behave as described.
    """
    entry = find_entry()
    base = Path(tempfile.mkdtemp(prefix="agent-hooks-demo-"))
    run = Demo(base, entry, narrate=not as_json, commands=_commands())
    error: DemoError | None = None
    try:
        run.set_up()
        run.run()
    except DemoError as exc:
        error = exc
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    if as_json:
        emit_json(
            {
                "ok": error is None,
                "error": None if error is None else str(error),
                "directory": str(base),
                "kept": keep,
                "home": str(run.home),
                "project": str(run.project),
                "python": sys.executable,
                "entry": str(entry),
                "agents": [ALICE, BOB],
                "steps": run.steps,
            }
        )
    if error is not None:
        hint = "" if keep else " (run with --keep to inspect)"
        raise click.ClickException(f"demo step {len(run.steps)}: {error}{hint}")
    if as_json:
        return
    click.echo()
    click.echo(
        "That is the idea: a file an agent is changing is its own until it is done (a lease, "
        "taken at the edit); `agent-hooks reserve` claims a whole area ahead. A refused agent "
        "is told who holds what, and when it frees."
    )
    if keep:
        project_variable = claude_code.PROJECT_VARIABLES[0]
        env = shlex.join([f"HOME={run.home}", f"{project_variable}={run.project}"])
        click.echo(f"Kept {base}. To look around:")
        click.echo(f"    {env} agent-hooks trail {BOB}")
        click.echo(f"    {env} agent-hooks agents")
    else:
        click.echo(f"The temporary directory {base} was removed (--keep keeps it).")


def _commands() -> click.Group:
    """The `agent-hooks` commands the demo runs, in a group of their own."""
    from agent_hooks.cli import reserve, trail

    group = click.Group("agent-hooks")
    reserve.register(group)
    trail.register(group)
    return group


def register(group: click.Group) -> None:
    group.add_command(demo)
