"""Event reasons and messages of the batch autoscaler, in Escalator's wording, in one place.

Escalator emits no Kubernetes events; it logs. kubetide's event log (scenario spec §10.2) names its
actions ``EscalatorScaleUp``, ``EscalatorTaint``, ``EscalatorUntaint`` and ``EscalatorDelete``; the
decision reasons and error texts below are Escalator's own log and error strings, so a reader who
knows Escalator's logs recognises every line.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EventReason", "Message", "Reason"]


class EventReason(StrEnum):
    """The ``reason`` of an escalator event in kubetide's event log."""

    SCALE_UP = "EscalatorScaleUp"
    TAINT = "EscalatorTaint"
    UNTAINT = "EscalatorUntaint"
    DELETE = "EscalatorDelete"


class Reason(StrEnum):
    """Why a run decided what it did: one per branch of upstream ``scaleNodeGroup``."""

    NO_PODS_NO_NODES = "no pods requests and remain 0 node for node group"
    BELOW_MIN_NODE_COUNT = "node count less than the minimum"
    BELOW_MIN_UNTAINTED = "There are less untainted nodes than the minimum"
    PERCENT_ERROR = "Failed to calculate percentages"
    LOCKED = "Waiting for scale to finish"
    FAST_REMOVAL = "utilisation below taint_lower_capacity_threshold_percent: fast node removal"
    SLOW_REMOVAL = "utilisation below taint_upper_capacity_threshold_percent: slow node removal"
    SCALE_UP = "utilisation above scale_up_threshold_percent: scale up"
    SCALE_UP_ERROR = "Failed to calculate node delta"
    NO_CHANGE = "No need to scale"
    STARVED = "Setting scale to minimum of 1 due to a starved pod"
    MAX_NODE_AGE = "Setting scale to minimum of 1 to rotate out a node older than the max node age"
    OVER_MAX = "untainted nodes above max_nodes: scaling down to the maximum"
    UNHEALTHY = "NodegroupUnhealthy: nodesDelta overridden to 0 because the nodegroup is unhealthy"
    UNHEALTHY_TAINTED = "tainted unhealthy nodes"


class Message:
    """Error texts, word for word; the formatted ones are built by the helpers below."""

    DIVIDE_BY_ZERO = "cannot divide by zero in percent calculation"
    NEGATIVE_DELTA = "negative scale up delta"
    BELOW_MIN_NODE_COUNT = "node count less than the minimum"
    THRESHOLD_NOT_POSITIVE = "scale_up_threshold_percent must be larger than 0"

    @staticmethod
    def below_minimum(untainted: int, min_nodes: int) -> str:
        return (
            f"the number of nodes({untainted}) is less than specified minimum of {min_nodes}. "
            "Taking no action"
        )

    @staticmethod
    def refusing_scale_up(target_size: int, max_nodes: int) -> str:
        # Upstream's typo ("scaleup up") and its use of max_nodes (not the ASG max) in the text.
        return (
            "refusing to scaleup up beyond the maximum size of the autoscaling group "
            f"(TargetSize: {target_size}; MaxNodes: {max_nodes}). Taking no action"
        )
