"""HPA status condition types and reasons (upstream's strings), and how a condition is set in a list.

Reasons upstream has no word for are kubetide's own and listed in :class:`ConditionReason`; each is
documented where it is defined.
"""

from __future__ import annotations

from enum import StrEnum

from kubetide.model.hpa import Condition


class ConditionType(StrEnum):
    ABLE_TO_SCALE = "AbleToScale"
    SCALING_ACTIVE = "ScalingActive"
    SCALING_LIMITED = "ScalingLimited"
    SCALED_TO_ZERO = "ScaledToZero"


class ConditionReason(StrEnum):
    """kubetide's own condition reasons (upstream's are written beside the code that sets them)."""

    # ScalingActive False: a kubetide HorizontalPodAutoscaler (autoscaling.kubetide.io/v1) with
    # minReplicas 0 and no Object or External metric. The built-in API server rejects such an
    # autoscaling/v2 object; the CRD cannot on a 1.20 API server (no validation rules), so the
    # controller refuses to scale it instead, with a Warning event of the same reason.
    INVALID_MIN_REPLICAS = "InvalidMinReplicas"
    # ScalingActive False: the sync broke on something unexpected (a port raising an error outside its
    # contract, a bug); the loop goes on with the other HPAs and tries this one again next period.
    FAILED_RECONCILE = "FailedReconcile"


class EventReason(StrEnum):
    SUCCESSFUL_RESCALE = "SuccessfulRescale"
    FAILED_RESCALE = "FailedRescale"
    FAILED_GET_SCALE = "FailedGetScale"
    FAILED_COMPUTE_METRICS_REPLICAS = "FailedComputeMetricsReplicas"
    SELECTOR_REQUIRED = "SelectorRequired"
    INVALID_SELECTOR = "InvalidSelector"
    AMBIGUOUS_SELECTOR = "AmbiguousSelector"
    FAILED_UPDATE_STATUS = "FailedUpdateStatus"  # upstream's, when writing the status fails
    INVALID_MIN_REPLICAS = ConditionReason.INVALID_MIN_REPLICAS.value  # kubetide's, see ConditionReason
    FAILED_RECONCILE = ConditionReason.FAILED_RECONCILE.value  # kubetide's, see ConditionReason
    INVALID_SPEC = "InvalidSpec"  # kubetide's: the object does not parse (e.g. a bad spec.syncPeriod)


def set_condition(
    conditions: list[Condition], type_: str, status: str, reason: str, message: str, now: float
) -> None:
    """``setConditionInList``: update in place (keeping its position) or append; the transition time
    changes only when the status does."""
    for i, c in enumerate(conditions):
        if c.type == type_:
            if c.status == status and c.reason == reason and c.message == message:
                return  # unchanged: keep the very same object
            transition = now if c.status != status else c.last_transition_time
            conditions[i] = Condition(type_, status, reason, message, transition)
            return
    conditions.append(Condition(type_, status, reason, message, now))


def remove_condition(conditions: list[Condition], type_: str) -> None:
    conditions[:] = [c for c in conditions if c.type != type_]
