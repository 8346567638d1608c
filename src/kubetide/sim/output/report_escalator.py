"""The report's plots of one batch autoscaler group: utilization against its thresholds, and its nodes.

Escalator decides on requests over the untainted nodes' allocatable, once a loop, against three
thresholds; these plots show exactly those numbers (one point per loop, held until the next), so a
reader sees why it scaled up, tainted slowly or quickly, or waited.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kubetide.sim.output.meta import EscalatorGroupSeries, ReportMeta
from kubetide.sim.output.svgplot import Chart, Line, Rule
from kubetide.sim.output.timeline import FloatArray

__all__ = ["escalator_charts"]

ESCALATOR_CPU_COLOR = "#4e79a7"
ESCALATOR_MEM_COLOR = "#f28e2b"
TAINTED_COLOR = "#e15759"
# The thresholds, apart from the two utilization lines and from each other.
SCALE_UP_COLOR, SLOW_REMOVAL_COLOR, FAST_REMOVAL_COLOR = "#b07aa1", "#76b7b2", "#9c755f"


def escalator_charts(
    name: str,
    series: EscalatorGroupSeries,
    meta: ReportMeta,
    chart: Callable[..., Chart],
    hover_t: FloatArray,
) -> list[Chart]:
    """Per batch autoscaler group: utilization against its three thresholds (what it decided on, one
    point per loop), and its untainted and tainted nodes."""
    t = np.asarray(series.t, dtype=np.float64)
    # The value each loop decided on holds until the next loop: sample it so at the hover times.
    at = np.clip(np.searchsorted(t, hover_t, side="right") - 1, 0, max(len(t) - 1, 0))

    def line(values: tuple[float, ...], label: str, color: str, cap: float = np.inf, **kwargs: bool) -> Line:
        y = np.asarray(values, dtype=np.float64)
        hover = y[at] if len(y) else np.full(len(hover_t), np.nan)  # the true values, unclipped
        return Line(label, color, t, np.minimum(y, cap), hover_y=hover, **kwargs)

    # A wave of pending pods reads as 1000%+ and would flatten the thresholds: clip the plot, not the
    # hover readout.
    cap = max(150.0, 2 * series.scale_up_threshold)

    color = meta.group_color(series.cloud_group) if series.cloud_group in meta.node_groups else TAINTED_COLOR
    rules = [
        Rule(
            series.scale_up_threshold, f"scale up above {series.scale_up_threshold:g}%", ESCALATOR_MEM_COLOR
        ),
        Rule(series.taint_upper_threshold, f"slow removal below {series.taint_upper_threshold:g}%", color),
        Rule(
            series.taint_lower_threshold,
            f"fast removal below {series.taint_lower_threshold:g}%",
            TAINTED_COLOR,
        ),
    ]
    slug = "".join(c if c.isalnum() else "-" for c in name)
    return [
        chart(
            f"escalator-util-{slug}",
            f"Batch autoscaler {name}: utilization",
            "% of allocatable",
            [
                line(series.cpu_percent, "CPU requests", ESCALATOR_CPU_COLOR, cap),
                line(series.mem_percent, "memory requests", ESCALATOR_MEM_COLOR, cap),
            ],
            rules=rules,
            unit="%",
            note=f"Requests of the group's pods over the untainted nodes of {series.cloud_group}, per loop "
            f"(clipped at {cap:g}%; hover for the value); dotted: thresholds",
        ),
        chart(
            f"escalator-nodes-{slug}",
            f"Batch autoscaler {name}: nodes",
            "nodes",
            [
                line(series.untainted, "untainted", color),
                line(series.tainted, "tainted (to be removed)", TAINTED_COLOR, dashed=True),
            ],
            integer=True,
            note="Nodes of the group as each loop saw them",
        ),
    ]
