"""Times as written in agent-hooks' documents: `YYYY-MM-DDTHH:MM:SSZ` out, ISO 8601 in.

Invariants:

* `iso` writes UTC to the second with a `Z`; `parse_iso(iso(t)) == t` for every whole t.
* `parse_iso` reads `YYYY-MM-DD`, optionally followed by `T`, `t` or a space and
  `HH:MM[:SS[.fraction]]`, optionally followed by `Z`, `z`, `±HH:MM`, `±HHMM` or `±HH`;
  a time without an offset is UTC. It agrees with `datetime.fromisoformat` on every
  such string (the tests compare them) and returns None for anything else, never raising.
* `local` and `local_iso` are for people: local time, to the minute, with the
  zone (`2026-11-21 21:46 CET`); documents and `--json` keep UTC.
* Built-ins only (no `datetime`, no `time.strptime`, no platform `date` flags: a
  macOS-only date flag once made every date unparseable on Linux and every
  session was deleted).
"""

from __future__ import annotations

import time

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def iso(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def local(moment: float) -> str:
    """An epoch time as people read it: local time to the minute, with the zone."""
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(moment))


def local_iso(text: object, missing: str = "?") -> str:
    """An ISO 8601 time from a document in local time (`local`); text that does not
    parse is shown as it is, and no text as `missing`."""
    moment = parse_iso(text)
    if moment is not None:
        return local(moment)
    return text if isinstance(text, str) and text else missing


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _month_days(y: int, m: int) -> int:
    leap = m == 2 and y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return _DAYS[m - 1] + leap


def _digits(text: str, n: int) -> int | None:
    part = text[:n]
    return int(part) if len(part) == n and part.isascii() and part.isdigit() else None


def _offset(rest: str) -> int | None:
    """Seconds east of UTC for `Z`, `±HH:MM`, `±HHMM`, `±HH`, or "" (UTC)."""
    if rest in ("", "Z", "z"):
        return 0
    if rest[0] not in "+-":
        return None
    body = rest[1:]
    if len(body) == 5 and body[2] == ":":
        body = body[:2] + body[3:]
    if len(body) not in (2, 4):
        return None
    hours, minutes = _digits(body, 2), _digits(body[2:], 2) if len(body) == 4 else 0
    if hours is None or minutes is None or hours > 23 or minutes > 59:
        return None
    return (hours * 3600 + minutes * 60) * (1 if rest[0] == "+" else -1)


def parse_iso(text: object) -> float | None:
    """Seconds since the epoch for an ISO 8601 time (see the module docstring), else None."""
    if not isinstance(text, str) or len(text) < 10 or len(text) > 64:
        return None
    y, mo, d = _digits(text, 4), _digits(text[5:], 2), _digits(text[8:], 2)
    if y is None or mo is None or d is None or text[4] != "-" or text[7] != "-":
        return None
    if not (y >= 1 and 1 <= mo <= 12 and 1 <= d <= _month_days(y, mo)):
        return None
    seconds = 0.0
    rest = text[10:]
    if rest and rest[0] in "Tt ":
        h, mi = _digits(rest[1:], 2), _digits(rest[4:], 2)
        if h is None or mi is None or rest[3:4] != ":" or h > 23 or mi > 59:
            return None
        seconds = h * 3600 + mi * 60
        rest = rest[6:]
        if rest.startswith(":"):
            s = _digits(rest[1:], 2)
            if s is None or s > 59:
                return None
            seconds += s
            rest = rest[3:]
            if rest.startswith((".", ",")):
                n = 1
                while n < len(rest) and rest[n].isascii() and rest[n].isdigit():
                    n += 1
                if n == 1:
                    return None
                seconds += float("0." + rest[1:n][:6])
                rest = rest[n:]
    offset = _offset(rest)
    if offset is None:
        return None
    return float(_days_from_civil(y, mo, d) * 86400 + seconds - offset)
