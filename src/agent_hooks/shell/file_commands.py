"""What commands that name their files write: the per-command tables and handlers.

Seen: tee, cp, install, mv (sources too), rm, rmdir, unlink, shred, touch, mkdir,
truncate, ln (and the symlinks `ln -s` makes, which later paths of the same command
are followed through), dd of=, rsync/scp to a local destination, sed -i, perl -i,
gawk -i inplace, sort -o, curl -o, wget -O/-P, tar -c -f / tar -x -C, unzip -d,
chmod/chown/chgrp (their files), zip (the archive, `.zip` added as zip does; with -m
the sources), split/csplit (the output prefix, as a glob `PREFIX*`), uniq's OUTPUT,
sqlite3's database file, ed/red/ex/vi/vim/nvim/view (the files they open; vim's
`-w`/`-W`, `-i` and `-V` files and `--startuptime` log), patch
(its FILE operand, `-o`/`-r` files; without FILE or -o, every file under the
directory it runs in, `-d DIR` or the current one: the files a patch names are
not known before it runs). Each path is written through a symlink, on the
directory entry itself, or both (`words.FOLLOW`, `ENTRY`, `BOTH`): rm, unlink,
rmdir and mv's sources act on the entry; the destination of cp/mv/ln/install/rsync,
sed -i, perl -i, gawk inplace, zip, vim and patch's FILE may be either.

Reported as opaque: perl -e and perl scripts, tar -x / unzip without a directory,
awk programs with an obvious `> "file"`, `| "cmd"` or `system(` (a guess; other awk
writes and sed's `w` command are not seen), awk -f, `split --filter`, `vim -S`/`-t`/`-q`,
`ed` with no file (its commands come from stdin). Not seen: what ed/ex/vim commands
(-c, +cmd, a script, stdin) or sqlite3 statements and dot-commands (.output,
ATTACH, .backup) write besides the file named; the `.orig` and `.rej` files patch
leaves beside a file it could not apply cleanly, and its `-B` backups; gawk's `-d`,
`-p`/`-o` output files, its in-place backups (`inplace::suffix`) and the awk code a
`-i LIB` loads; the backups `-b`/`--backup` make (`b~`, `--suffix`), and the symlinks
`cp -s` makes (only ln's are followed). cp/mv/... destinations are taken from their
static words.

Every handler has the signature `(name, args, state)`: `name` is the command's base
name, `args` its words after it; it only adds targets, symlinks and reasons to
`state` and never runs a nested command. `FILE_HANDLERS` maps names to handlers.
Hot path: imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.shell.lexer import Word, escape
from agent_hooks.shell.plain import norm
from agent_hooks.shell.words import (
    BOTH,
    ENTRY,
    FOLLOW,
    ShellState,
    enter_dir,
    has_option,
    is_assignment,
    option_value,
    parse_options,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# command -> (short options taking an argument, long ones, how it writes); every
# operand is a target
_OPERANDS = {
    "rm": ("", (), ENTRY),
    "rmdir": ("", (), ENTRY),
    "unlink": ("", (), ENTRY),
    "tee": ("", (), FOLLOW),
    "shred": ("ns", ("--iterations", "--size", "--random-source"), FOLLOW),
    "touch": ("drt", ("--date", "--reference"), FOLLOW),
    "mkdir": ("m", ("--mode",), FOLLOW),
    "truncate": ("sr", ("--size", "--reference"), FOLLOW),
}

_COPIES = {  # command -> its (short options with an argument, long ones)
    **dict.fromkeys(("cp", "mv", "ln"), ("tS", ("--target-directory", "--suffix"))),
    "install": ("tSmog", ("--target-directory", "--suffix", "--mode", "--owner", "--group")),
    "rsync": ("efBT", (
        "--exclude", "--include", "--filter", "--rsh", "--exclude-from", "--include-from",
        "--files-from", "--temp-dir", "--backup-dir", "--log-file", "--chmod", "--chown",
        "--partial-dir", "--compare-dest",
    )),
    "scp": ("cFiJlLoPS", ()),
}  # fmt: skip
_OUTPUTS = {  # command -> (short options with an argument, long ones, those naming outputs)
    "sort": ("kotST", ("--key", "--output", "--field-separator", "--buffer-size"),
             ("-o", "--output")),
    "curl": ("AbcCdDeEFHKmoPQrtTuUwxXyYz", (
        "--output", "--dump-header", "--cookie-jar", "--output-dir", "--header", "--data",
        "--request", "--user", "--user-agent", "--url", "--form", "--cookie", "--config",
        "--write-out", "--data-raw", "--data-binary", "--upload-file",
    ), ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--output-dir")),
    "wget": ("OPoaeitTwQlARDIXUB", (
        "--output-document", "--directory-prefix", "--output-file", "--append-output",
        "--input-file", "--header", "--user-agent", "--tries", "--timeout",
    ), ("-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a",
        "--append-output")),
    "uniq": ("fsw", ("--skip-fields", "--skip-chars", "--check-chars"), ()),
}  # fmt: skip


def _operands(name: str, args: list[Word], ctx: ShellState) -> None:
    short, long, how = _OPERANDS[name]
    pos, opts = parse_options(args, short, long)
    if name == "shred" and has_option(opts, "-u", "--remove"):
        how = BOTH  # overwritten through a symlink, then the name removed
    elif name == "touch" and has_option(opts, "-h", "--no-dereference"):
        how = ENTRY
    for w in pos:
        ctx.add(w, how=how)


def _outputs(name: str, args: list[Word], ctx: ShellState) -> None:
    short, long, outs = _OUTPUTS[name]
    pos, opts = parse_options(args, short, long)
    if name == "uniq" and len(pos) > 1 and pos[1].lit != "-":
        ctx.add(pos[1])  # uniq INPUT OUTPUT
    for o, v in opts:
        if o in outs and v is not None and v.lit != "-":
            ctx.add(v)


def _copy(name: str, args: list[Word], ctx: ShellState) -> None:
    """cp, mv, install, ln, rsync, scp: the destination (for mv the sources too;
    a remote `host:path` destination is not local); the symlinks ln -s makes."""
    short, long = _COPIES[name]
    pos, opts = parse_options(args, short, long)
    tdir = option_value(opts, "-t", "--target-directory")
    if name in ("rsync", "scp"):
        if len(pos) >= 2 and (pos[-1].dyn is not None or ":" not in pos[-1].lit.partition("/")[0]):
            ctx.add(pos[-1], how=BOTH if name == "rsync" else FOLLOW)
        return
    if name == "install" and has_option(opts, "-d", "--directory"):
        for w in pos:  # directories made
            ctx.add(w)
        return
    if tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    elif name == "ln" and pos:  # `ln -s /x/y` makes ./y
        base = norm("/" + pos[0].lit).rpartition("/")[2]
        srcs, dest = pos, pos[0] if pos[0].dyn is not None else Word(base, escape(base))
    else:
        return
    if name == "mv":  # a move removes its sources
        for w in srcs:
            ctx.add(w, how=ENTRY)
    into = tdir is not None or len(srcs) > 1  # dest is a directory to make names in
    at = not into and (len(pos) == 1 or has_option(opts, "-T", "--no-target-directory"))
    # mv, ln, install replace the entry at `dest`; cp writes the file there, through a
    # symlink too, `-T` or not
    replaced = (at and name != "cp") or (
        name == "ln" and has_option(opts, "-n", "--no-dereference")
    )
    ctx.add(dest, how=FOLLOW if into else ENTRY if replaced else BOTH)
    if name == "ln" and has_option(opts, "-s", "--symbolic"):  # after: dest is not yet one
        _symlinks(srcs, dest, into, at, ctx)


def _symlinks(srcs: list[Word], dest: Word, into: bool, at: bool, ctx: ShellState) -> None:
    """Record the links `ln -s` makes: `dest/NAME` for each source (`into`),
    `dest` itself (`at`), or either (dest may be a directory already)."""
    place = ctx.locate(dest)
    if place is None or place.glob:
        return
    for src in srcs:
        base = norm("/" + src.lit).rpartition("/")[2] if src.dyn is None else ""
        inside = [place.path + "/" + base] if base and not at else []
        for link in inside if into else [place.path, *inside]:
            ctx.link(link, src)


def _dd(name: str, args: list[Word], ctx: ShellState) -> None:
    for w in args:
        if w.lit.startswith("of="):
            ctx.add(w.tail(3))


def _sed(name: str, args: list[Word], ctx: ShellState) -> None:
    """sed -i writes a new file over each name (a symlink is replaced, unless
    --follow-symlinks)."""
    pos, opts = parse_options(
        args, "efl", ("--expression", "--file", "--line-length"), optional="i"
    )
    if has_option(opts, "-i", "--in-place"):
        how = FOLLOW if has_option(opts, "--follow-symlinks") else BOTH
        for w in pos if has_option(opts, "-e", "-f", "--expression", "--file") else pos[1:]:
            ctx.add(w, how=how)


_HEX = "0123456789abcdefABCDEF"


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
            hex_digits = t[j + 1 :] if c == "0" and t[j : j + 1] == "x" else ""
            if hex_digits and not hex_digits.strip(_HEX):
                j = len(t)  # -0xHEX to the end of the word (else perl reads -0, then -xFOO)
            elif c in "0l":  # -0[octal], -l[octal]
                while j < len(t) and t[j] in "01234567":
                    j += 1
    files = args[k:]
    if inplace:
        for w in files if code else files[1:]:
            ctx.add(w, how=BOTH)
    elif not (args and all(w.lit in ("-v", "-V", "--version", "-h") for w in args)):
        ctx.note("perl -e" if code else "perl " + files[0].lit if files else "perl reads stdin")


def _awk(name: str, args: list[Word], ctx: ShellState) -> None:
    """gawk -i inplace edits its files; a program text with `> "file"`,
    `| "cmd"` or system() may write (a guess); -f programs are not read. Options end
    at the first operand (the program text, or a file after -f/-e), as in every awk."""
    pos, opts = parse_options(
        args,
        "fvFilEe",
        ("--file", "--assign", "--field-separator", "--include", "--load", "--source", "--exec"),
        stop=True,
    )
    from_file = has_option(opts, "-f", "--file", "-E", "--exec")
    texts = [v.lit for o, v in opts if o in ("-e", "--source") and v] or [w.lit for w in pos[:1]]
    files = pos if from_file or has_option(opts, "-e", "--source") else pos[1:]
    if any(o in ("-i", "--include") and v and v.lit in ("inplace", "inplace.awk") for o, v in opts):
        for w in files:
            if not is_assignment(w):
                ctx.add(w, how=BOTH)
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
        args = _tar_old_style(args)
    opts = parse_options(
        args,
        _TAR_VALUES,
        ("--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--transform"),
    )[1]
    archive = option_value(opts, "-f", "--file")
    if has_option(opts, "-x", "--extract", "--get"):
        dirs = [v for o, v in opts if o in ("-C", "--directory") and v is not None]
        if dirs:  # each -C is taken from the one before it
            where = (ctx.cwd, ctx.why)
            for chdir in dirs[:-1]:
                where = enter_dir(chdir, where, ctx.home, ctx.shell_dir())
            ctx.add(dirs[-1], where)
        else:
            ctx.note("tar -x")
    elif (
        archive is not None
        and archive.lit != "-"
        and has_option(
            opts,
            *("-c", "--create", "-r", "--append", "-u", "--update", "--delete"),
            *("-A", "--concatenate", "--catenate"),
        )
    ):
        ctx.add(archive)


_TAR_VALUES = "fCbTXgKLNVH"  # tar's short options that take a value


def _tar_old_style(args: list[Word]) -> list[Word]:
    """GNU tar's old-style options (`tar cfv out.tar src`, `tar xCf dir a.tar`) as
    short options: each letter of the first word is one, and each that takes a value
    takes the next word, in order."""
    out: list[Word] = []
    k = 1
    for letter in args[0].lit:
        out.append(Word("-" + letter, "-" + escape(letter)))
        if letter in _TAR_VALUES and k < len(args):
            out.append(args[k])
            k += 1
    return out + args[k:]


_MODE_CHARS = frozenset("rwxXstugoa+-=,01234567")


def _modes(name: str, args: list[Word], ctx: ShellState) -> None:
    """chmod MODE FILE..., chown OWNER FILE..., chgrp GROUP FILE... (no MODE or
    OWNER with --reference); chmod's `-w`-like modes are operands, not options;
    chown/chgrp -h change a symlink itself."""
    operands: list[Word] = []
    how, reference, k, n = FOLLOW, False, 0, len(args)
    while k < n:
        w, t = args[k], args[k].lit
        k += 1
        if w.dyn is not None or t[:1] != "-" or t == "-":
            operands.append(w)
        elif t == "--":
            operands.extend(args[k:])
            break
        elif t.startswith("--"):
            reference |= t.startswith("--reference")
            how = ENTRY if t == "--no-dereference" else how
            k += t in ("--reference", "--from")  # their value is the next word
        elif name == "chmod" and all(c in _MODE_CHARS for c in t[1:]):
            operands.append(w)  # `chmod -w f`: a mode
        elif name != "chmod" and "h" in t:
            how = ENTRY
    for w in operands if reference else operands[1:]:
        ctx.add(w, how=how)


_ZIP_VALUES = frozenset(
    {"-b", "--temp-path", "-n", "--suffixes", "-t", "--from-date", "-tt", "--before-date",
     "-P", "--password", "-Z", "--compression-method", "-s", "--split-size", "-sp", "-ds",
     "--dot-size", "-TT", "--unzip-command"}
)  # fmt: skip


def _zip(name: str, args: list[Word], ctx: ShellState) -> None:
    """zip ARCHIVE FILE...: the archive (`.zip` added to a name without a dot, as
    zip does), or -O's output instead; with -m (move) the files, removed."""
    operands: list[Word] = []
    out, move, k, n = None, False, 0, len(args)
    while k < n:
        w, t = args[k], args[k].lit
        k += 1
        if w.dyn is not None or t[:1] != "-" or t == "-":
            operands.append(w)
        elif t in ("-x", "-i", "--exclude", "--include"):  # patterns, up to the next option
            while k < n and args[k].lit[:1] != "-":
                k += 1
        elif t in ("-O", "--output-file"):
            out = args[k] if k < n else None
            k += 1
        elif t in ("-lf", "--logfile-path"):  # a log file written
            if k < n:
                ctx.add(args[k])
            k += 1
        elif t in _ZIP_VALUES:
            k += 1
        elif t == "--move" or (t[1] != "-" and "m" in t):
            move = True
    if not operands or operands[0].lit == "-":
        return
    archive = operands[0]
    if out is not None:
        ctx.add(out, how=BOTH)
    else:
        ctx.add(archive, how=BOTH)
        if archive.dyn is None and "." not in archive.lit.rpartition("/")[2]:
            ctx.add(Word(archive.lit + ".zip", archive.esc + ".zip"), how=BOTH)
    if move:
        for w in operands[1:]:
            ctx.add(w, how=ENTRY)


def _split(name: str, args: list[Word], ctx: ShellState) -> None:
    """split [FILE [PREFIX]] writes PREFIXaa, PREFIXab, ... (default `x`); csplit
    (-f PREFIX, default `xx`) PREFIX00, ...: the target is the glob `PREFIX*`."""
    if name == "split":
        pos, opts = parse_options(
            args,
            "abClnt",
            ("--suffix-length", "--bytes", "--line-bytes", "--lines", "--number", "--separator",
             "--additional-suffix", "--filter"),
        )  # fmt: skip
        if has_option(opts, "--filter"):
            return ctx.note("split --filter")
        prefix = pos[1] if len(pos) > 1 else Word("x", "x")
    else:
        opts = parse_options(args, "bfn", ("--suffix-format", "--prefix", "--digits"))[1]
        prefix = option_value(opts, "-f", "--prefix") or Word("xx", "xx")
    ctx.add(Word(prefix.lit + "*", prefix.esc + "*", prefix.dyn, prefix.here))


_SQLITE_VALUES = frozenset(
    {"-cmd", "-separator", "-newline", "-nullvalue", "-init", "-vfs", "-mmap", "-maxsize",
     "-pagecache", "-lookaside", "-heap", "-escape"}
)  # fmt: skip


def _sqlite(name: str, args: list[Word], ctx: ShellState) -> None:
    """sqlite3 [OPTIONS] FILE [SQL]: the database file, unless -readonly."""
    k, n = 0, len(args)
    while k < n and args[k].dyn is None and args[k].lit[:1] == "-":
        t = "-" + args[k].lit.lstrip("-")
        k += 1 + (t in _SQLITE_VALUES)
        if t == "-readonly":
            return
    if k < n and args[k].lit not in ("", ":memory:"):
        ctx.add(args[k])


def _editor(name: str, args: list[Word], ctx: ShellState) -> None:
    """ed/red FILE, ex/vi/vim/nvim/view FILE...: the files they open, written
    back (a symlink may be replaced). What their commands (-c, +cmd, a script,
    stdin) write elsewhere is not seen."""
    if name in ("ed", "red"):
        pos = [w for w in parse_options(args, "p", ("--prompt",))[0] if w.lit[:1] != "!"]
        if not pos:
            ctx.note(name + " reads stdin")
        for w in pos[:1]:
            ctx.add(w, how=BOTH)
        return
    ex = name == "ex" or any(
        w.dyn is None and w.lit[:1] == "-" and w.lit[1:2] not in ("", "-") and w.lit[1:] != "s"
        and ("e" in w.lit or "E" in w.lit)
        for w in args
    )  # fmt: skip
    k, n = 0, len(args)
    while k < n:
        w, t = args[k], args[k].lit
        k += 1
        if w.dyn is None and t == "--":
            for f in args[k:]:
                ctx.add(f, how=BOTH)
            return
        if w.dyn is not None or t[:1] not in ("-", "+"):
            ctx.add(w, how=BOTH)
        elif t[:1] == "+" or t == "-":
            continue  # a command to run, or stdin
        elif t.startswith("--"):
            k += t in ("--cmd", "--listen", "--servername", "--startuptime")
            if t == "--startuptime" and k <= n:
                ctx.add(args[k - 1])  # a file written
        else:  # a cluster of flags (`-es`, `-esc CMD`, `-c'wq'`)
            k = _vim_flags(name, w, args, k, ex, ctx)


def _vim_flags(name: str, w: Word, args: list[Word], k: int, ex: bool, ctx: ShellState) -> int:
    """One word of vim's flags, read a letter at a time as vim reads it; returns the
    index of the next word to read (past the value a letter took). `-c`, `-t`, `-q`
    take the rest of the word when there is one (`-c'g/x/d|wq'`), else the next word
    (`-q`'s only when it is no option); `-V[N][file]` the rest (a log, written); `-i`
    (the viminfo file, written on exit unless NONE), `-w`/`-W` (keys typed, written),
    `-s` (keys read; in Ex mode a flag), `-u`, `-U`, `-T` the next word; `-S` the
    next word when it is no option. A session script, a tag, an error file: unseen."""
    t, n = w.lit, len(args)
    for j in range(1, len(t)):
        letter, attached = t[j], t[j + 1 :]
        if letter in "Stq":
            ctx.note(f"{name} -{letter}")
        if letter in "ctq" and attached:
            return k
        if letter == "V":
            if attached.lstrip("0123456789"):
                ctx.add(w.tail(len(t) - len(attached.lstrip("0123456789"))))
            return k
        if letter in "iwW" and k < n:
            if letter != "i" or args[k].lit != "NONE":
                ctx.add(args[k])  # a file written
            return k + 1
        if letter in "cuUTt" or (letter == "s" and not ex):
            return k + (k < n)
        if letter in "Sq":
            return k + (k < n and args[k].lit[:1] not in ("-", "+"))
    return k


def _patch(name: str, args: list[Word], ctx: ShellState) -> None:
    """patch [FILE [PATCHFILE]]: FILE, or -o's output; the -r reject file; with
    neither FILE nor -o, every file under the directory it runs in (-d DIR):
    which files a patch names is not known before it runs."""
    pos, opts = parse_options(
        args,
        "BdDFgioprVYz",
        ("--prefix", "--directory", "--ifdef", "--fuzz", "--get", "--input", "--output",
         "--strip", "--reject-file", "--version-control", "--basename-prefix", "--suffix",
         "--quoting-style", "--reject-format"),
    )  # fmt: skip
    if has_option(opts, "--dry-run", "--check", "-C", "--help", "-v", "--version"):
        return
    where = (ctx.cwd, ctx.why)
    chdir = option_value(opts, "-d", "--directory")
    if chdir is not None:
        where = enter_dir(chdir, where, ctx.home, ctx.shell_dir())
    out = option_value(opts, "-o", "--output")
    for v in (out, option_value(opts, "-r", "--reject-file")):
        if v is not None and v.lit != "-":
            ctx.add(v, where)
    if out is None:
        ctx.add(pos[0] if pos else Word(".", "."), where, how=BOTH)


FILE_HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
    **dict.fromkeys(_OPERANDS, _operands),
    **dict.fromkeys(_OUTPUTS, _outputs),
    **dict.fromkeys(_COPIES, _copy),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    **dict.fromkeys(("chmod", "chown", "chgrp"), _modes),
    **dict.fromkeys(("split", "csplit"), _split),
    **dict.fromkeys(("ed", "red", "ex", "vi", "vim", "nvim", "view"), _editor),
    "dd": _dd,
    "sed": _sed,
    "perl": _perl,
    "tar": _archive,
    "unzip": _archive,
    "zip": _zip,
    "sqlite3": _sqlite,
    "patch": _patch,
}
