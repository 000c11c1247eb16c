"""Which files would a Bash tool command write? A pure, conservative static reading.

`analyze(command, cwd, home)` returns the paths the command visibly writes,
creates, truncates, moves or removes (`targets`), and short reasons for what it
runs but cannot be seen into (`opaque`). It never raises and never touches the
file system; time is linear in the command (nesting is bounded by MAX_DEPTH).

Seen: redirections (`>`, `>>`, `>|`, `&>`, `&>>`, `N>`, `<>`, with or without
a space; not /dev/null, /dev/std*, /dev/tty, /dev/fd/*, nor fd duplications);
tee, cp, install, mv (sources too), rm, rmdir, unlink, shred, touch, mkdir,
truncate, ln, dd of=, rsync/scp to a local destination, sed -i, perl -i,
gawk -i inplace, sort -o, curl -o, wget -O/-P, tar -c -f / tar -x -C,
unzip -d, find -fprint; git checkout/restore/rm/mv paths (as pathspecs: git
globs them) and worktree add, with `git -C`; wrappers (sudo, env, command,
builtin, exec, nohup, time, nice, timeout, stdbuf, uv/poetry run, xargs,
find -exec); `bash -c`/`sh -c`/`eval` strings, `$(...)`, backticks, `<(...)`
and here-doc bodies' substitutions, analysed recursively; `cd`/`pushd`/`popd`
(scoped to subshells, pipeline elements and `&`); `~`, `$HOME`, brace
expansion; unquoted globs as patterns (`glob=True`).

Reported in `opaque` instead (a reason each, not a target): interpreters running
code (python -c, node x.js, perl -e, python reading stdin), scripts (`./x.sh`,
`bash x.sh`, `source x`), make-likes, npm/yarn/pnpm scripts and installs,
`eval`/`bash -c` of unknown text, a command name that is a variable, xargs and
find -exec of commands that are not known to only read (their files come from
input), find -delete, tar -x / unzip without a directory, patch, git commands
that may rewrite many files (reset --hard, clean, stash, switch, merge, pull,
rebase, apply, checkout REF), targets holding variables, command substitutions
or `~user`, relative targets after a `cd` to an unknown place, and syntax the
lexer gives up on (unterminated quotes, nesting deeper than MAX_DEPTH).

Not seen and not reported: commands not named here are assumed not to write
(compilers, test runners, pip, cargo, go, docker, ssh, git aliases, watch,
flock, parallel); sed's `w` command; awk programs that write without an obvious
`> "file"`, `| "cmd"` or `system(`; functions and aliases defined earlier in
the session; `${x:-$(cmd)}`. Conversely a
function body's writes count even if it is never called, and xargs/cp/mv
destinations are taken from their static words.

Target invariants: a target is a path and everything beneath it (`rm -r build`,
`cp a dir/` give the directory). Paths are absolute and normalised as
posixpath.normpath does (`..` resolved lexically; a leading `//` made `/`),
at most 4096 characters. A glob target's `path` is a shell glob with quoted
metacharacters written `[*]`, `[?]`, `[[]`. Hot path: nothing is imported at run
time but `bash_lexer` (not even `os`: normalisation is done here).
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Lexer, Redir, Word, add_reason, escape

MAX_DEPTH = 8
_DEV = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
_SKIP_WORDS = frozenset(
    {"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "esac"}
)
_READ_ONLY = frozenset(
    {
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "cat",
        "echo",
        "printf",
        "wc",
        "ls",
        "head",
        "tail",
        "file",
        "stat",
        "du",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "test",
        "[",
        "true",
        "false",
        "diff",
        "cmp",
        "less",
        "more",
        "which",
        "type",
        "pwd",
        "date",
        "id",
    }
)
_INTERPRETERS = frozenset(
    {
        "node",
        "nodejs",
        "ruby",
        "php",
        "lua",
        "Rscript",
        "deno",
        "bun",
        "tsx",
        "ts-node",
        "pypy",
        "pypy3",
        "osascript",
    }
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_MAKES = frozenset({"make", "gmake", "ninja", "just", "rake"})
_NPMS = frozenset({"npm", "yarn", "pnpm", "npx", "pnpx", "bunx"})
_NPM_READ = frozenset(
    {
        "view",
        "info",
        "show",
        "ls",
        "list",
        "help",
        "search",
        "whoami",
        "why",
        "outdated",
        "explain",
        "bin",
        "root",
        "prefix",
        "ping",
        "config",
    }
)
# command -> (short options taking an argument, long ones); every operand is a target
_OPERANDS = {
    "rm": ("", ()),
    "rmdir": ("", ()),
    "unlink": ("", ()),
    "tee": ("", ()),
    "shred": ("ns", ("--iterations", "--size", "--random-source")),
    "touch": ("drt", ("--date", "--reference")),
    "mkdir": ("m", ("--mode",)),
    "truncate": ("sr", ("--size", "--reference")),
}


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


class BashAnalysis:
    """`targets`: every path visibly written (deduplicated, first-seen order).
    `opaque`: short reasons for what cannot be seen (at most 32, deduplicated);
    empty means the whole command was understood."""

    __slots__ = ("opaque", "targets")

    def __init__(self, targets: list[BashTarget], opaque: list[str]) -> None:
        self.targets = targets
        self.opaque = opaque

    def __repr__(self) -> str:
        return f"BashAnalysis(targets={self.targets!r}, opaque={self.opaque!r})"


def analyze(command: str, cwd: str, home: str | None = None) -> BashAnalysis:
    """Targets and opaque reasons of `command` run in directory `cwd` (absolute;
    a relative one is taken from the process directory) with `~` = `home`."""
    res = BashAnalysis([], [])
    try:
        if not cwd.startswith("/"):
            import os  # not on the hot path: hooks pass absolute directories

            cwd = os.getcwd() + "/" + cwd
        home = _norm(home) if home and home.startswith("/") else None
        ctx = _Ctx(res, set(), home, 0, _norm(cwd), "")
        _run_str(command, ctx)
    except Exception as exc:  # the contract is to never raise: say so instead
        add_reason(res.opaque, "analysis error: " + type(exc).__name__)
    return res


class _Ctx:
    """Where the shell is while reading: `cwd` (None when unknown, `why` says
    how it got lost), OLDPWD, the pushd stack, and the recursion depth."""

    __slots__ = ("cwd", "depth", "dirs", "home", "old", "out", "seen", "why")

    def __init__(
        self,
        out: BashAnalysis,
        seen: set[tuple[str, bool]],
        home: str | None,
        depth: int,
        cwd: str | None,
        why: str,
    ) -> None:
        self.out, self.seen, self.home, self.depth = out, seen, home, depth
        self.cwd, self.why = cwd, why
        self.old: tuple[str | None, str] = (None, "cd -")
        self.dirs: tuple[tuple[str | None, str], ...] = ()  # pushd stack, at most 64

    def child(self, depth: int = 1) -> _Ctx:
        """A copy `depth` levels deeper (0: a saved state, see `load`)."""
        c = _Ctx(self.out, self.seen, self.home, self.depth + depth, self.cwd, self.why)
        c.old, c.dirs = self.old, self.dirs
        return c

    def load(self, saved: _Ctx) -> None:
        self.cwd, self.why, self.old, self.dirs = saved.cwd, saved.why, saved.old, saved.dirs

    def note(self, reason: str) -> None:
        add_reason(self.out.opaque, reason)

    def add(self, w: Word, where: tuple[str | None, str] | None = None, spec: bool = False) -> None:
        """Record `w` as a target, resolved against `where` (default: cwd);
        `spec`: a git pathspec (git globs it even when quoted)."""
        cwd, why = where or (self.cwd, self.why)
        if spec and w.dyn is None and w.lit.startswith(":"):
            self.note("git pathspec " + w.lit)
            return
        t, reason = _resolve(w, cwd, why, self.home, spec)
        if reason:
            self.note(reason)
        elif t is not None and (t.path, t.glob) not in self.seen:
            self.seen.add((t.path, t.glob))
            self.out.targets.append(t)


# ---------------------------------------------------------------- paths


def _norm(p: str) -> str:
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


def _resolve(
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
        text = _unesc(esc)
        glob = any(c in text for c in "*?[")
    else:
        glob = _has_glob(esc)
        text = _to_glob(esc) if glob else _unesc(esc)
    if not text:
        return None, None
    if not text.startswith("/"):
        if cwd is None:
            return None, f"relative target {text} after {why}"
        text = (_to_glob(escape(cwd)) if glob else cwd) + "/" + text
    path = _norm(text)
    if len(path) > 4096:  # PATH_MAX; also keeps a long `cd a; cd a; ...` linear
        return None, "path too long"
    if path in _DEV or path.startswith("/dev/fd/"):
        return None, None
    return BashTarget(path, glob), None


def _unesc(esc: str) -> str:
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


def _braces(esc: str, budget: list[int], depth: int = 0) -> list[str]:
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
                out.extend(_braces(esc[:i] + alt + esc[j + 1 :], budget, depth + 1))
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


# ---------------------------------------------------------------- command lists


def _run_str(text: str, ctx: _Ctx) -> None:
    _run(Lexer(text, ctx.home, MAX_DEPTH - ctx.depth, ctx.out.opaque).tokens(), ctx)


def _run_sub(toks: list[Word | Redir | str], ctx: _Ctx) -> None:
    if ctx.depth >= MAX_DEPTH:
        ctx.note("nesting too deep")
    else:
        _run(toks, ctx.child())


def _word_subs(w: Word | Redir, ctx: _Ctx) -> None:
    for toks in w.subs:
        _run_sub(toks, ctx)


def _run(toks: list[Word | Redir | str], ctx: _Ctx) -> None:
    """Walk a token list: control operators, reserved words, simple commands.
    `cd` state is restored after `)` and after pipeline elements and `&`."""
    i, n = 0, len(toks)
    opened = []  # ctx state at each "("
    elem = ctx.child(0)  # ctx state where the current pipeline element began
    piped = False
    cases: list[bool] = []  # per open `case`: is a pattern expected next?
    while i < n:
        t = toks[i]
        if isinstance(t, str):
            i += 1
            if t == "(" and not (cases and cases[-1]):  # not `(pattern)` of a case
                opened.append(ctx.child(0))
            elif t == ")":
                if opened:
                    ctx.load(opened.pop())
            else:
                if t in ("|", "|&", "&") or piped:
                    ctx.load(elem)
                piped = t in ("|", "|&")
                if t in (";;", ";&", ";;&") and cases:
                    cases[-1] = True
            elem = ctx.child(0)
            continue
        lit = t.lit if isinstance(t, Word) and t.dyn is None else ""
        if cases and cases[-1]:  # a case pattern, up to its ")"
            if lit != "esac":
                while i < n and toks[i] != ")":
                    i += 1
                cases[-1] = False
            else:
                cases.pop()
            i += 1
            continue
        if lit in _SKIP_WORDS:
            if lit == "esac" and cases:
                cases.pop()
            i += 1
            continue
        if lit in ("case", "for", "select", "[[", "function") or (
            lit and i + 2 < n and toks[i + 1] == "(" and toks[i + 2] == ")"
        ):
            i = _compound(toks, i, lit, ctx, cases)
            continue
        words: list[Word] = []
        redirs: list[tuple[Redir, Word | None]] = []
        while i < n and not isinstance(toks[i], str):
            t = toks[i]
            i += 1
            if isinstance(t, Word):
                words.append(t)
            elif isinstance(t, Redir):
                nxt = toks[i] if i < n else None
                target = nxt if isinstance(nxt, Word) else None
                i += target is not None
                redirs.append((t, target))
        _simple(words, redirs, ctx)


def _compound(
    toks: list[Word | Redir | str], i: int, lit: str, ctx: _Ctx, cases: list[bool]
) -> int:
    """Skip the head of `case W in`, `for/select NAME [in WORDS]`, `[[ ... ]]`,
    `function NAME [()]` or `NAME ()` (running its substitutions); returns the
    index of the first token after it."""
    n, j = len(toks), i + 1
    if lit == "case":
        cases.append(True)
        t = toks[j] if j < n else ""
        if not isinstance(t, str):
            _word_subs(t, ctx)
        j += 1
        return j + (j < n and _lit(toks[j]) == "in")
    if lit in ("for", "select", "[["):
        while j < n and toks[j] not in (";", "\n") and _lit(toks[j]) not in ("do", "]]"):
            t = toks[j]
            if not isinstance(t, str):
                _word_subs(t, ctx)
            j += 1
        return j + (lit == "[[")
    j += lit == "function"
    return j + 2 if j + 1 < n and toks[j] == "(" and toks[j + 1] == ")" else j


def _lit(t: Word | Redir | str) -> str:
    return t.lit if isinstance(t, Word) and t.dyn is None else ""


def _simple(words: list[Word], redirs: list[tuple[Redir, Word | None]], ctx: _Ctx) -> None:
    """One simple command: substitutions first, then redirections, then argv."""
    for w in words:
        _word_subs(w, ctx)
    for r, target in redirs:
        _word_subs(r, ctx)
        if target is None:
            ctx.note("redirection without target")
            continue
        _word_subs(target, ctx)
        op = r.op
        if op in (">", ">>", ">|", "&>", "&>>", "<>") or (
            op == ">&" and not (target.lit.rstrip("-").isdigit() or target.lit == "-")
        ):
            ctx.add(target)
    argv: list[Word] = []
    for w in words:
        if w.dyn is None and "{" in w.esc:
            alts = _braces(w.esc, [4 * len(w.esc) + 65536])
            if len(alts) >= 64:
                ctx.note("brace expansion truncated")
            argv.extend(Word(_unesc(e), e) for e in alts if e)  # bash drops empty words
        else:
            argv.append(w)
    k = 0
    while k < len(argv) and _is_assignment(argv[k]):
        k += 1
    _exec(argv[k:], ctx)


def _is_assignment(w: Word) -> bool:
    name, eq, _ = w.lit.partition("=")
    name = name.removesuffix("+").partition("[")[0]
    return bool(eq and name and not name[0].isdigit() and all(c in _IDENT for c in name))


# ---------------------------------------------------------------- commands


def _parse(
    args: list[Word],
    short: str = "",
    long: tuple[str, ...] = (),
    stop: bool = False,
    optional: str = "",
) -> tuple[list[Word], list[tuple[str, Word | None]]]:
    """GNU-style options -> (operands, [(option, value)]). `short`: letters
    taking an argument (attached or the next word); `optional`: letters taking
    an attached one only (`-i.bak`); `long`: long options whose argument may be
    the next word. `stop`: the first operand ends the options (wrappers: the
    rest is a command). Abbreviated long options are not recognised."""
    pos: list[Word] = []
    opts: list[tuple[str, Word | None]] = []
    k, n = 0, len(args)
    while k < n:
        w, t = args[k], args[k].lit
        k += 1
        if t == "--" and w.dyn is None:
            pos.extend(args[k:])
            break
        if len(t) < 2 or t[0] != "-" or w.dyn is not None:
            if stop:
                pos.extend(args[k - 1 :])
                break
            pos.append(w)
        elif t[1] == "-":
            name, eq, _ = t.partition("=")
            if eq:
                opts.append((name, w.tail(len(name) + 1, tilde=False)))
            elif name in long and k < n:
                opts.append((name, args[k]))
                k += 1
            else:
                opts.append((name, None))
        else:
            for j in range(1, len(t)):
                c = t[j]
                if c in short or c in optional:
                    if j + 1 < len(t):
                        opts.append(("-" + c, w.tail(j + 1)))
                    elif c in short and k < n:
                        opts.append(("-" + c, args[k]))
                        k += 1
                    else:
                        opts.append(("-" + c, None))
                    break
                opts.append(("-" + c, None))
    return pos, opts


def _has(opts: list[tuple[str, Word | None]], *names: str) -> bool:
    return any(o in names for o, _ in opts)


def _val(opts: list[tuple[str, Word | None]], *names: str) -> Word | None:
    """The value of the last of `names` given with one."""
    found = None
    for o, v in opts:
        if o in names and v is not None:
            found = v
    return found


def _exec(argv: list[Word], ctx: _Ctx) -> None:
    """One command (assignments removed): peel wrappers, then dispatch by name."""
    for _ in range(16):
        if not argv:
            return
        w, args = argv[0], argv[1:]
        if w.dyn is not None:
            return ctx.note("command " + w.dyn)
        name = w.lit.rpartition("/")[2]  # /usr/bin/rm is rm; ./build.sh is a script
        if name != w.lit and not (
            name in _HANDLERS or name in _WRAPPERS or name in _READ_ONLY or _is_interpreter(name)
        ):
            return ctx.note("script " + w.lit)
        if name in ("uv", "poetry") and args[:1] and args[0].lit == "run":
            name, args = name + " run", args[1:]
        if name not in _WRAPPERS:
            if name in _HANDLERS:
                _HANDLERS[name](name, args, ctx)
            elif _is_interpreter(name):
                _interpreter(name, args, ctx)
            return
        short, long = _WRAPPERS[name]
        argv, opts = _parse(args, short, long, stop=True, optional="iel" * (name == "xargs"))
        if name == "xargs":
            rep = _val(opts, "-I", "-i", "--replace")
            hole = rep.lit if rep else "{}" if _has(opts, "-i", "--replace") else ""
            return _indirect("xargs", argv, hole, ctx)
        if name == "command" and _has(opts, "-v", "-V"):
            return
        out = _val(opts, "-o", "--output") if name == "time" else None
        if out is not None:
            ctx.add(out)
        if name == "timeout":
            argv = argv[1:]
        if name in ("env", "sudo"):
            if _has(opts, "-S", "--split-string"):
                return ctx.note("env -S")
            while argv and (_is_assignment(argv[0]) or argv[0].lit == "-"):
                argv = argv[1:]
            chdir = _val(opts, "--chdir", "-C" if name == "env" else "-D")
            if chdir is not None:
                sub = _deeper(ctx)
                if sub is not None:
                    sub.cwd, sub.why = _dir(chdir, (ctx.cwd, ctx.why), ctx.home)
                    _exec(argv, sub)
                return
    ctx.note("too many wrappers")


def _deeper(ctx: _Ctx) -> _Ctx | None:
    """A child context one level deeper, or None (with a reason) past MAX_DEPTH."""
    if ctx.depth < MAX_DEPTH:
        return ctx.child()
    ctx.note("nesting too deep")
    return None


def _indirect(label: str, argv: list[Word], hole: str, ctx: _Ctx) -> None:
    """A command run by xargs or find -exec. Its words are analysed with the
    input ones (`hole`, or appended) unknown; unless it only reads, its one
    reason is "xargs NAME" (its own reasons are dropped)."""
    sub = _deeper(ctx) if argv else None
    if sub is not None:
        sub.out = BashAnalysis(ctx.out.targets, [])
        unknown = Word(hole, escape(hole), "input")
        words = [unknown if hole and hole in w.lit else w for w in argv[1:]]
        _exec([argv[0], *words, *([] if hole else [unknown])], sub)
        base = argv[0].lit.rpartition("/")[2]
        if base not in _READ_ONLY:
            ctx.note(f"{label} {base}")


def _dir(w: Word, where: tuple[str | None, str], home: str | None) -> tuple[str | None, str]:
    """The directory `cd W` enters from `where`: (path, "") or (None, why)."""
    t, reason = _resolve(w, where[0], where[1], home, False)
    if t is not None and not t.glob:
        return t.path, ""
    if t is None and reason is None and not w.lit:
        return where  # `cd ""` stays
    return None, where[1] if where[0] is None else "cd " + w.lit


def _cd(name: str, args: list[Word], ctx: _Ctx) -> None:
    here = (ctx.cwd, ctx.why)
    if name == "popd":
        new = ctx.dirs[-1] if ctx.dirs else (None, "popd")
        ctx.dirs = ctx.dirs[:-1]
    else:
        pos = _parse(args)[0]
        if not pos:
            new = (ctx.home, "cd ~") if name == "cd" else (None, "pushd")
        elif pos[0].lit == "-" and pos[0].dyn is None:
            new = ctx.old
        elif name == "pushd" and pos[0].lit[:1] == "+":
            new = (None, "pushd " + pos[0].lit)
        else:
            new = _dir(pos[0], here, ctx.home)
        if name == "pushd":
            ctx.dirs = (*ctx.dirs[-63:], here)
    ctx.old = here
    ctx.cwd, ctx.why = new


def _operands(name: str, args: list[Word], ctx: _Ctx) -> None:
    short, long = _OPERANDS[name]
    for w in _parse(args, short, long)[0]:
        ctx.add(w)


def _outputs(name: str, args: list[Word], ctx: _Ctx) -> None:
    short, long, outs = _OUTPUTS[name]
    for o, v in _parse(args, short, long)[1]:
        if o in outs and v is not None and v.lit != "-":
            ctx.add(v)


def _copy(name: str, args: list[Word], ctx: _Ctx) -> None:
    """cp, mv, install, ln, rsync, scp: the destination (for mv the sources too;
    a remote `host:path` destination is not local)."""
    short, long = _COPIES[name]
    pos, opts = _parse(args, short, long)
    tdir = _val(opts, "-t", "--target-directory")
    if name in ("rsync", "scp"):
        if len(pos) >= 2 and (pos[-1].dyn is not None or ":" not in pos[-1].lit.partition("/")[0]):
            ctx.add(pos[-1])
        return
    if name == "install" and _has(opts, "-d", "--directory"):
        srcs, dest = pos, None
    elif tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    elif name == "ln" and pos:  # `ln -s /x/y` makes ./y
        base = _norm("/" + pos[0].lit).rpartition("/")[2]
        srcs, dest = [], pos[0] if pos[0].dyn is not None else Word(base, escape(base))
    else:
        return
    if name == "mv" or dest is None:  # a move removes its sources; install -d makes them
        for w in srcs:
            ctx.add(w)
    if dest is not None:
        ctx.add(dest)


def _dd(name: str, args: list[Word], ctx: _Ctx) -> None:
    for w in args:
        if w.lit.startswith("of="):
            ctx.add(w.tail(3))


def _sed(name: str, args: list[Word], ctx: _Ctx) -> None:
    pos, opts = _parse(args, "efl", ("--expression", "--file", "--line-length"), optional="i")
    if _has(opts, "-i", "--in-place"):
        for w in pos if _has(opts, "-e", "-f", "--expression", "--file") else pos[1:]:
            ctx.add(w)


def _perl(name: str, args: list[Word], ctx: _Ctx) -> None:
    """perl -i[SUF] edits its files in place; other perl runs unseen code."""
    k, n, code, inplace = 0, len(args), False, False
    while k < n and args[k].lit[:1] == "-" and len(args[k].lit) > 1:
        t = args[k].lit
        k += 1
        if t == "--":
            break
        j = 1
        while j < len(t):
            c = t[j]
            j += 1
            if c in "eEiIMmFxdDC":  # these take the rest of the word
                code |= c in "eE"
                inplace |= c == "i"
                k += c in "eEI" and j == len(t)  # the argument is the next word
                break
            if c in "0l":  # -0[octal|xHEX], -l[octal]
                digits = "0123456789abcdefABCDEFx" if t[j : j + 1] == "x" else "01234567"
                while j < len(t) and t[j] in digits:
                    j += 1
    files = args[k:]
    if inplace:
        for w in files if code else files[1:]:
            ctx.add(w)
    elif not (args and all(w.lit in ("-v", "-V", "--version", "-h") for w in args)):
        ctx.note("perl -e" if code else "perl " + files[0].lit if files else "perl reads stdin")


def _awk(name: str, args: list[Word], ctx: _Ctx) -> None:
    """gawk -i inplace edits its files; a program text with `> "file"`,
    `| "cmd"` or system() may write (a guess); -f programs are not read."""
    pos, opts = _parse(
        args,
        "fvFilEe",
        ("--file", "--assign", "--field-separator", "--include", "--load", "--source", "--exec"),
    )
    from_file = _has(opts, "-f", "--file", "-E", "--exec")
    texts = [v.lit for o, v in opts if o in ("-e", "--source") and v] or [w.lit for w in pos[:1]]
    files = pos if from_file or _has(opts, "-e", "--source") else pos[1:]
    if any(o in ("-i", "--include") and v and v.lit in ("inplace", "inplace.awk") for o, v in opts):
        for w in files:
            if not _is_assignment(w):
                ctx.add(w)
    elif from_file:
        ctx.note(name + " -f")
    elif any(x in t for t in texts for x in ("system(", '>"', '> "', '|"', '| "')):
        ctx.note(name + " program may write")


def _find(name: str, args: list[Word], ctx: _Ctx) -> None:
    k, n = 0, len(args)
    while k < n:
        t = args[k].lit
        k += 1
        if t == "-delete":
            ctx.note("find -delete")
        elif t in ("-fprint", "-fprint0", "-fls", "-fprintf") and k < n:
            ctx.add(args[k])
            k += 1 + (t == "-fprintf")
        elif t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k
            while j < n and args[j].lit not in (";", "+"):
                j += 1
            _indirect("find " + t, args[k:j], "{}", ctx)
            k = j + 1


def _archive(name: str, args: list[Word], ctx: _Ctx) -> None:
    """tar -c/-r/-u -f FILE, tar -x -C DIR, unzip -d DIR; else extraction into
    the current directory is opaque."""
    if name == "unzip":
        opts = _parse(args, "dx")[1]
        into = _val(opts, "-d")
        if into is not None:
            ctx.add(into)
        elif not _has(opts, "-l", "-t", "-v", "-Z", "-p"):  # listing, testing, piping
            ctx.note("unzip")
        return
    if args and args[0].dyn is None and args[0].lit[:1] not in ("-", ""):  # `tar xzf F`
        args = [Word("-" + args[0].lit, "-" + args[0].esc), *args[1:]]
    opts = _parse(
        args,
        "fCbTXgKLNVH",
        ("--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--transform"),
    )[1]
    archive, into = _val(opts, "-f", "--file"), _val(opts, "-C", "--directory")
    if _has(opts, "-x", "--extract", "--get"):
        if into is not None:
            ctx.add(into)
        else:
            ctx.note("tar -x")
    elif (
        archive is not None
        and archive.lit != "-"
        and _has(opts, "-c", "--create", "-r", "--append", "-u", "--update", "--delete", "-A")
    ):
        ctx.add(archive)


def _shell(name: str, args: list[Word], ctx: _Ctx) -> None:
    """`bash -c STRING` is analysed (a partly dynamic one too, with a reason);
    `bash FILE` and bare `bash` (reading stdin) are opaque."""
    pos, opts = _parse(args, "oO", ("--rcfile", "--init-file"), stop=True)
    if not _has(opts, "-c"):
        if pos or not _has(opts, "--version", "--help"):
            ctx.note("script " + pos[0].lit if pos else name + " reads stdin")
    elif pos:
        if pos[0].dyn is not None:
            ctx.note(f"{name} -c {pos[0].dyn}")
        sub = _deeper(ctx)
        if sub is not None:
            _run_str(pos[0].lit, sub)


def _eval(name: str, args: list[Word], ctx: _Ctx) -> None:
    """eval of literal text is analysed in place (a cd persists); a variable or
    substitution in it makes it opaque ("eval") beyond what its text shows."""
    if any(w.dyn is not None for w in args):
        ctx.note("eval")
    if ctx.depth >= MAX_DEPTH:
        return ctx.note("nesting too deep")
    ctx.depth += 1
    try:
        _run_str(" ".join(w.lit for w in args), ctx)
    finally:
        ctx.depth -= 1


def _runner(name: str, args: list[Word], ctx: _Ctx) -> None:
    """source/., patch, make-likes and npm-likes run or apply what is unseen."""
    lits = [w.lit for w in args]
    pos = [t for t in lits if not t.startswith("-")]
    if name in ("source", "."):
        ctx.note(" ".join(["source", *pos[:1]]))
    elif name == "patch":
        if "--dry-run" not in lits:
            ctx.note("patch")
    elif name in _MAKES:
        if not any(
            t in ("-n", "--dry-run", "-q", "--question", "-v", "--version", "-h", "--help")
            for t in lits
        ):
            ctx.note(name)
    elif name in ("npx", "pnpx", "bunx") or pos[:1] in (["run"], ["run-script"], ["exec"]):
        ctx.note(" ".join([name, *pos[:2]]))
    elif pos and pos[0] not in _NPM_READ:
        ctx.note(f"{name} {pos[0]}")
    elif not args and name in ("yarn", "pnpm"):
        ctx.note(name + " install")


def _is_interpreter(name: str) -> bool:
    return name in _INTERPRETERS or name.startswith("python")


def _interpreter(name: str, args: list[Word], ctx: _Ctx) -> None:
    """python/node/ruby/...: code from -c/-e/-m, a script or stdin is opaque."""
    if args and all(w.lit in ("-V", "--version", "-v", "-h", "--help") for w in args):
        return
    python = name.startswith("python")
    k, n = 0, len(args)
    while k < n:
        t = args[k].lit
        k += 1
        if python and len(t) > 2 and t[0] == "-" and t[1] != "-" and t[-1] in "cm":
            t = "-" + t[-1]  # -Bc, -um
        if t in ("-c", "-e", "-E", "--eval", "-p", "--print", "-r", "-m"):
            return ctx.note(f"{name} {t}" + (" " + args[k].lit if t == "-m" and k < n else ""))
        if python and t in ("-W", "-X"):
            k += 1
        elif t == "-" or t[:1] != "-":
            return ctx.note(f"{name} {t}" if t != "-" else name + " reads stdin")
    ctx.note(name + " reads stdin")


def _git(name: str, args: list[Word], ctx: _Ctx) -> None:
    """Work-tree writes of git: paths of checkout/restore/rm/mv, worktree add;
    commands that may rewrite many files are opaque."""
    where = (ctx.cwd, ctx.why)
    k, n = 0, len(args)
    while k < n and args[k].lit.startswith("-"):
        t = args[k].lit
        if t == "-C" and k + 1 < n:
            where = _dir(args[k + 1], where, ctx.home)
        k += 2 if t in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    sub, rest = (args[k].lit, args[k + 1 :]) if k < n else ("", [])
    lits = [w.lit for w in rest]
    pos, opts = _parse(
        rest,
        "bBcCsme",
        (
            "--orphan",
            "--source",
            "--create",
            "--force-create",
            "--message",
            "--exclude",
            "--reason",
        ),
    )
    paths: list[Word] = []
    if sub == "checkout" and "--" in lits:
        paths = rest[lits.index("--") + 1 :]
    elif sub == "checkout":
        if _has(opts, "-b", "-B", "--orphan") and not pos:
            pass  # a new branch at HEAD: the work tree stays
        elif pos and pos[0].lit == ".":
            paths = pos
        elif pos or _has(opts, "-f", "--force"):
            ctx.note("git checkout " + (pos[0].lit if pos else "-f"))
            paths = pos[1:]
    elif sub == "restore":
        if not _has(opts, "-S", "--staged") or _has(opts, "-W", "--worktree"):
            paths = pos
    elif sub in ("rm", "mv"):
        if not _has(opts, "--cached", "-n", "--dry-run"):
            paths = pos
    elif sub == "reset":
        for t in lits:
            if t in ("--hard", "--merge", "--keep"):
                ctx.note("git reset " + t)
    elif sub == "clean":
        if not _has(opts, "-n", "--dry-run"):
            ctx.note("git clean")
    elif sub == "stash":
        if not pos or pos[0].lit not in ("list", "show", "drop", "clear", "create", "store"):
            ctx.note(" ".join(["git stash", *(w.lit for w in pos[:1])]))
    elif sub == "switch":
        if pos or not _has(opts, "-c", "-C", "--create", "--force-create"):
            ctx.note(" ".join(["git switch", *(w.lit for w in pos[:1])]))
    elif sub in ("merge", "rebase", "pull", "cherry-pick", "revert", "am"):
        ctx.note("git " + sub)
    elif sub == "apply":
        if not any(t in ("--check", "--stat", "--numstat", "--summary", "--cached") for t in lits):
            ctx.note("git apply")
    elif sub == "worktree" and lits[:1] == ["add"] and len(pos) > 1:
        ctx.add(pos[1], where)
    if _has(opts, "--pathspec-from-file"):
        ctx.note(f"git {sub} --pathspec-from-file")
    for w in paths:
        ctx.add(w, where, spec=sub != "mv")


_WRAPPERS = {  # command -> its (short options with an argument, long ones)
    "sudo": (
        "ugpChDrtTUR",
        (
            "--user",
            "--group",
            "--prompt",
            "--close-from",
            "--host",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--chroot",
        ),
    ),
    "env": ("uCS", ("--unset", "--chdir", "--split-string")),
    "command": ("", ()),
    "builtin": ("", ()),
    "exec": ("a", ()),
    "nohup": ("", ()),
    "nice": ("n", ("--adjustment",)),
    "time": ("of", ("--output", "--format")),
    "timeout": ("sk", ("--signal", "--kill-after")),
    "stdbuf": ("ioe", ("--input", "--output", "--error")),
    "uv run": (
        "p",
        (
            "--with",
            "--python",
            "--project",
            "--directory",
            "--package",
            "--extra",
            "--group",
            "--env-file",
            "--index",
            "--with-requirements",
            "--with-editable",
        ),
    ),
    "poetry run": ("PC", ("--directory", "--project")),
    "xargs": (
        "adEILnPs",
        (
            "--arg-file",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ),
    ),
}
_COPIES = {  # command -> its (short options with an argument, long ones)
    **dict.fromkeys(("cp", "mv", "ln"), ("tS", ("--target-directory", "--suffix"))),
    "install": ("tSmog", ("--target-directory", "--suffix", "--mode", "--owner", "--group")),
    "rsync": (
        "efBT",
        (
            "--exclude",
            "--include",
            "--filter",
            "--rsh",
            "--exclude-from",
            "--include-from",
            "--files-from",
            "--temp-dir",
            "--backup-dir",
            "--log-file",
            "--chmod",
            "--chown",
            "--partial-dir",
            "--compare-dest",
        ),
    ),
    "scp": ("cFiJlLoPS", ()),
}
_OUTPUTS = {  # command -> (short options with an argument, long ones, those naming outputs)
    "sort": (
        "kotST",
        ("--key", "--output", "--field-separator", "--buffer-size"),
        ("-o", "--output"),
    ),
    "curl": (
        "AbcCdDeEFHKmoPQrtTuUwxXyYz",
        (
            "--output",
            "--dump-header",
            "--cookie-jar",
            "--output-dir",
            "--header",
            "--data",
            "--request",
            "--user",
            "--user-agent",
            "--url",
            "--form",
            "--cookie",
            "--config",
            "--write-out",
            "--data-raw",
            "--data-binary",
            "--upload-file",
        ),
        ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--output-dir"),
    ),
    "wget": (
        "OPoaeitTwQlARDIXUB",
        (
            "--output-document",
            "--directory-prefix",
            "--output-file",
            "--append-output",
            "--input-file",
            "--header",
            "--user-agent",
            "--tries",
            "--timeout",
        ),
        (
            "-O",
            "--output-document",
            "-P",
            "--directory-prefix",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
        ),
    ),
}
_HANDLERS = {
    **dict.fromkeys(_OPERANDS, _operands),
    **dict.fromkeys(_OUTPUTS, _outputs),
    **dict.fromkeys(_COPIES, _copy),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    "dd": _dd,
    "sed": _sed,
    "perl": _perl,
    "find": _find,
    "tar": _archive,
    "unzip": _archive,
    "git": _git,
    "eval": _eval,
    **dict.fromkeys(("cd", "pushd", "popd"), _cd),
    **dict.fromkeys(_SHELLS, _shell),
    **dict.fromkeys(("source", ".", "patch", *_MAKES, *_NPMS), _runner),
}
