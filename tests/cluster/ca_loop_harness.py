"""A tiny in-memory cluster for StaticAutoscaler tests: nodes and pods the loop reads as its World,
the recording ClusterPort (:mod:`kubetide.testing.cluster`) that applies taints and evictions to them, and a
RecordingCloud behind it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubetide.cloud.instance import NodeTemplate
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.world import CAEvent, World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint
from kubetide.scheduling.drainability import PDB
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

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
    controllers: dict[tuple[str, str, str], int] | None = None
    daemonsets: list[Pod] = field(default_factory=list)  # one pod per DaemonSet, from its template
    events: list[CAEvent] = field(default_factory=list)
    ca: StaticAutoscaler | None = None
    deletion_passes: list[float] = field(default_factory=list)  # when run() ran deletions between loops
    api: RecordingClusterPort = field(init=False)

    def __post_init__(self) -> None:
        self.api = RecordingClusterPort(self.nodes, self.pods)
        self.cloud.on_scale_down(lambda group, name: self.nodes.pop(name, None))
        self.ca = StaticAutoscaler(self.cloud, self.api, self.options)

    # -- what the ClusterPort did
    @property
    def refuse_evictions(self) -> bool:
        return self.api.refuse_evictions

    @refuse_evictions.setter
    def refuse_evictions(self, value: bool) -> None:
        self.api.refuse_evictions = value

    @property
    def evicted(self) -> list[str]:
        return self.api.evicted

    @property
    def taint_calls(self) -> list[tuple[str, tuple[Taint, ...]]]:
        return self.api.taint_calls

    # -- building
    def add_node(self, n: NodeView, group: str) -> Harness:
        self.nodes[n.name] = n
        self.cloud.with_node(group, n)
        return self

    def add_pod(self, p: Pod) -> Harness:
        self.pods[p.name] = p
        return self

    def world(self) -> World:
        return World(
            list(self.nodes.values()),
            list(self.pods.values()),
            list(self.pdbs),
            self.config_maps,
            self.controllers,
            list(self.daemonsets),
        )

    def restart(self) -> None:
        self.ca = StaticAutoscaler(self.cloud, self.api, self.options)

    def run(self, now: float) -> LoopResult:
        """One loop, then (as the simulator's runner does) the deletion rounds it asks for before the
        next loop (``--scan-interval`` later): the drains' steps at their moments; their events and
        counts join the loop's."""
        assert self.ca is not None
        self.api.advance(now)
        result = self.ca.run_once(self.world(), now)
        due = result.deletions_due_at
        while due is not None and now < due < now + self.options.scan_interval:
            self.api.advance(due)
            later = self.ca.run_deletions(self.world(), due)
            result.events.extend(later.events)
            result.stats.add(later.stats)
            self.deletion_passes.append(due)
            due = later.deletions_due_at
        self.events.extend(result.events)
        return result

    def reasons(self, result: LoopResult | None = None) -> list[str]:
        return [e.reason for e in (result.events if result is not None else self.events)]
