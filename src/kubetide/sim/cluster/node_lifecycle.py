"""The node lifecycle controller's stand-in: it registers the Nodes the cloud brings up, follows their
readiness with the not-ready taints, evicts the pods of a Node NotReady for too long, and applies the
taints the autoscalers write.

A Node appears NotReady (``node.kubernetes.io/not-ready:NoSchedule``) until the cloud says it is
Ready; the pods of a NotReady Node are not Ready (they serve no traffic) and, once their toleration
of ``node.kubernetes.io/not-ready:NoExecute`` runs out (300 s by the DefaultTolerationSeconds
admission plugin; DaemonSet pods for ever), they are deleted for their controllers to replace
(taint-based eviction). A Node's own taints (the autoscalers') change what may be scheduled there and
which DaemonSets should run on it.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from kubetide.model.node import NodeView
from kubetide.model.scheduling_terms import Taint, Toleration
from kubetide.sim.cluster.pods import SimPod
from kubetide.sim.cluster.role import ClusterRole
from kubetide.sim.cluster.store import SimNode
from kubetide.sim.cluster.workloads import DaemonSetWorkload, Workload

__all__ = ["NOT_READY_NO_EXECUTE", "NOT_READY_TAINT", "NodeLifecycle"]

NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
# What the node lifecycle controller evicts by: pods that do not tolerate it go after the
# DefaultTolerationSeconds admission plugin's 300 s (DaemonSet pods tolerate it for ever).
NOT_READY_NO_EXECUTE = Taint("node.kubernetes.io/not-ready", "", "NoExecute")
NOT_READY_EVICTION_DELAY = 300.0


def _not_ready_delay(pod: SimPod, owner: Workload | None) -> float | None:
    """How long ``pod`` stays on a NotReady node (None: for ever), as the taint manager decides.

    The DefaultTolerationSeconds admission plugin gives a pod without a toleration of the not-ready
    NoExecute taint one for 300 s; the DaemonSet controller gives its pods one without a limit. Of the
    tolerations that match, the shortest ``tolerationSeconds`` wins (none set: for ever; <= 0: at once).
    """
    if isinstance(owner, DaemonSetWorkload):
        return None
    matching = [t for t in pod.spec.tolerations if t.tolerates(NOT_READY_NO_EXECUTE)]
    if not any(_covers_not_ready(t) for t in pod.spec.tolerations):
        return NOT_READY_EVICTION_DELAY
    if not matching:
        return 0.0
    limits = [t.toleration_seconds for t in matching if t.toleration_seconds is not None]
    return float(max(min(limits), 0)) if limits else None


def _covers_not_ready(toleration: Toleration) -> bool:
    """The admission plugin's test: a toleration for the not-ready key (or every key) and NoExecute (or
    every effect) means the pod already says how long it stays, so no default is added."""
    return toleration.key in (NOT_READY_NO_EXECUTE.key, "") and toleration.effect in ("NoExecute", "")


class NodeLifecycle(ClusterRole):
    def register(self, t: float, node: NodeView, group: str, instance: str) -> None:
        """A Node object appears, NotReady (the kubelet's events are the cloud's to emit)."""
        cluster, store = self.cluster, self.store
        view = replace(node, taints=(*node.taints, NOT_READY_TAINT))
        slot = cluster.scheduler.snapshot.add_node(view)
        sim_node = store.nodes[node.name] = SimNode(node, group, instance, t, slot)
        store.nodes_changed()
        for pod in [p for p in store.awaiting_node.values() if p.spec.node_name == node.name]:
            cluster.kubelet.admit(pod, sim_node, t)
        for workload in store.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.reconcile_nodes(cluster, {node.name: node}, t, prune=False)

    def set_ready(self, t: float, name: str, ready: bool) -> None:
        node = self.store.nodes.get(name)
        if node is None or node.ready == ready:
            return
        node.ready = ready
        self.store.nodes_changed()
        taints = node.view.taints if ready else (*node.view.taints, NOT_READY_TAINT)
        scheduler = self.cluster.scheduler
        scheduler.snapshot.replace_node(node.slot, replace(node.view, taints=taints))
        # The node lifecycle controller marks the pods of a NotReady Node not Ready (they serve no
        # traffic); they are Ready again once it is, if their own readiness delay is over.
        for pod in list(node.pods.values()):
            if pod.phase != "Running":
                continue
            if not ready and pod.ready:
                pod.ready, pod.ready_at = False, t  # ready_at: the Ready condition's last transition
                pod.changed()
                self.store.touch(pod)
            elif ready and pod.running_at is not None and pod.running_at + pod.readiness_delay <= t:
                self.cluster.kubelet.ready(pod, t)
        if not ready:
            node.not_ready_since = t
            workloads = self.store.workloads
            delays = {_not_ready_delay(p, workloads.get(p.owner or "")) for p in node.pods.values()}
            for delay in sorted(d for d in delays if d is not None):
                self.clock.at(
                    t + delay, partial(self._evict_not_ready, name, t, delay), name="taint-eviction"
                )
        if ready:
            scheduler.freed(t)

    def _evict_not_ready(self, name: str, since: float, delay: float, now: float) -> None:
        """Taint-based eviction: the pods of a node NotReady for their whole toleration period go
        (``tolerationSeconds`` of their tolerations of ``node.kubernetes.io/not-ready:NoExecute``, 300 s
        by default), and their controllers replace them elsewhere."""
        cluster, store = self.cluster, self.store
        node = store.nodes.get(name)
        if node is None or node.ready or node.not_ready_since != since:
            return  # gone, or Ready again in between
        owners = set()
        for pod in list(node.pods.values()):
            owner = store.workloads.get(pod.owner or "")
            if _not_ready_delay(pod, owner) != delay:
                continue  # tolerated for ever, or for another period (its own event)
            cluster.delete_pod(pod, now, "TaintManagerEviction")
            self.events.emit(
                now,
                "controller",
                "TaintManagerEviction",
                f"Pod/{pod.key}",
                f"Marking for deletion Pod {pod.key}",
                {"node": name},
            )
            if owner is not None:
                owners.add(owner.key)
        cluster.controllers.reconcile_keys(owners, now)

    def set_taints(self, name: str, taints: tuple[Taint, ...], now: float) -> None:
        """Replace a node's own taints (cordon-like taints from autoscalers)."""
        cluster = self.cluster
        node = self.store.nodes[name]
        node.view = replace(node.view, taints=taints)
        self.store.nodes_changed(views_only=True)
        lifecycle = () if node.ready else (NOT_READY_TAINT,)
        cluster.scheduler.snapshot.replace_node(node.slot, replace(node.view, taints=(*taints, *lifecycle)))
        cluster.scheduler.freed(now)
        # The DaemonSet controller's node update handler: a node that should now run a DaemonSet's pod
        # (a taint it does not tolerate removed) gets one; a pod already there is never deleted for a
        # NoSchedule taint (NodeShouldRunDaemonPod's shouldContinueRunning).
        for workload in self.store.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.reconcile_nodes(cluster, {name: node.view}, now, prune=False)
