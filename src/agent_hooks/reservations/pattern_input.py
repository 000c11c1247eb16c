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
(``cwd``, a resolved root) are escaped so they match only themselves, and so is a segment
with ``[`` that names an existing file or directory (``app/[slug]``, a Next.js or SvelteKit
route folder): on disk it is a name, not a character class (docs/adr/0006-reservations.md).
Every failure is a ``pattern.PatternError`` with a one-line message.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks.reservations.pattern import PatternError
from agent_hooks.reservations.pattern import compile as compile_pattern

MAX_CHARS = 1024
MAX_SEGMENTS = 64


def normalize(
    pattern: str, project_root: str, cwd: str | None = None, notes: list[str] | None = None
) -> str:
    """Return the canonical root-relative form of a user's pattern, or raise PatternError.

    Whitespace around it is stripped, ``\\`` is ``/``, empty and ``.`` segments drop, ``..``
    resolves lexically (never above the root, never right after a wildcard segment), runs of
    ``**`` collapse, and a trailing ``/`` stays. An absolute pattern must lie inside the
    project (compared lexically, then through ``os.path.realpath`` of the root and of the
    pattern's literal leading part); a relative one is taken relative to ``cwd`` when ``cwd``
    lies inside the project, else to the root. A pattern naming the root itself (``.``,
    ``./``, ``src/..``, the root's absolute path) normalizes to ``**``, the whole project.
    Directory names taken from ``cwd`` or from the file system are escaped (``a*`` becomes
    ``a[*]``). A segment holding ``[`` below literal segments is looked up under the root:
    when that path exists it is escaped (``app/[slug]/**`` becomes ``app/[[]slug]/**``, the
    folder itself), else it stays a class; either way `notes`, when given, gets one line
    saying which and how to write the other. The result is accepted by ``pattern.compile``
    and normalizes to itself while the file system does not change.
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
    segs = _bracket_names(segs, project_root, notes)
    out = "/".join(segs) + ("/" if text.endswith("/") else "")
    _check_text(out, pattern)
    if len(segs) > MAX_SEGMENTS:
        raise PatternError(f"{pattern!r} has more than {MAX_SEGMENTS} segments")
    compile_pattern(out)
    return out


def _bracket_names(segs: list[str], root: str, notes: list[str] | None) -> list[str]:
    """`segs` with each segment holding ``[`` that names an existing path (below
    literal segments only: a wildcard above it names no one path) escaped."""
    out: list[str] = []
    named: list[int] = []  # the segments escaped: names on disk
    classes: list[int] = []  # the bracket segments left as classes: no such name
    on_disk: str | None = root  # the path the literal segments so far name
    for seg in segs:
        if on_disk is not None and "[" in seg:
            path = fs.join(on_disk, seg)
            if fs.lexists(path):
                named.append(len(out))
                out.append(_escape(seg))
                on_disk = path
                continue
            if _literal(seg) is None:
                classes.append(len(out))
        name = _literal(seg)
        on_disk = fs.join(on_disk, name) if on_disk is not None and name is not None else None
        out.append(seg)
    if notes is not None:
        whole = "/".join(out)
        for i in named:
            notes.append(
                f"{'/'.join(segs[: i + 1])} exists: {segs[i]} is taken literally, not as a"
                f" character class ({whole!r})"
            )
        for i in classes:
            literal = "/".join([*out[:i], _escape(segs[i]), *out[i + 1 :]])
            notes.append(
                f"no {'/'.join(segs[: i + 1])} exists: {segs[i]} is a character class (one of"
                f" the characters in brackets); to mean the name itself: {literal!r}"
            )
    return out


def _literal(seg: str) -> str | None:
    """The one name a segment matches (``[[]slug]`` → ``[slug]``), or None for a
    wildcard or a segment that does not compile."""
    if seg == "**":
        return None
    try:
        compiled = compile_pattern(seg)
    except PatternError:
        return None
    name = compiled[1] if len(compiled) == 2 else None
    return name if isinstance(name, str) else None


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
