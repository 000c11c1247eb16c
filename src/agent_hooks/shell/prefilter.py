"""Could a Bash command write anything the parser (`shell.writes`) would see?

The parser costs about a fifth of a hook's start-up, so PreToolUse asks this
cheap test first. Built-ins only (it imports nothing).

Sound by construction:
every target the parser reports comes from a redirection (which needs ">") or from a
command or git subcommand whose name holds one of `BASH_WRITE_WORDS`, or is one of
`BASH_WRITE_NAMES` (tests keep both in step with the parser's table and its test
cases); inner commands (`bash -c`, `$(...)`, `eval`) are part of the same string.
The parser reads a name after quote removal and brace expansion, so the test does
too, roughly: quotes, backslashes and line continuations are dropped first
(`t''ee`, `t\\ee` are tee), and a command with `$'` (C escapes can spell any
name) or with `{` and `,` or `..` (brace expansion can splice one: `{t,}ee`) may
always write. A short name counts only as a whole word (`ed`, not `used`): before
it the start or a character that cannot end a word's directory part, after it
the end or a character that ends a word. A false positive (`format` holds "rm")
only costs a parse. `time` writes with -o, `find` with -fprint or -delete; `rm`
covers rmdir, `awk` gawk/mawk/nawk, `split` csplit, `sqlite` sqlite3, `vim`
nvim; git writes files with checkout/restore/rm/mv/worktree/clone (and
checkout-index, merge-file, submodule), and rewrites the work tree with stash/reset/
clean/switch/merge/rebase/pull/cherry-pick/revert/am/apply/read-tree.
"""

from __future__ import annotations

# The parser, each module after those it imports: loaded at once (agent_hooks.preload)
# when a command is parsed (PreToolUse's shell gate, PostToolUse without a report of
# the changed files).
PARSER_MODULES = (
    "agent_hooks.shell.lexer",
    "agent_hooks.shell.plain",
    "agent_hooks.shell.words",
    "agent_hooks.shell.commands",
    "agent_hooks.shell.writes",
)

BASH_WRITE_WORDS = (
    ">", " am", "apply", "awk", "checkout", "cherry-pick", "chgrp", "chmod", "chown", "clean", "clone",
    "cp", "curl", "dd", "find", "install", "ln", "merge", "mkdir", "mv", "patch", "perl",
    "pull", "read-tree", "rebase", "reset", "restore", "revert", "rm", "rsync", "scp", "sed",
    "shred", "sort", "split", "sqlite", "stash", "submodule", "switch", "tar", "tee", "time",
    "touch", "truncate", "uniq", "unlink", "unzip", "vim", "wget", "worktree", "zip",
)  # fmt: skip
BASH_WRITE_NAMES = ("ed", "red", "ex", "vi", "view")  # whole words only
_WORD_END = frozenset(" \t\n;&|()<>`")  # a character that ends a shell word


def might_write(command: str) -> bool:
    if "$'" in command or ("{" in command and ("," in command or ".." in command)):
        return True
    text = command
    if "\\" in text or "'" in text or '"' in text:
        text = text.replace("\\\n", "").replace("\\", "").replace("'", "").replace('"', "")
    if any(word in text for word in BASH_WRITE_WORDS):
        return True
    for name in BASH_WRITE_NAMES:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            before = text[at - 1] if at else " "
            if (end == len(text) or text[end] in _WORD_END) and not (
                before.isalnum() or before in "_-."
            ):
                return True
            at = text.find(name, at + 1)
    return False


# Words without which a command cannot name agent-hooks' own files (ledgers live in
# `.git/agent-hooks/`, state in `~/.claude`): asked when nobody holds anything, to
# refuse a visible Bash write into them all the same.
OWN_FILE_WORDS = (".git", ".claude", "agent-hooks", "agent-state", "state-")


def mentions_own_files(command: str) -> bool:
    return any(word in command for word in OWN_FILE_WORDS)


# What a command needs to name a path outside the directory it starts in.
_OUTWARD = ("..", "~", "$HOME", "${HOME", "-C", "--git-dir", "--work-tree")
_PATH_START = frozenset(" \t\n;&|()<>`=\"'")  # before an absolute path


def reaches_out(command: str) -> bool:
    """Could `command` write outside the directory it starts in (an absolute path,
    `..`, `~`, `git -C DIR`)? Asked before parsing when the agent's own project is
    not contended: a target in another repository is judged by that repository's
    ledger (issue 18, defect 9). `/dev/...` does not count."""
    if any(word in command for word in _OUTWARD):
        return True
    at = command.find("/")
    while at >= 0:
        if (at == 0 or command[at - 1] in _PATH_START) and not command.startswith("/dev/", at):
            return True
        at = command.find("/", at + 1)
    return False
