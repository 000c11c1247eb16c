"""JSON for the hook hot path, built on CPython's C accelerator alone.

Importing the `json` package pulls in `re` and roughly doubles a hook's start-up
time (docs/adr/0005-hot-path-budget.md), so hooks parse and emit JSON through
`_json` directly. Invariants:

* `loads` accepts exactly one JSON value surrounded by optional whitespace and
  raises `ValueError` for anything else (empty input, trailing garbage, bad UTF-8).
* `dumps` emits compact UTF-8 JSON (non-ASCII kept as is) and refuses NaN/Infinity,
  so every document we write is strict JSON that other tools can read.
* `encode` is `dumps` as UTF-8 bytes for any str: a lone surrogate (a JSON
  `\\ud800` escape read back, a path decoded with surrogateescape) has no UTF-8
  form and is written as its JSON escape, so it reads back as it was and never
  makes a write (or a hook's output) fail.
* Only the error path of `loads` imports the `json` package (the C scanner needs
  `json.decoder` loaded to build its exception, and it gives the precise reason);
  the success path imports nothing.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"


def _no_constants(name: str) -> float:
    raise ValueError(f"JSON constant {name} is not allowed")


# The settings `_json.make_scanner` reads as attributes, on a bare module object: a class
# made to hold them costs ~65 k instructions to create, on every hook's start.
_settings = type(_json)("agent_hooks.jsonio.decoder_settings")
vars(_settings).update(
    strict=True,
    object_hook=None,
    object_pairs_hook=None,
    parse_float=float,
    parse_int=int,
    parse_constant=_no_constants,
    memo={},
)
_scan = _json.make_scanner(_settings)  # type: ignore[arg-type]


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
    """`dumps` as UTF-8 bytes. Characters appear raw only inside JSON strings, so a
    lone surrogate's backslash escape (`\\udc80`) is exactly its JSON escape."""
    return to_bytes(dumps(obj))


def to_bytes(text: str) -> bytes:
    """JSON text (or text built from `dumps` pieces) as UTF-8, lone surrogates escaped."""
    return text.encode("utf-8", "backslashreplace")


def read_object(path: str) -> dict[str, Any] | None:
    """The JSON object in the file at `path`; None when it is missing, unreadable,
    not JSON or not an object (a caller that must tell these apart reads the file
    itself)."""
    from agent_hooks import posix_fs as fs

    try:
        data = fs.read_file(path)
        doc = loads(data) if data is not None else None
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
