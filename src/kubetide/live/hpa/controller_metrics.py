"""kube-controller-manager's HPA controller metrics (1.27+), with its names, labels and buckets.

- ``horizontal_pod_autoscaler_controller_reconciliations_total{action, error}`` and
  ``..._reconciliation_duration_seconds{action, error}``: one per reconcile. ``action`` is ``scale_up`` or
  ``scale_down`` only when the scale write succeeded, else ``none``; ``error`` is ``spec`` when the HPA's
  own spec is at fault (it does not parse, ``minReplicas: 0`` without an Object or External metric, an
  unknown metric source type), ``internal`` for any other failure (the scale or the metrics could not be
  read, the status write failed), else ``none``.
- ``horizontal_pod_autoscaler_controller_metric_computation_total{action, error, metric_type}``: one per
  metric of each reconcile, ``action`` from that metric's proposal against the current replicas.
  Upstream also times each metric (``..._metric_computation_duration_seconds``); the decision core reads
  no clock per metric, so that histogram is not exported rather than exported wrong.

Dashboards and alerts written for the built-in controller (``rate(..._reconciliations_total{error!="none"})``)
work unchanged; a standby replica exports none of them, since it reconciles nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from kubetide.hpa.conditions import ConditionReason
from kubetide.hpa.decision import SyncResult
from kubetide.hpa.driver import Synced

__all__ = ["HPAControllerMetrics", "action_label", "error_label"]

_NS = "horizontal_pod_autoscaler_controller"
_BUCKETS = tuple(0.001 * 2**k for k in range(15))  # upstream: ExponentialBuckets(0.001, 2, 15)
_SPEC_REASONS = frozenset({ConditionReason.INVALID_MIN_REPLICAS.value, "InvalidMetricSourceType"})


def action_label(result: SyncResult | None) -> str:
    if result is None or not result.scaled or result.current_replicas is None:
        return "none"
    if result.desired_replicas > result.current_replicas:
        return "scale_up"
    return "scale_down" if result.desired_replicas < result.current_replicas else "none"


def error_label(synced: Synced) -> str:
    result = synced.result
    if result is None:
        return "spec"  # the object does not read as an HPA
    if result.error is not None:
        reasons = {c.reason for c in result.status.conditions if c.status == "False"}
        return "spec" if reasons & _SPEC_REASONS else "internal"
    return "internal" if synced.problem else "none"


class HPAControllerMetrics:
    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.reconciliations = Counter(
            "reconciliations",
            "Number of reconciliations of HPA controller. The label 'action' should be either "
            "'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', "
            "'internal', or 'none'.",
            ["action", "error"],
            namespace=_NS,
            registry=registry,
        )
        self.duration = Histogram(
            "reconciliation_duration_seconds",
            "The time(seconds) that the HPA controller takes to reconcile once. The label 'action' "
            "should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be "
            "either 'spec', 'internal', or 'none'.",
            ["action", "error"],
            namespace=_NS,
            buckets=_BUCKETS,
            registry=registry,
        )
        self.metric_computations = Counter(
            "metric_computation",
            "Number of metric computations. The label 'action' should be either 'scale_down', "
            "'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or "
            "'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
            ["action", "error", "metric_type"],
            namespace=_NS,
            registry=registry,
        )

    def observe(self, synced: Iterable[Synced]) -> None:
        for s in synced:
            action, error = action_label(s.result), error_label(s)
            self.reconciliations.labels(action, error).inc()
            self.duration.labels(action, error).observe(s.seconds)
            if s.result is not None:
                self._metrics(s.result)

    def _metrics(self, result: SyncResult) -> None:
        current = result.current_replicas
        for m in result.metrics:
            if m.replicas is None:
                action = "none"
                error = "spec" if m.failure_reason == "InvalidMetricSourceType" else "internal"
            else:
                error = "none"
                action = "none"
                if current is not None and m.replicas > current:
                    action = "scale_up"
                elif current is not None and m.replicas < current:
                    action = "scale_down"
            self.metric_computations.labels(action, error, m.spec.type).inc()
