"""A small hand-made tokenizer for bash command strings, for `writes`.

Hot path: this runs in a hook process started on every Bash tool call, so it
imports nothing at run time (not `shlex`, not `re`).

`Lexer(text, home, max_depth, reasons).tokens()` returns a flat list of tokens:

* `Word` -- one shell word after quote removal (see `Word` for its forms);
* `Redir` -- a redirection operator; its target (or here-doc delimiter) is the
  next token when that is a `Word`;
* `str` -- a control operator: `|` `||` `|&` `&` `&&` `;` `;;` `;&` `;;&` `(`
  `)` or `"\\n"`.

Command substitutions `$(...)`, backticks and process substitutions `<(...)`
are tokenized recursively; their token lists hang on the word that holds them
(`Word.subs`), here-doc bodies' substitutions on the `Redir` (`Redir.subs`).

`$HOME` and `${HOME}` become `home` (when given). The current directory — `$PWD`,
`${PWD}`, `$(pwd)`, `` `pwd` `` (`pwd -L`, `pwd -P` too) — is known only to the walker,
which follows `cd`: such a part stays unknown here, and a word whose *only* unknown
parts are these says where they go (`Word.here`), for `words.resolve` to put the
walker's directory there. Other expansions stay unknown.

Invariants: never raises on a `str`; each character is scanned a bounded number
of times (nesting deeper than `max_depth` is skipped, with a reason), so time is
linear in the input. Problems become short reasons in `reasons` (at most
`MAX_REASONS`, deduplicated): "unterminated quote", "nesting too deep", ...
Skipping what is nested too deep is giving up, not a limit of the shell's
language: `gave_up` keeps that reason (also when `reasons` is full), for the
caller to treat the whole command as unreadable.

Limits (the shell does more than this): no alias or function expansion; `case`
inside `$(...)` is only followed at the start of commands; `${...}` is opaque as a
whole (command substitutions inside it are not seen); `$[...]`, extglob and
`{fd}>` named descriptors are not understood; `((...))` is recognised as
arithmetic only at the start of a command.
"""

from __future__ import annotations

MAX_REASONS = 32
_ESC = str.maketrans({c: "\\" + c for c in "\\*?[]{},~"})
_WORD_SPECIAL = frozenset(" \t\n|&;()<>\\'\"$`")
_DQ_SPECIAL = frozenset('"\\$`')
_DIGITS = frozenset("0123456789")
_IDENT0 = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT = _IDENT0 | _DIGITS
_SPECIAL_PARAMS = frozenset("@*#?-$!") | _DIGITS
_OPS2 = frozenset({"&&", "||", "|&", ";;", ";&"})  # and ";;&" and the single characters
_REDIRS3 = frozenset({"&>>", "<<<", "<<-"})
_REDIRS2 = frozenset({"&>", "<<", "<>", "<&", ">>", ">|", ">&"})  # and "<", ">"
_ARITH_AFTER = frozenset({"for", "while", "until", "if", "elif", "then", "do", "else", "!", "{"})
_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def add_reason(reasons: list[str], reason: str) -> None:
    """Append `reason` unless already present or the list is full."""
    if reason not in reasons and len(reasons) < MAX_REASONS:
        reasons.append(reason)


def escape(text: str) -> str:
    """`text` as quoted (literal) characters of an `esc` form."""
    return text.translate(_ESC)


class Word:
    """One shell word.

    `lit`: the text after quote removal; expansions that cannot be computed keep
    their source text ("$OUT"). `esc`: the same text with every *quoted* one of
    `\\ * ? [ ] { } , ~` escaped by a backslash, so that brace, tilde and glob
    expansion can still tell quoted from unquoted characters. `dyn`: None when
    the word is fully known, else a short description of its first unknown part
    ("$OUT", "$(...)"). `subs`: token lists of the command substitutions inside.
    `quoted`: some part was quoted (matters for here-doc delimiters). `here`: when
    every unknown part is the current directory (see the module docstring), where
    each goes in `esc` (an offset; nothing of it is in `esc`) and whether it was
    inside double quotes (unquoted, the shell splits it at blanks); else None.
    """

    __slots__ = ("dyn", "esc", "here", "lit", "quoted", "subs")

    def __init__(
        self,
        lit: str = "",
        esc: str = "",
        dyn: str | None = None,
        here: tuple[tuple[int, bool], ...] | None = None,
    ) -> None:
        self.lit = lit
        self.esc = esc
        self.dyn = dyn
        self.here = here
        self.subs: list[list[Word | Redir | str]] = []
        self.quoted = False

    def tail(self, k: int, tilde: bool = True) -> Word:
        """The word without its first `k` characters, a plain option prefix such
        as `-t` or `of=`; `tilde=False` keeps a leading `~` literal."""
        esc = self.esc[k:]
        shift = -k
        if not tilde and esc.startswith("~"):
            esc = "\\" + esc
            shift += 1
        here = self.here
        if here is not None:  # one inside the prefix: lit and esc no longer line up
            cut = any(at < k for at, _ in here)
            here = None if cut else tuple((at + shift, quoted) for at, quoted in here)
        return Word(self.lit[k:], esc, self.dyn, here)

    def __repr__(self) -> str:
        return f"Word({self.lit!r})"


class Redir:
    """A redirection operator (`>`, `2>>`, `<<-`, ...); `fd` is its explicit
    descriptor number or ""; `subs` holds substitutions of a here-doc body, `body`
    the body itself as written (None for other operators)."""

    __slots__ = ("body", "fd", "op", "subs")

    def __init__(self, op: str, fd: str) -> None:
        self.op = op
        self.fd = fd
        self.subs: list[list[Word | Redir | str]] = []
        self.body: str | None = None

    def __repr__(self) -> str:
        return f"Redir({self.fd}{self.op})"


class Lexer:
    """Tokenizer over one command string; see the module docstring."""

    __slots__ = (
        "budget",
        "depth",
        "gave_up",
        "heredocs",
        "home",
        "i",
        "max_depth",
        "n",
        "reasons",
        "s",
    )

    def __init__(self, s: str, home: str | None, max_depth: int, reasons: list[str]) -> None:
        self.s = s
        self.n = len(s)
        self.i = 0
        self.home = home
        self.depth = 0
        self.max_depth = max_depth
        self.reasons = reasons
        self.heredocs: list[tuple[str, bool, bool, Redir]] = []  # delim, strip tabs, expand
        self.budget = 2 * self.n + 4096  # characters left for look-ahead scans (`((`)
        self.gave_up: str | None = None  # why part of the text was skipped unread

    def tokens(self, close: bool = False) -> list[Word | Redir | str]:
        """Tokens up to the end, or with `close` up to the `)` ending a `$(`."""
        s, n = self.s, self.n
        out: list[Word | Redir | str] = []
        parens = cases = 0  # open "(" and `case` inside this `$(`: their ")" do not close it
        while self.i < n:
            i = self.i
            c = s[i]
            if c == " " or c == "\t":
                self.i += 1
            elif c == "\\" and s.startswith("\n", i + 1):  # line continuation
                self.i += 2
            elif c == "\n":
                self.i += 1
                out.append("\n")
                if self.heredocs:
                    self._bodies()
            elif c == "#":
                j = s.find("\n", i)
                self.i = n if j < 0 else j
            elif c == "(" and s.startswith("(", i + 1) and _command_start(out):
                end = self._arith_end(i + 2)
                if end < 0:
                    self.i += 1
                    parens += 1
                    out.append("(")
                else:
                    self.i = end  # `(( arithmetic ))` writes nothing
            elif c in "<>" and s.startswith("(", i + 1):
                out.append(self._word())  # process substitution
            elif c in "<>" or (c == "&" and s.startswith(">", i + 1)):
                self._redir(out, i)
            elif c in "|&;()":
                if c == ")" and parens == cases == 0 and close:
                    self.i += 1
                    return out
                op = s[i : i + 2]
                if op == ";;" and s.startswith("&", i + 2):
                    op = ";;&"
                elif op not in _OPS2:
                    op = c
                self.i += len(op)
                parens += (op == "(") - (op == ")" and parens > 0)
                out.append(op)
            elif c in _DIGITS:
                j = i + 1
                while j < n and s[j] in _DIGITS:
                    j += 1
                if j < n and s[j] in "<>" and not s.startswith("(", j + 1):
                    self._redir(out, j)  # `2>x`; `2>(cmd)` is a word holding a substitution
                else:
                    out.append(self._word())
            else:
                start = _command_start(out)
                w = self._word()
                if close and start and not w.quoted and w.lit in ("case", "esac"):
                    cases = max(0, cases + (1 if w.lit == "case" else -1))
                out.append(w)
        if close:
            add_reason(self.reasons, "unterminated $(")
        return out

    def _redir(self, out: list[Word | Redir | str], at: int) -> None:
        s = self.s
        op = s[at : at + 3]
        if op not in _REDIRS3:
            op = op[:2] if op[:2] in _REDIRS2 else s[at]
        r = Redir(op, s[self.i : at])
        self.i = at + len(op)
        out.append(r)
        if op in ("<<", "<<-"):
            while self.i < self.n and s[self.i] in " \t":
                self.i += 1
            if self.i >= self.n or s[self.i] in "\n|&;()<>":
                add_reason(self.reasons, "here-doc without delimiter")
                return
            w = self._word()
            out.append(w)
            self.heredocs.append((w.lit, op == "<<-", not w.quoted, r))

    def _bodies(self) -> None:
        """Skip the here-doc bodies that start after the newline just read."""
        s, n = self.s, self.n
        for delim, strip, expand, r in self.heredocs:
            start = self.i
            while self.i < n:
                j = s.find("\n", self.i)
                end = n if j < 0 else j
                line = s[self.i : end]
                nxt = n if j < 0 else j + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    body = s[start : self.i]
                    self.i = nxt
                    break
                self.i = nxt
            else:
                body = s[start:]
            r.body = body
            if expand and ("$" in body or "`" in body):
                sub = Lexer(body, self.home, self.max_depth, self.reasons)
                sub.depth = self.depth
                w = Word()
                sub._dq(w, [], [], "")
                r.subs.extend(w.subs)
                self.gave_up = self.gave_up or sub.gave_up
        self.heredocs.clear()

    def _word(self) -> Word:
        s, n = self.s, self.n
        i = j = self.i
        while j < n and s[j] not in _WORD_SPECIAL:
            j += 1
        if j > i and (j == n or s[j] in " \t\n|&;()" or (s[j] in "<>" and s[j + 1 : j + 2] != "(")):
            self.i = j  # the common case: plain characters only
            return Word(s[i:j], s[i:j])
        w = Word()
        lit: list[str] = []
        esc: list[str] = []
        while i < n:
            c = s[i]
            if c not in _WORD_SPECIAL:
                j = i + 1
                while j < n and s[j] not in _WORD_SPECIAL:
                    j += 1
                lit.append(s[i:j])
                esc.append(s[i:j])
                i = j
                continue
            if c == "\\":
                w.quoted = True
                if i + 1 >= n:  # a final backslash stays
                    lit.append("\\")
                    esc.append("\\\\")
                elif s[i + 1] != "\n":
                    lit.append(s[i + 1])
                    esc.append(escape(s[i + 1]))
                i += 2
                continue
            if c == "'":
                w.quoted = True
                j = s.find("'", i + 1)
                if j < 0:
                    add_reason(self.reasons, "unterminated quote")
                    j = n
                lit.append(s[i + 1 : j])
                esc.append(escape(s[i + 1 : j]))
                i = j + 1
                continue
            if c == '"':
                w.quoted = True
                self.i = i + 1
                self._dq(w, lit, esc, '"')
            elif c == "$":
                self.i = i
                self._dollar(w, lit, esc, False)
            elif c == "`":
                self.i = i
                self._backtick(w, lit, esc, False)
            elif c in "<>" and s.startswith("(", i + 1):
                self.i = i + 2
                self._cmdsub(w, lit, esc, i, "<(...)" if c == "<" else ">(...)")
            else:
                break
            i = self.i
        self.i = min(i, n)
        w.lit = "".join(lit)
        w.esc = "".join(esc)
        return w

    def _dq(self, w: Word, lit: list[str], esc: list[str], end: str) -> None:
        """Double-quoted text up to `end` (`"`; "" for a here-doc body)."""
        s, n = self.s, self.n
        i = self.i
        escapable = '$`"\\\n' if end else "$`\\\n"
        while i < n:
            c = s[i]
            if c == end:
                self.i = i + 1
                return
            if c == "\\" and i + 1 < n and s[i + 1] in escapable:
                if s[i + 1] != "\n":
                    lit.append(s[i + 1])
                    esc.append(escape(s[i + 1]))
                i += 2
            elif c == "$" or c == "`":
                self.i = i
                if c == "$":
                    self._dollar(w, lit, esc, True)
                else:
                    self._backtick(w, lit, esc, True)
                i = self.i
            else:
                j = i + 1
                while j < n and s[j] not in _DQ_SPECIAL:
                    j += 1
                lit.append(s[i:j])
                esc.append(escape(s[i:j]))
                i = j
        if end:
            add_reason(self.reasons, "unterminated quote")
        self.i = n

    def _dollar(self, w: Word, lit: list[str], esc: list[str], in_dq: bool) -> None:
        s, n, i = self.s, self.n, self.i
        nxt = s[i + 1] if i + 1 < n else ""
        if nxt == "(":
            if s.startswith("(", i + 2):
                end = self._arith_end(i + 3)
                if end >= 0:
                    self.i = end
                    _dyn(w, lit, esc, s[i:end], "$((...))")
                    return
            self.i = i + 2
            self._cmdsub(w, lit, esc, i, "$(...)", in_dq)
        elif nxt == "{":
            j, depth = i + 2, 1
            while j < n:
                depth += (s[j] == "{") - (s[j] == "}")
                if depth == 0:
                    break
                j += 1
            if j >= n:
                add_reason(self.reasons, "unterminated ${")
            self.i = j + 1
            self._param(w, lit, esc, s[i + 2 : j], s[i : j + 1], in_dq)
        elif nxt in _IDENT0:
            j = i + 2
            while j < n and s[j] in _IDENT:
                j += 1
            self.i = j
            self._param(w, lit, esc, s[i + 1 : j], s[i:j], in_dq)
        elif nxt and nxt in _SPECIAL_PARAMS:
            self.i = i + 2
            _dyn(w, lit, esc, s[i : i + 2], s[i : i + 2])
        elif nxt == "'" and not in_dq:
            self._ansi(w, lit, esc)
        elif nxt == '"' and not in_dq:
            w.quoted = True
            self.i = i + 2
            self._dq(w, lit, esc, '"')
        else:
            self.i = i + 1
            lit.append("$")
            esc.append("$")

    def _param(
        self, w: Word, lit: list[str], esc: list[str], name: str, raw: str, in_dq: bool
    ) -> None:
        if name == "HOME" and self.home is not None:
            lit.append(self.home)
            esc.append(escape(self.home))
        elif name == "PWD":
            _here(w, lit, esc, raw, raw, in_dq)
        else:
            _dyn(w, lit, esc, raw, raw if len(raw) <= 40 else raw[:37] + "...")

    def _ansi(self, w: Word, lit: list[str], esc: list[str]) -> None:
        """`$'...'` with C escapes (\\n, \\t, \\xHH, \\NNN, ...)."""
        s, n = self.s, self.n
        i = self.i + 2
        out: list[str] = []
        w.quoted = True
        while i < n and s[i] != "'":
            c = s[i]
            if c != "\\" or i + 1 >= n:
                out.append(c)
                i += 1
                continue
            c = s[i + 1]
            i += 2
            if c in _ANSI:
                out.append(_ANSI[c])
            elif c in "xuU01234567":  # \xHH, \uHHHH, \UHHHHHHHH, \NNN
                hexa = c in "xuU"
                digits = "0123456789abcdefABCDEF" if hexa else "01234567"
                width = {"x": 2, "u": 4, "U": 8}.get(c, 3)
                j = k = i if hexa else i - 1
                while k < n and k - j < width and s[k] in digits:
                    k += 1
                code = int(s[j:k], 16 if hexa else 8) if k > j else -1
                out.append(chr(code) if 0 <= code <= 0x10FFFF else "\\" + c)
                i = k
            else:
                out.append("\\" + c)
        if i >= n:
            add_reason(self.reasons, "unterminated quote")
        self.i = i + 1
        text = "".join(out)
        lit.append(text)
        esc.append(escape(text))

    def _backtick(self, w: Word, lit: list[str], esc: list[str], in_dq: bool) -> None:
        s, n = self.s, self.n
        start = self.i
        i = start + 1
        inner: list[str] = []
        while i < n and s[i] != "`":
            if s[i] == "\\" and i + 1 < n:
                inner.append(s[i + 1] if s[i + 1] in "$`\\" else s[i : i + 2])
                i += 2
            else:
                inner.append(s[i])
                i += 1
        if i >= n:
            add_reason(self.reasons, "unterminated backtick")
        self.i = i + 1
        if self.depth >= self.max_depth:
            _dyn(w, lit, esc, s[start : i + 1], "`...`")
            return self._give_up("nesting too deep")
        sub = Lexer("".join(inner), self.home, self.max_depth, self.reasons)
        sub.depth = self.depth + 1
        toks = sub.tokens()
        w.subs.append(toks)
        self.gave_up = self.gave_up or sub.gave_up
        if _is_pwd(toks):
            _here(w, lit, esc, s[start : i + 1], "`...`", in_dq)
        else:
            _dyn(w, lit, esc, s[start : i + 1], "`...`")

    def _cmdsub(
        self, w: Word, lit: list[str], esc: list[str], start: int, desc: str, in_dq: bool = False
    ) -> None:
        """The body of `$(`, `<(` or `>(`; self.i is just past the `(`."""
        pwd = False
        if self.depth >= self.max_depth:
            self._give_up("nesting too deep")
            self.i = _skip_parens(self.s, self.i)
        else:
            self.depth += 1
            toks = self.tokens(close=True)
            w.subs.append(toks)
            self.depth -= 1
            pwd = desc == "$(...)" and _is_pwd(toks)
        if pwd:
            _here(w, lit, esc, self.s[start : self.i], desc, in_dq)
        else:
            _dyn(w, lit, esc, self.s[start : self.i], desc)

    def _give_up(self, reason: str) -> None:
        add_reason(self.reasons, reason)
        self.gave_up = self.gave_up or reason

    def _arith_end(self, i: int) -> int:
        """Index just past the `))` closing an arithmetic `((` opened before `i`,
        or -1 when there is none (then `((` is two subshell parentheses)."""
        s, n = self.s, self.n
        depth, start = 2, i
        while i < n and depth > 0 and self.budget > i - start:
            c = s[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 1 and not s.startswith(")", i + 1):
                    break
            i += 1
        self.budget -= i - start
        return i if depth == 0 else -1


def _dyn(w: Word, lit: list[str], esc: list[str], raw: str, desc: str) -> None:
    if w.dyn is None or w.here is not None:
        w.dyn = desc  # the first part that is really unknown
    w.here = None
    lit.append(raw)
    esc.append(escape(raw))


def _here(w: Word, lit: list[str], esc: list[str], raw: str, desc: str, in_dq: bool) -> None:
    """A part that is the current directory (`Word.here`)."""
    lit.append(raw)
    if w.dyn is None:
        w.dyn, w.here = desc, ()
    if w.here is None:
        esc.append(escape(raw))  # the word holds something else unknown
    else:
        w.here += ((sum(map(len, esc)), in_dq),)


_PWD_OPTIONS = frozenset({"-L", "-P"})


def _is_pwd(toks: list[Word | Redir | str]) -> bool:
    """Are these the tokens of `pwd` (with `-L` or `-P`) alone?"""
    return (
        bool(toks)
        and all(isinstance(t, Word) and t.dyn is None for t in toks)
        and isinstance(toks[0], Word)
        and toks[0].lit == "pwd"
        and all(isinstance(t, Word) and t.lit in _PWD_OPTIONS for t in toks[1:])
    )


def _command_start(out: list[Word | Redir | str]) -> bool:
    """Could a command start after these tokens (for `((` arithmetic)?"""
    if not out:
        return True
    last = out[-1]
    if isinstance(last, str):
        return last != ")"
    return isinstance(last, Word) and last.lit in _ARITH_AFTER


def _skip_parens(s: str, i: int) -> int:
    """Index just past the `)` that closes an already opened `(`, found by
    counting parentheses outside quotes (no recursion: used beyond max depth)."""
    n, depth = len(s), 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 1
        elif c == "'" or c == '"':
            j = s.find(c, i + 1)
            i = n if j < 0 else j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n
