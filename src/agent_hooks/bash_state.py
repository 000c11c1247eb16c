"""Where the shell is while `bash_writes` reads a command, and what it has found so far.

`ShellState` holds the current directory (None when unknown, with the reason it got lost),
OLDPWD, the pushd stack (at most 64 entries) and the recursion depth (never past
MAX_DEPTH: `deeper` says "nesting too deep" instead); targets and reasons go into the
shared `BashAnalysis` (targets deduplicated in first-seen order, reasons as
`bash_lexer.add_reason` keeps them). `change_dir` is `cd`/`pushd`/`popd`; scoping the
directory to subshells, pipeline elements and `&` is the walk's job (`child` and `load`).
Hot path: imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word, add_reason
from agent_hooks.bash_options import parse_options
from agent_hooks.bash_paths import BashTarget, enter_dir, resolve

MAX_DEPTH = 8


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


class ShellState:
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

    def child(self, depth: int = 1) -> ShellState:
        """A copy `depth` levels deeper (0: a saved state, see `load`)."""
        c = ShellState(self.out, self.seen, self.home, self.depth + depth, self.cwd, self.why)
        c.old, c.dirs = self.old, self.dirs
        return c

    def load(self, saved: ShellState) -> None:
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
        t, reason = resolve(w, cwd, why, self.home, spec)
        if reason:
            self.note(reason)
        elif t is not None and (t.path, t.glob) not in self.seen:
            self.seen.add((t.path, t.glob))
            self.out.targets.append(t)


def deeper(ctx: ShellState) -> ShellState | None:
    """A child context one level deeper, or None (with a reason) past MAX_DEPTH."""
    if ctx.depth < MAX_DEPTH:
        return ctx.child()
    ctx.note("nesting too deep")
    return None


def change_dir(name: str, args: list[Word], ctx: ShellState) -> None:
    here = (ctx.cwd, ctx.why)
    if name == "popd":
        new = ctx.dirs[-1] if ctx.dirs else (None, "popd")
        ctx.dirs = ctx.dirs[:-1]
    else:
        pos = parse_options(args)[0]
        if not pos:
            new = (ctx.home, "cd ~") if name == "cd" else (None, "pushd")
        elif pos[0].lit == "-" and pos[0].dyn is None:
            new = ctx.old
        elif name == "pushd" and pos[0].lit[:1] == "+":
            new = (None, "pushd " + pos[0].lit)
        else:
            new = enter_dir(pos[0], here, ctx.home)
        if name == "pushd":
            ctx.dirs = (*ctx.dirs[-63:], here)
    ctx.old = here
    ctx.cwd, ctx.why = new
