"""``sweep.html``: the runs ranked, what each setting does on average, and the trade-off plots.

One self-contained page in the report's style (same stylesheet, no script, no network). Three parts:

- **Trade-offs**: cost against pending pod-seconds, and against overloaded seconds when any run was
  overloaded; the Pareto front marked; every point links to its run's ``report.html``.
- **Runs ranked**: by Pareto layer on (cost, pending pod-seconds) (layer 1 is the front: no run is both
  cheaper and less pending), then by cost; failed runs last, with their error.
- **Per-setting effects**: for each swept key and value, the mean of each figure over the runs with
  that value (all other settings and seeds mixed), and its difference from the mean of all runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from html import escape
from typing import Any

from kubetide import __version__
from kubetide.sim.output.report_assets import CSP, STYLE
from kubetide.sim.sweep.figures import FIGURES, LABELS
from kubetide.sim.sweep.pareto import pareto_layers
from kubetide.sim.sweep.results import Row
from kubetide.sim.sweep.scatter import FRONT_COLOR, Point, render_scatter

__all__ = ["rank", "render_page", "setting_effects"]

_EXTRA_STYLE = (
    """
.front-pt{stroke:#fff;stroke-width:1.5}.pt{stroke:#fff;stroke-width:1;opacity:.9}
path.front{fill:none;stroke-width:1.5;stroke-dasharray:4 3}
tr.front td:first-child{border-left:3px solid """
    + FRONT_COLOR
    + """}
td.err{color:#b91c1c;white-space:normal!important}
.better{color:#047857}.worse{color:#b91c1c}
"""
)


def _settings_text(row: Row) -> str:
    return ", ".join(f"{key}={value}" for key, value in row.run.values.items()) or "(the scenario as written)"


def rank(rows: Sequence[Row]) -> list[tuple[Row, int | None]]:
    """Successful runs by (Pareto layer on cost and pending pod-seconds, cost, pending), then failed runs;
    each with its layer (None for a failed run)."""
    ok = [row for row in rows if row.ok]
    figs = [row.figures or {} for row in ok]
    layers = pareto_layers([(f["cost"], f["pending_pod_seconds"]) for f in figs])
    order = sorted(
        range(len(ok)), key=lambda i: (layers[i], figs[i]["cost"], figs[i]["pending_pod_seconds"], i)
    )
    ranked: list[tuple[Row, int | None]] = [(ok[i], layers[i]) for i in order]
    return ranked + [(row, None) for row in rows if not row.ok]


def setting_effects(
    rows: Sequence[Row], keys: Sequence[str]
) -> dict[str, list[tuple[Any, int, dict[str, float]]]]:
    """Per key: each value (in grid order), how many runs had it, and the mean of each figure over them."""
    ok = [row for row in rows if row.ok]
    effects: dict[str, list[tuple[Any, int, dict[str, float]]]] = {}
    for key in keys:
        values: list[Any] = []
        for row in rows:
            value = row.run.values[key]
            if value not in values:
                values.append(value)
        per_value = []
        for value in values:
            runs = [row.figures or {} for row in ok if row.run.values[key] == value]
            means = {name: statistics.fmean(f[name] for f in runs) for name in FIGURES} if runs else {}
            per_value.append((value, len(runs), means))
        effects[key] = per_value
    return effects


def _num(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"


def _delta(value: float, overall: float) -> str:
    diff = value - overall
    if abs(diff) < 1e-12:
        return '<span class="muted">±0</span>'
    # Every figure is lower-is-better except the count of actions, which is left uncoloured.
    return f"{'+' if diff > 0 else '−'}{_num(abs(diff))}"


def _delta_cell(name: str, value: float, overall: float) -> str:
    text = _delta(value, overall)
    if name == "actions" or abs(value - overall) < 1e-12:
        return f'<td class="num">{text}</td>'
    cls = "better" if value < overall else "worse"
    return f'<td class="num {cls}">{text}</td>'


def _ranked_table(ranked: Sequence[tuple[Row, int | None]], keys: Sequence[str]) -> str:
    head = "".join(f"<th>{escape(key)}</th>" for key in keys)
    head += "<th class='num'>seed</th><th class='num'>front</th>"
    head += "".join(f"<th class='num'>{escape(LABELS[name])}</th>" for name in FIGURES)
    body = []
    for position, (row, layer) in enumerate(ranked, start=1):
        cells = "".join(f"<td>{escape(str(row.run.values[key]))}</td>" for key in keys)
        link = f'<a href="{escape(row.path)}/report.html">#{position}</a>' if row.ok else f"#{position}"
        if row.ok and row.figures is not None:
            figs = "".join(f'<td class="num">{_num(row.figures[name])}</td>' for name in FIGURES)
            cls = ' class="front"' if layer == 1 else ""
            body.append(
                f"<tr{cls}><td>{link}</td>{cells}<td class='num'>{row.run.seed}</td>"
                f"<td class='num'>{layer}</td>{figs}</tr>"
            )
        else:
            error = escape(str(row.record.get("error") or "unknown error"))
            body.append(
                f"<tr><td>{link}</td>{cells}<td class='num'>{row.run.seed}</td><td class='num'>-</td>"
                f'<td class="err" colspan="{len(FIGURES)}">failed: {error}</td></tr>'
            )
    return f'<table class="data"><thead><tr><th>rank</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _effects_tables(rows: Sequence[Row], keys: Sequence[str]) -> str:
    ok = [row.figures or {} for row in rows if row.ok]
    if not ok or not keys:
        return '<p class="muted">No successful runs, or nothing swept: no effects to show.</p>'
    overall = {name: statistics.fmean(f[name] for f in ok) for name in FIGURES}
    panels = []
    for key, per_value in setting_effects(rows, keys).items():
        head = "".join(
            f"<th class='num'>{escape(LABELS[name])}</th><th class='num'>vs all</th>" for name in FIGURES
        )
        body = []
        for value, count, means in per_value:
            if not means:
                cells = f'<td class="muted" colspan="{2 * len(FIGURES)}">every run failed</td>'
            else:
                cells = "".join(
                    f'<td class="num">{_num(means[name])}</td>{_delta_cell(name, means[name], overall[name])}'
                    for name in FIGURES
                )
            body.append(f"<tr><td>{escape(str(value))}</td><td class='num'>{count}</td>{cells}</tr>")
        all_cells = "".join(f'<td class="num">{_num(overall[name])}</td><td></td>' for name in FIGURES)
        body.append(f'<tr class="total"><td>all runs</td><td class="num">{len(ok)}</td>{all_cells}</tr>')
        panels.append(
            f'<div class="panel span3"><h3>{escape(key)}</h3><table class="data"><thead><tr><th>value</th>'
            f"<th class='num'>runs</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )
    return "".join(panels)


def _points(rows: Sequence[Row], y: str) -> list[Point]:
    points = []
    for row in rows:
        if row.ok and row.figures is not None:
            label = f"{_settings_text(row)}, seed {row.run.seed}: cost {_num(row.figures['cost'])}, "
            label += f"{LABELS[y]} {_num(row.figures[y])}"
            points.append(Point(row.figures["cost"], row.figures[y], label, f"{row.path}/report.html"))
    return points


def render_page(name: str, rows: Sequence[Row], keys: Sequence[str], seeds: Sequence[int]) -> str:
    failed = sum(1 for row in rows if not row.ok)
    charts = [
        render_scatter(
            "pending",
            "Cost against pending pod-seconds",
            _points(rows, "pending_pod_seconds"),
            "cost ($)",
            LABELS["pending_pod_seconds"],
            x_unit="$",
            note="Lower left is better on both; the front's runs cannot be improved on one without the other.",
        )
    ]
    if any(row.ok and row.figures and row.figures["overloaded_seconds"] > 0 for row in rows):
        charts.append(
            render_scatter(
                "overload",
                "Cost against overloaded seconds",
                _points(rows, "overloaded_seconds"),
                "cost ($)",
                LABELS["overloaded_seconds"],
                x_unit="$",
                note="Seconds some workload ran above its target utilization, summed over workloads.",
            )
        )
    grid = ", ".join(escape(key) for key in keys) or "nothing (seeds only)"
    sub = (
        f"<b>{len(rows)}</b> runs ({failed} failed) · grid over {grid} · seeds "
        f"{escape(', '.join(str(s) for s in seeds))}"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{escape(name)} · kubetide sweep</title>
<style>{STYLE}{_EXTRA_STYLE}</style></head>
<body>
<header><h1>Sweep: {escape(name)}</h1><div class="sub">{sub}</div></header>
<main>
<h2>Trade-offs</h2>
<section class="charts">{"".join(charts)}</section>
<h2>Runs ranked</h2>
<section class="tables"><div class="panel span3">
<p class="muted small">By Pareto layer on cost and pending pod-seconds (1: the front, marked red; 2: the front
once those are taken away; ...), then by cost. Each rank links to the run's report.</p>
{_ranked_table(rank(rows), keys)}</div></section>
<h2>Per-setting effects</h2>
<p class="muted small">Mean of each figure over the runs with that value (the other settings and the seeds
mixed), and its difference from the mean of all runs: green lower (better), red higher.</p>
<section class="tables">{_effects_tables(rows, keys)}</section>
<footer>kubetide {escape(__version__)} · sweep.csv and sweep.json hold the same runs</footer>
</main>
</body></html>
"""
