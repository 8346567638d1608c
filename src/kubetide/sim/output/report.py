"""``report.html``: one self-contained page showing what a run did (contract §10.4).

Headline numbers, then plots over simulated time (nodes per group against the target size, pending
pods, replicas and Ready pods, CPU utilization against the HPA target, requests per second against
the capacity of the Ready pods, cost per hour), the summary tables, and the event log filterable by
source. Everything is inline (CSS, SVG, a little script) and a Content-Security-Policy forbids loading
anything, so the file opens offline, attached to an issue, or years later, exactly as written.

Colours are fixed per node group and per workload by their order in the scenario (``ReportMeta``), and
one convention holds on every plot: solid is what is, dashed is what was asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from kubetide import __version__
from kubetide.model.durations import format_duration
from kubetide.sim.output.downsample import stride_indices
from kubetide.sim.output.events import Event, EventLog
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.report_assets import CSP, SCRIPT, STYLE
from kubetide.sim.output.report_escalator import escalator_charts
from kubetide.sim.output.report_events import event_rows, render_event_counts, render_event_log
from kubetide.sim.output.report_tables import render_kpis, render_summary_tables
from kubetide.sim.output.summary import Summary
from kubetide.sim.output.svgplot import Chart, Line, Marker, Rule, marker_key, render_chart
from kubetide.sim.output.timeline import COST_PER_HOUR, PENDING_PODS, PENDING_PODS_MAX, FloatArray, Timeline
from kubetide.sim.replay.recording import RecordedDay

__all__ = ["build_charts", "render_report", "short_names", "write_report"]

MAX_MARKERS = 60
UNSCHEDULABLE_COLOR, WAITING_COLOR, JOB_COLOR = "#7f1d1d", "#9ca3af", "#0d9488"
MAX_DECISIONS = 400  # a busy day's decisions stay readable; the event log has every one
HOVER_POINTS = 600
PENDING_COLOR = "#e15759"
COST_COLOR = "#4e79a7"


def short_names(keys: tuple[str, ...]) -> dict[str, str]:
    """Legend labels: ``Deployment/default/web`` -> ``web`` while names are unique, else the full key."""
    names = [key.rsplit("/", 1)[-1] for key in keys]
    unique = len(set(names)) == len(names)
    return {key: (name if unique else key) for key, name in zip(keys, names, strict=True)}


class _Series:
    """Columns of the timeline, each with its hover samples; absent columns give no line."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.t = timeline.t
        self.hover = stride_indices(len(timeline), HOVER_POINTS)

    def line(self, column: str, label: str, color: str, **kwargs: bool) -> Line | None:
        if column not in self.timeline:
            return None
        y = self.timeline.column(column)
        return self.derived(y, label, color, **kwargs)

    def derived(self, y: FloatArray, label: str, color: str, **kwargs: bool) -> Line:
        return Line(label, color, self.t, y, hover_y=y[self.hover], **kwargs)

    def recorded(self, day: RecordedDay | None, column: str, label: str, color: str) -> Line | None:
        """A series of the recorded day, dotted, its hover values the recorded ones at the run's times."""
        if day is None or column not in day.series or not len(day.t):
            return None
        y = day.series[column]
        index = np.searchsorted(day.t, self.t[self.hover], side="right") - 1
        hover = np.where(index >= 0, y[np.clip(index, 0, None)], np.nan)
        # A step series: each sample holds until the next (a line between them would invent values).
        x = np.repeat(day.t, 2)[1:]
        steps = np.repeat(y, 2)[:-1]
        return Line(label, color, x, steps, hover_y=hover, recorded=True)


def _present(*lines: Line | None) -> list[Line]:
    return [line for line in lines if line is not None]


def build_charts(
    timeline: Timeline,
    meta: ReportMeta,
    markers: list[Marker],
    decisions: Sequence[Marker] = (),
) -> list[Chart]:
    """The report's plots, in reading order: capacity, demand on it, then the workloads, then money.
    ``decisions``: the autoscalers' (node scale-ups and removals on the node plots, HPA rescales on the
    replicas plot)."""
    node_decisions = [m for m in decisions if not m.label.startswith(RESCALE_PREFIX)]
    rescales = [m for m in decisions if m.label.startswith(RESCALE_PREFIX)]
    s = _Series(timeline)
    names = short_names(meta.workloads)
    x_max = meta.duration if meta.duration > 0 else (float(s.t[-1]) if len(s.t) else 1.0)

    day = meta.recorded
    nodes: list[Line] = []
    for group in meta.node_groups:
        color = meta.group_color(group)
        nodes += _present(
            s.line(f"nodes:{group}", f"{group} Ready", color),
            s.line(f"target:{group}", f"{group} target", color, dashed=True),
            s.recorded(day, f"nodes:{group}", f"{group} Ready, recorded", color),
        )
    replicas: list[Line] = []
    utilization: list[Line] = []
    rps: list[Line] = []
    rules: list[Rule] = []
    for key in meta.workloads:
        color, name = meta.workload_color(key), names[key]
        replicas += _present(
            s.line(f"ready:{key}", f"{name} Ready", color),
            s.line(f"replicas:{key}", f"{name} replicas", color, dashed=True),
            s.recorded(day, f"replicas:{key}", f"{name} replicas, recorded", color),
        )
        utilization += _present(s.line(f"cpu_utilization:{key}", name, color))
        target = meta.cpu_target(key)
        if target is not None:
            rules.append(Rule(target, f"{name} HPA target {target:g}%", color))
        rps += _present(s.line(f"rps:{key}", name, color))
        per_pod = meta.capacity_per_pod.get(key)
        if per_pod and f"ready:{key}" in timeline:
            capacity = timeline.column(f"ready:{key}") * per_pod
            rps.append(s.derived(capacity, f"{name} capacity", color, dashed=True))

    hover_t = s.t[s.hover]

    def chart(id: str, title: str, y_label: str, lines: list[Line], **kwargs: Any) -> Chart:
        kwargs.setdefault("markers", markers)
        return Chart(id, title, y_label, lines, x_max, hover_t=hover_t, **kwargs)

    # The area is the most pods pending within each step, so the plot's peak is the summary's max
    # (a sample every resolution step alone misses a burst scheduled in between).
    pending = _present(
        s.line(PENDING_PODS_MAX, "most pending in the step", PENDING_COLOR, area=True)
        or s.line(PENDING_PODS, "pending pods", PENDING_COLOR, area=True),
        s.line("pending_unschedulable", "unschedulable (no node fits)", UNSCHEDULABLE_COLOR),
        s.line("pending_other", "waiting (a node starting, another scheduler)", WAITING_COLOR, dashed=True),
        s.recorded(day, PENDING_PODS, "pending, recorded", PENDING_COLOR),
    )
    jobs = _present(
        s.line("job_pods_running", "Job pods running", JOB_COLOR),
        s.line("job_pods_succeeded", "Job pods succeeded (total)", JOB_COLOR, dashed=True),
    )
    has_jobs = any(
        column in timeline and np.nanmax(timeline.column(column), initial=0) > 0
        for column in ("job_pods_running", "job_pods_succeeded")
    )
    cost = _present(s.line(COST_PER_HOUR, "total", COST_COLOR, area=True))
    requested: list[Line] = []
    for group in meta.node_groups:
        color = meta.group_color(group)
        cost += _present(s.line(f"cost_per_hour:{group}", group, color))
        requested += _present(
            s.line(f"cpu_requested:{group}", f"{group} cpu", color),
            s.line(f"memory_requested:{group}", f"{group} memory", color, dashed=True),
        )
    rps_note = "dashed: what the Ready pods can serve" if meta.capacity_per_pod else ""
    charts = [
        chart(
            "nodes",
            "Nodes per group",
            "nodes",
            nodes,
            integer=True,
            note="Ready nodes; dashed: target size",
            markers=[*markers, *node_decisions],
        ),
        chart("pending", "Pending pods", "pods", pending, integer=True, markers=[*markers, *node_decisions]),
    ]
    if requested:
        charts.append(
            chart(
                "requests",
                "Requests over allocatable per group",
                "% of allocatable",
                requested,
                unit="%",
                note="What scale-down's utilization reads, over each group's Ready nodes; dashed: memory",
                markers=[*markers, *node_decisions],
            )
        )
    if meta.workloads:
        charts += [
            chart(
                "replicas",
                "Replicas per workload",
                "pods",
                replicas,
                integer=True,
                note="Ready pods; dashed: desired replicas",
                markers=[*markers, *rescales],
            ),
            chart(
                "cpu",
                "CPU utilization",
                "% of requests",
                utilization,
                rules=rules,
                unit="%",
                note="Average over Ready pods; dotted: HPA target",
            ),
            chart(
                "rps",
                "Requests per second",
                "requests/s",
                rps,
                note=f"Offered load{'; ' if rps_note else ''}{rps_note}",
            ),
        ]
    if has_jobs:
        charts.append(
            chart(
                "jobs",
                "Jobs",
                "pods",
                jobs,
                integer=True,
                note="Job pods over every Job; dashed: succeeded so far",
            )
        )
    for name, series in meta.escalator.items():
        charts += escalator_charts(name, series, meta, chart, hover_t)
    charts.append(
        chart("cost", "Cost per hour", "$/hour", cost, unit="$", note="Area: total; lines: per group")
    )
    return charts


def _markers(events: EventLog) -> list[Marker]:
    scenario = [Event._make(row) for row in events.rows() if row[1] == "scenario"]
    return [Marker(e.t, _marker_label(e)) for e in scenario[:MAX_MARKERS]]


# The autoscalers' decisions worth a line on the time axis: what changed capacity or replicas.
DECISION_REASONS = frozenset(
    {
        "ScaledUpGroup",
        "ScaleDown",
        "ScaleDownEmpty",
        "EscalatorScaleUp",
        "EscalatorDelete",
        "SuccessfulRescale",
    }
)
RESCALE_PREFIX = "HPA "


def _decisions(events: EventLog) -> list[Marker]:
    out: list[Marker] = []
    for row in events.rows():
        event = Event._make(row)
        if event.reason not in DECISION_REASONS:
            continue
        who = RESCALE_PREFIX if event.reason == "SuccessfulRescale" else ""
        out.append(Marker(event.t, f"{who}{event.reason} {event.object}: {event.message}", kind="decision"))
        if len(out) >= MAX_DECISIONS:
            break
    return out


def _recorded_decisions(day: RecordedDay | None) -> list[Marker]:
    """The recorded day's decisions, as markers beside the run's (HPA rescales on the replicas plot)."""
    if day is None:
        return []
    out = []
    for event in day.events:
        if event.reason not in DECISION_REASONS or not _decided(event.reason, event.message):
            continue
        who = RESCALE_PREFIX if event.reason == "SuccessfulRescale" else ""
        label = f"{who}recorded {event.reason} {event.object}: {event.message}"
        out.append(Marker(event.t, label, kind="recorded"))
        if len(out) >= MAX_DECISIONS:
            break
    return out


def _decided(reason: str, message: str) -> bool:
    """One marker per decision: CA records a scale-up twice (before and after setting the size) and a
    node's removal twice (marked, then removed); the first of each is the decision."""
    if reason == "ScaledUpGroup":
        return message.startswith("Scale-up: setting group")
    if reason in ("ScaleDown", "ScaleDownEmpty"):
        return message.startswith("Scale-down: removing")
    return True


def _marker_label(event: Event) -> str:
    return f"{event.reason}: {event.message or event.object}"


def render_report(summary: Summary, timeline: Timeline, events: EventLog, meta: ReportMeta) -> str:
    markers = _markers(events)
    recorded = _recorded_decisions(meta.recorded)
    decisions = [*_decisions(events), *recorded]
    charts = build_charts(timeline, meta, markers, decisions)
    key = marker_key(recorded=meta.recorded is not None)
    markers_note = f'<div class="legend charts-legend">{key}</div>' if markers or decisions else ""
    rows, omitted = event_rows(events.rows())
    title = f"{meta.scenario} · kubetide simulation"
    facts = (
        f"seed <b>{meta.seed}</b> · <b>{escape(format_duration(summary.simulated_seconds))}</b> simulated in "
        f"<b>{summary.wall_seconds:.2f}s</b> · {len(meta.node_groups)} node groups · "
        f"{len(meta.workloads)} workloads · {len(events):,} events"
    )
    description = f'<div class="sub">{escape(meta.description)}</div>' if meta.description else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{escape(title)}</title>
<style>{STYLE}</style></head>
<body>
<header><h1>{escape(meta.scenario)}</h1><div class="sub">{facts}</div>{description}</header>
<main>
{render_kpis(summary)}
<h2>Over simulated time</h2>
{markers_note}<section class="charts">{"".join(render_chart(c) for c in charts)}</section>
<h2>Summary</h2>
{render_summary_tables(summary, meta, render_event_counts(events.counts()))}
<h2 id="event-log">Event log</h2>
{render_event_log(rows, omitted, events.by_source())}
<footer>kubetide {escape(__version__)} · times are simulated, h:mm from the start of the run</footer>
</main>
<script>{SCRIPT}</script>
</body></html>
"""


def write_report(
    path: str | Path, summary: Summary, timeline: Timeline, events: EventLog, meta: ReportMeta
) -> None:
    Path(path).write_text(render_report(summary, timeline, events, meta), encoding="utf-8")
