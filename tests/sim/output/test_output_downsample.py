"""Downsampling for plots keeps every bucket's extremes, time order, and gaps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kubetide.sim.output.downsample import minmax, stride_indices


def test_short_series_are_unchanged() -> None:
    x = np.arange(10.0)
    y = x**2
    ox, oy = minmax(x, y, 2000)
    np.testing.assert_array_equal(ox, x)
    np.testing.assert_array_equal(oy, y)


def test_a_one_sample_spike_survives() -> None:
    x = np.arange(100_000.0)
    y = np.zeros_like(x)
    y[54_321] = 37.0  # a burst of pending pods lasting one step
    y[77_777] = -5.0
    ox, oy = minmax(x, y, 2000)
    assert len(ox) <= 2000
    assert oy.max() == 37.0 and ox[oy.argmax()] == 54_321
    assert oy.min() == -5.0 and ox[oy.argmin()] == 77_777
    assert (np.diff(ox) > 0).all()


def test_gaps_stay_gaps() -> None:
    x = np.arange(10_000.0)
    y = np.ones_like(x)
    y[3000:6000] = np.nan
    ox, oy = minmax(x, y, 500)
    assert np.isnan(oy).any()
    assert np.isnan(oy[(ox > 3100) & (ox < 5900)]).all()
    assert not np.isnan(oy[(ox < 2900) | (ox > 6100)]).any()


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(1, 3000), elements=st.floats(-1e6, 1e6)),
    st.integers(2, 400),
)
def test_extremes_and_order_for_any_series(y: np.ndarray, max_points: int) -> None:
    x = np.arange(y.size, dtype=np.float64)
    ox, oy = minmax(x, y, max_points)
    assert len(ox) <= max(max_points, y.size if y.size <= max_points else max_points)
    assert oy.max() == y.max() and oy.min() == y.min()
    assert (np.diff(ox) > 0).all()
    np.testing.assert_array_equal(oy, y[ox.astype(int)])  # only real samples, never invented ones


def test_stride_indices_keep_ends() -> None:
    idx = stride_indices(10_000, 600)
    assert idx[0] == 0 and idx[-1] == 9_999 and len(idx) <= 600
    assert list(stride_indices(5, 600)) == [0, 1, 2, 3, 4]
