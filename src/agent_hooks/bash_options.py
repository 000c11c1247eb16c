"""GNU-style command-line options and shell assignments, read from lexed words.

`parse_options` splits a command's words into operands and (option, value) pairs the way
GNU getopt_long does for the options it is told about; options it is not told about are
taken as flags, abbreviated long options are not recognised. A word holding a variable or
substitution is always an operand. Hot path: imports nothing but `bash_lexer`.
"""

from __future__ import annotations

from agent_hooks.bash_lexer import Word

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
