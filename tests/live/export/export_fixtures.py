"""The recorded cluster of the export tests: objects as a Kubernetes 1.20 API server lists them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from kubetide.live.export import ClusterObjects

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8"))


_NODES = _load("cluster-1.20-nodes.yaml")
_WORKLOADS = _load("cluster-1.20-workloads.yaml")
_POLICIES = _load("cluster-1.20-policies.yaml")


def recorded_cluster(**replace: list[dict[str, Any]]) -> ClusterObjects:
    """A fresh copy of the recorded cluster (tests may mutate it), some lists replaced."""
    lists: dict[str, Any] = {"nodes": _NODES, **_WORKLOADS, **_POLICIES}
    lists.update(replace)
    return ClusterObjects(**copy.deepcopy(lists))


def node(
    name: str, labels: dict[str, str], taints: list[dict[str, str]] | None = None, **status: Any
) -> dict[str, Any]:
    """A minimal Node as listed: labels, taints, capacity and allocatable."""
    capacity = status.get("capacity", {"cpu": "2", "memory": "8Gi", "pods": "110"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, **labels},
            "uid": f"uid-{name}",
        },
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": capacity, "allocatable": status.get("allocatable", capacity)},
    }
