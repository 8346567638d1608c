"""External metrics: series from outside the cluster (a queue's depth), summed, against a Value target
(scaled by Running and Ready pods) or an AverageValue target (per replica, which takes precedence)."""

from __future__ import annotations

from kubetide.hpa.ports import MetricsError
from kubetide.hpa.replicas import per_pod_replicas, saturating_sum
from kubetide.hpa.sources.base import MetricContext, MetricFailure, MetricResult
from kubetide.hpa.sources.readiness import value_target_calculation
from kubetide.model.hpa import MetricSpec
from kubetide.model.quantity import format_milli

_REASON = "FailedGetExternalMetric"


def external_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    assert spec.metric is not None
    name, target = spec.metric.name, spec.target
    label = f"external metric {name}"
    ident = {"metric": {"name": name}}
    if target is not None and target.average_value is not None:
        total = _fetch(ctx, spec)
        calc, per_pod = per_pod_replicas(
            ctx.status_replicas, total, target.average_value.milli, ctx.tolerances
        )
        status = {
            "type": "External",
            "external": {**ident, "current": {"averageValue": format_milli(per_pod)}},
        }
        return MetricResult(calc.replicas, label, status, calc, per_pod)
    if target is not None and target.value is not None:
        total = _fetch(ctx, spec)
        calc = value_target_calculation(ctx, total, target.value.milli, _REASON)
        status = {"type": "External", "external": {**ident, "current": {"value": format_milli(total)}}}
        return MetricResult(calc.replicas, label, status, calc, total)
    raise MetricFailure(
        _REASON, "invalid external metric source: neither a value target nor an average value target was set"
    )


def _fetch(ctx: MetricContext, spec: MetricSpec) -> int:
    assert spec.metric is not None
    try:
        values = ctx.metrics.external_metric(ctx.hpa.namespace, spec.metric.name, spec.metric.selector)
    except MetricsError as exc:
        raise MetricFailure(
            _REASON, f"unable to get external metric {ctx.hpa.namespace}/{spec.metric.name}: {exc}"
        ) from None
    return saturating_sum(tuple(values))
