"""The HPA inside the simulation: the real HPA loop (:class:`HPADriver` over :class:`HorizontalController`)
run by the shared :class:`~kubetide.runners.HPARunner`: every ``syncPeriod`` the driver ticks and
reconciles each due HPA (in key order, like a work queue drained at once) against the simulated
cluster and metrics.

The ports over the simulation: :class:`SimHPAs` lists ``SimCluster.hpas`` and writes their status;
:class:`SimScaleTargets` reads and writes the workloads, and its pod lister keeps the cache contract of
``ScaleTargetPort.list_pods`` (the same tuple object while a workload's pods are unchanged, so the
controller's pod index is reused); :class:`SimHPAEvents` puts the events in the simulator's log.

The driver ticks at the controller's sync period, so a ``spec.syncPeriod`` shorter than that is
honoured only up to the tick (longer ones skip ticks, as they should).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubetide.clock import VirtualClock
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.driver import HPADriver
from kubetide.hpa.ports import Scale, ScaleError
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector
from kubetide.runners import HPARunner
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.store import EventSink
from kubetide.sim.cluster.workloads import ReplicatedWorkload, Workload
from kubetide.sim.metrics import MetricsPipeline


class SimScaleTargets:
    """ScaleTargetPort over the simulated cluster."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        # By key: (the workload, its version, its pods' views); the workload is kept because one
        # deleted and applied again has the same key and restarts its versions.
        self._views: dict[str, tuple[Workload, int, tuple[Pod, ...]]] = {}
        self.last_rescale: tuple[int, int] | None = None  # (from, to) of the latest update_scale
        self._scales: dict[int, tuple[CrossVersionObjectReference, str, str, ReplicatedWorkload, Scale]] = {}

    def _workload(self, namespace: str, ref: CrossVersionObjectReference) -> ReplicatedWorkload:
        key = f"{ref.kind}/{namespace}/{ref.name}"
        workload = self.cluster.workloads.get(key)
        if not isinstance(workload, ReplicatedWorkload):
            raise ScaleError(f'{ref.kind.lower()}s "{ref.name}" not found')
        return workload

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        # Every sync reads the scale: keep the last answer per reference object while the workload
        # is the same object with the same counts (a fresh Scale is equal, only slower).
        cached = self._scales.get(id(ref))
        if cached is not None and cached[0] is ref and cached[1] == namespace:
            _, _, key, w, scale = cached
            if (
                self.cluster.workloads.get(key) is w
                and scale.spec_replicas == w.replicas
                and scale.status_replicas == len(w.pods)
            ):
                return scale
        w = self._workload(namespace, ref)
        scale = Scale(w.replicas, len(w.pods), w.selector_text)
        self._scales[id(ref)] = (ref, namespace, w.key, w, scale)
        return scale

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        w = self._workload(namespace, ref)
        self.last_rescale = (w.replicas, replicas)
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


def _object_key(hpa: HPA) -> str:
    return f"HorizontalPodAutoscaler/{hpa.namespace}/{hpa.name}"


class SimHPAs:
    """HPASource over ``SimCluster.hpas`` (keyed there by ``HorizontalPodAutoscaler/ns/name``)."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return {hpa.key: hpa for hpa in self.cluster.hpas.values()}

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        key = _object_key(hpa)
        if key in self.cluster.hpas:  # nothing in a sync deletes it, but be safe
            self.cluster.hpas[key] = hpa.with_status(status)


class SimHPAEvents:
    """EventPort into the simulator's event log (source ``hpa``). A ``SuccessfulRescale`` carries the
    ``from``/``to`` data the log's contract asks for: the driver emits it right after the scale write,
    so it is the last write the scale-target port saw."""

    def __init__(self, engine: VirtualClock, sink: EventSink, targets: SimScaleTargets) -> None:
        self.engine = engine
        self.sink = sink
        self.targets = targets
        self.rescales = 0

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        data: dict[str, object] = {}
        if reason == "SuccessfulRescale" and self.targets.last_rescale is not None:
            self.rescales += 1
            before, after = self.targets.last_rescale
            data = {"from": before, "to": after}
        self.sink.emit(self.engine.now, "hpa", reason, obj, message, data)


class SimHPA:
    """The HPA in a simulation: its ports, the shared runner at the controller's sync period, and the
    rescales the summary counts."""

    def __init__(
        self,
        clock: VirtualClock,
        cluster: SimCluster,
        metrics: MetricsPipeline,
        config: HPAConfig,
        events: EventSink,
    ) -> None:
        self.cluster = cluster
        self.metrics = metrics
        self.config = config
        self.targets = SimScaleTargets(cluster)
        self.events = SimHPAEvents(clock, events, self.targets)
        # The quiet lane: the simulator reads no per-sync results, and most of its syncs are quiet.
        self.driver = HPADriver(SimHPAs(cluster), metrics, self.targets, self.events, config, quiet_lane=True)
        self.runner = HPARunner(self.driver, clock, config.sync_period)

    @property
    def controller(self) -> HorizontalController:
        return self.driver.controller

    @property
    def rescales(self) -> int:
        return self.events.rescales

    def start(self, phase: float) -> None:
        self.runner.start(phase)

    def restart(self) -> None:
        self.runner.restart()
