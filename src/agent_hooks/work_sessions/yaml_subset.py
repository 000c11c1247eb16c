"""The design document's YAML format of a work-session file (design document 003: `<ID>.yaml`), read
by a small parser for the subset that format uses: block mappings and
sequences, `|`/`>` block scalars, quoted and plain scalars, `[]`/`{}` and
comments.

Invariants:

* Anything beyond the subset (flow collections with items, anchors, tags, tabs in
  indentation, text after a quoted value, ...) raises WorkSessionError naming the
  file and the line, with the hint to convert the file to JSON: nothing is
  guessed.
* The top level must be a mapping; what is read is handed to
  `work_session.normalize` by the store, so types are not judged here.
* Only built-in modules are imported; work_session_store loads this module only
  when it reads a `.yaml`/`.yml` file.
"""

from __future__ import annotations

from agent_hooks.work_sessions import work_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any


def parse_yaml(text: str, source: str = "<yaml>") -> dict[str, Any]:
    """The design document's YAML subset as a dict: block mappings and sequences, `|`/`>`
    block scalars, quoted and plain scalars, `[]`/`{}`, comments. Anything else
    raises WorkSessionError naming the line."""
    parser = _Yaml(text, source)
    first = parser.peek()
    value = parser.node(first[0]) if first else {}
    if parser.peek() is not None:
        parser.fail("unexpected indentation")
    if not isinstance(value, dict):
        raise work_session.WorkSessionError(f"{source}: a work session file must be a mapping")
    return value


class _Yaml:
    def __init__(self, text: str, source: str) -> None:
        self.lines = text.replace("\t", "\x00").splitlines()
        self.i = 0  # the next line to read
        self.line = 0  # the line being interpreted (for errors)
        self.source = source

    def fail(self, why: str) -> None:
        raise work_session.WorkSessionError(
            f"{self.source}: line {self.line + 1}: {why} (only a simple YAML subset is "
            "read: mappings, lists, plain and quoted scalars; convert the file to JSON otherwise)"
        )

    def peek(self) -> tuple[int, str] | None:
        while self.i < len(self.lines):
            line = self.lines[self.i]
            content = line.lstrip(" ")
            if content and not content.startswith("#") and content.rstrip() != "---":
                self.line = self.i
                if content.startswith("\x00"):
                    self.fail("tabs are not allowed in indentation")
                return len(line) - len(content), content.rstrip()
            self.i += 1
        return None

    def node(self, indent: int) -> object:
        head = self.peek()
        assert head is not None
        if head[1] == "-" or head[1].startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while (head := self.peek()) is not None and head[0] == indent:
            content = head[1]
            if content == "-" or content.startswith("- "):
                break
            key, rest = self.split_key(content)
            self.i += 1
            out[key] = self.value(rest, indent)
        return out

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while (
            (head := self.peek()) is not None
            and head[0] == indent
            and (head[1] == "-" or head[1].startswith("- "))
        ):
            item = head[1][1:].strip()
            if not item or item.startswith("#"):
                self.i += 1
                nxt = self.peek()
                out.append(self.node(nxt[0]) if nxt and nxt[0] > indent else None)
            elif _is_mapping_entry(item):
                line = self.lines[self.i]  # "- key: v" becomes "  key: v": a mapping further in
                self.lines[self.i] = line[:indent] + " " + line[indent + 1 :]
                out.append(self.mapping(_indent_of(self.lines[self.i])))
            else:
                self.i += 1
                out.append(self.scalar(item))
        return out

    def value(self, rest: str, indent: int) -> object:
        if rest.split(" #")[0].strip() in ("|", "|-", "|+", ">", ">-", ">+"):
            return self.block_scalar(rest.split(" #")[0].strip(), indent)
        if rest.strip() and not rest.strip().startswith("#"):
            return self.scalar(rest)
        nxt = self.peek()
        if (
            nxt is None
            or nxt[0] < indent
            or (nxt[0] == indent and not (nxt[1] == "-" or nxt[1].startswith("- ")))
        ):
            return None
        return self.node(nxt[0])

    def block_scalar(self, style: str, indent: int) -> str:
        body: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            body.append(line)
            self.i += 1
        while body and not body[-1].strip():
            body.pop()
        cut = min((len(b) - len(b.lstrip(" ")) for b in body if b.strip()), default=0)
        lines = [b[cut:].replace("\x00", "\t") for b in body]
        text = " ".join(lines) if style.startswith(">") else "\n".join(lines)
        return text if style.endswith("-") or not text else text + "\n"

    def split_key(self, content: str) -> tuple[str, str]:
        if content[0] in "\"'":
            key, rest = _quoted(content, self.fail)
            if not rest.startswith(":"):
                self.fail("expected ':' after a quoted key")
            return key, rest[1:]
        at = content.find(": ")
        if at < 0 and content.endswith(":"):
            at = len(content) - 1
        if at <= 0:
            self.fail(f"expected 'key: value', found {content[:40]!r}")
        return content[:at].strip(), content[at + 1 :]

    def scalar(self, text: str) -> object:
        text = text.strip()
        if text[:1] in ("'", '"'):
            value, rest = _quoted(text, self.fail)
            if rest.strip() and not rest.strip().startswith("#"):
                self.fail("text after a quoted value")
            return value
        text = text.split(" #")[0].strip().replace("\x00", "\t")
        if text in ("", "~", "null", "Null", "NULL"):
            return None
        if text in ("true", "True", "false", "False"):
            return text.lower() == "true"
        if text in ("[]", "{}"):
            return [] if text == "[]" else {}
        if text[:1] in "[{&*!|>%@`":
            self.fail(f"unsupported YAML syntax {text[:20]!r}")
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isdigit():
            return int(text)
        return text


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_mapping_entry(item: str) -> bool:
    if item[:1] in ("'", '"'):
        return False
    return ": " in item or item.endswith(":")


def _quoted(text: str, fail: Callable[[str], None]) -> tuple[str, str]:
    """(the quoted string at the start of `text`, what follows it)."""
    quote = text[0]
    out = []
    i = 1
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r"}
    while i < len(text):
        ch = text[i]
        if ch == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out).replace("\x00", "\t"), text[i + 1 :]
        if ch == "\\" and quote == '"':
            code = text[i + 1 : i + 2]
            if code == "u":
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                except ValueError:
                    fail("bad \\u escape")
                i += 6
                continue
            if code not in escapes:
                fail(f"unsupported escape \\{code}")
            out.append(escapes[code])
            i += 2
            continue
        out.append(ch)
        i += 1
    fail("unterminated quoted string")
    return "", ""
