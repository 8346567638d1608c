"""The human summary printed on stdout after a run: a few aligned plain-text tables, no colour, no width
beyond ~100 columns, so it reads the same in a terminal, a CI log and a pasted issue."""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.model.durations import format_duration
from kubetide.sim.output.summary import Summary

__all__ = ["format_seconds", "render_summary", "render_table"]


def format_seconds(seconds: float) -> str:
    """``0s``, ``4.5s``, ``1m35s``, ``6h``: whole seconds once past a minute."""
    if seconds != seconds:
        return "-"
    if abs(seconds) < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    return format_duration(round(seconds))


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, align: str = "", indent: str = "  "
) -> str:
    """Columns padded to their widest cell. ``align`` has one letter per column, ``l`` or ``r``; by
    default the first column is left-aligned (names) and the others right-aligned (numbers)."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    align = align or "l" + "r" * (len(headers) - 1)

    def line(cells: Sequence[str]) -> str:
        parts = [
            str(c).ljust(w) if a == "l" else str(c).rjust(w)
            for c, w, a in zip(cells, widths, align, strict=True)
        ]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])


def _pairs(pairs: Sequence[tuple[str, str]], indent: str = "  ") -> str:
    width = max(len(key) for key, _ in pairs)
    return "\n".join(f"{indent}{key.ljust(width)}  {value}" for key, value in pairs)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _hours(node_seconds: float) -> str:
    return f"{node_seconds / 3600:,.1f}"


def render_summary(summary: Summary) -> str:
    """The tables: run facts, pods, nodes and cost by group, workloads, autoscaler counts."""
    s = summary
    speed = s.simulated_seconds / s.wall_seconds if s.wall_seconds > 0 else float("inf")
    speed_text = f"{speed:,.0f}x real time" if speed != float("inf") else "instant"
    out = [
        f"kubetide simulate: {s.scenario} (seed {s.seed})",
        f"  simulated {format_seconds(s.simulated_seconds)} in {s.wall_seconds:.2f}s wall ({speed_text})",
        "",
    ]

    ts = s.pods.time_to_schedule_seconds
    out += [
        "Pods",
        _pairs(
            [
                ("pending pod-seconds", f"{s.pods.pending_pod_seconds:,.0f}"),
                ("max pending", str(s.pods.max_pending)),
                (
                    "time to schedule",
                    f"p50 {format_seconds(ts.p50)}  p95 {format_seconds(ts.p95)}  "
                    f"p99 {format_seconds(ts.p99)}  max {format_seconds(ts.max)}",
                ),
                ("unschedulable at end", str(s.pods.unschedulable_at_end)),
            ]
        ),
        "",
    ]

    group_rows = [
        [name, str(g.final), str(g.max), _hours(g.node_seconds), _money(g.cost)]
        for name, g in s.nodes.by_group.items()
    ]
    n = s.nodes
    group_rows.append(["total", str(n.final), str(n.max), _hours(n.node_seconds), _money(n.cost)])
    out += ["Nodes", render_table(["group", "final", "max", "node-hours", "cost"], group_rows), ""]

    if s.workloads:
        workload_rows = [
            [
                key,
                str(w.min_replicas),
                str(w.max_replicas),
                str(w.final_replicas),
                str(w.scale_events),
                format_seconds(w.overloaded_seconds),
            ]
            for key, w in s.workloads.items()
        ]
        out += [
            "Workloads",
            render_table(["workload", "min", "max", "final", "scale events", "overloaded"], workload_rows),
            "",
        ]

    ca, hpa, esc = s.cluster_autoscaler, s.hpa, s.escalator
    rows: list[list[str]] = []
    if ca.enabled:  # no row for an autoscaler that did not run
        rows.append(
            [
                "cluster-autoscaler",
                str(ca.scale_ups),
                str(ca.nodes_added),
                str(ca.scale_downs),
                str(ca.nodes_removed),
                f"{ca.failed_scale_ups} failed, {ca.backoffs} backoffs, "
                f"{ca.unregistered_removed} unregistered removed",
            ]
        )
    if hpa.enabled:
        rows.append(["hpa", "-", "-", "-", "-", f"{hpa.rescales} rescales"])
    if esc.enabled:
        rows.append(
            [
                "escalator",
                str(esc.scale_ups),
                str(esc.nodes_added),
                "-",
                str(esc.nodes_removed),
                f"{esc.nodes_tainted} tainted, {esc.extra.get('nodes_untainted', 0)} untainted",
            ]
        )
    out += [
        "Autoscalers",
        render_table(["", "scale-ups", "+nodes", "scale-downs", "-nodes", "other"], rows, align="lrrrrl")
        if rows
        else "  none ran",
    ]
    return "\n".join(out) + "\n"
