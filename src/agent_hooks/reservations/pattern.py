"""Reservation patterns, compiled: compile, match and intersect (no I/O on the hot path).

A pattern is relative to the project root and anchored there; otherwise it is a gitignore
wildmatch pattern exactly as ``PathSpec.from_lines(GitIgnoreSpecPattern, ["/" + pattern])``
reads it (``GitIgnoreSpecPattern`` is what pathspec 1.x still registers under the deprecated
name "gitwildmatch"), with one deliberate difference: a bracket class never matches ``/``
(git's FNM_PATHNAME; pathspec's ``b[!a]b`` would match the path ``b/b``).

A path is matched when it, or one of its ancestor directories, is matched exactly: ``**`` as
a whole segment spans zero or more segments, a trailing ``/`` (or a trailing ``/**``) needs
the match to be a proper ancestor. This module imports nothing but ``__future__`` (not even
``posix_fs``): it is on the hook hot path. Turning what a user typed into a normalized pattern is
``pattern_text.normalize`` (CLI and interop only); ``compile`` takes that normalized form.

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
_ANY_CHAR = [0, 46, 48, 0x10FFFF]  # every code point but "/"


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
    return _meet(merged, [0, 46, 48, 0x10FFFF]), close + 1  # drop "/" (a fresh list)


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
        if (p != s) if type(p) is str else not _glob(p, s):
            return False
    return True


def _match_globstar(pat: Compiled, segs: list[str], limit: int) -> bool:
    """Run the pattern as an NFA over segments: O(len(pat) * len(segs)) segment matches."""
    end = len(pat)
    states: tuple[int, ...] | set[int] = _close(pat, 1)
    for s in segs[:limit]:
        nxt: set[int] = set()
        for i in states:
            p = pat[i] if i < end else None
            if p == GLOBSTAR:
                nxt.update(_close(pat, i))
            elif p is not None and ((p == s) if type(p) is str else _glob(p, s)):
                nxt.update(_close(pat, i + 1))
        if end in nxt:
            return True
        if not nxt:
            return False
        states = nxt
    return False


def _close(pat: Compiled, i: int) -> tuple[int, ...]:
    return (i, i + 1) if i < len(pat) and pat[i] == GLOBSTAR else (i,)


def _glob(toks: list[Any], s: str) -> bool:
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
            elif si < ns and (t == ONE or _in(t, ord(s[si]))):
                si += 1
                ti += 1
                continue
        elif si == ns:
            return True
        if bt < 0 or bs >= ns:
            return False
        bs += 1
        ti, si = bt + 1, bs


def _in(ranges: list[int], c: int) -> bool:
    for k in range(0, len(ranges), 2):
        if c < ranges[k]:
            return False
        if c <= ranges[k + 1]:
            return True
    return False


def _meet(r1: list[int], r2: list[int]) -> list[int]:
    if r1 is _ANY_CHAR or r2 is _ANY_CHAR:  # every range list already excludes "/"
        return r2 if r1 is _ANY_CHAR else r1
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


def overlap(a: Compiled, b: Compiled) -> bool:
    """True iff some path is matched by both patterns (symmetric; not a prefix test)."""
    if type(a[1]) is str and type(b[1]) is str and a[1] != b[1]:
        return False
    if all(type(s) is str for s in a[1:]) and all(type(s) is str for s in b[1:]):
        n = min(len(a), len(b))  # two literal paths: one must be a prefix of the other
        return a[1:n] == b[1:n]
    return overlap_witness(a, b) is not None


def overlap_witness(a: Compiled, b: Compiled) -> str | None:
    """A short relative path matched by both patterns, or None when there is none.

    Breadth-first search over pairs of segment positions (memoized, so O(len(a) * len(b))
    segment meets); a pattern whose segments are all consumed keeps absorbing segments,
    since it covers everything below its match.
    """
    queue = [(i, j, 0) for i in _close(a, 1) for j in _close(b, 1)]
    prev: dict[tuple[int, int, int], Any] = dict.fromkeys(queue)
    ea, eb = len(a), len(b)
    for state in queue:
        i, j, stepped = state
        if stepped and i == ea and j == eb:
            path = "/".join(_trace(prev, state))
            if (a[0] or b[0]) and not (matches(a, path) and matches(b, path)):
                path += "/x"  # a "dir/" pattern matched the whole path: go one deeper
            return path
        x, ni = (GLOBSTAR, i) if i == ea or a[i] == GLOBSTAR else (a[i], i + 1)
        y, nj = (GLOBSTAR, j) if j == eb or b[j] == GLOBSTAR else (b[j], j + 1)
        seg = _meet_segments(x, y)
        if seg is not None:
            for nxt in [(p, q, 1) for p in _close(a, ni) for q in _close(b, nj)]:
                if nxt not in prev:
                    prev[nxt] = (state, seg)
                    queue.append(nxt)
    return None


def _trace(prev: dict[Any, Any], state: Any) -> list[Any]:
    parts = []
    while (link := prev[state]) is not None:
        state, part = link
        parts.append(part)
    return parts[::-1]


def _meet_segments(x: Any, y: Any) -> str | None:
    """A segment name matched by both segment patterns (GLOBSTAR: any name), or None."""
    if type(x) is int:
        x, y = y, x
    if type(x) is int:
        return "x"
    if type(x) is str:
        if type(y) is str:
            return x if x == y else None
        return x if type(y) is int or _glob(y, x) else None
    if type(y) is str:
        return y if _glob(x, y) else None
    return _sample(x) if type(y) is int else _meet_globs(x, y)


def _sample(g: list[Any]) -> str | None:
    """A name matched by glob ``g`` (each ``*`` and ``?`` reads "x"); None if a class is empty."""
    if not all(g):
        return None
    return "".join(t if type(t) is str else "x" if type(t) is int else _pick(t) for t in g)


def _meet_globs(g1: list[Any], g2: list[Any]) -> str | None:
    """A name (never "", "." or "..") matched by both globs, or None.

    Fixed characters at both ends meet pairwise; the middle goes to the product automaton,
    first without the dot rule, and again on the whole globs only if that gave "", "." or "..".
    """
    x, y = _expand(g1), _expand(g2)
    head, tail = [], []
    while x and y and x[0] != STAR and y[0] != STAR:
        head.append(_meet(x.pop(0), y.pop(0)))
    while x and y and x[-1] != STAR and y[-1] != STAR:
        tail.append(_meet(x.pop(), y.pop()))
    mid = _product(x, y, 3) if all(head) and all(tail) else None
    if mid is None:
        return None
    name = "".join(map(_pick, head)) + mid + "".join(map(_pick, reversed(tail)))
    return name if name not in ("", ".", "..") else _product(_expand(g1), _expand(g2), 0)


def _product(x: list[Any], y: list[Any], t0: int) -> str | None:
    """Shortest common string of two char-level globs: BFS over (pos in x, pos in y, t).

    t is 0/1/2 after "", ".", ".." and 3 after any other prefix; the goal needs t == 3, so
    t0 == 3 drops the dot rule.
    """
    start = (0, 0, t0)
    prev: dict[tuple[int, int, int], Any] = {start: None}
    queue = [start]
    for state in queue:
        p, q, t = state
        if t == 3 and _done(x, p) and _done(y, q):
            return "".join(map(_pick, _trace(prev, state)))
        for np, r1 in _steps(x, p):
            for nq, r2 in _steps(y, q):
                r = _meet(r1, r2)
                nxt = (np, nq, 3 if t == 3 or r != [46, 46] else t + 1)
                if r and nxt not in prev:
                    prev[nxt] = (state, r)
                    queue.append(nxt)
    return None


def _expand(toks: list[Any]) -> list[Any]:
    """Char-level form of a glob: STAR or a range list per character."""
    out: list[Any] = []
    for t in toks:
        if type(t) is str:
            out += ([ord(c), ord(c)] for c in t)
        else:
            out.append(_ANY_CHAR if t == ONE else t)
    return out


def _steps(x: list[Any], p: int) -> list[tuple[int, list[int]]]:
    if p < len(x) and x[p] == STAR:
        return [(p, _ANY_CHAR), *_steps(x, p + 1)]
    return [(p + 1, x[p])] if p < len(x) else []


def _done(x: list[Any], p: int) -> bool:
    return p == len(x) or (p == len(x) - 1 and x[p] == STAR)  # stars never repeat


def _pick(r: list[int]) -> str:
    """A pleasant character from non-empty ranges; "." only when nothing else is there."""
    if r[0] == r[-1]:
        return chr(r[0])
    for c in (120, 97, 48, 95):  # x a 0 _
        if _in(r, c):
            return chr(c)
    for k in range(0, len(r), 2):
        for c in (max(r[k], 33), r[k]):
            if c <= r[k + 1] and c != 46:
                return chr(c)
    return "."
