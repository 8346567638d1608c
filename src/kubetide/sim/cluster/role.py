"""What every role of the simulated cluster acts with: the object store, the virtual clock, the event
log, and the cluster, through which it reaches the other roles (the kubelet asks the scheduler for a
binding, the garbage collector asks the controllers to replace pods)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubetide.sim.cluster.cluster import SimCluster

__all__ = ["ClusterRole"]


class ClusterRole:
    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.clock = cluster.engine
        self.events = cluster.events
