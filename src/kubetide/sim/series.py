"""Evaluating series (constant, step, ramp, sine, csv; optional seeded noise) at simulated times.

:func:`compile_series` turns a spec into a :class:`Series`, a pure function of time: ``series.at(t)``
for one instant, ``series.over(times)`` (numpy) for a whole timeline; both give the same numbers.
Noise is keyed on time, not on calls: the value drawn for bucket ``floor(t / interval)`` comes from a
generator seeded by ``(seed, key, block of buckets)``, so it does not depend on how often or in which
order the series is read, and two series (different ``key`` s) get independent noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from kubetide.sim.rng import name_key
from kubetide.sim.scenario.csvdata import CsvError, load_csv
from kubetide.sim.scenario.series_spec import (
    ConstantSeries,
    CsvSeries,
    Noise,
    RampSeries,
    SeriesSpec,
    SineSeries,
    StepSeries,
)

__all__ = ["CsvError", "Series", "SeriesBatch", "compile_series", "load_csv"]

FloatArray = npt.NDArray[np.float64]
_BLOCK = 1024  # noise buckets drawn per generator


@dataclass
class _NoiseSource:
    noise: Noise
    seed: int
    key: int
    _blocks: dict[int, FloatArray] = field(default_factory=dict)

    def _block(self, index: int) -> FloatArray:
        block = self._blocks.get(index)
        if block is None:
            seq = np.random.SeedSequence(entropy=self.seed, spawn_key=(self.key, index))
            block = np.random.default_rng(seq).normal(0.0, self.noise.stddev, _BLOCK)
            self._blocks[index] = block
        return block

    def over(self, times: FloatArray) -> FloatArray:
        # Clipped so absurd times cannot overflow int64 (or go negative) on the way to a seed.
        buckets = np.clip(np.nan_to_num(np.floor(times / self.noise.interval)), 0, 2.0**53).astype(np.int64)
        out = np.empty(len(times), dtype=np.float64)
        blocks, offsets = np.divmod(buckets, _BLOCK)
        for index in np.unique(blocks):
            mask = blocks == index
            out[mask] = self._block(int(index))[offsets[mask]]
        return out


@dataclass
class Series:
    """A compiled series: ``at(t)`` and ``over(times)`` (times in seconds, t >= 0)."""

    spec: SeriesSpec
    _table: tuple[FloatArray, FloatArray] | None = None
    _noise: _NoiseSource | None = None

    def at(self, t: float) -> float:
        spec = self.spec
        if isinstance(spec, SineSeries | ConstantSeries):
            # The same float64 operations as ``over``, on a scalar (no array round trip).
            if isinstance(spec, ConstantSeries):
                value = float(spec.value)
            else:
                value = float(
                    spec.base
                    + spec.amplitude * np.sin(2 * np.pi * (np.float64(t) + spec.phase) / spec.period)
                )
            if self._noise is not None:
                value = max(value + float(self._noise.over(np.array([t], dtype=np.float64))[0]), 0.0)
            return value
        return float(self.over(np.array([t], dtype=np.float64))[0])

    def over(self, times: npt.ArrayLike) -> FloatArray:
        ts = np.asarray(times, dtype=np.float64)
        values = self._base(ts)
        if self._noise is not None:
            values = np.maximum(values + self._noise.over(ts), 0.0)
        return values

    def _base(self, ts: FloatArray) -> FloatArray:
        spec = self.spec
        if isinstance(spec, ConstantSeries):
            return np.full(ts.shape, spec.value, dtype=np.float64)
        if isinstance(spec, StepSeries):
            ats = np.array([s.at for s in spec.steps])
            vals = np.array([0.0] + [s.value for s in spec.steps])
            return vals[np.searchsorted(ats, ts, side="right")]
        if isinstance(spec, RampSeries):
            if spec.end == spec.start:
                return np.where(ts < spec.start, spec.from_, spec.to).astype(np.float64)
            return np.interp(ts, [spec.start, spec.end], [spec.from_, spec.to])
        if isinstance(spec, SineSeries):
            return spec.base + spec.amplitude * np.sin(2 * np.pi * (ts + spec.phase) / spec.period)
        assert self._table is not None  # csv: loaded by compile_series
        return np.interp(ts, self._table[0], self._table[1])


class SeriesBatch:
    """Many series at one instant: ``at(t)`` is ``[s.at(t) for s in series]``, with the noise-free sine
    series (the usual traffic curve) evaluated in one numpy expression: the same float64 operations
    in the same order as :meth:`Series.at`, element by element, so the numbers are identical."""

    def __init__(self, series: list[Series]) -> None:
        self.series = series
        sines = [i for i, s in enumerate(series) if isinstance(s.spec, SineSeries) and s._noise is None]
        self._sine_index = np.array(sines, dtype=np.intp)
        specs = [series[i].spec for i in sines]
        self._base = np.array([s.base for s in specs], dtype=np.float64)  # type: ignore[union-attr]
        self._amplitude = np.array([s.amplitude for s in specs], dtype=np.float64)  # type: ignore[union-attr]
        self._phase = np.array([s.phase for s in specs], dtype=np.float64)  # type: ignore[union-attr]
        self._period = np.array([s.period for s in specs], dtype=np.float64)  # type: ignore[union-attr]
        batched = set(sines)
        self._others = [i for i in range(len(series)) if i not in batched]

    def at(self, t: float) -> list[float]:
        out = [0.0] * len(self.series)
        if len(self._sine_index):
            values = self._base + self._amplitude * np.sin(
                2 * np.pi * (np.float64(t) + self._phase) / self._period
            )
            for i, v in zip(self._sine_index.tolist(), values.tolist(), strict=True):
                out[i] = v
        for i in self._others:
            out[i] = self.series[i].at(t)
        return out


def compile_series(spec: SeriesSpec, *, base_dir: Path = Path(), seed: int = 0, key: str = "") -> Series:
    """A :class:`Series` for ``spec``; ``key`` (e.g. ``spec.traffic[0].rps``) separates noise streams."""
    table = None
    if isinstance(spec, CsvSeries):
        table = load_csv(base_dir / spec.path, spec.column, spec.timeColumn)
    noise = _NoiseSource(spec.noise, seed, name_key(key)) if spec.noise and spec.noise.stddev > 0 else None
    return Series(spec, table, noise)
