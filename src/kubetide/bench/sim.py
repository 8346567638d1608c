"""Simulator benchmark: a day of a 1,000-node, 30,000-pod cluster with 200 HPAs.

200 Deployments of 150 pods (200m cpu each) on 1,000 m5.2xlarge nodes, each with an HPA on cpu
(15 s sync) and its own daily traffic curve, metrics scraped every 15 s. Budget: 24 h simulated in
at most 120 s of wall time on one core (>= 720x real time).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from kubetide.sim.scenario import load_scenario, parse_scenario
from kubetide.sim.simulation import Simulation

TARGET_SECONDS = 120.0


def scenario(
    nodes: int = 1000, workloads: int = 200, pods_per_workload: int = 150, hours: float = 24
) -> dict[str, Any]:
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
                    "minSize": nodes,
                    "maxSize": nodes,
                    "initialSize": nodes,
                }
            ],
            "objects": objects,
            "traffic": traffic,
            "metrics": {"resolution": "15s", "window": "30s"},
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


def run(runs: int = 1, **size: Any) -> list[dict[str, Any]]:
    loaded = parse_scenario(scenario(**size))
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = Simulation(loaded).run()
        times.append(time.perf_counter() - start)
    assert result is not None
    wall = min(times)
    summary = result.summary.to_json()
    return [
        *([run_quickstart()] if QUICKSTART.exists() else []),
        {
            "workload": "SIM-day-1000n-30kpods-200hpa",
            "median_seconds": sorted(times)[len(times) // 2],
            "runs": runs,
            "target_seconds": TARGET_SECONDS,
            "simulated_seconds_per_wall_second": round(summary["simulated_seconds"] / wall, 1),
            "pods_max_pending": summary["pods"]["max_pending"],
            "hpa_rescales": summary["autoscalers"]["hpa"]["rescales"],
        },
    ]
