"""Runs one conformance-format case through the oracle: ``run_oracle(case) -> dict`` with the output
keys of ``shared/spec/hpa.md`` section 10 (``{"error": True}`` when the computation fails)."""

from __future__ import annotations

from typing import Any

from . import horizontal as h
from . import quantity
from .goint import ZERO_TIME
from .replica_calculator import (
    NOW,
    Calc,
    CalcError,
    PodMetric,
    Tolerances,
    ago,
    calculate_requests,
    group_pods,
    raw_metrics,
    resource_metrics,
)


def _cfg(inp: dict[str, Any]) -> tuple[float, float]:
    cfg = inp.get("config") or {}
    return (
        float(cfg.get("cpu_initialization_period_seconds", 300)),
        float(cfg.get("delay_of_initial_readiness_status_seconds", 30)),
    )


def metric_replicas(inp: dict[str, Any]) -> dict[str, Any]:
    spec = inp["metric"]
    current = inp["current_replicas"]
    tol_raw = inp.get("tolerances") or {}
    tol = Tolerances(float(tol_raw.get("scaleDown", 0.1)), float(tol_raw.get("scaleUp", 0.1)))
    calc = Calc(inp.get("pods") or [], *_cfg(inp))
    type_ = spec["type"]
    try:
        if type_ in ("Resource", "ContainerResource"):
            src = spec["resource"] if type_ == "Resource" else spec["containerResource"]
            name = src["name"]
            container = src.get("container", "") if type_ == "ContainerResource" else ""
            target = src.get("target") or {}
            if target.get("averageValue") is not None:
                metrics = resource_metrics(inp.get("resource_metrics"), name, container)
                replicas, usage = calc.calc_plain_metric_replicas(
                    metrics, current, quantity.milli_value(target["averageValue"]), tol, name
                )
                return {"replicas": replicas, "usage_milli": usage}
            if target.get("averageUtilization") is None:
                raise CalcError("invalid resource metric source")
            metrics = resource_metrics(inp.get("resource_metrics"), name, container)
            replicas, util, raw = calc.get_resource_replicas(
                current, target["averageUtilization"], name, tol, metrics, container
            )
            return {"replicas": replicas, "utilization": util, "raw_value_milli": raw}
        if type_ == "Pods":
            target = spec["pods"]["target"]
            metrics = raw_metrics(inp.get("pod_custom_metrics"))
            replicas, usage = calc.calc_plain_metric_replicas(
                metrics, current, quantity.milli_value(target["averageValue"]), tol, ""
            )
            return {"replicas": replicas, "usage_milli": usage}
        if type_ == "Object":
            target = spec["object"]["target"]
            obj = inp.get("object_metric_value_milli")
            if target.get("type") == "Value" and target.get("value") is not None:
                if obj is None:
                    raise CalcError("object metric not found")
                replicas, usage = calc.object_metric_replicas(
                    current, quantity.milli_value(target["value"]), obj, tol
                )
                return {"replicas": replicas, "usage_milli": usage}
            if target.get("type") == "AverageValue" and target.get("averageValue") is not None:
                if obj is None:
                    raise CalcError("object metric not found")
                replicas, usage = calc.object_per_pod_metric_replicas(
                    current, quantity.milli_value(target["averageValue"]), obj, tol
                )
                return {"replicas": replicas, "usage_milli": usage}
            raise CalcError("invalid object metric source")
        if type_ == "External":
            target = spec["external"]["target"]
            values = inp.get("external_metric_values_milli") or []
            if target.get("averageValue") is not None:
                if not values:
                    raise CalcError("no metrics returned from external metrics API")
                replicas, usage = calc.external_per_pod_metric_replicas(
                    current, quantity.milli_value(target["averageValue"]), values, tol
                )
                return {"replicas": replicas, "usage_milli": usage}
            if target.get("value") is not None:
                if not values:
                    raise CalcError("no metrics returned from external metrics API")
                replicas, usage = calc.external_metric_replicas(
                    current, quantity.milli_value(target["value"]), values, tol
                )
                return {"replicas": replicas, "usage_milli": usage}
            raise CalcError("invalid external metric source")
    except CalcError:
        return {"error": True}
    return {"error": True}


def group_pods_case(inp: dict[str, Any]) -> dict[str, Any]:
    metrics = {}
    for m in inp.get("pod_metrics") or []:
        ts = ago(m.get("timestamp_seconds_ago"))
        metrics[m["pod"]] = PodMetric(0, ZERO_TIME if ts is None else ts, float(m.get("window_seconds") or 0))
    ready, unready, missing, ignored = group_pods(
        inp.get("pods") or [], metrics, inp.get("resource") or "", *_cfg(inp)
    )
    return {
        "ready_count": ready,
        "unready": sorted(unready),
        "missing": sorted(missing),
        "ignored": sorted(ignored),
    }


def pod_requests_case(inp: dict[str, Any]) -> dict[str, Any]:
    gate = bool((inp.get("feature_gates") or {}).get("PodLevelResources", False))
    try:
        return {
            "requests_milli": calculate_requests(
                inp.get("pods") or [], inp.get("container") or "", inp["resource"], gate
            )
        }
    except CalcError:
        return {"error": True}


def stabilize_scale_down(inp: dict[str, Any]) -> dict[str, Any]:
    recs = h._recs(inp.get("recommendations"))
    replicas = h.stabilize_recommendation(
        recs, inp["desired_replicas"], float(inp["downscale_stabilization_window_seconds"])
    )
    return {"replicas": replicas, "stored_recommendation_count": len(recs)}


def apply_limits(inp: dict[str, Any]) -> dict[str, Any]:
    replicas, reason = h.convert_with_rules(
        inp["current_replicas"],
        inp["desired_replicas"],
        inp["min_replicas"],
        inp["max_replicas"],
        float(inp.get("scale_up_limit_factor", 2.0)),
        float(inp.get("scale_up_limit_minimum", 4.0)),
    )
    return {"replicas": replicas, "reason": reason}


def apply_rate_limits(inp: dict[str, Any]) -> dict[str, Any]:
    b = inp.get("behavior") or {}
    replicas, reason = h.convert_with_behavior_rate(
        inp["current_replicas"],
        inp["desired_replicas"],
        inp["min_replicas"],
        inp["max_replicas"],
        h.generate_scale_up_rules(b.get("scaleUp")),
        h.generate_scale_down_rules(b.get("scaleDown")),
        h._events(inp.get("scale_up_events")),
        h._events(inp.get("scale_down_events")),
    )
    return {"replicas": replicas, "reason": reason}


def stabilize(inp: dict[str, Any]) -> dict[str, Any]:
    recs = h._recs(inp.get("recommendations"))
    replicas, _ = h.stabilize_with_behaviors(
        recs,
        inp["current_replicas"],
        inp["desired_replicas"],
        inp["scale_up_stabilization_window_seconds"],
        inp["scale_down_stabilization_window_seconds"],
    )
    return {"replicas": replicas, "stored_recommendations": [r.recommendation for r in recs]}


def _limit(up: bool, inp: dict[str, Any]) -> dict[str, Any]:
    rules = (
        h.generate_scale_up_rules(inp.get("rules")) if up else h.generate_scale_down_rules(inp.get("rules"))
    )
    fn = h.scale_up_limit_with_rules if up else h.scale_down_limit_with_rules
    limit = fn(
        inp["current_replicas"],
        h._events(inp.get("scale_up_events")),
        h._events(inp.get("scale_down_events")),
        rules,
    )
    return {"limit": limit}


def default_rules(inp: dict[str, Any]) -> dict[str, Any]:
    up = inp["direction"] in ("scaleUp", "up")
    rules = (
        h.generate_scale_up_rules(inp.get("rules")) if up else h.generate_scale_down_rules(inp.get("rules"))
    )
    return {
        "rules": {
            "stabilizationWindowSeconds": rules["stabilizationWindowSeconds"],
            "selectPolicy": rules["selectPolicy"],
            "policies": rules["policies"],
        }
    }


def store_scale_event(inp: dict[str, Any]) -> dict[str, Any]:
    events = h._events(inp.get("previous_events"))
    before = h.replicas_change_per_period(60, events)
    rules = inp.get("rules")
    up = inp["direction"] in ("up", "scaleUp")
    if rules is not None:
        defaulted = h.generate_scale_up_rules(rules) if up else h.generate_scale_down_rules(rules)
        behavior = {"scaleUp": defaulted, "scaleDown": defaulted}
        prev, new = inp["previous_replicas"], inp["new_replicas"]
        if up:
            h.store_scale_event(behavior, events, [], prev, new)
        else:
            h.store_scale_event(behavior, [], events, prev, new)
    return {
        "replica_change_in_last_60s_before": before,
        "stored_events_after": [{"replica_change": e.replica_change, "outdated": e.outdated} for e in events],
    }


_FUNCTIONS = {
    "metric_replicas": metric_replicas,
    "group_pods": group_pods_case,
    "pod_requests": pod_requests_case,
    "stabilize_scale_down": stabilize_scale_down,
    "apply_limits": apply_limits,
    "apply_rate_limits": apply_rate_limits,
    "stabilize": stabilize,
    "scale_up_limit": lambda inp: _limit(True, inp),
    "scale_down_limit": lambda inp: _limit(False, inp),
    "default_rules": default_rules,
    "store_scale_event": store_scale_event,
}


def run_oracle(case: dict[str, Any]) -> dict[str, Any]:
    inp = case["input"]
    if case["kind"] == "controller_sync":
        return h.controller_sync(inp)
    return _FUNCTIONS[inp["function"]](inp)


__all__ = ["NOW", "run_oracle"]
