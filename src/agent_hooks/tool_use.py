"""One hook event and its tool call as the hooks see them, whichever client made
them: the client-neutral request the client layer (`agent_hooks.clients`) builds
from a payload, and the adapters, the gate and the domain code read — they never
read a payload's own keys.

Invariants:

* A `HookEvent` holds what an event says about where and by whom it happens: the
  conversation (`session`), a subagent's or teammate's id and type, the directory
  it works in (`cwd`, absolute or None), its transcripts (absolute paths or None),
  the tool call's id, how long the tool ran (`duration_ms`), and why a session
  started (`source`). Each is text of the client's, checked only for its type: a
  caller that puts one in a file name checks it again (`writers.safe_id`).

* `kind` is one of EDIT (a tool that writes named files), SHELL (a shell
  command line), READING, LAUNCH (a subagent or teammate started), MCP (a tool of
  an MCP server: `mcp` holds its own name, arguments and result, whatever the
  client calls it), or None (nothing agent-hooks acts on).
* `files` are (trail field, path) pairs with paths as the client gave them:
  absolute, or relative to the payload's `cwd`. An edit's files are its targets
  (created, modified, deleted); a read's, what it read; after a tool ran, also
  the files the client reports it changed (Claude Code's `bashEditDiff`).
* `command` is a shell command line exactly as the client hands it to the shell;
  `workdir` the directory it runs in when that is not the payload's `cwd`.
* `reported` says whether the client reported the files a shell command changed
  (Claude Code does in its auto and bypassPermissions modes only): without such
  a report, the files the command visibly wrote are read from the command itself.
* When a shell command ran is a window, (start, end) (`reported_window`); `SLACK`
  (1 s, reasoned beside it) is the one allowance for the clocks compared with it
  (`in_window`).

Built-ins only: every hook builds one.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    Window = tuple[float, float]  # when a shell command ran: (start, end), epoch seconds

EDIT = "edit"
SHELL = "shell"
READING = "read"
LAUNCH = "launch"
MCP = "mcp"

# The trail's fields (the state document's names, which other tools read)
CREATED = "files_created"
MODIFIED = "files_modified"
READ = "files_read"


class HookEvent:
    """One hook event; see the module's invariants."""

    __slots__ = (
        "agent_id",
        "agent_transcript",
        "agent_type",
        "cwd",
        "duration_ms",
        "session",
        "source",
        "tool_use_id",
        "transcript",
    )

    def __init__(
        self,
        *,
        session: str | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        cwd: str | None = None,
        transcript: str | None = None,
        agent_transcript: str | None = None,
        tool_use_id: str | None = None,
        duration_ms: float | None = None,
        source: str | None = None,
    ) -> None:
        self.session = session  # the conversation (the client's session id)
        self.agent_id = agent_id  # inside a subagent or teammate: its id
        self.agent_type = agent_type  # ... and its type, where the client says
        self.cwd = cwd  # where relative paths of the call resolve
        self.transcript = transcript  # the conversation's transcript
        self.agent_transcript = agent_transcript  # the subagent's own, at its stop
        self.tool_use_id = tool_use_id
        self.duration_ms = duration_ms  # how long the tool ran, where the client says
        self.source = source  # why a session started: startup, resume, clear, compact


class ToolUse:
    """One tool call; see the module's invariants."""

    __slots__ = ("command", "files", "kind", "launched", "mcp", "name", "reported", "workdir")

    def __init__(
        self,
        name: str,
        kind: str | None,
        *,
        files: list[tuple[str, object]] | None = None,
        command: str | None = None,
        workdir: str | None = None,
        reported: bool = False,
        launched: dict[str, object] | None = None,
        mcp: dict[str, object] | None = None,
    ) -> None:
        self.name = name  # the tool's name as the client calls it
        self.kind = kind
        self.files = files or []
        self.command = command
        self.workdir = workdir
        self.reported = reported
        # LAUNCH: {"agent_id", "agent_type", "description", "name", "output_file"}
        self.launched = launched
        self.mcp = mcp  # MCP: {"server", "tool" (the server's own name), "args", "result"}

    def targets(self) -> list[object]:
        """The paths an edit writes (as given), each once."""
        seen: list[object] = []
        for field, path in self.files:
            if field != READ and path not in seen:
                seen.append(path)
        return seen


# Seconds before a shell command's start, or after its end, still counted as inside it.
# One slack for every clock compared with the window: a lease records its write in whole
# seconds (`int(now)`: up to 1 s before the moment it was made), a file's mtime comes from
# the kernel's coarse clock, and the client's `duration_ms` is measured around the process,
# not its writes. With less (0.25 s once held here for mtimes), an edit another writer made
# in the command's first second looked older than the command and its file was taken for
# the command's own; with this, a change someone else made up to a second before the
# command is told to the holder as possibly its own command's — with the same advice, to
# re-read the file — never silently.
SLACK = 1.0


def reported_window(duration_ms: object, now: float) -> Window | None:
    """When a shell command that ended `now` ran, as the client reports it (Claude
    Code's `duration_ms`): (start, end) in epoch seconds, or None when it reports
    nothing (a number, not a bool; a negative one is taken as 0)."""
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float):
        return None
    return now - max(0.0, duration_ms / 1000), now


def in_window(window: Window, moment: float) -> bool:
    """The one test of "inside the command": was `moment` within `window`, give or
    take `SLACK`? The shell aftermath asks it (was another writer's edit made while
    the command ran?), and so do the held files (may a change of a held file be the
    command's own?)."""
    return window[0] - SLACK <= moment <= window[1] + SLACK


def patch_files(patch: str) -> list[tuple[str, object]]:
    """(trail field, path as written) for every file an apply_patch patch touches, in
    Codex's grammar (Codex's and opencode's `apply_patch`): added ones created, updated
    and deleted ones modified, a moved file's old name modified and its new one
    created. The parser is loaded only here."""
    from agent_hooks.shell.patch_targets import ADD, parse

    return [(CREATED if op == ADD else MODIFIED, path) for op, path in parse(patch).paths()]
