"""Event reasons and messages of the batch autoscaler, in Escalator's wording, in one place.

Escalator emits no Kubernetes events; it logs. kubetide's event log (scenario spec §10.2) names its
actions ``EscalatorScaleUp``, ``EscalatorTaint``, ``EscalatorUntaint`` and ``EscalatorDelete``, and the
loop driver emits the same reasons as Kubernetes Events (plus the failures and the held scale lock),
so the simulator's log and a live cluster's events read alike. The decision reasons, error texts and
event messages below are Escalator's own log and error strings, so a reader who knows Escalator's
logs recognises every line.
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
    SCALE_UP_FAILED = "EscalatorScaleUpFailed"
    TAINT_FAILED = "EscalatorTaintFailed"
    UNTAINT_FAILED = "EscalatorUntaintFailed"
    DELETE_FAILED = "EscalatorDeleteFailed"
    SCALE_LOCK_HELD = "EscalatorScaleLockHeld"
    RUN_FAILED = "EscalatorRunFailed"  # the group's run returned an error (scaleNodeGroup's err)


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
    def increasing(nodes: int) -> str:
        return f"increasing cloud provider node group by {nodes}"

    @staticmethod
    def increase_failed(error: str) -> str:
        return f"failed to set cloud provider node group size: {error}"

    @staticmethod
    def tainting(node: str) -> str:
        return f"Tainting node {node}"

    @staticmethod
    def taint_failed(node: str, error: str) -> str:
        return f"While tainting {node}: {error}"

    @staticmethod
    def untainting(node: str) -> str:
        return f"Untainting node {node}"

    @staticmethod
    def untaint_failed(node: str, error: str) -> str:
        return f"Failed to untaint node {node}: {error}"

    @staticmethod
    def deleting(node: str, provider_id: str) -> str:
        return f"Node {node}, {provider_id} ready to be deleted"

    @staticmethod
    def terminate_failed(node: str, provider_id: str, error: str) -> str:
        return f"failed to terminate node in cloud provider {node}, {provider_id}: {error}"

    @staticmethod
    def delete_node_failed(node: str, error: str) -> str:
        return f"failed to delete node {node} from kubernetes: {error}"

    @staticmethod
    def lock_held(requested: int) -> str:
        return f"Waiting for scale to finish: there are {requested} upcoming nodes requested"

    @staticmethod
    def below_minimum(untainted: int, min_nodes: int) -> str:
        return (
            f"the number of nodes({untainted}) is less than specified minimum of {min_nodes}. "
            "Taking no action"
        )

    @staticmethod
    def at_max_nodes(requested: int, allowed: int, max_nodes: int) -> str:
        # kubetide's: upstream has no such clamp (see scale.escalator_max_nodes_headroom).
        return (
            f"scale up of {requested} node(s) clamped to {allowed}: the untainted nodes and those on "
            f"their way may not pass max_nodes ({max_nodes})"
        )

    @staticmethod
    def refusing_scale_up(target_size: int, max_nodes: int) -> str:
        # Upstream's typo ("scaleup up") and its use of max_nodes (not the ASG max) in the text.
        return (
            "refusing to scaleup up beyond the maximum size of the autoscaling group "
            f"(TargetSize: {target_size}; MaxNodes: {max_nodes}). Taking no action"
        )
