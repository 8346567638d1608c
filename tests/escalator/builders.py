"""Builders for Escalator tests: a group, its nodes and pods, the cloud group, and a tiny world that
applies decisions the way an adapter would (taints, untaints, deletions, cloud increases)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kubetide.escalator import AsgSnapshot, EscalatorDecision, GroupMemory, NodeGroupOptions
from kubetide.escalator.decision import escalator_scale_node_group
from kubetide.escalator.taints import TAINT_KEY, escalator_taint
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import Taint

KEY, VALUE = "escalator.kubetide.io/group", "default"
YEAR = 365 * 86400.0
T0 = 1_700_000_000.5  # a run starts between two whole seconds (see test_multirun_* notes)


def group(**kw: Any) -> NodeGroupOptions:
    kw.setdefault("name", "default")
    kw.setdefault("label_key", KEY)
    kw.setdefault("label_value", VALUE)
    kw.setdefault("cloud_provider_group_name", "asg")
    return NodeGroupOptions(**kw)


def node(
    name: str,
    cpu: int = 1000,
    mem: int = 1000,
    *,
    created: float = T0 - 3600,
    tainted_at: float | None = None,
    force: bool = False,
    ready: bool = True,
    cordoned: bool = False,
    annotations: dict[str, str] | None = None,
) -> NodeView:
    taints: list[Taint] = []
    if tainted_at is not None:
        taints.append(escalator_taint(tainted_at, "NoSchedule"))
    if force:
        taints.append(Taint("atlassian.com/escalator-force", "", "NoSchedule"))
    alloc = Resources({"cpu": cpu, "memory": mem})
    return NodeView(
        name,
        labels={KEY: VALUE},
        annotations=dict(annotations or {}),
        allocatable=alloc,
        capacity=alloc,
        taints=tuple(taints),
        unschedulable=cordoned,
        ready=ready,
        creation_time=created,
    )


def nodes(count: int, cpu: int = 1000, mem: int = 1000, prefix: str = "n", **kw: Any) -> list[NodeView]:
    # Creation times one second apart, oldest first, so ordering is well defined.
    base = kw.pop("created", T0 - 3600)
    return [node(f"{prefix}{i}", cpu, mem, created=base + i, **kw) for i in range(count)]


def pod(
    name: str,
    cpu: int = 0,
    mem: int = 0,
    *,
    containers: list[tuple[int, int]] | None = None,
    init: list[tuple[int, int]] | None = None,
    overhead: tuple[int, int] | None = None,
    node_name: str = "",
    phase: str = "Pending",
    daemonset: bool = False,
) -> Pod:
    specs = containers if containers is not None else [(cpu, mem)]
    return Pod(
        name,
        containers=tuple(
            Container(f"c{i}", Resources({"cpu": c, "memory": m})) for i, (c, m) in enumerate(specs)
        ),
        init_containers=tuple(
            Container(f"i{i}", Resources({"cpu": c, "memory": m})) for i, (c, m) in enumerate(init or [])
        ),
        overhead=Resources({"cpu": overhead[0], "memory": overhead[1]}) if overhead else Resources(),
        owners=(OwnerRef("DaemonSet", "ds", "uid-ds", True),) if daemonset else (),
        node_name=node_name,
        phase=phase,
    )


def pods(count: int, cpu: int, mem: int, prefix: str = "p", **kw: Any) -> list[Pod]:
    return [pod(f"{prefix}{i}", cpu, mem, **kw) for i in range(count)]


@dataclass
class World:
    """A cluster and cloud group that apply decisions; nodes the cloud adds arrive only on request."""

    group: NodeGroupOptions
    nodes: list[NodeView]
    pods: list[Pod]
    asg: AsgSnapshot
    memory: GroupMemory = field(default_factory=GroupMemory)
    size: int = -1  # instances in the cloud group

    def __post_init__(self) -> None:
        if self.size < 0:
            self.size = len(self.nodes)

    def run(self, now: float) -> EscalatorDecision:
        d = escalator_scale_node_group(self.group, self.nodes, self.pods, self.asg, self.memory, now)
        self.memory = d.memory
        by_name = {n.name: n for n in self.nodes}
        for name in d.taint:
            n = by_name[name]
            by_name[name] = replace(n, taints=(*n.taints, escalator_taint(now, d.taint_effect)))
        for name in d.untaint:
            n = by_name[name]
            by_name[name] = replace(n, taints=tuple(t for t in n.taints if t.key != TAINT_KEY))
        self.nodes = [by_name[n.name] for n in self.nodes if n.name not in d.delete]
        target = self.asg.target_size - len(d.delete) + d.increase
        self.size += d.increase - len(d.delete)  # the test cloud launches at once
        self.asg = replace(self.asg, target_size=target)
        return d
