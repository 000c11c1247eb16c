"""Reservation patterns as users type them: check and normalize to the canonical text.

``normalize`` turns what a user (the CLI) or another tool (mcp_agent_mail interop) wrote into
the root-relative form that ``pattern.compile`` accepts; the compiled form, matching and
overlap live in ``pattern``. Only the CLI and interop import this module (it reads the file
system through ``posix_fs`` to resolve links), so the hook hot path never loads it.

Invariants: a normalized pattern is non-empty, at most ``MAX_CHARS`` characters and
``MAX_SEGMENTS`` segments, free of control characters, never starts with ``!`` or ``#``, has
no empty, ``.`` or ``..`` segment and never names anything outside the project root (``..``
never climbs above it; absolute paths must lie inside it, lexically or through links). It is
accepted by ``pattern.compile`` and normalizes to itself. Names taken from the file system
(``cwd``, a resolved root) are escaped so they match only themselves. Every failure is a
``pattern.PatternError`` with a one-line message.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks.reservations.pattern import PatternError
from agent_hooks.reservations.pattern import compile as compile_pattern

MAX_CHARS = 1024
MAX_SEGMENTS = 64


def normalize(pattern: str, project_root: str, cwd: str | None = None) -> str:
    """Return the canonical root-relative form of a user's pattern, or raise PatternError.

    Whitespace around it is stripped, ``\\`` is ``/``, empty and ``.`` segments drop, ``..``
    resolves lexically (never above the root, never right after a wildcard segment), runs of
    ``**`` collapse, and a trailing ``/`` stays. An absolute pattern must lie inside the
    project (compared lexically, then through ``os.path.realpath`` of the root and of the
    pattern's literal leading part); a relative one is taken relative to ``cwd`` when ``cwd``
    lies inside the project, else to the root. A pattern naming the root itself (``.``,
    ``./``, ``src/..``, the root's absolute path) normalizes to ``**``, the whole project.
    Directory names taken from ``cwd`` or from the file system are escaped (``a*`` becomes
    ``a[*]``). The result is accepted by ``pattern.compile`` and normalizes to itself.
    """
    text = pattern.strip()
    _check_text(text, pattern)
    text = text.replace("\\", "/")
    if text.startswith("/"):
        segs = _inside_root(text, project_root, pattern)
    else:
        base = _relative_to_root(cwd, project_root) if cwd else None
        segs = _resolve(text.split("/"), pattern, [_escape(s) for s in base or ()])
    if not segs:
        return "**"
    out = "/".join(segs) + ("/" if text.endswith("/") else "")
    _check_text(out, pattern)
    if len(segs) > MAX_SEGMENTS:
        raise PatternError(f"{pattern!r} has more than {MAX_SEGMENTS} segments")
    compile_pattern(out)
    return out


def _check_text(text: str, original: str) -> None:
    if not text:
        raise PatternError("empty pattern")
    if len(text) > MAX_CHARS:
        raise PatternError(f"pattern is longer than {MAX_CHARS} characters")
    for ch in text:
        if ch < " " or "\x7f" <= ch <= "\x9f":
            raise PatternError(f"{original!r} contains control character U+{ord(ch):04X}")
    if text[0] == "!":
        raise PatternError(f"{original!r}: a leading '!' (negation) means nothing in a reservation")
    if text[0] == "#":
        raise PatternError(f"{original!r}: a leading '#' would make it a comment")


def _resolve(segs: list[str], original: str, base: list[str] | None = None) -> list[str]:
    out = list(base or ())
    fixed = len(out)  # segments from the file system: literal, '..' may remove them
    for seg in segs:
        if seg in ("", "."):
            continue
        if seg == "..":
            if not out:
                raise PatternError(f"{original!r} leaves the project")
            if len(out) > fixed and _wild(out[-1]):
                raise PatternError(f"{original!r}: '..' after a wildcard segment is ambiguous")
            out.pop()
            fixed = min(fixed, len(out))
        elif not (seg == "**" and out and out[-1] == "**"):
            out.append(seg)
    return out


def _inside_root(text: str, root: str, original: str) -> list[str]:
    segs = _resolve(text.split("/"), original)
    rest = _under(segs, root)
    if rest is not None:
        return rest
    n = next((k for k, seg in enumerate(segs) if _wild(seg)), len(segs))
    real = _relative_to_root("/" + "/".join(segs[:n]), root)
    if real is None:
        raise PatternError(f"{original!r} is outside the project {root}")
    return [_escape(s) for s in real] + segs[n:]


def _relative_to_root(path: str, root: str) -> list[str] | None:
    """``path``'s segments below ``root``, compared lexically, then with links resolved."""
    return _under(_split(fs.abspath(path)), root) or _under(_split(fs.realpath(path)), root)


def _under(segs: list[str], root: str) -> list[str] | None:
    for base in (_split(fs.abspath(root)), _split(fs.realpath(root))):
        if segs[: len(base)] == base:
            return segs[len(base) :]
    return None


def _split(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _wild(seg: str) -> bool:
    return "*" in seg or "?" in seg or "[" in seg


def _escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
