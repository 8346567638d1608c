"""Runs one upstream-derived conformance case through kubetide's public API.

``run_case(case)`` maps the case's ``input`` onto the HPA code and returns the computed outputs under
the keys of ``expected`` (it reads only the key names, never the values). A computation that fails
returns ``{"error": True, "error_hint": ...}``. Format: ``shared/spec/hpa.md`` section 10.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetide.hpa import with_behavior, without_behavior
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.podgroups import RequestError, group_pods, pod_requests_milli
from kubetide.hpa.ports import NEVER, PodMetric, Scale
from kubetide.hpa.snapshot import (
    NOW,
    SnapshotMetrics,
    SnapshotTargets,
    read_config,
    read_events,
    read_pod,
    read_recommendations,
    read_resource_items,
    read_snapshot,
)
from kubetide.hpa.sources import MetricContext, MetricFailure, compute_metric
from kubetide.hpa.state import ScaleEvent
from kubetide.hpa.tolerances import Tolerances
from kubetide.model.fields import Node
from kubetide.model.hpa import (
    HPA,
    MetricSpec,
    ScalingRules,
    default_scale_down_rules,
    default_scale_up_rules,
    rules_from_json,
)
from kubetide.model.selectors import LabelSelector

__all__ = ["run_case"]


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    keys = list(case.get("expected", {}).keys())
    inp = Node(case["input"], "input")
    kind = case["kind"]
    function = inp.get("function").str(None)
    handler = _HANDLERS.get(function or kind)
    if handler is None:
        raise ValueError(f"unknown case kind {kind!r} / function {function!r}")
    try:
        result = handler(inp)
    except _CaseError as exc:
        return {"error": True, "error_hint": str(exc)}
    return {k: result[k] for k in keys if k in result} if keys else result


class _CaseError(Exception):
    pass


# --- replica_calc ----------------------------------------------------------------------------------


def _metric_replicas(inp: Node) -> dict[str, Any]:
    metric = _metric_spec(inp.get("metric").value)
    current = inp.get("current_replicas").int()
    tol = inp.get("tolerances")
    tolerances = Tolerances(float(tol.get("scaleDown").number(0.1)), float(tol.get("scaleUp").number(0.1)))
    config = read_config(inp.get("config"))
    pods = [read_pod(p) for p in inp.get("pods").list()]
    ext = inp.get("external_metric_values_milli")
    obj = inp.get("object_metric_value_milli")
    pod_custom = inp.get("pod_custom_metrics")
    name = metric.metric.name if metric.metric else ""
    metrics = SnapshotMetrics(
        pods={name: {s.get("pod").str(): PodMetric(s.get("value_milli").int()) for s in pod_custom.list()}},
        objects={name: obj.int()} if obj.value is not None else {},
        external={name: [v.int() for v in ext.list()]},
        resource_items=read_resource_items(inp.get("resource_metrics")),
    )
    hpa = HPA("case", "default", metric.described_object or _REF, max_replicas=1, metrics=(metric,))
    ctx = MetricContext(
        hpa,
        current,
        current,
        LabelSelector(),
        metrics,
        SnapshotTargets(Scale(current, current, "x"), pods),
        config,
        tolerances,
        NOW,
    )
    try:
        result = compute_metric(ctx, metric)
    except MetricFailure as exc:
        raise _CaseError(exc.message) from None
    out: dict[str, Any] = {"replicas": result.replicas, "usage_milli": result.value_milli}
    if result.utilization is not None:
        out.update(utilization=result.utilization, raw_value_milli=result.value_milli)
    return out


def _metric_spec(raw: Any) -> MetricSpec:
    manifest = {
        "metadata": {"name": "case"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "maxReplicas": 1, "metrics": [raw]},
    }
    return HPA.from_manifest(manifest).metrics[0]


_REF = HPA.from_manifest(
    {
        "metadata": {"name": "r"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "maxReplicas": 1},
    }
).scale_target_ref


def _group_pods(inp: Node) -> dict[str, Any]:
    config = read_config(inp.get("config"))
    pods = [read_pod(p) for p in inp.get("pods").list()]
    metrics = {}
    for m in inp.get("pod_metrics").list():
        ts = m.get("timestamp_seconds_ago").number(None)
        metrics[m.get("pod").str()] = PodMetric(
            0, NEVER if ts is None else NOW - float(ts), float(m.get("window_seconds").number(0))
        )
    groups = group_pods(
        pods,
        metrics,
        inp.get("resource").str(""),
        NOW,
        config.cpu_initialization_period,
        config.initial_readiness_delay,
    )
    return {
        "ready_count": groups.ready_count,
        "unready": sorted(groups.unready),
        "missing": sorted(groups.missing),
        "ignored": sorted(groups.ignored),
    }


def _pod_requests(inp: Node) -> dict[str, Any]:
    pods = [read_pod(p) for p in inp.get("pods").list()]
    gate = inp.get("feature_gates").get("PodLevelResources").bool(False)
    try:
        return {
            "requests_milli": pod_requests_milli(
                pods, inp.get("resource").str(), inp.get("container").str("") or "", gate
            )
        }
    except RequestError as exc:
        raise _CaseError(str(exc)) from None


# --- normalization ---------------------------------------------------------------------------------


def _stabilize_scale_down(inp: Node) -> dict[str, Any]:
    recs = read_recommendations(inp.get("recommendations"), NOW)
    replicas = without_behavior.stabilize_scale_down(
        recs,
        inp.get("desired_replicas").int(),
        NOW,
        float(inp.get("downscale_stabilization_window_seconds").number()),
    )
    return {"replicas": replicas, "stored_recommendation_count": len(recs)}


def _apply_limits(inp: Node) -> dict[str, Any]:
    replicas, reason, _ = without_behavior.apply_limits(
        inp.get("current_replicas").int(),
        inp.get("desired_replicas").int(),
        inp.get("min_replicas").int(),
        inp.get("max_replicas").int(),
        float(inp.get("scale_up_limit_factor").number(HPAConfig().scale_up_limit_factor)),
        float(inp.get("scale_up_limit_minimum").number(HPAConfig().scale_up_limit_minimum)),
    )
    return {"replicas": replicas, "reason": reason}


def _rules(node: Node, direction: str) -> ScalingRules:
    rules = rules_from_json(node.value, node.path)
    return (
        default_scale_up_rules(rules) if direction in ("up", "scaleUp") else default_scale_down_rules(rules)
    )


def _apply_rate_limits(inp: Node) -> dict[str, Any]:
    b = inp.get("behavior")
    replicas, reason, _ = with_behavior.apply_rate_limits(
        inp.get("current_replicas").int(),
        inp.get("desired_replicas").int(),
        inp.get("min_replicas").int(),
        inp.get("max_replicas").int(),
        _rules(b.get("scaleUp"), "up"),
        _rules(b.get("scaleDown"), "down"),
        read_events(inp.get("scale_up_events"), NOW),
        read_events(inp.get("scale_down_events"), NOW),
        NOW,
    )
    return {"replicas": replicas, "reason": reason}


def _stabilize(inp: Node) -> dict[str, Any]:
    recs = read_recommendations(inp.get("recommendations"), NOW)
    replicas, _, _ = with_behavior.stabilize(
        recs,
        inp.get("current_replicas").int(),
        inp.get("desired_replicas").int(),
        NOW,
        float(inp.get("scale_up_stabilization_window_seconds").number()),
        float(inp.get("scale_down_stabilization_window_seconds").number()),
    )
    return {"replicas": replicas, "stored_recommendations": [r.replicas for r in recs]}


def _limit(up: bool) -> Callable[[Node], dict[str, Any]]:
    def run(inp: Node) -> dict[str, Any]:
        fn = with_behavior.scale_up_limit if up else with_behavior.scale_down_limit
        limit = fn(
            inp.get("current_replicas").int(),
            read_events(inp.get("scale_up_events"), NOW),
            read_events(inp.get("scale_down_events"), NOW),
            _rules(inp.get("rules"), "up" if up else "down"),
            NOW,
        )
        return {"limit": limit}

    return run


def _default_rules(inp: Node) -> dict[str, Any]:
    rules = _rules(inp.get("rules"), inp.get("direction").str())
    return {
        "rules": {
            "stabilizationWindowSeconds": rules.stabilization_window_seconds,
            "selectPolicy": rules.select_policy,
            "policies": [
                {"type": p.type, "value": p.value, "periodSeconds": p.period_seconds}
                for p in rules.policies or ()
            ],
        }
    }


def _store_scale_event(inp: Node) -> dict[str, Any]:
    events = read_events(inp.get("previous_events"), NOW)
    before = with_behavior.replicas_change_in_period(events, 60, NOW)
    rules_node = inp.get("rules")
    previous, new = inp.get("previous_replicas").int(), inp.get("new_replicas").int()
    if rules_node.value is not None:  # without behavior nothing is stored
        direction = inp.get("direction").str()
        rules = _rules(rules_node, direction)
        with_behavior.store_scale_event(events, rules, abs(new - previous), NOW)
    return {
        "replica_change_in_last_60s_before": before,
        "stored_events_after": [_event_json(e) for e in events],
    }


def _event_json(e: ScaleEvent) -> dict[str, Any]:
    return {"replica_change": e.replica_change, "outdated": e.outdated}


# --- controller_sync --------------------------------------------------------------------------------


def _controller_sync(inp: Node) -> dict[str, Any]:
    # Upstream's controller tests hand the controller fake objects no API server validated
    # (an unknown metric type, minReplicas 0 without an Object metric): read them as they are.
    snap = read_snapshot(inp.value, validate=False)
    controller = HorizontalController(snap.metrics, snap.targets, snap.config)
    controller.restore(snap.hpa.key, snap.state)
    result = controller.reconcile(snap.hpa, snap.now)
    out: dict[str, Any] = {
        "desired_replicas": result.desired_replicas,
        "scale_updated": result.scaled,
        "status_desired_replicas": result.status.desired_replicas,
        "conditions": [[c.type, c.status, c.reason] for c in result.status.conditions],
        "reconcile_error": result.error is not None,
    }
    for m in result.status.current_metrics:
        resource = m.get("resource")
        if m.get("type") == "Resource" and isinstance(resource, dict) and resource.get("name") == "cpu":
            out["current_cpu_utilization"] = resource["current"].get("averageUtilization")
            break
    return out


_HANDLERS: dict[str, Callable[[Node], dict[str, Any]]] = {
    "metric_replicas": _metric_replicas,
    "group_pods": _group_pods,
    "pod_requests": _pod_requests,
    "stabilize_scale_down": _stabilize_scale_down,
    "apply_limits": _apply_limits,
    "apply_rate_limits": _apply_rate_limits,
    "stabilize": _stabilize,
    "scale_up_limit": _limit(True),
    "scale_down_limit": _limit(False),
    "default_rules": _default_rules,
    "store_scale_event": _store_scale_event,
    "controller_sync": _controller_sync,
}
