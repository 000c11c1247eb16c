"""The commands `writes` knows: which files each one writes, and how a command line is dispatched.

Three parts, one module (each module on the hook path costs ~0.2 ms to import; ADR-0005);
what commands that name their files write is in `file_commands` (`FILE_HANDLERS`, loaded
when a command needs it):

Programs. Commands that run code the analysis cannot see, and commands known to only read.

`READ_ONLY` commands write nothing (xargs and find -exec of them are not opaque).
Reported as opaque, each with a short reason: interpreters running code (python -c,
python -m, node x.js, python reading stdin; not --version/--help), `source`/`.`,
make-likes (not -n/-q/--version/--help) and npm/yarn/pnpm scripts, execs and installs
(not read-only subcommands such as view or ls). Hot path: imports nothing but
agent_hooks' bash modules.

git. What a git command writes in the work tree.

Seen: the paths of checkout/restore/rm/mv and of `stash push` (pathspecs, git's
targets: `BashTarget.by_git`; git replaces a symlink in the work tree rather than follow
it, so they are directory entries) and worktree add, resolved against `git -C DIR` and
`--work-tree` when given (from outside its work tree git takes paths from the top of
it). A pathspec git matches as more than the path it spells (magic, a wildcard, a
backslash, case folded) or read from `--pathspec-from-file`, and the plumbing
(read-tree, checkout-index, merge-file, submodule, worktree remove/prune), are
`git_paths`' (loaded only then). Reported as opaque: commands that may rewrite many
files (reset --hard/--merge/--keep, clean, stash save or without pathspecs, switch,
merge, pull, rebase, cherry-pick, revert, am, apply, checkout of a branch, checkout -f
even with -b). Git aliases and GIT_WORK_TREE in the environment are not seen. Hot path:
imports nothing but agent_hooks' bash modules.

Dispatch. Running one simple command: peel wrappers, then hand the words to the command's handler.

Wrappers are seen through: sudo, env, command, builtin, exec, nohup, time (its -o file
is a target), nice, timeout, stdbuf, uv/poetry run, at most 16 deep (past that the
analysis gives up); `env -C`/`sudo -D` change the directory for the wrapped command
only. Commands that run other commands are analysed recursively, one level deeper each
(never past MAX_DEPTH): xargs and find -exec (the words coming from input are unknown;
unless the command is known to only read, it is reported as "xargs NAME" instead of by
its own reasons), `bash -c` / `sh -c` strings and `eval` text (in place: a cd in it
persists). find -fprint, -fprint0, -fls and -fprintf files are targets; with -delete, or
-exec of a command that writes the files found (`-exec rm {} +`, `-exec sed -i ... {} +`),
so are find's starting points (their entries; followed too with -L/-H). Reported as
opaque: a command name that is a variable, a path to a command not known here (a
script), `bash FILE` and shells reading stdin, eval of partly unknown text, env -S.
Commands not named anywhere are assumed not to write. Hot path: imports nothing but
agent_hooks' shell modules (nested command strings go back to `writes` through
`ShellState.run_text`, a callable, not an import).
"""

from __future__ import annotations

import posix

from agent_hooks.shell.lexer import Word, escape
from agent_hooks.shell.words import (
    BOTH,
    ENTRY,
    FOLLOW,
    INPUT,
    MAX_DEPTH,
    BashAnalysis,
    ShellState,
    change_dir,
    deeper,
    enter_dir,
    filled_option,
    has_option,
    is_assignment,
    option_value,
    parse_options,
    read_stdin,
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
    """source/., make-likes and npm-likes run what is unseen."""
    lits = [w.lit for w in args]
    pos = [t for t in lits if not t.startswith("-")]
    if name in ("source", "."):
        ctx.note(" ".join(["source", *pos[:1]]))
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
    """python/node/ruby/...: code from -c/-m (python, pypy), -e/-E/--eval/-p/--print/-r
    (the others), a script or stdin is opaque. Python's letters bundle (`-Bc`, `-um mod`,
    `-BW ignore`): the first of c, m, W, X takes a value, the rest of the word or the
    next one."""
    if args and all(w.lit in ("-V", "--version", "-v", "-h", "--help") for w in args):
        return
    python = name.startswith(("python", "pypy"))
    k, n = 0, len(args)
    while k < n:
        t = args[k].lit
        k += 1
        if python and t == "--check-hash-based-pycs":
            k += 1  # its value
        elif python and t[:1] == "-" and t[1:2] not in ("", "-"):
            at = next((j for j in range(1, len(t)) if t[j] in "cmWX"), 0)
            value = t[at + 1 :] if at else ""
            if at and not value and k < n:
                value = args[k].lit
                k += 1
            if at and t[at] in "cm":
                return ctx.note(
                    f"{name} -{t[at]}" + (f" {value}" if t[at] == "m" and value else "")
                )
        elif t in ("-e", "-E", "--eval", "-p", "--print", "-r"):
            return ctx.note(f"{name} {t}")
        elif t == "-" or t[:1] != "-":
            return ctx.note(f"{name} {t}" if t != "-" else name + " reads stdin")
    ctx.note(name + " reads stdin")


_PROGRAM_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = dict.fromkeys(
    ("source", ".", *_MAKES, *_NPMS), _runner
)


def git(name: str, args: list[Word], ctx: ShellState) -> None:
    """Work-tree writes of git: paths of checkout/restore/rm/mv, stash push with
    pathspecs, worktree add; commands that rewrite the work tree as a whole
    (checkout of a branch or with -f, switch, reset --hard/--merge/--keep, clean,
    stash, merge, rebase, pull, cherry-pick, revert, am, apply) are
    `ShellState.tree`s of the directory git runs in. `git checkout X` without `--`
    takes X for a path when one by that name exists (git's own rule picks a branch
    first; a branch named like an existing path is the rare case), else for a
    branch; a magic X (`:/`) for both. Checked against git 2.39: `checkout -f -b NEW`
    resets the work tree (`switch -f -c NEW` does not); `stash save -- f` stashes
    everything (its words are a message); from outside `--work-tree` paths are taken
    from its top; `checkout --pathspec-from-file=F` restores paths (no branch switch);
    `reset -- PATHS` changes only the index. Pathspecs that are magic, hold a
    wildcard or come from a file, and the plumbing, are `git_paths`' (loaded then)."""
    where = (ctx.cwd, ctx.why)
    work_tree: Word | None = None
    git_dir = False
    icase = ctx.git_icase
    k, n = 0, len(args)
    while k < n and args[k].lit.startswith("-"):
        t = args[k].lit
        if t == "-C" and k + 1 < n:
            where = enter_dir(args[k + 1], where, ctx.home, ctx.shell_dir())
        elif t == "--work-tree" and k + 1 < n:
            work_tree = args[k + 1]
        elif t.startswith("--work-tree="):
            work_tree = args[k].tail(len("--work-tree="), tilde=False)
        git_dir |= t == "--git-dir" or t.startswith("--git-dir=")
        icase |= t == "--icase-pathspecs"
        k += 2 if t in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    # the top of the work tree, for `:/`: (it, whether given), else found when needed
    top: tuple[str | None, bool] = (None, git_dir)  # --git-dir alone: core.worktree or cwd
    if work_tree is not None:  # taken from where the -Cs lead
        tree = enter_dir(work_tree, where, ctx.home, ctx.shell_dir())
        top = (tree[0], True)
        if tree[0] is None or where[0] is None or not _within(where[0], tree[0]):
            where = tree  # outside its work tree, git reads paths from the top
    sub, rest = (args[k].lit, args[k + 1 :]) if k < n else ("", [])
    if sub in _PLUMBING or (sub == "worktree" and rest[:1] and rest[0].lit in ("remove", "prune")):
        from agent_hooks.shell import git_paths

        return git_paths.plumbing(sub, rest, where, top, icase, ctx)
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
            "--pathspec-from-file",
        ),
    )
    dashes = "--" in lits
    after = rest[lits.index("--") + 1 :] if dashes else []  # what `--` makes paths
    head = pos[: max(len(pos) - len(after), 0)]  # the operands before it
    filled, head = filled_option(head, "--pathspec-from-file")
    pos = [*head, *after]
    from_file = filled or option_value(opts, "--pathspec-from-file")
    paths: list[Word] = []
    specs = True  # `paths` are pathspecs (a file of them too) of what is written
    if sub == "checkout":
        if from_file is not None:
            pass  # `checkout [TREE-ISH] --pathspec-from-file=F`: only the paths listed
        elif after:
            paths = after  # `checkout [TREE-ISH] -- PATHS`: only the paths
        elif not dashes and head and (head[0].lit == "." or _names_a_path(head[0], where)):
            paths = head
        elif not dashes and head and head[0].lit.startswith(":") and head[0].dyn is None:
            paths = head  # git 2.39 restored every file; `:/TEXT` may name a commit too
            ctx.tree(where, "git checkout " + head[0].lit)
        elif not dashes and len(head) > 1:
            paths = head[1:]  # `checkout TREE-ISH PATHS`: no branch switch
        elif head or has_option(opts, "-f", "--force"):
            ctx.tree(where, "git checkout " + (head[0].lit if head else "-f"))
        # else a new branch at HEAD (-b, -B, --orphan; with -f it resets) or nothing
    elif sub == "restore":
        if not has_option(opts, "-S", "--staged") or has_option(opts, "-W", "--worktree"):
            paths = pos
        else:
            from_file = None  # only the index
    elif sub in ("rm", "mv"):
        if not has_option(opts, "--cached", "-n", "--dry-run"):
            paths, specs = pos, sub == "rm"
        else:
            from_file = None  # the index only, or nothing
    elif sub == "reset":
        for t in lits:
            if t in ("--hard", "--merge", "--keep"):
                ctx.tree(where, "git reset " + t)
    elif sub == "clean":
        if not has_option(opts, "-n", "--dry-run"):
            ctx.tree(where, "git clean")
    elif sub == "stash":
        action = head[0].lit if head else "push"
        if action == "push" and (head[1:] or after or from_file is not None):
            paths = [*head[1:], *after]  # only these are swept (save's words are a message)
        elif action not in ("list", "show", "drop", "clear", "create", "store"):
            untracked = has_option(opts, "-u", "--include-untracked", "-a", "--all")
            named = ["git stash", *(w.lit for w in head[:1]), *(["-u"] if untracked else [])]
            ctx.tree(where, " ".join(named))  # -u: untracked files too, which the index lacks
    elif sub == "switch":
        if pos or not has_option(opts, "-c", "-C", "--create", "--force-create"):
            ctx.tree(where, " ".join(["git switch", *(w.lit for w in pos[:1])]))
    elif sub in ("merge", "rebase", "pull", "cherry-pick", "revert", "am"):
        if not any(t in ("--abort", "--quit", "--skip") for t in lits) or sub == "pull":
            ctx.tree(where, "git " + sub)
    elif sub == "apply":
        if not any(t in ("--check", "--stat", "--numstat", "--summary", "--cached") for t in lits):
            ctx.tree(where, "git apply")
    elif sub == "worktree" and lits[:1] == ["add"] and len(pos) > 1:
        ctx.add(pos[1], where)
    if sub not in _PATHSPEC_WRITERS:
        return
    if specs and (from_file is not None or icase or not all(map(_plain_pathspec, paths))):
        from agent_hooks.shell import git_paths

        nul = has_option(opts, "--pathspec-file-nul")
        return git_paths.select(
            ctx, paths, from_file, nul, where, top, sub == "rm", icase, "git " + sub
        )
    for w in paths:  # git replaces a symlink in the work tree, never follows it
        ctx.add(w, where, how=ENTRY, by_git=sub != "mv")


# The git subcommands whose paths `git` records; those `git_paths.plumbing` reads.
_PATHSPEC_WRITERS = frozenset(("checkout", "restore", "rm", "mv", "stash"))
_PLUMBING = frozenset(("read-tree", "checkout-index", "merge-file", "submodule"))


def _plain_pathspec(w: Word) -> bool:
    """Does git take the word as the path it spells (no magic, no wildcard)? A word
    the shell (or xargs, find -exec) fills in with more than the current directory may
    be any pathspec: no (`git_paths.select` counts it as the whole work tree)."""
    if w.dyn is not None and w.here is None:
        return False
    return w.lit[:1] != ":" and not any(c in w.lit for c in "*?[\\")


def _within(path: str, top: str) -> bool:
    """Is `path` the directory `top` or below it (both absolute and normal)?"""
    return (path.rstrip("/") + "/").startswith(top.rstrip("/") + "/")


def _names_a_path(w: Word, where: tuple[str | None, str]) -> bool:
    """Does the literal word name an existing file or directory where git runs?"""
    if w.dyn is not None or not w.lit or where[0] is None:
        return False
    path = w.lit if w.lit.startswith("/") else where[0].rstrip("/") + "/" + w.lit
    try:
        posix.stat(path)
    except (OSError, ValueError):
        return False
    return True


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
            _indirect("xargs", argv, hole, ctx)
            return
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
                    sub.cwd, sub.why = enter_dir(
                        chdir, (ctx.cwd, ctx.why), ctx.home, ctx.shell_dir()
                    )
                    run_command(argv, sub)
                return
    ctx.give_up("too many wrappers")


def _indirect(label: str, argv: list[Word], hole: str, ctx: ShellState) -> bool:
    """A command run by xargs or find -exec. Its words are analysed with the
    input ones (`hole`, or appended) unknown; unless it only reads, its one
    reason is "xargs NAME" (its own reasons are dropped, but not a git command
    rewriting a work tree: `BashAnalysis.trees`, `worktrees`). True when it writes
    the input paths themselves (`find -exec rm {} +`): find knows where they are;
    then find's reason is not needed."""
    sub = deeper(ctx) if argv else None
    if sub is None:
        return False
    sub.out = BashAnalysis(ctx.out.targets, [])
    unknown = Word(hole, escape(hole), INPUT)
    words = [unknown if hole and hole in w.lit else w for w in argv[1:]]
    run_command([argv[0], *words, *([] if hole else [unknown])], sub)
    if sub.out.gave_up is not None:
        ctx.give_up(sub.out.gave_up)
    for where, what in sub.out.trees:  # git rewriting a tree is never lost in xargs' reason
        ctx.tree((where, ""), f"{label} {what.rstrip()}")
    for kind, where, what, named, path in sub.out.worktrees:
        ctx.worktree(kind, (where, ""), f"{label} {what.rstrip()}", named, path)
    base = argv[0].lit.rpartition("/")[2]
    if base not in READ_ONLY and not (sub.out.fed and label.startswith("find")):
        ctx.note(f"{label} {base}")
    return sub.out.fed


def _find(name: str, args: list[Word], ctx: ShellState) -> None:
    """find's -fprint files; with -delete, or -exec of a command writing the
    files found, its starting points (their entries; followed too with -L/-H)."""
    k, n, follow = 0, len(args), False
    while k < n and (args[k].lit in ("-H", "-L", "-P", "-D") or args[k].lit.startswith("-O")):
        follow = args[k].lit in ("-H", "-L") or (follow and args[k].lit != "-P")
        k += 1 + (args[k].lit == "-D")
    starts: list[Word] = []
    while k < n and (args[k].dyn is not None or args[k].lit[:1] not in ("-", "(", "!", ")", ",")):
        starts.append(args[k])
        k += 1
    writes = False
    while k < n:
        t = args[k].lit
        k += 1
        if t == "-delete":
            writes = True
        elif t in ("-fprint", "-fprint0", "-fls", "-fprintf") and k < n:
            ctx.add(args[k])
            k += 1 + (t == "-fprintf")
        elif t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k
            while j < n and args[j].lit not in (";", "+"):
                j += 1
            writes |= _indirect("find " + t, args[k:j], "{}", ctx)
            k = j + 1
    for w in (starts or [Word(".", ".")]) if writes else ():
        ctx.add(w, how=BOTH if follow else ENTRY)


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
            sub.run_text(pos[0].lit, sub)


def _eval(name: str, args: list[Word], ctx: ShellState) -> None:
    """eval of literal text is analysed in place (a cd persists); a variable or
    substitution in it makes it opaque ("eval") beyond what its text shows."""
    if any(w.dyn is not None for w in args):
        ctx.note("eval")
    if ctx.depth >= MAX_DEPTH:
        return ctx.give_up("nesting too deep")
    ctx.depth += 1
    try:
        ctx.run_text(" ".join(w.lit for w in args), ctx)
    finally:
        ctx.depth -= 1


def _apply_patch(name: str, args: list[Word], ctx: ShellState) -> None:
    """apply_patch / applypatch (Codex's patch tool, also on its PATH): every file the
    patch's hunk headers name (`patch_targets`), relative to the current directory;
    a removed or moved-away file is its directory entry (and what it points to). The
    patch is the one argument, else stdin (a here-doc or here-string); a patch that
    cannot be read (a variable, a pipe, a file, a here-doc with expansions) may
    write anywhere: the analysis gives up."""
    from agent_hooks.shell.patch_targets import DELETE, parse

    text = read_stdin(ctx.stdin) if not args else args[0].lit if args[0].dyn is None else None
    if text is None:
        return ctx.give_up(f"{name} of a patch that cannot be read")
    patch = parse(text)
    for hunk in patch.hunks:
        gone = hunk.op == DELETE or hunk.move_to is not None
        ctx.add(Word(hunk.path, escape(hunk.path)), how=BOTH if gone else FOLLOW)
        if hunk.move_to is not None:
            ctx.add(Word(hunk.move_to, escape(hunk.move_to)))
    if patch.problem is not None:
        ctx.note(f"{name}: {patch.problem}")


# The names `file_commands.FILE_HANDLERS` handles (a test keeps the two equal): that
# module is loaded only when the command uses one of them (`echo x > f` needs none).
_FILE_COMMAND_NAMES = (
    "awk chgrp chmod chown cp csplit curl dd ed ex gawk install ln mawk mkdir mv "
    "nawk nvim patch perl red rm rmdir rsync scp sed shred sort split sqlite3 tar "
    "tee touch truncate uniq unlink unzip vi view vim wget zip"
)
FILE_COMMANDS = frozenset(_FILE_COMMAND_NAMES.split())


def _file_command(name: str, args: list[Word], ctx: ShellState) -> None:
    from agent_hooks.shell.file_commands import FILE_HANDLERS

    FILE_HANDLERS[name](name, args, ctx)


_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
    **dict.fromkeys(FILE_COMMANDS, _file_command),
    **_PROGRAM_HANDLERS,
    "git": git,
    **dict.fromkeys(("apply_patch", "applypatch"), _apply_patch),
    "find": _find,
    "eval": _eval,
    **dict.fromkeys(("cd", "pushd", "popd"), change_dir),
    **dict.fromkeys(SHELLS, _shell),
}
