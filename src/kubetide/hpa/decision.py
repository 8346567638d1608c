"""Frozen values a sync returns: what was decided and why (per-metric proposals, stabilization, limits,
conditions, events). Adapters act on them; ``kubetide hpa explain`` prints them."""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.hpa.replicas import Calculation
from kubetide.model.hpa import HPAStatus, MetricSpec


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes event on the HPA object, with upstream's reason and message."""

    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class MetricOutcome:
    spec: MetricSpec
    replicas: int | None = None  # None when the metric failed
    name: str = ""
    calculation: Calculation | None = None
    failure_reason: str = ""
    failure_message: str = ""


@dataclass(frozen=True, slots=True)
class Normalization:
    """How the metrics' proposal became the desired count."""

    proposal: int
    stabilized: int
    stabilization_reason: str  # ReadyForNewScale | ScaleDownStabilized | ScaleUpStabilized
    desired: int
    limit_reason: str  # DesiredWithinRange | TooManyReplicas | TooFewReplicas | ScaleUpLimit | ScaleDownLimit
    limit_message: str
    with_behavior: bool


@dataclass(frozen=True, slots=True)
class SyncResult:
    """The outcome of one reconcile of one HPA."""

    hpa: str  # namespace/name
    current_replicas: int | None  # None when the scale could not be read
    desired_replicas: int  # the new scale when scaled, else the status' desired count
    scaled: bool
    status: HPAStatus
    events: tuple[Event, ...]
    error: str | None = None
    rescale_reason: str = ""
    metrics: tuple[MetricOutcome, ...] = ()
    normalization: Normalization | None = None
    tolerances: tuple[float, float] | None = None  # (down, up)
