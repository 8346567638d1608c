"""A recorder on in-memory watch caches and a fake clock: each test changes the cluster, steps the
recorder, and reads the files it wrote, as the e2e test does against a real API server."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubetide.commands.record import check_manifest
from kubetide.hpa.ports import MetricsSource
from kubetide.kube.discovery import ResourceKind
from kubetide.live.record.files import Layout
from kubetide.live.record.recorder import Recorder, RecordingSources
from kubetide.live.record.settings import RecordSettings, RecordState
from kubetide.sim.scenario import BUILTIN_CATALOG
from kubetide.testing.apiserver import FakeApi

Json = dict[str, Any]
START = 1_800_000_000.0  # the recording's start, Unix seconds
API_GROUPS = {
    "groups": [
        {"name": "autoscaling", "versions": [{"version": "v2"}, {"version": "v1"}]},
        {"name": "policy", "versions": [{"version": "v1"}]},
        {"name": "coordination.k8s.io", "versions": [{"version": "v1"}]},
    ]
}


def iso(t: float) -> str:
    """The RFC 3339 time ``t`` seconds after the recording's start."""
    return datetime.fromtimestamp(START + t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class MemoryCache:
    """A watch cache whose contents the test sets (``put``, ``remove``); always synced."""

    def __init__(self, rest: Any, kind: ResourceKind, convert: Any, **options: Any) -> None:
        self.kind = kind
        self.options = options
        self.store: dict[str, Json] = {}
        self.version = 0
        self._rv = 0

    def start(self) -> MemoryCache:
        return self

    def stop(self, timeout: float = 5.0) -> None:
        pass

    def wait_synced(self, timeout: float) -> bool:
        return True

    def has_synced(self) -> bool:
        return True

    def objects(self) -> list[Json]:
        return list(self.store.values())

    def get(self, key: str) -> Json | None:
        return self.store.get(key)

    def put(self, obj: Json) -> Json:
        self._rv += 1
        out = copy.deepcopy(obj)
        out.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        meta = out["metadata"]
        key = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
        self.store[key] = out
        self.version += 1
        return out

    def remove(self, key: str) -> None:
        del self.store[key]
        self.version += 1


@dataclass
class Cluster:
    """The caches by the recorder's names (``deployments``, ``nodes``, ``events:cluster-autoscaler``...)."""

    caches: dict[str, MemoryCache] = field(default_factory=dict)

    def factory(self) -> Callable[..., MemoryCache]:
        def make(rest: Any, kind: ResourceKind, convert: Any, **options: Any) -> MemoryCache:
            cache = MemoryCache(rest, kind, convert, **options)
            selector = options.get("field_selector") or ""
            if kind.plural == "events":
                name = f"events:{selector.split('=', 1)[1]}"
            elif kind.plural == "configmaps" and options.get("namespace"):
                name = "ca-status"
            elif kind.group == "autoscaling.kubetide.io":
                name = "kubetide_hpas"
            else:
                name = {"horizontalpodautoscalers": "hpas", "poddisruptionbudgets": "pdbs"}.get(
                    kind.plural, kind.plural
                )
            self.caches[name] = cache
            return cache

        return make

    def __getitem__(self, name: str) -> MemoryCache:
        return self.caches[name]


class Clock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return START + self.t


def api(kubetide_crd: bool = True) -> FakeApi:
    fake = FakeApi()
    fake.add("GET", "/apis", (200, API_GROUPS))
    if kubetide_crd:
        fake.add("GET", "/apis/autoscaling.kubetide.io/v1", (200, {"kind": "APIResourceList"}))
    return fake


def settings(**changes: Any) -> RecordSettings:
    values: dict[str, Any] = {"name": "day", "duration": 600.0, "interval": 15.0, "flush_every": 10.0}
    values.update(changes)
    return RecordSettings(**values)


def recorder(
    directory: Path,
    cluster: Cluster,
    clock: Clock,
    *,
    record_settings: RecordSettings | None = None,
    resume: RecordState | None = None,
    metrics: MetricsSource | None = None,
    group_for: Any = None,
) -> Recorder:
    sources = RecordingSources(api().rest(), check_manifest, None, metrics, frozenset(BUILTIN_CATALOG))
    made = Recorder(
        Layout(directory),
        record_settings or settings(),
        sources,
        resume=resume,
        clock=clock,
        make_informer=cluster.factory(),
    )
    return made


def deployment(name: str = "web", replicas: int = 2, namespace: str = "default", **template: Any) -> Json:
    annotations = template.pop("annotations", None)
    meta: Json = {"labels": {"app": name}}
    if annotations:
        meta["annotations"] = annotations
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": 3},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": meta,
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx",
                            "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
                            **template,
                        }
                    ]
                },
            },
        },
        "status": {"replicas": replicas, "readyReplicas": replicas},
    }


def hpa(target: str = "web", namespace: str = "default") -> Json:
    return {
        "metadata": {"name": target, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }


def node(name: str, group: str, *, ready: bool = True, created: str = "2020-01-01T00:00:00Z") -> Json:
    resources = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {
        "metadata": {"name": name, "labels": {"kubetide.io/node-group": group}, "creationTimestamp": created},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": created}
            ],
        },
    }


def pod(
    name: str,
    *,
    node_name: str = "",
    created: str,
    namespace: str = "default",
    owner: str | None = "ReplicaSet",
) -> Json:
    meta: Json = {
        "name": name,
        "namespace": namespace,
        "creationTimestamp": created,
        "labels": {"app": "web"},
    }
    if owner:
        meta["ownerReferences"] = [
            {"kind": owner, "name": "web-1", "controller": True, "apiVersion": "apps/v1", "uid": "x"}
        ]
    spec: Json = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}
