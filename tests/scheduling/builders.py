"""Builders for scheduling tests: nodes and pods with only what a test cares about."""

from __future__ import annotations

from kubetide.model.node import ZONE_LABEL, NodeView
from kubetide.model.pod import Container, HostPort, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import (
    NodeSelectorTerm,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kubetide.model.selectors import LabelSelector, Requirement

MI = 1024 * 1024
GI = 1024 * MI


def node(
    name: str,
    cpu: int = 4000,
    mem: int = 16 * GI,
    pods: int = 110,
    *,
    zone: str | None = None,
    labels: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    unschedulable: bool = False,
    extra: dict[str, int] | None = None,
) -> NodeView:
    lab = dict(labels or {})
    if zone is not None:
        lab[ZONE_LABEL] = zone
    alloc = Resources({"cpu": cpu, "memory": mem, "pods": pods, **(extra or {})})
    return NodeView(
        name, labels=lab, allocatable=alloc, capacity=alloc, taints=taints, unschedulable=unschedulable
    )


def owner(name: str = "rs", kind: str = "ReplicaSet") -> tuple[OwnerRef, ...]:
    return (OwnerRef(kind, name, f"uid-{kind}-{name}", True),)


def pod(
    name: str,
    cpu: int = 100,
    mem: int = 100 * MI,
    *,
    namespace: str = "default",
    owners: tuple[OwnerRef, ...] | None = None,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    extra: dict[str, int] | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: tuple[NodeSelectorTerm, ...] | None = None,
    tolerations: tuple[Toleration, ...] = (),
    ports: tuple[int, ...] = (),
    anti: tuple[PodAffinityTerm, ...] = (),
    affine: tuple[PodAffinityTerm, ...] = (),
    spread: tuple[TopologySpreadConstraint, ...] = (),
    priority: int = 0,
    annotations: dict[str, str] | None = None,
) -> Pod:
    req = {"cpu": cpu, "memory": mem, **(extra or {})}
    container = Container("app", Resources(req), host_ports=tuple(HostPort(p) for p in ports))
    return Pod(
        name,
        namespace=namespace,
        owners=owner() if owners is None else owners,
        labels=dict(labels or {}),
        annotations=dict(annotations or {}),
        containers=(container,),
        node_name=node_name,
        node_selector=dict(node_selector or {}),
        required_node_affinity=affinity,
        tolerations=tolerations,
        pod_anti_affinity=anti,
        pod_affinity=affine,
        topology_spread=spread,
        priority=priority,
        phase="Running" if node_name else "Pending",
    )


def selector(**labels: str) -> LabelSelector:
    return LabelSelector(tuple(Requirement(k, "In", (v,)) for k, v in sorted(labels.items())))


def term(key: str, op: str, *values: str) -> NodeSelectorTerm:
    return NodeSelectorTerm((Requirement(key, op, values),))


def spread(
    key: str, max_skew: int = 1, min_domains: int | None = None, **labels: str
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(max_skew, key, "DoNotSchedule", selector(**labels), min_domains)
