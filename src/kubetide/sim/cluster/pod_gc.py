"""The pod garbage collector's stand-in: when a Node object is deleted, its pods go with it, and their
controllers replace them elsewhere.

This is how a node removed by an autoscaler (or by hand) takes the pods still on it: the pods are not
evicted, they are deleted (``NodeDeleted``); DaemonSets stop waiting for room on the gone node.
"""

from __future__ import annotations

from kubetide.sim.cluster.role import ClusterRole
from kubetide.sim.cluster.workloads import DaemonSetWorkload

__all__ = ["PodGarbageCollector"]


class PodGarbageCollector(ClusterRole):
    def node_deleted(self, t: float, name: str) -> None:
        """The Node object is gone: its pods are garbage-collected and their owners replace them."""
        cluster, store = self.cluster, self.store
        node = store.nodes.get(name)
        if node is None:
            return
        owners = set()
        for pod in list(node.pods.values()):
            cluster.delete_pod(pod, t, "NodeDeleted")
            if pod.owner:
                owners.add(pod.owner)
        cluster.scheduler.snapshot.remove_node(node.slot)
        del store.nodes[name]
        store.nodes_changed()
        cluster.controllers.reconcile_keys(owners, t, daemon_sets=False)
        for workload in store.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.prune(cluster, store.nodes, t)  # pods still waiting for room on the gone node
