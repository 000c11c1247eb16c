"""shell.lexer on its own: the token stream `Lexer(...).tokens()` gives the parser.

A token is shown as plain data: a `Word` as ("W", lit), a `Redir` as ("R", fd + op),
a control operator as its string. What the parser then makes of them (targets,
opaque reasons) is tested in test_writes.py. home is /home/me.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.shell.lexer import MAX_REASONS, Lexer, Redir, Word, add_reason, escape

HOME = "/home/me"
Token = Word | Redir | str
OPERATORS = {"|", "||", "|&", "&", "&&", ";", ";;", ";&", ";;&", "(", ")", "\n"}


def lex(text: str, home: str | None = HOME, max_depth: int = 8) -> tuple[list[Token], list[str]]:
    reasons: list[str] = []
    return Lexer(text, home, max_depth, reasons).tokens(), reasons


def shape(tokens: list[Token]) -> list[object]:
    return [
        ("W", t.lit) if isinstance(t, Word) else ("R", t.fd + t.op) if isinstance(t, Redir) else t
        for t in tokens
    ]


def one_word(text: str, home: str | None = HOME) -> Word:
    """The single word `text` lexes to, with no reason given."""
    tokens, reasons = lex(text, home)
    assert reasons == [] and len(tokens) == 1 and isinstance(tokens[0], Word), shape(tokens)
    return tokens[0]


W = [
    ("echo  a\tb", ["echo", "a", "b"]),
    ("a'b c'd", ["ab cd"]),
    ("'$HOME `x` \\'", ["$HOME `x` \\"]),
    ('"say \\"hi\\" \\$x \\\\ \\` \\a"', ['say "hi" $x \\ ` \\a']),
    ("$'a\\tb\\x41\\101\\u00e9\\'q\\\\'", ["a\tbAAé'q\\"]),
    ("$'\\q' $'\\x' $'\\0101'", ["\\q", "\\x", "\x081"]),
    ('$"localized" \\$x a\\ b', ["localized", "$x", "a b"]),
    ("ec\\\nho a \\\n b", ["echo", "a", "b"]),
    ("trailing\\", ["trailing\\"]),
    ("a#b x$ $ a=1", ["a#b", "x$", "$", "a=1"]),
]


@pytest.mark.parametrize(("text", "words"), W, ids=[w[0] for w in W])
def test_words_after_quote_removal(text: str, words: list[str]) -> None:
    """Quotes, escapes and line continuations are removed; nothing else is a token."""
    tokens, reasons = lex(text)
    assert reasons == []
    assert shape(tokens) == [("W", w) for w in words]


def test_esc_marks_only_quoted_glob_characters() -> None:
    """`esc` escapes the quoted `*?[]{},~` (and backslashes) so globbing can tell them apart."""
    assert (one_word('a"*"b').lit, one_word('a"*"b').esc) == ("a*b", "a\\*b")
    assert one_word("a*b").esc == "a*b"
    assert one_word("'~'{a,b}").esc == "\\~{a,b}"
    assert one_word("x\\?").esc == "x\\?"
    assert escape("\\*?[]{},~z") == "\\\\\\*\\?\\[\\]\\{\\}\\,\\~z"


def test_quoted_flag() -> None:
    """`quoted` is set by any quoting (here-doc delimiters depend on it), not by expansions."""
    assert [one_word(t).quoted for t in ("plain", "'q'", "a\\b", '"q"', "$'q'", "$x")] == [
        False, True, True, True, True, False,
    ]  # fmt: skip


def test_control_operators() -> None:
    """Every control operator is one token, longest first; `#` begins a comment only at a word start."""
    tokens, _ = lex("a;b&&c||d|e&f|&g;;h;&i;;&j\n(k) # ) > x\nl;#m")
    assert shape(tokens) == [
        ("W", "a"), ";", ("W", "b"), "&&", ("W", "c"), "||", ("W", "d"), "|", ("W", "e"),
        "&", ("W", "f"), "|&", ("W", "g"), ";;", ("W", "h"), ";&", ("W", "i"), ";;&",
        ("W", "j"), "\n", "(", ("W", "k"), ")", "\n", ("W", "l"), ";",
    ]  # fmt: skip


R = [
    ("a>b", [("W", "a"), ("R", ">"), ("W", "b")]),
    ("a >> b >| c <> d < e", [("W", "a"), ("R", ">>"), ("W", "b"), ("R", ">|"), ("W", "c"),
                              ("R", "<>"), ("W", "d"), ("R", "<"), ("W", "e")]),
    ("2>err 10>>x &>all &>>more", [("R", "2>"), ("W", "err"), ("R", "10>>"), ("W", "x"),
                                   ("R", "&>"), ("W", "all"), ("R", "&>>"), ("W", "more")]),
    ("2>&1 >&- 3<&0 >&2", [("R", "2>&"), ("W", "1"), ("R", ">&"), ("W", "-"), ("R", "3<&"),
                           ("W", "0"), ("R", ">&"), ("W", "2")]),
    ("a2>x 2 >y", [("W", "a2"), ("R", ">"), ("W", "x"), ("W", "2"), ("R", ">"), ("W", "y")]),
    ("cat <<< 'x > y'", [("W", "cat"), ("R", "<<<"), ("W", "x > y")]),
    ("echo '>' \\> \">\"", [("W", "echo"), ("W", ">"), ("W", ">"), ("W", ">")]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), R, ids=[r[0] for r in R])
def test_redirections(text: str, expected: list[object]) -> None:
    """A redirection is its own token with its fd; its target is the next word; quoted `>` is a word."""
    assert shape(lex(text)[0]) == expected


def test_here_doc_bodies_are_skipped_and_expanded_only_when_unquoted() -> None:
    """Body lines are no tokens; an unquoted delimiter's body substitutions hang on the Redir."""
    tokens, reasons = lex("cat <<EOF >o\n> no; rm x $(touch in)\nEOF\nnext")
    assert reasons == []
    assert shape(tokens) == [("W", "cat"), ("R", "<<"), ("W", "EOF"), ("R", ">"), ("W", "o"),
                             "\n", ("W", "next")]  # fmt: skip
    assert isinstance(tokens[1], Redir)
    assert [shape(sub) for sub in tokens[1].subs] == [[("W", "touch"), ("W", "in")]]
    for quoted in ("'EOF'", '"EOF"', "\\EOF", "E'O'F"):
        tokens, _ = lex(f"cat <<{quoted}\n$(touch no) `rm no`\nEOF\nafter")
        assert isinstance(tokens[1], Redir) and tokens[1].subs == [], quoted
        assert shape(tokens)[2:] == [("W", "EOF"), "\n", ("W", "after")]


def test_here_doc_variants() -> None:
    """`<<-` strips tabs before the delimiter; two here-docs on a line read two bodies in turn;
    an unterminated body runs to the end; a missing delimiter is a reason."""
    assert shape(lex("cat <<-E\n\tbody\n\tE\nafter")[0]) == [
        ("W", "cat"), ("R", "<<-"), ("W", "E"), "\n", ("W", "after"),
    ]  # fmt: skip
    assert shape(lex("cat <<A <<B\na\nA\nb\nB\nz")[0]) == [
        ("W", "cat"), ("R", "<<"), ("W", "A"), ("R", "<<"), ("W", "B"), "\n", ("W", "z"),
    ]  # fmt: skip
    tokens, reasons = lex("cat <<E\nrm x\nno end")
    assert shape(tokens) == [("W", "cat"), ("R", "<<"), ("W", "E"), "\n"] and reasons == []
    assert lex("cat <<")[1] == lex("cat << ;")[1] == ["here-doc without delimiter"]


def test_command_substitutions_hang_on_their_word() -> None:
    """`$(...)`, backticks and `<(...)` stay one word (raw text, dyn set) with their tokens in subs."""
    w = one_word("pre$(ls -l $(pwd))post")
    assert (w.lit, w.dyn) == ("pre$(ls -l $(pwd))post", "$(...)")
    [inner] = w.subs
    assert shape(inner) == [("W", "ls"), ("W", "-l"), ("W", "$(pwd)")]
    assert isinstance(inner[2], Word) and [shape(s) for s in inner[2].subs] == [[("W", "pwd")]]
    w = one_word('"$(echo ")" `date`)"')
    assert w.dyn == "$(...)" and shape(w.subs[0]) == [("W", "echo"), ("W", ")"), ("W", "`date`")]
    w = one_word("`rm \\`x\\``")
    assert w.dyn == "`...`" and shape(w.subs[0]) == [("W", "rm"), ("W", "`x`")]
    w = one_word("<(sort a)")
    assert w.dyn == "<(...)" and shape(w.subs[0]) == [("W", "sort"), ("W", "a")]
    w = one_word("$(case $x in a) touch a;; esac)")
    assert shape(w.subs[0])[-3:] == [("W", "a"), ";;", ("W", "esac")]


def test_arithmetic_is_not_redirection() -> None:
    """`$((...))` is one dynamic word; `((...))` at a command start yields no tokens."""
    w = one_word("$((1 > 2))")
    assert (w.dyn, w.subs) == ("$((...))", [])
    assert shape(lex("(( x > 5 )) && ok")[0]) == ["&&", ("W", "ok")]
    assert shape(lex("((a) )")[0]) == ["(", "(", ("W", "a"), ")", ")"]


def test_nesting_beyond_max_depth_is_skipped_with_a_reason() -> None:
    """Beyond max_depth a substitution is skipped whole (lexing goes on after it)."""
    tokens, reasons = lex("$(a $(b) `c`) `d` next", max_depth=1)
    assert reasons == ["nesting too deep"]
    assert shape(tokens) == [("W", "$(a $(b) `c`)"), ("W", "`d`"), ("W", "next")]
    outer, backtick = tokens[0], tokens[1]
    assert isinstance(outer, Word) and isinstance(backtick, Word)
    assert [shape(s) for s in backtick.subs] == [[("W", "d")]]  # depth 0 < 1: followed
    [inner] = outer.subs
    assert shape(inner) == [("W", "a"), ("W", "$(b)"), ("W", "`c`")]
    assert [w.subs for w in inner[1:] if isinstance(w, Word)] == [[], []]  # depth 1: skipped
    tokens, reasons = lex("$(a ')' \"(\") b", max_depth=0)
    assert reasons == ["nesting too deep"] and shape(tokens)[1:] == [("W", "b")]


@pytest.mark.parametrize(
    "text",
    ["$(a $(b))", "`a $(b)`", "x <(a >(b))", "cat <<EOF\n$(a $(b))\nEOF\n", "$(a `b`)"],
)
def test_skipping_what_is_nested_too_deep_is_giving_up(text: str) -> None:
    """`gave_up` names why part of the text went unread, even when `reasons` is full."""
    reasons = [f"r{k}" for k in range(MAX_REASONS)]
    lexer = Lexer(text, HOME, 1, reasons)
    lexer.tokens()
    assert lexer.gave_up == "nesting too deep" and len(reasons) == MAX_REASONS
    lexer = Lexer(text, HOME, 2, [])
    lexer.tokens()
    assert lexer.gave_up is None


def test_an_unterminated_quote_is_not_giving_up() -> None:
    """bash runs nothing from an unterminated quote on: the lexer read all there is."""
    lexer = Lexer("touch a; echo 'b > c", HOME, 8, [])
    lexer.tokens()
    assert lexer.gave_up is None and lexer.reasons == ["unterminated quote"]


def test_parameter_expansion() -> None:
    """$HOME / ${HOME} become home; any other expansion keeps its text and names the first in dyn."""
    assert [(w.lit, w.dyn) for w in map(one_word, ["$HOME/x", '"${HOME}"y', "$HOMEx"])] == [
        ("/home/me/x", None), ("/home/mey", None), ("$HOMEx", "$HOMEx"),
    ]  # fmt: skip
    assert one_word("$HOME", home=None).dyn == "$HOME"
    for raw in ("$x", "${x:-y}", "$1", "$?", "$$", "$@", "$#", "${#a[@]}"):
        assert (one_word(raw).lit, one_word(raw).dyn) == (raw, raw)
    assert one_word("$a$b").dyn == "$a"
    long = "${" + "v" * 50 + "}"
    assert one_word(long).lit == long and one_word(long).dyn == long[:37] + "..."


U = [
    ("echo 'abc", "abc", "unterminated quote"),
    ('echo "abc', "abc", "unterminated quote"),
    ("echo $'abc", "abc", "unterminated quote"),
    ("echo $(abc", "$(abc", "unterminated $("),
    ("echo `abc", "`abc", "unterminated backtick"),
    ("echo ${abc", "${abc", "unterminated ${"),
]


@pytest.mark.parametrize(("text", "last", "reason"), U, ids=[u[0] for u in U])
def test_unterminated_input_is_a_reason_not_an_error(text: str, last: str, reason: str) -> None:
    """The rest of the input becomes the last word and the problem a reason."""
    tokens, reasons = lex(text)
    assert shape(tokens) == [("W", "echo"), ("W", last)] and reasons == [reason]


def test_reasons_are_deduplicated_and_bounded() -> None:
    assert lex("$(a `b")[1] == ["unterminated backtick", "unterminated $("]
    reasons: list[str] = []
    for k in range(2 * MAX_REASONS):
        add_reason(reasons, f"r{k % (MAX_REASONS + 5)}")
    assert reasons == [f"r{k}" for k in range(MAX_REASONS)]


def test_word_tail() -> None:
    """`tail` drops an option prefix; `tilde=False` keeps a now-leading `~` literal."""
    w = one_word("-t~/d*")
    assert (w.tail(2).lit, w.tail(2).esc) == ("~/d*", "~/d*")
    assert w.tail(2, tilde=False).esc == "\\~/d*"


def test_digits_before_process_substitution_are_part_of_the_word() -> None:
    """bash prints `2/dev/fd/63` for `echo 2>(true)`: a word holding a process substitution."""
    tokens, reasons = lex("echo 2>(tee out)")
    assert shape(tokens) == [("W", "echo"), ("W", "2>(tee out)")] and reasons == []


def check_tokens(tokens: list[Token]) -> None:
    for t in tokens:
        if isinstance(t, str):
            assert t in OPERATORS
        else:
            assert isinstance(t, Word | Redir)
            for sub in t.subs:
                check_tokens(sub)


@settings(max_examples=400, deadline=None)
@given(
    st.text(max_size=200) | st.text(alphabet="ab01 \t\n'\"\\$`(){}<>|&;#-EOF", max_size=120),
    st.integers(0, 4),
)
def test_never_raises(text: str, max_depth: int) -> None:
    """Any text lexes to well-formed tokens with at most MAX_REASONS distinct reasons."""
    tokens, reasons = lex(text, HOME, max_depth)
    check_tokens(tokens)
    assert len(reasons) == len(set(reasons)) <= MAX_REASONS


def test_the_current_directory_is_left_for_the_walker_to_fill_in() -> None:
    """`$PWD` and its kin stay unknown (`dyn`), but a word whose only unknown parts
    they are says where each goes in `esc` and whether it was double-quoted."""
    w = one_word('"$PWD/a"${PWD}`pwd`"$(pwd -P)"x')
    assert (w.lit, w.dyn) == ("$PWD/a${PWD}`pwd`$(pwd -P)x", "$PWD")
    assert (w.esc, w.here) == ("/ax", ((0, True), (2, False), (2, False), (2, True)))
    assert [shape(s) for s in w.subs] == [[("W", "pwd")], [("W", "pwd"), ("W", "-P")]]
    tail = one_word("of=$PWD/o").tail(3)
    assert (tail.lit, tail.esc, tail.here) == ("$PWD/o", "/o", ((0, False),))
    for mixed, first in (("$PWD/$X", "$X"), ("$(pwd; ls)/$PWD", "$(...)"), ("$PWDX", "$PWDX")):
        w = one_word(mixed)
        assert (w.dyn, w.here) == (first, None), mixed
