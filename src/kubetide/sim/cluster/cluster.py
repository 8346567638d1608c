"""``SimCluster``: the simulated API server and controllers, on the engine's virtual clock.

It owns the objects (workloads, bare pods, PDBs, HPAs, ConfigMaps), the Nodes the cloud registers,
and every pod's lifecycle: created Pending, bound by the scheduler (or directly, for DaemonSet pods),
Running after its start-up delay, Ready after its readiness delay, Succeeded when a Job pod's run
time is over, deleted by its controller or by garbage collection when its Node goes; an evicted pod
stays Terminating on its node for its grace period first.
Scheduling runs as one batch per instant in which something changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from kubetide.model.hpa import HPA
from kubetide.model.node import NodeView
from kubetide.model.scheduling_terms import NodeSelectorTerm, Taint, Toleration
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.scheduling.predicates.node_ports import ports_conflict
from kubetide.scheduling.scheduler import Scheduler
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.sim.cluster.capacity import CAPACITY_KINDS, CapacityStore
from kubetide.sim.cluster.pdb import DisruptionBudget
from kubetide.sim.cluster.pods import ADDED, REMOVED, PodLog, SimPod
from kubetide.sim.cluster.templates import PodTemplate, parse_template
from kubetide.sim.cluster.workloads import (
    DaemonSetWorkload,
    JobWorkload,
    ReplicatedWorkload,
    Workload,
    build_workload,
)
from kubetide.sim.engine import Engine
from kubetide.sim.rng import RngFactory

NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
# What the node lifecycle controller evicts by: pods that do not tolerate it go after the
# DefaultTolerationSeconds admission plugin's 300 s (DaemonSet pods tolerate it for ever).
NOT_READY_NO_EXECUTE = Taint("node.kubernetes.io/not-ready", "", "NoExecute")
NOT_READY_EVICTION_DELAY = 300.0
DEFAULT_SCHEDULER = "default-scheduler"
DEFAULT_TERMINATION_GRACE_S = 30  # the API server's default terminationGracePeriodSeconds


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


_SCHEDULE_PRIORITY = 50  # after everything else that happens at the same instant


class EventSink(Protocol):
    def emit(
        self,
        t: float,
        source: str,
        reason: str,
        object: str,
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None: ...


@dataclass(eq=False)
class SimNode:
    view: NodeView  # as registered (no lifecycle taints)
    group: str
    instance: str
    registered_at: float
    slot: int
    ready: bool = False
    pods: dict[str, SimPod] = field(default_factory=dict)
    not_ready_since: float | None = None  # when a Ready node last turned NotReady


@dataclass
class PodStats:
    """Accounting for the summary: pending time integrated exactly over every change."""

    pending: int = 0
    max_pending: int = 0
    window_max_pending: int = 0  # the most pending since the last timeline row (see take_window_max)
    pending_seconds: float = 0.0
    last_change: float = 0.0
    time_to_schedule: list[float] = field(default_factory=list)

    def update(self, now: float, delta: int) -> None:
        self.pending_seconds += self.pending * (now - self.last_change)
        self.last_change = now
        self.pending += delta
        self.max_pending = max(self.max_pending, self.pending)
        self.window_max_pending = max(self.window_max_pending, self.pending)

    def take_window_max(self) -> int:
        """The most pods pending at once since the previous call (a timeline row stands for its step,
        so its peak is not lost between samples); the next window starts from what pends now."""
        peak = max(self.window_max_pending, self.pending)
        self.window_max_pending = self.pending
        return peak


class SimCluster:
    def __init__(self, engine: Engine, events: EventSink, rngs: RngFactory) -> None:
        self.engine = engine
        self.events = events
        self.rngs = rngs
        self.nodes: dict[str, SimNode] = {}
        self.pods: dict[str, SimPod] = {}  # every live pod by namespace/name
        self.workloads: dict[str, Workload] = {}
        self.hpas: dict[str, HPA] = {}
        self.pdbs: dict[str, DisruptionBudget] = {}
        self.config_maps: dict[str, dict[str, str]] = {}
        self.capacity = CapacityStore()  # CapacityBuffers, ProvisioningRequests, CapacityQuotas, PodTemplates
        self.snapshot = ClusterSnapshot()
        self.scheduler = Scheduler(seed=int(rngs.stream("scheduler").integers(0, 2**31)))
        self.stats = PodStats()
        self._pending: dict[str, SimPod] = {}
        # Pending pods with spec.nodeName whose Node does not exist (yet): the scheduler never sees
        # them; the kubelet of that node admits them when it registers. A subset of _pending.
        self._awaiting_node: dict[str, SimPod] = {}
        self._schedule_armed = False
        self._capacity_changed = True
        self._uid = 0
        self.listeners: list[Any] = []  # objects with workload_scaled(key, old, new, now)
        self._selector_index: dict[tuple[str, LabelSelector], Workload] = {}
        self._selector_index_size = -1
        self._selector_index_dirty = True
        self.nodes_version = 0  # bumped when a node is added, removed, or changes readiness
        self.node_views_version = 0  # and this one also when a node's taints change (the world's list)
        self._pod_logs: list[PodLog] = []  # shared with every pod (SimPod.logs): see watch_pods
        self._selector_memo: dict[int, tuple[LabelSelector, str, Workload | None]] = {}

    # --- objects ----------------------------------------------------------------------------------

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
                self._reconcile(owner, now)
        else:
            workload = build_workload(manifest, self.rngs.stream(f"workload/{key}"))
            assert workload is not None
            self.capacity.note_workload(key, manifest)
            old_workload = self.workloads.get(key)
            if old_workload is not None:
                if isinstance(old_workload, ReplicatedWorkload) and isinstance(workload, ReplicatedWorkload):
                    # A re-apply keeps the running pods (no rollout is simulated), updates replicas.
                    old_replicas = old_workload.replicas
                    old_workload.replicas = workload.replicas
                    old_workload.template = workload.template
                    self._selector_index_dirty = True  # its labels may now match another selector
                    self._reconcile(old_workload, now)
                    for listener in self.listeners:
                        listener.workload_scaled(key, old_replicas, workload.replicas, now)
                    return
                self.delete(key, now)
            self.workloads[key] = workload
            self._selector_index_dirty = True
            self._reconcile(workload, now)

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
                    self._reconcile(owner, now)
        else:
            workload = self.workloads.pop(key, None)
            self.capacity.note_workload(key, None)
            self._selector_index_dirty = True
            if workload is not None:
                for pod in list(workload.pods.values()):
                    self.delete_pod(pod, now, "OwnerDeleted")

    def scale(self, key: str, replicas: int, now: float) -> None:
        workload = self.workloads.get(key)
        if not isinstance(workload, ReplicatedWorkload):
            raise KeyError(f"{key} is not a scalable workload in the cluster")
        old = workload.replicas
        workload.replicas = replicas
        self._reconcile(workload, now)
        for listener in self.listeners:
            listener.workload_scaled(key, old, replicas, now)

    def _reconcile(self, workload: Workload, now: float) -> None:
        if isinstance(workload, DaemonSetWorkload):
            workload.reconcile_nodes(self, {n: s.view for n, s in self.nodes.items()}, now)
        else:
            workload.reconcile(self, now)

    # --- pods -------------------------------------------------------------------------------------

    def create_pod(
        self,
        owner: Workload,
        template: PodTemplate,
        name: str,
        now: float,
        node: str | None = None,
        ordinal: int = -1,
    ) -> SimPod | None:
        """A new pod of ``owner``; None when ``name`` is a StatefulSet pod's and another pod has it
        (the controller cannot create it until that pod is gone). Random names taken by another
        workload's pod (or a bare one) are drawn again."""
        while f"{owner.namespace}/{name}" in self.pods:
            if ordinal >= 0:
                return None
            name = owner.random_name(name.rsplit("-", 1)[0])
        self._uid += 1
        spec = template.stamp(name, owner.namespace, owner.owner_ref, f"uid-{self._uid}")
        if node is not None:
            # A DaemonSet pod made for ``node``: pinned there by required node affinity on
            # metadata.name, as the DaemonSet controller does, in case it has to wait for room.
            pin = NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", (node,)),))
            spec = spec.evolve(required_node_affinity=(pin,), node_name="")
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
        self._uid += 1
        spec = replace(template.view, name=meta["name"], uid=f"uid-{self._uid}")
        self._selector_index_dirty = True  # a bare pod may share a workload's selector
        pod = SimPod(spec, None, now, template.startup_delay, template.readiness_delay, template.run_for)
        self._add_pod(pod, now)

    def watch_pods(self) -> PodLog:
        """A log of every change to ``pods`` from now on, in order: (ADDED | CHANGED | REMOVED, pod).
        The watcher empties it as it reads it, so a reader of the pods can update what it built
        from them instead of going over all of them again."""
        log: PodLog = []
        self._pod_logs.append(log)
        return log

    def _removed(self, pod: SimPod) -> None:
        if self.pods.pop(pod.key, None) is not None:
            for log in self._pod_logs:
                log.append((REMOVED, pod))

    def _add_pod(self, pod: SimPod, now: float, node: str | None = None) -> None:
        self.pods[pod.key] = pod
        pod.logs = self._pod_logs
        for log in self._pod_logs:
            log.append((ADDED, pod))
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
                and self.snapshot.constrained_pods == 0
                and self._fits(pod, target)
            ):
                self.snapshot.add_pod(pod.spec, target.slot)
                self._bind(pod, node, now, emit=False)
                return
        elif pod.spec.node_name:
            # spec.nodeName: the scheduler is bypassed; that node's kubelet admits or rejects it.
            target = self.nodes.get(pod.spec.node_name)
            if target is not None:
                self._admit(pod, target, now)
                return
            self._pending[pod.key] = pod
            self._awaiting_node[pod.key] = pod
            self.stats.update(now, +1)
            return
        self._pending[pod.key] = pod
        self.stats.update(now, +1)
        self._kick(now)

    def _fits(self, pod: SimPod, node: SimNode) -> bool:
        """Whether ``pod``'s requests (and one more pod) fit in what ``node`` has left."""
        snap = self.snapshot
        vector = snap.vector(pod.spec.requests)
        return bool((snap.allocatable[node.slot] - snap.requested[node.slot] >= vector).all())

    def _admit(self, pod: SimPod, node: SimNode, now: float) -> None:
        """The kubelet's admission of a pod bound by spec.nodeName (its general predicates): it runs
        if the node matches its selection, has its host ports free and room for it; else it fails
        (``NodeAffinity``, ``NodePorts``, ``OutOfcpu``, ``OutOfmemory``, ``OutOfpods``...), never runs."""
        snap = self.snapshot
        used = [port for other in node.pods.values() for port in other.spec.host_ports]
        if not matches_node_selection(pod.spec, node.view.name, node.view.labels):
            reason, message = (
                "NodeAffinity",
                "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
            )
        elif ports_conflict(pod.spec.host_ports, used):
            reason = "NodePorts"
            message = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
        elif self._fits(pod, node):
            snap.add_pod(pod.spec, node.slot)
            self._bind(pod, node.view.name, now, emit=False)
            return
        else:
            short = snap.vector(pod.spec.requests) - (snap.allocatable[node.slot] - snap.requested[node.slot])
            resource = next(r for r, gap in zip(snap.resources, short.tolist(), strict=False) if gap > 0)
            reason, message = f"OutOf{resource}", f"Node didn't have enough resource: {resource}"
        if self._awaiting_node.pop(pod.key, None) is not None:
            del self._pending[pod.key]
            self.stats.update(now, -1)
        pod.phase = "Failed"
        pod.changed()
        self._removed(pod)
        self._name_freed(pod, now)
        self.events.emit(now, "kubelet", reason, f"Pod/{pod.key}", message, {"node": node.view.name})

    def delete_pod(self, pod: SimPod, now: float, reason: str) -> None:
        if pod.deleted:
            return
        pod.deleted = True
        pod.changed()
        self._removed(pod)
        if pod.owner is None:
            self._selector_index_dirty = True
        owner = self.workloads.get(pod.owner) if pod.owner else None
        if owner is not None and owner.pods.get(pod.name) is pod:  # a terminating pod may have left it
            del owner.pods[pod.name]
            owner.version += 1
        if pod.key in self._pending:
            del self._pending[pod.key]
            self._awaiting_node.pop(pod.key, None)
            self.stats.update(now, -1)
        if pod.node is not None and pod.node in self.nodes:
            node = self.nodes[pod.node]
            if node.pods.pop(pod.key, None) is not None and pod.phase not in ("Succeeded", "Failed"):
                self.snapshot.remove_pod(pod.spec, node.slot)
                self._capacity_changed = True
                self._kick(now)
        if pod.owner is None and reason != "Replaced":  # last: a new pod may take its name now
            self._name_freed(pod, now)

    def _bind(self, pod: SimPod, node_name: str, now: float, emit: bool = True) -> None:
        """Record a binding already reflected in the scheduling snapshot."""
        node = self.nodes[node_name]
        pod.node = node_name
        pod.bound_at = now
        pod.unschedulable = None
        pod.changed()
        node.pods[pod.key] = pod
        if pod.key in self._pending:
            del self._pending[pod.key]
            self._awaiting_node.pop(pod.key, None)
            self.stats.update(now, -1)
            self.stats.time_to_schedule.append(now - pod.created)
        self._touch(pod)
        if emit:
            self.events.emit(
                now,
                "scheduler",
                "Scheduled",
                f"Pod/{pod.key}",
                f"Successfully assigned {pod.key} to {node_name}",
                {"node": node_name},
            )
        self.engine.schedule_in(pod.startup_delay, partial(self._start, pod), name="pod-start")

    def _start(self, pod: SimPod, now: float) -> None:
        if pod.deleted or pod.terminating_until is not None or pod.node not in self.nodes:
            return
        pod.phase = "Running"
        pod.running_at = now
        pod.changed()
        self._touch(pod)
        self.engine.schedule_in(pod.readiness_delay, partial(self._ready, pod), name="pod-ready")
        if pod.run_for is not None:
            self.engine.schedule_in(pod.run_for, partial(self._succeed, pod), name="pod-done")
        self._reconcile_owner(pod, now)

    def _ready(self, pod: SimPod, now: float) -> None:
        if pod.deleted or pod.terminating_until is not None or pod.phase != "Running" or pod.ready:
            return
        node = self.nodes.get(pod.node or "")
        if node is None or not node.ready:
            return  # not while its Node is NotReady: the Node turning Ready makes it Ready
        pod.ready = True
        pod.ready_at = now
        pod.changed()
        self._touch(pod)
        self._reconcile_owner(pod, now)  # StatefulSets wait for Ready

    def _succeed(self, pod: SimPod, now: float) -> None:
        if pod.deleted or pod.terminating_until is not None or pod.phase != "Running":
            return
        pod.phase, pod.ready = "Succeeded", False
        pod.changed()
        node = self.nodes.get(pod.node or "")
        if node is not None and node.pods.pop(pod.key, None) is not None:
            self.snapshot.remove_pod(pod.spec, node.slot)
            self._capacity_changed = True
            self._kick(now)
        owner = self.workloads.get(pod.owner or "")
        self._removed(pod)
        if pod.owner is None:
            self._name_freed(pod, now)
        if isinstance(owner, JobWorkload):
            owner.pods.pop(pod.name, None)
            owner.version += 1
            owner.succeeded += 1
            owner.reconcile(self, now)

    def _name_freed(self, pod: SimPod, now: float) -> None:
        """A bare pod is gone: a StatefulSet of its namespace may have waited for its name."""
        for workload in list(self.workloads.values()):
            if (
                isinstance(workload, ReplicatedWorkload)
                and workload.kind == "StatefulSet"
                and workload.namespace == pod.spec.namespace
            ):
                workload.reconcile(self, now)

    def _touch(self, pod: SimPod) -> None:
        owner = self.workloads.get(pod.owner or "")
        if owner is not None:
            owner.version += 1

    def _reconcile_owner(self, pod: SimPod, now: float) -> None:
        owner = self.workloads.get(pod.owner or "")
        if isinstance(owner, ReplicatedWorkload) and owner.kind == "StatefulSet":
            owner.reconcile(self, now)

    def evict(self, pod: SimPod, now: float, grace_period_s: float | None = None) -> bool:
        """The eviction API: refused (False) when a PodDisruptionBudget allows no disruption (not asked
        for a pod already being deleted: the API server's ``canIgnorePDB``); else a graceful deletion
        (:meth:`terminate`) with the eviction's grace period."""
        if pod.terminating_until is None:
            for pdb in self.pdbs.values():
                if (
                    pdb.namespace == pod.spec.namespace
                    and pdb.selector.matches(pod.spec.labels)
                    and pdb.disruptions_allowed(self._pods_in(pdb.namespace)) <= 0
                ):
                    return False
        self.terminate(pod, now, grace_period_s, "Evicted")
        return True

    def terminate(self, pod: SimPod, now: float, grace_period_s: float | None, reason: str) -> None:
        """A graceful deletion, as the API server and the kubelet make it. The grace period is the
        request's (None: the pod's ``terminationGracePeriodSeconds``, 30 s unset); a pod not on a node,
        finished, or given 0 s goes at once. Otherwise it gets its deletion time and stays on its node,
        Terminating and holding its resources, until then (one event per pod); its controller stops
        counting it at once and replaces it (a StatefulSet once the name is free). A second deletion
        only ever shortens the grace period."""
        grace = grace_period_s
        if grace is None:
            own = pod.spec.termination_grace_s
            grace = DEFAULT_TERMINATION_GRACE_S if own is None else own
        owner = self.workloads.get(pod.owner) if pod.owner else None
        if pod.node is None or pod.phase in ("Succeeded", "Failed") or grace <= 0:
            self.delete_pod(pod, now, reason)
            if owner is not None:
                self._reconcile(owner, now)
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
            self._reconcile(owner, now)
        # A DaemonSet's terminating pod still counts as its node's (the controller's nodeToDaemonPods
        # keeps a pod being deleted until it is terminal): the pod is replaced once it is gone.
        self.engine.schedule_at(end, partial(self._terminated, pod, end), name="pod-terminated")

    def _terminated(self, pod: SimPod, end: float, now: float) -> None:
        """The kubelet has stopped the pod at the end of its grace period: it is gone."""
        if pod.deleted or pod.terminating_until != end:
            return  # gone already (its node went), or a later deletion shortened it
        self.delete_pod(pod, now, "Terminated")
        owner = self.workloads.get(pod.owner or "")
        if isinstance(owner, ReplicatedWorkload) and owner.kind == "StatefulSet":
            owner.reconcile(self, now)  # its name is free again
        elif isinstance(owner, DaemonSetWorkload) and pod.pinned in self.nodes:
            # Its node has no pod of the DaemonSet now: a new one if the node still should run it (a node
            # tainted ToBeDeletedByClusterAutoscaler:NoSchedule should not, unless the pod tolerates it).
            owner.reconcile_nodes(self, {pod.pinned: self.nodes[pod.pinned].view}, now, prune=False)

    def _pods_in(self, namespace: str) -> Iterator[SimPod]:
        return (p for p in self.pods.values() if p.spec.namespace == namespace)

    # --- nodes (the cloud's listener) -----------------------------------------------------------

    def register_node(self, t: float, node: NodeView, group: str, instance: str) -> None:
        """A Node object appears, NotReady (the kubelet's events are the cloud's to emit)."""
        view = replace(node, taints=(*node.taints, NOT_READY_TAINT))
        slot = self.snapshot.add_node(view)
        sim_node = self.nodes[node.name] = SimNode(node, group, instance, t, slot)
        self.nodes_version += 1
        self.node_views_version += 1
        for pod in [p for p in self._awaiting_node.values() if p.spec.node_name == node.name]:
            self._admit(pod, sim_node, t)
        for workload in self.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.reconcile_nodes(self, {node.name: node}, t, prune=False)

    def set_node_ready(self, t: float, name: str, ready: bool) -> None:
        node = self.nodes.get(name)
        if node is None or node.ready == ready:
            return
        node.ready = ready
        self.nodes_version += 1
        self.node_views_version += 1
        taints = node.view.taints if ready else (*node.view.taints, NOT_READY_TAINT)
        self.snapshot.replace_node(node.slot, replace(node.view, taints=taints))
        # The node lifecycle controller marks the pods of a NotReady Node not Ready (they serve no
        # traffic); they are Ready again once it is, if their own readiness delay is over.
        for pod in list(node.pods.values()):
            if pod.phase != "Running":
                continue
            if not ready and pod.ready:
                pod.ready, pod.ready_at = False, t  # ready_at: the Ready condition's last transition
                pod.changed()
                self._touch(pod)
            elif ready and pod.running_at is not None and pod.running_at + pod.readiness_delay <= t:
                self._ready(pod, t)
        if not ready:
            node.not_ready_since = t
            delays = {_not_ready_delay(p, self.workloads.get(p.owner or "")) for p in node.pods.values()}
            for delay in sorted(d for d in delays if d is not None):
                self.engine.schedule_at(
                    t + delay, partial(self._evict_not_ready, name, t, delay), name="taint-eviction"
                )
        if ready:
            self._capacity_changed = True
            self._kick(t)

    def _evict_not_ready(self, name: str, since: float, delay: float, now: float) -> None:
        """Taint-based eviction: the pods of a node NotReady for their whole toleration period go
        (``tolerationSeconds`` of their tolerations of ``node.kubernetes.io/not-ready:NoExecute``, 300 s
        by default), and their controllers replace them elsewhere."""
        node = self.nodes.get(name)
        if node is None or node.ready or node.not_ready_since != since:
            return  # gone, or Ready again in between
        owners = set()
        for pod in list(node.pods.values()):
            owner = self.workloads.get(pod.owner or "")
            if _not_ready_delay(pod, owner) != delay:
                continue  # tolerated for ever, or for another period (its own event)
            self.delete_pod(pod, now, "TaintManagerEviction")
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
        for key in sorted(owners):
            workload = self.workloads.get(key)
            if workload is not None:
                self._reconcile(workload, now)

    def node_deleted(self, t: float, name: str) -> None:
        """The Node object is gone: its pods are garbage-collected and their owners replace them."""
        node = self.nodes.get(name)
        if node is None:
            return
        owners = set()
        for pod in list(node.pods.values()):
            self.delete_pod(pod, t, "NodeDeleted")
            if pod.owner:
                owners.add(pod.owner)
        self.snapshot.remove_node(node.slot)
        del self.nodes[name]
        self.nodes_version += 1
        self.node_views_version += 1
        for key in sorted(owners):
            workload = self.workloads.get(key)
            if workload is not None and not isinstance(workload, DaemonSetWorkload):
                self._reconcile(workload, t)
        for workload in self.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.prune(self, self.nodes, t)  # pods still waiting for room on the gone node

    def set_node_taints(self, name: str, taints: tuple[Taint, ...], now: float) -> None:
        """Replace a node's own taints (cordon-like taints from autoscalers)."""
        node = self.nodes[name]
        node.view = replace(node.view, taints=taints)
        self.node_views_version += 1
        lifecycle = () if node.ready else (NOT_READY_TAINT,)
        self.snapshot.replace_node(node.slot, replace(node.view, taints=(*taints, *lifecycle)))
        self._capacity_changed = True
        self._kick(now)
        # The DaemonSet controller's node update handler: a node that should now run a DaemonSet's pod
        # (a taint it does not tolerate removed) gets one; a pod already there is never deleted for a
        # NoSchedule taint (NodeShouldRunDaemonPod's shouldContinueRunning).
        for workload in self.workloads.values():
            if isinstance(workload, DaemonSetWorkload):
                workload.reconcile_nodes(self, {name: node.view}, now, prune=False)

    # --- scheduling -------------------------------------------------------------------------------

    def _kick(self, now: float) -> None:
        if not self._schedule_armed:
            self._schedule_armed = True
            self.engine.schedule_at(now, self._schedule, priority=_SCHEDULE_PRIORITY, name="schedule")

    def _schedule(self, now: float) -> None:
        self._schedule_armed = False
        if not self._pending:
            return
        if self._capacity_changed:
            candidates = list(self._pending.values())
        else:  # nothing freed up: only pods not tried yet can succeed
            candidates = [p for p in self._pending.values() if p.unschedulable is None]
        if self._awaiting_node:  # spec.nodeName pods are the kubelet's, never the scheduler's
            candidates = [p for p in candidates if p.key not in self._awaiting_node]
        # A pod for another scheduler (spec.schedulerName) is that scheduler's: it stays Pending, with
        # no Unschedulable condition, as the simulated cluster runs only kube-scheduler.
        candidates = [p for p in candidates if p.spec.scheduler_name == DEFAULT_SCHEDULER]
        self._capacity_changed = False
        if not candidates:
            return
        by_spec = {id(p.spec): p for p in candidates}
        result = self.scheduler.schedule(self.snapshot, [p.spec for p in candidates])
        for placement in result.placements:
            self._bind(by_spec[id(placement.pod)], placement.node, now)
        for failure in result.unschedulable:
            pod = by_spec[id(failure.pod)]
            if pod.unschedulable != failure.message:
                pod.unschedulable = failure.message
                pod.changed()
                self.events.emit(now, "scheduler", "FailedScheduling", f"Pod/{pod.key}", failure.message, {})
        if result.placements and any(
            p.spec.pod_affinity or p.spec.topology_spread for p in self._pending.values()
        ):
            # Pods bound now may be what a pending pod's required affinity (or spread) waits for:
            # kube-scheduler requeues such pods on a pod add event, so try them all again now.
            self._capacity_changed = True
            self._kick(now)

    # --- queries ------------------------------------------------------------------------------

    @property
    def pending_pods(self) -> Mapping[str, SimPod]:
        return self._pending

    def workload(self, key: str) -> Workload | None:
        return self.workloads.get(key)

    def workload_for_selector(self, namespace: str, selector: LabelSelector) -> Workload | None:
        """The workload in ``namespace`` whose selector is exactly ``selector`` (what an HPA's scale
        target reports) *and whose pods are the only ones it matches*, so its pod list is the
        selector's answer; None when pods of another workload or bare pods match too (the HPA then
        counts them all, as upstream's lister does). Rebuilt when workloads or bare pods change."""
        if self._selector_index_size != len(self.workloads) or self._selector_index_dirty:
            self._selector_index = self._exclusive_selectors()
            self._selector_index_size = len(self.workloads)
            self._selector_index_dirty = False
            self._selector_memo = {}
        # By the selector object's identity (HPAs pass the same one every sync): equal selectors that
        # are distinct objects compare field by field, which costs more than the rest of the lookup.
        memo = self._selector_memo.get(id(selector))
        if memo is not None and memo[0] is selector and memo[1] == namespace:
            return memo[2]
        found = self._selector_index.get((namespace, selector))
        self._selector_memo[id(selector)] = (selector, namespace, found)
        return found

    def _exclusive_selectors(self) -> dict[tuple[str, LabelSelector], Workload]:
        bare = [p.spec for p in self.pods.values() if p.owner is None]
        out: dict[tuple[str, LabelSelector], Workload] = {}
        for w in self.workloads.values():
            shared = any(
                other is not w
                and other.namespace == w.namespace
                and w.selector.matches(other.template.view.labels)
                for other in self.workloads.values()
            ) or any(p.namespace == w.namespace and w.selector.matches(p.labels) for p in bare)
            if not shared:
                out[(w.namespace, w.selector)] = w
        return out

    def finish(self, now: float) -> None:
        """Close the pending-time integral at the end of the run."""
        self.stats.update(now, 0)
