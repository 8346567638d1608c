"""The two worlds decide alike: one short scenario run through the simulator's runners and through the
live runners, loop by loop, with the same decisions.

World A is the simulator as ``kubetide simulate`` wires it: the cluster autoscaler and the HPA on the
simulated ports (:class:`~kubetide.sim.cluster_autoscaler.SimClusterAutoscaler`,
:class:`~kubetide.sim.hpa.SimHPA`). World B is the same simulated cluster and cloud, but its autoscalers
are live mode's: watch caches over HTTP, the live cluster port, the live HPA's API ports and the
metrics API, all against the simulation served as an API server on a loopback port
(:class:`~kubetide.testing.sim_api.SimulatedApi`), built as ``kubetide run`` builds them, with the
simulated cloud as the cloud provider. Both run the shared runners on the simulation's virtual clock;
before each live loop the caches catch up with the simulated world (the barrier a real informer gives
with time). Each world records every cluster autoscaler loop (its time, its events, its scale-up and
scale-down results, the nodes it found unneeded) and every HPA rescale; the two records must be equal.

The scenario: two node groups; a ReplicaSet scaled by an HPA on CPU; a traffic step that makes the
HPA add pods that do not fit (CA scales up), then a drop that makes it remove them (CA removes the
nodes emptied).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubetide.clock import Callback, GatedClock
from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.options import AutoscalingOptions
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver, Synced
from kubetide.kube.discovery import discover
from kubetide.kube.events import EventRecorder
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.cluster_autoscaler.reporter import CALoopReporter
from kubetide.live.cluster_autoscaler.status_configmap import StatusConfigMap
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.live.hpa.api import KubeApi
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics
from kubetide.live.hpa.hpas import ApiHPAObjects
from kubetide.live.hpa.live_ports import NamespacedPods, PodCache
from kubetide.live.hpa.loop_source import LoopHPASource
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.live.hpa.reporter import HPALoopReporter
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.runners import ClusterAutoscalerRunner, HPARunner
from kubetide.sim.cluster_autoscaler import SimClusterAutoscaler
from kubetide.sim.hpa import SimHPA
from kubetide.sim.scenario.loader import load_scenario
from kubetide.sim.simulation import Simulation
from kubetide.testing.object_api import LoopbackApiServer
from kubetide.testing.sim_api import SimulatedApi

SCENARIO = """
apiVersion: kubetide.io/v1alpha1
kind: Scenario
metadata: {name: two-worlds}
spec:
  duration: 40m
  seed: 11
  nodeGroups:
    - {name: small, instanceType: m5.large, minSize: 1, maxSize: 6, initialSize: 1,
       provisioning: {delay: 30s, registerDelay: 10s, readyDelay: 10s}}
    - {name: large, instanceType: m5.xlarge, minSize: 0, maxSize: 3, initialSize: 0,
       provisioning: {delay: 40s, registerDelay: 10s, readyDelay: 10s}}
  objects:
    - apiVersion: apps/v1
      kind: ReplicaSet
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata:
            labels: {app: web}
            annotations: {kubetide.io/startup-delay: 10s}
          spec:
            containers:
              - name: web
                resources: {requests: {cpu: 500m, memory: 512Mi}}
                readinessProbe: {initialDelaySeconds: 5}
    - apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
        minReplicas: 2
        maxReplicas: 12
        metrics:
          - type: Resource
            resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
        behavior:
          scaleDown: {stabilizationWindowSeconds: 60}
  traffic:
    - target: ReplicaSet/default/web
      rps: {type: step, steps: [{at: 0, value: 100}, {at: 4m, value: 1000}, {at: 18m, value: 60}]}
      cpuPerRequest: 2m
      baseCpu: 20m
      memoryPerPod: 200Mi
  metrics: {resolution: 15s, window: 30s}
  autoscalers:
    hpa: {enabled: false}
    clusterAutoscaler: {enabled: false}
"""

# The flags both worlds' cluster autoscalers run with: short times, so the scenario scales down.
CA_FLAGS = {
    "scan-interval": 10.0,
    "expander": "least-waste",
    "scale-down-unneeded-time": 120.0,
    "scale-down-delay-after-add": 120.0,
    "max-node-provision-time": 300.0,
}
HPA_PHASE, CA_PHASE = 1.0, 2.0  # whole seconds: the times the API writes read back exactly


@dataclass(frozen=True)
class Loop:
    """What a cluster autoscaler loop decided, as both worlds must agree on it."""

    at: float
    events: tuple[tuple[str, str, str, str, str], ...]  # type, reason, object, message, data
    scale_up: str
    scale_down: str
    unneeded: tuple[str, ...]
    error: str | None

    @staticmethod
    def of(result: LoopResult, now: float) -> Loop:
        events = tuple(
            (ev.type, ev.reason, ev.object, ev.message, repr(sorted(ev.data.items()))) for ev in result.events
        )
        return Loop(
            now,
            events,
            result.scale_up_result,
            result.scale_down_result,
            tuple(sorted(result.unneeded)),
            result.error,
        )


@dataclass
class Record:
    """Every CA loop and deletions pass, and every HPA rescale (time, HPA, from, to), of one world."""

    loops: list[tuple[str, Loop]] = field(default_factory=list)
    rescales: list[tuple[float, str, int, int]] = field(default_factory=list)


class RecordingCAReporter:
    """Records each result, then hands it to the world's own reporter."""

    def __init__(self, record: Record, inner: Any) -> None:
        self.record, self.inner = record, inner

    def loop_started(self, now: float) -> None:
        self.inner.loop_started(now)

    def loop_finished(self, result: LoopResult, now: float) -> None:
        self.record.loops.append(("loop", Loop.of(result, now)))
        self.inner.loop_finished(result, now)

    def deletions_finished(self, result: LoopResult, now: float) -> None:
        self.record.loops.append(("deletions", Loop.of(result, now)))
        self.inner.deletions_finished(result, now)


def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "two-worlds.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def options() -> AutoscalingOptions:
    return AutoscalingOptions.from_flags(CA_FLAGS)


def world_a(path: Path) -> Record:
    """The simulator: its own runners on its own ports."""
    sim = Simulation(load_scenario(str(path)))
    record = Record()
    hpa = SimHPA(sim.engine, sim.cluster, sim.metrics, HPAConfig(), sim.events)
    ca = SimClusterAutoscaler(sim.engine, sim.cluster, sim.cloud, options(), sim.events, sim.seed)
    ca.runner.reporter = ca.runner.deletions_reporter = RecordingCAReporter(record, ca)
    hpa.start(HPA_PHASE)
    ca.start(CA_PHASE)
    sim.run_until(sim.duration)
    for t, source, reason, _, _, data in sim.events:
        if source == "hpa" and reason == "SuccessfulRescale":
            record.rescales.append((t, "default/web", int(data["from"]), int(data["to"])))
    return record


@dataclass
class LiveWorld:
    """World B: the simulated cluster behind the API server, the live autoscalers in front of it."""

    sim: Simulation
    api: SimulatedApi
    server: LoopbackApiServer
    stoppers: list[Callable[[], None]] = field(default_factory=list)

    def stop(self) -> None:
        for stop in reversed(self.stoppers):
            stop()
        self.server.stop()


@pytest.fixture
def live_world(tmp_path: Path) -> Iterator[LiveWorld]:
    sim = Simulation(load_scenario(str(scenario_file(tmp_path))))
    api = SimulatedApi(sim)
    world = LiveWorld(sim, api, LoopbackApiServer(api).start())
    try:
        yield world
    finally:
        world.stop()


def world_b(world: LiveWorld) -> Record:
    """Live mode: the runners of ``kubetide run`` on watch caches and API ports, on the virtual clock."""
    sim, api, record = world.sim, world.api, Record()
    rest = world.server.rest()
    versions = discover(rest)
    opts = options()
    # The cluster autoscaler, as commands/run/cluster_autoscaler.py builds it (no leader election:
    # every write is made).
    ca_world = CAWorldSource(rest, versions, namespace=opts.namespace).start()
    world.stoppers.append(ca_world.stop)
    recorder = EventRecorder(rest, "cluster-autoscaler")
    port = KubeClusterPort(rest, versions, component="cluster-autoscaler", events=recorder)
    cloud = sim.cloud.client("cluster-autoscaler", None)
    driver = ClusterAutoscalerDriver(ca_world, cloud, port, opts, now=sim.engine.now, seed=sim.seed)
    status = StatusConfigMap(rest, opts.namespace, opts.status_config_map_name)
    live_reporter = CALoopReporter(
        CAMetrics(per_nodegroup=False, registry=CollectorRegistry()), cloud, opts, status
    )
    # The HPA, as commands/run/hpa.py builds it, ticking at the sync period as the simulator's does
    # (live mode ticks every 2 s so short per-HPA periods hold; the scenario has none).
    pods = PodCache(rest, versions).start()
    world.stoppers.append(pods.stop)
    hpa_api = KubeApi(rest)
    targets = ApiScaleTargets(hpa_api, NamespacedPods(pods.pods))
    source = ApiHPAObjects(hpa_api, standard=True)
    hpa_events = _HPAEvents(EventRecorder(rest, "horizontal-pod-autoscaler"))
    config = HPAConfig()
    hpa_driver = HPADriver(
        LoopHPASource(source, hpa_events), ApiMetricsSource(hpa_api), targets, hpa_events, config
    )
    hpa_reporter = _RecordingHPAReporter(
        record, HPALoopReporter(HPAControllerMetrics(registry=CollectorRegistry()))
    )

    informers = [*ca_world.informers, pods.pods]
    assert all(i.wait_synced(30.0) for i in informers)

    def settled(callback: Callback, name: str) -> Callback:
        def run(now: float) -> None:
            api.settle(informers)
            callback(now)

        return run

    clock = GatedClock(sim.engine, settled)
    ca_runner = ClusterAutoscalerRunner(
        driver, clock, opts.scan_interval, RecordingCAReporter(record, live_reporter), carry_deletions=False
    )
    hpa_runner = HPARunner(hpa_driver, clock, config.sync_period, hpa_reporter)
    hpa_runner.start(HPA_PHASE)
    ca_runner.start(CA_PHASE)
    sim.run_until(sim.duration)
    assert_api_shows_the_simulation(api)
    return record


class _HPAEvents:
    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.recorder.emit(type_, reason, obj, message)


class _RecordingHPAReporter:
    def __init__(self, record: Record, inner: HPALoopReporter) -> None:
        self.record, self.inner = record, inner

    def loop_started(self, now: float) -> None:
        self.inner.loop_started(now)

    def loop_finished(self, synced: tuple[Synced, ...], now: float) -> None:
        for one in synced:
            r = one.result
            if r is not None and r.scaled:
                self.record.rescales.append((now, one.key, r.current_replicas, r.desired_replicas))
        self.inner.loop_finished(synced, now)


def assert_api_shows_the_simulation(api: SimulatedApi) -> None:
    """The API's objects read back as the simulator's own views (what world A's ports hand out)."""
    api.sync()
    for sim_pod in api.cluster.pods.values():
        shown = api.get("pods", sim_pod.spec.namespace, sim_pod.name)
        assert shown is not None and Pod.from_manifest(shown) == sim_pod.view()
    for name, node in api.cluster.nodes.items():
        shown = api.get("nodes", None, name)
        assert shown is not None
        view = NodeView.from_manifest(shown)
        assert view.name == name and view.ready == node.ready and view.labels == node.view.labels


def test_the_simulator_and_live_mode_decide_alike_loop_by_loop(tmp_path: Path, live_world: LiveWorld) -> None:
    simulated = world_a(scenario_file(tmp_path))
    live = world_b(live_world)
    # The scenario does what it is for: a scale-up of each kind the traffic asks, then a scale-down.
    scale_ups = [
        loop for kind, loop in simulated.loops if any(e[1] == "TriggeredScaleUp" for e in loop.events)
    ]
    scale_downs = [loop for kind, loop in simulated.loops if any(e[1] == "ScaleDown" for e in loop.events)]
    assert scale_ups and scale_downs, "the scenario no longer scales up and down"
    assert (
        max(to for _, _, _, to in simulated.rescales) > 2
        and simulated.rescales[-1][3] < simulated.rescales[-2][3]
    )
    # Loop by loop: first a readable difference, then everything.
    for (kind_a, a), (kind_b, b) in zip(simulated.loops, live.loops, strict=False):
        assert (kind_b, b) == (kind_a, a), f"the worlds part at t={a.at:g}"
    assert len(live.loops) == len(simulated.loops)
    assert live.rescales == simulated.rescales
