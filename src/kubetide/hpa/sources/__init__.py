"""One module per metric source type, each turning a ``MetricSpec`` into a proposal; registered here.

A source raises :class:`MetricFailure` with the condition reason the controller reports
(``FailedGetResourceMetric``, ...) when its metric can't be computed.
"""

from __future__ import annotations

from collections.abc import Callable

from kubetide.hpa.sources.base import MetricContext, MetricFailure, MetricResult
from kubetide.hpa.sources.external import external_metric
from kubetide.hpa.sources.object import object_metric
from kubetide.hpa.sources.pods import pods_metric
from kubetide.hpa.sources.resource import container_resource_metric, resource_metric
from kubetide.model.hpa import MetricSpec

__all__ = ["SOURCES", "MetricContext", "MetricFailure", "MetricResult", "compute_metric"]

Source = Callable[[MetricContext, MetricSpec], MetricResult]

SOURCES: dict[str, Source] = {
    "Resource": resource_metric,
    "ContainerResource": container_resource_metric,
    "Pods": pods_metric,
    "Object": object_metric,
    "External": external_metric,
}


def compute_metric(ctx: MetricContext, spec: MetricSpec) -> MetricResult:
    source = SOURCES.get(spec.type)
    if source is None:
        raise MetricFailure("InvalidMetricSourceType", f'unknown metric source type "{spec.type}"')
    return source(ctx, spec)
