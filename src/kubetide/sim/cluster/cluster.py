"""``SimCluster``: the simulated cluster, on the virtual clock: the API server's writes (apply, delete,
scale, the eviction API) and the roles that act on its objects.

Each role is a module of its own, all sharing one :class:`~kubetide.sim.cluster.store.ObjectStore`:
the kubelets (:mod:`.kubelet`: pods started, Ready, finished, stopped after their grace period), the
node lifecycle controller (:mod:`.node_lifecycle`: Nodes registered, Ready or not, tainted), the
scheduler (:mod:`.scheduler_loop`: one batch per instant in which something changed), the pod garbage
collector (:mod:`.pod_gc`: the pods of a deleted Node) and the workload controllers
(:mod:`.workloads`, triggered as :mod:`.controllers` says). A pod is created Pending, bound by the
scheduler (or directly, for DaemonSet pods and ``spec.nodeName``), Running after its start-up delay,
Ready after its readiness delay, Succeeded when a Job pod's run time is over, deleted by its
controller or by garbage collection when its Node goes; an evicted pod stays Terminating on its node
for its grace period first. This class is what the rest of the simulator calls: the cloud registers
and removes Nodes through it, the autoscalers' ports read and write through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kubetide.clock import VirtualClock
from kubetide.model.hpa import HPA
from kubetide.model.node import NodeView
from kubetide.model.scheduling_terms import NodeSelectorTerm, Taint
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.sim.cluster.capacity import CAPACITY_KINDS, CapacityStore
from kubetide.sim.cluster.controllers import Controllers
from kubetide.sim.cluster.kubelet import Kubelet
from kubetide.sim.cluster.node_lifecycle import NodeLifecycle
from kubetide.sim.cluster.pdb import DisruptionBudget
from kubetide.sim.cluster.pod_gc import PodGarbageCollector
from kubetide.sim.cluster.pods import PodLog, SimPod
from kubetide.sim.cluster.scheduler_loop import SchedulerLoop
from kubetide.sim.cluster.store import EventSink, ObjectStore, PodStats, SimNode
from kubetide.sim.cluster.templates import PodTemplate, parse_template
from kubetide.sim.cluster.workloads import ReplicatedWorkload, Workload, build_workload
from kubetide.sim.rng import RngFactory

__all__ = ["SimCluster"]


class SimCluster:
    def __init__(self, engine: VirtualClock, events: EventSink, rngs: RngFactory) -> None:
        self.engine = engine
        self.events = events
        self.rngs = rngs
        self.store = store = ObjectStore()
        # The store's collections, read by the ports and the simulation (the same objects).
        self.nodes: dict[str, SimNode] = store.nodes
        self.pods: dict[str, SimPod] = store.pods  # every live pod by namespace/name
        self.workloads: dict[str, Workload] = store.workloads
        self.hpas: dict[str, HPA] = store.hpas
        self.pdbs: dict[str, DisruptionBudget] = store.pdbs
        self.config_maps: dict[str, dict[str, str]] = store.config_maps
        # CapacityBuffers, ProvisioningRequests, CapacityQuotas and PodTemplates.
        self.capacity: CapacityStore = store.capacity
        self.stats: PodStats = store.stats
        self.kubelet = Kubelet(self)
        self.scheduler = SchedulerLoop(self, seed=int(rngs.stream("scheduler").integers(0, 2**31)))
        self.snapshot: ClusterSnapshot = self.scheduler.snapshot
        self.node_lifecycle = NodeLifecycle(self)
        self.pod_gc = PodGarbageCollector(self)
        self.controllers = Controllers(self)
        self.listeners: list[Any] = []  # objects with workload_scaled(key, old, new, now)

    @property
    def nodes_version(self) -> int:
        """Bumped when a node is added, removed, or changes readiness."""
        return self.store.nodes_version

    @property
    def node_views_version(self) -> int:
        """Bumped also when a node's taints change (the world's node list)."""
        return self.store.node_views_version

    # --- objects (the API server's writes) ---------------------------------------------------------

    def apply(self, manifest: Mapping[str, Any], now: float) -> None:
        """Create or replace an object (``kubectl apply``)."""
        kind = manifest["kind"]
        meta = manifest.get("metadata") or {}
        key = f"{kind}/{meta.get('namespace') or 'default'}/{meta['name']}"
        if kind == "HorizontalPodAutoscaler":
            hpa = HPA.from_manifest(manifest)
            old = self.hpas.get(key)
            self.hpas[key] = hpa if old is None else hpa.with_status(old.status)
        elif kind == "PodDisruptionBudget":
            self.pdbs[key] = DisruptionBudget.from_manifest(manifest)
        elif kind == "ConfigMap":
            self.config_maps[key] = {str(k): str(v) for k, v in (manifest.get("data") or {}).items()}
        elif kind in CAPACITY_KINDS:
            self.capacity.apply(manifest, now)
        elif kind == "Pod":
            old_pod = self.pods.get(key.split("/", 1)[1])
            if old_pod is not None:
                # A Pod's spec is immutable: "replace" is delete and create, as `kubectl replace --force`.
                self.delete_pod(old_pod, now, "Replaced")
            self._create_bare_pod(manifest, now)
            owner = self.workloads.get(old_pod.owner or "") if old_pod is not None else None
            if owner is not None:  # it replaced a controller's pod: the controller makes another
                self.controllers.reconcile(owner, now)
        else:
            workload = build_workload(manifest, self.rngs.stream(f"workload/{key}"))
            assert workload is not None
            self.capacity.note_workload(key, manifest)
            old_workload = self.workloads.get(key)
            if old_workload is not None:
                if isinstance(old_workload, ReplicatedWorkload) and isinstance(workload, ReplicatedWorkload):
                    # A re-apply keeps the running pods (no rollout is simulated), updates replicas;
                    # one without spec.replicas keeps them, as the API server does for a workload an
                    # HPA scales (whose manifests leave replicas out).
                    old_replicas = old_workload.replicas
                    if "replicas" in (manifest.get("spec") or {}):
                        old_workload.replicas = workload.replicas
                    old_workload.template = workload.template
                    old_workload.placement = workload.placement  # for the pods it makes from now
                    self.store.selectors_dirty = True  # its labels may now match another selector
                    self.controllers.reconcile(old_workload, now)
                    for listener in self.listeners:
                        listener.workload_scaled(key, old_replicas, old_workload.replicas, now)
                    return
                self.delete(key, now)
            self.workloads[key] = workload
            self.store.selectors_dirty = True
            self.controllers.reconcile(workload, now)

    def delete(self, key: str, now: float) -> None:
        kind = key.split("/", 1)[0]
        if kind == "HorizontalPodAutoscaler":
            self.hpas.pop(key, None)
        elif kind == "PodDisruptionBudget":
            self.pdbs.pop(key, None)
        elif kind == "ConfigMap":
            self.config_maps.pop(key, None)
        elif kind in CAPACITY_KINDS:
            self.capacity.delete(key)
        elif kind == "Pod":
            pod = self.pods.get(key.split("/", 1)[1])
            if pod is not None:
                self.delete_pod(pod, now, "Deleted")
                owner = self.workloads.get(pod.owner or "")
                if owner is not None:  # `kubectl delete pod` of a controller's pod: it makes another
                    self.controllers.reconcile(owner, now)
        else:
            workload = self.workloads.pop(key, None)
            self.capacity.note_workload(key, None)
            self.store.selectors_dirty = True
            if workload is not None:
                for pod in list(workload.pods.values()):
                    self.delete_pod(pod, now, "OwnerDeleted")

    def scale(self, key: str, replicas: int, now: float) -> None:
        workload = self.workloads.get(key)
        if not isinstance(workload, ReplicatedWorkload):
            raise KeyError(f"{key} is not a scalable workload in the cluster")
        old = workload.replicas
        workload.replicas = replicas
        self.controllers.reconcile(workload, now)
        for listener in self.listeners:
            listener.workload_scaled(key, old, replicas, now)

    # --- pods -------------------------------------------------------------------------------------

    def create_pod(
        self,
        owner: Workload,
        template: PodTemplate,
        name: str,
        now: float,
        node: str | None = None,
        ordinal: int = -1,
        bound: str | None = None,
    ) -> SimPod | None:
        """A new pod of ``owner``; None when ``name`` is a StatefulSet pod's and another pod has it
        (the controller cannot create it until that pod is gone). Random names taken by another
        workload's pod (or a bare one) are drawn again. ``node``: a DaemonSet pod's node (pinned);
        ``bound``: the node a recorded placement binds it to (``spec.nodeName``, as a bare pod)."""
        while f"{owner.namespace}/{name}" in self.pods:
            if ordinal >= 0:
                return None
            name = owner.random_name(name.rsplit("-", 1)[0])
        spec = template.stamp(name, owner.namespace, owner.owner_ref, self.store.next_uid())
        if node is not None:
            # A DaemonSet pod made for ``node``: pinned there by required node affinity on
            # metadata.name, as the DaemonSet controller does, in case it has to wait for room.
            pin = NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", (node,)),))
            spec = spec.evolve(required_node_affinity=(pin,), node_name="")
        elif bound is not None:
            spec = spec.evolve(node_name=bound)
        pod = SimPod(
            spec,
            owner.key,
            now,
            template.startup_delay,
            template.readiness_delay,
            template.run_for,
            ordinal=ordinal,
            pinned=node,
        )
        owner.pods[name] = pod
        owner.version += 1
        self._add_pod(pod, now, node)
        return pod

    def _create_bare_pod(self, manifest: Mapping[str, Any], now: float) -> None:
        meta = manifest.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        template = parse_template(manifest, namespace, "pod")
        spec = replace(template.view, name=meta["name"], uid=self.store.next_uid())
        self.store.selectors_dirty = True  # a bare pod may share a workload's selector
        pod = SimPod(spec, None, now, template.startup_delay, template.readiness_delay, template.run_for)
        self._add_pod(pod, now)

    def _add_pod(self, pod: SimPod, now: float, node: str | None = None) -> None:
        """A pod created: stored, then bound at once (a DaemonSet pod with room on its node), handed to
        its node's kubelet (``spec.nodeName``) or left pending for the scheduler."""
        store, scheduler = self.store, self.scheduler
        store.add_pod(pod)
        if node is not None:
            # A DaemonSet pod: bound at once when its node has room and no inter-pod rule (host
            # ports, pod (anti-)affinity, spread; its own or a bound pod's) is involved, without the
            # scheduler; else it waits, pending, for the scheduler to place it there (pinned).
            target = self.nodes.get(node)
            spec = pod.spec
            unconstrained = not (
                spec.host_ports or spec.pod_affinity or spec.pod_anti_affinity or spec.topology_spread
            )
            if (
                target is not None
                and unconstrained
                and scheduler.snapshot.constrained_pods == 0
                and scheduler.fits(pod, target)
            ):
                scheduler.snapshot.add_pod(pod.spec, target.slot)
                scheduler.bind(pod, node, now, emit=False)
                return
        elif pod.spec.node_name:
            # spec.nodeName: the scheduler is bypassed; that node's kubelet admits or rejects it.
            target = self.nodes.get(pod.spec.node_name)
            if target is not None:
                self.kubelet.admit(pod, target, now)
                return
            store.add_pending(pod, now)
            store.awaiting_node[pod.key] = pod
            return
        store.add_pending(pod, now)
        scheduler.kick(now)

    def delete_pod(self, pod: SimPod, now: float, reason: str) -> None:
        """A pod deleted at once: gone from the store, its controller's count, the pending pods and its
        node (its resources freed for the scheduler); a StatefulSet may now take its name."""
        if pod.deleted:
            return
        store = self.store
        pod.deleted = True
        pod.changed()
        store.remove_pod(pod)
        if pod.owner is None:
            store.selectors_dirty = True
        owner = self.workloads.get(pod.owner) if pod.owner else None
        if owner is not None and owner.pods.get(pod.name) is pod:  # a terminating pod may have left it
            del owner.pods[pod.name]
            owner.version += 1
        store.drop_pending(pod, now)
        if pod.node is not None and pod.node in self.nodes:
            node = self.nodes[pod.node]
            if node.pods.pop(pod.key, None) is not None and pod.phase not in ("Succeeded", "Failed"):
                self.scheduler.snapshot.remove_pod(pod.spec, node.slot)
                self.scheduler.freed(now)
        if pod.owner is None and reason != "Replaced":  # last: a new pod may take its name now
            self.controllers.name_freed(pod, now)

    def evict(self, pod: SimPod, now: float, grace_period_s: float | None = None) -> bool:
        """The eviction API: refused (False) when a PodDisruptionBudget allows no disruption (not asked
        for a pod already being deleted: the API server's ``canIgnorePDB``); else a graceful deletion
        (:meth:`terminate`) with the eviction's grace period."""
        if pod.terminating_until is None:
            for pdb in self.pdbs.values():
                if (
                    pdb.namespace == pod.spec.namespace
                    and pdb.selector.matches(pod.spec.labels)
                    and pdb.disruptions_allowed(self.store.pods_in(pdb.namespace)) <= 0
                ):
                    return False
        self.terminate(pod, now, grace_period_s, "Evicted")
        return True

    def terminate(self, pod: SimPod, now: float, grace_period_s: float | None, reason: str) -> None:
        """A graceful deletion (:meth:`Kubelet.terminate <kubetide.sim.cluster.kubelet.Kubelet.terminate>`)."""
        self.kubelet.terminate(pod, now, grace_period_s, reason)

    # --- nodes (the cloud's listener) -----------------------------------------------------------

    def register_node(self, t: float, node: NodeView, group: str, instance: str) -> None:
        self.node_lifecycle.register(t, node, group, instance)

    def set_node_ready(self, t: float, name: str, ready: bool) -> None:
        self.node_lifecycle.set_ready(t, name, ready)

    def set_node_taints(self, name: str, taints: tuple[Taint, ...], now: float) -> None:
        self.node_lifecycle.set_taints(name, taints, now)

    def node_deleted(self, t: float, name: str) -> None:
        self.pod_gc.node_deleted(t, name)

    # --- queries ------------------------------------------------------------------------------

    def watch_pods(self) -> PodLog:
        return self.store.watch_pods()

    @property
    def pending_pods(self) -> Mapping[str, SimPod]:
        return self.store.pending

    def workload(self, key: str) -> Workload | None:
        return self.workloads.get(key)

    def workload_for_selector(self, namespace: str, selector: LabelSelector) -> Workload | None:
        return self.store.workload_for_selector(namespace, selector)

    def finish(self, now: float) -> None:
        """Close the pending-time integral at the end of the run."""
        self.stats.update(now, 0)
