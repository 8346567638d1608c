"""The workload controllers' triggers: which controller reconciles when something it owns changed.

The controllers themselves (Deployments and ReplicaSets, StatefulSets, DaemonSets, Jobs) are in
:mod:`kubetide.sim.cluster.workloads`; they create and delete pods through the cluster
(:class:`~kubetide.sim.cluster.workloads.ClusterOps`). This module says when each one runs: a
DaemonSet over every node, a StatefulSet when one of its pods starts or is Ready (it creates pods one
at a time) and when a pod name it waits for is free again.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.role import ClusterRole
from kubetide.sim.cluster.workloads import DaemonSetWorkload, ReplicatedWorkload, Workload

__all__ = ["Controllers"]


class Controllers(ClusterRole):
    def reconcile(self, workload: Workload, now: float) -> None:
        if isinstance(workload, DaemonSetWorkload):
            workload.reconcile_nodes(self.cluster, {n: s.view for n, s in self.store.nodes.items()}, now)
        else:
            workload.reconcile(self.cluster, now)

    def reconcile_keys(self, keys: Iterable[str], now: float, *, daemon_sets: bool = True) -> None:
        """The workloads of ``keys`` that still exist, in key order (DaemonSets only if asked)."""
        for key in sorted(keys):
            workload = self.store.workloads.get(key)
            if workload is not None and (daemon_sets or not isinstance(workload, DaemonSetWorkload)):
                self.reconcile(workload, now)

    def reconcile_owner(self, pod: SimPod, now: float) -> None:
        """A pod started or became Ready: a StatefulSet creates its next pod."""
        owner = self.store.workloads.get(pod.owner or "")
        if isinstance(owner, ReplicatedWorkload) and owner.kind == "StatefulSet":
            owner.reconcile(self.cluster, now)

    def name_freed(self, pod: SimPod, now: float) -> None:
        """A bare pod is gone: a StatefulSet of its namespace may have waited for its name."""
        for workload in list(self.store.workloads.values()):
            if (
                isinstance(workload, ReplicatedWorkload)
                and workload.kind == "StatefulSet"
                and workload.namespace == pod.spec.namespace
            ):
                workload.reconcile(self.cluster, now)
