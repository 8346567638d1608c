"""Live bench against a real API server: 1,000 Node objects, then the cold start and one CA loop.

Needs a cluster (``make cluster-up``; the kubeconfig from ``$KUBECONFIG`` or ``.e2e/kubeconfig``), so
it is not part of ``make bench``'s default suites: ``python -m kubetide.bench live-server``. It creates
``NODES`` Node objects labelled ``kubetide-bench`` (not ``kubetide.io/node-group``, so the node agent
leaves them alone), measures what a starting cluster autoscaler pays (discovery, listing every cache,
the first World) and one ``run_once`` on it, then deletes the nodes. Figures are wall-clock on the
machine that also runs the API server and etcd.
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.client import make_http_client
from kubetide.kube.discovery import discover
from kubetide.kube.rest import KubeStatusError, Rest
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

NODES = 1_000
LABEL = "kubetide-bench"
COLD_TARGET_S = 10.0
LOOP_TARGET_S = 0.3


def _node(i: int) -> dict[str, Any]:
    cap = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"bench-{i:04d}", "labels": {LABEL: f"group-{i % 5}"}},
        "spec": {"providerID": f"bench://group-{i % 5}/bench-{i:04d}"},
        "status": {"capacity": cap, "allocatable": cap},
    }


def _kubeconfig() -> str | None:
    if os.environ.get("KUBECONFIG"):
        return None
    local = Path(".e2e/kubeconfig")
    return str(local) if local.exists() else None


def run() -> list[dict[str, Any]]:
    rest = Rest(make_http_client(_kubeconfig()))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: rest.request("POST", "/api/v1/nodes", body=_node(i)), range(NODES)))
    try:
        started = time.perf_counter()
        source = CAWorldSource(rest, discover(rest)).start()
        source.wait_synced(120.0)
        world = source.world()
        cold_s = time.perf_counter() - started
        cloud = RecordingCloud()
        for g in range(5):
            cloud.with_group(f"group-{g}", min_size=0, max_size=400, target=NODES // 5)
        for node in world.nodes:
            if LABEL in node.labels:
                cloud.with_node(node.labels[LABEL], node)
        now = time.time()
        autoscaler = StaticAutoscaler(
            cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=now - 3600
        )
        loop_started = time.perf_counter()
        autoscaler.run_once(world, now)
        loop_s = time.perf_counter() - loop_started
        source.stop()
    finally:
        with ThreadPoolExecutor(8) as pool:

            def delete(i: int) -> None:
                with contextlib.suppress(KubeStatusError):  # already gone
                    rest.request("DELETE", f"/api/v1/nodes/bench-{i:04d}")

            list(pool.map(delete, range(NODES)))
    return [
        {
            "workload": "LIVE-SERVER-cold-1knodes",
            "median_seconds": cold_s,
            "runs": 1,
            "target_seconds": COLD_TARGET_S,
            "nodes": len(world.nodes),
            "pods": len(world.pods),
        },
        {
            "workload": "LIVE-SERVER-ca-loop",
            "median_seconds": loop_s,
            "runs": 1,
            "target_seconds": LOOP_TARGET_S,
        },
    ]
