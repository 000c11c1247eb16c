"""Running one simple command: peel wrappers, then hand the words to the command's handler.

Wrappers are seen through: sudo, env, command, builtin, exec, nohup, time (its -o file
is a target), nice, timeout, stdbuf, uv/poetry run, at most 16 deep; `env -C`/`sudo -D`
change the directory for the wrapped command only. Commands that run other commands are
analysed recursively, one level deeper each (never past MAX_DEPTH): xargs and
find -exec (the words coming from input are unknown; unless the command is known to
only read, it is reported as "xargs NAME" instead of by its own reasons), `bash -c` /
`sh -c` strings and `eval` text (in place: a cd in it persists). find -fprint, -fprint0,
-fls and -fprintf files are targets. Reported as opaque: a command name that is a
variable, a path to a command not known here (a script), `bash FILE` and shells reading
stdin, eval of partly unknown text, env -S, find -delete. Commands not named anywhere
are assumed not to write. Hot path: imports nothing but agent_hooks' bash modules
(`bash_writes`, for nested command strings, lazily: the two call each other).
"""

from __future__ import annotations

from agent_hooks import bash_commands, bash_programs
from agent_hooks.bash_git import git
from agent_hooks.bash_lexer import Word, escape
from agent_hooks.bash_options import has_option, is_assignment, option_value, parse_options
from agent_hooks.bash_paths import enter_dir
from agent_hooks.bash_programs import READ_ONLY, SHELLS, interpreter, is_interpreter
from agent_hooks.bash_state import MAX_DEPTH, BashAnalysis, ShellState, change_dir, deeper

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

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


def run_command(argv: list[Word], ctx: ShellState) -> None:
    """One command (assignments removed): peel wrappers, then dispatch by name."""
    for _ in range(16):
        if not argv:
            return
        w, args = argv[0], argv[1:]
        if w.dyn is not None:
            return ctx.note("command " + w.dyn)
        name = w.lit.rpartition("/")[2]  # /usr/bin/rm is rm; ./build.sh is a script
        if name != w.lit and not (
            name in _HANDLERS or name in _WRAPPERS or name in READ_ONLY or is_interpreter(name)
        ):
            return ctx.note("script " + w.lit)
        if name in ("uv", "poetry") and args[:1] and args[0].lit == "run":
            name, args = name + " run", args[1:]
        if name not in _WRAPPERS:
            if name in _HANDLERS:
                _HANDLERS[name](name, args, ctx)
            elif is_interpreter(name):
                interpreter(name, args, ctx)
            return
        short, long = _WRAPPERS[name]
        argv, opts = parse_options(args, short, long, stop=True, optional="iel" * (name == "xargs"))
        if name == "xargs":
            rep = option_value(opts, "-I", "-i", "--replace")
            hole = rep.lit if rep else "{}" if has_option(opts, "-i", "--replace") else ""
            return _indirect("xargs", argv, hole, ctx)
        if name == "command" and has_option(opts, "-v", "-V"):
            return
        out = option_value(opts, "-o", "--output") if name == "time" else None
        if out is not None:
            ctx.add(out)
        if name == "timeout":
            argv = argv[1:]
        if name in ("env", "sudo"):
            if has_option(opts, "-S", "--split-string"):
                return ctx.note("env -S")
            while argv and (is_assignment(argv[0]) or argv[0].lit == "-"):
                argv = argv[1:]
            chdir = option_value(opts, "--chdir", "-C" if name == "env" else "-D")
            if chdir is not None:
                sub = deeper(ctx)
                if sub is not None:
                    sub.cwd, sub.why = enter_dir(chdir, (ctx.cwd, ctx.why), ctx.home)
                    run_command(argv, sub)
                return
    ctx.note("too many wrappers")


def _indirect(label: str, argv: list[Word], hole: str, ctx: ShellState) -> None:
    """A command run by xargs or find -exec. Its words are analysed with the
    input ones (`hole`, or appended) unknown; unless it only reads, its one
    reason is "xargs NAME" (its own reasons are dropped)."""
    sub = deeper(ctx) if argv else None
    if sub is not None:
        sub.out = BashAnalysis(ctx.out.targets, [])
        unknown = Word(hole, escape(hole), "input")
        words = [unknown if hole and hole in w.lit else w for w in argv[1:]]
        run_command([argv[0], *words, *([] if hole else [unknown])], sub)
        base = argv[0].lit.rpartition("/")[2]
        if base not in READ_ONLY:
            ctx.note(f"{label} {base}")


def _find(name: str, args: list[Word], ctx: ShellState) -> None:
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


def _shell(name: str, args: list[Word], ctx: ShellState) -> None:
    """`bash -c STRING` is analysed (a partly dynamic one too, with a reason);
    `bash FILE` and bare `bash` (reading stdin) are opaque."""
    pos, opts = parse_options(args, "oO", ("--rcfile", "--init-file"), stop=True)
    if not has_option(opts, "-c"):
        if pos or not has_option(opts, "--version", "--help"):
            ctx.note("script " + pos[0].lit if pos else name + " reads stdin")
    elif pos:
        if pos[0].dyn is not None:
            ctx.note(f"{name} -c {pos[0].dyn}")
        sub = deeper(ctx)
        if sub is not None:
            _run_text(pos[0].lit, sub)


def _eval(name: str, args: list[Word], ctx: ShellState) -> None:
    """eval of literal text is analysed in place (a cd persists); a variable or
    substitution in it makes it opaque ("eval") beyond what its text shows."""
    if any(w.dyn is not None for w in args):
        ctx.note("eval")
    if ctx.depth >= MAX_DEPTH:
        return ctx.note("nesting too deep")
    ctx.depth += 1
    try:
        _run_text(" ".join(w.lit for w in args), ctx)
    finally:
        ctx.depth -= 1


def _run_text(text: str, ctx: ShellState) -> None:
    """`bash_writes.run_text`, imported when first needed: bash_writes imports this module."""
    from agent_hooks.bash_writes import run_text

    run_text(text, ctx)


_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
    **bash_commands.HANDLERS,
    **bash_programs.HANDLERS,
    "git": git,
    "find": _find,
    "eval": _eval,
    **dict.fromkeys(("cd", "pushd", "popd"), change_dir),
    **dict.fromkeys(SHELLS, _shell),
}
