"""Line charts over simulated time as inline SVG: the report's plots, with no plotting library and no
network, so ``report.html`` opens anywhere, forever, as one file.

A chart is a frozen description (lines, reference rules, event markers); ``render_chart`` turns it into
an HTML ``<figure>``: a title, an HTML legend (it wraps, unlike SVG text), the SVG with axes, gridlines
and "nice" ticks, and a JSON payload the page's script uses for the hover readout. The SVG scales with
its box (``viewBox``), so a chart reads the same in a two-column grid or alone on a phone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import numpy.typing as npt

from kubetide.sim.output.downsample import minmax

__all__ = [
    "Chart",
    "Line",
    "Marker",
    "Rule",
    "format_clock",
    "marker_key",
    "nice_ticks",
    "render_chart",
    "time_ticks",
]

FloatArray = npt.NDArray[np.float64]

WIDTH, HEIGHT = 640.0, 250.0
LEFT, RIGHT, TOP, BOTTOM = 54.0, 14.0, 12.0, 30.0
_TIME_STEPS = (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


@dataclass(frozen=True)
class Line:
    """One series. ``dashed`` marks what was asked for (a target size, desired replicas), solid what
    is; ``area`` shades under the line; ``hover_y`` are its values at the chart's ``hover_t``."""

    label: str
    color: str
    x: FloatArray
    y: FloatArray
    dashed: bool = False
    area: bool = False
    hover_y: FloatArray | None = None
    recorded: bool = False  # dotted: what a recorded day did (a replay's report draws it beside the run)


@dataclass(frozen=True)
class Rule:
    """A horizontal reference line, e.g. an HPA's utilization target."""

    y: float
    label: str
    color: str


@dataclass(frozen=True)
class Marker:
    """A vertical line at a moment worth seeing on every plot: an action, a fault, a restart."""

    t: float
    label: str
    kind: str = "scenario"  # "scenario" (actions, faults, restarts), "decision" (an autoscaler's), "recorded"


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    y_label: str
    lines: Sequence[Line]
    x_max: float
    rules: Sequence[Rule] = ()
    markers: Sequence[Marker] = ()
    unit: str = ""  # "%" or "$" or "": how ticks and the hover readout write values
    integer: bool = False  # counts: integer ticks only
    note: str = ""
    hover_t: FloatArray | None = None
    max_points: int = 2000


def nice_ticks(lo: float, hi: float, count: int = 5, integer: bool = False) -> list[float]:
    """Round tick values covering ``[lo, hi]``: steps of 1, 2, 2.5 or 5 times a power of ten."""
    # Absurd values (an inf or 1e308 cost) are clamped so the arithmetic below cannot overflow.
    lo = min(max(lo, -1e300), 1e300) if math.isfinite(lo) else 0.0
    hi = min(max(hi, -1e300), 1e300) if math.isfinite(hi) else lo
    raw = (hi - lo) / count
    if raw <= 0 or raw < 1e-300:  # no span: empty, inverted, or so small its log underflows (5e-324)
        hi = lo + max(1.0, abs(lo) * 1e-6)
        raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    multiples = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)
    step = next(m * magnitude for m in multiples if m * magnitude >= raw * 0.999)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    first = math.floor(lo / step + 1e-9) * step
    last = math.ceil(hi / step - 1e-9) * step
    n = round((last - first) / step)
    # Rounding only cleans float noise (0.30000000000000004): a few digits below the step, so tiny
    # ranges (a price of 1e-7 per hour) keep distinct ticks.
    digits = max(10, 3 - math.floor(math.log10(step)))
    return [round(first + i * step, digits) for i in range(n + 1)]


def time_ticks(x_max: float, most: int = 8) -> list[float]:
    """Tick times at a round step (30 s, 5 m, 1 h, 6 h, ...) giving at most ``most`` intervals."""
    if x_max <= 0:
        return [0.0]
    step = next((s for s in _TIME_STEPS if x_max / s <= most), None)
    if step is None:
        step = _TIME_STEPS[-1] * math.ceil(x_max / _TIME_STEPS[-1] / most)
    return [float(i * step) for i in range(int(x_max // step) + 1)]


def format_clock(seconds: float, with_seconds: bool = False) -> str:
    """Simulated time as ``h:mm`` (or ``h:mm:ss``): 5400 -> ``1:30``."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if with_seconds else f"{hours}:{minutes:02d}"


def format_value(value: float, unit: str = "") -> str:
    if unit == "%":
        return f"{value:g}%"
    if unit == "$":
        return f"${value:,.2f}" if value < 100 else f"${value:,.0f}"
    if abs(value) >= 10_000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _segments(finite: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """``[start, end)`` runs of consecutive True."""
    edges = np.diff(np.concatenate([[0], finite.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def _points(px: FloatArray, py: FloatArray, start: int, end: int) -> str:
    return "L".join(
        f"{x:.1f},{y:.1f}" for x, y in zip(px[start:end].tolist(), py[start:end].tolist(), strict=True)
    )


class _Frame:
    """Data to viewBox coordinates."""

    def __init__(self, x_max: float, y_lo: float, y_hi: float) -> None:
        self.x_max = x_max if x_max > 0 else 1.0
        self.y_lo, self.y_hi = y_lo, y_hi
        self.x0, self.x1 = LEFT, WIDTH - RIGHT
        self.y0, self.y1 = HEIGHT - BOTTOM, TOP

    def px(self, x: FloatArray | float) -> FloatArray:
        return np.asarray(self.x0 + (np.asarray(x, dtype=np.float64) / self.x_max) * (self.x1 - self.x0))

    def py(self, y: FloatArray | float) -> FloatArray:
        span = self.y_hi - self.y_lo
        return np.asarray(
            self.y0 - (np.asarray(y, dtype=np.float64) - self.y_lo) / span * (self.y0 - self.y1)
        )


def _y_range(chart: Chart) -> list[float]:
    values = [line.y[np.isfinite(line.y)] for line in chart.lines]
    values.append(np.array([rule.y for rule in chart.rules], dtype=np.float64))
    joined = np.concatenate(values) if values else np.array([])
    lo = min(0.0, float(joined.min())) if joined.size else 0.0
    hi = float(joined.max()) if joined.size else 1.0
    if hi <= lo:
        hi = lo + 1
    return nice_ticks(lo, hi + (hi - lo) * 0.04, integer=chart.integer)


def _axes(chart: Chart, frame: _Frame, y_ticks: list[float]) -> list[str]:
    out = ['<g class="grid">']
    for tick in y_ticks:
        y = float(frame.py(tick))
        out.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{y:.1f}" y2="{y:.1f}"/>')
    out.append("</g>")
    out.append('<g class="ticks ytick">')
    for tick in y_ticks:
        y = float(frame.py(tick))
        out.append(
            f'<text x="{frame.x0 - 6}" y="{y + 3.5:.1f}">{escape(format_value(tick, chart.unit))}</text>'
        )
    out.append("</g>")
    x_ticks = time_ticks(chart.x_max)
    with_seconds = len(x_ticks) > 1 and (x_ticks[1] - x_ticks[0]) < 60
    out.append('<g class="ticks xtick">')
    for tick in x_ticks:
        x = float(frame.px(tick))
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y0}" y2="{frame.y0 + 4}"/>')
        out.append(f'<text x="{x:.1f}" y="{frame.y0 + 17}">{format_clock(tick, with_seconds)}</text>')
    out.append("</g>")
    out.append(f'<line class="axis" x1="{frame.x0}" x2="{frame.x1}" y1="{frame.y0}" y2="{frame.y0}"/>')
    mid = (frame.y0 + frame.y1) / 2
    out.append(
        f'<text class="ylabel" transform="translate(12 {mid:.1f}) rotate(-90)">{escape(chart.y_label)}</text>'
    )
    return out


def _markers(chart: Chart, frame: _Frame) -> list[str]:
    out = ['<g class="markers">']
    for marker in chart.markers:
        x = float(frame.px(marker.t))
        label = escape(f"{format_clock(marker.t, True)} {marker.label}")
        out.append(
            f'<g class="marker {escape(marker.kind)}"><title>{label}</title>'
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y1}" y2="{frame.y0}"/>'
            f'<path d="M{x - 4:.1f},{frame.y1 - 1}L{x + 4:.1f},{frame.y1 - 1}L{x:.1f},{frame.y1 + 5}Z"/></g>'
        )
    out.append("</g>")
    return out


def _series(chart: Chart, frame: _Frame) -> list[str]:
    out = ['<g class="series">']
    # What was recorded and what was asked for go under what is: where they agree, the run shows.
    for line in sorted(chart.lines, key=lambda line: (not line.recorded, not line.dashed)):
        xs, ys = minmax(line.x, line.y, chart.max_points)
        px, py = frame.px(xs), frame.py(ys)
        segments = _segments(np.isfinite(py))
        base = float(frame.py(max(frame.y_lo, 0.0)))
        if line.area:
            d = "".join(
                f"M{px[s]:.1f},{base:.1f}L{_points(px, py, s, e)}L{px[e - 1]:.1f},{base:.1f}Z"
                for s, e in segments
            )
            out.append(f'<path class="area" d="{d}" fill="{line.color}"/>')
        d = "".join(f"M{_points(px, py, s, e)}" for s, e in segments)
        dash = f' stroke-dasharray="{_line_dash(line)}"' if line.dashed or line.recorded else ""
        out.append(
            f'<path class="line" data-label="{escape(line.label)}" d="{d}" stroke="{line.color}"{dash}>'
            f"<title>{escape(line.label)}</title></path>"
        )
    # Reference rules last: a target line must stay visible through a noisy series.
    for rule in chart.rules:
        ry = float(frame.py(rule.y))
        out.append(
            f'<g class="rule"><title>{escape(rule.label)}</title>'
            f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{ry:.1f}" y2="{ry:.1f}" stroke="{rule.color}"/></g>'
        )
    out.append("</g>")
    return out


_DASHED, _DOTTED, _MARKER, _RECORDED = "6 4", "2 4", "1 3", "2 3"
DECISION_COLOR = "#2563eb"
RECORDED_COLOR = "#b45309"


def _line_dash(line: Line) -> str:
    return _RECORDED if line.recorded else _DASHED


def marker_key(recorded: bool = False) -> str:
    """The legend entry for event markers, said once for all charts (the report puts it above them);
    ``recorded``: the recorded day's decisions too (a replay's report)."""
    key = (
        f'<span class="key">{_swatch("#9ca3af", _MARKER, 1.5)}scenario events (actions, faults, restarts)</span>'
        f'<span class="key">{_swatch(DECISION_COLOR, _MARKER, 1.5)}autoscaler decisions (node scale-ups and '
        "removals; HPA rescales on the replicas plot): hover a marker for details</span>"
    )
    if recorded:
        key += (
            f'<span class="key">{_swatch(RECORDED_COLOR, _MARKER, 1.5)}the recorded day\'s decisions; dotted '
            "lines: what the recorded day did</span>"
        )
    return key


def _swatch(color: str, dash: str, width: float = 2.5) -> str:
    """A short piece of the line itself: the legend shows exactly the stroke the plot draws."""
    dasharray = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<svg class="sw" width="26" height="8" aria-hidden="true"><line x1="1" y1="4" x2="25" y2="4" '
        f'stroke="{color}" stroke-width="{width}"{dasharray}/></svg>'
    )


def _legend(chart: Chart) -> str:
    keys = [
        (line.label, line.color, _line_dash(line) if line.dashed or line.recorded else "")
        for line in chart.lines
    ]
    keys += [(rule.label, rule.color, _DOTTED) for rule in chart.rules]
    items = [f'<span class="key">{_swatch(color, dash)}{escape(label)}</span>' for label, color, dash in keys]
    return f'<div class="legend">{"".join(items)}</div>'


def _hover_payload(chart: Chart) -> str:
    if chart.hover_t is None:
        return ""
    t = [round(v, 3) for v in chart.hover_t.tolist()]
    series = []
    for line in chart.lines:
        if line.hover_y is None:
            continue
        values = [None if not math.isfinite(v) else round(v, 4) for v in line.hover_y.tolist()]
        series.append({"l": line.label, "c": line.color, "d": line.dashed or line.recorded, "v": values})
    payload = {"t": t, "s": series, "u": chart.unit}
    return f" data-hover='{escape(json.dumps(payload, separators=(',', ':')), quote=True)}'"


def render_chart(chart: Chart) -> str:
    """The chart as an HTML ``<figure>`` with its legend, SVG, and hover data."""
    y_ticks = _y_range(chart)
    frame = _Frame(chart.x_max, y_ticks[0], y_ticks[-1])
    svg = [
        f'<svg class="plot-svg" viewBox="0 0 {WIDTH:g} {HEIGHT:g}" role="img" '
        f'aria-label="{escape(chart.title)}" preserveAspectRatio="xMidYMid meet">',
        *_axes(chart, frame, y_ticks),
        *_markers(chart, frame),
        *_series(chart, frame),
        f'<line class="guide" x1="0" x2="0" y1="{frame.y1}" y2="{frame.y0}" visibility="hidden"/>',
        "</svg>",
    ]
    note = f'<p class="note">{escape(chart.note)}</p>' if chart.note else ""
    return (
        f'<figure class="chart" id="chart-{escape(chart.id)}">'
        f"<figcaption><h3>{escape(chart.title)}</h3>{note}</figcaption>"
        f"{_legend(chart)}"
        f'<div class="plot" data-x0="{frame.x0:g}" data-x1="{frame.x1:g}" data-vbw="{WIDTH:g}" '
        f'data-tmax="{frame.x_max:g}"{_hover_payload(chart)}>'
        f'{"".join(svg)}<div class="tip" hidden></div></div></figure>'
    )
