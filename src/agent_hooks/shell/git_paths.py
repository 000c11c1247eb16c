"""What git selects where its words alone do not say: pathspec magic and wildcards,
pathspec files, and the plumbing that rewrites the work tree or removes one.

Loaded by `commands.git` only for a pathspec that is magic (`:/`, `:(top)`, `:!x`,
`:^x`, `:(exclude)`, `:(glob)`, `:(icase)`, `:(literal)`, `:(attr:…)`, combined as
`:(top,glob)…`), holds a wildcard or a backslash, or comes from `--pathspec-from-file`,
or is read case-insensitively (`git --icase-pathspecs`, `GIT_ICASE_PATHSPECS`); and for
`read-tree`, `checkout-index`, `merge-file`, `submodule` and `worktree remove|prune`.

Pathspecs (checked against git 2.39: tests/unit/shell/test_git_paths.py). A pathspec is
read as a *superset* of what git selects, never less:

* Relative to the directory git runs in, or with `top` (`:/`, `:(top)`) to the top of
  the work tree (`--work-tree`, else the nearest directory above holding `.git`; none,
  or `--git-dir` without `--work-tree`: the top cannot be known). `:` alone is that
  directory, `:/` the whole work tree.
* Without `glob` magic git's `*` (and `?`, `[…]`) match across `/`: `*.py` selects
  `src/a/b.py`. A pathspec whose part after its literal directories holds only `*` is
  read as those directories, then `**/*` and what follows its last `*` (`*.py` ->
  `**/*.py`; ending in `*`: the directories as a whole); one holding `?`, `[` or a
  backslash, as its literal directories as a whole. With `glob` magic the wildcards
  are the reservation patterns' own (`*` within a segment, `**` across them; a
  backslash quotes the next character), and a bracket class makes it its literal
  directories as a whole. `literal` magic: the text is the path. `icase`: every ASCII
  letter of the pathspec's own part matches either case (the directory it is relative
  to does not). `attr:` only narrows what is selected: ignored.
  `--literal-pathspecs`, `--glob-pathspecs` and `--noglob-pathspecs` only narrow it
  too and are not read.
* Exclusions (`:!x`, `:^x`, `:(exclude)x`) are left alone only when literal (no
  wildcard, no `icase`): `BashTarget.but`; any other is not carved out. Only
  exclusions: git selects everything but them, in the whole work tree (`restore`,
  `checkout`, `stash push`) or the directory it runs in (`rm`).
* Where the selection cannot be known the command counts as rewriting its work tree
  (`ShellState.tree`): magic git does not know (it fails), a `--pathspec-from-file`
  that cannot be read before the command runs (missing, not a regular file, larger
  than MAX_FILE bytes or MAX_ENTRIES entries, badly quoted, written earlier in the same
  command, a variable) or `-` (stdin) that is not a here-document or here-string, a
  pathspec the shell fills in (a variable, a command substitution) or xargs reads from
  its input, and a `top` pathspec whose work tree cannot be found.
* A pathspec file holds one pathspec a line (a trailing CR dropped, a line in double
  quotes C-unquoted), or with `--pathspec-file-nul` one per NUL-terminated entry;
  without it a NUL also ends an entry (git stops reading the line there). Relative
  entries and a relative file name are relative to the directory git runs in.

Plumbing (git 2.39):

* `read-tree -u` with `-m` or `--reset` (not `-n`) rewrites the work tree (`--reset`
  throws local changes away); `-u --prefix=D/` and `read-tree` without `-u` write no
  existing file.
* `checkout-index -f` writes the paths it names (files, not pathspecs, relative to
  the directory git runs in, or read from stdin with `--stdin`, `-z`), or with
  `-a`/`--all` the whole work tree; with `--prefix=P` it writes below `P` (relative
  to the top) instead; `--temp` writes temporary files only. Without `-f` git leaves
  every existing file alone (it only creates missing ones).
* `merge-file` writes its first file (through a symlink), unless `-p`/`--stdout`.
* `submodule update --force` and `submodule deinit --force` write the submodules they
  name (pathspecs), or every submodule `.gitmodules` lists (`deinit --all`, `update`
  without paths); `submodule foreach [--recursive] CMD` runs CMD in each submodule
  listed (nested ones too with `--recursive`, at most MAX_SUBMODULES), read as any
  command there. Where the submodules cannot be read, the work tree counts as
  rewritten.
* `worktree remove --force TREE` deletes a linked work tree with its uncommitted work
  and `worktree prune` (not `-n`) the bookkeeping of every one whose directory is
  gone: `ShellState.worktree`; the gate finds which tree (git matches TREE as a path
  or as the unique end of a work tree's path). Without `--force` git refuses a tree
  holding changes.

Hot path: loaded only for the commands above; imports nothing but agent_hooks' shell
modules (`posix` to read git's own files and the pathspec file).
"""

from __future__ import annotations

import posix

from agent_hooks.shell.lexer import Word, escape
from agent_hooks.shell.plain import PATH_MAX, norm
from agent_hooks.shell.words import (
    ENTRY,
    FOLLOW,
    INPUT,
    ShellState,
    deeper,
    expanded,
    filled_option,
    has_option,
    option_value,
    parse_options,
    read_stdin,
    to_glob,
    unescape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    Where = tuple[str | None, str]

MAX_FILE = 1 << 20  # bytes of a pathspec file (or of .gitmodules) read at most
MAX_ENTRIES = 256  # pathspecs read from a file at most
MAX_SUBMODULES = 64  # submodules `foreach` is read in at most
MAX_NESTING = 4  # submodules in submodules `foreach --recursive` follows

TOP, EXCLUDE, LITERAL, GLOB, ICASE = "top", "exclude", "literal", "glob", "icase"
_LONG_MAGIC = frozenset((TOP, EXCLUDE, LITERAL, GLOB, ICASE))
# Characters git takes for short magic after a leading ":" (its ctype's pathspec
# magic class): "/" is top, "!" (and "^") exclude, any other of them is magic git
# does not implement (it fails); every other character starts the path.
_SHORT_MAGIC = frozenset("!\"#%&',-/:;<=>@_`~")
_WILD = "*?[\\"
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def parse(text: str) -> tuple[frozenset[str], str] | None:
    """A pathspec as git 2.39 reads it: (its magic, the path part), or None for
    magic git does not know (`:(bogus)x`, `:(prefix:1)x`, `:#x`, an unclosed `:(`)."""
    if not text.startswith(":"):
        return frozenset(), text
    if text.startswith(":("):
        close = text.find(")")
        if close < 0:
            return None
        magic = set()
        for word in text[2:close].split(","):
            if word in _LONG_MAGIC:
                magic.add(word)
            elif word.startswith("attr:") and len(word) > 5:
                continue  # selects only files with the attribute: fewer, never more
            elif word:
                return None
        if LITERAL in magic and GLOB in magic:
            return None  # git: incompatible
        return frozenset(magic), text[close + 1 :]
    magic, at = set(), 1
    while at < len(text) and text[at] != ":":
        ch = text[at]
        if ch in "!^":
            magic.add(EXCLUDE)
        elif ch == "/":
            magic.add(TOP)
        elif ch in _SHORT_MAGIC:
            return None
        else:
            break
        at += 1
    return frozenset(magic), text[at + (at < len(text) and text[at] == ":") :]


def selection(start: str, body: str, magic: frozenset[str], icase: bool) -> tuple[str, bool]:
    """(path, glob): what the path part `body` of a pathspec with `magic` selects,
    relative to the absolute directory `start` (an absolute `body` stands alone); a
    glob in the reservation patterns' syntax, or a literal path (the file or
    directory and everything below it). `icase`: case folded (git --icase-pathspecs)."""
    icase = icase or ICASE in magic
    anchor = "" if body.startswith("/") else start
    fixed, rest = body, ""
    if LITERAL not in magic:
        segs = body.split("/")
        k = next((i for i, seg in enumerate(segs) if _wild(seg)), len(segs))
        fixed, rest = "/".join(segs[:k]), _rest_glob("/".join(segs[k:]), GLOB in magic)
    if not icase and not rest:
        return norm(anchor + "/" + fixed), False
    own = _folded(fixed) if icase else to_glob(escape(fixed))
    if icase:
        rest = _folded(rest)
    return norm(to_glob(escape(anchor)) + "/" + own + "/" + rest), True  # norm drops a last "/"


def _rest_glob(rest: str, glob_magic: bool) -> str:
    """The part of a pathspec from its first segment holding a wildcard on, as a
    reservation glob at least as wide as git's match of it ("" for everything below
    the literal directories before it)."""
    if not rest:
        return ""
    if glob_magic:
        if "[" in rest:
            return ""
        out, i, n = [], 0, len(rest)
        while i < n:
            c = rest[i]
            if c == "\\":
                if i + 1 == n:
                    return ""
                c = rest[i + 1]
                i += 1
                c = "[" + c + "]" if c in "*?[]" else c
            out.append(c)
            i += 1
        return "".join(out)
    if "?" in rest or "[" in rest or "\\" in rest:
        return ""
    suffix = rest[rest.rfind("*") + 1 :]
    if not suffix:
        return ""
    return "**" + suffix if suffix.startswith("/") else "**/*" + suffix


def _wild(text: str) -> bool:
    """Does git match the text as a pattern (not only as the path it spells)?"""
    return any(c in text for c in _WILD)


def _folded(text: str) -> str:
    """`text` (glob syntax: no letter inside a bracket class) with each ASCII letter
    matching either case; a plain segment's other characters kept literal."""
    out = []
    for c in text:
        if c in _LETTERS:
            out.append("[" + c.lower() + c.upper() + "]")
        else:
            out.append(c)
    return "".join(out)


def select(
    ctx: ShellState,
    words: list[Word],
    from_file: Word | None,
    nul: bool,
    where: Where,
    top: tuple[str | None, bool],
    implicit_cwd: bool,
    icase: bool,
    what: str,
) -> None:
    """Record what the pathspecs `words` (and those of `from_file`) select as targets
    of `ctx`, each a directory entry when it names one (git replaces a symlink in the
    work tree, never follows it). `where`: the directory git runs in; `top`: (the top
    of its work tree, whether that is known when None: no work tree); `implicit_cwd`:
    exclusions alone select the directory git runs in (`rm`), else the work tree;
    `what`: the command, as a reason names it ("git restore")."""
    texts: list[str] = []
    for w in words:
        esc, _ = expanded(w, ctx.home, ctx.shell_dir())
        if esc is None:  # a variable, a substitution, xargs' input: any path at all
            ctx.tree(where, f"{what} {w.dyn if w.dyn != INPUT else w.lit or '{}'}")
            continue
        text = unescape(esc)
        if text:
            texts.append(text)
    if from_file is not None:
        listed = _listed(ctx, from_file, nul, where)
        if listed is None:
            return ctx.tree(where, f"{what} --pathspec-from-file={from_file.lit}")
        texts += listed
    found_top: list[str | None] = []  # looked for once, when a pathspec needs it

    def top_dir() -> str | None:
        if not found_top:
            found_top.append(_top(top, where))
        return found_top[0]

    positives: list[tuple[str, bool, str]] = []
    excludes: list[tuple[str, bool]] = []
    for text in texts:
        spec = parse(text)
        if spec is None:
            ctx.tree(where, f"{what} {text}")
            continue
        magic, body = spec
        start = top_dir() if TOP in magic else where[0]
        if start is None:
            if TOP not in magic:
                ctx.note(f"relative target {text} after {where[1]}")
            else:
                ctx.tree(where, f"{what} {text}")
            continue
        path, glob = selection(start, body, magic, icase)
        if len(path) > PATH_MAX:
            ctx.give_up("path too long")
        elif EXCLUDE in magic:  # carved out only when exactly what git leaves alone
            excludes.append((path, glob or (LITERAL not in magic and _wild(body))))
        elif LITERAL in magic or not _wild(body):
            positives.append((path, glob, body))
        else:  # the directories before a wildcard, as a whole: no entry of its own
            positives.append((path, glob, "."))
    if excludes and not positives:
        start = where[0] if implicit_cwd else top_dir()
        if start is None:
            return ctx.tree(where, f"{what} {texts[0]}")
        positives.append((start, False, "."))
    but = tuple(path for path, wide in excludes if not wide)
    for path, glob, body in positives:
        ctx.add_path(path, glob, ENTRY, body, but, by_git=True)


def _listed(ctx: ShellState, named: Word, nul: bool, where: Where) -> list[str] | None:
    """The pathspecs a `--pathspec-from-file` names, or None when they cannot be
    known before the command runs."""
    if named.lit == "-" and named.dyn is None:
        text = read_stdin(ctx.stdin)
    else:
        t = ctx.locate(named, where)
        if t is None or t.glob or _written_before(ctx, t.path):
            return None
        text = read_small(t.path)
    if text is None:
        return None
    entries: list[str] = []
    for line in text.split("\0") if nul else text.replace("\0", "\n").split("\n"):
        if not nul:
            line = line.removesuffix("\r")
            if line.startswith('"'):
                unquoted = c_unquote(line)
                if unquoted is None:
                    return None
                line = unquoted
        if line:
            entries.append(line)
    return entries if len(entries) <= MAX_ENTRIES else None


def _written_before(ctx: ShellState, path: str) -> bool:
    """Does the command write `path` (or a directory above it) before this point?"""
    return any(
        not t.glob and (t.path == path or path.startswith(t.path.rstrip("/") + "/"))
        for t in ctx.out.targets
    )


def read_small(path: str) -> str | None:
    """A regular file's text (bytes that are no UTF-8 kept as surrogates), at most
    MAX_FILE bytes; None when it cannot be read, is no regular file (a FIFO would
    block) or is larger."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        st = posix.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000 or st.st_size > MAX_FILE:
            return None
        chunks, size = [], 0
        while size <= MAX_FILE:
            chunk = posix.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE:
            return None
        return b"".join(chunks).decode("utf-8", "surrogateescape")
    except OSError:
        return None
    finally:
        posix.close(fd)


_C_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34}


def c_unquote(line: str) -> str | None:
    """A line git wrote in double quotes (`"sub/\\303\\251.py"`), unquoted as git's
    unquote_c_style does; None when it is badly quoted (git fails)."""
    raw = line.encode("utf-8", "surrogateescape")
    out = bytearray()
    i, n = 1, len(raw)
    while i < n:
        c = raw[i]
        if c == 34:  # the closing quote: nothing may follow
            return out.decode("utf-8", "surrogateescape") if i == n - 1 else None
        if c != 92:
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            return None
        e = chr(raw[i + 1])
        if e in _C_ESCAPES:
            out.append(_C_ESCAPES[e])
            i += 2
        elif "0" <= e <= "3" and all(48 <= d <= 55 for d in raw[i + 2 : i + 4]):  # \ooo
            out.append(int(raw[i + 1 : i + 4].decode(), 8))
            i += 4
        else:
            return None
    return None


def _top(top: tuple[str | None, bool], where: Where) -> str | None:
    """The top of the work tree git runs in: as given (`top[1]`: `--work-tree`,
    or unknown under `--git-dir`), else found above the directory it runs in."""
    return top[0] if top[1] or where[0] is None else work_tree_top(where[0])


def work_tree_top(directory: str) -> str | None:
    """The nearest directory at or above `directory` (absolute, normal) holding `.git`
    (a directory, or a worktree's or submodule's file), as written; None when none."""
    here = directory
    while True:
        try:
            posix.lstat(here.rstrip("/") + "/.git")
            return here
        except (OSError, ValueError):
            pass
        if here == "/":
            return None
        here = here.rpartition("/")[0] or "/"


def submodules(top: str) -> list[str] | None:
    """The submodule paths `.gitmodules` at the top of a work tree lists (`path =`,
    relative, in file order, none twice); None when it cannot be read ([] when there
    is none)."""
    try:
        posix.lstat(top.rstrip("/") + "/.gitmodules")
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None
    text = read_small(top.rstrip("/") + "/.gitmodules")
    if text is None:
        return None
    found: list[str] = []
    for line in text.split("\n"):
        key, eq, value = line.strip().partition("=")
        if eq and key.strip() == "path":
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] == '"':
                value = value[1:-1]
            path = norm("/" + value)[1:]
            if path and path not in found:
                found.append(path)
    return found


# ---------------------------------------------------------------- plumbing


def plumbing(
    sub: str,
    args: list[Word],
    where: Where,
    top: tuple[str | None, bool],
    icase: bool,
    ctx: ShellState,
) -> None:
    """What `git read-tree`, `checkout-index`, `merge-file`, `submodule` and `worktree
    remove|prune` write (see the module docstring); `top` and `icase` as for `select`."""
    if sub == "read-tree":
        _pos, opts = parse_options(args, "", ("--exclude-per-directory", "--index-output"))
        if (
            has_option(opts, "-u")
            and has_option(opts, "-m", "--reset")
            and not has_option(opts, "-n", "--dry-run", "--prefix")
        ):
            how = "--reset" if has_option(opts, "--reset") else "-m"
            ctx.tree(where, f"git read-tree -u {how}")
    elif sub == "checkout-index":
        _checkout_index(args, where, top, ctx)
    elif sub == "merge-file":
        pos, opts = parse_options(args, "L", ("--marker-size",))
        if pos and not has_option(opts, "-p", "--stdout", "--object-id"):
            ctx.add(pos[0], where)  # it writes through a symlink (FOLLOW)
    elif sub == "submodule":
        _submodule(args, where, top, icase, ctx)
    elif sub == "worktree":
        pos, opts = parse_options(args, "", ("--expire",))
        action = pos[0].lit  # `commands.git` hands over remove and prune only
        if action == "remove" and has_option(opts, "-f", "--force"):
            named = pos[1] if len(pos) > 1 else None
            if named is None:
                return  # git: usage
            t = ctx.locate(named, where)
            ctx.worktree(
                "remove",
                where,
                f"git worktree remove --force {named.lit}",
                named.lit if named.dyn is None else None,
                t.path if t is not None and not t.glob else None,
            )
        elif action == "prune" and not has_option(opts, "-n", "--dry-run"):
            ctx.worktree("prune", where, "git worktree prune")


def _checkout_index(
    args: list[Word], where: Where, top: tuple[str | None, bool], ctx: ShellState
) -> None:
    pos, opts = parse_options(args, "", ("--prefix", "--stage"))
    if not has_option(opts, "-f", "--force") or has_option(opts, "--temp"):
        return  # git leaves every existing file alone (or writes temporary files)
    filled, pos = filled_option(pos, "--prefix")
    prefix = filled or option_value(opts, "--prefix")
    if prefix is not None:  # every file it writes lies below the prefix, from the top
        esc, _ = expanded(prefix, ctx.home, ctx.shell_dir())
        text = unescape(esc) if esc is not None else ""
        base = "" if text.startswith("/") else _top(top, where)
        if esc is None or base is None:
            return ctx.tree(where, f"git checkout-index --prefix={prefix.lit}")
        path = norm(base + "/" + text)
        if text.endswith("/") or not text:
            return ctx.add_path(path, False, FOLLOW, ".", by_git=True)
        return ctx.add_path(to_glob(escape(path)) + "*", True, FOLLOW, text, by_git=True)
    if has_option(opts, "-a", "--all"):
        return ctx.tree(where, "git checkout-index -f -a")
    for w in pos:  # files, not pathspecs: git replaces each, never follows a symlink
        ctx.add(w, where, how=ENTRY, by_git=True)
    if has_option(opts, "--stdin"):
        listed = read_stdin(ctx.stdin)
        if listed is None:
            return ctx.tree(where, "git checkout-index -f --stdin")
        # with -z paths end at NULs, which no here-document holds: it is one path
        lines = [listed] if has_option(opts, "-z") else listed.split("\n")
        lines = [line for line in lines if line]
        for line in lines[:MAX_ENTRIES]:
            ctx.add(Word(line, escape(line)), where, how=ENTRY, by_git=True)
        if len(lines) > MAX_ENTRIES:
            ctx.tree(where, "git checkout-index -f --stdin")


def _submodule(
    args: list[Word], where: Where, top: tuple[str | None, bool], icase: bool, ctx: ShellState
) -> None:
    k = 0
    while k < len(args) and args[k].lit in ("-q", "--quiet", "--cached"):
        k += 1
    action = args[k].lit if k < len(args) and args[k].dyn is None else ""
    rest = args[k + 1 :]
    base = _top(top, where)
    if action == "foreach":
        return _foreach(rest, where, base, ctx)
    if action not in ("update", "deinit"):
        return
    pos, opts = parse_options(rest, "j", ("--reference", "--depth", "--jobs", "--filter"))
    if not has_option(opts, "-f", "--force"):
        return  # git refuses to throw a submodule's local changes away
    what = f"git submodule {action} --force"
    if pos:
        return select(ctx, pos, None, False, where, top, False, icase, what)
    if action == "deinit" and not has_option(opts, "--all"):
        return  # git: usage
    listed = submodules(base) if base is not None else None
    if base is None or listed is None:
        return ctx.tree(where, what)
    for rel in listed:
        ctx.add_path(norm(base + "/" + rel), False, FOLLOW, rel, by_git=True)


def _foreach(args: list[Word], where: Where, base: str | None, ctx: ShellState) -> None:
    """`submodule foreach [--recursive] CMD`: CMD read in each submodule's directory."""
    k, recursive = 0, False
    while k < len(args) and args[k].lit in ("--recursive", "-q", "--quiet"):
        recursive |= args[k].lit == "--recursive"
        k += 1
    words = args[k:]
    if not words:
        return
    if len(words) == 1:  # one word: run by the shell
        text = words[0].lit
    else:  # several: run as they are (each word kept one word)
        text = " ".join(w.lit if w.dyn is not None else _quoted(w.lit) for w in words)
    dirs = _submodule_dirs(base, recursive) if base is not None else None
    if dirs is None:
        return ctx.tree(where, "git submodule foreach")
    for directory in dirs:
        sub = deeper(ctx)
        if sub is None:
            return
        sub.cwd, sub.why = directory, ""
        if len(words) == 1 and words[0].dyn is not None:
            ctx.note("git submodule foreach " + words[0].dyn)
        sub.run_text(text, sub)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _submodule_dirs(top: str, recursive: bool) -> list[str] | None:
    """The directories of the submodules of the work tree `top` (and of theirs,
    `recursive`, at most MAX_NESTING deep), at most MAX_SUBMODULES; None when a
    `.gitmodules` cannot be read or there are more."""
    found: list[str] = []
    todo = [(top, 0)]
    while todo:
        here, depth = todo.pop(0)
        listed = submodules(here)
        if listed is None:
            return None
        for rel in listed:
            path = norm(here + "/" + rel)
            found.append(path)
            if recursive and depth + 1 < MAX_NESTING:
                todo.append((path, depth + 1))
        if len(found) > MAX_SUBMODULES:
            return None
    return found
