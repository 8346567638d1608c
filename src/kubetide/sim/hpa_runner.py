"""Runs the real :class:`HorizontalController` inside the simulation: every ``syncPeriod`` it reconciles
each HPA (in name order, like a work queue drained at once) against the simulated cluster and metrics.

The scale-target port reads and writes the workloads in :class:`SimCluster`; its pod lister returns
the same tuple object while a workload's pods are unchanged, so the controller's pod index is reused.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.ports import Scale, ScaleError
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.sim.cluster.cluster import EventSink, SimCluster
from kubetide.sim.cluster.workloads import ReplicatedWorkload, Workload
from kubetide.sim.engine import Engine
from kubetide.sim.metrics import MetricsPipeline


class SimScaleTargets:
    """ScaleTargetPort over the simulated cluster."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        # By key: (the workload, its version, its pods' views); the workload is kept because one
        # deleted and applied again has the same key and restarts its versions.
        self._views: dict[str, tuple[Workload, int, tuple[Pod, ...]]] = {}

    def _workload(self, namespace: str, ref: CrossVersionObjectReference) -> ReplicatedWorkload:
        key = f"{ref.kind}/{namespace}/{ref.name}"
        workload = self.cluster.workloads.get(key)
        if not isinstance(workload, ReplicatedWorkload):
            raise ScaleError(f'{ref.kind.lower()}s "{ref.name}" not found')
        return workload

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        w = self._workload(namespace, ref)
        return Scale(w.replicas, len(w.pods), w.selector_text)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        w = self._workload(namespace, ref)
        self.cluster.scale(w.key, replicas, self.cluster.engine.now)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        workload = self.cluster.workload_for_selector(namespace, selector)
        if workload is not None:
            cached = self._views.get(workload.key)
            if cached is not None and cached[0] is workload and cached[1] == workload.version:
                return cached[2]
            views = tuple(p.view() for p in workload.pods.values())
            self._views[workload.key] = (workload, workload.version, views)
            return views
        # Not one workload's selector: every live pod in the namespace that matches.
        return tuple(
            p.view()
            for p in self.cluster.pods.values()
            if p.spec.namespace == namespace and selector.matches(p.spec.labels)
        )


class HPARunner:
    def __init__(
        self,
        engine: Engine,
        cluster: SimCluster,
        metrics: MetricsPipeline,
        config: HPAConfig,
        events: EventSink,
    ) -> None:
        self.engine = engine
        self.cluster = cluster
        self.metrics = metrics
        self.config = config
        self.events = events
        self.targets = SimScaleTargets(cluster)
        self.controller = HorizontalController(metrics, self.targets, config)
        self.rescales = 0

    def start(self, phase: float) -> None:
        self.engine.every(self.config.sync_period, self.sync, phase=phase, priority=20, name="hpa-sync")

    def restart(self) -> None:
        """A controller-manager restart: the in-memory recommendations and scale events are gone."""
        self.controller = HorizontalController(self.metrics, self.targets, self.config)

    def sync(self, now: float) -> None:
        for key in sorted(self.cluster.hpas):
            hpa = self.cluster.hpas[key]
            result = self.controller.reconcile(hpa, now)
            if key in self.cluster.hpas:  # the scale may have triggered nothing that deletes it, but be safe
                self.cluster.hpas[key] = hpa.with_status(result.status)
            target = f"HorizontalPodAutoscaler/{hpa.namespace}/{hpa.name}"
            for event in result.events:
                data: dict[str, object] = {}
                if event.reason == "SuccessfulRescale":
                    self.rescales += 1
                    data = {"from": result.current_replicas, "to": result.desired_replicas}
                self.events.emit(now, "hpa", event.reason, target, event.message, data)
