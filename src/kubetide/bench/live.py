"""Live bench: a Cluster Autoscaler world built from recorded API objects, in memory (no server).

30,000 realistic pods (:mod:`kubetide.bench.live_objects`, ~8.8 KB of JSON each) and 1,000 nodes are
served page by page (``limit=500``, as the caches list) by an httpx MockTransport, and go through the
real path: :class:`~kubetide.live.cluster_autoscaler.world.CAWorldSource`'s caches list, decode, trim and store them,
then ``world()`` converts them to views. Figures:

- ``LIVE-cold-30kpods-1knodes``: list + decode + trim + convert + World (budget 10 s), with the
  resident memory the caches and views add (budget 1 GiB);
- ``LIVE-warm-one-pod-changed``: ``world()`` after one pod changed (one view re-parsed);
- ``LIVE-warm-unchanged``: ``world()`` with nothing changed (the memoized World);
- ``LIVE-ca-loop-cold`` / ``LIVE-ca-loop-warm``: one Cluster Autoscaler loop (``run_once``) on that
  world, 1,000 of its pods pending (CA's own scalability scenario, whose bound is 10 s; budget 0.3 s):
  the first loop of a new process, then the median of the next ones;
- ``LIVE-decode-*``: decoding the 60 pod pages alone: with the caches' schema (msgspec skipping the
  fields nobody reads), as whole dicts with msgspec and with ``json``, and into lightkube's typed
  models plus turning those back into dicts (which the views need): the figures behind
  :mod:`kubetide.kube.rest`'s choice of raw JSON.

Wall-clock figures on a shared machine vary with its load; ``cpu_seconds`` is this process's CPU
time for the cold start.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any

import httpx2
import msgspec

from kubetide.bench.live_objects import node_list, pod_list
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.discovery import ServedVersions
from kubetide.kube.rest import Rest
from kubetide.kube.schema import list_decoder
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

PODS, NODES = 30_000, 1_000
COLD_TARGET_S = 10.0
LOOP_TARGET_S = 0.3
GROUPS = 5  # the recorded nodes' kubetide.io/node-group labels: group-0 .. group-4
MEMORY_BUDGET_MB = 1024.0


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _transport(pages: dict[str, list[bytes]]) -> httpx2.MockTransport:
    empty = json.dumps({"metadata": {"resourceVersion": "200000"}, "items": []}).encode()

    def handle(request: httpx2.Request) -> httpx2.Response:
        plural = request.url.path.rstrip("/").rsplit("/", 1)[-1]
        served = pages.get(plural)
        if served is None:
            return httpx2.Response(200, content=empty)
        index = int(request.url.params.get("continue", "0")) // 500
        return httpx2.Response(200, content=served[index])

    return httpx2.MockTransport(handle)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _decode_figures(pages: list[bytes]) -> list[dict[str, Any]]:
    from lightkube.core import decoders
    from lightkube.resources.core_v1 import Pod as TypedPod

    def typed() -> int:
        n = 0
        for page in pages:
            _, _, items = decoders.decode_list(page, TypedPod)
            n += len([msgspec.to_builtins(item) for item in items])
        return n

    records = []
    for name, fn in (
        ("msgspec-schema", lambda: sum(len(list_decoder("pods").decode(p)["items"]) for p in pages)),
        ("msgspec-dicts", lambda: sum(len(msgspec.json.decode(p)["items"]) for p in pages)),
        ("json-dicts", lambda: sum(len(json.loads(p)["items"]) for p in pages)),
        ("lightkube-typed-to-dicts", typed),
    ):
        gc.collect()
        seconds, count = _timed(fn)
        assert count == PODS
        records.append(
            {"workload": f"LIVE-decode-{name}", "median_seconds": seconds, "runs": 1, "pods": count}
        )
    return records


def run() -> list[dict[str, Any]]:
    pages = {"pods": pod_list(PODS, NODES), "nodes": node_list(NODES)}
    gc.collect()
    rss_before = _rss_mb()
    source = CAWorldSource(
        Rest(httpx2.Client(transport=_transport(pages), base_url="https://bench")), ServedVersions()
    )

    cpu_start = time.process_time()
    list_s, _ = _timed(lambda: [informer._list() for informer in source.informers])
    convert_s, world = _timed(source.world)
    cold_s, cold_cpu_s = list_s + convert_s, time.process_time() - cpu_start
    gc.collect()
    cache_mb = _rss_mb() - rss_before
    assert len(world.pods) == PODS and len(world.nodes) == NODES
    pending = sum(1 for p in world.pods if p.unschedulable_message)
    # One pod changes (a MODIFIED watch event): only its view is parsed again.
    changed = msgspec.json.decode(pages["pods"][0])["items"][0]
    changed["metadata"]["resourceVersion"] = "300000"
    changed["metadata"]["labels"]["changed"] = "yes"
    source.pods._apply({"type": "MODIFIED", "object": changed}, "200000")
    warm_s, warm_world = _timed(source.world)
    assert len(warm_world.pods) == PODS
    same_s, same = _timed(source.world)
    assert same is warm_world
    records: list[dict[str, Any]] = [
        {
            "workload": "LIVE-cold-30kpods-1knodes",
            "median_seconds": cold_s,
            "runs": 1,
            "target_seconds": COLD_TARGET_S,
            "cpu_seconds": round(cold_cpu_s, 2),
            "list_decode_trim_seconds": round(list_s, 2),
            "convert_to_views_seconds": round(convert_s, 2),
            "cache_memory_mb": round(cache_mb, 1),
            "memory_budget_mb": MEMORY_BUDGET_MB,
            "within_memory_budget": cache_mb <= MEMORY_BUDGET_MB,
            "pods": len(world.pods),
            "pending": pending,
            "nodes": len(world.nodes),
            "json_mb": round(sum(len(p) for pl in pages.values() for p in pl) / 2**20, 1),
        },
        {"workload": "LIVE-warm-one-pod-changed", "median_seconds": warm_s, "runs": 1},
        {"workload": "LIVE-warm-unchanged", "median_seconds": same_s, "runs": 1},
    ]
    return records + _ca_loop_figures(warm_world) + _decode_figures(pages["pods"])


def _ca_loop_figures(world: World, loops: int = 5) -> list[dict[str, Any]]:
    cloud = RecordingCloud()
    for g in range(GROUPS):
        cloud.with_group(f"group-{g}", min_size=0, max_size=400, target=NODES // GROUPS)
    for node in world.nodes:
        cloud.with_node(node.labels["kubetide.io/node-group"], node)
    now = 1_800_000_000.0
    autoscaler = StaticAutoscaler(
        cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=now - 3600
    )
    cold_s, result = _timed(lambda: autoscaler.run_once(world, now))
    warm: list[float] = []
    for k in range(loops):
        started = time.perf_counter()
        autoscaler.run_once(world, now + 10.0 * (k + 1))
        warm.append(time.perf_counter() - started)
    warm.sort()
    return [
        {
            "workload": "LIVE-ca-loop-cold",
            "median_seconds": cold_s,
            "runs": 1,
            "target_seconds": LOOP_TARGET_S,
            "scale_up": result.scale_up_result,
            "scale_down": result.scale_down_result,
            "pending": sum(1 for p in world.pods if p.unschedulable_message),
        },
        {
            "workload": "LIVE-ca-loop-warm",
            "median_seconds": warm[len(warm) // 2],
            "runs": loops,
            "target_seconds": LOOP_TARGET_S,
        },
    ]
