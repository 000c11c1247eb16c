"""The commands `bash_writes` knows: which files each one writes, and how a command line is dispatched.

Four parts, one module (each module on the hook path costs ~0.2 ms to import; ADR-0005):

Programs. Commands that run code the analysis cannot see, and commands known to only read.

`READ_ONLY` commands write nothing (xargs and find -exec of them are not opaque).
Reported as opaque, each with a short reason: interpreters running code (python -c,
python -m, node x.js, python reading stdin; not --version/--help), `source`/`.`,
patch (not --dry-run), make-likes (not -n/-q/--version/--help) and npm/yarn/pnpm
scripts, execs and installs (not read-only subcommands such as view or ls). Hot path:
imports nothing but agent_hooks' bash modules.

git. What a git command writes in the work tree.

Seen: the paths of checkout/restore/rm/mv (as pathspecs: git globs them even when
quoted, so they are glob targets; `:`-magic pathspecs are reported) and worktree add,
resolved against `git -C DIR` when given. Reported as opaque: commands that may rewrite
many files (reset --hard/--merge/--keep, clean, stash, switch, merge, pull, rebase,
cherry-pick, revert, am, apply, checkout REF) and --pathspec-from-file. Git aliases are
not seen. Hot path: imports nothing but agent_hooks' bash modules.

File commands. What commands that name their files write: the per-command tables and handlers.

Seen: tee, cp, install, mv (sources too), rm, rmdir, unlink, shred, touch, mkdir,
truncate, ln, dd of=, rsync/scp to a local destination, sed -i, perl -i,
gawk -i inplace, sort -o, curl -o, wget -O/-P, tar -c -f / tar -x -C,
unzip -d. Reported as opaque: perl -e and perl scripts, tar -x / unzip without a
directory, awk programs with an obvious `> "file"`, `| "cmd"` or `system(` (a guess;
other awk writes and sed's `w` command are not seen), awk -f. cp/mv/... destinations
are taken from their static words.

Every handler has the signature `(name, args, state)`: `name` is the command's base
name, `args` its words after it; it only adds targets and reasons to `state` and never
runs a nested command (that is the dispatch below). `_FILE_HANDLERS` maps names to handlers.
Hot path: imports nothing but agent_hooks' bash modules.

Dispatch. Running one simple command: peel wrappers, then hand the words to the command's handler.

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

from agent_hooks.reservations.bash.lexer import Word, escape
from agent_hooks.reservations.bash.words import (
    MAX_DEPTH,
    BashAnalysis,
    ShellState,
    change_dir,
    deeper,
    enter_dir,
    has_option,
    is_assignment,
    norm,
    option_value,
    parse_options,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


READ_ONLY = frozenset(
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
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
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


def _runner(name: str, args: list[Word], ctx: ShellState) -> None:
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


def is_interpreter(name: str) -> bool:
    return name in _INTERPRETERS or name.startswith("python")


def interpreter(name: str, args: list[Word], ctx: ShellState) -> None:
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


_PROGRAM_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = dict.fromkeys(
    ("source", ".", "patch", *_MAKES, *_NPMS), _runner
)


def git(name: str, args: list[Word], ctx: ShellState) -> None:
    """Work-tree writes of git: paths of checkout/restore/rm/mv, worktree add;
    commands that may rewrite many files are opaque."""
    where = (ctx.cwd, ctx.why)
    k, n = 0, len(args)
    while k < n and args[k].lit.startswith("-"):
        t = args[k].lit
        if t == "-C" and k + 1 < n:
            where = enter_dir(args[k + 1], where, ctx.home)
        k += 2 if t in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    sub, rest = (args[k].lit, args[k + 1 :]) if k < n else ("", [])
    lits = [w.lit for w in rest]
    pos, opts = parse_options(
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
        if has_option(opts, "-b", "-B", "--orphan") and not pos:
            pass  # a new branch at HEAD: the work tree stays
        elif pos and pos[0].lit == ".":
            paths = pos
        elif pos or has_option(opts, "-f", "--force"):
            ctx.note("git checkout " + (pos[0].lit if pos else "-f"))
            paths = pos[1:]
    elif sub == "restore":
        if not has_option(opts, "-S", "--staged") or has_option(opts, "-W", "--worktree"):
            paths = pos
    elif sub in ("rm", "mv"):
        if not has_option(opts, "--cached", "-n", "--dry-run"):
            paths = pos
    elif sub == "reset":
        for t in lits:
            if t in ("--hard", "--merge", "--keep"):
                ctx.note("git reset " + t)
    elif sub == "clean":
        if not has_option(opts, "-n", "--dry-run"):
            ctx.note("git clean")
    elif sub == "stash":
        if not pos or pos[0].lit not in ("list", "show", "drop", "clear", "create", "store"):
            ctx.note(" ".join(["git stash", *(w.lit for w in pos[:1])]))
    elif sub == "switch":
        if pos or not has_option(opts, "-c", "-C", "--create", "--force-create"):
            ctx.note(" ".join(["git switch", *(w.lit for w in pos[:1])]))
    elif sub in ("merge", "rebase", "pull", "cherry-pick", "revert", "am"):
        ctx.note("git " + sub)
    elif sub == "apply":
        if not any(t in ("--check", "--stat", "--numstat", "--summary", "--cached") for t in lits):
            ctx.note("git apply")
    elif sub == "worktree" and lits[:1] == ["add"] and len(pos) > 1:
        ctx.add(pos[1], where)
    if has_option(opts, "--pathspec-from-file"):
        ctx.note(f"git {sub} --pathspec-from-file")
    for w in paths:
        ctx.add(w, where, spec=sub != "mv")


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


def _operands(name: str, args: list[Word], ctx: ShellState) -> None:
    short, long = _OPERANDS[name]
    for w in parse_options(args, short, long)[0]:
        ctx.add(w)


def _outputs(name: str, args: list[Word], ctx: ShellState) -> None:
    short, long, outs = _OUTPUTS[name]
    for o, v in parse_options(args, short, long)[1]:
        if o in outs and v is not None and v.lit != "-":
            ctx.add(v)


def _copy(name: str, args: list[Word], ctx: ShellState) -> None:
    """cp, mv, install, ln, rsync, scp: the destination (for mv the sources too;
    a remote `host:path` destination is not local)."""
    short, long = _COPIES[name]
    pos, opts = parse_options(args, short, long)
    tdir = option_value(opts, "-t", "--target-directory")
    if name in ("rsync", "scp"):
        if len(pos) >= 2 and (pos[-1].dyn is not None or ":" not in pos[-1].lit.partition("/")[0]):
            ctx.add(pos[-1])
        return
    if name == "install" and has_option(opts, "-d", "--directory"):
        srcs, dest = pos, None
    elif tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    elif name == "ln" and pos:  # `ln -s /x/y` makes ./y
        base = norm("/" + pos[0].lit).rpartition("/")[2]
        srcs, dest = [], pos[0] if pos[0].dyn is not None else Word(base, escape(base))
    else:
        return
    if name == "mv" or dest is None:  # a move removes its sources; install -d makes them
        for w in srcs:
            ctx.add(w)
    if dest is not None:
        ctx.add(dest)


def _dd(name: str, args: list[Word], ctx: ShellState) -> None:
    for w in args:
        if w.lit.startswith("of="):
            ctx.add(w.tail(3))


def _sed(name: str, args: list[Word], ctx: ShellState) -> None:
    pos, opts = parse_options(
        args, "efl", ("--expression", "--file", "--line-length"), optional="i"
    )
    if has_option(opts, "-i", "--in-place"):
        for w in pos if has_option(opts, "-e", "-f", "--expression", "--file") else pos[1:]:
            ctx.add(w)


def _perl(name: str, args: list[Word], ctx: ShellState) -> None:
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


def _awk(name: str, args: list[Word], ctx: ShellState) -> None:
    """gawk -i inplace edits its files; a program text with `> "file"`,
    `| "cmd"` or system() may write (a guess); -f programs are not read."""
    pos, opts = parse_options(
        args,
        "fvFilEe",
        ("--file", "--assign", "--field-separator", "--include", "--load", "--source", "--exec"),
    )
    from_file = has_option(opts, "-f", "--file", "-E", "--exec")
    texts = [v.lit for o, v in opts if o in ("-e", "--source") and v] or [w.lit for w in pos[:1]]
    files = pos if from_file or has_option(opts, "-e", "--source") else pos[1:]
    if any(o in ("-i", "--include") and v and v.lit in ("inplace", "inplace.awk") for o, v in opts):
        for w in files:
            if not is_assignment(w):
                ctx.add(w)
    elif from_file:
        ctx.note(name + " -f")
    elif any(x in t for t in texts for x in ("system(", '>"', '> "', '|"', '| "')):
        ctx.note(name + " program may write")


def _archive(name: str, args: list[Word], ctx: ShellState) -> None:
    """tar -c/-r/-u -f FILE, tar -x -C DIR, unzip -d DIR; else extraction into
    the current directory is opaque."""
    if name == "unzip":
        opts = parse_options(args, "dx")[1]
        into = option_value(opts, "-d")
        if into is not None:
            ctx.add(into)
        elif not has_option(opts, "-l", "-t", "-v", "-Z", "-p"):  # listing, testing, piping
            ctx.note("unzip")
        return
    if args and args[0].dyn is None and args[0].lit[:1] not in ("-", ""):  # `tar xzf F`
        args = [Word("-" + args[0].lit, "-" + args[0].esc), *args[1:]]
    opts = parse_options(
        args,
        "fCbTXgKLNVH",
        ("--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--transform"),
    )[1]
    archive, into = option_value(opts, "-f", "--file"), option_value(opts, "-C", "--directory")
    if has_option(opts, "-x", "--extract", "--get"):
        if into is not None:
            ctx.add(into)
        else:
            ctx.note("tar -x")
    elif (
        archive is not None
        and archive.lit != "-"
        and has_option(opts, "-c", "--create", "-r", "--append", "-u", "--update", "--delete", "-A")
    ):
        ctx.add(archive)


_FILE_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
    **dict.fromkeys(_OPERANDS, _operands),
    **dict.fromkeys(_OUTPUTS, _outputs),
    **dict.fromkeys(_COPIES, _copy),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    "dd": _dd,
    "sed": _sed,
    "perl": _perl,
    "tar": _archive,
    "unzip": _archive,
}


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
    ctx.give_up("too many wrappers")


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
        if sub.out.gave_up is not None:
            ctx.give_up(sub.out.gave_up)
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
        return ctx.give_up("nesting too deep")
    ctx.depth += 1
    try:
        _run_text(" ".join(w.lit for w in args), ctx)
    finally:
        ctx.depth -= 1


def _run_text(text: str, ctx: ShellState) -> None:
    """`bash_writes.run_text`, imported when first needed: bash_writes imports this module."""
    from agent_hooks.reservations.bash.writes import run_text

    run_text(text, ctx)


_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
    **_FILE_HANDLERS,
    **_PROGRAM_HANDLERS,
    "git": git,
    "find": _find,
    "eval": _eval,
    **dict.fromkeys(("cd", "pushd", "popd"), change_dir),
    **dict.fromkeys(SHELLS, _shell),
}
