"""Builders for simulated-cluster tests: nodes, workload manifests, an event list."""

from __future__ import annotations

from typing import Any

from kubetide.clock import VirtualClock
from kubetide.model.node import NodeView
from kubetide.model.resources import Resources
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.rng import RngFactory


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[float, str, str, str, str, dict[str, Any]]] = []

    def emit(
        self,
        t: float,
        source: str,
        reason: str,
        object: str,
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.items.append((t, source, reason, object, message, data or {}))

    def reasons(self, source: str | None = None) -> list[str]:
        return [e[2] for e in self.items if source is None or e[1] == source]


def node(
    name: str, cpu: int = 2000, memory: int = 8 * 2**30, pods: int = 110, labels: dict[str, str] | None = None
) -> NodeView:
    allocatable = Resources({"cpu": cpu, "memory": memory, "pods": pods})
    return NodeView(
        name,
        labels={"kubernetes.io/hostname": name, **(labels or {})},
        allocatable=allocatable,
        capacity=allocatable,
    )


def cluster() -> tuple[VirtualClock, SimCluster, Events]:
    engine = VirtualClock()
    events = Events()
    return engine, SimCluster(engine, events, RngFactory(7)), events


def add_ready_node(c: SimCluster, n: NodeView, t: float = 0.0, group: str = "g") -> None:
    c.register_node(t, n, group, f"i-{n.name}")
    c.set_node_ready(t, n.name, True)


def deployment(
    name: str, replicas: int, cpu: str = "500m", labels: dict[str, str] | None = None, **template_meta: Any
) -> dict[str, Any]:
    pod_labels = {"app": name, **(labels or {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": pod_labels, **template_meta},
                "spec": {
                    "containers": [
                        {"name": "app", "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}
                    ]
                },
            },
        },
    }
