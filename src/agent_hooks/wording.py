"""Words in messages people and models read: counts (`1 file`, `2 files`, never
`file(s)`), and text from one agent made fit for another's context (`one_line`).
Pure, built-ins only (hooks use it too)."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 file`, `0 files`, `2 entries` (give `nouns` when adding `s` is wrong)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def one_line(text: object, limit: int) -> str:
    """Text from one agent as another agent's context may carry it: control
    characters (newlines, escapes, bidi and zero-width marks included) shown as
    `?`, at most `limit` characters."""
    if not isinstance(text, str):
        return ""
    clean = "".join(c if c.isprintable() and c not in "\u2028\u2029" else "?" for c in text)
    return clean if len(clean) <= limit else clean[: max(0, limit - 1)] + "…"
