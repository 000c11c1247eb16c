"""The live terminal view of `agent-hooks watch`, built on Textual (ADR-0018).

Only `agent-hooks watch` imports this module (never a hook, never another command:
Textual takes a few hundred milliseconds to import). The data come from a
`read()` callable returning a `watch_model.Snapshot`; this module lays the
sections out and redraws.

Invariants: a panel is updated only when its section changed, so an unchanged
project costs no terminal output at all between refreshes (Textual itself redraws
only the regions that changed, inside synchronized-output brackets where the
terminal supports them); a refresh that fails shows its error in the view and
the next one tries again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widgets import Footer, Static

from agent_hooks.cli import watch_text
from agent_hooks.cli.watch_model import Snapshot
from agent_hooks.reservations.reservation import one_line

TONES = {watch_text.NORMAL: "", watch_text.DIM: "dim", watch_text.WARN: "yellow"}


class Grid:
    """A section as aligned columns fitted to the panel's width at each render
    (`watch_text.fit`): free text gives way with an ellipsis, then whole columns
    are hidden, so the holder and the path stay whole; no line passes the edge."""

    def __init__(self, section: watch_text.Section) -> None:
        self.section = section

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        section = self.section
        if not section.rows:
            yield Text(section.empty, style="dim", no_wrap=True, overflow="ellipsis")
            return
        rows = [section.header, *section.rows]
        natural = [max(cell_len(r[i]) for r in rows) for i in range(len(section.header))]
        widths = watch_text.fit(natural, section.header, options.max_width)
        shown = [i for i, width in enumerate(widths) if width > 0]
        styles = ["bold", *(TONES.get(tone, "") for tone in section.tones)]
        for row, style in zip(rows, styles, strict=True):
            line = Text(style=style, no_wrap=True, overflow="crop", end="")
            for n, i in enumerate(shown):
                piece = Text(row[i])
                piece.truncate(widths[i], overflow="ellipsis", pad=n < len(shown) - 1)
                line.append_text(piece)
                if n < len(shown) - 1:
                    line.append(" " * watch_text.GAP)
            line.rstrip()
            line.truncate(options.max_width, overflow="crop")  # never past the panel's edge
            yield line
            yield Segment.line()


class WatchApp(App[None]):
    """Agents, reservations and leases, recent denials and the work session."""

    TITLE = "agent-hooks watch"
    ENABLE_COMMAND_PALETTE = False
    # The body scrolls with the keys and shows no scrollbar: drawn in the screen's own
    # colours it was a stray glyph beside the panels (issue 36), and it took two columns
    # from a narrow pane. The head says when more is below instead (`MORE`).
    CSS = """
    #head {
        height: 1; padding: 0 1; background: $panel; color: $text;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    VerticalScroll { scrollbar-size-vertical: 0; scrollbar-size-horizontal: 0; }
    .panel { height: auto; border: round $primary; padding: 0 1; }
    #problems { height: auto; padding: 0 1; color: $warning; }
    """
    MORE = "↓ more: PgDn"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]
    PANELS = ("agents", "holdings", "denials", "session")

    def __init__(self, read: Callable[[], Snapshot], project: str, interval: float) -> None:
        super().__init__()
        self._read = read
        self._project = project
        self._interval = interval
        self._shown: dict[str, object] = {}
        self.refreshes = 0  # snapshots taken (for tests)

    def head(self, more: bool) -> str:
        """The first line: the project and the interval, and whether more is below
        (first, so that a narrow pane does not cut it off)."""
        shown = f"agent-hooks watch · {one_line(self._project, 200)} · every {self._interval:g}s"
        return f"{self.MORE} · {shown}" if more else shown

    def compose(self) -> ComposeResult:
        self._shown["head"] = self.head(False)
        yield Static(self._line(self.head(False)), id="head")
        with VerticalScroll():
            for key in self.PANELS:
                yield Static(id=key, classes="panel", markup=False)
            yield Static(id="problems", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.update_view()
        self.set_interval(self._interval, self.update_view)

    def update_view(self) -> None:
        """Take a snapshot and redraw the panels whose content changed."""
        self.refreshes += 1
        self._catch_up_size()
        try:
            snap = self._read()
        except Exception as exc:  # the view outlives one bad read; the next may succeed
            self._show("problems", one_line(f"refresh failed: {type(exc).__name__}: {exc}", 300))
            return
        for section in watch_text.sections(snap):
            if self._shown.get(section.key) == section:
                continue
            self._shown[section.key] = section
            panel = self.query_one(f"#{section.key}", Static)
            panel.border_title = section.title
            panel.update(Grid(section))
        self._show("problems", "\n".join(f"warning: {one_line(p, 200)}" for p in snap.problems))
        self.call_after_refresh(self.show_more)

    def _catch_up_size(self) -> None:
        """The terminal's size, where Textual missed it: on a loaded machine the view
        was seen to stay at 80x24 in a 140x45 pane for good (the first size posted, it
        seems, before the screen could take it). One ioctl a refresh."""
        if self.is_headless:
            return
        try:
            columns, lines = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            return
        size = Size(columns, lines)
        if self.size != size:
            self.post_message(events.Resize(size, size))
        elif self.screen.size != size:
            self.screen.post_message(events.Resize(size, size))

    def show_more(self) -> None:
        """Say in the head whether the body goes on below what is shown."""
        body = self.query_one(VerticalScroll)
        self._show("head", self.head(body.scroll_y < body.max_scroll_y))

    def on_key(self) -> None:
        self.call_after_refresh(self.show_more)  # a scroll key moves the body

    def _show(self, key: str, text: str) -> None:
        if self._shown.get(key) != text:
            self._shown[key] = text
            shown = self._line(text) if key == "head" else Text(text)
            self.query_one(f"#{key}", Static).update(shown)

    @staticmethod
    def _line(text: str) -> Text:
        """The head: one line, cut with an ellipsis where the pane ends."""
        return Text(text, no_wrap=True, overflow="ellipsis")
