"""A shadow's records as one self-contained HTML page: both autoscalers on one time axis, the
disagreements listed with kubetide's reasons, and what the two node timelines cost.

The page is drawn with the simulator report's SVG charts (:mod:`kubetide.sim.output.svgplot`) and its
stylesheet and script: nothing is loaded from anywhere. Per node group, the running autoscaler's target
(solid) and kubetide's (dashed: the running one's with the difference of every disagreement open at
the time); per HPA, the running controller's desired replicas and kubetide's own count (the HPA
shadow's counterfactual, exact: :mod:`kubetide.live.shadow.hpa_shadow`). The cost of a timeline is its node-hours per group
times the group's price (``--price GROUP=USD``; without one, node-hours are shown), integrated as steps
between the shadow's loops.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np

from kubetide import __version__
from kubetide.live.shadow.compare import clock_text
from kubetide.sim.output.report_assets import CSP, SCRIPT, STYLE
from kubetide.sim.output.svgplot import Chart, Line, Marker, render_chart

__all__ = ["ShadowRecords", "node_hours", "render_shadow_report"]

_COLORS = ("#1d4ed8", "#c2410c", "#15803d", "#6d28d9", "#92400e", "#0f766e", "#be185d", "#475569")


@dataclass(frozen=True)
class ShadowRecords:
    """What a shadow directory holds: its loops (timeline lines) and its records (disagreements and
    closings), in file order."""

    timeline: Sequence[Mapping[str, Any]] = ()
    records: Sequence[Mapping[str, Any]] = ()
    prices: Mapping[str, float] = field(default_factory=dict)


def _series(timeline: Sequence[Mapping[str, Any]], column: str) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for entry in timeline:
        values = entry.get(column)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if isinstance(value, int | float):
                out.setdefault(str(key), []).append((float(entry["at"]), float(value)))
    return out


def node_hours(points: Sequence[tuple[float, float]]) -> float:
    """The area under a step series (each value held until the next point), in node-hours."""
    return sum(value * (t1 - t0) for (t0, value), (t1, _) in itertools.pairwise(points)) / 3600.0


def _hpa_series(timeline: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for entry in timeline:
        for key, sides in (entry.get("hpas") or {}).items():
            for side in ("running", "kubetide"):
                if isinstance(sides, dict) and isinstance(sides.get(side), int | float):
                    out.setdefault(str(key), {}).setdefault(side, []).append(
                        (float(entry["at"]), float(sides[side]))
                    )
    return out


def _line(
    label: str, color: str, points: Sequence[tuple[float, float]], start: float, *, dashed: bool = False
) -> Line:
    x = np.array([t - start for t, _ in points], dtype=np.float64)
    y = np.array([v for _, v in points], dtype=np.float64)
    return Line(label, color, x, y, dashed=dashed)


def _disagreements(records: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], float | None]]:
    closed = {str(r["id"]): float(r["at"]) for r in records if r.get("type") == "closed"}
    return [(r, closed.get(str(r["id"]))) for r in records if r.get("type") == "disagreement"]


def render_shadow_report(data: ShadowRecords, title: str) -> str:
    timeline = data.timeline
    found = _disagreements(data.records)
    times = [float(e["at"]) for e in timeline] + [float(r["at"]) for r, _ in found]
    start = min(times) if times else 0.0
    end = max(times) if times else 0.0
    markers = [Marker(float(r["at"]) - start, f"{r['kind']} {r['subject']}", "decision") for r, _ in found]
    charts: list[str] = []
    running, kubetide = _series(timeline, "targets"), _series(timeline, "kubetide")
    cost_rows: list[tuple[str, float, float, float | None]] = []
    for i, group in enumerate(sorted(running)):
        color = _COLORS[i % len(_COLORS)]
        lines = [_line(f"{group}: running", color, running[group], start)]
        if group in kubetide:
            lines.append(_line(f"{group}: kubetide", color, kubetide[group], start, dashed=True))
        chart = Chart(
            f"group-{i}",
            f"Nodes of {group}",
            "nodes",
            lines,
            max(end - start, 1.0),
            markers=markers,
            integer=True,
        )
        charts.append(render_chart(chart))
        cost_rows.append(
            (
                group,
                node_hours(running[group]),
                node_hours(kubetide.get(group, running[group])),
                data.prices.get(group),
            )
        )
    for i, (hpa, sides) in enumerate(sorted(_hpa_series(timeline).items())):
        lines = [_line("running", _COLORS[0], sides.get("running", []), start)]
        lines.append(_line("kubetide", _COLORS[1], sides.get("kubetide", []), start, dashed=True))
        chart = Chart(
            f"hpa-{i}",
            f"Replicas of {hpa}",
            "replicas",
            lines,
            max(end - start, 1.0),
            markers=markers,
            integer=True,
        )
        charts.append(render_chart(chart))
    facts = (
        f"{len(timeline):,} loops from {escape(_when(start))} to {escape(_when(end))} · "
        f"<b>{len(found)}</b> disagreement{'s' if len(found) != 1 else ''}"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<header><h1>{escape(title)}</h1><div class="sub">{facts}</div>
<div class="sub">Solid: what the running autoscaler did; dashed: what kubetide would have had (node
groups: the running timeline with the difference of each disagreement while it lasted, an estimate;
HPAs: kubetide's own replica count as its shadow decided it). Times are UTC, h:mm from the first loop
on the axes.</div></header>
<main>
<h2>Over time</h2>
<section class="charts">{"".join(charts) or "<p>No loop recorded yet.</p>"}</section>
<h2>Cost of the two node timelines</h2>
{_cost_table(cost_rows)}
<h2 id="disagreements">Disagreements</h2>
{_disagreement_table(found)}
<footer>kubetide {escape(__version__)} · shadow report</footer>
</main>
<script>{SCRIPT}</script>
</body></html>
"""


def _when(at: float) -> str:
    return f"{clock_text(at)} UTC" if at else "-"


def _cost_table(rows: Sequence[tuple[str, float, float, float | None]]) -> str:
    if not rows:
        return "<p>No node group in the records.</p>"
    priced = all(price is not None for *_, price in rows)
    unit = "USD" if priced else "node-hours"
    body, total_running, total_kubetide = [], 0.0, 0.0
    for group, running, kubetide, price in rows:
        factor = price if priced and price is not None else 1.0
        total_running += running * factor
        total_kubetide += kubetide * factor
        body.append(
            f"<tr><td>{escape(group)}</td><td>{running * factor:.3f}</td><td>{kubetide * factor:.3f}</td>"
            f"<td>{(kubetide - running) * factor:+.3f}</td></tr>"
        )
    body.append(
        f'<tr class="total"><td>all groups</td><td>{total_running:.3f}</td><td>{total_kubetide:.3f}</td>'
        f"<td>{total_kubetide - total_running:+.3f}</td></tr>"
    )
    note = "" if priced else "<p>No price given for every group (--price GROUP=USD): node-hours.</p>"
    return (
        f'{note}<table class="data" id="cost"><tr><th>group</th><th>running ({unit})</th>'
        f"<th>kubetide ({unit})</th><th>kubetide − running</th></tr>{''.join(body)}</table>"
    )


def _disagreement_table(found: Sequence[tuple[Mapping[str, Any], float | None]]) -> str:
    if not found:
        return "<p>None: kubetide would have done what the running autoscaler did.</p>"
    rows = []
    for record, closed in sorted(found, key=lambda rc: float(rc[0]["at"])):
        ended = f"{clock_text(closed)}" if closed is not None else "open"
        rows.append(
            f'<tr><td class="t">{clock_text(float(record["at"]))}</td><td>{escape(str(record["kind"]))}</td>'
            f'<td class="obj">{escape(str(record["subject"]))}</td><td>{escape(str(record["message"]))}</td>'
            f'<td class="t">{ended}</td></tr>'
        )
    return (
        '<table class="data" id="disagreement-list"><tr><th>time (UTC)</th><th>kind</th><th>object</th>'
        f"<th>what each did, and kubetide's reasons</th><th>ended</th></tr>{''.join(rows)}</table>"
    )
