"""Words for counts in messages people and models read: `1 file`, `2 files`,
never `file(s)`. Pure, built-ins only (hooks use it too)."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 file`, `0 files`, `2 entries` (give `nouns` when adding `s` is wrong)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
