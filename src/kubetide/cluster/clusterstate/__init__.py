"""Cluster Autoscaler's ClusterStateRegistry, split by what each part decides (CA spec §2).

``readiness`` (buckets), ``ranges`` (acceptable sizes), ``health``, ``requests`` (scale-up requests and
their timeout), ``creation_errors``, ``incorrect`` (wrong group sizes), ``unregistered``, and
``registry``, which keeps the state across loops and reads the cloud port.
"""

from kubetide.cluster.clusterstate.ranges import AcceptableRange, acceptable_range
from kubetide.cluster.clusterstate.readiness import Readiness, classify_node, is_node_ready
from kubetide.cluster.clusterstate.registry import ClusterEvent, ClusterStateRegistry, UpdateResult

__all__ = [
    "AcceptableRange",
    "ClusterEvent",
    "ClusterStateRegistry",
    "Readiness",
    "UpdateResult",
    "acceptable_range",
    "classify_node",
    "is_node_ready",
]
