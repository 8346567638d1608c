"""``horizontal.go`` (normalization, rate limits, scale events, ``reconcileAutoscaler``) and
``defaults.go`` (behavior defaulting), over conformance-case dicts."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from . import quantity
from .goint import MAX_INT32, MIN_INT32, f2i32, gceil, i32
from .replica_calculator import NOW, Calc, CalcError, PodMetric, Tolerances, raw_metrics, resource_metrics

# --- defaults.go ------------------------------------------------------------------------------------


def _copy_rules(frm: dict[str, Any] | None, to: dict[str, Any]) -> dict[str, Any]:
    if frm is None:
        return to
    for key in ("selectPolicy", "stabilizationWindowSeconds", "policies", "tolerance"):
        if frm.get(key) is not None:
            to[key] = copy.deepcopy(frm[key])
    return to


def generate_scale_up_rules(rules: dict[str, Any] | None) -> dict[str, Any]:
    default = {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
        "tolerance": None,
    }
    return _copy_rules(rules, default)


def generate_scale_down_rules(rules: dict[str, Any] | None) -> dict[str, Any]:
    default = {
        "stabilizationWindowSeconds": None,
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        "tolerance": None,
    }
    return _copy_rules(rules, default)


def default_behavior(behavior: dict[str, Any] | None) -> dict[str, Any] | None:
    if behavior is None:
        return None
    return {
        "scaleUp": generate_scale_up_rules(behavior.get("scaleUp")),
        "scaleDown": generate_scale_down_rules(behavior.get("scaleDown")),
    }


# --- events and recommendations ----------------------------------------------------------------------


@dataclass
class Event:
    replica_change: int
    timestamp: float
    outdated: bool = False


@dataclass
class Rec:
    recommendation: int
    timestamp: float


def replicas_change_per_period(period_seconds: int, events: list[Event]) -> int:
    cutoff = NOW - period_seconds
    replicas = 0
    for e in events:
        if e.timestamp > cutoff:
            replicas = i32(replicas + e.replica_change)
    return replicas


def scale_up_limit_with_rules(current: int, up: list[Event], down: list[Event], rules: dict[str, Any]) -> int:
    if rules["selectPolicy"] == "Disabled":
        return current
    if rules["selectPolicy"] == "Min":
        result, fn = MAX_INT32, min
    else:
        result, fn = MIN_INT32, max
    proposed = 0
    for p in rules["policies"]:
        added = replicas_change_per_period(p["periodSeconds"], up)
        deleted = replicas_change_per_period(p["periodSeconds"], down)
        start = i32(i32(current - added) + deleted)
        if p["type"] == "Pods":
            proposed = i32(start + p["value"])
        elif p["type"] == "Percent":
            proposed = f2i32(gceil(float(start) * (1 + float(p["value"]) / 100)))
        result = fn(result, proposed)
    return result


def scale_down_limit_with_rules(
    current: int, up: list[Event], down: list[Event], rules: dict[str, Any]
) -> int:
    if rules["selectPolicy"] == "Disabled":
        return current
    if rules["selectPolicy"] == "Min":
        result, fn = MIN_INT32, max
    else:
        result, fn = MAX_INT32, min
    proposed = 0
    for p in rules["policies"]:
        added = replicas_change_per_period(p["periodSeconds"], up)
        deleted = replicas_change_per_period(p["periodSeconds"], down)
        start = i32(i32(current - added) + deleted)
        if p["type"] == "Pods":
            proposed = i32(start - p["value"])
        elif p["type"] == "Percent":
            proposed = f2i32(float(start) * (1 - float(p["value"]) / 100))
        result = fn(result, proposed)
    return result


def stabilize_recommendation(recs: list[Rec], proposal: int, window: float) -> int:
    """``stabilizeRecommendation`` (no behavior)."""
    max_rec = proposal
    found, old_index = False, 0
    cutoff = NOW - window
    for i, rec in enumerate(recs):
        if rec.timestamp < cutoff:
            found, old_index = True, i
        elif rec.recommendation > max_rec:
            max_rec = rec.recommendation
    if found:
        recs[old_index] = Rec(proposal, NOW)
    else:
        recs.append(Rec(proposal, NOW))
    return max_rec


def stabilize_with_behaviors(
    recs: list[Rec], current: int, desired: int, up_window: int, down_window: int
) -> tuple[int, str]:
    found, old_index = False, 0
    up_rec, down_rec = desired, desired
    up_cutoff, down_cutoff = NOW - up_window, NOW - down_window
    for i, rec in enumerate(recs):
        if rec.timestamp > up_cutoff:
            up_rec = min(rec.recommendation, up_rec)
        if rec.timestamp > down_cutoff:
            down_rec = max(rec.recommendation, down_rec)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            found, old_index = True, i
    recommendation = current
    if recommendation < up_rec:
        recommendation = up_rec
    if recommendation > down_rec:
        recommendation = down_rec
    if found:
        recs[old_index] = Rec(desired, NOW)
    else:
        recs.append(Rec(desired, NOW))
    reason = "ScaleUpStabilized" if desired >= current else "ScaleDownStabilized"
    return recommendation, reason


def convert_with_behavior_rate(
    current: int,
    desired: int,
    min_r: int,
    max_r: int,
    up_rules: dict[str, Any],
    down_rules: dict[str, Any],
    up: list[Event],
    down: list[Event],
) -> tuple[int, str]:
    if desired > current:
        limit = scale_up_limit_with_rules(current, up, down, up_rules)
        if limit < current:
            limit = current
        maximum = max_r
        if maximum > limit:
            maximum, reason = limit, "ScaleUpLimit"
        else:
            reason = "TooManyReplicas"
        if desired > maximum:
            return maximum, reason
    elif desired < current:
        limit = scale_down_limit_with_rules(current, up, down, down_rules)
        if limit > current:
            limit = current
        minimum = min_r
        if minimum < limit:
            minimum, reason = limit, "ScaleDownLimit"
        else:
            reason = "TooFewReplicas"
        if desired < minimum:
            return minimum, reason
    return desired, "DesiredWithinRange"


def scale_up_limit_plain(current: int, factor: float, minimum: float) -> int:
    return f2i32(max(factor * float(current), minimum))


def convert_with_rules(
    current: int, desired: int, min_r: int, max_r: int, factor: float, minimum_limit: float
) -> tuple[int, str]:
    """``convertDesiredReplicasWithRules``."""
    limit = scale_up_limit_plain(current, factor, minimum_limit)
    if max_r > limit:
        maximum, reason = limit, "ScaleUpLimit"
    else:
        maximum, reason = max_r, "TooManyReplicas"
    if desired < min_r:
        return min_r, "TooFewReplicas"
    if desired > maximum:
        return maximum, reason
    return desired, "DesiredWithinRange"


def longest_policy_period(rules: dict[str, Any]) -> int:
    longest = 0
    for p in rules["policies"]:
        if p["periodSeconds"] > longest:
            longest = p["periodSeconds"]
    return longest


def store_scale_event(
    behavior: dict[str, Any] | None, up: list[Event], down: list[Event], prev: int, new: int
) -> None:
    if behavior is None:
        return
    if new > prev:
        events, rules, change = up, behavior["scaleUp"], i32(new - prev)
    else:
        events, rules, change = down, behavior["scaleDown"], i32(prev - new)
    cutoff = NOW - longest_policy_period(rules)
    for e in events:
        if e.timestamp < cutoff:
            e.outdated = True
    found, old_index = False, 0
    for i, e in enumerate(events):
        if e.outdated:
            found, old_index = True, i
    ev = Event(change, NOW, False)
    if found:
        events[old_index] = ev
    else:
        events.append(ev)


# --- reconcileAutoscaler ------------------------------------------------------------------------------


class MetricFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class World:
    """One controller_sync input, read."""

    inp: dict[str, Any]
    conditions: list[dict[str, str]] = field(default_factory=list)

    def set_condition(self, type_: str, status: str, reason: str) -> None:
        for c in self.conditions:
            if c["type"] == type_:
                c["status"], c["reason"] = status, reason
                return
        self.conditions.append({"type": type_, "status": status, "reason": reason})

    def remove_condition(self, type_: str) -> None:
        self.conditions = [c for c in self.conditions if c["type"] != type_]


def _events(raw: list[dict[str, Any]] | None) -> list[Event]:
    return [
        Event(e["replica_change"], NOW - float(e["seconds_ago"]), bool(e.get("outdated", False)))
        for e in raw or []
    ]


def _recs(raw: list[dict[str, Any]] | None) -> list[Rec]:
    return [Rec(r["replicas"], NOW - float(r["seconds_ago"])) for r in raw or []]


def tolerances_for(behavior: dict[str, Any] | None, flag: float, configurable: bool) -> Tolerances:
    down = up = flag
    if behavior is None or not configurable:
        return Tolerances(down, up)
    sd, su = behavior.get("scaleDown"), behavior.get("scaleUp")
    if sd is not None and sd.get("tolerance") is not None:
        down = quantity.approximate_float64(sd["tolerance"])
    if su is not None and su.get("tolerance") is not None:
        up = quantity.approximate_float64(su["tolerance"])
    return Tolerances(down, up)


_REASONS = {
    "Resource": "FailedGetResourceMetric",
    "ContainerResource": "FailedGetContainerResourceMetric",
    "Pods": "FailedGetPodsMetric",
    "Object": "FailedGetObjectMetric",
    "External": "FailedGetExternalMetric",
}


def _q(target: dict[str, Any], key: str) -> int | None:
    v = target.get(key)
    return None if v is None else quantity.milli_value(v)


def compute_metric(
    spec: dict[str, Any],
    spec_replicas: int,
    status_replicas: int,
    calc: Calc,
    tol: Tolerances,
    fetch_errors: set[str],
    resource_items: list[dict[str, Any]] | None,
    pod_custom: dict[str, list[dict[str, Any]]],
    objects: dict[str, int],
    external: dict[str, list[int]],
) -> tuple[int, dict[str, Any]]:
    """``computeReplicasForMetric``: (proposal, metric status) or MetricFailed(reason)."""
    type_ = spec.get("type")
    if type_ not in _REASONS:
        raise MetricFailed("InvalidMetricSourceType")
    reason = _REASONS[type_]
    try:
        if type_ in ("Resource", "ContainerResource"):
            src = spec["resource"] if type_ == "Resource" else spec["containerResource"]
            name = src["name"]
            container = src.get("container", "") if type_ == "ContainerResource" else ""
            target = src.get("target") or {}
            avg_value, avg_util = _q(target, "averageValue"), target.get("averageUtilization")
            if avg_value is None and avg_util is None:
                raise CalcError("invalid resource metric source")
            if type_ in fetch_errors:
                raise CalcError("unable to fetch metrics from resource metrics API")
            metrics = resource_metrics(resource_items, name, container)
            if avg_value is not None:
                replicas, _ = calc.calc_plain_metric_replicas(metrics, spec_replicas, avg_value, tol, name)
                return replicas, {"type": type_, "name": name, "averageUtilization": None}
            replicas, util, _ = calc.get_resource_replicas(
                spec_replicas, avg_util, name, tol, metrics, container
            )
            return replicas, {"type": type_, "name": name, "averageUtilization": util}
        if type_ == "Pods":
            src = spec["pods"]
            target_value = _q(src.get("target") or {}, "averageValue")
            assert target_value is not None  # upstream dereferences it unconditionally
            if "Pods" in fetch_errors:
                raise CalcError("unable to fetch metrics from custom metrics API")
            metrics = raw_metrics(pod_custom.get(src["metric"]["name"]))
            replicas, _ = calc.calc_plain_metric_replicas(metrics, spec_replicas, target_value, tol, "")
            return replicas, {"type": "Pods"}
        if type_ == "Object":
            src = spec["object"]
            target = src.get("target") or {}
            name = src["metric"]["name"]

            def fetch_object() -> int:
                if "Object" in fetch_errors or name not in objects:
                    raise CalcError("unable to fetch metrics from custom metrics API")
                return objects[name]

            if target.get("type") == "Value" and target.get("value") is not None:
                usage = fetch_object()
                replicas, _ = calc.object_metric_replicas(spec_replicas, _q(target, "value") or 0, usage, tol)
                return replicas, {"type": "Object"}
            if target.get("type") == "AverageValue" and target.get("averageValue") is not None:
                usage = fetch_object()
                replicas, _ = calc.object_per_pod_metric_replicas(
                    status_replicas, _q(target, "averageValue") or 0, usage, tol
                )
                return replicas, {"type": "Object"}
            raise CalcError("invalid object metric source")
        # External
        src = spec["external"]
        target = src.get("target") or {}
        name = src["metric"]["name"]

        def fetch_external() -> list[int]:
            values = external.get(name)
            if "External" in fetch_errors or not values:
                raise CalcError("no metrics returned from external metrics API")
            return values

        if target.get("averageValue") is not None:
            values = fetch_external()
            replicas, _ = calc.external_per_pod_metric_replicas(
                status_replicas, _q(target, "averageValue") or 0, values, tol
            )
            return replicas, {"type": "External"}
        if target.get("value") is not None:
            values = fetch_external()
            replicas, _ = calc.external_metric_replicas(spec_replicas, _q(target, "value") or 0, values, tol)
            return replicas, {"type": "External"}
        raise CalcError("invalid external metric source")
    except CalcError:
        raise MetricFailed(reason) from None


def default_metrics(metrics: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if not metrics:
        return [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]
    return metrics


def _selector_ok(selector: str) -> bool:
    if selector == "":
        return False
    # The strategies only produce "name=test-pod"-like selectors or clearly malformed ones.
    return "(" not in selector or ")" in selector


def controller_sync(inp: dict[str, Any]) -> dict[str, Any]:
    cfg = inp.get("config") or {}
    gates = cfg.get("feature_gates") or {}
    scale_to_zero_gate = bool(gates.get("HPAScaleToZero", True))
    configurable_tol = bool(gates.get("HPAConfigurableTolerance", True))
    hpa = inp["hpa"]
    spec = hpa["spec"]
    status = hpa.get("status") or {}
    world = World(inp, [dict(c) for c in status.get("conditions") or []])
    old_desired = status.get("desiredReplicas", 0)
    scale = inp["scale"]
    state = inp.get("controller_state") or {}
    recs_raw = state.get("recommendations")
    recs = _recs(recs_raw)
    up_events, down_events = _events(state.get("scale_up_events")), _events(state.get("scale_down_events"))

    behavior = default_behavior(spec.get("behavior"))
    metric_specs = default_metrics(spec.get("metrics"))
    min_r = spec["minReplicas"] if spec.get("minReplicas") is not None else 1
    max_r = spec["maxReplicas"]

    def out(
        desired: int, scaled: bool, status_desired: int, error: bool, statuses: list[dict[str, Any]] | None
    ):
        res: dict[str, Any] = {
            "desired_replicas": desired,
            "scale_updated": scaled,
            "status_desired_replicas": status_desired,
            "conditions": [[c["type"], c["status"], c["reason"]] for c in world.conditions],
            "reconcile_error": error,
        }
        for s in statuses or []:
            if s.get("type") == "Resource" and s.get("name") == "cpu":
                res["current_cpu_utilization"] = s["averageUtilization"]
                break
        return res

    if scale.get("get_error"):
        world.set_condition("AbleToScale", "False", "FailedGetScale")
        return out(old_desired, False, old_desired, True, None)
    world.set_condition("AbleToScale", "True", "SucceededGetScale")
    current = scale["spec_replicas"]
    status_replicas = scale.get("status_replicas", current)
    if recs_raw is None:
        recs = [Rec(current, NOW)]

    desired = 0
    rescale = True
    has_obj_ext = any(m.get("type") in ("Object", "External") for m in metric_specs)
    scaled_to_zero = False
    # getScaledToZeroConditionStatus looks at the first ScaledToZero condition only.
    for c in status.get("conditions") or []:
        if c["type"] == "ScaledToZero":
            scaled_to_zero = scale_to_zero_gate and c["status"] == "True"
            break
    can_scale_from_zero = scaled_to_zero and has_obj_ext
    needs_metrics = True
    if current == 0:
        if (min_r != 0 and scaled_to_zero) or can_scale_from_zero:
            needs_metrics = True
        else:
            needs_metrics = False
            desired, rescale = 0, False
            world.set_condition("ScalingActive", "False", "ScalingDisabled")
            if not scale_to_zero_gate:
                world.remove_condition("ScaledToZero")
    elif current > max_r:
        desired, needs_metrics = max_r, False
    elif current < min_r:
        desired, needs_metrics = min_r, False

    statuses: list[dict[str, Any]] | None = None
    error = False
    if needs_metrics:
        tol = tolerances_for(behavior, float(cfg.get("tolerance", 0.1)), configurable_tol)
        calc = Calc(
            inp.get("pods") or [],
            float(cfg.get("cpu_initialization_period_seconds", 300)),
            float(cfg.get("delay_of_initial_readiness_status_seconds", 30)),
            bool(gates.get("PodLevelResources", False)),
        )
        # computeReplicasForMetrics
        selector = scale.get("selector", "")
        if not _selector_ok(selector):
            world.set_condition("ScalingActive", "False", "InvalidSelector")
            return out(old_desired, False, old_desired, True, None)
        statuses = []
        replicas = 0
        invalid = 0
        first_reason = ""
        fetch_errors = set(inp.get("metric_fetch_errors") or [])
        for m in metric_specs:
            try:
                proposal, st = compute_metric(
                    m,
                    current,
                    status_replicas,
                    calc,
                    tol,
                    fetch_errors,
                    inp.get("resource_metrics"),
                    {k: v for k, v in (inp.get("pod_custom_metrics") or {}).items()},
                    dict(inp.get("object_metrics") or {}),
                    {k: list(v) for k, v in (inp.get("external_metrics") or {}).items()},
                )
            except MetricFailed as f:
                if invalid <= 0:
                    first_reason = f.reason
                invalid += 1
                statuses.append({})
                continue
            statuses.append(st)
            if replicas == 0 or proposal > replicas:
                replicas = proposal
        if invalid >= len(metric_specs) or (invalid > 0 and replicas < current):
            world.set_condition("ScalingActive", "False", first_reason)
            return out(old_desired, False, old_desired, True, statuses)
        world.set_condition("ScalingActive", "True", "ValidMetricFound")
        error = invalid > 0
        if replicas > desired:
            desired = replicas
        if behavior is None:
            stabilized = stabilize_recommendation(
                recs, desired, float(cfg.get("downscale_stabilization_window_seconds", 300))
            )
            world.set_condition(
                "AbleToScale", "True", "ScaleDownStabilized" if stabilized != desired else "ReadyForNewScale"
            )
            new_desired, reason = convert_with_rules(
                current,
                stabilized,
                min_r,
                max_r,
                float(cfg.get("scale_up_limit_factor", 2.0)),
                float(cfg.get("scale_up_limit_minimum", 4.0)),
            )
        else:
            down_window = behavior["scaleDown"]["stabilizationWindowSeconds"]
            if down_window is None:
                down_window = int(float(cfg.get("downscale_stabilization_window_seconds", 300)))
            stabilized, stab_reason = stabilize_with_behaviors(
                recs, current, desired, behavior["scaleUp"]["stabilizationWindowSeconds"], down_window
            )
            world.set_condition(
                "AbleToScale", "True", stab_reason if stabilized != desired else "ReadyForNewScale"
            )
            new_desired, reason = convert_with_behavior_rate(
                current,
                stabilized,
                min_r,
                max_r,
                behavior["scaleUp"],
                behavior["scaleDown"],
                up_events,
                down_events,
            )
        world.set_condition("ScalingLimited", "False" if new_desired == stabilized else "True", reason)
        desired = new_desired
        if current == 0 and min_r != 0 and scaled_to_zero and desired < min_r:
            desired = min_r
        rescale = desired != current

    if rescale:
        if scale.get("update_error"):
            world.set_condition("AbleToScale", "False", "FailedUpdateScale")
            return out(old_desired, False, old_desired, True, statuses)
        world.set_condition("AbleToScale", "True", "SucceededRescale")
        store_scale_event(behavior, up_events, down_events, current, desired)
        if scale_to_zero_gate:
            if current > 0 and desired == 0 and min_r == 0 and has_obj_ext:
                world.set_condition("ScaledToZero", "True", "ScaledToZero")
            else:
                world.set_condition("ScaledToZero", "False", "NotScaledToZero")
        else:
            world.remove_condition("ScaledToZero")
    else:
        desired = current
    return out(desired, rescale, desired, error, statuses)


__all__ = ["PodMetric", "controller_sync"]
