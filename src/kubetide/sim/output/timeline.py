"""The run's time series: one row per metrics resolution step, written as ``timeline.csv`` (contract §10.3).

Columns are fixed when the timeline is made (``timeline_columns`` builds the contract's list from the
node groups and workloads); rows go into a pre-allocated numpy array that doubles when full, so a day at
15 s steps (5,760 rows) or a week at 1 s steps costs no per-row Python objects. A value that does not
exist at a step (the CPU utilization of a workload with no Ready pod) is NaN and an empty CSV cell.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["PENDING_PODS_MAX", "TIME", "Timeline", "format_cell", "group_extra_columns", "timeline_columns"]


def group_extra_columns(node_groups: Iterable[str]) -> list[str]:
    """``pending_pods_max``, then per group ``cpu_requested:`` / ``memory_requested:`` (percent of the
    Ready nodes' allocatable) and ``cost_per_hour:``."""
    return [
        PENDING_PODS_MAX,
        *PENDING_REASONS,
        *JOB_COLUMNS,
        *(f"{kind}:{group}" for group in node_groups for kind in GROUP_EXTRA_COLUMNS),
    ]


TIME = "t"
PENDING_PODS = "pending_pods"
COST_PER_HOUR = "cost_per_hour"
# The report's own series after the contract's columns (not written to timeline.csv): the most pods
# pending within each step, and per group what scale-down decides on (requests over allocatable of its
# Ready nodes) and what it costs.
PENDING_PODS_MAX = "pending_pods_max"
# Pending pods by why they wait: kube-scheduler found no node; waiting for a node being created or for
# their own spec.nodeName's node; another scheduler's, or not tried yet.
PENDING_REASONS = ("pending_unschedulable", "pending_other")
JOB_COLUMNS = ("job_pods_running", "job_pods_succeeded")  # over every Job of the run
GROUP_EXTRA_COLUMNS = ("cpu_requested", "memory_requested", "cost_per_hour")
GROUP_COLUMNS = ("nodes", "target")
WORKLOAD_COLUMNS = ("replicas", "ready", "cpu_utilization", "rps")

FloatArray = npt.NDArray[np.float64]


def timeline_columns(
    node_groups: Iterable[str], workloads: Iterable[str], extra: Iterable[str] = ()
) -> list[str]:
    """The contract's column order: ``t``; per group ``nodes:``/``target:``; per workload ``replicas:``,
    ``ready:``, ``cpu_utilization:``, ``rps:``; ``pending_pods``, ``cost_per_hour``; then ``extra``."""
    columns = [TIME]
    for group in node_groups:
        columns += [f"{kind}:{group}" for kind in GROUP_COLUMNS]
    for workload in workloads:
        columns += [f"{kind}:{workload}" for kind in WORKLOAD_COLUMNS]
    columns += [PENDING_PODS, COST_PER_HOUR, *extra]
    return columns


class Timeline:
    """Columnar float storage with a fixed list of column names, the first of which is ``t``."""

    def __init__(
        self, columns: Sequence[str], *, capacity: int = 1024, csv_columns: int | None = None
    ) -> None:
        """``csv_columns``: how many leading columns ``timeline.csv`` gets (the contract's); the others
        are the report's own series, kept in memory only."""
        if not columns or columns[0] != TIME:
            raise ValueError(f"the first timeline column must be {TIME!r}")
        if len(set(columns)) != len(columns):
            duplicates = sorted({c for c in columns if list(columns).count(c) > 1})
            raise ValueError(f"duplicate timeline columns: {duplicates}")
        self.columns: tuple[str, ...] = tuple(columns)
        self.csv_columns = len(self.columns) if csv_columns is None else csv_columns
        self._index = {name: i for i, name in enumerate(self.columns)}
        self._data: FloatArray = np.empty((max(capacity, 1), len(self.columns)), dtype=np.float64)
        self._rows = 0

    def __len__(self) -> int:
        return self._rows

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def append(self, values: Sequence[float] | Mapping[str, float]) -> None:
        """One row: every column's value in column order, or a mapping by name (missing names are NaN)."""
        if self._rows == self._data.shape[0]:
            grown = np.empty((self._data.shape[0] * 2, len(self.columns)), dtype=np.float64)
            grown[: self._rows] = self._data[: self._rows]
            self._data = grown
        row = self._data[self._rows]
        if isinstance(values, Mapping):
            row.fill(np.nan)
            for name, value in values.items():
                if name not in self._index:
                    raise KeyError(f"unknown timeline column {name!r}")
                row[self._index[name]] = value
            if math.isnan(row[0]):
                raise ValueError(f"a timeline row needs {TIME!r}")
        else:
            if len(values) != len(self.columns):
                raise ValueError(f"a timeline row needs {len(self.columns)} values, got {len(values)}")
            row[:] = values
        if self._rows and row[0] < self._data[self._rows - 1, 0]:
            raise ValueError(
                f"timeline rows must be in time order (t={row[0]} after t={self._data[self._rows - 1, 0]})"
            )
        self._rows += 1

    def column(self, name: str) -> FloatArray:
        """A read-only view of one column's values so far."""
        view = self._data[: self._rows, self._index[name]]
        view.flags.writeable = False
        return view

    @property
    def t(self) -> FloatArray:
        return self.column(TIME)

    def rows(self) -> FloatArray:
        """A read-only view of all rows so far, shape ``(len(self), len(self.columns))``."""
        view = self._data[: self._rows]
        view.flags.writeable = False
        return view

    def columns_with_prefix(self, prefix: str) -> list[str]:
        """Column names starting with ``prefix`` (``"nodes:"``), in column order."""
        return [c for c in self.columns if c.startswith(prefix)]

    def write_csv(self, path: str | Path) -> None:
        """A header of column names, then one line per row; integers without a decimal point, NaN empty."""
        width = self.csv_columns
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.write(",".join(_csv_quote(c) for c in self.columns[:width]) + "\n")
            for row in self._data[: self._rows, :width].tolist():
                out.write(",".join(map(format_cell, row)) + "\n")


def format_cell(value: float) -> str:
    """Shortest faithful text for a cell at micro precision: ``3``, ``0.25``, ``61.333333``, NaN as ``""``."""
    if value != value:  # NaN
        return ""
    if value.is_integer():
        return str(int(value))
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _csv_quote(name: str) -> str:
    # Workload keys are kind/ns/name and never hold commas or quotes, but a stray one must not shift columns.
    if any(ch in name for ch in ',"\n'):
        return '"' + name.replace('"', '""') + '"'
    return name
