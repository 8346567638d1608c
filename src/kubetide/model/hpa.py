"""Typed view of a HorizontalPodAutoscaler (autoscaling/v2), read from v2, v2beta2, v2beta1 or v1 manifests,
or from kubetide's own custom resource, ``autoscaling.kubetide.io/v1`` (``KUBETIDE_API_VERSION``).

The kubetide resource is the autoscaling/v2 spec unchanged plus ``spec.syncPeriod`` (a Go duration
such as ``"15s"`` or ``"1m30s"``: how often this HPA is reconciled), with the per-direction
``behavior.*.tolerance`` always honoured (KEP-4951; the v2 path reads the same fields and honours them
with the HPAConfigurableTolerance gate) and ``minReplicas: 0`` allowed only with an Object or External
metric (checked by the controller, as a 1.20 API server cannot validate a custom resource's fields).
Its manifest is ``kubetide/data/crd-horizontalpodautoscalers.autoscaling.kubetide.io.yaml``.

Older versions are converted as the API server converts them, and API defaulting is applied
(``pkg/apis/autoscaling/v2/defaults.go``): ``minReplicas`` 1, a cpu 80 % utilization metric when none is
given, and per-field behavior defaults when ``behavior`` is present. The view is lenient the way the
controller is: an unknown metric type is kept (the controller reports ``InvalidMetricSourceType``);
only malformed structure (a string where an integer belongs) is an error, naming the field path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kubetide.model.durations import parse_go_duration
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.model.quantity import Quantity, parse_quantity
from kubetide.model.selectors import LabelSelector

__all__ = [
    "HPA",
    "KUBETIDE_API_VERSION",
    "Behavior",
    "Condition",
    "CrossVersionObjectReference",
    "HPAStatus",
    "MetricIdentifier",
    "MetricSpec",
    "MetricTarget",
    "ScalingPolicy",
    "ScalingRules",
    "default_scale_down_rules",
    "default_scale_up_rules",
]

METRIC_TYPES = ("Resource", "ContainerResource", "Pods", "Object", "External")
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
SELECT_POLICIES = ("Max", "Min", "Disabled")
POLICY_TYPES = ("Pods", "Percent")
DEFAULT_CPU_UTILIZATION = 80
KUBETIDE_API_VERSION = "autoscaling.kubetide.io/v1"


@dataclass(frozen=True, slots=True)
class CrossVersionObjectReference:
    kind: str
    name: str
    api_version: str = ""

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True, slots=True)
class MetricTarget:
    type: str
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


@dataclass(frozen=True, slots=True)
class MetricIdentifier:
    name: str
    selector: LabelSelector | None = None  # None: no selector given (matches everything)


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One entry of ``spec.metrics``. Which fields are set depends on ``type``."""

    type: str
    target: MetricTarget | None = None
    resource: str = ""  # Resource / ContainerResource
    container: str = ""  # ContainerResource
    metric: MetricIdentifier | None = None  # Pods / Object / External
    described_object: CrossVersionObjectReference | None = None  # Object

    @property
    def display_name(self) -> str:
        if self.type in ("Resource", "ContainerResource"):
            suffix = f" (container {self.container})" if self.container else ""
            return f"{self.resource} resource{suffix}"
        if self.type == "Object" and self.described_object is not None and self.metric is not None:
            return f"{self.described_object.kind} metric {self.metric.name}"
        if self.metric is not None:
            return f"{self.type.lower()} metric {self.metric.name}"
        return f"metric of type {self.type!r}"


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    type: str  # Pods | Percent
    value: int
    period_seconds: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """``HPAScalingRules``; None fields are unset (defaulting fills them per field)."""

    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: tuple[ScalingPolicy, ...] | None = None
    tolerance: Quantity | None = None


@dataclass(frozen=True, slots=True)
class Behavior:
    scale_up: ScalingRules | None = None
    scale_down: ScalingRules | None = None


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str = ""
    message: str = ""
    last_transition_time: float | None = None


@dataclass(frozen=True, slots=True)
class HPAStatus:
    current_replicas: int = 0
    desired_replicas: int = 0
    conditions: tuple[Condition, ...] = ()
    last_scale_time: float | None = None
    current_metrics: tuple[dict[str, Any], ...] = ()

    def condition(self, type_: str) -> Condition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None


@dataclass(frozen=True)
class HPA:
    name: str
    namespace: str
    scale_target_ref: CrossVersionObjectReference
    max_replicas: int
    min_replicas: int = 1
    metrics: tuple[MetricSpec, ...] = ()
    behavior: Behavior | None = None  # defaulted when present
    status: HPAStatus = field(default_factory=HPAStatus)
    uid: str = ""
    api_version: str = "autoscaling/v2"  # as read; older versions are converted to v2's shape
    sync_period: float | None = None  # seconds; kubetide's spec.syncPeriod (None: the controller's flag)

    @cached_property
    def key(self) -> str:
        # Cached in the instance's __dict__ (a frozen dataclass without slots allows it): every sync
        # of every HPA looks it up several times.
        return f"{self.namespace}/{self.name}"

    @property
    def is_kubetide(self) -> bool:
        """Read from kubetide's own resource (``autoscaling.kubetide.io/v1``)."""
        return self.api_version == KUBETIDE_API_VERSION

    def with_status(self, status: HPAStatus) -> HPA:
        # A shallow copy with one field swapped: dataclasses.replace and copy.copy are ~10x slower,
        # which shows when thousands of HPAs sync every 15 s.
        clone = object.__new__(HPA)
        clone.__dict__.update(self.__dict__)
        object.__setattr__(clone, "status", status)
        return clone

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> HPA:
        root = Node(manifest, path)
        api_version = root.get("apiVersion").str("autoscaling/v2")
        kind = root.get("kind").str("HorizontalPodAutoscaler")
        if kind != "HorizontalPodAutoscaler":
            raise root.get("kind").error(f"must be HorizontalPodAutoscaler, got {kind!r}")
        readers = {
            "autoscaling/v2": _metrics_v2,
            "autoscaling/v2beta2": _metrics_v2,
            "autoscaling/v2beta1": _metrics_v2beta1,
            "autoscaling/v1": _metrics_v1,
            KUBETIDE_API_VERSION: _metrics_v2,
        }
        if api_version not in readers:
            raise root.get("apiVersion").error(f"must be one of {', '.join(readers)}, got {api_version!r}")
        meta, spec = root.get("metadata"), root.get("spec")
        ref = spec.get("scaleTargetRef")
        metrics = readers[api_version](spec)
        if not metrics:
            metrics = (
                MetricSpec(
                    "Resource",
                    MetricTarget("Utilization", average_utilization=DEFAULT_CPU_UTILIZATION),
                    "cpu",
                ),
            )
        behavior = _behavior(spec.get("behavior")) if api_version != "autoscaling/v1" else None
        sync_period = None
        if api_version == KUBETIDE_API_VERSION and spec.get("syncPeriod").value is not None:
            sync_period = _sync_period(spec.get("syncPeriod"))
        return cls(
            name=meta.get("name").str(),
            namespace=meta.get("namespace").str("default"),
            uid=meta.get("uid").str(""),
            scale_target_ref=CrossVersionObjectReference(
                ref.get("kind").str(), ref.get("name").str(), ref.get("apiVersion").str("")
            ),
            min_replicas=spec.get("minReplicas").int(1, minimum=0),
            max_replicas=spec.get("maxReplicas").int(minimum=0),
            metrics=metrics,
            behavior=behavior,
            status=_status(root.get("status")),
            api_version=api_version,
            sync_period=sync_period,
        )


# --- kubetide's spec.syncPeriod ----------------------------------------------------------------------


def _sync_period(node: Node) -> float:
    text = node.str()
    try:
        seconds = parse_go_duration(text)
    except ValueError as exc:
        raise node.error(str(exc)) from None
    if seconds <= 0:
        raise node.error(f"must be a positive duration, got {text!r}")
    return seconds


# --- autoscaling/v2 and v2beta2 -------------------------------------------------------------------


def _metrics_v2(spec: Node) -> tuple[MetricSpec, ...]:
    return tuple(_metric_v2(m) for m in spec.get("metrics").list())


def _metric_v2(m: Node) -> MetricSpec:
    type_ = m.get("type").str()
    if type_ in ("Resource", "ContainerResource"):
        src = m.get("resource" if type_ == "Resource" else "containerResource")
        return MetricSpec(
            type_,
            _target(src.get("target")),
            resource=src.get("name").str(),
            container=src.get("container").str() if type_ == "ContainerResource" else "",
        )
    if type_ in ("Pods", "External"):
        src = m.get(type_.lower())
        return MetricSpec(type_, _target(src.get("target")), metric=_identifier(src.get("metric")))
    if type_ == "Object":
        src = m.get("object")
        obj = src.get("describedObject")
        return MetricSpec(
            type_,
            _target(src.get("target")),
            metric=_identifier(src.get("metric")),
            described_object=CrossVersionObjectReference(
                obj.get("kind").str(), obj.get("name").str(), obj.get("apiVersion").str("")
            ),
        )
    return MetricSpec(type_)  # unknown: the controller reports InvalidMetricSourceType


def _target(t: Node) -> MetricTarget:
    value, average, utilization = (
        t.get("value").quantity(None),
        t.get("averageValue").quantity(None),
        t.get("averageUtilization").int(None),
    )
    # The API server requires a type (files are refused without one: kubetide.model.validation); the
    # fake objects of upstream's controller tests may leave it out: infer it from the field.
    inferred = (
        "Utilization" if utilization is not None else "AverageValue" if average is not None else "Value"
    )
    return MetricTarget(t.get("type").str(inferred), value, average, utilization)


def _identifier(m: Node) -> MetricIdentifier:
    sel = m.get("selector")
    return MetricIdentifier(m.get("name").str(), LabelSelector.parse(sel) if sel.value is not None else None)


def _behavior(b: Node) -> Behavior | None:
    if b.value is None:
        return None
    return Behavior(
        default_scale_up_rules(_rules(b.get("scaleUp"))),
        default_scale_down_rules(_rules(b.get("scaleDown"))),
    )


def _rules(r: Node) -> ScalingRules | None:
    if r.value is None:
        return None
    policies = r.get("policies")
    return ScalingRules(
        r.get("stabilizationWindowSeconds").int(None, minimum=0),
        r.get("selectPolicy").enum(SELECT_POLICIES, None),
        tuple(
            ScalingPolicy(
                p.get("type").enum(POLICY_TYPES), p.get("value").int(), p.get("periodSeconds").int()
            )
            for p in policies.list()
        )
        if policies.value is not None
        else None,
        r.get("tolerance").quantity(None),
    )


def rules_from_json(value: Any, path: str = "") -> ScalingRules | None:
    """Read one ``HPAScalingRules`` object (as in a manifest) without defaulting."""
    return _rules(Node(value, path))


def _status(s: Node) -> HPAStatus:
    return HPAStatus(
        current_replicas=s.get("currentReplicas").int(0),
        desired_replicas=s.get("desiredReplicas").int(0),
        conditions=tuple(
            Condition(
                c.get("type").str(),
                c.get("status").str(),
                c.get("reason").str(""),
                c.get("message").str(""),
                c.get("lastTransitionTime").time(None),
            )
            for c in s.get("conditions").list()
        ),
        last_scale_time=s.get("lastScaleTime").time(None),
    )


# --- defaulting -------------------------------------------------------------------------------------

_SCALE_UP_DEFAULT = ScalingRules(0, "Max", (ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)))
_SCALE_DOWN_DEFAULT = ScalingRules(None, "Max", (ScalingPolicy("Percent", 100, 15),))


def _fill(rules: ScalingRules | None, default: ScalingRules) -> ScalingRules:
    if rules is None:
        return default
    return ScalingRules(
        rules.stabilization_window_seconds
        if rules.stabilization_window_seconds is not None
        else default.stabilization_window_seconds,
        rules.select_policy or default.select_policy,
        rules.policies if rules.policies else default.policies,
        rules.tolerance,
    )


def default_scale_up_rules(rules: ScalingRules | None) -> ScalingRules:
    """``GenerateHPAScaleUpRules``: window 0, Max, [4 Pods / 15 s, 100 % / 15 s] for what is unset."""
    return _fill(rules, _SCALE_UP_DEFAULT)


def default_scale_down_rules(rules: ScalingRules | None) -> ScalingRules:
    """``GenerateHPAScaleDownRules``: window unset (controller flag), Max, [100 % / 15 s]."""
    return _fill(rules, _SCALE_DOWN_DEFAULT)


# --- older API versions --------------------------------------------------------------------------


def _metrics_v1(spec: Node) -> tuple[MetricSpec, ...]:
    target = spec.get("targetCPUUtilizationPercentage").int(None)
    if target is None:
        return ()
    return (MetricSpec("Resource", MetricTarget("Utilization", average_utilization=target), "cpu"),)


def _metrics_v2beta1(spec: Node) -> tuple[MetricSpec, ...]:
    return tuple(_metric_v2beta1(m) for m in spec.get("metrics").list())


def _metric_v2beta1(m: Node) -> MetricSpec:
    type_ = m.get("type").str()
    if type_ in ("Resource", "ContainerResource"):
        src = m.get("resource" if type_ == "Resource" else "containerResource")
        util = src.get("targetAverageUtilization").int(None)
        avg = src.get("targetAverageValue").quantity(None)
        target = MetricTarget("Utilization", average_utilization=util) if util is not None else None
        if avg is not None:
            target = MetricTarget("AverageValue", average_value=avg)
        if target is None:
            raise src.error("needs targetAverageUtilization or targetAverageValue")
        container = src.get("container").str() if type_ == "ContainerResource" else ""
        return MetricSpec(type_, target, resource=src.get("name").str(), container=container)
    if type_ == "Pods":
        src = m.get("pods")
        return MetricSpec(
            type_,
            MetricTarget("AverageValue", average_value=src.get("targetAverageValue").quantity()),
            metric=_v2beta1_identifier(src, "metricName", "selector"),
        )
    if type_ == "Object":
        src = m.get("object")
        obj = src.get("target")
        avg = src.get("averageValue").quantity(None)
        target = (
            MetricTarget("AverageValue", average_value=avg)
            if avg is not None
            else MetricTarget("Value", value=src.get("targetValue").quantity())
        )
        return MetricSpec(
            type_,
            target,
            metric=_v2beta1_identifier(src, "metricName", "selector"),
            described_object=CrossVersionObjectReference(
                obj.get("kind").str(), obj.get("name").str(), obj.get("apiVersion").str("")
            ),
        )
    if type_ == "External":
        src = m.get("external")
        avg = src.get("targetAverageValue").quantity(None)
        target = (
            MetricTarget("AverageValue", average_value=avg)
            if avg is not None
            else MetricTarget("Value", value=src.get("targetValue").quantity())
        )
        return MetricSpec(type_, target, metric=_v2beta1_identifier(src, "metricName", "metricSelector"))
    return MetricSpec(type_)


def _v2beta1_identifier(src: Node, name_key: str, selector_key: str) -> MetricIdentifier:
    sel = src.get(selector_key)
    return MetricIdentifier(
        src.get(name_key).str(), LabelSelector.parse(sel) if sel.value is not None else None
    )


def parse_tolerance(text: str) -> Quantity:
    try:
        return parse_quantity(text)
    except ValueError as exc:
        raise ManifestError.at("tolerance", str(exc)) from None
