"""Pods metrics: a custom per-pod metric averaged over pods against an AverageValue target."""

from __future__ import annotations

from kubetide.hpa.ports import MetricsError
from kubetide.hpa.replicas import CalculationError, plain_metric_replicas
from kubetide.hpa.sources.base import MetricContext, MetricFailure, MetricResult
from kubetide.model.hpa import MetricSpec
from kubetide.model.quantity import format_milli


def pods_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    assert spec.metric is not None
    name = spec.metric.name
    target = spec.target
    try:
        if target is None or target.average_value is None:
            raise CalculationError("invalid pods metric source: no averageValue target was set")
        try:
            samples = ctx.metrics.pod_metrics(ctx.hpa.namespace, name, ctx.selector, spec.metric.selector)
        except MetricsError as exc:
            raise CalculationError(f"unable to get metric {name}: {exc}") from None
        pods = ctx.pods()
        if not pods:
            raise CalculationError("no pods returned by selector while calculating replica count")
        # Not cpu: only Pending counts as unready, whatever the Ready condition says.
        groups = ctx.pod_index().group(samples, "", ctx.now, 0.0)
        calc, usage = plain_metric_replicas(
            ctx.spec_replicas, target.average_value.milli, samples, groups, ctx.tolerances
        )
    except CalculationError as exc:
        raise MetricFailure("FailedGetPodsMetric", f"failed to get pods metric value: {exc}") from None
    status = {
        "type": "Pods",
        "pods": {"metric": {"name": name}, "current": {"averageValue": format_milli(usage)}},
    }
    return MetricResult(calc.replicas, f"pods metric {name}", status, calc, usage)
