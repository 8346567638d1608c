"""The Node objects simulated machines register, and the template their group claims.

Real Nodes carry the real machine's capacity and allocatable; the template carries what the scenario
says the provider *claims* (catalog values with ``template`` on top), which may differ: that gap is what
Cluster Autoscaler's template correction has to notice. Both get the labels a cloud's kubelet sets:
hostname, instance type, zone, os/arch, the group's labels, and ``kubetide.io/node-group`` (like EKS's
``eks.amazonaws.com/nodegroup``), so label-based tools (Escalator) can select a group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubetide.cloud.instance import NodeTemplate
from kubetide.model.node import HOSTNAME_LABEL, NodeView
from kubetide.model.scheduling_terms import Taint
from kubetide.sim.cloud.instances import SimInstance
from kubetide.sim.scenario.nodegroups import TaintSpec
from kubetide.sim.scenario.resolved import ResolvedNodeGroup

__all__ = ["GROUP_LABEL", "build_node", "build_template"]

GROUP_LABEL = "kubetide.io/node-group"
_BASE_LABELS = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}


def _labels(group: ResolvedNodeGroup, own: Mapping[str, str], hostname: str) -> dict[str, str]:
    return {**_BASE_LABELS, GROUP_LABEL: group.name, **own, HOSTNAME_LABEL: hostname}


def _taints(taints: Iterable[TaintSpec]) -> tuple[Taint, ...]:
    return tuple(Taint(t.key, t.value, t.effect) for t in taints)


def build_node(
    group: ResolvedNodeGroup, instance: SimInstance, now: float, *, ready: bool, with_provider_id: bool
) -> NodeView:
    """The Node ``instance`` registers at ``now``; ``with_provider_id=False`` for a missingProviderID fault."""
    return NodeView(
        name=instance.node_name,
        labels=_labels(group, group.labels, instance.node_name),
        allocatable=group.allocatable,
        capacity=group.capacity,
        taints=_taints(group.taints),
        ready=ready,
        provider_id=instance.provider_id if with_provider_id else "",
        creation_time=now,
        addresses=tuple(a.address for a in instance.addresses),
    )


def build_template(group: ResolvedNodeGroup) -> NodeTemplate:
    """What the provider claims for a new node of ``group``; no pods (CA adds DaemonSet pods itself)."""
    name = f"template-node-for-{group.name}"
    node = NodeView(
        name=name,
        labels=_labels(group, group.template_labels, name),
        allocatable=group.template_allocatable,
        capacity=group.template_capacity,
        taints=_taints(group.template_taints),
        ready=True,
    )
    return NodeTemplate(node=node)
