"""shell.plain: the plainest commands read without the parser, with the parser's answer."""

from __future__ import annotations

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from agent_hooks.shell import commands, plain, writes

CWD = "/home/dev/proj"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hi > d.txt", [f"{CWD}/d.txt"]),
        ("printf x >> ../a/./b", ["/home/dev/a/b"]),
        ("cat a > x  >  y > x", [f"{CWD}/x", f"{CWD}/y"]),
        ("echo > /dev/null", []),
        ("echo > /dev/fd/3 hi > //tmp//o", ["/tmp/o"]),
        ("ls -la src", []),
        ("grep -rn a=b, src > out.txt", [f"{CWD}/out.txt"]),
        ("cat > f.py <<'EOF'\nimport os\nos.remove($(x))\nEOF", [f"{CWD}/f.py"]),
        ('cat <<"END" >> notes\n`rm -rf /`\n\nEND\n', [f"{CWD}/notes"]),
        ("cat > f <<'E'\nx\nE", [f"{CWD}/f"]),  # the shortest quoted delimiter
        ("cat > f <<'EOF'\nEOF\n", [f"{CWD}/f"]),  # an empty body, a final newline
        ("echo " + "a" * (1024 - 9) + " > f", [f"{CWD}/f"]),  # as long as plain reads
        ("cat > f <<'EOF'\n" + "x" * (65536 - 4) + "\nEOF", [f"{CWD}/f"]),  # ... its body
    ],
)
def test_a_plain_command_writes_its_redirection_targets(command: str, expected: list[str]) -> None:
    assert plain.targets(command, CWD) == expected


@pytest.mark.parametrize(
    "command",
    [
        'echo "hi" > f',  # quotes
        "echo hi>f",  # an operator inside a word
        "echo hi >",  # a redirection without a target
        "echo hi > > f",
        "echo hi 2> f",  # a descriptor
        "sed -i s/a/b/ f",  # a command that writes by itself
        "a=b echo hi > f",  # an assignment
        "/bin/echo hi > f",  # a path as the name
        "echo hi > f; rm g",  # more than one command
        "echo $HOME > f",
        "echo hi > ~/f",
        "echo hi > *.txt",
        "echo hi\n> f",
        "",
        "   ",
        "echo " + "a" * 2000 + " > f",  # past the length plain reads
        "echo hi > f\n",
        "cat > f <<EOF\n$(rm a)\nEOF",  # an unquoted delimiter: the body is expanded
        "cat > f <<-'EOF'\n\tx\n\tEOF",
        "cat > f << 'EOF'\nx\nEOF",
        "cat > f <<'EOF'\nx\nEOF\nrm g",  # a command after the body
        "cat > f <<'EOF'\nEOF\nrm g\nEOF",  # the delimiter before the last line
        "cat > f <<'EOF'\nx",  # no delimiter line
        "cat > f <<'EOF'\n" + "x\n" * 40000 + "EOF",  # past the body plain reads
        "echo " + "a" * (1024 - 8) + " > f",  # one character past the line plain reads
        "cat > f <<'EOF'\n" + "x" * (65536 - 3) + "\nEOF",  # one past the body
        'cat > f <<\'EOF"\nx\nEOF"',  # the delimiter's quotes do not match
        "cat > f x<'EOF'\nx\nEOF",  # no `<<`
        "cat > f <<XEOFX\nx\nEOF",  # no quote
        "cat > f <<'E$F'\nx\nE$F",  # a delimiter plain does not read
        "cat > f <<'EOF'\nx\nEOF\ntouch y\nEOF",  # the delimiter ends it early
        "cat > f <<'EOF'\nx\nEOF\nEOF",
    ],
)
def test_anything_else_is_left_to_the_parser(command: str) -> None:
    assert plain.targets(command, CWD) is None


def test_a_relative_directory_is_left_to_the_parser() -> None:
    assert plain.targets("echo hi > f", "proj") is None


def test_a_path_past_path_max_is_left_to_the_parser() -> None:
    assert plain.targets("echo hi > f", "/" + "d/" * 2100) is None
    at_most = "/" + "d" * (plain.PATH_MAX - 3)  # with "/f": exactly PATH_MAX characters
    assert plain.targets("echo hi > f", at_most) == [at_most + "/f"]
    assert plain.targets("echo hi > f", at_most + "d") is None


def test_its_names_are_commands_the_parser_reads_as_writing_nothing() -> None:
    assert plain.NAMES <= commands.READ_ONLY
    for name in plain.NAMES:
        assert name not in commands._HANDLERS
        assert name not in commands._WRAPPERS
        assert not commands.is_interpreter(name)


def _agrees_with_the_parser(command: str, cwd: str) -> bool:
    """When plain answers, the parser's analysis is exactly that answer (asserted);
    True, so that a property can assert it."""
    found = plain.targets(command, cwd)
    if found is None:
        return True
    analysis = writes.analyze(command, cwd, "/home/dev")
    assert [t.path for t in analysis.targets] == found, (command, analysis)
    assert not any(t.glob or t.entry for t in analysis.targets)
    assert analysis.trees == [] and analysis.gave_up is None and analysis.opaque == []
    return True


_WORD = st.text(alphabet="ab./-_=:,@%+1", min_size=1, max_size=6)
_NAME = st.sampled_from(
    [*sorted(plain.NAMES), "rm", "sed", "tee", "touch", "cp", "a=b", "/bin/echo", "x"]
)
# Words and operators plain must leave to the parser, some of them writing.
_SHELL_TOKENS = (
    ["2>", ">|", "&>", "<", "$a", "${a}", "$(pwd)", "`x`", "~/x", "~", "*.py", "a?", "[ab]",
     "'q'", '"d"', "a\\ b", "{a,b}", "a;", "&", "|", "; rm a", " && touch b", "\n", "\t",
     "#c", "(", ")", "PWD=/", "!", ">", ">>", "a>b", "", "/dev/null", "/dev/fd/1", "x/../..",
     "%1", "a=b", "-", "a,b"]
)  # fmt: skip
_SHELL = st.sampled_from(_SHELL_TOKENS)


@st.composite
def _commands(draw: st.DrawFn) -> str:
    """A plain command (a name, words, redirections), often with one token in it that
    is not plain, as a redirection's target or anywhere."""
    parts = [draw(st.one_of(st.sampled_from(sorted(plain.NAMES)), _NAME))]
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from([">", ">>"])))
        parts.append(draw(_WORD))
    if draw(st.booleans()):
        where = draw(st.integers(1, len(parts)))
        token = draw(_SHELL)
        if draw(st.booleans()):
            parts[where - 1] = token  # in place of a word or target
        else:
            parts.insert(where, token)
    command = draw(st.sampled_from([" ", "  "])).join(parts)
    if draw(st.integers(0, 2)) == 0:  # a here-document, its delimiter quoted or not
        command += " " + draw(_HERE_DOCUMENTS)
    return command


_DELIMITERS = st.sampled_from(["EOF", "x", "E_1", "EOF "])
_BODY_LINES = st.lists(
    st.sampled_from(["hello", "", "$(rm a)", "`touch b`", "EOF", "x", "; rm c", "EOFX", "\\"]),
    max_size=4,
)


@st.composite
def _here_documents(draw: st.DrawFn) -> str:
    """`<<'D'` (or `<<"D"`, `<<D`, `<<-'D'`) then the body, ending with D or not, and
    perhaps a command after it."""
    delimiter = draw(_DELIMITERS)
    quote = draw(st.sampled_from(["'", '"', ""]))
    dash = draw(st.sampled_from(["", "", "-"]))
    lines = [*draw(_BODY_LINES), *([delimiter.strip()] if draw(st.booleans()) else [])]
    after = draw(st.sampled_from(["", "", "\n", "\necho > g", "\nrm d"]))
    return f"<<{dash}{quote}{delimiter.strip()}{quote}\n" + "\n".join(lines) + after


_HERE_DOCUMENTS = _here_documents()


@settings(max_examples=1000, deadline=None, database=None, derandomize=True)
@given(
    command=_commands(),
    cwd=st.sampled_from([CWD, "/", "/a/../b/./c", "//x", "/home/dev/proj/"]),
)
def test_whenever_plain_answers_the_parser_answers_the_same(command: str, cwd: str) -> None:
    assert _agrees_with_the_parser(command, cwd)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    name=st.sampled_from(sorted(plain.NAMES)),
    text=st.text(alphabet="rmab>./ \"'$~*;|&\\{},-2\n", max_size=30),
)
def test_on_any_text_plain_answers_only_as_the_parser_does(name: str, text: str) -> None:
    assert _agrees_with_the_parser(name + " " + text, CWD)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    head=st.sampled_from(["cat > f", "cat >> a/../b", "echo x > f >> g", "cat", "rm f", "tee f"]),
    document=_HERE_DOCUMENTS,
)
def test_a_here_document_is_read_as_the_parser_reads_it(head: str, document: str) -> None:
    assert _agrees_with_the_parser(head + " " + document, CWD)


def test_every_token_in_every_place_is_read_as_the_parser_reads_it() -> None:
    """Each token of `_SHELL` as the name, an argument, and a redirection's target
    (with and without a space after the operator), beside plain words."""
    for token in _SHELL_TOKENS:
        for command in (
            f"{token} > f",
            f"echo {token} > f",
            f"echo a > {token}",
            f"echo a >{token}",
            f"cat {token}",
            f"echo > f {token} >> g",
        ):
            assert _agrees_with_the_parser(command, CWD)


def test_the_generated_commands_reach_plain_answers() -> None:
    """The properties above are not vacuous: their grammar yields plain commands that
    write, here-documents among them."""
    quiet = settings(database=None, derandomize=True, max_examples=2000)
    for wanted in (
        lambda command: plain.targets(command, CWD) not in (None, []),
        lambda command: "\n" in command and plain.targets(command, CWD) not in (None, []),
    ):
        assert find(_commands(), wanted, settings=quiet)
