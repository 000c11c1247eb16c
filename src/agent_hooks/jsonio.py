"""JSON for the hook hot path, built on CPython's C accelerator alone.

Importing the `json` package pulls in `re` and roughly doubles a hook's start-up
time (docs/adr/0005-hot-path-budget.md), so hooks parse and emit JSON through
`_json` directly. Invariants:

* `loads` accepts exactly one JSON value surrounded by optional whitespace and
  raises `ValueError` for anything else (empty input, trailing garbage, bad UTF-8).
* `dumps` emits compact UTF-8 JSON (non-ASCII kept as is) and refuses NaN/Infinity,
  so every document we write is strict JSON that other tools can read.
* `encode` is `dumps` as UTF-8 bytes that never fails on a lone surrogate (text
  decoded from bytes that are not UTF-8 — a file name, an argument — or read from
  a `"\\ud800"` escape): it is written as that `\\udXXX` escape, so the bytes are
  valid UTF-8 and read back to the same string.
* Only the error path of `loads` imports the `json` package (the C scanner needs
  `json.decoder` loaded to build its exception, and it gives the precise reason);
  the success path imports nothing.
"""

from __future__ import annotations

import _json

_WHITESPACE = " \t\n\r"


class _DecoderContext:
    """The attribute bag `_json.make_scanner` reads its settings from."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}  # noqa: RUF012 (read by the C scanner, never mutated here)

    @staticmethod
    def parse_constant(name: str) -> float:
        raise ValueError(f"JSON constant {name} is not allowed")


_scan = _json.make_scanner(_DecoderContext())  # type: ignore[arg-type]


def _reject_nonfinite(obj: object) -> object:
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


_encode = _json.make_encoder(
    None,  # markers: None disables the circular-reference check (our documents are trees)
    _reject_nonfinite,
    _json.encode_basestring,
    None,  # indent: the C encoder only does compact output
    ":",
    ",",
    False,  # sort_keys
    False,  # skipkeys
    False,  # allow_nan
)


def loads(data: str | bytes) -> object:
    """Parse one JSON document; raise ValueError with a one-line reason otherwise."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 at byte {exc.start}") from None
    else:
        text = data
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if start == len(text):
        raise ValueError("empty input")
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError, RecursionError, SystemError):
        raise ValueError(_explain(text)) from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data after the JSON value at offset {end}")
    return value


def _explain(text: str) -> str:
    """The one-line reason the stdlib parser gives for rejecting `text`."""
    import json  # error path only: `json` imports `re`

    try:
        json.loads(text)
    except RecursionError:
        return "not JSON: nested too deeply"
    except ValueError as exc:
        return f"not JSON: {str(exc).splitlines()[0]}"
    return "not strict JSON (NaN and Infinity are not allowed)"


def dumps(obj: object) -> str:
    """Serialize to compact JSON; raise TypeError/ValueError for what JSON cannot hold."""
    return "".join(_encode(obj, 0))


def encode(obj: object) -> bytes:
    """`dumps` as UTF-8 bytes; lone surrogates become `\\udXXX` escapes."""
    return utf8(dumps(obj))


def utf8(json_text: str) -> bytes:
    """JSON text as UTF-8 bytes; lone surrogates become `\\udXXX` escapes."""
    try:
        return json_text.encode("utf-8")
    except UnicodeEncodeError:  # rare: only text that is not valid Unicode gets here
        return escape_surrogates(json_text).encode("utf-8")


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate written as a `\\udXXX` escape. Only valid
    on JSON text: a raw surrogate can stand only inside a string there, where the
    escape means the same character."""
    return "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
