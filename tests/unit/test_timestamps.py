"""timestamps: the one ISO 8601 reader and writer, checked against datetime."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.timestamps import iso, parse_iso


def reference(text: str) -> float:
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


@given(st.integers(min_value=-2_000_000_000, max_value=8_000_000_000))
def test_iso_round_trips(seconds: int) -> None:
    stamp = iso(seconds)
    assert len(stamp) == 20 and stamp.endswith("Z")
    assert parse_iso(stamp) == seconds == reference(stamp)


@st.composite
def iso_texts(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
    text = f"{moment.year:04}-{moment.month:02}-{moment.day:02}"
    form = draw(st.sampled_from(["date", "minutes", "seconds", "fraction"]))
    if form != "date":
        text += draw(st.sampled_from("Tt ")) + moment.strftime("%H:%M")
    if form in ("seconds", "fraction"):
        text += moment.strftime(":%S")
    if form == "fraction":
        text += "." + draw(st.text("0123456789", min_size=1, max_size=6))
    if form != "date":
        hours = draw(st.integers(0, 23))
        minutes = draw(st.integers(0, 59))
        sign = draw(st.sampled_from("+-"))
        text += draw(
            st.sampled_from(
                ["", "Z", "z", f"{sign}{hours:02}:{minutes:02}", f"{sign}{hours:02}{minutes:02}"]
            )
        )
    return text


@given(iso_texts())
def test_agrees_with_datetime_on_every_form_it_reads(text: str) -> None:
    assert parse_iso(text) == pytest.approx(reference(text), abs=1e-6)


def test_reads_the_seed_timestamps_and_offsets() -> None:
    seed = calendar.timegm((2025, 1, 18, 14, 35, 10))
    assert parse_iso("2025-01-18T14:35:10Z") == seed
    assert parse_iso("2025-01-18T14:35:10.250Z") == seed + 0.25
    assert parse_iso("2025-01-18T16:35:10+02:00") == seed
    assert parse_iso("2025-01-18T16:35:10+0200") == seed
    assert parse_iso("2025-01-18T14:35:10") == seed  # no offset: UTC
    assert parse_iso("2025-01-18") == calendar.timegm((2025, 1, 18, 0, 0, 0))
    assert parse_iso("2024-02-29T00:00:00Z") == calendar.timegm((2024, 2, 29, 0, 0, 0))


@pytest.mark.parametrize(
    "bad",
    [
        None,
        17,
        "",
        "2025-13-18T14:35:10Z",
        "2025-02-30",
        "2023-02-29T00:00:00Z",
        "2025-01-18T24:00:00Z",
        "2025-01-18T14:60:00Z",
        "2025-01-18T14:35:10ZZ",
        "2025/01/18T14:35:10Z",
        "2025-01-18T14:35:10.Z",
        "Sat Jan 18 2025",
        "2025-01-18T14:35:10+2:00",
        "\uff12\uff10\uff12\uff15-01-18",
        "2025-01-18T14:35:10" + "0" * 100,
    ],
)
def test_refuses_what_it_cannot_read(bad: object) -> None:
    assert parse_iso(bad) is None
