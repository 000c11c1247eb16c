"""Which files would a Bash tool command write? A pure, conservative static reading.

`analyze(command, cwd, home)` returns the paths the command visibly writes,
creates, truncates, moves or removes (`targets`), and short reasons for what it
runs but cannot be seen into (`opaque`). It never raises and never touches the
file system; time is linear in the command (nesting is bounded by MAX_DEPTH).

This module walks the token stream (`lexer`): control operators, reserved
words and compound heads, simple commands, redirections (`>`, `>>`, `>|`, `&>`,
`&>>`, `N>`, `<>`, `>&FILE`, with or without a space; not /dev/null, /dev/std*,
/dev/tty, /dev/fd/*, nor fd duplications), assignments, brace expansion, and the
substitutions in every word (`$(...)`, backticks, `<(...)` and here-doc bodies'
substitutions, analysed recursively). `cd`/`pushd`/`popd` are scoped to
subshells, pipeline elements and `&`; a symlink `ln -s` makes is followed by the
paths after it (`ln -s ../x l && echo > l/f` writes ../x/f). Each simple command goes
to `commands` (wrappers, commands running commands, and what each known
command writes or runs; `file_commands` for commands naming their files);
words become options and paths in `words` (`~`, `$HOME`; the current directory as
`$PWD`, `${PWD}`, `$(pwd)` or `` `pwd` ``, where the walk has it; unquoted globs as
patterns, `glob=True`; directory entries a command acts on itself, `entry=True`;
the target invariants).

Reported in `opaque` instead (a reason each, not a target): interpreters running
code (python -c, node x.js, perl -e, python reading stdin), scripts (`./x.sh`,
`bash x.sh`, `source x`), make-likes, npm/yarn/pnpm scripts and installs,
`eval`/`bash -c` of unknown text, a command name that is a variable, xargs and
find -exec of commands that are not known to only read and do not write the files
found (their files come from input), tar -x / unzip without a directory, git
commands that may rewrite many files (reset --hard, clean, stash, switch, merge,
pull, rebase, apply, checkout REF, read-tree -u, a pathspec that cannot be known:
also `trees`) or delete a linked work tree (`worktrees`), targets holding variables, command
substitutions or `~user`, relative targets after a `cd` to an unknown place,
paths through a symlink to an unknown place, and unterminated quotes or
substitutions (bash runs nothing from there on).

Given up on (`gave_up`, its reason also in `opaque`): nesting deeper than MAX_DEPTH
(`$(...)`, backticks, `bash -c`, `eval`, xargs), more than 16 wrappers, a brace
expansion past 64 words or its work budget, more than 64 `pushd`, more than 64
symlinks made or places reached through them, a path past PATH_MAX, an internal error. What was skipped may write anything anywhere; the
caller treats the command as writing the whole project.

Not seen and not reported: commands not named here are assumed not to write
(compilers, test runners, pip, cargo, go, docker, ssh, git aliases, watch,
flock, parallel, gzip/xz); sed's `w` command; awk programs that write without an
obvious `> "file"`, `| "cmd"` or `system(`; what ed/ex/vim commands or sqlite3
statements write besides the file named; functions and aliases defined earlier in
the session; `${x:-$(cmd)}`; a glob reaching through a symlink made earlier in
the command. Conversely a function body's writes count even if it is never
called, and xargs/cp/mv destinations are taken from their static words.

Hot path: nothing is imported at run time but `lexer` and the shell package's modules
named above (not even `os`).
"""

from __future__ import annotations

import posix

from agent_hooks.shell.commands import run_command
from agent_hooks.shell.lexer import Lexer, Redir, Word, add_reason
from agent_hooks.shell.plain import norm
from agent_hooks.shell.words import (
    MAX_BRACE,
    MAX_DEPTH,
    UNKNOWN_INPUT,
    ShellState,
    Stdin,
    expand_braces,
    is_assignment,
    unescape,
)
from agent_hooks.shell.words import BashAnalysis as BashAnalysis
from agent_hooks.shell.words import BashTarget as BashTarget

_SKIP_WORDS = frozenset(
    {"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "esac"}
)


def analyze(command: str, cwd: str, home: str | None = None) -> BashAnalysis:
    """Targets and opaque reasons of `command` run in directory `cwd` (absolute;
    a relative one is taken from the process directory) with `~` = `home`."""
    res = BashAnalysis([], [])
    try:
        if not cwd.startswith("/"):
            cwd = posix.getcwd() + "/" + cwd
        home = norm(home) if home and home.startswith("/") else None
        ctx = ShellState(res, set(), home, 0, norm(cwd), "", run_text)
        # `$PWD` is the directory only while nothing assigns PWD (`PWD=x`, `read PWD`, ...):
        # every "PWD" in the text must be one of its expansions
        ctx.pwd_known = command.count("PWD") == command.count("$PWD") + command.count("${PWD}")
        ctx.git_icase = "ICASE_PATHSPECS" in command  # git then folds every pathspec's case
        run_text(command, ctx)
    except Exception as exc:  # the contract is to never raise: say so instead
        reason = "analysis error: " + type(exc).__name__
        add_reason(res.opaque, reason)
        res.gave_up = res.gave_up or reason
    return res


def run_text(text: str, ctx: ShellState) -> None:
    """Read a command string (nested ones too: `bash -c`, `eval`) from where `ctx` is."""
    lexer = Lexer(text, ctx.home, MAX_DEPTH - ctx.depth, ctx.out.opaque)
    toks = lexer.tokens()
    if lexer.gave_up is not None:
        ctx.give_up(lexer.gave_up)
    _run(toks, ctx)


def _run_sub(toks: list[Word | Redir | str], ctx: ShellState) -> None:
    if ctx.depth >= MAX_DEPTH:
        ctx.give_up("nesting too deep")
    else:
        _run(toks, ctx.child())


def _word_subs(w: Word | Redir, ctx: ShellState) -> None:
    for toks in w.subs:
        _run_sub(toks, ctx)


def _run(toks: list[Word | Redir | str], ctx: ShellState) -> None:
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
        _simple(words, redirs, ctx, piped)


def _compound(
    toks: list[Word | Redir | str], i: int, lit: str, ctx: ShellState, cases: list[bool]
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


def _simple(
    words: list[Word],
    redirs: list[tuple[Redir, Word | None]],
    ctx: ShellState,
    piped: bool = False,
) -> None:
    """One simple command: substitutions first, then redirections, then argv (with
    what it reads on stdin: `piped` says a pipe feeds it)."""
    stdin: Stdin = UNKNOWN_INPUT if piped else None
    for w in words:
        _word_subs(w, ctx)
    for r, target in redirs:
        _word_subs(r, ctx)
        if target is None:
            ctx.note("redirection without target")
            continue
        _word_subs(target, ctx)
        op = r.op
        if r.fd in ("", "0") and op in ("<", "<<", "<<-", "<<<", "<>", "<&"):
            stdin = (r, target) if op in ("<<", "<<-", "<<<") else UNKNOWN_INPUT
        if op in (">", ">>", ">|", "&>", "&>>", "<>") or (
            op == ">&" and not (target.lit.rstrip("-").isdigit() or target.lit == "-")
        ):
            ctx.add(target)
    argv: list[Word] = []
    for w in words:
        if w.dyn is None and "{" in w.esc:
            budget = [4 * len(w.esc) + 65536]
            alts = expand_braces(w.esc, budget)
            if len(alts) > MAX_BRACE or budget[0] <= 0:
                ctx.give_up("brace expansion truncated")
            argv.extend(Word(unescape(e), e) for e in alts[:MAX_BRACE] if e)  # bash drops empty
        else:
            argv.append(w)
    k = 0
    while k < len(argv) and is_assignment(argv[k]):
        k += 1
    saved, ctx.stdin = ctx.stdin, stdin
    try:
        run_command(argv[k:], ctx)
    finally:
        ctx.stdin = saved
