"""Could a Bash command write anything the parser (`bash.writes`) would see?

The parser costs about a fifth of a hook's start-up, so PreToolUse asks this
cheap substring test first. Built-ins only (it imports nothing).

Sound by construction:
every target the parser reports comes from a redirection (which needs ">") or from a
command or git subcommand whose name holds one of these words (tests keep the list in
step with the parser's table and its test cases); inner commands (`bash -c`, `$(...)`,
`eval`) are part of the same string. A false positive (`format` holds "rm") only
costs a parse. `time` writes with -o, `find` with -fprint; `rm` covers rmdir, `awk`
gawk/mawk/nawk; git writes files with checkout/restore/rm/mv/worktree/clone.
"""

from __future__ import annotations

BASH_WRITE_WORDS = (
    ">", "awk", "checkout", "clone", "cp", "curl", "dd", "find", "install", "ln", "mkdir",
    "mv", "perl", "restore", "rm", "rsync", "scp", "sed", "shred", "sort", "tar", "tee",
    "time", "touch", "truncate", "unlink", "unzip", "wget", "worktree",
)  # fmt: skip


def might_write(command: str) -> bool:
    return any(word in command for word in BASH_WRITE_WORDS)


# Words without which a command cannot name agent-hooks' own files (ledgers live in
# `.git/agent-hooks/`, state in `~/.claude`): asked when nobody holds anything, to
# refuse a visible Bash write into them all the same.
OWN_FILE_WORDS = (".git", ".claude", "agent-hooks", "agent-state", "state-")


def mentions_own_files(command: str) -> bool:
    return any(word in command for word in OWN_FILE_WORDS)
