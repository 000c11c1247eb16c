"""Which files an apply_patch patch writes: Codex's patch format, read as Codex reads it.

Codex (0.169.0) edits files only through its `apply_patch` tool; the same text may
reach a shell (`apply_patch <<'EOF' … EOF`, Codex's `apply_patch` helper on PATH).
The grammar (reference/codex-0.169.0/PROTOCOL.md § 7):

    start: "*** Begin Patch" LF hunk+ "*** End Patch" LF?
    hunk: "*** Add File: " PATH LF ("+" line LF)+
        | "*** Delete File: " PATH LF
        | "*** Update File: " PATH LF ("*** Move to: " PATH LF)? change?
    change: ("@@" [" " text] LF | ("+" | "-" | " ") line LF)+ ("*** End of File" LF)?

`parse(text)` walks it the way Codex 0.169.0's own parser does (checked against
the real binary's `apply_patch` on every case of `tests/patch_cases.py`),
so that what a patch writes is exactly the files its hunk headers name:

* Lines are split at LF only (a CR before it is dropped; U+2028 and friends are
  part of a path); the whole text is stripped first. An envelope `<<EOF` /
  `<<'EOF'` / `<<"EOF"` … `…EOF` around the patch (Codex accepts it) is taken off.
  The first line must read `*** Begin Patch` and the last `*** End Patch` (blanks
  around them ignored); a first line `*** Environment ID: …` is skipped.
* A hunk header is read with its blanks stripped (Codex is lenient there); an
  add hunk's content is every following line starting with `+`; an update hunk
  runs until a line starting with `***`: its chunks are lines starting with
  ` `, `+`, `-`, empty lines, and `@@` lines opening a chunk (the first chunk
  may go without one, as Codex allows; every later one must start with it, and
  the hunks after an update are read either way). An empty or blank line is a
  context line like any other, also as a chunk's first: an update holding
  nothing else is valid (Codex applies it). So `*** Add File:
  x` inside content (`+*** Add File: x`, or ` *** Add File: x` in an update)
  names nothing, while ` *** Add File: x` right after an add hunk's `+` lines is
  the next header, as for Codex.
* `*** Move to: PATH` counts only as the line right after `*** Update File:`,
  unindented; PATH is the rest of the line without trailing blanks (leading ones
  are part of the name, as for Codex). Anywhere else, and a second `*** End
  Patch`, is no valid hunk header.

What Codex would refuse (no `*** Begin Patch`, an invalid header, an update
without content, no `*** End Patch`) makes `problem` say so; the hunks read
before that point are still returned (a caller that refuses edits of held files
then errs on the side of refusing a patch that would fail anyway). Paths are as
written: relative to the directory the patch is applied in, or absolute; `..`
is kept for the caller to resolve.

Pure and a leaf: no imports at all (it runs inside PreToolUse, ADR-0005).
"""

from __future__ import annotations

ADD = "add"
DELETE = "delete"
UPDATE = "update"

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_ADD = "*** Add File: "
_DELETE = "*** Delete File: "
_UPDATE = "*** Update File: "
_MOVE = "*** Move to: "
_EOF = "*** End of File"
_ENVIRONMENT = "*** Environment ID: "
_ENVELOPES = ("<<EOF", "<<'EOF'", '<<"EOF"')


class Hunk:
    """One file operation: `op` is ADD, DELETE or UPDATE; `move_to` the new name of
    an updated file that moves (else None)."""

    __slots__ = ("move_to", "op", "path")

    def __init__(self, op: str, path: str, move_to: str | None = None) -> None:
        self.op = op
        self.path = path
        self.move_to = move_to

    def __repr__(self) -> str:
        move = f" -> {self.move_to!r}" if self.move_to is not None else ""
        return f"Hunk({self.op} {self.path!r}{move})"


class Patch:
    """The hunks of a patch, in order; `problem` says why Codex would refuse it (None:
    it parses)."""

    __slots__ = ("hunks", "problem")

    def __init__(self, hunks: list[Hunk], problem: str | None) -> None:
        self.hunks = hunks
        self.problem = problem

    def paths(self) -> list[tuple[str, str]]:
        """(op, path) for every file the patch touches, each path once, in order:
        a moved file is (UPDATE, its old name) and (ADD, its new one)."""
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for hunk in self.hunks:
            for op, path in ((hunk.op, hunk.path), (ADD, hunk.move_to)):
                if path is not None and path not in seen:
                    seen.add(path)
                    out.append((op, path))
        return out


def _lines(text: str) -> list[str]:
    """Codex's `text.trim().lines()`: split at LF, a CR before it dropped."""
    return [line[:-1] if line.endswith("\r") else line for line in text.strip().split("\n")]


def looks_like_patch(text: str) -> bool:
    """Does `text` begin as a patch would (after blanks or a heredoc envelope)?"""
    head = text.lstrip()
    if head.startswith(_ENVELOPES):
        head = head.partition("\n")[2].lstrip()
    return head.startswith(BEGIN)


def parse(text: str) -> Patch:
    """The hunks of the patch `text`; see the module's invariants."""
    lines = _lines(text)
    if len(lines) >= 4 and lines[0] in _ENVELOPES and lines[-1].endswith("EOF"):
        lines = lines[1:-1]
    if not lines or lines[0].strip() != BEGIN:
        return Patch([], "the first line of the patch is not '*** Begin Patch'")
    problem = None
    if len(lines) < 2 or lines[-1].strip() != END:
        problem = "the last line of the patch is not '*** End Patch'"
        body = lines[1:]
    else:
        body = lines[1:-1]
    if body and body[0].startswith(_ENVIRONMENT):
        body = body[1:]
    hunks: list[Hunk] = []
    i, n = 0, len(body)
    while i < n:
        header = body[i].strip()
        i += 1
        if header.startswith(_ADD):
            hunks.append(Hunk(ADD, header[len(_ADD) :]))
            while i < n and body[i].startswith("+"):
                i += 1
        elif header.startswith(_DELETE):
            hunks.append(Hunk(DELETE, header[len(_DELETE) :]))
        elif header.startswith(_UPDATE):
            hunk = Hunk(UPDATE, header[len(_UPDATE) :])
            hunks.append(hunk)
            if i < n and body[i].startswith(_MOVE):
                hunk.move_to = body[i][len(_MOVE) :].rstrip()
                i += 1
            i, why = _changes(body, i)
            if why is not None:
                return Patch(hunks, f"update of {hunk.path!r}: {why}")
        else:
            return Patch(hunks, f"{header[:80]!r} is not a valid hunk header")
    if not hunks:
        problem = problem or "the patch holds no hunk"
    return Patch(hunks, problem)


def _changes(body: list[str], i: int) -> tuple[int, str | None]:
    """Skip an update hunk's chunks from line `i`: (the index after them, why Codex
    would refuse them or None)."""
    n, chunks = len(body), 0
    while i < n:
        line = body[i]
        if line.startswith("***"):
            break
        if line == "@@" or line.startswith("@@ "):
            i += 1
        elif chunks:
            return i, f"a chunk must start with '@@', not {line[:80]!r}"
        start = i
        while i < n:
            line = body[i]
            if line == _EOF:
                if i == start:
                    return i, "an empty chunk"
                i += 1
                break
            if line and line[0] not in " +-":
                break
            i += 1
        if i == start:
            return i, "an empty chunk"
        chunks += 1
    return i, None if chunks else "no change lines"
