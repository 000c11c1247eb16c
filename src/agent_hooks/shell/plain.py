"""The plainest shell commands, read without loading the parser.

A *plain* command is one simple command of plain words (letters, digits and
`_-./:=,@%+`, separated by spaces) whose name is one of `NAMES` (commands that
write nothing themselves: echo, printf, cat, ...), its output perhaps redirected
by whole-word `>` or `>>` operators each followed by a plain word, perhaps fed a
here-document with a quoted delimiter (`cat > f <<'EOF'`, the body to its last line,
which alone is the delimiter: text, never expanded). For such a
command the parser (`shell.writes`) has nothing to expand, quote, follow or
guess: what it writes is exactly its redirection targets, each resolved against
the directory it runs in, and nothing is opaque. `targets` answers that without
the parser's cost (loading it is most of a shell hook's own work), and None for
every other command, which the parser then reads. Invariant, held by tests
against the parser on generated commands: whenever `targets` answers, the
parser's `BashAnalysis` has exactly those targets (in that order, none a glob,
none an entry), no work tree rewrite and nothing given up.

Also the owner of what both read the same way: `norm` (a path made canonical)
and `DEVICES` (targets that name no file worth reporting). Built-ins only.
"""

from __future__ import annotations

# Commands that write no file themselves whatever their arguments (a subset of the
# parser's `commands.READ_ONLY`; a test keeps them in step).
NAMES = frozenset(
    {
        "echo", "printf", "cat", "grep", "egrep", "fgrep", "rg", "wc", "ls", "head", "tail",
        "file", "stat", "du", "md5sum", "sha1sum", "sha256sum", "basename", "dirname",
        "realpath", "readlink", "true", "false", "diff", "cmp", "which", "type", "pwd",
        "date", "id",
    }
)  # fmt: skip
DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
PATH_MAX = 4096
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@%+ >")
_LONGEST = 1024  # a longer command line is left to the parser (which bounds its paths)
_LONGEST_BODY = 1 << 16  # ... and a longer here-document
_DELIMITER = _PLAIN - {" ", ">"}


def norm(p: str) -> str:
    """posixpath.normpath of an absolute path, with a leading `//` made `/`."""
    if "//" not in p and "/." not in p and (p == "/" or not p.endswith("/")):
        return p
    out: list[str] = []
    for part in p.split("/"):
        if part == ".." and out:
            out.pop()
        elif part not in ("", ".", ".."):
            out.append(part)
    return "/" + "/".join(out)


def targets(command: str, cwd: str) -> list[str] | None:
    """The files a plain `command` run in `cwd` (absolute) writes, absolute and
    normalised, first-seen order, without duplicates; None when the command is
    not plain (or `cwd` not absolute)."""
    head, newline, body = command.partition("\n")
    if len(head) > _LONGEST or not cwd.startswith("/"):
        return None
    words = head.split(" ")
    if newline:  # only as the body of a quoted here-document (`cat > f <<'EOF'`)
        words = [word for word in words if not _here_document(word, body)]
        if len(words) == len(head.split(" ")):
            return None
    if not words or words[0] not in NAMES or not all(map(_PLAIN.issuperset, words)):
        return None
    words = [word for word in words if word]
    here = norm(cwd)
    found: list[str] = []
    k, n = 1, len(words)
    while k < n:
        word = words[k]
        k += 1
        if ">" not in word:
            continue
        if word not in (">", ">>") or k == n or ">" in words[k]:
            return None
        target = words[k]
        k += 1
        path = norm(target if target.startswith("/") else here + "/" + target)
        if len(path) > PATH_MAX:
            return None
        if path not in DEVICES and not path.startswith("/dev/fd/") and path not in found:
            found.append(path)
    return found


def _here_document(word: str, body: str) -> bool:
    """Is `word` a here-document operator with a quoted delimiter (`<<'EOF'`,
    `<<"EOF"`: its body is text, never expanded) whose delimiter line ends `body`
    and is its only such line (nothing after it is a command)?"""
    if len(word) < 5 or word[:2] != "<<" or word[2] not in "'\"" or word[-1] != word[2]:
        return False
    delimiter = word[3:-1]
    if not delimiter or not _DELIMITER.issuperset(delimiter) or len(body) > _LONGEST_BODY:
        return False
    lines = body.split("\n")
    if lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines[-1] == delimiter and delimiter not in lines[:-1]
