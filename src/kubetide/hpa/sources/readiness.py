"""Value targets of Object and External metrics: the ratio times the Running and Ready pods."""

from __future__ import annotations

from kubetide.hpa.replicas import Calculation, fdiv, usage_ratio_replicas
from kubetide.hpa.sources.base import MetricContext, MetricFailure


def value_target_calculation(ctx: MetricContext, usage: int, target_milli: int, reason: str) -> Calculation:
    """``getUsageRatioReplicaCount``: pods are only listed when the ratio is outside tolerance."""
    ratio = fdiv(float(usage), float(target_milli))
    ready = 0
    if ctx.spec_replicas != 0 and not ctx.tolerances.within(ratio):
        ready = ready_pod_count(ctx, reason)
    return usage_ratio_replicas(ctx.spec_replicas, ratio, ready, ctx.tolerances)


def ready_pod_count(ctx: MetricContext, reason: str) -> int:
    pods = ctx.pods()
    if not pods:
        raise MetricFailure(
            reason,
            "unable to calculate ready pods: no pods returned by selector while calculating replica count",
        )
    # Deleted pods still count here when Running and Ready, as upstream's getReadyPodsCount.
    return sum(1 for p in pods if p.phase == "Running" and p.ready is True)
