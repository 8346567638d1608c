"""What every metric source gets (the context of one sync) and returns (a proposal with its reasons)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import MetricsSource, ScaleTargetPort
from kubetide.hpa.replicas import Calculation
from kubetide.hpa.tolerances import Tolerances
from kubetide.model.hpa import HPA
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector


class MetricFailure(Exception):
    """A metric that can't produce a proposal; ``reason`` is the ScalingActive condition reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class MetricResult:
    replicas: int
    name: str  # how upstream names the metric in "<name> above target"
    status: dict[str, Any]  # the MetricStatus entry for status.currentMetrics
    calculation: Calculation
    value_milli: int  # the reported current value (average, per-pod or total, by target type)
    utilization: int | None = None  # Utilization targets: the current percentage of request


@dataclass
class MetricContext:
    """One sync's inputs shared by all metrics; pods are listed at most once."""

    hpa: HPA
    spec_replicas: int
    status_replicas: int
    selector: LabelSelector
    metrics: MetricsSource
    scale_target: ScaleTargetPort
    config: HPAConfig
    tolerances: Tolerances
    now: float
    # Pod indexes by HPA key, reused while the pod lister returns the very same sequence object.
    index_cache: dict[str, tuple[Sequence[Pod], PodIndex]] = field(default_factory=dict, repr=False)
    _pods: Sequence[Pod] | None = field(default=None, repr=False)

    def pods(self) -> Sequence[Pod]:
        if self._pods is None:
            self._pods = self.scale_target.list_pods(self.hpa.namespace, self.selector)
        return self._pods

    def pod_index(self) -> PodIndex:
        return PodIndex.cached(
            self.index_cache, self.hpa.key, self.pods(), self.config.initial_readiness_delay
        )
