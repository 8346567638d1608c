"""What every role of the simulated cluster acts with: the object store, the virtual clock, the event
log, and the cluster, through which it reaches the other roles (the kubelet asks the scheduler for a
binding, the garbage collector asks the controllers to replace pods).

The cluster and the other roles are seen through the protocols below, the little each role asks of
the others: :class:`~kubetide.sim.cluster.cluster.SimCluster` wires the roles together and meets
them, and no role imports the cluster or another role back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from kubetide.clock import VirtualClock
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.store import EventSink, ObjectStore, SimNode
from kubetide.sim.cluster.workloads import ClusterOps, Workload

__all__ = ["ClusterRole", "Kubelets", "Reconcilers", "RoleHost", "Scheduling"]


class Scheduling(Protocol):
    """kube-scheduler's stand-in (:class:`~kubetide.sim.cluster.scheduler_loop.SchedulerLoop`)."""

    @property
    def snapshot(self) -> ClusterSnapshot: ...

    def freed(self, now: float) -> None: ...

    def fits(self, pod: SimPod, node: SimNode) -> bool: ...

    def bind(self, pod: SimPod, node_name: str, now: float, emit: bool = True) -> None: ...


class Kubelets(Protocol):
    """The nodes' kubelets (:class:`~kubetide.sim.cluster.kubelet.Kubelet`)."""

    def admit(self, pod: SimPod, node: SimNode, now: float) -> None: ...

    def ready(self, pod: SimPod, now: float) -> None: ...

    def pod_bound(self, pod: SimPod) -> None: ...


class Reconcilers(Protocol):
    """The workload controllers (:class:`~kubetide.sim.cluster.controllers.Controllers`)."""

    def reconcile(self, workload: Workload, now: float) -> None: ...

    def reconcile_keys(self, keys: Iterable[str], now: float, *, daemon_sets: bool = True) -> None: ...

    def reconcile_owner(self, pod: SimPod, now: float) -> None: ...

    def name_freed(self, pod: SimPod, now: float) -> None: ...


class RoleHost(ClusterOps, Protocol):
    """The cluster as its roles see it: the shared state, the writes, and the other roles."""

    @property
    def engine(self) -> VirtualClock: ...

    @property
    def events(self) -> EventSink: ...

    @property
    def store(self) -> ObjectStore: ...

    @property
    def scheduler(self) -> Scheduling: ...

    @property
    def kubelet(self) -> Kubelets: ...

    @property
    def controllers(self) -> Reconcilers: ...


class ClusterRole:
    def __init__(self, cluster: RoleHost) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.clock = cluster.engine
        self.events = cluster.events
