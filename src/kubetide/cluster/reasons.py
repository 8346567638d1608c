"""Every reason string Cluster Autoscaler emits or reports, in CA's wording, as string enums.

Events (§10 of the CA spec), scale-up results and skip reasons, scale-down unremovable reasons and the
readiness buckets live here, so adapters, ``explain`` output and tests share one spelling. Messages are
built beside the code that decides them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "EventReason",
    "KubetideEventReason",
    "ReadinessBucket",
    "ScaleDownResult",
    "ScaleUpActivity",
    "ScaleUpResult",
    "SkipReason",
    "UnremovableReason",
]


class EventReason(StrEnum):
    """Kubernetes event reasons CA records (on pods, nodes, or the status ConfigMap)."""

    SCALED_UP_GROUP = "ScaledUpGroup"
    FAILED_TO_SCALE_UP_GROUP = "FailedToScaleUpGroup"
    SCALE_UP_TIMED_OUT = "ScaleUpTimedOut"
    SCALE_UP_FAILED = "ScaleUpFailed"
    FAILED_TO_REVERT_SCALE_UP = "FailedToRevertScaleUp"
    MAX_NODES_TOTAL_REACHED = "MaxNodesTotalReached"
    CLUSTER_UNHEALTHY = "ClusterUnhealthy"
    DELETE_UNREGISTERED = "DeleteUnregistered"
    DELETE_UNREGISTERED_FAILED = "DeleteUnregisteredFailed"
    NOT_TRIGGER_SCALE_UP = "NotTriggerScaleUp"
    TRIGGERED_SCALE_UP = "TriggeredScaleUp"
    SCALE_DOWN = "ScaleDown"
    SCALE_DOWN_EMPTY = "ScaleDownEmpty"
    SCALE_DOWN_FAILED = "ScaleDownFailed"
    CLUSTER_AUTOSCALER_CLEANUP = "ClusterAutoscalerCleanup"
    GRACEFUL_DEGRADATION_STARTED = "GracefulDegradationStarted"
    GRACEFUL_DEGRADATION_STOPPED = "GracefulDegradationStopped"
    PRIORITY_CONFIG_MAP_INVALID = "PriorityConfigMapInvalid"
    PRIORITY_CONFIG_MAP_NOT_MATCHED_GROUP = "PriorityConfigMapNotMatchedGroup"
    PRIORITY_CONFIG_MAP_NO_GROUP_MATCHED = "PriorityConfigMapNoGroupMatched"


class KubetideEventReason(StrEnum):
    """Events kubetide records where upstream only logs (or, for template drift, says nothing)."""

    NODE_GROUP_BACKOFF = "NodeGroupBackoff"
    DELETE_CREATED_WITH_ERROR = "DeleteCreatedWithError"
    FIX_NODE_GROUP_SIZE = "FixNodeGroupSize"
    NODE_TEMPLATE_MISMATCH = "NodeTemplateMismatch"
    NODE_WITHOUT_PROVIDER_ID = "NodeWithoutProviderID"
    PRICES_UNAVAILABLE = "PricesUnavailable"  # the price expander had no price for any option
    UNREGISTERED_INSTANCE_KEPT = "UnregisteredInstanceKept"  # one kubetide did not launch
    UNREMOVABLE_NODE = "UnremovableNode"  # why an underutilized node is kept (CA only logs it)
    # An empty node of an atomic ProvisioningRequest whose other nodes never came, deleted.
    DELETE_PARTIALLY_PROVISIONED = "DeletePartiallyProvisioned"


class ReadinessBucket(StrEnum):
    """Where the ClusterStateRegistry counts a node (first match wins, CA spec §2.2)."""

    READY = "Ready"
    UNREADY = "Unready"
    NOT_STARTED = "NotStarted"
    DELETED = "Deleted"
    SUSPENDED = "Suspended"
    UNREGISTERED = "Unregistered"
    LONG_UNREGISTERED = "LongUnregistered"


class ScaleUpActivity(StrEnum):
    """Scale-up state in the status ConfigMap (``ClusterAutoscalerScaleUp`` condition)."""

    IN_PROGRESS = "InProgress"
    NO_ACTIVITY = "NoActivity"
    BACKOFF = "Backoff"


class ScaleUpResult(StrEnum):
    """``status.ScaleUpResult``: what the scale-up step of one loop came to."""

    SUCCESSFUL = "Successful"
    ERROR = "Error"
    NO_OPTIONS_AVAILABLE = "NoOptionsAvailable"
    NOT_NEEDED = "NotNeeded"
    NOT_TRIED = "NotTried"
    IN_COOLDOWN = "InCooldown"
    LIMITED_BY_MAX_NODES_TOTAL = "LimitedByMaxNodesTotal"


class ScaleDownResult(StrEnum):
    ERROR = "Error"
    NO_NODE_DELETED = "NoNodeDeleted"
    NODE_DELETE_STARTED = "NodeDeleteStarted"
    NO_UNNEEDED = "NoUnneeded"
    IN_COOLDOWN = "InCooldown"
    IN_PROGRESS = "InProgress"


class SkipReason(StrEnum):
    """Why a node group was not considered for scale-up; the strings appear in NotTriggerScaleUp."""

    NOT_READY_FOR_SCALE_UP = "not ready for scale-up"
    BACKOFF = "in backoff after failed scale-up"
    MAX_SIZE_REACHED = "max node group size reached"
    ATOMIC_EXCEEDS_CLUSTER_LIMIT = "atomic scale-up exceeds cluster node count limit"
    MAX_NODES_TOTAL = "max total nodes in cluster reached"
    FILTERED_OUT = "expansion options filtered out and no longer considered"
    # kubetide (--failover-to-untried-groups): a silent stockout's group waits for the groups not tried.
    TIMED_OUT_BEFORE = "timed out before, a node group not tried yet can take the pods"


class UnremovableReason(StrEnum):
    """``simulator.UnremovableReason``: why a node is not a scale-down candidate this loop."""

    UNEXPECTED_ERROR = "UnexpectedError"
    RECENTLY_UNREMOVABLE = "RecentlyUnremovable"
    CURRENTLY_BEING_DELETED = "CurrentlyBeingDeleted"
    SCALE_DOWN_DISABLED_ANNOTATION = "ScaleDownDisabledAnnotation"
    NOT_AUTOSCALED = "NotAutoscaled"
    SCALE_DOWN_UNREADY_DISABLED = "ScaleDownUnreadyDisabled"
    NOT_UNDERUTILIZED = "NotUnderutilized"
    NOT_UNNEEDED_LONG_ENOUGH = "NotUnneededLongEnough"
    NOT_UNREADY_LONG_ENOUGH = "NotUnreadyLongEnough"
    NODE_GROUP_MIN_SIZE_REACHED = "NodeGroupMinSizeReached"
    MINIMAL_RESOURCE_LIMIT_EXCEEDED = "MinimalResourceLimitExceeded"
    ATOMIC_SCALE_DOWN_FAILED = "AtomicScaleDownFailed"
    BLOCKED_BY_ON_COMPLETION_POD = "BlockedByOnCompletionPod"
    NO_PLACE_TO_MOVE_PODS = "NoPlaceToMovePods"
    BLOCKED_BY_POD = "BlockedByPod"
