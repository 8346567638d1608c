"""Live bench: a Cluster Autoscaler world built from recorded API objects, in memory (no server).

Realistic pods (:mod:`kubetide.bench.live_objects`, ~8 KB of JSON each) and nodes are served page by
page (``limit=500``, as the caches list) by an httpx MockTransport, and go through the real path:
:class:`~kubetide.live.cluster_autoscaler.world.CAWorldSource`'s caches list, decode, trim and store
them, then ``world()`` converts them to views and groups the pods by node. Figures, at 1,000 nodes /
30,000 pods and at 5,000 nodes / 150,000 pods (issue 28; rows with a ``-5k`` suffix; ``--only NAME``
runs one size):

- ``LIVE-cold-30kpods-1knodes`` (budget 10 s, 1 GiB) / ``LIVE-cold-150kpods-5knodes`` (15 s,
  3 GiB): list + decode + trim + convert + World, with its CPU time, the resident memory the caches
  and views keep (``cache_memory_mb``) and the peak the cold start adds (``peak_memory_mb``, from
  the kernel's high-water mark reset before it; the served pages are the server's and not counted);
- ``LIVE-warm-one-pod-changed``: ``world()`` after one pod changed (one view re-parsed, put in place);
- ``LIVE-warm-unchanged``: ``world()`` with nothing changed (the memoized World);
- ``LIVE-ca-loop-cold`` / ``LIVE-ca-loop-warm``: one Cluster Autoscaler loop (``run_once``) on that
  world, one pod in thirty pending (CA's own scalability scenario, whose bound is 10 s; budgets
  0.3 s at 1,000 nodes, 0.4 s / 0.2 s at 5,000): the first loop, then the median of the next ones;
- ``LIVE-decode-*`` (30,000 pods): decoding the 60 pod pages alone: with the caches' schema (msgspec
  skipping the fields nobody reads), as whole dicts with msgspec and with ``json``, and into
  lightkube's typed models plus turning those back into dicts (which the views need): the figures
  behind :mod:`kubetide.kube.rest`'s choice of raw JSON.

Wall-clock figures on a shared machine vary with its load; ``cpu_seconds`` is this process's CPU
time, and ``machine_loop_seconds`` (:func:`kubetide.bench.sim.machine_loop_seconds`, ~0.3 s on a
quiet 2-core machine) says how loaded the machine was.
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
from kubetide.bench.sim import machine_loop_seconds
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.discovery import ServedVersions
from kubetide.kube.rest import Rest
from kubetide.kube.schema import list_decoder
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

# (pods, nodes) -> the cold start's target (seconds) and peak memory budget (MB): 1,000 nodes as CA's
# scalability scenario; 5,000 nodes / 150,000 pods is issue 28's "live at 5,000 nodes".
SIZES: dict[str, tuple[int, int, float, float]] = {
    "LIVE-cold-30kpods-1knodes": (30_000, 1_000, 10.0, 1024.0),
    "LIVE-cold-150kpods-5knodes": (150_000, 5_000, 15.0, 3072.0),
}
PODS, NODES = 30_000, 1_000  # the decode figures' size
# A loop's targets by node count: the first loop (a new process) and the next ones (issue 28 item 2).
LOOP_TARGETS_S: dict[int, tuple[float, float]] = {1_000: (0.3, 0.3), 5_000: (0.4, 0.2)}
GROUPS = 5  # the recorded nodes' kubetide.io/node-group labels: group-0 .. group-4


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _rss_mb() -> float:
    return _status_mb("VmRSS")


def _reset_peak() -> bool:
    """Start the kernel's peak-RSS count (VmHWM) afresh (Linux 4.0+); False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


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


def run(only: str | None = None) -> list[dict[str, Any]]:
    if only is not None and only not in SIZES:
        raise SystemExit(f"--only: one of {', '.join(SIZES)}")
    records: list[dict[str, Any]] = []
    for name, (pods, nodes, target_s, budget_mb) in SIZES.items():
        if only in (None, name):
            records += _cold_start(name, pods, nodes, target_s, budget_mb)
            gc.collect()
    if only is None:
        records += _decode_figures(pod_list(PODS, NODES))
    return records


def _cold_start(name: str, pods: int, nodes: int, target_s: float, budget_mb: float) -> list[dict[str, Any]]:
    pages = {"pods": pod_list(pods, nodes), "nodes": node_list(nodes)}
    json_mb = sum(len(p) for pl in pages.values() for p in pl) / 2**20
    gc.collect()
    rss_before = _rss_mb()
    peak_known = _reset_peak()
    source = CAWorldSource(
        Rest(httpx2.Client(transport=_transport(pages), base_url="https://bench")), ServedVersions()
    )

    cpu_start = time.process_time()
    list_s, _ = _timed(lambda: [informer._list() for informer in source.informers])
    list_cpu_s = time.process_time() - cpu_start
    convert_s, world = _timed(source.world)
    cold_s, cold_cpu_s = list_s + convert_s, time.process_time() - cpu_start
    peak_mb = _status_mb("VmHWM") - rss_before if peak_known else None
    gc.collect()
    cache_mb = _rss_mb() - rss_before
    assert len(world.pods) == pods and len(world.nodes) == nodes
    pending = sum(1 for p in world.pods if p.unschedulable_message)
    # One pod changes (a MODIFIED watch event): only its view is parsed again.
    changed = msgspec.json.decode(pages["pods"][0])["items"][0]
    changed["metadata"]["resourceVersion"] = "300000"
    changed["metadata"]["labels"]["changed"] = "yes"
    source.pods._apply({"type": "MODIFIED", "object": changed}, "200000")
    warm_s, warm_world = _timed(source.world)
    assert len(warm_world.pods) == pods
    same_s, same = _timed(source.world)
    assert same is warm_world
    suffix = "" if nodes == NODES else f"-{nodes // 1000}k"
    records: list[dict[str, Any]] = [
        {
            "workload": name,
            "median_seconds": cold_s,
            "runs": 1,
            "target_seconds": target_s,
            "cpu_seconds": round(cold_cpu_s, 2),
            "list_decode_trim_seconds": round(list_s, 2),
            "list_decode_trim_cpu_seconds": round(list_cpu_s, 2),
            "convert_to_views_seconds": round(convert_s, 2),
            "cache_memory_mb": round(cache_mb, 1),
            "peak_memory_mb": None if peak_mb is None else round(peak_mb, 1),
            "memory_budget_mb": budget_mb,
            "within_memory_budget": (cache_mb if peak_mb is None else peak_mb) <= budget_mb,
            "pods": len(world.pods),
            "pending": pending,
            "nodes": len(world.nodes),
            "json_mb": round(json_mb, 1),
            "machine_loop_seconds": machine_loop_seconds(),
        },
        {"workload": f"LIVE-warm-one-pod-changed{suffix}", "median_seconds": warm_s, "runs": 1},
        {"workload": f"LIVE-warm-unchanged{suffix}", "median_seconds": same_s, "runs": 1},
    ]
    return records + _ca_loop_figures(warm_world, nodes, suffix)


def _ca_loop_figures(world: World, nodes: int, suffix: str, loops: int = 5) -> list[dict[str, Any]]:
    cold_target, warm_target = LOOP_TARGETS_S[nodes]
    cloud = RecordingCloud()
    for g in range(GROUPS):
        cloud.with_group(f"group-{g}", min_size=0, max_size=2 * nodes // GROUPS, target=nodes // GROUPS)
    for node in world.nodes:
        cloud.with_node(node.labels["kubetide.io/node-group"], node)
    now = 1_800_000_000.0
    autoscaler = StaticAutoscaler(
        cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=now - 3600
    )
    cpu_start = time.process_time()
    cold_s, result = _timed(lambda: autoscaler.run_once(world, now))
    cold_cpu_s = time.process_time() - cpu_start
    warm: list[float] = []
    warm_cpu: list[float] = []
    for k in range(loops):
        started, cpu_start = time.perf_counter(), time.process_time()
        autoscaler.run_once(world, now + 10.0 * (k + 1))
        warm.append(time.perf_counter() - started)
        warm_cpu.append(time.process_time() - cpu_start)
    warm.sort()
    warm_cpu.sort()
    return [
        {
            "workload": f"LIVE-ca-loop-cold{suffix}",
            "median_seconds": cold_s,
            "runs": 1,
            "target_seconds": cold_target,
            "cpu_seconds": round(cold_cpu_s, 3),
            "scale_up": result.scale_up_result,
            "scale_down": result.scale_down_result,
            "pending": sum(1 for p in world.pods if p.unschedulable_message),
        },
        {
            "workload": f"LIVE-ca-loop-warm{suffix}",
            "median_seconds": warm[len(warm) // 2],
            "runs": loops,
            "target_seconds": warm_target,
            "cpu_seconds": round(warm_cpu[len(warm_cpu) // 2], 3),
        },
    ]
