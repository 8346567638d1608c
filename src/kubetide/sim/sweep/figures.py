"""The figures a sweep compares runs on, read from a run's ``summary.json``: one row of sweep.csv.

``actions`` counts the autoscalers' decisions that changed something: HPA rescales, Cluster Autoscaler
scale-ups and scale-downs, Escalator scale-ups and node removals. ``overloaded_seconds`` adds up every
workload's (a sweep ranks the whole cluster, not one workload).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FIGURES", "LABELS", "figures"]

# Column name -> label, in sweep.csv's order.
LABELS: dict[str, str] = {
    "cost": "cost ($)",
    "pending_pod_seconds": "pending pod-seconds",
    "time_to_schedule_p95": "time to schedule p95 (s)",
    "overloaded_seconds": "overloaded seconds",
    "node_hours": "node-hours",
    "actions": "autoscaler actions",
}
FIGURES = tuple(LABELS)


def figures(summary: Mapping[str, Any]) -> dict[str, float]:
    pods, nodes = summary["pods"], summary["nodes"]
    autoscalers = summary.get("autoscalers", {})
    ca = autoscalers.get("cluster-autoscaler", {})
    escalator = autoscalers.get("escalator", {})
    actions = (
        autoscalers.get("hpa", {}).get("rescales", 0)
        + ca.get("scale_ups", 0)
        + ca.get("scale_downs", 0)
        + escalator.get("scale_ups", 0)
        + escalator.get("nodes_removed", 0)
    )
    return {
        "cost": float(nodes["cost"]),
        "pending_pod_seconds": float(pods["pending_pod_seconds"]),
        "time_to_schedule_p95": float(pods["time_to_schedule_seconds"]["p95"]),
        "overloaded_seconds": float(
            sum(w.get("overloaded_seconds", 0.0) for w in summary.get("workloads", {}).values())
        ),
        "node_hours": float(nodes["node_seconds"]) / 3600.0,
        "actions": float(actions),
    }
