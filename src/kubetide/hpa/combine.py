"""Combining the metrics (spec section 4): the scale target's selector is checked first
(``InvalidSelector``, ``AmbiguousSelector``), then every metric is computed in spec order and the
highest proposal wins. If all metrics failed, or some failed and the rest would scale below the current
count, the sync aborts: upstream never scales down on partial data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubetide.hpa.conditions import ConditionType
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.decision import MetricOutcome
from kubetide.hpa.podindex import PodIndex
from kubetide.hpa.ports import MetricsSource, ScaleTargetPort
from kubetide.hpa.selectors import SelectorProblem, SelectorRegistry
from kubetide.hpa.sources import MetricContext, MetricFailure, compute_metric
from kubetide.hpa.tolerances import tolerances_for
from kubetide.model.hpa import HPA
from kubetide.model.pod import Pod

__all__ = ["Combined", "MetricInputs", "Recorder", "combine_metrics"]

_ACTIVE = ConditionType.SCALING_ACTIVE


class Recorder(Protocol):
    """Where the conditions and events of a sync are collected."""

    def condition(self, type_: str, status: bool, reason: str, message: str) -> None: ...

    def event(self, warning: bool, reason: str, message: str) -> None: ...


@dataclass(slots=True)
class MetricInputs:
    """What the metrics of one sync are computed from (built per sync: not frozen, which costs ~1 us)."""

    hpa: HPA
    spec_replicas: int
    status_replicas: int
    selector_text: str
    metrics: MetricsSource
    targets: ScaleTargetPort
    config: HPAConfig
    now: float
    pod_indexes: dict[str, tuple[Sequence[Pod], PodIndex]]


@dataclass
class Combined:
    """The metrics' verdict: abort (hold the scale), or the highest proposal and the metric behind it."""

    abort: bool
    error: str | None = None
    outcomes: tuple[MetricOutcome, ...] = ()
    statuses: list[dict[str, object]] = field(default_factory=list)
    replicas: int = 0
    metric_name: str = ""


def combine_metrics(sync: Recorder, inputs: MetricInputs, selectors: SelectorRegistry) -> Combined:
    """Check the selector, compute every metric, combine; conditions and events go to ``sync``."""
    hpa, spec_replicas = inputs.hpa, inputs.spec_replicas
    try:
        selector = selectors.validate(hpa.key, hpa.namespace, inputs.selector_text, inputs.targets)
    except SelectorProblem as problem:
        sync.event(True, problem.event_reason, problem.event_message)
        sync.condition(_ACTIVE, False, problem.condition_reason, problem.condition_message)
        return Combined(abort=True, error=problem.event_message)
    ctx = MetricContext(
        hpa,
        spec_replicas,
        inputs.status_replicas,
        selector,
        inputs.metrics,
        inputs.targets,
        inputs.config,
        tolerances_for(hpa, inputs.config),
        inputs.now,
        inputs.pod_indexes,
    )
    outcomes: list[MetricOutcome] = []
    statuses: list[dict[str, object]] = []
    replicas, metric_name = 0, ""
    first_failure: MetricFailure | None = None
    invalid = 0
    for spec in hpa.metrics:
        try:
            result = compute_metric(ctx, spec)
        except MetricFailure as failure:
            sync.event(True, failure.reason, failure.message)
            outcomes.append(
                MetricOutcome(spec, failure_reason=failure.reason, failure_message=failure.message)
            )
            statuses.append({})  # upstream leaves an empty MetricStatus for a failed metric
            if first_failure is None:
                first_failure = failure
            invalid += 1
            continue
        outcomes.append(MetricOutcome(spec, result.replicas, result.name, result.calculation))
        statuses.append(result.status)
        if replicas == 0 or result.replicas > replicas:
            replicas, metric_name = result.replicas, result.name
    error = None
    if first_failure is not None:
        error = f"invalid metrics ({invalid} invalid out of {len(hpa.metrics)}), first error is: {first_failure.message}"
    # All metrics failed, or some did and the rest would scale down: hold (never scale down on partial data).
    if invalid >= len(hpa.metrics) or (invalid > 0 and replicas < spec_replicas):
        if first_failure is not None:
            sync.condition(
                _ACTIVE,
                False,
                first_failure.reason,
                f"the HPA was unable to compute the replica count: {first_failure.message}",
            )
        return Combined(abort=True, error=error, outcomes=tuple(outcomes), statuses=statuses)
    sync.condition(
        _ACTIVE,
        True,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {metric_name}",
    )
    return Combined(False, error, tuple(outcomes), statuses, replicas, metric_name)
