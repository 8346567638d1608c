"""HPA status condition types and reasons (upstream's strings), and how a condition is set in a list."""

from __future__ import annotations

from enum import StrEnum

from kubetide.model.hpa import Condition


class ConditionType(StrEnum):
    ABLE_TO_SCALE = "AbleToScale"
    SCALING_ACTIVE = "ScalingActive"
    SCALING_LIMITED = "ScalingLimited"
    SCALED_TO_ZERO = "ScaledToZero"


class EventReason(StrEnum):
    SUCCESSFUL_RESCALE = "SuccessfulRescale"
    FAILED_RESCALE = "FailedRescale"
    FAILED_GET_SCALE = "FailedGetScale"
    FAILED_COMPUTE_METRICS_REPLICAS = "FailedComputeMetricsReplicas"
    SELECTOR_REQUIRED = "SelectorRequired"
    INVALID_SELECTOR = "InvalidSelector"
    AMBIGUOUS_SELECTOR = "AmbiguousSelector"


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
