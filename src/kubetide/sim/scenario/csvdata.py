"""Reading a csv series file: a header row, a time column (default: the first) and a value column.

Times are seconds or durations (``90``, ``15m``), strictly increasing; values are finite numbers.
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
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            t = parse_duration(row[ti].strip())
            v = float(row[vi])
        except (IndexError, ValueError, DurationError):
            raise CsvError("path", f"{path.name} line {line}: expected a time and a number") from None
        if not math.isfinite(v):
            raise CsvError("path", f"{path.name} line {line}: value must be finite")
        if times and t <= times[-1]:
            raise CsvError("path", f"{path.name} line {line}: times must increase")
        times.append(t)
        values.append(v)
    if not times:
        raise CsvError("path", f"{path.name} has no data rows")
    return np.asarray(times, dtype=np.float64), np.asarray(values, dtype=np.float64)
