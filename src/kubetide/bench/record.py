"""Record bench: a synthetic day of a 1,000-node cluster through ``kubetide record``'s recorder.

The cluster: 1,000 nodes and 30,000 pods as a 1.20+ API server returns them
(:mod:`kubetide.bench.live_objects`), 300 Deployments, 200 HPAs; listed page by page by the real watch
caches over an httpx MockTransport (the test double of :mod:`kubetide.testing.apiserver`'s kind), then
a day of watch events decoded and applied by those caches as their watch threads do: pods deleted and
created (17,280 a day), replicas changed by the HPAs every 5 minutes, a node added and one removed
every 30 minutes in a group no autoscaler manages, a cluster autoscaler Event every 10 seconds and
repeats of it, Events expiring after an hour. The recorder polls every ``POLL_S`` simulated seconds on
a fake clock and samples the HPAs' metrics (a metrics port answering for every pod) every 15 s,
writing to a temporary directory.

Figures: the process' resident memory after the caches listed, then at 6, 12 and 24 hours, and its
peak (budget: 1 GiB for the day); the CPU time per simulated hour; what was written.
"""

from __future__ import annotations

import copy
import json
import resource
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from kubetide.bench.live_objects import _node, _pod
from kubetide.hpa.ports import PodMetric
from kubetide.kube.rest import Rest
from kubetide.live.export.fit import Problem
from kubetide.live.record.files import Layout
from kubetide.live.record.recorder import Recorder, RecordingSources
from kubetide.live.record.settings import RecordSettings
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.selectors import LabelSelector

__all__ = ["run"]

NODES, PODS, DEPLOYMENTS, HPAS = 1_000, 30_000, 300, 200
POLL_S = 10.0
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


def _list(kind: str, items: Sequence[Mapping[str, Any]]) -> list[bytes]:
    pages = []
    for start in range(0, max(len(items), 1), 500):
        meta: dict[str, Any] = {"resourceVersion": "200000"}
        if start + 500 < len(items):
            meta["continue"] = str(start + 500)
        pages.append(
            json.dumps({"kind": kind, "metadata": meta, "items": list(items[start : start + 500])}).encode()
        )
    return pages


class _Server:
    """Lists page by page; a watch stays open, idle, until the bench ends (its events are applied to
    the caches directly, as their threads would)."""

    def __init__(self, lists: dict[str, list[bytes]]) -> None:
        self.lists = lists
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
        pages = self.lists.get(plural) or _list("List", [])
        index = int(request.url.params.get("continue", "0")) // 500
        return httpx2.Response(200, content=pages[min(index, len(pages) - 1)])


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


def run(hours: float = 24.0) -> list[dict[str, Any]]:
    pods = [_pod(i, NODES) for i in range(PODS)]
    for i, pod in enumerate(pods):
        pod["metadata"]["labels"] = {"app": f"app-{i % DEPLOYMENTS}"}
    names: dict[str, list[str]] = {}
    for pod in pods:
        names.setdefault(pod["metadata"]["labels"]["app"], []).append(pod["metadata"]["name"])
    server = _Server(
        {
            "pods": _list("PodList", pods),
            "nodes": _list("NodeList", [_node(i) for i in range(NODES)]),
            "deployments": _list("DeploymentList", [_deployment(i) for i in range(DEPLOYMENTS)]),
            "horizontalpodautoscalers": _list("HorizontalPodAutoscalerList", [_hpa(i) for i in range(HPAS)]),
        }
    )
    template_pod = copy.deepcopy(pods[0])
    del pods
    rest = Rest(httpx2.Client(transport=httpx2.MockTransport(server.handle), base_url="https://k8s.bench"))
    clock = [START]
    settings = RecordSettings(
        name="bench",
        duration=hours * 3600,
        interval=15.0,
        flush_every=60.0,
        autoscalers={"hpa": {"enabled": True, "flags": {}}},
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
    rv = 300_000
    created = 0
    alive_events: list[tuple[float, str]] = []
    cpu_start = time.process_time()
    t = 0.0
    while True:
        t += POLL_S
        clock[0] = START + t
        rv += 1
        # Pod churn: two pods a poll come, pending, and the two of the poll before go (a Job-like load).
        for _ in range(2):
            victim = f"default/app-{(created - 2) % DEPLOYMENTS}-{created}" if created >= 2 else None
            if victim and pod_cache.get(victim) is not None:
                pod_cache._apply({"type": "DELETED", "object": pod_cache.get(victim)}, str(rv))
            new = copy.deepcopy(template_pod)
            new["metadata"].update(
                name=f"app-{created % DEPLOYMENTS}-{created + 2}",
                resourceVersion=str(rv),
                creationTimestamp=_iso(t),
            )
            new["metadata"]["labels"] = {"app": f"app-{created % DEPLOYMENTS}"}
            new["spec"].pop("nodeName", None)
            new["status"] = {"phase": "Pending"}
            pod_cache._apply(
                {"type": "ADDED", "object": decode_pod.decode(json.dumps(new).encode())}, str(rv)
            )
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
        alive_events.append((t, f"kube-system/{uid}"))
        while alive_events and alive_events[0][0] < t - 3600:  # the API server keeps Events an hour
            _, key = alive_events.pop(0)
            gone = events.get(key)
            if gone is not None:
                events._apply({"type": "DELETED", "object": gone}, str(rv))
        done = recorder.step()
        for hour in (6, 12, 24):
            if t == hour * 3600:
                figures[f"rss_at_{hour}h_mb"] = round(_rss_mb(), 1)
        if done:
            break
    cpu = time.process_time() - cpu_start
    recorder.close()
    server.done.set()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    written = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    figures.update(
        peak_rss_mb=round(peak, 1),
        memory_budget_mb=MEMORY_BUDGET_MB,
        cpu_seconds_per_simulated_hour=round(cpu / hours, 2),
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
