"""HorizontalPodAutoscalers as the API server validates them (``pkg/apis/autoscaling/validation``):
replica bounds, the target reference, every metric source (its ``type``, the one source field that
type populates, the metric's name, the target's ``type`` and positive values), and behavior (policy
types, ``value`` > 0, ``periodSeconds`` 1..1800, ``stabilizationWindowSeconds`` 0..3600, the select
policy, a non-negative tolerance).

autoscaling/v2, v2beta2 and kubetide's ``autoscaling.kubetide.io/v1`` share v2's shape; v1's
``targetCPUUtilizationPercentage`` and v2beta1's metric fields are checked as the API server checks
them once converted, at the fields the user wrote. ``minReplicas: 0`` (HPAScaleToZero) needs an
Object or External metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetide.model.quantity import QuantityError, parse_quantity
from kubetide.model.validation.checker import Checker
from kubetide.model.validation.meta import validate_object_meta
from kubetide.model.validation.names import dns1123_label, path_segment_name
from kubetide.model.validation.resources import container_resource_name

__all__ = ["MAX_PERIOD_SECONDS", "MAX_STABILIZATION_WINDOW_SECONDS", "validate_hpa_manifest"]

MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCES = ("object", "external", "pods", "resource", "containerResource")  # upstream's check order
_FIELD_OF = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}
_V2_SHAPED = ("autoscaling/v2", "autoscaling/v2beta2", "autoscaling.kubetide.io/v1")


def validate_hpa_manifest(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    at = f"{path}." if path else ""
    validate_object_meta(ck, manifest.get("metadata"), f"{at}metadata")
    api_version = manifest.get("apiVersion") or "autoscaling/v2"
    spec = ck.mapping(manifest.get("spec"), f"{at}spec") or {}
    where = f"{at}spec"
    low = ck.integer(spec.get("minReplicas"), f"{where}.minReplicas")
    if low is not None and low < 0:
        ck.add(f"{where}.minReplicas", f"invalid value {low}: must be greater than or equal to 0")
    high = ck.integer(spec.get("maxReplicas"), f"{where}.maxReplicas")
    if spec.get("maxReplicas") is None:
        ck.add(f"{where}.maxReplicas", "is required")
    elif high is not None and high < 1:
        ck.add(f"{where}.maxReplicas", f"invalid value {high}: must be greater than 0")
    elif high is not None and low is not None and high < low:
        ck.add(
            f"{where}.maxReplicas", f"invalid value {high}: must be greater than or equal to `minReplicas`"
        )
    _object_reference(ck, spec.get("scaleTargetRef"), f"{where}.scaleTargetRef", required=True)
    if api_version in _V2_SHAPED:
        types = _metrics_v2(ck, spec.get("metrics"), f"{where}.metrics")
        _behavior(ck, spec.get("behavior"), f"{where}.behavior")
    elif api_version == "autoscaling/v2beta1":
        types = _metrics_v2beta1(ck, spec.get("metrics"), f"{where}.metrics")
    else:
        target = ck.integer(
            spec.get("targetCPUUtilizationPercentage"), f"{where}.targetCPUUtilizationPercentage"
        )
        if target is not None and target < 1:
            ck.add(
                f"{where}.targetCPUUtilizationPercentage", f"invalid value {target}: must be greater than 0"
            )
        types = ["Resource"]
    if low == 0 and not {"Object", "External"} & set(types):
        ck.add(
            f"{where}.metrics",
            "forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
        )


def _object_reference(ck: Checker, value: Any, path: str, *, required: bool) -> None:
    """``ValidateCrossVersionObjectReference``: a kind and a name, both usable in a URL path."""
    ref = ck.mapping(value, path)
    if ref is None:
        if required and value is None:
            ck.add(path, "is required")
        return
    for key in ("kind", "name"):
        ck.name(ref.get(key), f"{path}.{key}", path_segment_name)


def _positive_quantity(ck: Checker, value: Any, path: str) -> bool:
    """Present, parsed and > 0 (``Sign() != 1`` is "must be positive")."""
    if value is None:
        return False
    try:
        quantity = parse_quantity(value)
    except QuantityError as exc:
        ck.add(path, str(exc))
        return True
    if quantity.amount <= 0:
        ck.add(path, f"invalid value {value!r}: must be positive")
    return True


def _target(ck: Checker, value: Any, path: str) -> Mapping[str, Any]:
    """``validateMetricTarget``."""
    target = ck.mapping(value, path) or {}
    kind = ck.string(target.get("type"), f"{path}.type")
    if not kind:
        if target.get("type") is None or kind == "":
            ck.add(f"{path}.type", "is required: must specify a metric target type")
    elif kind not in ("Utilization", "Value", "AverageValue"):
        ck.add(f"{path}.type", f"invalid value {kind!r}: must be either Utilization, Value, or AverageValue")
    _positive_quantity(ck, target.get("value"), f"{path}.value")
    _positive_quantity(ck, target.get("averageValue"), f"{path}.averageValue")
    utilization = ck.integer(target.get("averageUtilization"), f"{path}.averageUtilization")
    if utilization is not None and utilization < 1:
        ck.add(f"{path}.averageUtilization", f"invalid value {utilization}: must be greater than 0")
    return target


def _metrics_v2(ck: Checker, value: Any, path: str) -> list[str]:
    types: list[str] = []
    for item, where in ck.items(value, path):
        metric = ck.mapping(item, where)
        if metric is None:
            continue
        kind = ck.string(metric.get("type"), f"{where}.type")
        types.append(kind or "")
        if not kind:
            if metric.get("type") is None or kind == "":
                ck.add(f"{where}.type", "is required: must specify a metric source type")
        elif kind not in METRIC_TYPES:
            supported = ", ".join(f'"{t}"' for t in METRIC_TYPES)
            ck.add(f"{where}.type", f"unsupported value {kind!r}: supported values: {supported}")
        present = [s for s in _SOURCES if metric.get(s) is not None]
        if present:
            _SOURCE_CHECKS[present[0]](ck, metric[present[0]], f"{where}.{present[0]}")
        expected = _FIELD_OF.get(kind or "")
        if expected is not None and metric.get(expected) is None:
            ck.add(
                f"{where}.{expected}", "is required: must populate information for the given metric source"
            )
        if len(present) != 1:
            for source in present:
                if source != expected:
                    ck.add(f"{where}.{source}", "forbidden: must populate the given metric source only")
    return types


def _metric(ck: Checker, src: Mapping[str, Any], path: str) -> None:
    """``validateMetricIdentifier``: a metric name usable in a URL path."""
    metric = ck.mapping(src.get("metric"), f"{path}.metric") or {}
    ck.name(metric.get("name"), f"{path}.metric.name", path_segment_name, "must specify a metric name")


def _either(
    ck: Checker,
    target: Mapping[str, Any],
    path: str,
    fields: tuple[str, str],
    missing: str,
    both: tuple[str, str] | None = None,
) -> None:
    """The source's target needs ``fields[0]`` or ``fields[1]`` (``missing`` says why, at the second's
    path) and, with ``both`` (the field blamed and why), not the two together."""
    first, second = (target.get(f) for f in fields)
    if first is None and second is None:
        ck.add(f"{path}.target.{fields[1]}", f"is required: {missing}")
    if both is not None and first is not None and second is not None:
        ck.add(f"{path}.target.{both[0]}", f"forbidden: {both[1]}")


def _object_source(ck: Checker, value: Any, path: str) -> None:
    src = ck.mapping(value, path) or {}
    _object_reference(ck, src.get("describedObject") or {}, f"{path}.describedObject", required=True)
    _metric(ck, src, path)
    target = _target(ck, src.get("target"), f"{path}.target")
    _either(ck, target, path, ("value", "averageValue"), "must set either a target value or averageValue")


def _external_source(ck: Checker, value: Any, path: str) -> None:
    src = ck.mapping(value, path) or {}
    _metric(ck, src, path)
    target = _target(ck, src.get("target"), f"{path}.target")
    _either(
        ck,
        target,
        path,
        ("value", "averageValue"),
        "must set either a target value for metric or a per-pod target",
        ("value", "may not set both a target value for metric and a per-pod target"),
    )


def _pods_source(ck: Checker, value: Any, path: str) -> None:
    src = ck.mapping(value, path) or {}
    _metric(ck, src, path)
    target = _target(ck, src.get("target"), f"{path}.target")
    if target.get("averageValue") is None:
        ck.add(f"{path}.target.averageValue", "is required: must specify a positive target averageValue")


def _resource_source(ck: Checker, value: Any, path: str, *, container: bool = False) -> None:
    src = ck.mapping(value, path) or {}
    rule = container_resource_name if container else None
    ck.name(src.get("name"), f"{path}.name", rule, "must specify a resource name")
    if container:
        ck.name(src.get("container"), f"{path}.container", dns1123_label, "must specify a container")
    target = _target(ck, src.get("target"), f"{path}.target")
    _either(
        ck,
        target,
        path,
        ("averageValue", "averageUtilization"),
        "must set either a target raw value or a target utilization",
        ("averageValue", "may not set both a target raw value and a target utilization"),
    )


def _container_resource_source(ck: Checker, value: Any, path: str) -> None:
    _resource_source(ck, value, path, container=True)


_SOURCE_CHECKS = {
    "object": _object_source,
    "external": _external_source,
    "pods": _pods_source,
    "resource": _resource_source,
    "containerResource": _container_resource_source,
}


def _metrics_v2beta1(ck: Checker, value: Any, path: str) -> list[str]:
    """v2beta1's fields, checked as the converted v2 metric is (the same rules, at the v2beta1 names)."""
    types: list[str] = []
    for item, where in ck.items(value, path):
        metric = ck.mapping(item, where)
        if metric is None:
            continue
        kind = ck.enum(metric.get("type"), f"{where}.type", ("External", "Object", "Pods", "Resource"))
        types.append(kind or "")
        field = _FIELD_OF.get(kind or "")
        if field is None:
            continue
        src = ck.mapping(metric.get(field), f"{where}.{field}")
        if src is None:
            ck.add(f"{where}.{field}", "is required: must populate information for the given metric source")
            continue
        at = f"{where}.{field}"
        utilization = ck.integer(src.get("targetAverageUtilization"), f"{at}.targetAverageUtilization")
        if utilization is not None and utilization < 1:
            ck.add(f"{at}.targetAverageUtilization", f"invalid value {utilization}: must be greater than 0")
        given = {
            key: _positive_quantity(ck, src.get(key), f"{at}.{key}")
            for key in ("targetAverageValue", "targetValue", "averageValue")
        }
        if kind == "Resource":
            if not src.get("name"):
                ck.add(f"{at}.name", "is required: must specify a resource name")
            if utilization is None and not given["targetAverageValue"]:
                ck.add(
                    f"{at}.targetAverageUtilization",
                    "is required: must set either a target raw value or a target utilization",
                )
        else:
            ck.name(
                src.get("metricName"), f"{at}.metricName", path_segment_name, "must specify a metric name"
            )
        if kind == "Pods" and not given["targetAverageValue"]:
            ck.add(f"{at}.targetAverageValue", "is required: must specify a positive target averageValue")
        if kind == "Object":
            _object_reference(ck, src.get("target"), f"{at}.target", required=True)
            if not given["targetValue"] and not given["averageValue"]:
                ck.add(f"{at}.targetValue", "is required: must set either a target value or averageValue")
        if kind == "External" and not given["targetValue"] and not given["targetAverageValue"]:
            ck.add(
                f"{at}.targetValue",
                "is required: must set either a target value for metric or a per-pod target",
            )
    return types


def _behavior(ck: Checker, value: Any, path: str) -> None:
    behavior = ck.mapping(value, path)
    if behavior is None:
        return
    for direction in ("scaleUp", "scaleDown"):
        rules = ck.mapping(behavior.get(direction), f"{path}.{direction}")
        if rules is not None:
            _rules(ck, rules, f"{path}.{direction}")


def _rules(ck: Checker, rules: Mapping[str, Any], path: str) -> None:
    """``validateScalingRules``; policies left out are defaulted, an empty list is an error."""
    window = ck.integer(rules.get("stabilizationWindowSeconds"), f"{path}.stabilizationWindowSeconds")
    if window is not None and window < 0:
        ck.add(
            f"{path}.stabilizationWindowSeconds",
            f"invalid value {window}: must be greater than or equal to zero",
        )
    elif window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        ck.add(
            f"{path}.stabilizationWindowSeconds",
            f"invalid value {window}: must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}",
        )
    ck.enum(rules.get("selectPolicy"), f"{path}.selectPolicy", ("Disabled", "Max", "Min"))
    if isinstance(rules.get("policies"), list) and not rules["policies"]:
        ck.add(f"{path}.policies", "is required: must specify at least one Policy")
    for policy, where in ck.items(rules.get("policies"), f"{path}.policies"):
        found = ck.mapping(policy, where)
        if found is None:
            continue
        kind = found.get("type")
        if kind not in ("Percent", "Pods"):
            ck.add(f"{where}.type", f'unsupported value {kind!r}: supported values: "Percent", "Pods"')
        amount = ck.count(found.get("value"), f"{where}.value")
        if amount is not None and amount <= 0:
            ck.add(f"{where}.value", f"invalid value {found.get('value')!r}: must be greater than zero")
        period = ck.count(found.get("periodSeconds"), f"{where}.periodSeconds")
        if period is not None and period <= 0:
            ck.add(
                f"{where}.periodSeconds",
                f"invalid value {found.get('periodSeconds')!r}: must be greater than zero",
            )
        elif period is not None and period > MAX_PERIOD_SECONDS:
            ck.add(
                f"{where}.periodSeconds",
                f"invalid value {period}: must be less than or equal to {MAX_PERIOD_SECONDS}",
            )
    tolerance = rules.get("tolerance")
    if tolerance is not None:
        try:
            if parse_quantity(tolerance).amount < 0:
                ck.add(
                    f"{path}.tolerance", f"invalid value {tolerance!r}: must be greater than or equal to zero"
                )
        except QuantityError as exc:
            ck.add(f"{path}.tolerance", str(exc))
