"""Scheduling benchmarks SU-1..SU-4 (scale-up estimate) and SD-1..SD-4 (removal simulation), with the
fixtures of ``workloads.md`` (SU-4 and SD-4, the affinity-heavy ones: ``docs/perf-fixtures.md``)
generated in code.

``median_seconds`` is the median of the repeated runs in this process, timed from built pod and node
objects. ``first_run_seconds`` is the first run on fresh pod objects, which also pays what is derived
once per pod (effective request, equivalence key): what one loop over a new informer snapshot pays.
The pods of one controller share their template's objects there (as the simulator builds them; the
live caches derive both when they decode a pod, off the loop's path), so those are derived once per
template;
``first_run_own_objects_seconds`` is the same first run when every pod has its own copies (nothing
shared, everything derived pod by pod). ``e2e_seconds`` adds building the pod, node and snapshot
objects. ``cpu_median_seconds`` and ``first_run_cpu_seconds``: this process's CPU time for the same runs
(the machine may be shared). SU-1..SD-3 are resource-only, but the code path is the full filter
pipeline: every filter that could change the answer is evaluated (the others are skipped because they
provably pass). SU-4 and SD-4 carry required anti-affinity and topology spread on every pod: the
inter-pod filters decide there (tier (b) of the fairness rules). SU-4 is timed for its 10 groups'
estimates together (the pods grouped once, as CA's ScaleUp groups them), SD-4 as SD-2; their first run
also builds the snapshot's pod index (bound pods by label and topology domain).

Order semantics for scale-down (SD-3 depends on it): candidates in index order n0, n1, ...; each pod
goes to the first fitting destination at or after a cursor that moves past every node receiving a pod
(Cluster Autoscaler's round robin from the last success), destinations being every node still present
except the candidate. With that order SD-3 gives 92 removable, as Cluster Autoscaler does.
"""

from __future__ import annotations

import gc
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

from kubetide.bench import affinity
from kubetide.bench.sim import machine_loop_seconds
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.estimator import estimate
from kubetide.scheduling.limiter import StaticThreshold, ThresholdLimiter
from kubetide.scheduling.removal_simulation import simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot

MI = 1024 * 1024
GI = 1024 * MI
RUNS = 7
# Fairness rule 3: the fixtures only exercise resources, but no filter is switched off.
_TIER = "resource-only fixture, full filter pipeline"


# True: every pod gets its own owner and container objects (as decoding each pod's JSON without
# interning would give), so nothing is derived once per template. The default shares them per
# controller, as the simulator builds pods and the live caches intern them.
OWN_OBJECTS = False


def _pods(prefix: str, count: int, cpu: int, mem: int, rs: str, node_name: str = "") -> list[Pod]:
    def owners() -> tuple[OwnerRef, ...]:
        return (OwnerRef("ReplicaSet", rs, f"uid-{rs}", True),)

    def containers() -> tuple[Container, ...]:
        return (Container("app", Resources({"cpu": cpu, "memory": mem})),)

    if OWN_OBJECTS:
        return [
            Pod(
                f"{prefix}-{k}",
                owners=owners(),
                labels={"app": rs},
                containers=containers(),
                node_name=node_name,
            )
            for k in range(count)
        ]
    shared_owners, shared_containers = owners(), containers()
    return [
        Pod(
            f"{prefix}-{k}",
            owners=shared_owners,
            labels={"app": rs},
            containers=shared_containers,
            node_name=node_name,
        )
        for k in range(count)
    ]


def _template(cpu: int, mem: int, pods: int) -> NodeView:
    return NodeView("template", allocatable=Resources({"cpu": cpu, "memory": mem, "pods": pods}))


def su1() -> tuple[ClusterSnapshot, NodeView, list[Pod]]:
    return ClusterSnapshot(), _template(3000, 30000 * MI, 110), _pods("su1", 30000, 100, 100 * MI, "rs")


def su2() -> tuple[ClusterSnapshot, NodeView, list[Pod]]:
    pods = _pods("small", 50000, 50, 100 * MI, "small") + _pods("large", 1000, 95, 190 * MI, "large")
    return ClusterSnapshot(), _template(1000, 5000 * MI, 100), pods


def su3() -> tuple[ClusterSnapshot, NodeView, list[Pod]]:
    pods: list[Pod] = []
    for i in range(100):
        pods += _pods(f"g{i}", 100, 50 + ((7 * i) % 20) * 50, (64 + ((13 * i) % 32) * 64) * MI, f"g{i}")
    return ClusterSnapshot(), _template(16000, 65536 * MI, 110), pods


def sd(n: int, low_share: float, high_pods: int) -> tuple[ClusterSnapshot, list[str]]:
    alloc = Resources({"cpu": 8000, "memory": 32 * GI, "pods": 100})
    nodes = [NodeView(f"n{i}", allocatable=alloc, capacity=alloc) for i in range(n)]
    low = int(n * low_share)
    pods: list[Pod] = []
    for i in range(n):
        pods += _pods(f"n{i}", 24 if i < low else high_pods, 100, 256 * MI, "rs", node_name=f"n{i}")
    return ClusterSnapshot(nodes, pods), [f"n{i}" for i in range(low)]


def _time(fn: Callable[[], Any]) -> tuple[float, list[float], Any]:
    median, times, _, result = _time_cpu(fn)
    return median, times, result


def _time_cpu(fn: Callable[[], Any]) -> tuple[float, list[float], list[float], Any]:
    """Wall median of the runs after the first, every run's wall and CPU time, the last result."""
    gc.collect()
    times, cpu, result = [], [], None
    for _ in range(RUNS):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times[1:]), times, cpu, result


def _timed_once(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _su(
    name: str, build: Callable[[], tuple[ClusterSnapshot, NodeView, list[Pod]]], expected: int, target: float
) -> dict[str, Any]:
    start = time.perf_counter()
    snap, template, pods = build()
    built = time.perf_counter() - start

    def run() -> int:
        limiter = ThresholdLimiter([StaticThreshold(max_nodes=0, max_duration_s=0)])  # CA's runs: no cap
        result = estimate(snap, template, pods, limiter)
        assert len(result.scheduled) == len(pods)
        return result.node_count

    median, times, cpu, nodes = _time_cpu(run)
    global OWN_OBJECTS
    OWN_OBJECTS = True
    try:
        snap, template, pods = build()
        own_objects_s, _ = _timed_once(run)
    finally:
        OWN_OBJECTS = False
    return {
        "workload": name,
        "median_seconds": median,
        "runs": len(times) - 1,
        "nodes": nodes,
        "ca_nodes": expected,
        "same_decision": nodes == expected,
        "target_seconds": target,
        "first_run_seconds": times[0],
        "cpu_median_seconds": round(statistics.median(cpu[1:]), 4),
        "first_run_cpu_seconds": round(cpu[0], 4),
        "first_run_own_objects_seconds": own_objects_s,
        "e2e_seconds": built + times[0],
        "pods": len(pods),
        "tier": _TIER,
    }


def _sd(name: str, n: int, low_share: float, high_pods: int, expected: int, target: float) -> dict[str, Any]:
    start = time.perf_counter()
    snap, candidates = sd(n, low_share, high_pods)
    built = time.perf_counter() - start
    median, times, cpu, check = _time_cpu(lambda: simulate_removals(snap, candidates))
    removable = len(check.removable)
    return {
        "workload": name,
        "median_seconds": median,
        "runs": len(times) - 1,
        "removable": removable,
        "ca_removable": expected,
        "same_decision": removable == expected,
        "target_seconds": target,
        "first_run_seconds": times[0],
        "cpu_median_seconds": round(statistics.median(cpu[1:]), 4),
        "first_run_cpu_seconds": round(cpu[0], 4),
        "e2e_seconds": built + times[0],
        "order": "candidates n0.. in index order; round robin from the last success",
        "tier": _TIER,
    }


_AFFINITY_TIER = "every pod with required hostname anti-affinity and a zone spread (tier b)"


def _su4(target: float) -> dict[str, Any]:
    """SU-4: each group's estimate on the cluster snapshot, the pending pods grouped once."""
    start = time.perf_counter()
    world = affinity.su4()
    snap = ClusterSnapshot(world.nodes, world.running)
    built = time.perf_counter() - start

    def run() -> list[tuple[int, int]]:
        groups = group_pods(world.pending)
        out = []
        for template in world.templates:
            limiter = ThresholdLimiter([StaticThreshold(max_nodes=0, max_duration_s=0)])  # no cap
            result = estimate(snap, template, groups, limiter)
            out.append((result.node_count, len(result.scheduled)))
        return out

    median, times, cpu, decided = _time_cpu(run)
    return {
        "workload": "SU-4",
        "median_seconds": median,
        "runs": len(times) - 1,
        "nodes_per_group": dict(zip(world.groups, [n for n, _ in decided], strict=True)),
        "pods_per_group": dict(zip(world.groups, [p for _, p in decided], strict=True)),
        "target_seconds": target,
        "first_run_seconds": times[0],
        "cpu_median_seconds": round(statistics.median(cpu[1:]), 4),
        "first_run_cpu_seconds": round(cpu[0], 4),
        "per_group_median_seconds": round(median / len(world.templates), 4),
        "e2e_seconds": built + times[0],
        "pods": len(world.pending),
        "nodes": len(world.nodes),
        "running_pods": len(world.running),
        "tier": _AFFINITY_TIER,
    }


def _sd4(target: float) -> dict[str, Any]:
    start = time.perf_counter()
    nodes, pods, candidates = affinity.sd4()
    snap = ClusterSnapshot(nodes, pods)
    built = time.perf_counter() - start
    median, times, cpu, check = _time_cpu(lambda: simulate_removals(snap, candidates))
    return {
        "workload": "SD-4",
        "median_seconds": median,
        "runs": len(times) - 1,
        "removable": len(check.removable),
        "candidates": len(candidates),
        "target_seconds": target,
        "first_run_seconds": times[0],
        "cpu_median_seconds": round(statistics.median(cpu[1:]), 4),
        "first_run_cpu_seconds": round(cpu[0], 4),
        "e2e_seconds": built + times[0],
        "pods": len(pods),
        "order": "candidates n0.. in index order; round robin from the last success",
        "tier": _AFFINITY_TIER,
    }


ROWS: dict[str, Callable[[], dict[str, Any]]] = {
    "SU-1": lambda: _su("SU-1", su1, 1000, 0.020),
    "SU-2": lambda: _su("SU-2", su2, 2595, 0.050),
    "SU-3": lambda: _su("SU-3", su3, 338, 0.050),
    "SD-1": lambda: _sd("SD-1", 1000, 0.3, 56, 300, 0.100),
    "SD-2": lambda: _sd("SD-2", 5000, 0.3, 56, 1500, 2.0),
    "SD-3": lambda: _sd("SD-3", 1000, 0.1, 78, 92, 0.050),
    "SU-4": lambda: _su4(1.0),
    "SD-4": lambda: _sd4(1.0),
}


def run(only: str | None = None) -> list[dict[str, Any]]:
    """Every row, or only the one named (``python -m kubetide.bench scheduling --only SD-4``)."""
    records = [row() for name, row in ROWS.items() if only is None or name == only]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    machine = machine_loop_seconds() if records else None
    for r in records:
        r["peak_rss_mb_process"] = round(peak_mb, 1)
        r["machine_loop_seconds"] = machine
    return records
