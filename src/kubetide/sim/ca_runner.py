"""Runs the real Cluster Autoscaler loop (:class:`~kubetide.cluster.autoscaler.StaticAutoscaler`) inside
the simulation: every ``--scan-interval`` it builds the world as the API server would show it, runs
``run_once`` and records what it did.

The world: Nodes with the node lifecycle controller's ``not-ready`` taint while NotReady; every live
pod (a Deployment's pods are shown owned by a ReplicaSet, as in a real cluster, so CA's drain rules
see a replicated pod); PDBs with their current ``disruptionsAllowed``; ConfigMaps (the priority
expander's). Acts through a ``client("cluster-autoscaler")`` handle on the simulated cloud, so the
cloud attributes deletions to CA, and through :class:`SimCluster` for taints and evictions (the
Eviction API honours PDBs).
"""

from __future__ import annotations

from dataclasses import replace

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import LoopStats, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import OwnerRef, Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import PDB
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import NOT_READY_TAINT, EventSink, SimCluster
from kubetide.sim.engine import Engine

__all__ = ["SOURCE", "ClusterAutoscalerRunner"]

SOURCE = "cluster-autoscaler"


class _Port:
    """CA's writes to the API server: node taints and evictions, at the engine's current time."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster

    def set_node_taints(self, node: str, taints: tuple[Taint, ...]) -> None:
        if node in self.cluster.nodes:
            own = tuple(t for t in taints if t != NOT_READY_TAINT)  # the lifecycle taint is the cluster's
            self.cluster.set_node_taints(node, own, self.cluster.engine.now)

    def evict(self, pod: Pod) -> bool:
        sim_pod = self.cluster.pods.get(f"{pod.namespace}/{pod.name}")
        if sim_pod is None or sim_pod.deleted:
            return True
        return self.cluster.evict(sim_pod, self.cluster.engine.now)


class ClusterAutoscalerRunner:
    def __init__(
        self,
        engine: Engine,
        cluster: SimCluster,
        cloud: SimulatedCloud,
        options: AutoscalingOptions,
        events: EventSink,
        seed: int = 0,
    ) -> None:
        self.engine = engine
        self.cluster = cluster
        self.cloud = cloud.client(SOURCE)
        self.options = options
        self.events = events
        self.seed = seed
        self.port = _Port(cluster)
        self.stats = LoopStats()
        self.loops = 0
        self.autoscaler = self._new(engine.now)
        self._node_views: dict[str, tuple[NodeView, bool, NodeView]] = {}
        self._pod_views: dict[str, tuple[Pod, Pod]] = {}

    def _new(self, now: float) -> StaticAutoscaler:
        return StaticAutoscaler(self.cloud, self.port, self.options, start_time=now, seed=self.seed)

    def start(self, phase: float) -> None:
        self.engine.every(self.options.scan_interval, self.sync, phase=phase, priority=30, name="ca-loop")

    def restart(self) -> None:
        """A new CA process: in-memory state is gone; the cluster and the cloud keep theirs."""
        self.autoscaler = self._new(self.engine.now)

    # --- the world as the API server shows it ---------------------------------------------------------

    def _nodes(self) -> list[NodeView]:
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
        return out

    def _pods(self) -> list[Pod]:
        out = []
        views: dict[str, tuple[Pod, Pod]] = {}
        for key, sim_pod in self.cluster.pods.items():
            if sim_pod.deleted:
                continue
            view = sim_pod.view()
            cached = self._pod_views.get(key)
            if cached is not None and cached[0] is view:
                shown = cached[1]
            else:
                shown = view
                if any(o.kind == "Deployment" for o in view.owners):
                    shown = view.evolve(
                        owners=tuple(
                            OwnerRef("ReplicaSet", o.name, o.uid, o.controller)
                            if o.kind == "Deployment"
                            else o
                            for o in view.owners
                        )
                    )
            views[key] = (view, shown)
            out.append(shown)
        self._pod_views = views
        return out

    def _pdbs(self) -> list[PDB]:
        out = []
        for pdb in self.cluster.pdbs.values():
            pods = (p for p in self.cluster.pods.values() if p.spec.namespace == pdb.namespace)
            out.append(PDB(pdb.namespace, pdb.selector, pdb.disruptions_allowed(pods)))
        return out

    def world(self) -> World:
        config_maps = {key.split("/", 1)[1]: data for key, data in self.cluster.config_maps.items()}
        return World(self._nodes(), self._pods(), self._pdbs(), config_maps)

    # --- the loop --------------------------------------------------------------------------------------

    def sync(self, now: float) -> None:
        self.loops += 1
        result = self.autoscaler.run_once(self.world(), now)
        self.stats.add(result.stats)
        for ev in result.events:
            self.events.emit(now, SOURCE, ev.reason, ev.object, ev.message, dict(ev.data))
