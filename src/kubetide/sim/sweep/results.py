"""``sweep.json`` and ``sweep.csv``: one row per run of the grid, in grid order (then seed).

A row of sweep.json is ``{settings, seed, summary, run, error}``: ``summary`` exactly as the run's
``summary.json`` (null for a failed run), ``run`` its directory relative to the sweep's, ``error`` null
or what went wrong. sweep.csv has a column per grid key, the seed, the figures of
:mod:`~kubetide.sim.sweep.figures`, then ``run`` and ``error``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubetide.sim.sweep.figures import FIGURES, figures
from kubetide.sim.sweep.grid import RunSpec
from kubetide.sim.sweep.run import write_atomic
from kubetide.sim.sweep.store import RUNS

__all__ = ["Row", "render_csv", "render_json", "rows_of", "write_tables"]


@dataclass(frozen=True)
class Row:
    run: RunSpec
    record: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.record.get("status") == "ok"

    @property
    def path(self) -> str:
        return f"{RUNS}/{self.run.key}"

    @property
    def figures(self) -> dict[str, float] | None:
        return figures(self.record["summary"]) if self.ok else None

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.run.values,
            "seed": self.run.seed,
            "summary": self.record.get("summary") if self.ok else None,
            "run": self.path,
            "error": None if self.ok else self.record.get("error", "unknown error"),
        }


def rows_of(runs: Sequence[RunSpec], records: dict[str, dict[str, Any]]) -> list[Row]:
    return [Row(run, records[run.key]) for run in runs if run.key in records]


def render_json(rows: Sequence[Row]) -> str:
    return json.dumps([row.to_json() for row in rows], indent=2) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return str(round(value, 6))  # full precision, without float noise (node-hours are x / 3600)
    return json.dumps(value)


def render_csv(rows: Sequence[Row], keys: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*keys, "seed", *FIGURES, "run", "error"])
    for row in rows:
        values = row.run.values
        figs = row.figures
        writer.writerow(
            [
                *(_cell(values[key]) for key in keys),
                row.run.seed,
                *((_cell(figs[name]) if figs is not None else "") for name in FIGURES),
                row.path,
                "" if row.ok else row.record.get("error", ""),
            ]
        )
    return out.getvalue()


def write_tables(directory: Path, rows: Sequence[Row], keys: Sequence[str]) -> tuple[Path, Path]:
    json_path, csv_path = directory / "sweep.json", directory / "sweep.csv"
    write_atomic(json_path, render_json(rows))
    write_atomic(csv_path, render_csv(rows, keys))
    return json_path, csv_path
