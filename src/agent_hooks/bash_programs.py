"""Commands that run code the analysis cannot see, and commands known to only read.

`READ_ONLY` commands write nothing (xargs and find -exec of them are not opaque).
Reported as opaque, each with a short reason: interpreters running code (python -c,
python -m, node x.js, python reading stdin; not --version/--help), `source`/`.`,
patch (not --dry-run), make-likes (not -n/-q/--version/--help) and npm/yarn/pnpm
scripts, execs and installs (not read-only subcommands such as view or ls). Hot path:
imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_hooks.bash_state import ShellState

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


HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = dict.fromkeys(
    ("source", ".", "patch", *_MAKES, *_NPMS), _runner
)
