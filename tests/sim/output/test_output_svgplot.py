"""Chart building blocks: nice ticks, time ticks, the SVG a chart renders to."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kubetide.sim.output.svgplot import (
    Chart,
    Line,
    Marker,
    Rule,
    format_clock,
    nice_ticks,
    render_chart,
    time_ticks,
)


@pytest.mark.parametrize(
    ("lo", "hi", "integer", "expected"),
    [
        (0, 31, True, [0, 10, 20, 30, 40]),
        (0, 3, True, [0, 1, 2, 3]),
        (0, 0.55, False, [0, 0.2, 0.4, 0.6]),
        (0, 125, False, [0, 25, 50, 75, 100, 125]),
        (0, 0, False, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ],
)
def test_nice_ticks(lo: float, hi: float, integer: bool, expected: list[float]) -> None:
    assert nice_ticks(lo, hi, integer=integer) == pytest.approx(expected)


def test_time_ticks_are_round_and_few() -> None:
    assert time_ticks(21600) == [i * 3600.0 for i in range(7)]
    assert time_ticks(86400) == [i * 3 * 3600.0 for i in range(9)]
    assert time_ticks(600) == [i * 120.0 for i in range(6)]
    assert len(time_ticks(7 * 86400)) <= 9


def test_clock_labels() -> None:
    assert format_clock(5400) == "1:30"
    assert format_clock(93784, with_seconds=True) == "26:03:04"


def test_chart_svg_has_axes_lines_rules_markers_and_gaps() -> None:
    t = np.arange(0, 3600.0, 15)
    y = np.sin(t / 600) * 40 + 50
    y[100:110] = np.nan
    chart = Chart(
        "cpu",
        "CPU utilization",
        "% of requests",
        [Line("web", "#123456", t, y), Line("web target", "#123456", t, y * 0 + 60, dashed=True)],
        x_max=3600,
        rules=[Rule(60, "web HPA target 60%", "#123456")],
        markers=[Marker(1800, "FaultStarted: spot capacity gone")],
        unit="%",
    )
    html = render_chart(chart)
    assert html.startswith('<figure class="chart" id="chart-cpu">')
    paths = re.findall(r'<path class="line"[^>]* d="([^"]+)"', html)
    assert len(paths) == 2
    assert any(p.count("M") == 2 for p in paths)  # the NaN stretch splits the line in two
    assert 'stroke-dasharray="6 4"' in html
    assert "web HPA target 60%" in html and "FaultStarted" in html
    assert ">0:00<" in html and ">1:00<" in html and ">100%<" in html


def test_empty_chart_still_renders() -> None:
    empty = np.array([], dtype=np.float64)
    html = render_chart(Chart("x", "Nothing", "y", [Line("none", "#000", empty, empty)], x_max=0))
    assert "<svg" in html and "</svg>" in html


def test_nice_ticks_of_a_tiny_range_stay_distinct() -> None:
    # A price of 1e-173 per hour: the ticks must not all round to 0 (the plot would divide by 0).
    ticks = nice_ticks(0.0, 1.04e-173)
    assert len(set(ticks)) == len(ticks) > 1 and ticks[-1] >= 1.04e-173
