"""Builders for cluster-autoscaler tests: nodes with readiness and age, clouds with groups."""

from __future__ import annotations

from kubetide.model.node import NodeView
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint

LONG_AGO = -100_000.0


def cnode(
    name: str,
    *,
    ready: bool = True,
    created: float = LONG_AGO,
    taints: tuple[Taint, ...] = (),
    cpu: int = 1000,
    mem: int = 1000,
    annotations: dict[str, str] | None = None,
) -> NodeView:
    alloc = Resources({"cpu": cpu, "memory": mem, "pods": 110})
    return NodeView(
        name,
        labels={"kubernetes.io/hostname": name},
        annotations=dict(annotations or {}),
        allocatable=alloc,
        capacity=alloc,
        taints=taints,
        ready=ready,
        provider_id=name,
        creation_time=created,
    )
