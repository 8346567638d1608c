"""Resource and ContainerResource metrics: usage from metrics.k8s.io against a Utilization (percent of
request) or AverageValue target. AverageValue wins when both are set, as upstream checks it first."""

from __future__ import annotations

from kubetide.hpa.podgroups import RequestError
from kubetide.hpa.ports import MetricsError
from kubetide.hpa.replicas import CalculationError, plain_metric_replicas, utilization_replicas
from kubetide.hpa.sources.base import MetricContext, MetricFailure, MetricResult
from kubetide.model.hpa import MetricSpec
from kubetide.model.quantity import format_milli


def resource_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    return _compute(ctx, spec, "FailedGetResourceMetric", "Resource", "resource")


def container_resource_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    return _compute(ctx, spec, "FailedGetContainerResourceMetric", "ContainerResource", "containerResource")


def _compute(ctx: MetricContext, spec: MetricSpec, reason: str, type_: str, key: str) -> MetricResult:
    target = spec.target
    name = spec.resource
    container = spec.container if type_ == "ContainerResource" else ""
    try:
        if target is None or (target.average_value is None and target.average_utilization is None):
            raise CalculationError(
                "invalid resource metric source: neither an average utilization target nor an average "
                "value (usage) target was set"
            )
        try:
            samples = ctx.metrics.resource_metrics(ctx.hpa.namespace, ctx.selector, name, container)
        except MetricsError as exc:
            raise CalculationError(f"unable to get metrics for resource {name}: {exc}") from None
        pods = ctx.pods()
        if not pods:
            raise CalculationError("no pods returned by selector while calculating replica count")
        cfg = ctx.config
        index = ctx.pod_index()
        groups = index.group(samples, name, ctx.now, cfg.cpu_initialization_period)
        current: dict[str, object] = {}
        utilization: int | None
        if target.average_value is not None:
            calc, usage = plain_metric_replicas(
                ctx.spec_replicas, target.average_value.milli, samples, groups, ctx.tolerances
            )
            current = {"averageValue": format_milli(usage)}
            metric_name = f"{name} resource"
            value, utilization = usage, None
        else:
            assert target.average_utilization is not None
            gate = cfg.gates.pod_level_resources
            requests = index.requests_milli(name, container, gate)
            total = index.active_request_total(name, container, gate) if groups.exact else None
            calc, utilization, raw = utilization_replicas(
                ctx.spec_replicas,
                target.average_utilization,
                samples,
                requests,
                groups,
                ctx.tolerances,
                total,
            )
            current = {"averageUtilization": utilization, "averageValue": format_milli(raw)}
            value = raw
            kind = "container resource" if container else "resource"
            metric_name = f"{name} {kind} utilization (percentage of request)"
    except (CalculationError, RequestError) as exc:
        what = "utilization" if target is not None and target.average_value is None else "usage"
        raise MetricFailure(reason, f"failed to get {name} {what}: {exc}") from None
    source: dict[str, object] = {"name": name, "current": current}
    if container:
        source["container"] = container
    return MetricResult(calc.replicas, metric_name, {"type": type_, key: source}, calc, value, utilization)
