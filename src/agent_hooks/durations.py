"""Spans of time as people read them: `2h ago`, `4h 15m`. Pure, built-ins only."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """`45s`, `12m`, `4h 15m`, `3d 4h`."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def ago(seconds: float) -> str:
    """`just now`, `5m ago`, `2h ago`, `3d ago`."""
    s = max(0, int(seconds))
    if s < 60:
        return "just now"
    if s < 3600:
        return f"{s // 60}m ago"
    if s < 86400:
        return f"{s // 3600}h ago"
    return f"{s // 86400}d ago"
