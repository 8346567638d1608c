"""kube-scheduler's stand-in: it places the pending pods, one batch per instant in which something
changed, and keeps the scheduling snapshot (its cache of what each node holds).

Anything that may let a pending pod fit (a pod added, capacity freed, a node Ready or untainted)
arms one scheduling pass at the current instant, after everything else that happens then (priority
50), so the pass sees the instant's last state. A pass tries every pending pod when capacity
changed, else only those not tried yet. Pods for another scheduler (``spec.schedulerName``) and pods
bound by ``spec.nodeName`` (the kubelet's) are left alone. The placements come from
:class:`~kubetide.scheduling.scheduler.Scheduler`, the scheduling core's kube-scheduler.
"""

from __future__ import annotations

from kubetide.scheduling.scheduler import Scheduler
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.role import ClusterRole, RoleHost
from kubetide.sim.cluster.store import SimNode

__all__ = ["DEFAULT_SCHEDULER", "SchedulerLoop"]

DEFAULT_SCHEDULER = "default-scheduler"
_SCHEDULE_PRIORITY = 50  # after everything else that happens at the same instant


class SchedulerLoop(ClusterRole):
    def __init__(self, cluster: RoleHost, seed: int) -> None:
        super().__init__(cluster)
        self.snapshot = ClusterSnapshot()
        self.scheduler = Scheduler(seed=seed)
        self.armed = False
        self.capacity_changed = True

    def kick(self, now: float) -> None:
        """Something may now fit: a pass at this instant, once."""
        if not self.armed:
            self.armed = True
            self.clock.at(now, self.schedule, priority=_SCHEDULE_PRIORITY, name="schedule")

    def freed(self, now: float) -> None:
        """Capacity came free (a pod gone, a node Ready or untainted): every pending pod may fit."""
        self.capacity_changed = True
        self.kick(now)

    def fits(self, pod: SimPod, node: SimNode) -> bool:
        """Whether ``pod``'s requests (and one more pod) fit in what ``node`` has left."""
        snap = self.snapshot
        vector = snap.vector(pod.spec.requests)
        return bool((snap.allocatable[node.slot] - snap.requested[node.slot] >= vector).all())

    def bind(self, pod: SimPod, node_name: str, now: float, emit: bool = True) -> None:
        """Record a binding already reflected in the scheduling snapshot; the node's kubelet starts
        the pod."""
        store = self.store
        node = store.nodes[node_name]
        pod.node = node_name
        pod.bound_at = now
        pod.unschedulable = None
        pod.changed()
        node.pods[pod.key] = pod
        if store.drop_pending(pod, now):
            store.stats.time_to_schedule.append(now - pod.created)
        store.touch(pod)
        if emit:
            self.events.emit(
                now,
                "scheduler",
                "Scheduled",
                f"Pod/{pod.key}",
                f"Successfully assigned {pod.key} to {node_name}",
                {"node": node_name},
            )
        self.cluster.kubelet.pod_bound(pod)

    def schedule(self, now: float) -> None:
        """One scheduling pass over the pending pods."""
        self.armed = False
        pending = self.store.pending
        if not pending:
            return
        if self.capacity_changed:
            candidates = list(pending.values())
        else:  # nothing freed up: only pods not tried yet can succeed
            candidates = [p for p in pending.values() if p.unschedulable is None]
        awaiting = self.store.awaiting_node
        if awaiting:  # spec.nodeName pods are the kubelet's, never the scheduler's
            candidates = [p for p in candidates if p.key not in awaiting]
        # A pod for another scheduler (spec.schedulerName) is that scheduler's: it stays Pending, with
        # no Unschedulable condition, as the simulated cluster runs only kube-scheduler.
        candidates = [p for p in candidates if p.spec.scheduler_name == DEFAULT_SCHEDULER]
        self.capacity_changed = False
        if not candidates:
            return
        by_spec = {id(p.spec): p for p in candidates}
        result = self.scheduler.schedule(self.snapshot, [p.spec for p in candidates])
        for placement in result.placements:
            self.bind(by_spec[id(placement.pod)], placement.node, now)
        for failure in result.unschedulable:
            pod = by_spec[id(failure.pod)]
            if pod.unschedulable != failure.message:
                pod.unschedulable = failure.message
                pod.changed()
                self.events.emit(now, "scheduler", "FailedScheduling", f"Pod/{pod.key}", failure.message, {})
        if result.placements and any(p.spec.pod_affinity or p.spec.topology_spread for p in pending.values()):
            # Pods bound now may be what a pending pod's required affinity (or spread) waits for:
            # kube-scheduler requeues such pods on a pod add event, so try them all again now.
            self.freed(now)
