"""The kubelets' stand-in: it runs the pods bound to a node through their lifecycle and stops the ones
being deleted at the end of their grace period.

A bound pod is Running after its start-up delay and Ready after its readiness delay (not while its
Node is NotReady: the Node turning Ready makes it Ready); a Job pod is Succeeded when its run time is
over. A pod bound by ``spec.nodeName`` bypasses the scheduler: the node's kubelet admits it (its node
selection, host ports and room) or fails it. A graceful deletion (an eviction, a drain) leaves the pod
Terminating on its node, holding its resources, until its grace period ends.
"""

from __future__ import annotations

from functools import partial

from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.scheduling.predicates.node_ports import ports_conflict
from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.role import ClusterRole
from kubetide.sim.cluster.store import SimNode
from kubetide.sim.cluster.workloads import DaemonSetWorkload, JobWorkload, ReplicatedWorkload

__all__ = ["DEFAULT_TERMINATION_GRACE_S", "Kubelet"]

DEFAULT_TERMINATION_GRACE_S = 30  # the API server's default terminationGracePeriodSeconds


class Kubelet(ClusterRole):
    # --- a pod's lifecycle on its node --------------------------------------------------------------

    def pod_bound(self, pod: SimPod) -> None:
        self.clock.after(pod.startup_delay, partial(self._start, pod), name="pod-start")

    def _start(self, pod: SimPod, now: float) -> None:
        if pod.deleted or pod.terminating_until is not None or pod.node not in self.store.nodes:
            return
        pod.phase = "Running"
        pod.running_at = now
        pod.changed()
        self.store.touch(pod)
        self.clock.after(pod.readiness_delay, partial(self.ready, pod), name="pod-ready")
        if pod.run_for is not None:
            self.clock.after(pod.run_for, partial(self._succeed, pod), name="pod-done")
        self.cluster.controllers.reconcile_owner(pod, now)

    def ready(self, pod: SimPod, now: float) -> None:
        """The pod's readiness probe passes: Ready, unless its node is NotReady."""
        if pod.deleted or pod.terminating_until is not None or pod.phase != "Running" or pod.ready:
            return
        node = self.store.nodes.get(pod.node or "")
        if node is None or not node.ready:
            return  # not while its Node is NotReady: the Node turning Ready makes it Ready
        pod.ready = True
        pod.ready_at = now
        pod.changed()
        self.store.touch(pod)
        self.cluster.controllers.reconcile_owner(pod, now)  # StatefulSets wait for Ready

    def _succeed(self, pod: SimPod, now: float) -> None:
        if pod.deleted or pod.terminating_until is not None or pod.phase != "Running":
            return
        store = self.store
        pod.phase, pod.ready = "Succeeded", False
        pod.changed()
        node = store.nodes.get(pod.node or "")
        if node is not None and node.pods.pop(pod.key, None) is not None:
            scheduler = self.cluster.scheduler
            scheduler.snapshot.remove_pod(pod.spec, node.slot)
            scheduler.freed(now)
        owner = store.workloads.get(pod.owner or "")
        store.remove_pod(pod)
        if pod.owner is None:
            self.cluster.controllers.name_freed(pod, now)
        if isinstance(owner, JobWorkload):
            owner.pods.pop(pod.name, None)
            owner.version += 1
            owner.succeeded += 1
            owner.reconcile(self.cluster, now)

    # --- admission of pods bound by spec.nodeName ---------------------------------------------------

    def admit(self, pod: SimPod, node: SimNode, now: float) -> None:
        """The kubelet's admission of a pod bound by spec.nodeName (its general predicates): it runs
        if the node matches its selection, has its host ports free and room for it; else it fails
        (``NodeAffinity``, ``NodePorts``, ``OutOfcpu``, ``OutOfmemory``, ``OutOfpods``...), never runs."""
        scheduler = self.cluster.scheduler
        snap = scheduler.snapshot
        used = [port for other in node.pods.values() for port in other.spec.host_ports]
        if not matches_node_selection(pod.spec, node.view.name, node.view.labels):
            reason, message = (
                "NodeAffinity",
                "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
            )
        elif ports_conflict(pod.spec.host_ports, used):
            reason = "NodePorts"
            message = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
        elif scheduler.fits(pod, node):
            snap.add_pod(pod.spec, node.slot)
            scheduler.bind(pod, node.view.name, now, emit=False)
            return
        else:
            short = snap.vector(pod.spec.requests) - (snap.allocatable[node.slot] - snap.requested[node.slot])
            resource = next(r for r, gap in zip(snap.resources, short.tolist(), strict=False) if gap > 0)
            reason, message = f"OutOf{resource}", f"Node didn't have enough resource: {resource}"
        if pod.key in self.store.awaiting_node:
            self.store.drop_pending(pod, now)
        pod.phase = "Failed"
        pod.changed()
        self.store.remove_pod(pod)
        self.cluster.controllers.name_freed(pod, now)
        self.events.emit(now, "kubelet", reason, f"Pod/{pod.key}", message, {"node": node.view.name})

    # --- graceful deletion --------------------------------------------------------------------------

    def terminate(self, pod: SimPod, now: float, grace_period_s: float | None, reason: str) -> None:
        """A graceful deletion, as the API server and the kubelet make it. The grace period is the
        request's (None: the pod's ``terminationGracePeriodSeconds``, 30 s unset); a pod not on a node,
        finished, or given 0 s goes at once. Otherwise it gets its deletion time and stays on its node,
        Terminating and holding its resources, until then (one event per pod); its controller stops
        counting it at once and replaces it (a StatefulSet once the name is free). A second deletion
        only ever shortens the grace period."""
        cluster = self.cluster
        grace = grace_period_s
        if grace is None:
            own = pod.spec.termination_grace_s
            grace = DEFAULT_TERMINATION_GRACE_S if own is None else own
        owner = self.store.workloads.get(pod.owner) if pod.owner else None
        if pod.node is None or pod.phase in ("Succeeded", "Failed") or grace <= 0:
            cluster.delete_pod(pod, now, reason)
            if owner is not None:
                cluster.controllers.reconcile(owner, now)
            return
        end = now + grace
        if pod.terminating_until is not None and pod.terminating_until <= end:
            return
        first = pod.terminating_until is None
        pod.terminating_until = end
        pod.changed()
        if first and owner is not None and not isinstance(owner, DaemonSetWorkload):
            owner.pods.pop(pod.name, None)
            owner.version += 1
            cluster.controllers.reconcile(owner, now)
        # A DaemonSet's terminating pod still counts as its node's (the controller's nodeToDaemonPods
        # keeps a pod being deleted until it is terminal): the pod is replaced once it is gone.
        self.clock.at(end, partial(self._terminated, pod, end), name="pod-terminated")

    def _terminated(self, pod: SimPod, end: float, now: float) -> None:
        """The kubelet has stopped the pod at the end of its grace period: it is gone."""
        if pod.deleted or pod.terminating_until != end:
            return  # gone already (its node went), or a later deletion shortened it
        cluster = self.cluster
        cluster.delete_pod(pod, now, "Terminated")
        owner = self.store.workloads.get(pod.owner or "")
        nodes = self.store.nodes
        if isinstance(owner, ReplicatedWorkload) and owner.kind == "StatefulSet":
            owner.reconcile(cluster, now)  # its name is free again
        elif isinstance(owner, DaemonSetWorkload) and pod.pinned in nodes:
            # Its node has no pod of the DaemonSet now: a new one if the node still should run it (a node
            # tainted ToBeDeletedByClusterAutoscaler:NoSchedule should not, unless the pod tolerates it).
            owner.reconcile_nodes(cluster, {pod.pinned: nodes[pod.pinned].view}, now, prune=False)
