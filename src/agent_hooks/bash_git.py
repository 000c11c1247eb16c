"""What a git command writes in the work tree.

Seen: the paths of checkout/restore/rm/mv (as pathspecs: git globs them even when
quoted, so they are glob targets; `:`-magic pathspecs are reported) and worktree add,
resolved against `git -C DIR` when given. Reported as opaque: commands that may rewrite
many files (reset --hard/--merge/--keep, clean, stash, switch, merge, pull, rebase,
cherry-pick, revert, am, apply, checkout REF) and --pathspec-from-file. Git aliases are
not seen. Hot path: imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word
from agent_hooks.bash_options import has_option, parse_options
from agent_hooks.bash_paths import enter_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_hooks.bash_state import ShellState


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
