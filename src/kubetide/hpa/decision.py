"""Frozen values of one sync: what was decided and why (per-metric proposals, stabilization, limits,
conditions, events), before acting (:class:`HPADecision`) and after (:class:`SyncResult`). The caller
acts on a decision (the scale write) and reports the outcome; ``kubetide hpa explain`` prints them."""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.hpa.replicas import Calculation
from kubetide.hpa.state import NEVER_SYNCED, Recommendation, Remembered
from kubetide.model.hpa import HPA, Condition, HPAStatus, MetricSpec


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


@dataclass(frozen=True, slots=True)
class ScaleEventChange:
    """A scale event to remember for the rate-limit policies once the rescale has succeeded."""

    direction: str  # up | down
    replica_change: int  # > 0


@dataclass(frozen=True, slots=True)
class RescaleOutcome:
    """What happened when the caller wrote the decided replicas to the scale subresource."""

    error: str | None = None  # None: the write succeeded; else the error the API returned

    @property
    def succeeded(self) -> bool:
        return self.error is None


RESCALED = RescaleOutcome()


@dataclass(frozen=True, slots=True)
class HPADecision:
    """What one sync decided, before anything is written (``HorizontalController.decide``).

    When ``rescale`` is true the caller sets the target's ``spec.replicas`` to ``desired_replicas``
    through ``ScaleTargetPort.update_scale`` and hands the outcome to ``HorizontalController.complete``,
    which turns this into the final :class:`SyncResult` and commits the controller's memory. When it is
    false there is nothing to write, but ``complete`` must still be called (with no outcome): the
    recommendation memory is only committed there.
    """

    hpa: HPA
    now: float
    current_replicas: int | None  # None when the scale could not be read
    desired_replicas: int  # the replicas to write when rescaling, else what the status will say
    rescale: bool
    reason: str  # the rescale reason of the SuccessfulRescale/FailedRescale message
    conditions: tuple[Condition, ...]  # as set so far; the rescale outcome sets AbleToScale again
    events: tuple[Event, ...]  # emitted so far
    metric_statuses: tuple[dict[str, object], ...] | None  # None: keep the status' current metrics
    error: str | None = None
    metrics: tuple[MetricOutcome, ...] = ()
    normalization: Normalization | None = None
    tolerances: tuple[float, float] | None = None  # (down, up)
    # The memory this sync would commit: the recommendations after it (None: unchanged), committed
    # whatever the rescale's outcome (upstream stores them while normalizing), and the scale event,
    # committed only when the rescale succeeds.
    recommendations: tuple[Recommendation, ...] | None = None
    scale_event: ScaleEventChange | None = None
    # The memory the sync started from (what ``hpa explain`` shows as remembered).
    remembered: Remembered = NEVER_SYNCED
