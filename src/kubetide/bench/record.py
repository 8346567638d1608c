"""Record bench: a synthetic day of a 1,000-node cluster through ``kubetide record``'s recorder.

The cluster: 1,000 nodes and 30,000 pods as a 1.20+ API server returns them
(:mod:`kubetide.bench.live_objects`), 300 Deployments, 200 HPAs; listed page by page by the real watch
caches over an httpx MockTransport (the pages made when asked for, so the process holds no copy of the
cluster beside the recorder's), then a day of watch events decoded and applied by those caches as their
watch threads do: every 10 s two pods created and two deleted (17,280 a day) and a cluster autoscaler
Event, Events expiring after an hour; every 5 minutes the HPAs change 10 Deployments' replicas; every
30 minutes a node added and one removed in a group no autoscaler manages. The recorder polls every
``POLL_S`` simulated seconds on a fake clock (a minute's changes at once: memory follows the objects,
not how often they are read), samples the HPAs' metrics (a metrics port answering for every pod) every
15 s, and writes to a temporary directory.

Figures: the process' resident memory after the caches listed, at 1, 6, 12 and 24 hours (flat after
the first hour, the Events' lifetime: what the recorder keeps is bounded by the cluster) and its peak
(budget: 1 GiB for the day); the CPU time per poll and per simulated hour; what was written.
"""

from __future__ import annotations

import copy
import json
import resource
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from kubetide.bench.live_objects import _node, _pod
from kubetide.hpa.ports import PodMetric
from kubetide.kube.cache import object_key
from kubetide.kube.rest import Rest
from kubetide.live.export.fit import Problem
from kubetide.live.record.files import Layout
from kubetide.live.record.recorder import Recorder, RecordingSources
from kubetide.live.record.settings import RecordSettings
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.selectors import LabelSelector

__all__ = ["run"]

NODES, PODS, DEPLOYMENTS, HPAS = 1_000, 30_000, 300, 200
PAGE = 500
POLL_S = 60.0  # what happens in a poll's minute is applied at once; memory follows the objects
CHURN_EVERY = 10.0  # seconds: two pods come and two go, and one autoscaler Event
DAY_S = 86_400.0
MEMORY_BUDGET_MB = 1024.0
START = 1_800_000_000.0


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _iso(t: float) -> str:
    return datetime.fromtimestamp(START + t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _deployment(i: int) -> dict[str, Any]:
    app = f"app-{i}"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": app, "namespace": "default", "uid": f"d-{i}", "resourceVersion": str(100 + i)},
        "spec": {
            "replicas": 100,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]
                },
            },
        },
        "status": {"replicas": 100, "readyReplicas": 100},
    }


def _hpa(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": f"app-{i}",
            "namespace": "default",
            "uid": f"h-{i}",
            "resourceVersion": str(900 + i),
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"app-{i}"},
            "minReplicas": 1,
            "maxReplicas": 200,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
        },
    }


def _page(kind: str, items: Sequence[Mapping[str, Any]], start: int, total: int) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": "200000"}
    if start + PAGE < total:
        meta["continue"] = str(start + PAGE)
    return json.dumps({"kind": kind, "metadata": meta, "items": list(items)}).encode()


def _app_pod(i: int) -> dict[str, Any]:
    pod = _pod(i, NODES)
    pod["metadata"]["labels"] = {"app": f"app-{i % DEPLOYMENTS}"}
    return pod


# plural -> (list kind, how many, the maker of item i): pages are made when asked for, so the bench
# holds no copy of the cluster beside the recorder's caches (the process' memory is the recorder's).
LISTS: dict[str, tuple[str, int, Callable[[int], dict[str, Any]]]] = {
    "pods": ("PodList", PODS, _app_pod),
    "nodes": ("NodeList", NODES, _node),
    "deployments": ("DeploymentList", DEPLOYMENTS, _deployment),
    "horizontalpodautoscalers": ("HorizontalPodAutoscalerList", HPAS, _hpa),
}


class _Server:
    """Lists page by page; a watch stays open, idle, until the bench ends (its events are applied to
    the caches directly, as their threads would)."""

    def __init__(self) -> None:
        self.done = threading.Event()

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path == "/apis":
            groups = [
                {"name": g, "versions": [{"version": v}]}
                for g, v in (("autoscaling", "v2"), ("policy", "v1"), ("coordination.k8s.io", "v1"))
            ]
            return httpx2.Response(200, json={"groups": groups})
        if path.startswith("/apis/autoscaling.kubetide.io"):
            return httpx2.Response(404, json={"kind": "Status", "code": 404, "reason": "NotFound"})
        if request.url.params.get("watch") == "true":

            def idle() -> Any:
                self.done.wait()
                yield b""

            return httpx2.Response(200, content=idle())
        plural = path.rstrip("/").rsplit("/", 1)[-1]
        kind, total, make = LISTS.get(plural, ("List", 0, _deployment))
        start = int(request.url.params.get("continue", "0"))
        items = [make(i) for i in range(start, min(start + PAGE, total))]
        return httpx2.Response(200, content=_page(kind, items, start, total))


class _Metrics:
    """Every pod of a selector at 300m: the answer costs what a real one costs to read."""

    def __init__(self, pods: Mapping[str, list[str]]) -> None:
        self.pods = pods

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        app = str(selector).split("=", 1)[-1]
        return {name: PodMetric(300, START, 60.0) for name in self.pods.get(app, ())}

    def pod_metrics(self, *args: Any) -> Mapping[str, PodMetric]:
        return {}

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        return 0

    def external_metric(self, *args: Any) -> Sequence[int]:
        return []


def _no_problems(document: dict[str, Any]) -> list[Problem]:
    return []


def _event(events: Any, alive: list[tuple[float, str]], t: float, rv: int) -> None:
    """A cluster autoscaler scale-up Event at ``t``, as CA writes it on its status ConfigMap."""
    uid = f"ev-{int(t)}"
    event = {
        "metadata": {"name": uid, "namespace": "kube-system", "uid": uid, "resourceVersion": str(rv)},
        "involvedObject": {
            "kind": "ConfigMap",
            "namespace": "kube-system",
            "name": "cluster-autoscaler-status",
        },
        "reason": "ScaledUpGroup",
        "message": f"Scale-up: setting group group-1 size to {int(t) % 7 + 2} instead of {int(t) % 7 + 1} (max: 20)",
        "count": 1,
        "lastTimestamp": _iso(t),
        "source": {"component": "cluster-autoscaler"},
    }
    events._apply({"type": "ADDED", "object": event}, str(rv))
    alive.append((t, f"kube-system/{uid}"))


def run(hours: float = 24.0) -> list[dict[str, Any]]:
    names: dict[str, list[str]] = {}
    for i in range(PODS):
        app = f"app-{i % DEPLOYMENTS}"
        names.setdefault(app, []).append(f"{app}-7d9f8b6c5-{i:06x}")  # live_objects' pod names
    server = _Server()
    template_pod = _app_pod(0)
    rest = Rest(httpx2.Client(transport=httpx2.MockTransport(server.handle), base_url="https://k8s.bench"))
    clock = [START]
    settings = RecordSettings(
        name="bench",
        duration=hours * 3600,
        interval=15.0,
        flush_every=60.0,
        # A cluster autoscaler replayed: its status ConfigMap's Events are the recording's.
        autoscalers={
            "hpa": {"enabled": True, "flags": {}},
            "clusterAutoscaler": {"enabled": True, "flags": {}},
        },
    )
    directory = Path(tempfile.mkdtemp(prefix="kubetide-record-bench-"))
    recorder = Recorder(
        Layout(directory),
        settings,
        RecordingSources(rest, _no_problems, None, _Metrics(names)),
        clock=lambda: clock[0],
    )
    before = _rss_mb()
    started = time.perf_counter()
    recorder.open()
    listed_s = time.perf_counter() - started
    after_list = _rss_mb()
    figures: dict[str, Any] = {
        "rss_before_mb": round(before, 1),
        "rss_after_list_mb": round(after_list, 1),
        "list_seconds": round(listed_s, 2),
    }
    pod_cache, node_cache = recorder.informers["pods"], recorder.informers["nodes"]
    deployments = recorder.informers["deployments"]
    events = recorder.informers["events:cluster-autoscaler"]
    decode_pod = pod_cache._object_decoder  # the watch thread's own decoder
    figures["pods_listed"] = len(pod_cache.objects())
    rv = 300_000
    created = 0
    churned: deque[str] = deque()  # the churned pods alive, oldest first
    alive_events: list[tuple[float, str]] = []
    cpu_start = time.process_time()
    t = 0.0
    while True:
        t += POLL_S
        clock[0] = START + t
        rv += 1
        # Pod churn: two pods every 10 s come, pending, and the two before them go (a Job-like load).
        for _ in range(int(2 * POLL_S / CHURN_EVERY)):
            if len(churned) == 2:
                # Every churned pod goes: a victim missing from the cache would be a cluster growing by
                # 720 pods an hour, and the recorder's memory with it (as it once did: the victims'
                # keys named another namespace than the pods').
                gone = pod_cache.get(churned.popleft())
                assert gone is not None, "a churned pod is missing from the cache"
                pod_cache._apply({"type": "DELETED", "object": gone}, str(rv))
            new = copy.deepcopy(template_pod)
            new["metadata"].update(
                name=f"app-{created % DEPLOYMENTS}-{created + 2}",
                resourceVersion=str(rv),
                creationTimestamp=_iso(t),
            )
            new["metadata"]["labels"] = {"app": f"app-{created % DEPLOYMENTS}"}
            new["spec"].pop("nodeName", None)
            new["status"] = {"phase": "Pending"}
            added = decode_pod.decode(json.dumps(new).encode())
            pod_cache._apply({"type": "ADDED", "object": added}, str(rv))
            churned.append(object_key(added))
            created += 1
        if int(t) % 300 == 0:  # every 5 minutes the HPAs move 10 Deployments
            for j in range(10):
                d = copy.deepcopy(deployments.get(f"default/app-{(int(t) // 300 * 10 + j) % HPAS}"))
                assert d is not None
                d["spec"]["replicas"] = 90 + int(t) % 20
                d["metadata"]["resourceVersion"] = str(rv)
                deployments._apply({"type": "MODIFIED", "object": d}, str(rv))
        if int(t) % 1800 == 0:  # a node comes and one goes in group-0 (no autoscaler manages it)
            node = _node(NODES + int(t) // 1800)
            node["metadata"].update(resourceVersion=str(rv), creationTimestamp=_iso(t))
            node_cache._apply({"type": "ADDED", "object": node}, str(rv))
            old = node_cache.get(f"node-{int(t) // 1800 * 5 % NODES}")
            if old is not None:
                node_cache._apply({"type": "DELETED", "object": old}, str(rv))
        for tick in range(int(POLL_S / CHURN_EVERY)):
            _event(events, alive_events, t - POLL_S + (tick + 1) * CHURN_EVERY, rv)
        while alive_events and alive_events[0][0] < t - 3600:  # the API server keeps Events an hour
            _, key = alive_events.pop(0)
            gone = events.get(key)
            if gone is not None:
                events._apply({"type": "DELETED", "object": gone}, str(rv))
        done = recorder.step()
        for hour in (1, 6, 12, 24):
            if t == hour * 3600:
                figures[f"rss_at_{hour}h_mb"] = round(_rss_mb(), 1)
        if done:
            break
    cpu = time.process_time() - cpu_start
    figures["pods_at_end"] = len(pod_cache.objects())  # the churn keeps the cluster's size
    server.done.set()  # the idle watches end, so the caches stop at once
    recorder.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    written = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    figures.update(
        peak_rss_mb=round(peak, 1),
        memory_budget_mb=MEMORY_BUDGET_MB,
        cpu_seconds_per_simulated_hour=round(cpu / hours, 2),
        cpu_seconds_per_poll=round(cpu / max(hours * 3600 / POLL_S, 1), 3),
        actions=recorder.totals.actions,
        samples=recorder.totals.samples,
        events=recorder.totals.events,
        metric_rows=recorder.totals.metric_rows,
        written_mb=round(written / 2**20, 1),
        directory=str(directory),
    )
    return [
        {
            "workload": f"RECORD-day-{NODES}nodes-{PODS}pods",
            "median_seconds": cpu,
            "runs": 1,
            "simulated_hours": hours,
            **figures,
        }
    ]
