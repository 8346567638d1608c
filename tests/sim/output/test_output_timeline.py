"""The timeline: the contract's column list, rows in time order, and timeline.csv per contract."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from kubetide.sim.output import Timeline, timeline_columns
from kubetide.sim.output.timeline import format_cell


def test_columns_follow_the_contract_order() -> None:
    assert timeline_columns(["spot-a", "general"], ["Deployment/default/web"], extra=["x"]) == [
        "t",
        "nodes:spot-a",
        "target:spot-a",
        "nodes:general",
        "target:general",
        "replicas:Deployment/default/web",
        "ready:Deployment/default/web",
        "cpu_utilization:Deployment/default/web",
        "rps:Deployment/default/web",
        "pending_pods",
        "cost_per_hour",
        "x",
    ]


def test_first_column_must_be_time_and_names_unique() -> None:
    with pytest.raises(ValueError, match="first timeline column"):
        Timeline(["nodes:a", "t"])
    with pytest.raises(ValueError, match="duplicate"):
        Timeline(["t", "a", "a"])


def test_rows_grow_past_the_initial_capacity_and_columns_read_back() -> None:
    tl = Timeline(["t", "a", "b"], capacity=2)
    for i in range(1000):
        tl.append([i * 15.0, i, 2 * i])
    assert len(tl) == 1000
    np.testing.assert_array_equal(tl.column("b"), 2 * np.arange(1000))
    np.testing.assert_array_equal(tl.t[:3], [0, 15, 30])
    with pytest.raises(ValueError):
        tl.column("a")[0] = 5  # a read-only view


def test_mapping_rows_fill_missing_columns_with_nan() -> None:
    tl = Timeline(["t", "a", "b"])
    tl.append({"t": 0, "b": 1})
    assert math.isnan(tl.column("a")[0])
    with pytest.raises(KeyError, match="unknown timeline column 'c'"):
        tl.append({"t": 1, "c": 1})
    with pytest.raises(ValueError, match="needs 't'"):
        tl.append({"a": 1})


def test_rows_must_not_go_back_in_time_or_miss_values() -> None:
    tl = Timeline(["t", "a"])
    tl.append([30, 1])
    with pytest.raises(ValueError, match="time order"):
        tl.append([15, 1])
    with pytest.raises(ValueError, match="needs 2 values"):
        tl.append([45])


def test_csv_header_and_rows(tmp_path: Path) -> None:
    columns = timeline_columns(["spot-a"], ["Deployment/default/web"])
    tl = Timeline(columns)
    tl.append([0, 1, 3, 2, 2, 61.33333333, 120.5, 0, 0.192])
    tl.append([15, 3, 3, 4, 0, math.nan, 0.1 + 0.2, 4, 0.576])
    path = tmp_path / "timeline.csv"
    tl.write_csv(path)
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == columns
    assert rows[1] == ["0", "1", "3", "2", "2", "61.333333", "120.5", "0", "0.192"]
    assert rows[2] == ["15", "3", "3", "4", "0", "", "0.3", "4", "0.576"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2.0, "-2"), (0.25, "0.25"), (1e-9, "0"), (-1e-9, "0"), (21600.0, "21600"), (math.nan, "")],
)
def test_cells(value: float, text: str) -> None:
    assert format_cell(value) == text
