"""What commands that name their files write: the per-command tables and handlers.

Seen: tee, cp, install, mv (sources too), rm, rmdir, unlink, shred, touch, mkdir,
truncate, ln, dd of=, rsync/scp to a local destination, sed -i, perl -i,
gawk -i inplace, sort -o, curl -o, wget -O/-P, tar -c -f / tar -x -C,
unzip -d. Reported as opaque: perl -e and perl scripts, tar -x / unzip without a
directory, awk programs with an obvious `> "file"`, `| "cmd"` or `system(` (a guess;
other awk writes and sed's `w` command are not seen), awk -f. cp/mv/... destinations
are taken from their static words.

Every handler has the signature `(name, args, state)`: `name` is the command's base
name, `args` its words after it; it only adds targets and reasons to `state` and never
runs a nested command (that is `bash_dispatch`). `HANDLERS` maps names to handlers.
Hot path: imports nothing but agent_hooks' bash modules.
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word, escape
from agent_hooks.bash_options import has_option, is_assignment, option_value, parse_options
from agent_hooks.bash_paths import norm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_hooks.bash_state import ShellState

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


HANDLERS: dict[str, Callable[[str, list[Word], ShellState], None]] = {
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
