"""Object metrics: one value describing a Kubernetes object (an Ingress's request rate), against a
Value target (scaled by Running and Ready pods) or an AverageValue target (per replica)."""

from __future__ import annotations

from kubetide.hpa.ports import MetricsError
from kubetide.hpa.replicas import per_pod_replicas
from kubetide.hpa.sources.base import MetricContext, MetricFailure, MetricResult
from kubetide.hpa.sources.readiness import value_target_calculation
from kubetide.model.hpa import MetricSpec
from kubetide.model.quantity import format_milli


def object_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    assert spec.metric is not None and spec.described_object is not None
    name, obj, target = spec.metric.name, spec.described_object, spec.target
    reason = "FailedGetObjectMetric"
    ident = {"metric": {"name": name}, "describedObject": {"kind": obj.kind, "name": obj.name}}
    if target is not None and target.type == "Value" and target.value is not None:
        usage = _fetch(ctx, spec)
        calc = value_target_calculation(ctx, usage, target.value.milli, reason)
        status = {"type": "Object", "object": {**ident, "current": {"value": format_milli(usage)}}}
        return MetricResult(calc.replicas, f"{obj.kind} metric {name}", status, calc, usage)
    if target is not None and target.type == "AverageValue" and target.average_value is not None:
        usage = _fetch(ctx, spec)
        calc, per_pod = per_pod_replicas(
            ctx.status_replicas, usage, target.average_value.milli, ctx.tolerances
        )
        status = {"type": "Object", "object": {**ident, "current": {"averageValue": format_milli(per_pod)}}}
        # Upstream names this "external metric ..." too; the text only appears in event messages.
        return MetricResult(calc.replicas, f"external metric {name}", status, calc, per_pod)
    raise MetricFailure(
        reason, "invalid object metric source: neither a value target nor an average value target was set"
    )


def _fetch(ctx: MetricContext, spec: MetricSpec) -> int:
    assert spec.metric is not None and spec.described_object is not None
    try:
        return ctx.metrics.object_metric(
            ctx.hpa.namespace, spec.metric.name, spec.described_object, spec.metric.selector
        )
    except MetricsError as exc:
        obj = spec.described_object
        raise MetricFailure(
            "FailedGetObjectMetric",
            f"unable to get metric {spec.metric.name} on {obj.kind} {ctx.hpa.namespace}/{obj.name}: {exc}",
        ) from None
