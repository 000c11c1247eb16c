"""Reservation patterns, compiled: compile and match (no I/O on the hot path).

A pattern is relative to the project root and anchored there; otherwise it is a gitignore
wildmatch pattern exactly as ``PathSpec.from_lines(GitIgnoreSpecPattern, ["/" + pattern])``
reads it (``GitIgnoreSpecPattern`` is what pathspec 1.x still registers under the deprecated
name "gitwildmatch"), with one deliberate difference: a bracket class never matches ``/``
(git's FNM_PATHNAME; pathspec's ``b[!a]b`` would match the path ``b/b``).

A path is matched when it, or one of its ancestor directories, is matched exactly: ``**`` as
a whole segment spans zero or more segments, a trailing ``/`` (or a trailing ``/**``) needs
the match to be a proper ancestor. This module imports nothing but ``__future__`` (not even
``posix_fs``): it is on the hook hot path. Turning what a user typed into a normalized pattern is
``pattern_input.normalize`` (CLI and interop only); ``compile`` takes that normalized form.

Compiled form (JSON: lists, strings and ints only), read on the hot path without parsing::

    [dir, seg, seg, ...]
    dir   "/" when the segments must match a proper ancestor of the path, else ""
    seg   0 -> "**" (zero or more whole segments)
          "name" -> a literal segment
          [tok, ...] -> a glob segment; tok is "run" (literal text), 1 (``*``: any run),
          2 (``?``: one character) or [lo, hi, lo, hi, ...] (one character in the sorted,
          disjoint, inclusive code-point ranges; negated classes are stored complemented and
          no class contains "/")

Invariants: no two adjacent 0 segments; a 0 segment is last only when it is the only one
(``a/**`` compiles like ``a/``); in a glob adjacent ``*`` merge, adjacent literal runs merge
(a one-character class becomes literal text), and a glob has a non-literal token.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Compiled = list[Any]

GLOBSTAR = 0
STAR = 1
ONE = 2
ANY_CHAR = [0, 46, 48, 0x10FFFF]  # every code point but "/"


class PatternError(ValueError):
    """A pattern that cannot be a reservation; ``str(err)`` is one line saying why."""


def compile(pattern: str) -> Compiled:
    """Compile a normalized pattern into the JSON form described in the module docstring."""
    segs = pattern.split("/")
    flag = ""
    if len(segs) > 1 and segs[-1] == "":
        segs.pop()
        flag = "/"
    out: Compiled = [flag]
    for seg in segs:
        if seg in ("", ".", ".."):
            raise PatternError(f"{pattern!r} is not normalized (segment {seg!r})")
        if seg != "**":
            out.append(_compile_segment(seg))
        elif out[-1] != GLOBSTAR:
            out.append(GLOBSTAR)
    if len(out) > 2 and out[-1] == GLOBSTAR:
        out.pop()
        out[0] = "/"
    return out


def _compile_segment(seg: str) -> str | list[Any]:
    toks: list[Any] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        i += 1
        if c == "*":
            if not toks or toks[-1] != STAR:
                toks.append(STAR)
            continue
        tok: Any = ONE if c == "?" else c
        if c == "[":
            tok, i = _compile_class(seg, i)
            if len(tok) == 2 and tok[0] == tok[1]:
                tok = chr(tok[0])
        if type(tok) is str and toks and type(toks[-1]) is str:
            toks[-1] += tok
        else:
            toks.append(tok)
    if len(toks) > 1 or type(toks[0]) is not str:
        return toks
    if toks[0] in (".", ".."):
        raise PatternError(f"{seg!r} can only match {toks[0]!r}, which names no file")
    return str(toks[0])


def _compile_class(seg: str, i: int) -> tuple[list[int], int]:
    """Parse the class after the ``[`` at ``i - 1`` exactly as pathspec and ``re`` read it."""
    neg = i < len(seg) and seg[i] in "!^"
    start = i + neg
    close = seg.find("]", start + 1 if seg[start : start + 1] == "]" else start)
    if close < 0:
        raise PatternError(f"{seg!r} has an unclosed '[' (write '[[]' for a literal '[')")
    body = seg[start:close]
    if "[:" in body:
        raise PatternError(f"{seg!r}: POSIX classes such as [:alpha:] are not supported")
    pairs = []
    k = 0
    while k < len(body):
        lo = hi = ord(body[k])
        if k + 2 < len(body) and body[k + 1] == "-":
            hi = ord(body[k + 2])
            if hi < lo:
                raise PatternError(f"{seg!r}: range {body[k : k + 3]!r} is reversed")
            k += 2
        pairs.append((lo, hi))
        k += 1
    pairs.sort()
    merged: list[int] = []
    for lo, hi in pairs:
        if merged and lo <= merged[-1] + 1:
            merged[-1] = max(merged[-1], hi)
        else:
            merged += (lo, hi)
    if neg:
        bounds, merged = [-1, *merged, 0x110000], []
        for j in range(0, len(bounds), 2):
            if bounds[j] + 1 <= bounds[j + 1] - 1:
                merged += (bounds[j] + 1, bounds[j + 1] - 1)
    return meet_ranges(merged, [0, 46, 48, 0x10FFFF]), close + 1  # drop "/" (a fresh list)


def literal(relpath: str) -> Compiled:
    """Compile a concrete path (every character literal) covering it and its contents.

    Empty and ``.`` segments drop; an empty path is the whole project (``**``)."""
    segs = [s for s in relpath.split("/") if s and s != "."]
    if ".." in segs:
        raise PatternError(f"{relpath!r} is not normalized (contains '..')")
    return ["", *segs] if segs else ["", GLOBSTAR]


def first_literal(compiled: Compiled) -> str | None:
    """The first segment when it is literal (to group an index by leading directory)."""
    seg = compiled[1]
    return seg if type(seg) is str else None


def matches(compiled: Compiled, relpath: str) -> bool:
    """True when ``relpath`` (normalized, ``/``-separated) or an ancestor is matched."""
    segs = relpath.split("/")
    limit = len(segs) - 1 if compiled[0] else len(segs)  # longest prefix that may match
    if GLOBSTAR in compiled:
        return _match_globstar(compiled, segs, limit)
    if len(compiled) - 1 > limit:
        return False
    for k in range(1, len(compiled)):
        p, s = compiled[k], segs[k - 1]
        if (p != s) if type(p) is str else not glob_matches(p, s):
            return False
    return True


def _match_globstar(pat: Compiled, segs: list[str], limit: int) -> bool:
    """Run the pattern as an NFA over segments: O(len(pat) * len(segs)) segment matches."""
    end = len(pat)
    states: tuple[int, ...] | set[int] = closure(pat, 1)
    for s in segs[:limit]:
        nxt: set[int] = set()
        for i in states:
            p = pat[i] if i < end else None
            if p == GLOBSTAR:
                nxt.update(closure(pat, i))
            elif p is not None and ((p == s) if type(p) is str else glob_matches(p, s)):
                nxt.update(closure(pat, i + 1))
        if end in nxt:
            return True
        if not nxt:
            return False
        states = nxt
    return False


def closure(pat: Compiled, i: int) -> tuple[int, ...]:
    """The pattern positions reachable from `i` without reading a segment (a `**`
    may match none)."""
    return (i, i + 1) if i < len(pat) and pat[i] == GLOBSTAR else (i,)


def glob_matches(toks: list[Any], s: str) -> bool:
    """Match one glob segment, backtracking only to the last ``*`` (no exponential blowup)."""
    ti = si = 0
    nt, ns = len(toks), len(s)
    bt = bs = -1
    while True:
        if ti < nt:
            t = toks[ti]
            if type(t) is str:
                if ti == bt + 1 and bt >= 0:  # right after the last "*": jump to the text
                    if ti == nt - 1:
                        return ns - len(t) >= si and s.endswith(t)
                    k = s.find(t, si)
                    if k < 0:
                        return False
                    bs, si, ti = k, k + len(t), ti + 1
                    continue
                if s.startswith(t, si):
                    si += len(t)
                    ti += 1
                    continue
            elif t == STAR:
                bt, bs = ti, si
                ti += 1
                continue
            elif si < ns and (t == ONE or in_ranges(t, ord(s[si]))):
                si += 1
                ti += 1
                continue
        elif si == ns:
            return True
        if bt < 0 or bs >= ns:
            return False
        bs += 1
        ti, si = bt + 1, bs


def in_ranges(ranges: list[int], c: int) -> bool:
    for k in range(0, len(ranges), 2):
        if c < ranges[k]:
            return False
        if c <= ranges[k + 1]:
            return True
    return False


def meet_ranges(r1: list[int], r2: list[int]) -> list[int]:
    """The code points in both sorted, disjoint range lists (`ANY_CHAR`: every one
    but "/")."""
    if r1 is ANY_CHAR or r2 is ANY_CHAR:  # every range list already excludes "/"
        return r2 if r1 is ANY_CHAR else r1
    out: list[int] = []
    i = j = 0
    while i < len(r1) and j < len(r2):
        lo, hi = max(r1[i], r2[j]), min(r1[i + 1], r2[j + 1])
        if lo <= hi:
            out += (lo, hi)
        if r1[i + 1] < r2[j + 1]:
            i += 2
        else:
            j += 2
    return out
