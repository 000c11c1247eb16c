"""What the words of a command mean to `writes`: options, paths, and where the shell is.

Three parts, one module (each module on the hook path costs ~0.2 ms to import; ADR-0005):

Options. GNU-style command-line options and shell assignments, read from lexed words.

`parse_options` splits a command's words into operands and (option, value) pairs the way
GNU getopt_long does for the options it is told about; options it is not told about are
taken as flags, abbreviated long options are not recognised. A word holding a variable or
substitution is always an operand. Hot path: imports nothing but `lexer`.

Paths. From a shell word to the path it names: resolution, normalisation, globs and braces.

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
words when the current directory is unknown. The one variable known is the current
directory (`$PWD`, `${PWD}`, `$(pwd)`, `` `pwd` ``: `Word.here`): it is the shell's
directory where the word is read (after the `cd`s before it), taken literally; it
stays unknown when that directory is, when the command may assign `PWD` itself
(`ShellState.pwd_known`), and unquoted when the directory holds a blank (the shell
would split the word). Hot path: nothing is imported at run
time but `lexer` (not even `os`: normalisation is done here).

Shell state. Where the shell is while `writes` reads a command, and what it has found so far.

`ShellState` holds the current directory (None when unknown, with the reason it got lost;
also what `$PWD` is, unless the command may assign `PWD`: `pwd_known`), OLDPWD, the pushd stack (at most 64 entries) and the recursion depth (never past
MAX_DEPTH: `deeper` says "nesting too deep" instead); targets and reasons go into the
shared `BashAnalysis` (targets deduplicated in first-seen order, reasons as
`lexer.add_reason` keeps them). Where a cap makes it skip part of the command
(depth, a 65th pushd, a path past PATH_MAX, too many symlinks) it gives up (`give_up`,
`BashAnalysis.gave_up`). Symlinks `ln -s` makes are kept for the whole command
(`links`), and later targets through them are recorded where they lead too. `change_dir` is `cd`/`pushd`/`popd`; scoping the
directory to subshells, pipeline elements and `&` is the walk's job (`child` and `load`).
`stdin` is what the simple command being read gets on its standard input (its here-doc
or here-string text, `UNKNOWN_INPUT` for a pipe or a file, None when it has none of its
own), for the commands that read their instructions there (`apply_patch`).
Hot path: imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.shell.lexer import Redir, Word, add_reason, escape
from agent_hooks.shell.plain import DEVICES, PATH_MAX, norm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")


def parse_options(
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


def filled_option(operands: list[Word], name: str) -> tuple[Word | None, list[Word]]:
    """`--name=VALUE` whose value the shell fills in (`--prefix="$P"`): `parse_options`
    takes a word holding a variable for an operand, the command for its option. Its
    value (None when none is there), and the operands without it."""
    found, rest = None, []
    for w in operands:
        if w.dyn is not None and w.lit.startswith(name + "="):
            found = w.tail(len(name) + 1, tilde=False)
        else:
            rest.append(w)
    return found, rest


def has_option(opts: list[tuple[str, Word | None]], *names: str) -> bool:
    return any(o in names for o, _ in opts)


def option_value(opts: list[tuple[str, Word | None]], *names: str) -> Word | None:
    """The value of the last of `names` given with one."""
    found = None
    for o, v in opts:
        if o in names and v is not None:
            found = v
    return found


def is_assignment(w: Word) -> bool:
    name, eq, _ = w.lit.partition("=")
    name = name.removesuffix("+").partition("[")[0]
    return bool(eq and name and not name[0].isdigit() and all(c in _IDENT for c in name))


PATH_TOO_LONG = "path too long"


class BashTarget:
    """A path the command writes: absolute and normalised, never relative.
    `glob`: the word had unquoted `*`, `?` or `[` (or is a git pathspec selecting
    more than one literal path: `git_paths`), so `path` is a pattern in glob syntax.
    `entry`: the command acts on
    the name `path` in its directory (removes, renames or replaces it: `rm`, the
    sources of `mv`, the name `ln` makes), not on what a symlink there points
    to: it is located by its parent directory, resolved, plus its name. Never
    set on a glob (a glob is not resolved past its first wildcard anyway) nor on
    a word ending in `/`, `.` or `..` (those resolve the last component).
    `but`: absolute literal paths (each with everything below it) the command
    leaves alone inside `path` (a git pathspec's exclusions: `git restore ':!f'`);
    empty for every other command. `by_git`: git writes it as a path of its work tree
    (checkout, restore, rm, stash, checkout-index, submodule): never inside a `.git`
    directory, even when `path` holds one."""

    __slots__ = ("but", "by_git", "entry", "glob", "path")

    def __init__(
        self,
        path: str,
        glob: bool = False,
        entry: bool = False,
        but: tuple[str, ...] = (),
        by_git: bool = False,
    ) -> None:
        self.path = path
        self.glob = glob
        self.entry = entry
        self.but = but
        self.by_git = by_git

    def _key(self) -> tuple[str, bool, bool, tuple[str, ...], bool]:
        return (self.path, self.glob, self.entry, self.but, self.by_git)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BashTarget) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        more = f", but={self.but!r}" if self.but else ""
        more += ", by_git=True" if self.by_git else ""
        return f"BashTarget({self.path!r}, glob={self.glob}, entry={self.entry}{more})"


# How a command writes a path it names (`ShellState.add`): through it (a symlink
# there is followed: `>`, tee, touch), on the directory entry itself (rm, the
# sources of mv), or possibly both (the destination of cp/mv/ln/install, sed -i:
# a symlink to a directory is entered, another name is replaced).
FOLLOW, ENTRY, BOTH = 1, 2, 3
MAX_LINKS = 64  # symlinks made earlier in one command that later paths go through
MAX_TREES = 16  # git commands rewriting a work tree, per command line


def resolve(
    w: Word,
    cwd: str | None,
    why: str,
    home: str | None,
    shell_dir: str | None = None,
) -> tuple[BashTarget | None, str | None]:
    """(target, None), (None, reason) or (None, None) for words naming nothing
    worth reporting (empty, /dev/null, ...). Relative words are resolved against
    `cwd`; `$PWD` and its kin are `shell_dir`, the shell's own directory (None:
    unknown)."""
    esc, reason = expanded(w, home, shell_dir)
    if esc is None:
        return None, reason
    glob = _has_glob(esc)
    text = to_glob(esc) if glob else unescape(esc)
    if not text:
        return None, None
    if not text.startswith("/"):
        if cwd is None:
            return None, f"relative target {text} after {why}"
        text = (to_glob(escape(cwd)) if glob else cwd) + "/" + text
    path = norm(text)
    if len(path) > PATH_MAX:  # also keeps a long `cd a; cd a; ...` linear
        return None, PATH_TOO_LONG
    if path in DEVICES or path.startswith("/dev/fd/"):
        return None, None
    return BashTarget(path, glob), None


def expanded(w: Word, home: str | None, shell_dir: str | None) -> tuple[str | None, str | None]:
    """(the esc form of `w` with `~` and the shell's directory put in, None) or
    (None, why it cannot be known: a variable, a command substitution, `~user`)."""
    esc = w.esc if w.dyn is None else _at_dir(w, shell_dir)
    if esc is None:
        assert w.dyn is not None
        sub = w.dyn[0] == "`" or w.dyn[1:2] == "("
        return None, ("command substitution" if sub else "variable") + " in target " + w.dyn
    if esc.startswith("~"):
        user, _, rest = esc[1:].partition("/")
        if user or home is None:
            return None, "tilde in target " + w.lit
        esc = escape(home) + "/" + rest
    return esc, None


_BLANKS = (" ", "\t", "\n")


def _at_dir(w: Word, shell_dir: str | None) -> str | None:
    """The esc form of a word whose only unknown parts are the shell's directory,
    with `shell_dir` put there; None when it cannot be known."""
    if w.here is None or shell_dir is None:
        return None
    if any(not quoted for _, quoted in w.here) and any(b in shell_dir for b in _BLANKS):
        return None  # unquoted: the shell splits it into several words
    esc, text = w.esc, escape(shell_dir)
    for at, _ in reversed(w.here):
        esc = esc[:at] + text + esc[at:]
    return esc


def _names_an_entry(lit: str) -> bool:
    """Does the word name a directory entry (not `dir/`, `.`, `..`, `/`)?"""
    last = lit.rpartition("/")[2]
    return last not in ("", ".", "..")


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


def to_glob(esc: str) -> str:
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


MAX_BRACE = 64


def expand_braces(esc: str, budget: list[int], depth: int = 0) -> list[str]:
    """Bash brace expansion (`a{b,c}`, `{1..3}`) of an esc form: at most
    MAX_BRACE + 1 results (more than MAX_BRACE: the rest were cut); `budget`
    bounds the work so that huge or nested words stay linear (past it, or 16
    levels deep, the rest of the word is left unexpanded and `budget[0]` ends
    at or below 0)."""
    i, n = 0, len(esc)
    budget[0] -= n
    if depth >= 16:
        budget[0] = min(budget[0], 0)
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
                if len(out) > MAX_BRACE:
                    break
                out.extend(expand_braces(esc[:i] + alt + esc[j + 1 :], budget, depth + 1))
            return out[: MAX_BRACE + 1]
        i += 1
    return [esc]


def _sequence(body: str) -> list[str]:
    """`1..5`, `a..e`, `0..10..2` -> the items (at most MAX_BRACE + 1); else []."""
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
    return [str(k) if nums[0] else chr(k) for k in items[: MAX_BRACE + 1]]


def enter_dir(
    w: Word, where: tuple[str | None, str], home: str | None, shell_dir: str | None
) -> tuple[str | None, str]:
    """The directory `cd W` enters from `where`: (path, "") or (None, why);
    `shell_dir`: what `$PWD` is (`ShellState.shell_dir`)."""
    t, reason = resolve(w, where[0], where[1], home, shell_dir)
    if t is not None and not t.glob:
        return t.path, ""
    if t is None and reason is None and not w.lit:
        return where  # `cd ""` stays
    if reason == PATH_TOO_LONG:
        return None, PATH_TOO_LONG
    return None, where[1] if where[0] is None else "cd " + w.lit


MAX_DEPTH = 8
UNKNOWN_INPUT = "\x00unknown input"  # `ShellState.stdin` when it cannot be read
# A simple command's standard input: None (its own is not redirected), UNKNOWN_INPUT (a
# pipe or a file), or the here-doc / here-string redirection and its word.
Stdin = tuple[Redir, Word] | str | None
INPUT = "input"  # the `dyn` of words xargs and find -exec fill in from their input


class BashAnalysis:
    """`targets`: every path visibly written (deduplicated, first-seen order).
    `opaque`: short reasons for what cannot be seen (at most 32, deduplicated);
    empty means the whole command was understood. `gave_up`: None, or why the
    analysis stopped reading part of the command (nesting deeper than MAX_DEPTH,
    too many wrappers, a brace expansion, pushd stack or symlinks past a cap, a path
    past PATH_MAX, an internal error): unlike the opaque things the parser knows
    it cannot see into (scripts, interpreters), what it skipped may be anything,
    so the command may write anywhere. Its reason is in `opaque` too (when there
    is room)."""

    __slots__ = ("fed", "gave_up", "opaque", "targets", "trees", "worktrees")

    def __init__(self, targets: list[BashTarget], opaque: list[str]) -> None:
        self.targets = targets
        self.opaque = opaque
        self.gave_up: str | None = None
        self.fed = False  # a target came from input words (xargs, find -exec): `INPUT`
        # git commands that rewrite a whole work tree: (the directory git runs in, or
        # None when unknown; the command, e.g. "git stash")
        self.trees: list[tuple[str | None, str]] = []
        # git commands that delete or unregister a linked work tree: ("remove" (`git
        # worktree remove --force`) or "prune"; the directory git runs in, or None; the
        # command; the tree as named and the path it names from there, None when unknown)
        self.worktrees: list[tuple[str, str | None, str, str | None, str | None]] = []

    def __repr__(self) -> str:
        return (
            f"BashAnalysis(targets={self.targets!r}, opaque={self.opaque!r}, "
            f"gave_up={self.gave_up!r})"
        )


class ShellState:
    """Where the shell is while reading: `cwd` (None when unknown, `why` says
    how it got lost), OLDPWD, the pushd stack, and the recursion depth; and,
    shared by the whole command (the file system outlives a subshell), the
    symlinks it made (`links`: link path -> the path it points to, None when
    unknown; at most MAX_LINKS), through which later paths are followed.
    `run_text` reads a nested command string (`bash -c`, `eval`) from a state:
    the walker's own entry point, handed in so the command handlers can re-enter
    it without importing it."""

    __slots__ = (
        "cwd",
        "depth",
        "dirs",
        "git_icase",
        "home",
        "links",
        "old",
        "out",
        "pwd_known",
        "run_text",
        "seen",
        "stdin",
        "why",
        "work",
    )

    def __init__(
        self,
        out: BashAnalysis,
        seen: set[tuple[str, bool, bool, tuple[str, ...], bool]],
        home: str | None,
        depth: int,
        cwd: str | None,
        why: str,
        run_text: Callable[[str, ShellState], None],
    ) -> None:
        self.out, self.seen, self.home, self.depth = out, seen, home, depth
        self.cwd, self.why, self.run_text = cwd, why, run_text
        self.old: tuple[str | None, str] = (None, "cd -")
        self.dirs: tuple[tuple[str | None, str], ...] = ()  # pushd stack, at most 64
        self.links: dict[str, str | None] = {}
        self.work = [1 << 20]  # link lookups left for this command: keeps it linear
        self.pwd_known = True  # `$PWD` is the current directory: the command never assigns it
        self.stdin: Stdin = None  # the simple command being read's (`read_stdin`)
        # git reads every pathspec case-insensitively: the command may set
        # GIT_ICASE_PATHSPECS (an assignment, `env`, `export`: any mention counts)
        self.git_icase = False

    def child(self, depth: int = 1) -> ShellState:
        """A copy `depth` levels deeper (0: a saved state, see `load`)."""
        c = ShellState(
            self.out, self.seen, self.home, self.depth + depth, self.cwd, self.why, self.run_text
        )
        c.old, c.dirs, c.links, c.work = self.old, self.dirs, self.links, self.work
        c.pwd_known, c.git_icase = self.pwd_known, self.git_icase
        return c

    def shell_dir(self) -> str | None:
        """What `$PWD`, `$(pwd)` are here: the current directory, None when unknown."""
        return self.cwd if self.pwd_known else None

    def load(self, saved: ShellState) -> None:
        self.cwd, self.why, self.old, self.dirs = saved.cwd, saved.why, saved.old, saved.dirs

    def note(self, reason: str) -> None:
        add_reason(self.out.opaque, reason)

    def tree(self, where: tuple[str | None, str], what: str) -> None:
        """A git command that may rewrite the whole work tree `where` runs in
        (`BashAnalysis.trees`); also an opaque reason."""
        add_reason(self.out.opaque, what)
        if len(self.out.trees) < MAX_TREES and (where[0], what) not in self.out.trees:
            self.out.trees.append((where[0], what))

    def worktree(
        self,
        kind: str,
        where: tuple[str | None, str],
        what: str,
        named: str | None = None,
        path: str | None = None,
    ) -> None:
        """A git command deleting or unregistering a linked work tree
        (`BashAnalysis.worktrees`); also an opaque reason."""
        add_reason(self.out.opaque, what)
        item = (kind, where[0], what, named, path)
        if len(self.out.worktrees) < MAX_TREES and item not in self.out.worktrees:
            self.out.worktrees.append(item)

    def give_up(self, reason: str) -> None:
        """Part of the command is left unread: see `BashAnalysis.gave_up`."""
        add_reason(self.out.opaque, reason)
        if self.out.gave_up is None:
            self.out.gave_up = reason

    def add(
        self,
        w: Word,
        where: tuple[str | None, str] | None = None,
        how: int = FOLLOW,
        by_git: bool = False,
    ) -> None:
        """Record `w` as a target, resolved against `where` (default: cwd);
        `how`: FOLLOW, ENTRY or BOTH (see there); `by_git`: see `BashTarget`. A
        path through a symlink made earlier in the command is recorded as written
        and as followed."""
        t = self.locate(w, where)
        if t is not None:
            self.add_path(t.path, t.glob, how, w.lit, (), by_git)

    def add_path(
        self,
        path: str,
        glob: bool,
        how: int,
        named: str,
        but: tuple[str, ...] = (),
        by_git: bool = False,
    ) -> None:
        """Record a located target (`path`, absolute and normalised, a glob when
        `glob`), named `named` in the command (its last component decides whether
        it names a directory entry), leaving alone the literal paths `but`."""
        if how & ENTRY and not glob and _names_an_entry(named):
            self._record(path, False, True, but, by_git)
            if how & FOLLOW:
                self._record(path, False, False, but, by_git)
        else:
            self._record(path, glob, False, but, by_git)

    def locate(self, w: Word, where: tuple[str | None, str] | None = None) -> BashTarget | None:
        """`w` resolved as a target (None, with a reason noted, when it cannot be)."""
        cwd, why = where or (self.cwd, self.why)
        self.out.fed |= w.dyn == INPUT
        t, reason = resolve(w, cwd, why, self.home, self.shell_dir())
        if reason == PATH_TOO_LONG or (reason and cwd is None and why == PATH_TOO_LONG):
            self.give_up(PATH_TOO_LONG)
        elif reason:
            self.note(reason)
        return t

    def _record(
        self, path: str, glob: bool, entry: bool, but: tuple[str, ...] = (), by_git: bool = False
    ) -> None:
        paths = [path]
        if self.links:
            followed = self._through_links(path, glob, entry)
            if followed is None:
                self.note("target through a symlink to an unknown place: " + path)
            else:
                paths += followed
        for p in paths:
            key = (p, glob, entry, but, by_git)
            if key not in self.seen:
                self.seen.add(key)
                self.out.targets.append(BashTarget(*key))

    def _through_links(self, path: str, glob: bool, entry: bool) -> list[str] | None:
        """Where else `path` may be, through the symlinks this command made (an
        entry's own name is not followed): every path reached by following any of
        them, as a link may or may not be where it was meant to be (`ln -s T D`
        makes D, or D/T when D is a directory already). None when one points to
        an unknown place. Bounded: past MAX_LINKS places, or past the command's
        budget of work (`work`), it gives up."""
        head, sep, name = path.rpartition("/") if entry else (path, "", "")
        places, todo = [head], [head]
        while todo:
            here = todo.pop()
            self.work[0] -= len(self.links)
            if self.work[0] < 0 or len(places) > MAX_LINKS:
                self.give_up("too many paths through symlinks")
                return []
            for link, to in self.links.items():
                key = to_glob(escape(link)) if glob else link
                if here == key or here.startswith(key + "/"):
                    if to is None:
                        return None
                    there = norm((to_glob(escape(to)) if glob else to) + "/" + here[len(key) :])
                    if there not in places:
                        places.append(there)
                        todo.append(there)
        return [norm(p + sep + name) for p in places[1:]]

    def link(self, at: str, to: Word) -> None:
        """Record a symlink this command makes at `at` (or where the symlinks it
        made earlier lead) with the content `to` (relative to the link's
        directory; None in `links` when unknown)."""
        for real in [at, *(self._through_links(at, False, True) or [])]:
            if len(self.links) >= MAX_LINKS:
                return self.give_up("too many symlinks")
            t, _ = resolve(to, real.rpartition("/")[0] or "/", "", self.home, self.shell_dir())
            self.links.setdefault(real, t.path if t is not None and not t.glob else None)


def read_stdin(stdin: Stdin) -> str | None:
    """The text a simple command reads on stdin, when it can be known: a here-string's
    word plus a newline, a here-doc's body (leading tabs gone for `<<-`; with an
    unquoted delimiter backslash-newline joined and `\\$`, `\\``, `\\\\` unescaped as
    bash does); None for a pipe, a file, no redirection, or text holding an expansion."""
    if not isinstance(stdin, tuple):
        return None
    r, word = stdin
    if r.op == "<<<":
        return word.lit + "\n" if word.dyn is None else None
    body = r.body
    if body is None:
        return None
    if r.op == "<<-":
        body = "\n".join(line.lstrip("\t") for line in body.split("\n"))
    if word.quoted or not ("\\" in body or "$" in body or "`" in body):
        return body
    out, i, n = [], 0, len(body)
    while i < n:
        found = [k for k in (body.find("\\", i), body.find("$", i), body.find("`", i)) if k >= 0]
        j = min(found) if found else n
        out.append(body[i:j])
        if j >= n:
            break
        if body[j] != "\\":
            return None  # an expansion: bash's text, not ours
        if j + 1 < n and body[j + 1] in "$`\\\n":
            out.append("" if body[j + 1] == "\n" else body[j + 1])
            i = j + 2
        else:
            out.append("\\")
            i = j + 1
    return "".join(out)


def deeper(ctx: ShellState) -> ShellState | None:
    """A child context one level deeper, or None (with a reason) past MAX_DEPTH."""
    if ctx.depth < MAX_DEPTH:
        return ctx.child()
    ctx.give_up("nesting too deep")
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
            new = enter_dir(pos[0], here, ctx.home, ctx.shell_dir())
        if name == "pushd":
            if len(ctx.dirs) >= 64:
                ctx.give_up("pushd stack too deep")
            ctx.dirs = (*ctx.dirs[-63:], here)
    ctx.old = here
    ctx.cwd, ctx.why = new
