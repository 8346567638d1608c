"""Go-style durations: the forms scenario files use, round trips, and rejections."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetide.model.durations import DurationError, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("15m", 900),
        ("1h30m", 5400),
        ("2h", 7200),
        ("500ms", 0.5),
        (90, 90),
        (1.5, 1.5),
        ("0", 0),
        ("1.5h", 5400),
        ("1m30s", 90),
        ("250us", 0.00025),
        ("120", 120),
    ],
)
def test_parses_go_durations_and_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "bad", ["6hours", "1h30", "-5s", "", "h", "1d", True, None, [1], {"s": 1}, float("nan"), -1]
)
def test_rejects_what_is_not_a_duration(bad: object) -> None:
    with pytest.raises(DurationError):
        parse_duration(bad)


@given(st.integers(min_value=0, max_value=10**7))
def test_whole_seconds_round_trip_through_text(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.integers(0, 100), st.integers(0, 59), st.integers(0, 59))
def test_terms_add_up(h: int, m: int, s: int) -> None:
    assert parse_duration(f"{h}h{m}m{s}s") == h * 3600 + m * 60 + s
