"""The sections of `agent-hooks watch`, as rows of short strings: what `--once`
prints as plain text and what the live view lays out in its panels.

Invariants: every cell is one line of printable text (`reservation.one_line`), so a
path or reason cannot carry a terminal escape into the view; the same snapshot gives
the same sections, so the live view can redraw only the panels that changed.
"""

from __future__ import annotations

import dataclasses
import os
import time

from agent_hooks.cli.watch_model import Snapshot
from agent_hooks.reservations.reservation import one_line

NORMAL, DIM, WARN = "", "dim", "warn"  # a row's tone: the live view colours by it
UNNAMED = "(shared agent-state.json)"  # the agents without AGENT_NAME, as people read it
# How a section fits a narrow panel (`fit`): free text gives way first, then whole
# columns are hidden in this order, and only then the holder and the path are cut.
SOFT = frozenset({"REASON", "WORK", "WHY"})
HIDDEN_FIRST = (
    *("CLIENT", "MODE", "ID", "KIND", "TOOL", "TIME", "LAST ACTIVE", "STATUS", "REASON"),
    *("STATE", "LEFT", "WORK"),  # last: the holder and the path come before these
)
MIN_WIDE = 8
GAP = 2


@dataclasses.dataclass(frozen=True)
class Section:
    key: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    tones: tuple[str, ...]
    empty: str  # shown instead of the table when there are no rows


def _cells(*values: object, limit: int = 60) -> tuple[str, ...]:
    return tuple(one_line(str(v), limit) for v in values)


def sections(snap: Snapshot) -> list[Section]:
    return [agents(snap), holdings(snap), denials(snap), work_session(snap)]


def agents(snap: Snapshot) -> Section:
    rows, tones = [], []
    for a in snap.agents:
        state = "unreadable" if a.problem else "active" if a.active else "idle"
        where = f" (in {os.path.basename(a.project_root or '')})" if a.elsewhere else ""
        rows.append(
            _cells(a.agent or UNNAMED, a.client or "-", state, a.ago, (a.work or "-") + where)
        )
        tones.append(NORMAL if a.active and not a.problem else DIM)
    active = sum(1 for a in snap.agents if a.active)
    return Section(
        "agents",
        f"Agents ({active} active of {len(snap.agents)})",
        ("NAME", "CLIENT", "STATE", "LAST ACTIVE", "WORK"),
        tuple(rows),
        tuple(tones),
        "no agents in " + snap.state_dir,
    )


def holdings(snap: Snapshot) -> Section:
    rows, tones = [], []
    for h in snap.holdings:
        rows.append(
            _cells(
                h.holder_label,
                h.client or "-",
                h.kind,
                h.pattern,
                h.mode,
                f"{h.minutes_left} min",
                h.state,
                h.reason or "-",
                h.id or "-",
            )
        )
        tones.append(NORMAL if h.state.startswith("live") else WARN if h.state == "silent" else DIM)
    title = "Reservations and leases"
    if snap.dropped_lately:
        title += f" ({snap.dropped_lately} dropped in the last day)"
    return Section(
        "holdings",
        title,
        ("HOLDER", "CLIENT", "KIND", "PATH", "MODE", "LEFT", "STATE", "REASON", "ID"),
        tuple(rows),
        tuple(tones),
        "no live reservations or leases",
    )


def denials(snap: Snapshot) -> Section:
    rows = tuple(
        _cells(
            time.strftime("%H:%M:%S", time.localtime(d.at)),
            (d.agent or UNNAMED)
            + (f" (in {os.path.basename(d.project_root or '')})" if d.elsewhere else ""),
            d.tool,
        )
        + _cells(d.text, limit=120)
        for d in snap.denials
    )
    return Section(
        "denials",
        "Recent denials (newest first)",
        ("TIME", "AGENT", "TOOL", "WHY"),
        rows,
        tuple(DIM if d.elsewhere else WARN for d in snap.denials),
        "no denials in the hook log",
    )


def work_session(snap: Snapshot) -> Section:
    ws = snap.work_session
    if ws is None:
        return Section("session", "Work session", (), (), (), "no active work session")
    rows = [_cells(f"{ws.session_id} {ws.indicator}", ws.status, f"{ws.current:,}/{ws.max:,}")]
    rows[0] += (f"{ws.percent:g}%",)
    if len(ws.contexts) > 1:
        for c in ws.contexts:
            share = c["current"] * 100 / ws.max if ws.max > 0 else 0.0
            rows.append(_cells(f"  {c['agent']}", "", f"{c['current']:,}", f"{share:.1f}%"))
    tone = WARN if ws.percent > 80 else NORMAL
    return Section(
        "session",
        "Work session",
        ("SESSION", "STATUS", "TOKENS", "USED"),
        tuple(rows),
        tuple(tone for _ in rows),
        "",
    )


def fit(natural: list[int], header: tuple[str, ...], room: int | None) -> list[int]:
    """Column widths within `room` cells (GAP between shown columns), 0 for a column
    hidden: free text (`SOFT`) gives way first, down to MIN_WIDE; then columns are
    hidden in `HIDDEN_FIRST` order; only then do the rest (the holder, the path, the
    agent) give way, the widest first, none below MIN_WIDE (past that a row is cropped)."""
    widths = list(natural)
    if room is None:
        return widths

    def excess() -> int:
        shown = [w for w in widths if w > 0]
        return sum(shown) + GAP * (len(shown) - 1) - room

    def shrink(allowed: set[int]) -> None:
        while excess() > 0:
            fat = [i for i in allowed if widths[i] > MIN_WIDE]
            if not fat:
                return
            widths[max(fat, key=lambda j: (widths[j], j))] -= 1

    shrink({i for i, name in enumerate(header) if name in SOFT})
    for name in HIDDEN_FIRST:
        if excess() <= 0:
            break
        if name in header:
            widths[header.index(name)] = 0
    shrink({i for i, w in enumerate(widths) if w > 0})
    return widths


def table(section: Section) -> list[str]:
    """The section's rows as aligned plain-text lines (its header first)."""
    if not section.rows:
        return [section.empty]
    lines = [section.header, *section.rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(section.header))]
    gap = " " * GAP
    return [gap.join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines]


def frame(snap: Snapshot) -> str:
    """One whole frame as plain text: what `agent-hooks watch --once` prints."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap.now))
    out = [f"agent-hooks watch · {snap.project} · {stamp}"]
    for section in sections(snap):
        out += ["", section.title] + ["  " + line for line in table(section)]
    out += [f"warning: {one_line(p, 200)}" for p in snap.problems]
    return "\n".join(out)
