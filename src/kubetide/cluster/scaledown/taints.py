"""CA's own node taints and the "being deleted" test built on them.

``ToBeDeletedByClusterAutoscaler`` (value: unix seconds) marks a node CA is deleting; for 5 minutes
(max of the Kubernetes and cloud deletion times) the node counts as being deleted, after which CA
assumes the deletion failed and the node is a candidate again.
"""

from __future__ import annotations

import re

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
_INT = re.compile(r"[+-]?[0-9]+")
MAX_NODE_DELETION_TIME_S = max(
    180.0, 300.0
)  # MaxKubernetesEmptyNodeDeletionTime, MaxCloudProviderNodeDeletionTime


def to_be_deleted_time(node: NodeView) -> float | None:
    """When CA tainted the node, or None if it has no ToBeDeleted taint or its value is not what
    ``GetToBeDeletedTime`` parses (``strconv.ParseInt(value, 10, 64)``: whole unix seconds)."""
    for t in node.taints:
        if t.key == TO_BE_DELETED_TAINT:
            return _unix_seconds(t.value)
    return None


def _unix_seconds(value: str) -> float | None:
    if not _INT.fullmatch(value):
        return None
    seconds = int(value)
    return float(seconds) if -(2**63) <= seconds < 2**63 else None


def is_being_deleted(node: NodeView, now: float) -> bool:
    """``IsNodeBeingDeleted``: tainted less than 5 minutes ago (``now - since < 5m``)."""
    if not node.taints:
        return False
    since = to_be_deleted_time(node)
    return since is not None and now - since < MAX_NODE_DELETION_TIME_S
