"""Series evaluation: shapes, csv interpolation, and noise that depends on time, not on reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from kubetide.sim.scenario.series_spec import SeriesSpec
from kubetide.sim.series import Series, SeriesBatch, compile_series

_ADAPTER: TypeAdapter[Any] = TypeAdapter(SeriesSpec)


def series(spec: dict[str, Any], **kwargs: Any) -> Series:
    return compile_series(_ADAPTER.validate_python(spec), **kwargs)


def test_constant() -> None:
    assert series({"type": "constant", "value": 3}).at(1234) == 3


def test_step_holds_the_last_value_and_is_zero_before_the_first() -> None:
    s = series({"type": "step", "steps": [{"at": "1m", "value": 200}, {"at": "2h", "value": 900}]})
    assert [s.at(t) for t in (0, 59.9, 60, 7199, 7200, 10**6)] == [0, 0, 200, 200, 900, 900]


def test_ramp_is_linear_between_start_and_end() -> None:
    s = series({"type": "ramp", "from": 10, "to": 110, "start": "1h", "end": "2h"})
    assert [s.at(t) for t in (0, 3600, 5400, 7200, 9000)] == [10, 10, 60, 110, 110]


def test_sine_with_a_time_phase() -> None:
    s = series({"type": "sine", "base": 100, "amplitude": 50, "period": "4h", "phase": "1h"})
    assert s.at(0) == pytest.approx(150)  # a quarter period ahead: the peak
    assert s.at(7200) == pytest.approx(50)


def test_csv_interpolates_and_defaults_to_the_first_column(tmp_path: Path) -> None:
    (tmp_path / "load.csv").write_text("minute,rps\n0,100\n10m,200\n20m,0\n")
    s = series({"type": "csv", "path": "load.csv", "column": "rps"}, base_dir=tmp_path)
    assert [s.at(t) for t in (0, 300, 600, 900, 5000)] == [100, 150, 200, 100, 0]


def test_csv_named_time_column(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("depth,t\n5,0\n15,100\n")
    s = series({"type": "csv", "path": "q.csv", "column": "depth", "timeColumn": "t"}, base_dir=tmp_path)
    assert s.at(50) == 10


@pytest.mark.parametrize(
    "times",
    [
        ("1795478400", "1795479000", "1795479600"),  # Unix seconds, as exporters print them
        ("2026-11-23T00:00:00Z", "2026-11-23T00:10:00Z", "2026-11-23T00:20:00Z"),
    ],
)
def test_csv_absolute_times_start_at_the_first_row(tmp_path: Path, times: tuple[str, ...]) -> None:
    rows = "".join(f"{t},{v}\n" for t, v in zip(times, (100, 200, 0), strict=True))
    (tmp_path / "load.csv").write_text("time,rps\n" + rows)
    s = series({"type": "csv", "path": "load.csv", "column": "rps"}, base_dir=tmp_path)
    assert [s.at(t) for t in (0, 300, 600, 900)] == [100, 150, 200, 100]


def test_vectorized_matches_pointwise() -> None:
    s = series(
        {"type": "sine", "base": 10, "amplitude": 3, "period": 600, "noise": {"stddev": 2}}, seed=1, key="a"
    )
    times = np.arange(0, 7200, 7.5)
    assert np.array_equal(s.over(times), np.array([s.at(t) for t in times]))


_NOISY = {"type": "constant", "value": 100, "noise": {"stddev": 10, "interval": "15s"}}


def test_noise_is_deterministic_for_seed_and_key_and_differs_across_them() -> None:
    times = np.arange(0, 3600, 15.0)
    a = series(_NOISY, seed=1, key="x").over(times)
    assert np.array_equal(a, series(_NOISY, seed=1, key="x").over(times))
    assert not np.array_equal(a, series(_NOISY, seed=2, key="x").over(times))
    assert not np.array_equal(a, series(_NOISY, seed=1, key="y").over(times))
    assert 5 < np.std(a) < 15 and abs(np.mean(a) - 100) < 3


def test_noise_is_held_within_an_interval() -> None:
    s = series(_NOISY, seed=3, key="k")
    assert s.at(15) == s.at(20) == s.at(29.99)
    assert s.at(30) != s.at(29.99)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=10**6, allow_nan=False), min_size=1, max_size=30))
def test_noise_does_not_depend_on_how_often_or_in_which_order_it_is_read(times: list[float]) -> None:
    fresh = series(_NOISY, seed=5, key="k")
    used = series(_NOISY, seed=5, key="k")
    used.over(np.linspace(0, 10**6, 997))  # reads in between must not shift the stream
    assert np.array_equal(fresh.over(times[::-1])[::-1], used.over(times))


def test_noisy_values_are_floored_at_zero() -> None:
    s = series({"type": "constant", "value": 0, "noise": {"stddev": 5}}, key="z")
    assert s.over(np.arange(0, 86400, 15.0)).min() == 0.0


@given(st.floats(0, 10**6), st.floats(0, 10**6))
def test_ramp_stays_between_its_ends(t: float, extra: float) -> None:
    s = series({"type": "ramp", "from": 5, "to": 50, "start": 1000, "end": 1000 + extra})
    assert 5 <= s.at(t) <= 50


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(1.0, 1e6), st.floats(0.0, 1e6)),
        min_size=1,
        max_size=8,
    ),
    st.floats(0.0, 1e7),
)
def test_a_batch_of_sine_series_gives_each_series_own_numbers(
    params: list[tuple[float, float, float, float]], t: float
) -> None:
    # The batch evaluates the noise-free sines in one expression; it must agree with ``at`` bit for
    # bit, also beside series it evaluates one by one (constant, noisy).
    specs: list[dict[str, object]] = [
        {"type": "sine", "base": b, "amplitude": a, "period": p, "phase": ph} for b, a, p, ph in params
    ]
    specs += [{"type": "constant", "value": 3.5}, _NOISY]
    compiled = [series(spec, seed=1, key=f"k{i}") for i, spec in enumerate(specs)]
    assert SeriesBatch(compiled).at(t) == [s.at(t) for s in compiled]
