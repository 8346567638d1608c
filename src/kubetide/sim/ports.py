"""The autoscalers' view of the simulated API server: the world they read and the port they write through.

:class:`SimWorldSource` shows the cluster as an autoscaler's listers would: Nodes with the node
lifecycle controller's ``not-ready`` taint while NotReady; every live pod (a Deployment's pods are
shown owned by a ReplicaSet, as in a real cluster, so CA's drain rules see a replicated pod); PDBs with
their current ``disruptionsAllowed``; ConfigMaps (the priority expander's); and the controllers'
replicas (a Deployment's under its ReplicaSet's name, StatefulSets, Jobs by parallelism, DaemonSets by
their pods). It is CA's ``WorldSource`` (``world()``) and the batch autoscaler's
``EscalatorWorldSource`` (``nodes()``, ``pods()``).

:class:`SimClusterPort` is :class:`~kubetide.model.api.ClusterPort` over :class:`SimCluster`: taints,
cordons, annotations, Node deletion, the Eviction API (honouring PDBs; an evicted pod terminates for
its grace period) and events under the caller's source. The ``not-ready`` taint stays the cluster's.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, overload

from kubetide.cluster.capacity.objects import CapacityObjects, CapacityWrite
from kubetide.cluster.loop.world import World
from kubetide.model.api import EvictionOutcome, NotFoundError, PortCapabilities
from kubetide.model.node import NodeView
from kubetide.model.pod import OwnerRef, Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import PDB
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.node_lifecycle import NOT_READY_TAINT
from kubetide.sim.cluster.pods import ADDED, REMOVED, PodLog, SimPod
from kubetide.sim.cluster.store import EventSink, SimNode
from kubetide.sim.cluster.workloads import DaemonSetWorkload, JobWorkload, ReplicatedWorkload

__all__ = ["SimClusterPort", "SimWorldSource"]

CA_SOURCE = "cluster-autoscaler"


class SimClusterPort:
    """An autoscaler's writes to the simulated API server, at the engine's current time. Never raises
    ApiError (the simulated API server is always up); NotFoundError for a node that is gone. Events go
    to the log under ``source`` (CA's by default; the batch autoscaler passes its own)."""

    def __init__(self, cluster: SimCluster, events: EventSink, source: str = CA_SOURCE) -> None:
        self.cluster = cluster
        self.events = events
        self.source = source

    def _node(self, name: str) -> SimNode:
        node = self.cluster.nodes.get(name)
        if node is None:
            raise NotFoundError(f'nodes "{name}" not found')
        return node

    def _write(self, name: str, view: NodeView) -> None:
        # The node's own view never holds the lifecycle taint: that one is the cluster's to set.
        node = self._node(name)
        node.view = view
        own = tuple(t for t in view.taints if t != NOT_READY_TAINT)
        self.cluster.set_node_taints(name, own, self.cluster.engine.now)

    def add_node_taint(self, node: str, taint: Taint) -> None:
        view = self._node(node).view
        kept = tuple(t for t in view.taints if (t.key, t.effect) != (taint.key, taint.effect))
        self._write(node, replace(view, taints=(*kept, taint)))

    def remove_node_taint(self, node: str, key: str) -> None:
        view = self._node(node).view
        self._write(node, replace(view, taints=tuple(t for t in view.taints if t.key != key)))

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        self._write(node, replace(self._node(node).view, unschedulable=unschedulable))

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        view = self._node(node).view
        merged = {k: v for k, v in {**view.annotations, **annotations}.items() if v is not None}
        self._write(node, replace(view, annotations=merged))

    def delete_node(self, node: str) -> None:
        if node in self.cluster.nodes:
            self.cluster.node_deleted(self.cluster.engine.now, node)

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        sim_pod = self.cluster.pods.get(f"{pod.namespace}/{pod.name}")
        if sim_pod is None or sim_pod.deleted:
            return EvictionOutcome.GONE
        if self.cluster.evict(sim_pod, self.cluster.engine.now, grace_period_s):
            return EvictionOutcome.EVICTED
        return EvictionOutcome.REFUSED

    def write_capacity(self, write: CapacityWrite) -> None:
        """A capacity API write (``CapacityPort``): a status, a managed PodTemplate, a deletion."""
        self.cluster.capacity.write(write, self.cluster.engine.now)

    def capabilities(self) -> PortCapabilities:
        """Both: the autoscalers' own ConfigMaps, kept by the cluster across restarts, and events with
        their data (``events.jsonl``)."""
        return PortCapabilities(config_maps=self, event_data=self)

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        """The autoscaler's own state ConfigMap: kept by the cluster across restarts."""
        self.cluster.config_maps[f"ConfigMap/{namespace}/{name}"] = dict(data)

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.emit_event_with_data(type_, reason, obj, message, {})

    def emit_event_with_data(
        self, type_: str, reason: str, obj: str, message: str, data: Mapping[str, Any]
    ) -> None:
        self.events.emit(self.cluster.engine.now, self.source, reason, obj, message, dict(data))


class SimWorldSource:
    """The world as the simulated API server shows it; views are cached while their objects do not
    change, so a loop on a large cluster does not rebuild every pod. ``nodes()`` and ``pods()`` make it
    the batch autoscaler's world port too (:class:`~kubetide.escalator.world.EscalatorWorldSource`)."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self._node_views: dict[str, tuple[NodeView, bool, NodeView]] = {}
        self._nodes_shown: list[NodeView] = []  # the last list, while the cluster's nodes are unchanged
        self._nodes_version = -1
        self._pod_views: dict[str, tuple[Pod, Pod]] = {}  # key -> (the pod's view, as shown)
        self._log: PodLog | None = None  # the cluster's pod changes since the last read
        self._shown: dict[str, Pod] = {}  # key -> as shown, in the cluster's order
        self._index = _PodIndex()
        self._handed: weakref.ref[_ShownPods] | None = None  # the pods of the last world handed out

    def _nodes(self) -> list[NodeView]:
        version = self.cluster.node_views_version
        if version == self._nodes_version:  # no node added, removed, made (not) ready or tainted
            return list(self._nodes_shown)
        out = []
        for name, node in self.cluster.nodes.items():
            cached = self._node_views.get(name)
            if cached is not None and cached[0] is node.view and cached[1] == node.ready:
                out.append(cached[2])
                continue
            view = node.view
            view = replace(
                view, ready=node.ready, taints=view.taints if node.ready else (*view.taints, NOT_READY_TAINT)
            )
            self._node_views[name] = (node.view, node.ready, view)
            out.append(view)
        if len(self._node_views) > 2 * len(self.cluster.nodes) + 16:
            self._node_views = {k: v for k, v in self._node_views.items() if k in self.cluster.nodes}
        self._nodes_shown, self._nodes_version = out, version
        return list(out)

    def _pods(self) -> list[Pod]:
        """Every live pod, in the cluster's order."""
        self._update_shown()
        return list(self._shown.values())

    def _update_shown(self) -> None:
        """The shown pods, built once, then updated from the cluster's change log: a loop reads
        30,000 pods of which a few dozen changed since the last one."""
        pods = self.cluster.pods
        index = self._index
        if self._log is None:
            self._log = self.cluster.watch_pods()
            self._shown = {
                key: self._show(key, sim_pod) for key, sim_pod in pods.items() if not sim_pod.deleted
            }
            for key, pod in self._shown.items():
                index.put(key, pod)
            return
        events = list(self._log)
        self._log.clear()
        if not events:
            return
        handed = self._handed() if self._handed is not None else None
        if handed is not None:
            handed.freeze()  # a world still held shows the pods as they were when it was read
        self._handed = None
        shown, stale = self._shown, set()
        for kind, sim_pod in events:
            key = sim_pod.key
            if kind == REMOVED:  # an ADDED of the key after this puts it back, at the end
                shown.pop(key, None)
                index.drop(key)
                self._pod_views.pop(key, None)
                stale.discard(key)
            elif pods.get(key) is sim_pod:
                if kind == ADDED and key not in shown:
                    shown[key] = sim_pod.spec  # holds its place (the end, as in the cluster's dict)
                    index.place(key)
                stale.add(key)
        for key in stale:
            sim_pod = pods[key]
            if sim_pod.deleted:
                shown.pop(key, None)
                index.drop(key)
            else:
                shown[key] = self._show(key, sim_pod)
                index.put(key, shown[key])

    def _show(self, key: str, sim_pod: SimPod) -> Pod:
        """The pod as CA's listers show it: a Deployment's pods owned by its ReplicaSet."""
        view = sim_pod.view()
        cached = self._pod_views.get(key)
        if cached is not None and cached[0] is view:
            return cached[1]
        shown = view
        if any(o.kind == "Deployment" for o in view.owners):
            shown = view.evolve(
                owners=tuple(
                    OwnerRef("ReplicaSet", o.name, o.uid, o.controller) if o.kind == "Deployment" else o
                    for o in view.owners
                )
            )
        self._pod_views[key] = (view, shown)
        return shown

    def nodes(self) -> list[NodeView]:
        return self._nodes()

    def pods(self) -> list[Pod]:
        return self._pods()

    def _pdbs(self) -> list[PDB]:
        out = []
        for pdb in self.cluster.pdbs.values():
            pods = (p for p in self.cluster.pods.values() if p.spec.namespace == pdb.namespace)
            out.append(PDB(pdb.namespace, pdb.selector, pdb.disruptions_allowed(pods)))
        return out

    def _controllers(self) -> dict[tuple[str, str, str], int]:
        """Replicas by (kind, namespace, name) as CA's listers see them: a Deployment's pods are owned
        by its ReplicaSet (shown under the Deployment's name, as the pods are), which has its replicas."""
        out: dict[tuple[str, str, str], int] = {}
        for w in self.cluster.workloads.values():
            if isinstance(w, ReplicatedWorkload):
                kind = "ReplicaSet" if w.kind == "Deployment" else w.kind
                out[(kind, w.namespace, w.name)] = w.replicas
            elif isinstance(w, JobWorkload):
                out[("Job", w.namespace, w.name)] = w.parallelism
            elif isinstance(w, DaemonSetWorkload):
                out[("DaemonSet", w.namespace, w.name)] = len(w.pods)
        return out

    def world(self) -> World:
        config_maps = {key.split("/", 1)[1]: data for key, data in self.cluster.config_maps.items()}
        self._update_shown()
        # Worlds read while the shown pods are the same share one sequence: the source need then
        # make a list before changing what it shows for only one world still held.
        pods = self._handed() if self._handed is not None else None
        if pods is None:
            pods = _ShownPods(self._shown)
            self._handed = weakref.ref(pods)
        by_node, unbound = self._index.read()
        return World(
            self._nodes(),
            pods,
            self._pdbs(),
            config_maps,
            self._controllers(),
            self._daemonsets(),
            pods_by_node=by_node,
            unbound_pods=unbound,
            capacity=self._capacity(),
        )

    def _capacity(self) -> CapacityObjects | None:
        """The capacity APIs' objects (None while the scenario has none: the world CA 1.31 reads)."""
        store, workloads = self.cluster.capacity, self.cluster.workloads
        if not store:
            return None
        version = hash(tuple((k, getattr(w, "replicas", 0), len(w.pods)) for k, w in workloads.items()))
        return store.objects(version, lambda: store.scalables(workloads))

    def _daemonsets(self) -> list[Pod]:
        """One pod per DaemonSet from its template, as CA's DaemonSet lister provides it."""
        return [
            w.template.stamp(f"{w.name}-template", w.namespace, w.owner_ref, f"uid-{w.key}-template")
            for w in self.cluster.workloads.values()
            if isinstance(w, DaemonSetWorkload)
        ]


class _ShownPods(Sequence[Pod]):
    """A world's pods: the shown pods made into a list when first read (a cluster autoscaler loop
    reads them through the indexes only, so most worlds never copy 30,000 pods), or before the source
    changes what it shows, whichever comes first."""

    __slots__ = ("__weakref__", "_list", "_shown")

    def __init__(self, shown: dict[str, Pod]) -> None:
        self._shown = shown
        self._list: list[Pod] | None = None

    def freeze(self) -> list[Pod]:
        if self._list is None:
            self._list = list(self._shown.values())
        return self._list

    def __len__(self) -> int:
        return len(self.freeze())

    @overload
    def __getitem__(self, i: int) -> Pod: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Pod]: ...

    def __getitem__(self, i: int | slice) -> Pod | Sequence[Pod]:
        return self.freeze()[i]

    def __iter__(self) -> Iterator[Pod]:
        return iter(self.freeze())


class _PodIndex:
    """The shown pods by node (but Succeeded and Failed ones) and the unbound ones, each in the shown
    order, kept up to date one pod at a time (:class:`World`'s optional indexes). A node's tuple is
    rebuilt only when one of its pods changed, so an unchanged node keeps the very same tuple."""

    def __init__(self) -> None:
        self._order: dict[str, int] = {}  # key -> place in the shown order
        self._next = 0
        self._where: dict[str, str] = {}  # key -> the bucket holding it ("" for unbound)
        self._buckets: dict[str, dict[str, Pod]] = {}
        self._dirty: set[str] = set()
        self._by_node: dict[str, tuple[Pod, ...]] = {}
        self._unbound: tuple[Pod, ...] = ()

    def place(self, key: str) -> None:
        """``key`` was added at the end of the shown order."""
        self._order[key] = self._next
        self._next += 1

    def put(self, key: str, pod: Pod) -> None:
        """``key`` is shown as ``pod`` (new or changed)."""
        if key not in self._order:
            self.place(key)
        self._take(key)
        if pod.node_name and pod.phase in ("Succeeded", "Failed"):
            return  # not in any index (a node's pods exclude them; they are not unbound either)
        bucket = pod.node_name or ""
        self._buckets.setdefault(bucket, {})[key] = pod
        self._where[key] = bucket
        self._dirty.add(bucket)

    def drop(self, key: str) -> None:
        """``key`` is no longer shown (a later ``place`` puts it at the end)."""
        self._take(key)
        self._order.pop(key, None)

    def _take(self, key: str) -> None:
        bucket = self._where.pop(key, None)
        if bucket is not None:
            del self._buckets[bucket][key]
            self._dirty.add(bucket)

    def read(self) -> tuple[dict[str, tuple[Pod, ...]], tuple[Pod, ...]]:
        order = self._order
        for bucket in self._dirty:
            members = self._buckets.get(bucket, {})
            ordered = tuple(members[k] for k in sorted(members, key=order.__getitem__))
            if bucket:
                if ordered:
                    self._by_node[bucket] = ordered
                else:
                    self._by_node.pop(bucket, None)
                    self._buckets.pop(bucket, None)
            else:
                self._unbound = ordered
        self._dirty.clear()
        return dict(self._by_node), self._unbound
