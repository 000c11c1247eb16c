"""One tool call as the hooks see it, whichever client made it: the
client-neutral request the client layer (`agent_hooks.clients`) builds from a
payload, and the adapters and the gate read.

Invariants:

* `kind` is one of EDIT (a tool that writes named files), SHELL (a shell
  command line), READING, LAUNCH (a subagent or teammate started), or None (nothing
  agent-hooks acts on).
* `files` are (trail field, path) pairs with paths as the client gave them:
  absolute, or relative to the payload's `cwd`. An edit's files are its targets
  (created, modified, deleted); a read's, what it read; after a tool ran, also
  the files the client reports it changed (Claude Code's `bashEditDiff`).
* `command` is a shell command line exactly as the client hands it to the shell;
  `workdir` the directory it runs in when that is not the payload's `cwd`.
* `reported` says whether the client reported the files a shell command changed
  (Claude Code does in its auto and bypassPermissions modes only): without such
  a report, the files the command visibly wrote are read from the command itself.

Built-ins only: every hook builds one.
"""

from __future__ import annotations

EDIT = "edit"
SHELL = "shell"
READING = "read"
LAUNCH = "launch"

# The trail's fields (the state document's names, which other tools read)
CREATED = "files_created"
MODIFIED = "files_modified"
READ = "files_read"


class ToolUse:
    """One tool call; see the module's invariants."""

    __slots__ = ("command", "files", "kind", "launched", "name", "reported", "workdir")

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
    ) -> None:
        self.name = name  # the tool's name as the client calls it
        self.kind = kind
        self.files = files or []
        self.command = command
        self.workdir = workdir
        self.reported = reported
        self.launched = launched  # LAUNCH: {"agent_id", "agent_type", "description", "name"}

    def targets(self) -> list[object]:
        """The paths an edit writes (as given), each once."""
        seen: list[object] = []
        for field, path in self.files:
            if field != READ and path not in seen:
                seen.append(path)
        return seen
