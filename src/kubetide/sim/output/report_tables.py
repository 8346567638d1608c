"""The report's numbers: the headline cards and the summary tables, as HTML, from a ``Summary``."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.summary import Summary
from kubetide.sim.output.summary_text import format_seconds

__all__ = ["render_kpis", "render_summary_tables"]


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _card(label: str, value: str, detail: str = "") -> str:
    detail_html = f'<div class="detail">{escape(detail)}</div>' if detail else ""
    return (
        f'<div class="kpi"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(value)}</div>{detail_html}</div>'
    )


def render_kpis(summary: Summary) -> str:
    """The few numbers someone comparing two runs looks at first."""
    s, n, p, ca = summary, summary.nodes, summary.pods, summary.cluster_autoscaler
    ts = p.time_to_schedule_seconds
    cards = [
        _card("Cost", _money(n.cost), f"{n.node_seconds / 3600:,.1f} node-hours"),
        _card("Nodes", f"{n.max} max", f"{n.final} at the end"),
        _card("Pending pods", f"{p.max_pending} max", f"{p.pending_pod_seconds:,.0f} pod-seconds pending"),
        _card(
            "Time to schedule",
            f"{format_seconds(ts.p95)} p95",
            f"p50 {format_seconds(ts.p50)} · p99 {format_seconds(ts.p99)} · max {format_seconds(ts.max)}",
        ),
    ]
    if ca.enabled:  # no card for an autoscaler that did not run
        cards.append(
            _card(
                "Cluster autoscaler",
                f"+{ca.nodes_added} / −{ca.nodes_removed}",
                f"{ca.scale_ups} scale-ups · {ca.scale_downs} scale-downs · {ca.failed_scale_ups} failed",
            )
        )
    if s.hpa.enabled:
        cards.append(_card("HPA", f"{s.hpa.rescales} rescales", f"{len(s.workloads)} workloads"))
    esc = s.escalator
    if esc.enabled:
        cards.append(
            _card(
                "Escalator",
                f"+{esc.nodes_added} / −{esc.nodes_removed}",
                f"{esc.scale_ups} scale-ups · {esc.nodes_tainted} tainted · "
                f"{esc.extra.get('nodes_untainted', 0)} untainted",
            )
        )
    return f'<section class="kpis">{"".join(cards)}</section>'


def _table(
    headers: Sequence[str] | None, rows: Sequence[Sequence[str]], numeric_from: int = 1, total: bool = False
) -> str:
    """Cells are HTML already; ``headers=None`` makes a key-value table with no header row."""

    def cells(row: Sequence[str], tag: str) -> str:
        return "".join(
            f"<{tag}{' class=num' if i >= numeric_from else ''}>{c}</{tag}>" for i, c in enumerate(row)
        )

    body = [
        f"<tr{' class=total' if total and i == len(rows) - 1 else ''}>{cells(r, 'td')}</tr>"
        for i, r in enumerate(rows)
    ]
    head = f"<thead><tr>{cells(headers, 'th')}</tr></thead>" if headers is not None else ""
    return f'<table class="data">{head}<tbody>{"".join(body)}</tbody></table>'


def _panel(title: str, content: str, span: int = 1) -> str:
    css = f"panel span{span}" if span > 1 else "panel"
    return f'<div class="{css}"><h3>{escape(title)}</h3>{content}</div>'


def _dot(color: str) -> str:
    return f'<i class="dot" style="background:{color}"></i>'


def _target_text(targets: object) -> str:
    if not isinstance(targets, dict) or not targets:
        return "–"
    parts = []
    for metric, value in targets.items():
        parts.append(f"{metric.replace('_', ' ')} {value:g}{'%' if metric == 'cpu_utilization' else ''}")
    return escape(", ".join(parts))


def render_summary_tables(summary: Summary, meta: ReportMeta, event_counts_html: str) -> str:
    s = summary
    ts = s.pods.time_to_schedule_seconds
    speed = f"{s.simulated_seconds / s.wall_seconds:,.0f}× real time" if s.wall_seconds > 0 else "–"
    run = _table(
        None,
        [
            ["scenario", escape(s.scenario)],
            ["seed", str(s.seed)],
            ["simulated", format_seconds(s.simulated_seconds)],
            ["wall clock", f"{s.wall_seconds:.2f}s ({speed})"],
        ],
    )
    pods = _table(
        None,
        [
            ["pending pod-seconds", f"{s.pods.pending_pod_seconds:,.0f}"],
            ["max pending", str(s.pods.max_pending)],
            ["time to schedule p50 / p95", f"{format_seconds(ts.p50)} / {format_seconds(ts.p95)}"],
            ["time to schedule p99 / max", f"{format_seconds(ts.p99)} / {format_seconds(ts.max)}"],
            ["unschedulable at end", str(s.pods.unschedulable_at_end)],
        ],
    )
    groups = [
        [
            _dot(meta.group_color(name)) + escape(name) if name in meta.node_groups else escape(name),
            str(g.final),
            str(g.max),
            f"{g.node_seconds / 3600:,.1f}",
            _money(g.cost),
        ]
        for name, g in s.nodes.by_group.items()
    ]
    n = s.nodes
    groups.append(["total", str(n.final), str(n.max), f"{n.node_seconds / 3600:,.1f}", _money(n.cost)])
    nodes = _table(["group", "final", "max", "node-hours", "cost"], groups, total=True)
    workload_rows = [
        [
            _dot(meta.workload_color(key)) + escape(key) if key in meta.workloads else escape(key),
            str(w.min_replicas),
            str(w.max_replicas),
            str(w.final_replicas),
            str(w.scale_events),
            format_seconds(w.overloaded_seconds),
            _target_text(dict(meta.hpa_targets.get(key) or {})),
        ]
        for key, w in s.workloads.items()
    ]
    workloads = _table(
        ["workload", "min", "max", "final", "rescales", "overloaded", "HPA target"], workload_rows
    )
    ca, esc = s.cluster_autoscaler, s.escalator
    rows: list[list[str]] = []
    notes: list[str] = []
    if ca.enabled:  # no row for an autoscaler that did not run
        rows.append(
            [
                "cluster-autoscaler",
                str(ca.scale_ups),
                str(ca.nodes_added),
                str(ca.scale_downs),
                str(ca.nodes_removed),
            ]
        )
        notes.append(
            f"Cluster autoscaler: {ca.failed_scale_ups} failed scale-ups, {ca.backoffs} "
            f"backoffs, {ca.unregistered_removed} unregistered nodes removed."
        )
    if s.hpa.enabled:
        notes.append(f"HPA: {s.hpa.rescales} rescales.")
    note = " ".join(notes)
    if esc.enabled:
        rows.append(["escalator", str(esc.scale_ups), str(esc.nodes_added), "–", str(esc.nodes_removed)])
        note += (
            f" Escalator: {esc.nodes_tainted} nodes tainted, {esc.extra.get('nodes_untainted', 0)} untainted."
        )
    table = _table(["", "scale-ups", "nodes added", "scale-downs", "nodes removed"], rows) if rows else ""
    autoscalers = (table + (f'<p class="muted small">{note.strip()}</p>' if note else "")) or (
        '<p class="muted small">No autoscaler ran.</p>'
    )
    # Three columns: run facts, pods, nodes; the workloads across (their keys are long); then the
    # autoscalers beside the event counts, the longest table, last so it grows downwards alone.
    panels = [_panel("Run", run), _panel("Pods", pods), _panel("Nodes and cost by group", nodes)]
    if workload_rows:
        panels.append(_panel("Workloads", workloads, span=3))
    panels += [
        _panel("Autoscalers", autoscalers, span=2),
        _panel("Events by source and reason", event_counts_html),
    ]
    return f'<section class="tables">{"".join(panels)}</section>'
