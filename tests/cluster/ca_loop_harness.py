"""A tiny in-memory cluster for StaticAutoscaler tests: nodes and pods the loop reads as its World,
a ClusterPort that applies taints and evictions to them, and a RecordingCloud behind it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kubetide.cloud.fake import RecordingCloud
from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import CAEvent, LoopResult, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import PDB

GIB = 2**30


def template(name: str, cpu: int = 2000, mem: int = 4 * GIB, taints: tuple[Taint, ...] = ()) -> NodeTemplate:
    alloc = Resources({"cpu": cpu, "memory": mem, "pods": 110})
    return NodeTemplate(
        NodeView(f"template-{name}", labels={"group": name}, allocatable=alloc, capacity=alloc, taints=taints)
    )


def node(
    name: str, group: str, *, cpu: int = 2000, mem: int = 4 * GIB, created: float = -10_000.0
) -> NodeView:
    alloc = Resources({"cpu": cpu, "memory": mem, "pods": 110})
    return NodeView(
        name,
        labels={"group": group, "kubernetes.io/hostname": name},
        allocatable=alloc,
        capacity=alloc,
        provider_id=name,
        creation_time=created,
    )


def pod(
    name: str,
    cpu: int = 500,
    *,
    node_name: str = "",
    created: float = -100.0,
    owner: str = "ReplicaSet",
    labels: dict[str, str] | None = None,
) -> Pod:
    return Pod(
        name,
        labels=dict(labels or {"app": "web"}),
        owners=(OwnerRef(owner, "web", "uid-web", True),),
        containers=(Container("c", requests=Resources({"cpu": cpu, "memory": 256 * 2**20})),),
        node_name=node_name,
        phase="Running" if node_name else "Pending",
        ready=True if node_name else None,
        creation_time=created,
        unschedulable_message=None if node_name else "0/1 nodes are available: 1 Insufficient cpu.",
    )


@dataclass
class Harness:
    cloud: RecordingCloud
    options: AutoscalingOptions = field(default_factory=AutoscalingOptions)
    nodes: dict[str, NodeView] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    pdbs: list[PDB] = field(default_factory=list)
    config_maps: dict[str, dict[str, str]] = field(default_factory=dict)
    refuse_evictions: bool = False
    evicted: list[str] = field(default_factory=list)
    taint_calls: list[tuple[str, tuple[Taint, ...]]] = field(default_factory=list)
    events: list[CAEvent] = field(default_factory=list)
    ca: StaticAutoscaler | None = None

    def __post_init__(self) -> None:
        self.cloud.on_scale_down(lambda group, name: self.nodes.pop(name, None))
        self.ca = StaticAutoscaler(self.cloud, self, self.options)

    # -- ClusterPort
    def set_node_taints(self, node: str, taints: tuple[Taint, ...]) -> None:
        self.taint_calls.append((node, taints))
        self.nodes[node] = replace(self.nodes[node], taints=taints)

    def evict(self, p: Pod) -> bool:
        if self.refuse_evictions:
            return False
        self.evicted.append(p.name)
        del self.pods[p.name]
        return True

    # -- building
    def add_node(self, n: NodeView, group: str) -> Harness:
        self.nodes[n.name] = n
        self.cloud.with_node(group, n)
        return self

    def add_pod(self, p: Pod) -> Harness:
        self.pods[p.name] = p
        return self

    def world(self) -> World:
        return World(list(self.nodes.values()), list(self.pods.values()), list(self.pdbs), self.config_maps)

    def restart(self) -> None:
        self.ca = StaticAutoscaler(self.cloud, self, self.options)

    def run(self, now: float) -> LoopResult:
        assert self.ca is not None
        result = self.ca.run_once(self.world(), now)
        self.events.extend(result.events)
        return result

    def reasons(self, result: LoopResult | None = None) -> list[str]:
        return [e.reason for e in (result.events if result is not None else self.events)]
