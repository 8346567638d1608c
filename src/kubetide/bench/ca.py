"""Cluster Autoscaler bench: one full ``run_once`` on CA's GA scalability scenario and five times it.

``CA-loop-1k``: 1,000 nodes in 5 groups, 30,000 running pods of 300 Deployments and 1,000 pending
(CA's scalability scenario 6, whose bound is 10 s; budget 0.2 s). ``CA-loop-1k-buffers``: the same
kind of world with room on its nodes (12 pods a node, 400 pending) and 50 CapacityBuffers of 100
replicas each (5,000 fake pods injected every loop, placed on the nodes there are; the buffer
controller and pod injection on), against the same loop without them, loop for loop: its budget is
120 % of the loop without buffers (the buffers may add at most 20 %). ``CA-loop-5k``: 5,000 nodes and
150,000 pods, 5,000 pending (budget 1 s). The first loop runs the snapshot of every node and pod, the
filter of schedulable pending pods, the estimate for each group and the expander; it scales up, so it
ends there as CA's RunOnce does. The next loops (the pods wait on the upcoming nodes) run the filter
again and the scale-down pass's utilization of every node (the nodes are busy here, so none is a
candidate; the removal simulation is measured by the ``scheduling`` suite's SD workloads).

Figures: ``median_seconds`` is the first loop of a new autoscaler on **fresh pod and node objects**
(nothing derived from them cached: their requests and equivalence keys are computed inside the timed
loop), which is what the first loop over a new informer snapshot pays; ``warm_median_seconds`` is
the median of the next loops on the same objects. As in the simulator and the live caches, the pods
of one Deployment share their template's objects (containers, owner references); labels are one
mapping per pod. ``cpu_seconds``: this process's CPU time for the first loop (the machine may be
shared; the wall figure is the one compared with the budget; ``warm_cpu_median_seconds`` likewise).

``CA-loop-SU-4``: the same on SU-4's world (``docs/perf-fixtures.md``: 5,000 nodes in 10 groups and 3
zones running 50,000 pods with hostname anti-affinity; 50,000 pending pods with hostname anti-affinity
and a zone spread), with its decision: the nodes added per group in the first loop. The next loops are
the scale-up in flight: the upcoming nodes take the pods they can (zone by zone), and CA scales up again
for the rest, group after group. ``CA-loop-SD-4``: SD-4's world (5,000 nodes in 10 groups, 232,000 pods
with hostname anti-affinity and a zone spread, nothing pending): each loop's scale-down pass, whose
removal simulation stops at upstream's limit of unneeded nodes per loop; its decision is the nodes found
unneeded (the removal simulation of all 1,500 candidates at once is the ``scheduling`` suite's SD-4).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kubetide.bench import affinity
from kubetide.bench.affinity import GROUP_LABEL
from kubetide.bench.sim import machine_loop_seconds
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.capacity.buffers.controller import translate_buffers
from kubetide.cluster.capacity.objects import CapacityObjects
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.sim.cluster.capacity import CapacityStore
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

MI = 1024 * 1024
GI = 1024 * MI
GROUPS = 5
APPS = 300
WARM_LOOPS = 5
NOW = 1_800_000_000.0
UNSCHEDULABLE = "0/1000 nodes are available: 1000 Insufficient cpu."


def _node(i: int, group: int) -> NodeView:
    alloc = Resources({"cpu": 8000, "memory": 32 * GI, "pods": 110})
    labels = {
        "kubetide.io/node-group": f"group-{group}",
        "kubernetes.io/hostname": f"node-{i}",
        "topology.kubernetes.io/zone": f"zone-{i % 3}",
    }
    return NodeView(
        f"node-{i}", labels=labels, allocatable=alloc, capacity=alloc, provider_id=f"fake://node-{i}"
    )


def _templates() -> list[tuple[tuple[OwnerRef, ...], tuple[Container, ...], str]]:
    templates: list[tuple[tuple[OwnerRef, ...], tuple[Container, ...], str]] = []
    for a in range(APPS):
        app = f"app-{a}"
        owners = (OwnerRef("ReplicaSet", f"{app}-7d9f8b6c5", f"uid-{app}", True),)
        containers = tuple(
            Container(f"{app}-{k}", Resources({"cpu": 100 + 50 * (a % 7), "memory": 128 * (1 + a % 4) * MI}))
            for k in range(2 + a % 2)
        )
        templates.append((owners, containers, app))
    return templates


def world(nodes: int, pods_per_node: int = 30) -> tuple[World, RecordingCloud]:
    """Fresh objects: ``nodes`` nodes, ``pods_per_node`` pods per node of which one in thirty pending."""
    per_group = nodes // GROUPS
    node_views = [_node(i, i // per_group) for i in range(nodes)]
    templates = _templates()
    pods = []
    for i in range(nodes * pods_per_node):
        owners, containers, app = templates[i % APPS]
        pending = i % 30 == 29
        pods.append(
            Pod(
                f"{app}-{i}",
                namespace="shop",
                uid=f"pod-{i}",
                labels={"app": app, "pod-template-hash": "7d9f8b6c5"},
                owners=owners,
                containers=containers,
                node_name="" if pending else f"node-{i % nodes}",
                phase="Pending" if pending else "Running",
                unschedulable_message=UNSCHEDULABLE if pending else "",
            )
        )
    return World(nodes=node_views, pods=pods), _grouped_cloud(node_views, GROUPS)


def _grouped_cloud(nodes: list[NodeView], groups: int) -> RecordingCloud:
    """``groups`` groups of the nodes (by their group label), each at its size, free to double."""
    per_group = len(nodes) // groups
    cloud = RecordingCloud()
    for g in range(groups):
        cloud.with_group(f"group-{g}", min_size=0, max_size=per_group * 2, target=per_group)
    for node in nodes:
        cloud.with_node(node.labels[GROUP_LABEL], node)
    return cloud


def _loops(w: World, cloud: RecordingCloud) -> tuple[dict[str, float], LoopResult, list[LoopResult]]:
    """A new autoscaler's first loop on ``w`` (fresh objects) and the next ones: the figures (wall
    and CPU, first and median of the next), the first loop's result and the next ones'."""
    autoscaler = StaticAutoscaler(
        cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=NOW - 3600
    )
    gc.collect()
    cpu0, t0 = time.process_time(), time.perf_counter()
    first = autoscaler.run_once(w, NOW)
    cold, cold_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    warm, warm_cpu, later = [], [], []
    for k in range(WARM_LOOPS):
        cpu0, t0 = time.process_time(), time.perf_counter()
        later.append(autoscaler.run_once(w, NOW + 10.0 * (k + 1)))
        warm.append(time.perf_counter() - t0)
        warm_cpu.append(time.process_time() - cpu0)
    figures = {
        "median_seconds": cold,
        "cpu_seconds": round(cold_cpu, 3),
        "warm_median_seconds": round(statistics.median(warm), 4),
        "warm_cpu_median_seconds": round(statistics.median(warm_cpu), 4),
    }
    return figures, first, later


def _loop(name: str, nodes: int, target: float) -> dict[str, Any]:
    w, cloud = world(nodes)
    figures, result, _ = _loops(w, cloud)
    return {
        "workload": name,
        **figures,
        "runs": 1,
        "target_seconds": target,
        "warm_runs": WARM_LOOPS,
        "nodes": nodes,
        "pods": len(w.pods),
        "pending": sum(1 for p in w.pods if p.unschedulable_message),
        "scale_up": result.scale_up_result,
        "scale_down": result.scale_down_result,
        "bound_upstream_seconds": 10.0,
    }


BUFFERS, BUFFER_REPLICAS = 50, 100
BUFFER_LOOPS = 15
# Nodes with room to spare (12 pods of the 300 Deployments use about 7 of 8 cores, one in thirty pods
# pending): the buffers' 5,000 pods fit on the nodes there are, as in a cluster that keeps buffers.
BUFFER_WORLD_PODS_PER_NODE = 12


def buffer_objects(buffers: int = BUFFERS, replicas: int = BUFFER_REPLICAS) -> CapacityObjects:
    """``buffers`` CapacityBuffers of ``replicas`` each, one PodTemplate each, as the API server holds
    them once the buffer controller translated them (statuses Ready, managed PodTemplates written)."""
    store = CapacityStore()
    for b in range(buffers):
        requests = {"cpu": f"{100 + 50 * (b % 7)}m", "memory": f"{128 * (1 + b % 4)}Mi"}
        store.apply(
            {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": f"spare-{b}", "namespace": "shop"},
                "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}},
            },
            NOW,
        )
        store.apply(
            {
                "apiVersion": "autoscaling.x-k8s.io/v1beta1",
                "kind": "CapacityBuffer",
                "metadata": {"name": f"spare-{b}", "namespace": "shop", "uid": f"uid-buffer-{b}"},
                "spec": {"podTemplateRef": {"name": f"spare-{b}"}, "replicas": replicas},
            },
            NOW,
        )
    for _ in range(3):  # the controller's writes, as the API server applies them
        objects = store.objects(0, dict)
        assert objects is not None
        for write in translate_buffers(objects.buffers, objects, NOW).writes:
            store.write(write, NOW)
    objects = store.objects(0, dict)
    assert objects is not None
    return objects


def _buffers_row(nodes: int = 1_000) -> dict[str, Any]:
    """The loop with and without 50 buffers, on worlds alike, interleaved loop by loop so that a busy
    machine slows both alike; figures are medians of the loops after the first few (the buffers' nodes
    are then upcoming, as in a cluster that runs them)."""
    on = AutoscalingOptions(
        capacity_buffer_controller_enabled=True, capacity_buffer_pod_injection_enabled=True
    )
    runs = []
    for options, capacity in ((AutoscalingOptions(), None), (on, buffer_objects())):
        w, cloud = world(nodes, BUFFER_WORLD_PODS_PER_NODE)
        if capacity is not None:
            w = replace(w, capacity=capacity)
        runs.append(
            (w, StaticAutoscaler(cloud, RecordingClusterPort.discarding(), options, start_time=NOW - 3600))
        )
    times: list[list[float]] = [[], []]
    last = None
    gc.collect()
    for k in range(BUFFER_LOOPS):
        for i, (w, autoscaler) in enumerate(runs):
            t0 = time.perf_counter()
            result = autoscaler.run_once(w, NOW + 10.0 * k)
            times[i].append(time.perf_counter() - t0)
            if i == 1:
                last = result
    plain, buffered = (statistics.median(t[3:]) for t in times)
    assert last is not None and last.capacity is not None
    return {
        "workload": "CA-loop-1k-buffers",
        "median_seconds": buffered,
        "runs": BUFFER_LOOPS - 3,
        "target_seconds": round(1.2 * plain, 4),
        "without_buffers_seconds": round(plain, 4),
        "added_percent": round(100 * (buffered / plain - 1), 1),
        "first_loop_seconds": [round(t[0], 4) for t in times],
        "buffers": BUFFERS,
        "fake_pods": sum(b.injected for b in last.capacity.buffers),
        "nodes": nodes,
    }


def _added(result: LoopResult) -> dict[str, int]:
    """The nodes a loop's scale-up adds, per group."""
    plan = result.scale_up.plan if result.scale_up is not None else None
    return {} if plan is None else {i.group: i.new_size - i.current_size for i in plan.infos}


def _loop_su4(target: float) -> dict[str, Any]:
    su4 = affinity.su4()
    w = World(nodes=su4.nodes, pods=[*su4.running, *su4.pending])
    figures, result, later = _loops(w, _grouped_cloud(su4.nodes, len(su4.templates)))
    return {
        "workload": "CA-loop-SU-4",
        **figures,
        "runs": 1,
        "target_seconds": target,
        "warm_runs": WARM_LOOPS,
        "nodes": len(su4.nodes),
        "pods": len(w.pods),
        "pending": len(su4.pending),
        "scale_up": result.scale_up_result,
        "nodes_added_per_group": _added(result),
        "later_loops_nodes_added": [_added(r) for r in later],
    }


def _loop_sd4(target: float) -> dict[str, Any]:
    nodes, pods, _ = affinity.sd4()
    per_group = len(nodes) // 10
    views = [
        replace(
            n, labels={**n.labels, GROUP_LABEL: f"group-{i // per_group}"}, provider_id=f"fake://{n.name}"
        )
        for i, n in enumerate(nodes)
    ]
    figures, result, later = _loops(World(nodes=views, pods=pods), _grouped_cloud(views, 10))
    return {
        "workload": "CA-loop-SD-4",
        **figures,
        "runs": 1,
        "target_seconds": target,
        "warm_runs": WARM_LOOPS,
        "nodes": len(nodes),
        "pods": len(pods),
        "scale_down": result.scale_down_result,
        "unneeded_first_loop": len(result.unneeded),
        "unneeded_later_loops": [len(r.unneeded) for r in later],
    }


ROWS: dict[str, Callable[[], dict[str, Any]]] = {
    "CA-loop-1k": lambda: _loop("CA-loop-1k", 1_000, 0.2),
    "CA-loop-5k": lambda: _loop("CA-loop-5k", 5_000, 1.0),
    "CA-loop-SU-4": lambda: _loop_su4(1.0),
    "CA-loop-SD-4": lambda: _loop_sd4(1.0),
    "CA-loop-1k-buffers": _buffers_row,
}


def run(only: str | None = None) -> list[dict[str, Any]]:
    """Every row, or only the one named (``python -m kubetide.bench ca --only CA-loop-1k-buffers``)."""
    records = [row() for name, row in ROWS.items() if only is None or name == only]
    machine = machine_loop_seconds() if records else None  # how loaded the machine was (0.3 s quiet)
    for r in records:
        r["machine_loop_seconds"] = machine
    return records
