"""Fewer points for a plot without losing what matters in it: the peaks.

A week at 15 s steps is 40,320 samples per series; a plot 1,000 pixels wide cannot show more than a few
per pixel, and an SVG with 40k-point paths is slow to open. Taking every k-th sample would drop a short
spike of pending pods, often the very thing a reader looks for, so ``minmax`` keeps, for each bucket of
consecutive samples, the smallest and the largest (in time order). NaN (a value that did not exist) stays
a gap: a bucket with no value yields one NaN point, which the plot draws as a break in the line.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["minmax", "stride_indices"]

FloatArray = npt.NDArray[np.float64]


def minmax(x: FloatArray, y: FloatArray, max_points: int = 2000) -> tuple[FloatArray, FloatArray]:
    """At most ``max_points`` points of ``(x, y)`` keeping each bucket's extremes; unchanged if short."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length: {x.shape} != {y.shape}")
    n = x.size
    if n <= max_points:
        return x.copy(), y.copy()
    buckets = max(max_points // 2, 1)
    size = -(-n // buckets)  # ceil: the last bucket may be short, padded with NaN below
    buckets = -(-n // size)
    padded = np.full(buckets * size, np.nan)
    padded[:n] = y
    grid = padded.reshape(buckets, size)
    lo = np.where(np.isnan(grid), np.inf, grid).argmin(axis=1)
    hi = np.where(np.isnan(grid), -np.inf, grid).argmax(axis=1)
    first = np.minimum(lo, hi) + np.arange(buckets) * size
    second = np.maximum(lo, hi) + np.arange(buckets) * size
    # Two indices per bucket in time order; the same index twice (a flat bucket) is kept once.
    idx = np.stack([first, second], axis=1).ravel()
    keep = np.ones(idx.size, dtype=bool)
    keep[1::2] = second != first
    idx = idx[keep]
    # An all-NaN bucket yields its first index once (argmin of all-inf is 0): a NaN, so the gap stays.
    return x[idx], y[idx]


def stride_indices(n: int, max_points: int) -> npt.NDArray[np.intp]:
    """About ``max_points`` evenly spaced row indices of ``n`` rows, first and last included."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(np.intp))
