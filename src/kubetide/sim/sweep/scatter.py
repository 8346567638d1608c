"""A scatter plot of runs as inline SVG, with the Pareto front marked: the sweep's trade-off chart.

Axes, ticks, sizes and styling are the report's (:mod:`~kubetide.sim.output.svgplot`), so a sweep page
reads like a run's report. Every point is a link to its run's ``report.html`` with a tooltip naming
its settings; front points are filled and joined by the staircase no other run gets below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from kubetide.sim.output.svgplot import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, format_value, nice_ticks
from kubetide.sim.sweep.pareto import pareto_front

__all__ = ["FRONT_COLOR", "Point", "render_scatter"]

FRONT_COLOR = "#e15759"
OTHER_COLOR = "#4e79a7"


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str  # tooltip
    href: str


def _scale(lo: float, hi: float, a: float, b: float) -> tuple[float, float]:
    """(offset, factor) mapping [lo, hi] onto [a, b]."""
    span = hi - lo if hi > lo else 1.0
    return a - lo * (b - a) / span, (b - a) / span


def render_scatter(
    id: str, title: str, points: Sequence[Point], x_label: str, y_label: str, x_unit: str = "", note: str = ""
) -> str:
    xs = [p.x for p in points] or [0.0]
    ys = [p.y for p in points] or [0.0]
    pad_x = (max(xs) - min(xs)) * 0.04 or max(abs(max(xs)) * 0.04, 1e-9)
    x_ticks = nice_ticks(min(xs) - pad_x, max(xs) + pad_x)
    y_ticks = nice_ticks(min(0.0, min(ys)), max(ys) + (max(ys) - min(0.0, min(ys))) * 0.04)
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    ox, fx = _scale(x_ticks[0], x_ticks[-1], x0, x1)
    oy, fy = _scale(y_ticks[0], y_ticks[-1], y0, y1)

    def px(v: float) -> float:
        return ox + v * fx

    def py(v: float) -> float:
        return oy + v * fy

    out = [
        f'<svg class="plot-svg" viewBox="0 0 {WIDTH:g} {HEIGHT:g}" role="img" aria-label="{escape(title)}" '
        'preserveAspectRatio="xMidYMid meet">',
        '<g class="grid">',
    ]
    out += [f'<line x1="{x0}" x2="{x1}" y1="{py(t):.1f}" y2="{py(t):.1f}"/>' for t in y_ticks]
    out.append('</g><g class="ticks ytick">')
    out += [f'<text x="{x0 - 6}" y="{py(t) + 3.5:.1f}">{escape(format_value(t))}</text>' for t in y_ticks]
    out.append('</g><g class="ticks xtick">')
    for t in x_ticks:
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{y0}" y2="{y0 + 4}"/>')
        out.append(f'<text x="{px(t):.1f}" y="{y0 + 17}">{escape(format_value(t, x_unit))}</text>')
    out.append("</g>")
    out.append(f'<line class="axis" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>')
    out.append(
        f'<text class="ylabel" transform="translate(12 {(y0 + y1) / 2:.1f}) rotate(-90)">{escape(y_label)}</text>'
    )
    front = pareto_front([(p.x, p.y) for p in points])
    if front:
        # The staircase: from each front point, across to the next one's cost, then down.
        steps = [f"M{px(points[front[0]].x):.1f},{py(points[front[0]].y):.1f}"]
        for i in front[1:]:
            steps.append(f"H{px(points[i].x):.1f}V{py(points[i].y):.1f}")
        out.append(f'<path class="front" d="{"".join(steps)}" stroke="{FRONT_COLOR}"/>')
    on_front = set(front)
    # Front points last, so they are drawn (and clicked) on top of dominated ones at the same place.
    for i in sorted(range(len(points)), key=lambda i: i in on_front):
        p = points[i]
        cls, color = ("pt front-pt", FRONT_COLOR) if i in on_front else ("pt", OTHER_COLOR)
        out.append(
            f'<a href="{escape(p.href)}"><circle class="{cls}" cx="{px(p.x):.1f}" cy="{py(p.y):.1f}" r="5" '
            f'fill="{color}"><title>{escape(p.label)}</title></circle></a>'
        )
    out.append("</svg>")
    legend = (
        f'<div class="legend"><span class="key"><svg class="sw" width="12" height="12"><circle cx="6" cy="6" r="5" '
        f'fill="{FRONT_COLOR}"/></svg>Pareto front (no run is cheaper and better)</span>'
        f'<span class="key"><svg class="sw" width="12" height="12"><circle cx="6" cy="6" r="5" fill="{OTHER_COLOR}"/>'
        "</svg>dominated</span></div>"
    )
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return (
        f'<figure class="chart" id="chart-{escape(id)}"><figcaption><h3>{escape(title)}</h3>{note_html}</figcaption>'
        f'{legend}<div class="plot">{"".join(out)}</div>'
        f'<p class="note">x: {escape(x_label)} · click a point for its run\'s report</p></figure>'
    )
