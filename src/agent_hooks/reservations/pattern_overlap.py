"""Reservation patterns intersected: do two compiled patterns (`pattern.compile`)
match a path in common, and which? `reserve` asks it of every live reservation
(`reservation.conflicts`); a hook only when a shell command names a directory or a glob
(`blocking`), so it lives apart from matching, which every hook among reservations loads.

Invariants: `overlap` is symmetric and exact (not a prefix test): True iff some path is
matched by both; `overlap_witness` returns such a path, short, or None exactly when
`overlap` is False. Imports nothing but `pattern`.
"""

from __future__ import annotations

from agent_hooks.reservations import pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.reservations.pattern import Compiled


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
    queue = [(i, j, 0) for i in pattern.closure(a, 1) for j in pattern.closure(b, 1)]
    prev: dict[tuple[int, int, int], Any] = dict.fromkeys(queue)
    ea, eb = len(a), len(b)
    for state in queue:
        i, j, stepped = state
        if stepped and i == ea and j == eb:
            path = "/".join(_trace(prev, state))
            if (a[0] or b[0]) and not (pattern.matches(a, path) and pattern.matches(b, path)):
                path += "/x"  # a "dir/" pattern matched the whole path: go one deeper
            return path
        x, ni = (pattern.GLOBSTAR, i) if i == ea or a[i] == pattern.GLOBSTAR else (a[i], i + 1)
        y, nj = (pattern.GLOBSTAR, j) if j == eb or b[j] == pattern.GLOBSTAR else (b[j], j + 1)
        seg = _meet_segments(x, y)
        if seg is not None:
            for nxt in [(p, q, 1) for p in pattern.closure(a, ni) for q in pattern.closure(b, nj)]:
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
        return x if type(y) is int or pattern.glob_matches(y, x) else None
    if type(y) is str:
        return y if pattern.glob_matches(x, y) else None
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
    while x and y and x[0] != pattern.STAR and y[0] != pattern.STAR:
        head.append(pattern.meet_ranges(x.pop(0), y.pop(0)))
    while x and y and x[-1] != pattern.STAR and y[-1] != pattern.STAR:
        tail.append(pattern.meet_ranges(x.pop(), y.pop()))
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
                r = pattern.meet_ranges(r1, r2)
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
            out.append(pattern.ANY_CHAR if t == pattern.ONE else t)
    return out


def _steps(x: list[Any], p: int) -> list[tuple[int, list[int]]]:
    if p < len(x) and x[p] == pattern.STAR:
        return [(p, pattern.ANY_CHAR), *_steps(x, p + 1)]
    return [(p + 1, x[p])] if p < len(x) else []


def _done(x: list[Any], p: int) -> bool:
    return p == len(x) or (p == len(x) - 1 and x[p] == pattern.STAR)  # stars never repeat


def _pick(r: list[int]) -> str:
    """A pleasant character from non-empty ranges; "." only when nothing else is there."""
    if r[0] == r[-1]:
        return chr(r[0])
    for c in (120, 97, 48, 95):  # x a 0 _
        if pattern.in_ranges(r, c):
            return chr(c)
    for k in range(0, len(r), 2):
        for c in (max(r[k], 33), r[k]):
            if c <= r[k + 1] and c != 46:
                return chr(c)
    return "."
