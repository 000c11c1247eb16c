"""From a shell word to the path it names: resolution, normalisation, globs and braces.

`resolve` turns a lexed `Word` into a `BashTarget` (or a reason, or nothing for words that
name nothing worth reporting: empty, /dev/null, /dev/std*, /dev/tty, /dev/fd/*); `enter_dir`
is the directory a `cd WORD` enters; `expand_braces` is bash's brace expansion; `unescape`
turns the lexer's esc form back into text.

Target invariants: a target is a path and everything beneath it (`rm -r build`,
`cp a dir/` give the directory). Paths are absolute and normalised as
posixpath.normpath does (`..` resolved lexically; a leading `//` made `/`),
at most 4096 characters. A glob target's `path` is a shell glob with quoted
metacharacters written `[*]`, `[?]`, `[[]`. Words holding variables, command
substitutions or `~user` are never targets (a reason says why), nor are relative
words when the current directory is unknown. Hot path: nothing is imported at run
time but `bash_lexer` (not even `os`: normalisation is done here).
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word, escape

_DEV = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})


class BashTarget:
    """A path the command writes: absolute and normalised, never relative.
    `glob`: the word had unquoted `*`, `?` or `[` (or is a git pathspec with
    them), so `path` is a pattern in glob syntax."""

    __slots__ = ("glob", "path")

    def __init__(self, path: str, glob: bool = False) -> None:
        self.path = path
        self.glob = glob

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BashTarget) and (self.path, self.glob) == (other.path, other.glob)

    def __hash__(self) -> int:
        return hash((self.path, self.glob))

    def __repr__(self) -> str:
        return f"BashTarget({self.path!r}, glob={self.glob})"


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


def resolve(
    w: Word, cwd: str | None, why: str, home: str | None, spec: bool
) -> tuple[BashTarget | None, str | None]:
    """(target, None), (None, reason) or (None, None) for words naming nothing
    worth reporting (empty, /dev/null, ...)."""
    if w.dyn is not None:
        sub = w.dyn[0] == "`" or w.dyn[1:2] == "("
        return None, ("command substitution" if sub else "variable") + " in target " + w.dyn
    esc = w.esc
    if esc.startswith("~"):
        user, _, rest = esc[1:].partition("/")
        if user or home is None:
            return None, "tilde in target " + w.lit
        esc = escape(home) + "/" + rest
    if spec:
        text = unescape(esc)
        glob = any(c in text for c in "*?[")
    else:
        glob = _has_glob(esc)
        text = _to_glob(esc) if glob else unescape(esc)
    if not text:
        return None, None
    if not text.startswith("/"):
        if cwd is None:
            return None, f"relative target {text} after {why}"
        text = (_to_glob(escape(cwd)) if glob else cwd) + "/" + text
    path = norm(text)
    if len(path) > 4096:  # PATH_MAX; also keeps a long `cd a; cd a; ...` linear
        return None, "path too long"
    if path in _DEV or path.startswith("/dev/fd/"):
        return None, None
    return BashTarget(path, glob), None


def unescape(esc: str) -> str:
    if "\\" not in esc:
        return esc
    out, i, n = [], 0, len(esc)
    while i < n:
        j = esc.find("\\", i)
        if j < 0 or j + 1 >= n:
            out.append(esc[i:])
            break
        out.append(esc[i:j] + esc[j + 1])
        i = j + 2
    return "".join(out)


def _to_glob(esc: str) -> str:
    """esc form -> glob syntax: quoted metacharacters become `[*]`, `[?]`, ..."""
    out, i, n = [], 0, len(esc)
    while i < n:
        j = esc.find("\\", i)
        if j < 0 or j + 1 >= n:
            out.append(esc[i:])
            break
        c = esc[j + 1]
        out.append(esc[i:j] + ("[" + c + "]" if c in "*?[]" else c))
        i = j + 2
    return "".join(out)


def _has_glob(esc: str) -> bool:
    if "*" not in esc and "?" not in esc and "[" not in esc:
        return False
    i, n, bracket = 0, len(esc), False
    while i < n:
        c = esc[i]
        if c == "\\":
            i += 1
        elif c == "*" or c == "?" or (c == "]" and bracket):
            return True
        elif c == "[":
            bracket = True
        i += 1
    return False


def expand_braces(esc: str, budget: list[int], depth: int = 0) -> list[str]:
    """Bash brace expansion (`a{b,c}`, `{1..3}`) of an esc form: at most 64
    results; `budget` bounds the work so that huge or nested words stay linear
    (past it, or 16 levels deep, the rest of the word is left unexpanded)."""
    i, n = 0, len(esc)
    budget[0] -= n
    while i < n and depth < 16 and budget[0] > 0:
        if esc[i] == "\\":
            i += 2
            continue
        if esc[i] != "{" or esc.startswith("}", i + 1):  # `{}` is literal
            i += 1 + (esc[i] == "{")
            continue
        level, cuts, j, alts = 0, [i], i + 1, []
        while j < n and budget[0] > 0:  # like bash, a "}" closing no list is literal
            d = esc[j]
            if d == "\\":
                j += 1
            elif d == "{":
                level += 1
            elif d == "}" and level:
                level -= 1
            elif d == "}":
                budget[0] -= j - i
                alts = (
                    [esc[a + 1 : b] for a, b in zip(cuts, [*cuts[1:], j], strict=True)]
                    if len(cuts) > 1
                    else _sequence(esc[i + 1 : j])
                )
                if alts:
                    break
            elif d == "," and not level:
                cuts.append(j)
            j += 1
        budget[0] -= j - i
        if alts:
            out: list[str] = []
            for alt in alts:
                if len(out) >= 64:
                    break
                out.extend(expand_braces(esc[:i] + alt + esc[j + 1 :], budget, depth + 1))
            return out[:64]
        i += 1
    return [esc]


def _sequence(body: str) -> list[str]:
    """`1..5`, `a..e`, `0..10..2` -> the items (at most 64); else []."""
    parts = body.split("..")
    if len(parts) not in (2, 3) or not all(parts):
        return []
    nums = [p.removeprefix("-").isdigit() for p in parts]
    if len(parts) == 3 and not nums[2]:
        return []
    step = abs(int(parts[2])) or 1 if len(parts) == 3 else 1
    if nums[0] and nums[1]:
        a, b = int(parts[0]), int(parts[1])
    elif len(parts[0]) == len(parts[1]) == 1 and parts[0].isalpha() and parts[1].isalpha():
        a, b = ord(parts[0]), ord(parts[1])
    else:
        return []
    items = range(a, b + 1, step) if b >= a else range(a, b - 1, -step)
    return [str(k) if nums[0] else chr(k) for k in items[:64]]


def enter_dir(w: Word, where: tuple[str | None, str], home: str | None) -> tuple[str | None, str]:
    """The directory `cd W` enters from `where`: (path, "") or (None, why)."""
    t, reason = resolve(w, where[0], where[1], home, False)
    if t is not None and not t.glob:
        return t.path, ""
    if t is None and reason is None and not w.lit:
        return where  # `cd ""` stays
    return None, where[1] if where[0] is None else "cd " + w.lit
