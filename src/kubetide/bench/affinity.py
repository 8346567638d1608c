"""The affinity-heavy fixtures SU-4 and SD-4 (``docs/perf-fixtures.md``), generated in code.

SU-4: 5,000 existing nodes (8 CPU / 32 GiB / 110 pods) in 10 node groups of 500 and 3 zones (group
``g`` in ``zone-(g mod 3)``: 2,000 / 1,500 / 1,500 nodes), each running 10 pods of 100 resident
Deployments (700m / 2 GiB each, required hostname anti-affinity to their own Deployment; 50,000
running pods, so every node has 1,000m, 12 GiB and 100 pod slots left), and 50,000 pending pods of 500
Deployments of 100 replicas, each with required hostname anti-affinity to its own Deployment and a
zone spread constraint (maxSkew 1, DoNotSchedule); their sizes cycle over 250 / 375 / 500 / 625m CPU
and 512 Mi / 1 Gi / 1.5 Gi.

SD-4: SD-2's shape (5,000 nodes of 8 CPU / 32 GiB / 100 pods, the first 30% with 24 pods of
100m / 256 Mi, the others with 56) in 3 zones (node ``i`` in ``zone-(i mod 3)``), where every pod
belongs to one of 100 Deployments and carries required hostname anti-affinity to its own Deployment
and a zone spread constraint (maxSkew 1). Nodes ``3j``, ``3j+1`` and ``3j+2`` run the same
Deployments (``(7j + k) mod 100`` for ``k`` below the node's pod count), so each Deployment is spread
evenly over the zones, as the scheduler would have left it. Candidates are the 1,500 low nodes in
index order; every node is a destination.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL, NodeView
from kubetide.model.pod import Container, OwnerRef, Pod
from kubetide.model.resources import Resources
from kubetide.model.scheduling_terms import PodAffinityTerm, TopologySpreadConstraint
from kubetide.model.selectors import LabelSelector, Requirement

__all__ = ["GROUP_LABEL", "Su4", "sd4", "su4"]

MI = 1024 * 1024
GI = 1024 * MI
GROUP_LABEL = "kubetide.io/node-group"
UNSCHEDULABLE = "0/5000 nodes are available: 5000 node(s) didn't match pod anti-affinity rules."

SU4_NODES = 5_000
SU4_GROUPS = 10
SU4_RESIDENTS = 100  # resident Deployments, 10 pods on every node
SU4_RESIDENTS_PER_NODE = 10
SU4_DEPLOYMENTS = 500
SU4_REPLICAS = 100


def zone_of_group(group: int) -> str:
    return f"zone-{group % 3}"


def _constraints(app: str, spread: bool) -> dict[str, object]:
    selector = LabelSelector((Requirement("app", "In", (app,)),))
    out: dict[str, object] = {"pod_anti_affinity": (PodAffinityTerm(selector, HOSTNAME_LABEL),)}
    if spread:
        out["topology_spread"] = (TopologySpreadConstraint(1, ZONE_LABEL, "DoNotSchedule", selector),)
    return out


@dataclass(frozen=True, slots=True)
class _Template:
    """One Deployment's pod template: the objects its pods share (as the simulator and the live caches
    share them)."""

    app: str
    owners: tuple[OwnerRef, ...]
    containers: tuple[Container, ...]
    constraints: dict[str, object]

    def pod(self, name: str, **fields: object) -> Pod:
        return Pod(
            name,
            namespace="shop",
            uid=f"uid-{name}",
            labels={"app": self.app, "pod-template-hash": "5f7b9c"},
            owners=self.owners,
            containers=self.containers,
            **self.constraints,  # type: ignore[arg-type]
            **fields,  # type: ignore[arg-type]
        )


def _template(app: str, cpu: int, mem: int, spread: bool) -> _Template:
    owners = (OwnerRef("ReplicaSet", f"{app}-5f7b9c", f"uid-rs-{app}", True),)
    containers = (Container("app", Resources({"cpu": cpu, "memory": mem})),)
    return _Template(app, owners, containers, _constraints(app, spread))


@dataclass(frozen=True, slots=True)
class Su4:
    nodes: list[NodeView]
    running: list[Pod]  # bound to ``nodes``
    pending: list[Pod]
    templates: list[NodeView]  # one per group, as CA builds them from a node of the group

    @property
    def groups(self) -> list[str]:
        return [t.labels[GROUP_LABEL] for t in self.templates]


def su4_node(i: int, group: int) -> NodeView:
    alloc = Resources({"cpu": 8000, "memory": 32 * GI, "pods": 110})
    labels = {GROUP_LABEL: f"group-{group}", HOSTNAME_LABEL: f"node-{i}", ZONE_LABEL: zone_of_group(group)}
    return NodeView(
        f"node-{i}", labels=labels, allocatable=alloc, capacity=alloc, provider_id=f"fake://node-{i}"
    )


def su4(nodes: int = SU4_NODES, deployments: int = SU4_DEPLOYMENTS, replicas: int = SU4_REPLICAS) -> Su4:
    """Fresh objects for SU-4 (smaller sizes for tests)."""
    per_group = nodes // SU4_GROUPS
    node_views = [su4_node(i, i // per_group) for i in range(nodes)]
    residents = [_template(f"resident-{r}", 700, 2 * GI, spread=False) for r in range(SU4_RESIDENTS)]
    running = []
    for i, node in enumerate(node_views):
        for k in range(SU4_RESIDENTS_PER_NODE):
            tpl = residents[(SU4_RESIDENTS_PER_NODE * i + k) % SU4_RESIDENTS]
            running.append(tpl.pod(f"{tpl.app}-n{i}", node_name=node.name, phase="Running"))
    pending = []
    for d in range(deployments):
        tpl = _template(f"web-{d}", 250 + 125 * (d % 4), 512 * MI * (1 + d % 3), spread=True)
        for k in range(replicas):
            pending.append(tpl.pod(f"{tpl.app}-{k}", unschedulable_message=UNSCHEDULABLE))
    templates = []
    for g in range(SU4_GROUPS):
        view = node_views[g * per_group]
        labels = {**view.labels, HOSTNAME_LABEL: f"template-group-{g}"}
        templates.append(NodeView(f"template-group-{g}", labels=labels, allocatable=view.allocatable))
    return Su4(node_views, running, pending, templates)


SD4_APPS = 100


def sd4(
    n: int = 5_000, low_share: float = 0.3, low_pods: int = 24, high_pods: int = 56
) -> tuple[list[NodeView], list[Pod], list[str]]:
    """Fresh objects for SD-4: nodes, their pods, and the candidates (the low nodes, in order)."""
    alloc = Resources({"cpu": 8000, "memory": 32 * GI, "pods": 100})
    nodes = [
        NodeView(f"n{i}", labels={ZONE_LABEL: f"zone-{i % 3}"}, allocatable=alloc, capacity=alloc)
        for i in range(n)
    ]
    apps = [_template(f"app-{a}", 100, 256 * MI, spread=True) for a in range(SD4_APPS)]
    low = int(n * low_share)
    pods = []
    for i in range(n):
        j = i // 3
        for k in range(low_pods if i < low else high_pods):
            tpl = apps[(7 * j + k) % SD4_APPS]
            pods.append(tpl.pod(f"{tpl.app}-n{i}", node_name=f"n{i}", phase="Running"))
    return nodes, pods, [f"n{i}" for i in range(low)]
