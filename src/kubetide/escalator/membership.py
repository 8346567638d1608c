"""Which pods and nodes belong to an Escalator node group (spec §2).

Escalator does no scheduling simulation: a group is the nodes carrying ``label_key=label_value`` and
the pods that *ask* for that label, by ``nodeSelector`` or by a required node-affinity ``In``
expression, wherever they run, bound or not. The group named ``default`` instead takes every pod
with no selector and no affinity at all. DaemonSet pods never count (their requests are left out of
utilisation, upstream issue #154), and the ``default`` group also skips static pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubetide.escalator.config import DEFAULT_NODE_GROUP, NodeGroupOptions
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = [
    "group_nodes",
    "group_pods",
    "is_daemonset_pod",
    "is_static_pod",
    "node_info_map",
    "pod_in_group",
]

STATIC_POD_ANNOTATION = "kubernetes.io/config.source"


def is_daemonset_pod(pod: Pod) -> bool:
    """Upstream ``PodIsDaemonSet``: any owner reference of kind DaemonSet (controller or not)."""
    return any(owner.kind == "DaemonSet" for owner in pod.owners)


def is_static_pod(pod: Pod) -> bool:
    return pod.annotations.get(STATIC_POD_ANNOTATION) == "file"


def _asks_for_label(pod: Pod, key: str, value: str) -> bool:
    if pod.node_selector.get(key) == value:
        return True
    # Only the In operator counts; NotIn/Exists/Gt/Lt on the key are ignored, as upstream.
    return any(
        expr.key == key and expr.operator == "In" and value in expr.values
        for term in pod.required_node_affinity or ()
        for expr in term.match_expressions
    )


def pod_in_group(pod: Pod, group: NodeGroupOptions) -> bool:
    """Whether ``pod``'s requests count toward ``group`` (upstream's pod filter functions)."""
    if is_daemonset_pod(pod):
        return False
    if group.name == DEFAULT_NODE_GROUP:
        # kubetide's Pod keeps required node affinity and pod (anti-)affinity; a pod whose only
        # affinity is *preferred* node affinity is counted here, where upstream would skip it.
        no_affinity = (
            pod.required_node_affinity is None and not pod.pod_affinity and not pod.pod_anti_affinity
        )
        return not is_static_pod(pod) and not pod.node_selector and no_affinity
    return _asks_for_label(pod, group.label_key, group.label_value)


def group_pods(pods: Iterable[Pod], group: NodeGroupOptions) -> list[Pod]:
    """The group's pods, in input order. The caller passes non-terminal pods only (upstream's
    informer selects ``status.phase!=Succeeded,status.phase!=Failed``); terminal ones are dropped."""
    return [p for p in pods if not p.terminal and pod_in_group(p, group)]


def group_nodes(nodes: Iterable[NodeView], group: NodeGroupOptions) -> list[NodeView]:
    """Every node labelled ``label_key=label_value``, in lister (input) order, in any state."""
    return [n for n in nodes if n.labels.get(group.label_key) == group.label_value]


def node_info_map(pods: Sequence[Pod], nodes: Sequence[NodeView]) -> Mapping[str, tuple[Pod, ...]]:
    """Node name to the group's pods bound to it; every group node has an entry, pods on other nodes
    are dropped (upstream ``CreateNodeNameToInfoMap``)."""
    out: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    for pod in pods:
        if pod.node_name in out:
            out[pod.node_name].append(pod)
    return {name: tuple(ps) for name, ps in out.items()}
