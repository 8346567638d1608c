"""CA's own node taints and the "being deleted" test built on them.

``ToBeDeletedByClusterAutoscaler`` (value: unix seconds) marks a node CA is deleting; for 5 minutes
(max of the Kubernetes and cloud deletion times) the node counts as being deleted, after which CA
assumes the deletion failed and the node is a candidate again.
"""

from __future__ import annotations

from kubetide.model.node import NodeView

__all__ = [
    "DELETION_CANDIDATE_TAINT",
    "MAX_NODE_DELETION_TIME_S",
    "TO_BE_DELETED_TAINT",
    "is_being_deleted",
    "to_be_deleted_time",
]

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
DELETION_CANDIDATE_TAINT = "DeletionCandidateOfClusterAutoscaler"
MAX_NODE_DELETION_TIME_S = max(
    180.0, 300.0
)  # MaxKubernetesEmptyNodeDeletionTime, MaxCloudProviderNodeDeletionTime


def to_be_deleted_time(node: NodeView) -> float | None:
    """When CA tainted the node, or None if it has no (parsable) ToBeDeleted taint."""
    for t in node.taints:
        if t.key == TO_BE_DELETED_TAINT:
            try:
                return float(t.value)
            except ValueError:
                return None
    return None


def is_being_deleted(node: NodeView, now: float) -> bool:
    if not node.taints:
        return False
    since = to_be_deleted_time(node)
    return since is not None and now - since < MAX_NODE_DELETION_TIME_S
