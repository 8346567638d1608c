"""Reading a csv series file: a header row, a time column (default: the first) and a value column.

Times are seconds or durations (``90``, ``15m``) from the simulation's start, or absolute times (Unix
seconds, as ``date +%s`` and most exporters print them, or RFC 3339 like ``2026-11-23T09:00:00Z``)
whose first row is the simulation's start; strictly increasing; values are finite numbers.
Errors name the spec field to blame (``path``, ``column``, ``timeColumn``) so the loader can report
``spec.traffic[0].rps.column: no column 'rps' in load.csv (columns: t, requests)``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt

from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.fields import parse_time

__all__ = ["CsvError", "load_csv"]

FloatArray = npt.NDArray[np.float64]


class CsvError(ValueError):
    """A csv series that cannot be read; ``field`` is the spec field to blame (path, column, ...)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def load_csv(path: Path, column: str, time_column: str | None = None) -> tuple[FloatArray, FloatArray]:
    """(times, values) from a csv with a header row; the time column defaults to the first one."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as exc:
        raise CsvError(
            "path", f"cannot read {str(path)!r}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not rows or not rows[0]:
        raise CsvError("path", f"{str(path)!r} is empty (a header row is required)")
    header = [h.strip() for h in rows[0]]
    time_name = time_column if time_column is not None else header[0]
    for field_name, name in (("timeColumn", time_name), ("column", column)):
        if name not in header:
            raise CsvError(field_name, f"no column {name!r} in {path.name} (columns: {', '.join(header)})")
    ti, vi = header.index(time_name), header.index(column)
    times: list[float] = []
    values: list[float] = []
    absolute: bool | None = None  # decided by the first data row
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            t, is_absolute = _time(row[ti].strip())
            v = float(row[vi])
        except (IndexError, ValueError, DurationError):
            raise CsvError("path", f"{path.name} line {line}: expected a time and a number") from None
        if absolute is None:
            absolute = is_absolute
        elif is_absolute != absolute:
            raise CsvError("path", f"{path.name} line {line}: mixes absolute times and times from the start")
        if not math.isfinite(v):
            raise CsvError("path", f"{path.name} line {line}: value must be finite")
        if times and t <= times[-1]:
            raise CsvError("path", f"{path.name} line {line}: times must increase")
        times.append(t)
        values.append(v)
    if not times:
        raise CsvError("path", f"{path.name} has no data rows")
    series = np.asarray(times, dtype=np.float64)
    if absolute:
        series -= series[0]  # the first row is the simulation's start
    return series, np.asarray(values, dtype=np.float64)


# Plain numbers from this on are Unix seconds (2001-09-09 onward), not seconds from the start: no
# scenario lasts 31 years, and exporters print epoch times.
EPOCH_FROM = 1_000_000_000.0


def _time(text: str) -> tuple[float, bool]:
    """(seconds, whether the time is absolute)."""
    if "T" in text and ("-" in text or ":" in text):
        return parse_time(text), True
    seconds = parse_duration(text)
    return seconds, seconds >= EPOCH_FROM
