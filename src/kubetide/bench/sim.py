"""Simulator benchmark: a day of a 1,000-node, 30,000-pod cluster with 200 HPAs (and the same day with
the cluster autoscaler on: issue 28's target, >= 5,000x real time; and that day at 5,000 nodes,
150,000 pods and 1,000 HPAs: >= 1,000x, under 4 GiB).

200 Deployments of 150 pods (200m cpu each) on 1,000 m5.2xlarge nodes, each with an HPA on cpu
(15 s sync) and its own daily traffic curve, metrics scraped every 15 s. Target (issue 12): 24 h
simulated in at most 28.8 s of wall time on one core (>= 3,000x real time), with the peak memory
reported. ``machine_loop_seconds`` is a 10-million-step Python loop timed beside it: the figures of two
machines compare only together with it (the interpreters these machines run differ ~3x in speed).
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from kubetide.sim.scenario import load_scenario, parse_scenario
from kubetide.sim.simulation import Simulation

TARGET_SECONDS = 24 * 3600 / 3000.0  # issue 12: >= 3,000x real time


def scenario(
    nodes: int = 1000,
    workloads: int = 200,
    pods_per_workload: int = 150,
    hours: float = 24,
    cluster_autoscaler: bool = False,
) -> dict[str, Any]:
    """``cluster_autoscaler``: CA on (10 s loops) over the group, which may then grow to 1.5x and
    shrink to half its initial size."""
    objects: list[dict[str, Any]] = []
    traffic = []
    for i in range(workloads):
        name = f"svc-{i:03d}"
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name},
                "spec": {
                    "replicas": pods_per_workload,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {
                            "containers": [
                                {"name": "app", "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}}}
                            ]
                        },
                    },
                },
            }
        )
        objects.append(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": name},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                    "minReplicas": pods_per_workload // 2,
                    "maxReplicas": pods_per_workload * 2,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 70},
                            },
                        }
                    ],
                },
            }
        )
        # ~100 m cpu per pod on average (50 % of request) with a daily swing; phases spread over the day.
        traffic.append(
            {
                "target": f"Deployment/default/{name}",
                "rps": {
                    "type": "sine",
                    "base": pods_per_workload * 20,
                    "amplitude": pods_per_workload * 8,
                    "period": "24h",
                    "phase": f"{(i * 7) % 24}h",
                },
                "cpuPerRequest": "5m",
            }
        )
    return {
        "apiVersion": "kubetide.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "bench-day"},
        "spec": {
            "duration": int(hours * 3600),
            "seed": 1,
            "nodeGroups": [
                {
                    "name": "general",
                    "instanceType": "m5.2xlarge",
                    "minSize": nodes // 2 if cluster_autoscaler else nodes,
                    "maxSize": nodes * 3 // 2 if cluster_autoscaler else nodes,
                    "initialSize": nodes,
                }
            ],
            "objects": objects,
            "traffic": traffic,
            "metrics": {"resolution": "15s", "window": "30s"},
            **(
                {"autoscalers": {"clusterAutoscaler": {"enabled": True, "flags": {"scan-interval": "10s"}}}}
                if cluster_autoscaler
                else {}
            ),
        },
    }


QUICKSTART = Path(__file__).parents[3] / "examples" / "quickstart.yaml"
QUICKSTART_TARGET_SECONDS = 10.0


def run_quickstart(runs: int = 5) -> dict[str, Any]:
    """The quickstart as ``make demo`` runs it (simulation only; writing the report is extra)."""
    loaded = load_scenario(QUICKSTART)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        Simulation(loaded).run()
        times.append(time.perf_counter() - start)
    return {
        "workload": "SIM-quickstart-24h",
        "median_seconds": statistics.median(times),
        "runs": runs,
        "target_seconds": QUICKSTART_TARGET_SECONDS,
    }


def machine_loop_seconds() -> float:
    """A fixed Python workload (10 million loop steps): how fast this machine's interpreter is."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return round(time.perf_counter() - start, 2)


def run_day(runs: int = 1, **size: Any) -> dict[str, Any]:
    loaded = parse_scenario(scenario(**size))
    times = []
    result = None
    quiet = syncs = 0
    for _ in range(runs):
        start = time.perf_counter()
        sim = Simulation(loaded)
        result = sim.run()
        times.append(time.perf_counter() - start)
        if sim.hpa is not None:
            quiet, syncs = sim.hpa.driver.quiet_syncs, sim.hpa.driver.syncs
    assert result is not None
    wall = min(times)
    summary = result.summary.to_json()
    return {
        "workload": "SIM-day-1000n-30kpods-200hpa",
        "median_seconds": sorted(times)[len(times) // 2],
        "runs": runs,
        "target_seconds": TARGET_SECONDS,
        "simulated_seconds_per_wall_second": round(summary["simulated_seconds"] / wall, 1),
        "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "hpa_syncs": syncs,
        "hpa_quiet_lane_syncs": quiet,
        "pods_max_pending": summary["pods"]["max_pending"],
        "hpa_rescales": summary["autoscalers"]["hpa"]["rescales"],
        "machine_loop_seconds": machine_loop_seconds(),
    }


def run(runs: int = 1, **size: Any) -> list[dict[str, Any]]:
    return [
        *([run_quickstart()] if QUICKSTART.exists() else []),
        _fresh(run_day, runs, **size),
        _fresh(_with_cluster_autoscaler),
        _fresh(_big_day_with_cluster_autoscaler),
    ]


def _fresh(fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """``fn(*args, **kwargs)`` in a new interpreter, as ``kubetide simulate`` runs a day: after the
    other benches in one process (their objects, caches and a fragmented heap left behind), the day
    with the cluster autoscaler took ~8% longer than it does on its own. The peak memory reported is
    then the day's alone."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args, **kwargs).result()


CA_HOURS = 24.0
CA_TARGET_X = 1000.0  # issue 8: the day with the cluster autoscaler on at >= 1,000x real time


CA_DAY_TARGET_X = 5000.0  # issue 28: the 1,000-node day with the cluster autoscaler at >= 5,000x
BIG_DAY_NODES = 5000  # issue 28: 5,000 nodes, 150,000 pods, 1,000 HPAs, at >= 1,000x, under 4 GiB


def _with_cluster_autoscaler(
    nodes: int = 1000, target_x: float = CA_DAY_TARGET_X, skip_quiet_loops: bool = True
) -> dict[str, Any]:
    """The same day with the cluster autoscaler on (10 s loops): the figures are the wall time and
    simulated seconds per CPU second over the whole day (the first half hour, when the autoscaler
    first shrinks the cluster and simulates hundreds of removals a loop, included). ``nodes``: the
    cluster's size, with 30 pods and 1 HPA per 5 nodes (``scenario``'s proportions)."""
    loaded = parse_scenario(
        scenario(nodes=nodes, workloads=nodes // 5, hours=CA_HOURS, cluster_autoscaler=True)
    )
    start, cpu = time.perf_counter(), time.process_time()
    sim = Simulation(loaded, skip_quiet_loops=skip_quiet_loops)
    result = sim.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    ca = result.summary.to_json()["autoscalers"]["cluster-autoscaler"]
    assert sim.ca is not None
    return {
        "workload": f"SIM-day-{nodes}n-{nodes * 30 // 1000}kpods-{nodes // 5}hpa-with-CA",
        "median_seconds": wall,
        "runs": 1,
        "target_seconds": CA_HOURS * 3600 / target_x,
        "simulated_seconds_per_cpu_second": round(CA_HOURS * 3600 / cpu, 1),
        "real_time_x": round(CA_HOURS * 3600 / wall, 1),
        "cpu_seconds": round(cpu, 1),
        "ca_loops": ca["loops"],
        "ca_loops_skipped": sim.ca.skipper.skipped,
        "ca_loop_cpu_ms_upper_bound": round(cpu / max(ca["loops"], 1) * 1000, 1),
        "nodes_removed": ca["nodes_removed"],
        "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine_loop_seconds": machine_loop_seconds(),
    }


def _big_day_with_cluster_autoscaler() -> dict[str, Any]:
    """The day at 5,000 nodes, 150,000 pods and 1,000 HPAs (issue 28: >= 1,000x, peak memory < 4 GiB)."""
    return _with_cluster_autoscaler(BIG_DAY_NODES, CA_TARGET_X)
