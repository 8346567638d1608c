"""Two runs side by side: what a user asks before changing a flag ("what would 20% tolerance do?").

:func:`load_run` reads a run's output directory (``summary.json``, ``timeline.csv``); the command
(``kubetide compare A B``) simulates a scenario in memory instead when given one. :func:`render_compare`
writes one self-contained page: the summary figures of both runs with their difference, and the plots
of both runs overlaid (A solid, B dashed): nodes, pending pods, replicas per workload, cost per hour.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from kubetide import __version__
from kubetide.sim.output.downsample import stride_indices
from kubetide.sim.output.report_assets import CSP, SCRIPT, STYLE
from kubetide.sim.output.svgplot import Chart, Line, render_chart
from kubetide.sim.output.timeline import COST_PER_HOUR, PENDING_PODS, PENDING_PODS_MAX, TIME, FloatArray

__all__ = ["Run", "RunError", "figures", "load_run", "render_compare"]

HOVER_POINTS = 600
COLOR_A, COLOR_B = "#2563eb", "#ea580c"


class RunError(ValueError):
    """An output directory that cannot be read as a run."""


@dataclass
class Run:
    name: str  # how the page calls it: the directory or scenario given
    summary: dict[str, Any]
    columns: dict[str, FloatArray]  # timeline.csv by column name, ``t`` first

    @property
    def t(self) -> FloatArray:
        return self.columns[TIME]


def load_run(directory: Path, name: str | None = None) -> Run:
    """A run from what ``kubetide simulate`` wrote."""
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        with (directory / "timeline.csv").open(encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, ValueError) as exc:
        raise RunError(f"{directory}: not a kubetide output directory ({exc})") from None
    if not rows or not rows[0] or rows[0][0] != TIME or not isinstance(summary, dict):
        raise RunError(f"{directory}: timeline.csv or summary.json is not kubetide's")
    header, data = rows[0], rows[1:]
    try:
        values = np.array([[float(c) if c else math.nan for c in row] for row in data], dtype=np.float64)
    except ValueError as exc:
        raise RunError(f"{directory}/timeline.csv: {exc}") from None
    values = values.reshape(len(data), len(header))
    return Run(name or str(directory), summary, {h: values[:, i] for i, h in enumerate(header)})


# (label, how to read it from summary.json, lower is better; None: neither, e.g. how often one acted)
_FIGURES: tuple[tuple[str, tuple[str, ...], bool | None], ...] = (
    ("cost ($)", ("nodes", "cost"), True),
    ("node-hours", ("nodes", "node_seconds"), True),
    ("pending pod-seconds", ("pods", "pending_pod_seconds"), True),
    ("max pending pods", ("pods", "max_pending"), True),
    ("time to schedule p95 (s)", ("pods", "time_to_schedule_seconds", "p95"), True),
    ("max nodes", ("nodes", "max"), True),
    ("HPA rescales", ("autoscalers", "hpa", "rescales"), None),
    ("CA scale-ups", ("autoscalers", "cluster-autoscaler", "scale_ups"), None),
    ("CA nodes removed", ("autoscalers", "cluster-autoscaler", "nodes_removed"), None),
    ("CA failed scale-ups", ("autoscalers", "cluster-autoscaler", "failed_scale_ups"), True),
)


def _get(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    node: Any = summary
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return float(node) if isinstance(node, int | float) and not isinstance(node, bool) else None


def figures(a: Run, b: Run) -> list[tuple[str, float | None, float | None, bool | None]]:
    """(label, A, B, lower is better) for the summary figures either run has; node-hours from seconds;
    then per workload its overloaded seconds."""
    out = []
    for label, path, lower in _FIGURES:
        va, vb = _get(a.summary, path), _get(b.summary, path)
        if va is None and vb is None:
            continue
        if path[-1] == "node_seconds":
            va, vb = (v / 3600 if v is not None else None for v in (va, vb))
        out.append((label, va, vb, lower))
    workloads = sorted(set(a.summary.get("workloads") or {}) | set(b.summary.get("workloads") or {}))
    for key in workloads:
        path = ("workloads", key, "overloaded_seconds")
        out.append((f"{key} overloaded (s)", _get(a.summary, path), _get(b.summary, path), True))
    return out


def _cell(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:,.2f}"


def _delta(a: float | None, b: float | None, lower_is_better: bool | None) -> str:
    if a is None or b is None:
        return "–"
    diff = b - a
    if diff == 0:
        return '<span class="muted">same</span>'
    pct = f" ({diff / a * 100:+.0f}%)" if a else ""
    if lower_is_better is None:
        return f"{diff:+,.2f}{pct}"
    better = (diff < 0) == lower_is_better
    color = "#15803d" if better else "#b91c1c"
    return f'<span style="color:{color}">{diff:+,.2f}{pct}</span>'


def _lines(runs: tuple[Run, Run], columns: list[tuple[str, str]], hover_t: FloatArray) -> list[Line]:
    """For each (column, label), A solid and B dashed, their hover readouts at ``hover_t``."""
    out = []
    for column, label in columns:
        for run, color, dashed, tag in ((runs[0], COLOR_A, False, "A"), (runs[1], COLOR_B, True, "B")):
            y = run.columns.get(column)
            if y is None:
                continue
            hover = np.interp(hover_t, run.t, np.nan_to_num(y)) if len(run.t) else np.zeros(len(hover_t))
            out.append(Line(f"{tag} {label}", color, run.t, y, dashed=dashed, hover_y=hover))
    return out


def _sum(run: Run, prefix: str) -> dict[str, FloatArray]:
    cols = [v for k, v in run.columns.items() if k.startswith(prefix)]
    return {f"{prefix}total": np.sum(cols, axis=0)} if cols else {}


def charts(a: Run, b: Run) -> list[Chart]:
    for run in (a, b):  # total Ready nodes over the groups, a column of its own for the overlay
        run.columns.update(_sum(run, "nodes:"))
    longest = a if (a.t[-1] if len(a.t) else 0) >= (b.t[-1] if len(b.t) else 0) else b
    x_max = float(longest.t[-1]) if len(longest.t) else 1.0
    hover_t = longest.t[stride_indices(len(longest.t), HOVER_POINTS)]
    runs = (a, b)

    def chart(id: str, title: str, y_label: str, columns: list[tuple[str, str]], **kw: Any) -> Chart:
        return Chart(id, title, y_label, _lines(runs, columns, hover_t), x_max, hover_t=hover_t, **kw)

    # Runs simulated here keep the most pods pending within each step (the summary's max is its peak);
    # an output directory has the contract's instantaneous samples only.
    both_max = all(PENDING_PODS_MAX in run.columns for run in runs)
    pending = PENDING_PODS_MAX if both_max else PENDING_PODS
    pending_note = "the most pending within each step" if both_max else "sampled every resolution step"
    workloads = sorted({k.split(":", 1)[1] for run in runs for k in run.columns if k.startswith("replicas:")})
    out = [
        chart("nodes", "Ready nodes (all groups)", "nodes", [("nodes:total", "nodes")], integer=True),
        chart("pending", "Pending pods", "pods", [(pending, "pending")], integer=True, note=pending_note),
    ]
    if workloads:
        out.append(
            chart(
                "replicas",
                "Desired replicas per workload",
                "pods",
                [(f"replicas:{w}", w.rsplit("/", 1)[-1]) for w in workloads],
                integer=True,
            )
        )
    out.append(chart("cost", "Cost per hour", "$/hour", [(COST_PER_HOUR, "cost")], unit="$"))
    return out


def render_compare(a: Run, b: Run) -> str:
    rows = "".join(
        f'<tr><td>{escape(label)}</td><td class="num">{_cell(va)}</td><td class="num">{_cell(vb)}</td>'
        f'<td class="num">{_delta(va, vb, lower)}</td></tr>'
        for label, va, vb, lower in figures(a, b)
    )
    table = (
        '<table><thead><tr><th></th><th class="num">A</th><th class="num">B</th><th class="num">B − A</th>'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )
    title = f"{a.name} vs {b.name} · kubetide comparison"
    legend = (
        f'<div class="sub"><b style="color:{COLOR_A}">A</b> (solid): {escape(a.name)} · '
        f'<b style="color:{COLOR_B}">B</b> (dashed): {escape(b.name)}</div>'
    )
    plots = "".join(render_chart(c) for c in charts(a, b))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<header><h1>Comparison</h1>{legend}</header>
<main>
<h2>Summary</h2>
<section class="tables"><div class="panel span3"><h3>Figures of the two runs</h3>{table}
<p class="muted small">Green: B does better on that figure; red: worse; uncoloured: a count of actions.</p></div></section>
<h2>Over simulated time</h2>
<section class="charts">{plots}</section>
<footer>kubetide {escape(__version__)} · times are simulated, h:mm from the start of the run</footer>
</main>
<script>{SCRIPT}</script>
</body></html>
"""


def write_compare(path: Path, a: Run, b: Run) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_compare(a, b), encoding="utf-8")
