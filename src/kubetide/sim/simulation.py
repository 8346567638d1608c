"""A whole simulation: the scenario's cluster, cloud, traffic, metrics and autoscalers on one engine.

``Simulation(scenario).run()`` replays ``spec.duration`` of simulated time and returns the summary,
timeline, event log and report metadata. Everything is driven by the engine's event heap, so idle
stretches cost nothing; the only periodic work is the metrics scrape / timeline row (every
``metrics.resolution``) and the controllers' syncs.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from kubetide.clock import VirtualClock
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.resources import CPU, MEMORY
from kubetide.model.workloads import SCALABLE_KINDS
from kubetide.sim.cloud.listener import NodeAddress
from kubetide.sim.cloud.simulated import SimulatedCloud
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.workloads import JobWorkload, ReplicatedWorkload
from kubetide.sim.cluster_autoscaler import SimClusterAutoscaler
from kubetide.sim.escalator import SimEscalator
from kubetide.sim.hpa import SimHPA
from kubetide.sim.loads import build_loads
from kubetide.sim.metrics import MetricsPipeline
from kubetide.sim.output.events import EventLog
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.summary import Summary
from kubetide.sim.output.timeline import Timeline, group_extra_columns, timeline_columns
from kubetide.sim.replay.recording import recorded_day
from kubetide.sim.rng import RngFactory, deterministic_phase
from kubetide.sim.scenario.model import Scenario
from kubetide.sim.scenario.objects import object_key
from kubetide.sim.summarize import FinishedRun, WorkloadWatch, summarize

__all__ = ["IMPLEMENTED_AUTOSCALERS", "Simulation", "SimulationResult"]

IMPLEMENTED_AUTOSCALERS = ("hpa", "cluster-autoscaler", "escalator")

Progress = Callable[[float], None]


@dataclass
class SimulationResult:
    summary: Summary
    timeline: Timeline
    events: EventLog
    meta: ReportMeta
    wall_seconds: float = 0.0


class _CloudBridge:
    """The cloud's listener: Node changes go to the cluster, events to the log."""

    def __init__(self, cluster: SimCluster, events: EventLog) -> None:
        self.cluster = cluster
        self.events = events

    def cloud_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        self.events.emit(t, "cloud", reason, obj, message, dict(data))

    def kubelet_event(
        self, t: float, reason: str, obj: str, message: str, data: Mapping[str, object], /
    ) -> None:
        self.events.emit(t, "kubelet", reason, obj, message, dict(data))

    def register_node(
        self, t: float, node: NodeView, group: str, instance: str, addresses: Sequence[NodeAddress], /
    ) -> None:
        self.cluster.register_node(t, node, group, instance)
        if node.ready:
            self.cluster.set_node_ready(t, node.name, True)

    def set_node_ready(self, t: float, node_name: str, ready: bool, /) -> None:
        self.cluster.set_node_ready(t, node_name, ready)

    def node_deleted(self, t: float, node_name: str, /) -> None:
        self.cluster.node_deleted(t, node_name)


class Simulation:
    def __init__(self, scenario: Scenario, seed: int | None = None, *, skip_quiet_loops: bool = True) -> None:
        """``skip_quiet_loops``: the cluster autoscaler's loops that provably change nothing are answered
        from the last one (:mod:`kubetide.sim.quiet_loops`; the outputs are the same, only faster), but
        where a node group has faults."""
        self.scenario = scenario
        spec = scenario.spec
        self.seed = spec.seed if seed is None else seed
        self.duration = float(spec.duration)
        self.engine = VirtualClock()
        self.events = EventLog()
        self.rngs = RngFactory(self.seed)
        self.cluster = SimCluster(self.engine, self.events, self.rngs)
        self.cluster.listeners.append(self)
        self.cloud = SimulatedCloud.from_scenario(
            self.engine, spec.nodeGroups, scenario.catalog, self.rngs, _CloudBridge(self.cluster, self.events)
        )
        self.resolution = float(spec.metrics.resolution)
        loads = build_loads(scenario, self.seed)
        self.metrics = MetricsPipeline(
            self.cluster, loads, float(spec.metrics.window), float(spec.metrics.firstSampleAfter)
        )
        self.capacity = {load.workload: load.capacity_per_pod for load in loads if load.capacity_per_pod}
        self.groups = [g.name for g in spec.nodeGroups]
        self.hpa: SimHPA | None = None
        settings = spec.autoscalers.hpa
        if settings.is_enabled(scenario.has_hpa_objects()):
            config = settings.config()
            self.hpa = SimHPA(self.engine, self.cluster, self.metrics, config, self.events)
        self.escalator: SimEscalator | None = None
        esc_settings = spec.autoscalers.escalator
        if esc_settings is not None and esc_settings.enabled:
            self.escalator = SimEscalator(self.engine, self.cluster, self.cloud, esc_settings, self.events)
        self.ca: SimClusterAutoscaler | None = None
        ca_settings = spec.autoscalers.clusterAutoscaler
        if ca_settings is not None and ca_settings.enabled:
            options = AutoscalingOptions.from_flags(
                {name: ca_settings.flag(name) for name in ca_settings.flags}
            )
            self.ca = SimClusterAutoscaler(
                self.engine,
                self.cluster,
                self.cloud,
                options,
                self.events,
                self.seed,
                self._ca_groups(options),
                skip_quiet_loops=skip_quiet_loops and not any(g.faults for g in spec.nodeGroups),
            )
        self.watch: dict[str, WorkloadWatch] = {}
        self.node_max: dict[str, int] = dict.fromkeys(self.groups, 0)
        self.workload_keys: list[str] = []
        self.timeline: Timeline | None = None
        self._progress: Progress | None = None
        self._group_slots: tuple[int, dict[str, npt.NDArray[np.intp]]] | None = None
        self._ready_counts: tuple[int, dict[str, int]] | None = None

    def _ca_groups(self, options: AutoscalingOptions) -> list[str] | None:
        """The groups CA manages: ``--nodes``' names when given (the scenario checks keep the batch
        autoscaler's out of them), else every group the batch autoscaler does not own; None: all."""
        if options.nodes:
            return [spec.split(":", 2)[-1] for spec in options.nodes]
        if self.escalator is None:
            return None
        owned = {g.cloud_provider_group_name for g in self.escalator.groups}
        return [g for g in self.groups if g not in owned]

    # --- setup ------------------------------------------------------------------------------------

    def _start(self) -> None:
        self.cloud.start()
        for manifest in self.scenario.spec.objects:
            self.cluster.apply(manifest, 0.0)
        # Every scalable workload of the run, also those that actions apply later: until one exists
        # (and once deleted) it counts as 0 replicas, as its timeline columns show.
        manifests = [*self.scenario.spec.objects, *(a.apply for a in self.scenario.spec.actions if a.apply)]
        keys = (object_key(m) for m in manifests if m.get("kind") in SCALABLE_KINDS)
        self.workload_keys = list(dict.fromkeys(keys))
        for key in self.workload_keys:
            replicas = self._replicas(key)
            self.watch[key] = WorkloadWatch(replicas, replicas, capacity_per_pod=self.capacity.get(key))
        contract = timeline_columns(self.groups, self.workload_keys)
        self.timeline = Timeline([*contract, *group_extra_columns(self.groups)], csv_columns=len(contract))
        for i, action in enumerate(self.scenario.spec.actions):
            self.engine.at(float(action.at), partial(self._act, action, i), priority=5)
        for group in self.scenario.spec.nodeGroups:
            for j, fault in enumerate(group.faults):
                self._announce_fault(group.name, j, fault)
        # Scrape first, then sample the timeline, at every resolution step from t=0.
        self.engine.every(self.resolution, self._tick, priority=10, name="metrics")
        autoscalers = self.scenario.spec.autoscalers
        if self.hpa is not None:
            period = self.hpa.config.sync_period
            first_sync = autoscalers.hpa.firstSyncAt  # a recorded day's; else drawn from the seed
            phase = deterministic_phase(self.seed, "hpa", period) if first_sync is None else first_sync
            self.hpa.start(phase=round(phase, 3))
        if self.ca is not None:
            scan = self.ca.options.scan_interval
            first_loop = autoscalers.clusterAutoscaler.firstLoopAt if autoscalers.clusterAutoscaler else None
            phase = (
                deterministic_phase(self.seed, "cluster-autoscaler", scan)
                if first_loop is None
                else first_loop
            )
            self.ca.start(phase=round(phase, 3))
        if self.escalator is not None:
            # Escalator runs one loop at start-up, then every scan interval (upstream RunForever).
            self.escalator.start(phase=0.0)

    def _announce_fault(self, group: str, index: int, fault: Any) -> None:
        """``FaultStarted`` / ``FaultEnded`` scenario events around each fault's window."""
        data = {"group": group, "fault": fault.type, "index": index}
        obj = f"NodeGroup/{group}"
        start, end = float(fault.at), fault.until
        self.engine.at(
            start,
            lambda t: self.events.emit(
                t, "scenario", "FaultStarted", obj, f"{fault.type} fault on {group} starts", data
            ),
            priority=1,
        )
        if end is not None and float(end) <= self.duration:
            self.engine.at(
                float(end),
                lambda t: self.events.emit(
                    t, "scenario", "FaultEnded", obj, f"{fault.type} fault on {group} ends", data
                ),
                priority=1,
            )

    def _act(self, action: Any, index: int, now: float) -> None:
        kind = action.kind
        message = f"spec.actions[{index}]: {kind}"
        data: dict[str, Any] = {"action": kind}
        if kind == "apply":
            self.cluster.apply(action.apply, now)
            message = f"applied {action.apply['kind']}/{(action.apply.get('metadata') or {}).get('name')}"
        elif kind == "delete":
            self.cluster.delete(action.delete, now)
            message = f"deleted {action.delete}"
        elif kind == "scale":
            self.cluster.scale(action.scale.target, action.scale.replicas, now)
            message = f"scaled {action.scale.target} to {action.scale.replicas}"
            data.update(target=action.scale.target, replicas=action.scale.replicas)
        elif kind == "restart":
            if action.restart == "hpa" and self.hpa is not None:
                self.hpa.restart()
            if action.restart == "cluster-autoscaler" and self.ca is not None:
                self.ca.restart()
            if action.restart == "escalator" and self.escalator is not None:
                self.escalator.restart()
            self.events.emit(
                now,
                "scenario",
                "AutoscalerRestarted",
                f"Autoscaler/{action.restart}",
                f"{action.restart} restarted",
                {"autoscaler": action.restart},
            )
            return
        elif kind == "deleteNode":
            names = self.cloud.delete_node_objects(action.deleteNode.group, action.deleteNode.count)
            message = f"deleted Node objects {', '.join(names)}"
            data.update(group=action.deleteNode.group, nodes=names)
        elif kind == "attachInstance":
            spec = action.attachInstance
            ids = self.cloud.attach_instances(spec.group, spec.count)
            message = f"attached {len(ids)} instance(s) to {spec.group} by hand"
            if len(ids) < spec.count:
                message += f" ({spec.count} asked; the group is at its maximum size)"
            data.update(group=spec.group, instances=ids)
        elif kind == "resizeGroup":
            resize = action.resizeGroup
            before, deleting = self.cloud.resize_group(resize.group, resize.size)
            message = f"resized {resize.group} from {before} to {resize.size}"
            if deleting:
                message += f" (deleting {', '.join(deleting)})"
            data.update(group=resize.group, **{"from": before, "to": resize.size}, nodes=deleting)
        for key, watch in self.watch.items():  # an apply or delete may create or remove a workload
            replicas = self._replicas(key)
            watch.min_replicas = min(watch.min_replicas, replicas)
            watch.max_replicas = max(watch.max_replicas, replicas)
        self.events.emit(now, "scenario", "ActionApplied", f"Scenario/{self.scenario.name}", message, data)

    def _replicas(self, key: str) -> int:
        """A workload's spec.replicas now; 0 when it does not exist."""
        workload = self.cluster.workloads.get(key)
        return workload.replicas if isinstance(workload, ReplicatedWorkload) else 0

    # --- listeners --------------------------------------------------------------------------------

    def workload_scaled(self, key: str, old: int, new: int, now: float) -> None:
        watch = self.watch.get(key)
        if watch is not None and old != new:
            watch.scale_events += 1
            watch.min_replicas = min(watch.min_replicas, new)
            watch.max_replicas = max(watch.max_replicas, new)

    # --- sampling ---------------------------------------------------------------------------------

    def _tick(self, now: float) -> None:
        self.metrics.scrape(now)
        assert self.timeline is not None
        row: list[float] = [now]
        ready_by_group = self._ready_by_group()
        targets = self.cloud.target_sizes()
        for group in self.groups:
            row += [float(ready_by_group[group]), float(targets.get(group, 0))]
            self.node_max[group] = max(self.node_max[group], ready_by_group[group])
        for key in self.workload_keys:
            replicas = self._replicas(key)
            rps, utilization, ready = self.metrics.workload_figures(key)
            row += [float(replicas), float(ready), float("nan") if utilization is None else utilization, rps]
            watch = self.watch[key]
            if watch.capacity_per_pod is not None and rps > watch.capacity_per_pod * ready:
                # A row stands for the step up to the next one; the row at the very end for nothing.
                watch.overloaded_seconds += min(self.resolution, self.duration - now)
        row += [float(len(self.cluster.pending_pods)), self.cloud.cost_per_hour()]
        row.append(float(self.cluster.stats.take_window_max()))
        unschedulable = sum(1 for p in self.cluster.pending_pods.values() if p.unschedulable is not None)
        row += [float(unschedulable), float(len(self.cluster.pending_pods) - unschedulable)]
        running = succeeded = 0
        for workload in self.cluster.workloads.values():
            if isinstance(workload, JobWorkload):
                succeeded += workload.succeeded
                running += sum(1 for p in workload.pods.values() if p.phase == "Running")
        row += [float(running), float(succeeded)]
        requested = self._requested_by_group()
        cost = self.cloud.cost_per_hour_by_group()
        for group in self.groups:
            cpu, memory = requested.get(group, (float("nan"), float("nan")))
            row += [cpu, memory, cost.get(group, 0.0)]
        self.timeline.append(row)
        if self._progress is not None:
            self._progress(now)

    def _ready_by_group(self) -> dict[str, int]:
        """Ready nodes per group, recounted only when a node came, went or changed readiness."""
        version = self.cluster.nodes_version
        if self._ready_counts is None or self._ready_counts[0] != version:
            counts = dict.fromkeys(self.groups, 0)
            for node in self.cluster.nodes.values():
                if node.ready and node.group in counts:
                    counts[node.group] += 1
            self._ready_counts = (version, counts)
        return self._ready_counts[1]

    def _requested_by_group(self) -> dict[str, tuple[float, float]]:
        """Per group, cpu and memory requested by the pods bound to its Ready nodes, in percent of
        their allocatable (what scale-down's utilization reads); groups without a Ready node are absent.
        The slots per group are recomputed only when the nodes change (the snapshot's node epoch)."""
        snap = self.cluster.snapshot
        if self._group_slots is None or self._group_slots[0] != snap.node_epoch:
            slots: dict[str, list[int]] = {}
            for node in self.cluster.nodes.values():
                if node.ready:
                    slots.setdefault(node.group, []).append(node.slot)
            self._group_slots = (snap.node_epoch, {g: np.asarray(s, np.intp) for g, s in slots.items()})
        cpu, memory = snap.column(CPU), snap.column(MEMORY)
        out: dict[str, tuple[float, float]] = {}
        for group, idx in self._group_slots[1].items():
            alloc = snap.allocatable[idx]
            used = snap.requested[idx]
            out[group] = (
                _percent(used[:, cpu].sum(), alloc[:, cpu].sum()),
                _percent(used[:, memory].sum(), alloc[:, memory].sum()),
            )
        return out

    # --- run --------------------------------------------------------------------------------------

    def run_until(self, t: float) -> None:
        """Run the scenario from its start up to simulated time ``t`` and stop there (``kubetide explain``
        looks at the autoscalers' state at that moment); not combinable with :meth:`run`. Every cluster
        autoscaler loop runs (the last one's plan is read)."""
        if self.ca is not None:
            self.ca.skipper.enabled = False
        self._start()
        with fewer_collections():
            self.engine.run(min(max(t, 0.0), self.duration))

    def run(self, progress: Progress | None = None) -> SimulationResult:
        start = time.perf_counter()
        self._progress = progress
        self._start()
        with fewer_collections():
            self.engine.run(self.duration)
        self.cluster.finish(self.duration)
        wall = time.perf_counter() - start
        assert self.timeline is not None
        summary = summarize(
            FinishedRun(
                scenario=self.scenario.name,
                seed=self.seed,
                duration=self.duration,
                cluster=self.cluster,
                cloud=self.cloud,
                groups=self.groups,
                node_max=self.node_max,
                timeline=self.timeline,
                workload_keys=self.workload_keys,
                watch=self.watch,
                ca=self.ca,
                hpa=self.hpa,
                escalator=self.escalator,
            ),
            wall,
        )
        meta = ReportMeta(
            scenario=self.scenario.name,
            seed=self.seed,
            duration=self.duration,
            node_groups=tuple(self.groups),
            workloads=tuple(self.workload_keys),
            hpa_targets=self._hpa_targets(),
            capacity_per_pod={k: v for k, v in self.capacity.items() if v is not None},
            escalator=self.escalator.group_series() if self.escalator is not None else {},
            ca_status_config_map=self.ca.status_config_map() if self.ca is not None else None,
            recorded=recorded_day(self.scenario),
        )
        return SimulationResult(summary, self.timeline, self.events, meta, wall)

    def _hpa_targets(self) -> dict[str, dict[str, float] | None]:
        out: dict[str, dict[str, float] | None] = {}
        for hpa in self.cluster.hpas.values():
            key = f"{hpa.scale_target_ref.kind}/{hpa.namespace}/{hpa.scale_target_ref.name}"
            for m in hpa.metrics:
                if (
                    m.type == "Resource"
                    and m.resource == "cpu"
                    and m.target is not None
                    and m.target.average_utilization
                ):
                    out[key] = {"cpu_utilization": float(m.target.average_utilization)}
        return out


def _percent(used: float, allocatable: float) -> float:
    return 100.0 * float(used) / float(allocatable) if allocatable > 0 else float("nan")


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run with CPython's cyclic garbage collector passing less often: a big simulation keeps ~10^5
    long-lived objects (pods, their views, nodes) and allocates millions of short-lived ones, so the
    default thresholds (a pass every 700 allocations, a full pass over everything every 100 of those)
    cost a fifth of a run with the cluster autoscaler. Nothing here relies on cycles being freed early;
    the thresholds are restored afterwards."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 50_000), max(old[1], 20), max(old[2], 100))
    try:
        yield
    finally:
        gc.set_threshold(*old)
