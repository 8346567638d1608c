"""Node groups from Nodes: which nodes belong together, and what a group's machines look like.

The API knows nodes, not groups: the group is read from the first group label present among the ones
managed clouds and provisioners set (:data:`GROUP_LABELS`, in that order), else from instance type and
zone. A group's machine is its nodes' most common capacity and allocatable (nodes of one group should
agree; when they do not, a note says so). Group bounds live in the cloud, not the API: they are assumed
(``minSize: 0``, ``maxSize: max(10, 2 x count)``) unless the caller gives them, and a note lists them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetide.kube.export.snapshot import Manifest

__all__ = [
    "CONTROL_PLANE_LABELS",
    "GROUP_LABELS",
    "GroupBounds",
    "NodeGroupExport",
    "export_node_groups",
]

# In order of preference: kubetide's own, then each cloud's and provisioner's group label.
GROUP_LABELS = (
    "kubetide.io/node-group",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "karpenter.sh/nodepool",
    "karpenter.sh/provisioner-name",
    "kubernetes.azure.com/agentpool",
)
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane")

# Labels each node has for itself, or that the simulator sets on every node it creates (hostname,
# group, zone, os/arch; the instance type when the group names one from the catalog).
_PER_NODE_LABELS = frozenset({"kubernetes.io/hostname", "kubetide.io/node-group"})
_SIMULATOR_LABELS = frozenset({"topology.kubernetes.io/zone", "kubernetes.io/os", "kubernetes.io/arch"})

# Taints the node lifecycle controller, the kubelet, cloud controllers and Cluster Autoscaler put on
# and take off as conditions change: a node's state now, not the group's configuration.
_LIFECYCLE_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
_LIFECYCLE_TAINTS = frozenset(
    {
        "ToBeDeletedByClusterAutoscaler",
        "DeletionCandidateOfClusterAutoscaler",
        "karpenter.sh/disrupted",  # Karpenter draining a node (v1), and before v1:
        "karpenter.sh/disruption",
        "karpenter.sh/unregistered",  # until the node registers with Karpenter
    }
)

_NAME_CHARS = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True)
class GroupBounds:
    min_size: int
    max_size: int


@dataclass(frozen=True)
class NodeGroupExport:
    """The ``spec.nodeGroups`` entries and what the user must know about them."""

    groups: list[dict[str, Any]]
    notes: list[str]
    assumed_bounds: dict[str, GroupBounds]  # groups whose bounds were not given


def _labels(node: Manifest) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def _first(labels: Mapping[str, str], keys: Iterable[str]) -> str | None:
    return next((labels[k] for k in keys if labels.get(k)), None)


def _group_name(labels: Mapping[str, str]) -> str:
    for key in GROUP_LABELS:
        if labels.get(key):
            return labels[key]
    parts = [p for p in (_first(labels, INSTANCE_TYPE_LABELS), _first(labels, ZONE_LABELS)) if p]
    return "-".join(parts) or "nodes"


def dns_name(raw: str) -> str:
    """``raw`` as a node group name (a lowercase DNS name of at most 63 characters)."""
    name = _NAME_CHARS.sub("-", raw.lower()).strip("-.")[:63].strip("-.")
    return name or "nodes"


def _most_common(values: list[dict[str, str]]) -> tuple[dict[str, str], bool]:
    """The most common mapping among ``values`` and whether they all agree."""
    counted = Counter(tuple(sorted(v.items())) for v in values)
    (best, _), *others = counted.most_common()
    return dict(best), not others


def _shared_labels(nodes: list[Manifest], catalog_type: bool) -> dict[str, str]:
    """Labels every node of the group has with one value. A cloud's group label stays (workloads
    select on it: ``nodeSelector: {eks.amazonaws.com/nodegroup: general}``); kubetide's own is set by
    the simulator, as is the instance type when the group names a catalog entry."""
    first, *rest = [_labels(n) for n in nodes]
    shared = {k: v for k, v in first.items() if all(other.get(k) == v for other in rest)}
    dropped = {*_PER_NODE_LABELS, *_SIMULATOR_LABELS, *CONTROL_PLANE_LABELS}
    if catalog_type:
        dropped.add(INSTANCE_TYPE_LABELS[0])
    return {k: v for k, v in sorted(shared.items()) if k not in dropped}


def _taints(node: Manifest) -> list[dict[str, str]]:
    out = []
    for taint in (node.get("spec") or {}).get("taints") or []:
        key = str(taint.get("key", ""))
        if key in _LIFECYCLE_TAINTS or key.startswith(_LIFECYCLE_TAINT_PREFIXES):
            continue
        entry = {"key": key, "effect": str(taint.get("effect", ""))}
        if taint.get("value"):
            entry["value"] = str(taint["value"])
        out.append(entry)  # timeAdded dropped: when, not what
    return out


def _shared_taints(nodes: list[Manifest]) -> list[dict[str, str]]:
    first, *rest = [_taints(n) for n in nodes]
    return [t for t in first if all(t in other for other in rest)]


def _quantities(node: Manifest, field: str) -> dict[str, str]:
    return {k: str(v) for k, v in ((node.get("status") or {}).get(field) or {}).items()}


def _group(
    name: str, nodes: list[Manifest], catalog: Collection[str], bounds: GroupBounds, notes: list[str]
) -> dict[str, Any]:
    capacity, same_capacity = _most_common([_quantities(n, "capacity") for n in nodes])
    allocatable, same_allocatable = _most_common([_quantities(n, "allocatable") for n in nodes])
    if not (same_capacity and same_allocatable):
        notes.append(
            f"node group {name}: its nodes differ in capacity or allocatable; "
            "the most common values are used for every node"
        )
    labels_of = [_labels(n) for n in nodes]
    instance_type = Counter(_first(ls, INSTANCE_TYPE_LABELS) for ls in labels_of).most_common(1)[0][0]
    zones = Counter(_first(ls, ZONE_LABELS) for ls in labels_of)
    zone = zones.most_common(1)[0][0]
    if len(zones) > 1:
        notes.append(
            f"node group {name}: nodes in {len(zones)} zones ({', '.join(sorted(str(z) for z in zones))}); "
            f"the simulated group has one, {zone}"
        )
    in_catalog = instance_type is not None and instance_type in catalog
    group: dict[str, Any] = {"name": name}
    if in_catalog:
        group["instanceType"] = instance_type
    group["capacity"] = capacity
    group["allocatable"] = allocatable
    labels = _shared_labels(nodes, in_catalog)
    if labels:
        group["labels"] = labels
    taints = _shared_taints(nodes)
    if taints:
        group["taints"] = taints
    if zone:
        group["zone"] = zone
    count = len(nodes)
    initial = min(max(count, bounds.min_size), bounds.max_size)
    if initial != count:
        notes.append(
            f"node group {name}: {count} node(s) now, outside the bounds given "
            f"({bounds.min_size}..{bounds.max_size}); starting at {initial}"
        )
    group.update(minSize=bounds.min_size, maxSize=bounds.max_size, initialSize=initial)
    return group


def _is_control_plane(node: Manifest) -> bool:
    labels = _labels(node)
    return any(k in labels for k in CONTROL_PLANE_LABELS)


def export_node_groups(
    nodes: Iterable[Manifest], catalog: Collection[str], bounds: Mapping[str, GroupBounds]
) -> NodeGroupExport:
    """Node groups for ``nodes``; ``bounds`` by group name (others are assumed), ``catalog`` the
    instance type names the simulator knows."""
    notes: list[str] = []
    by_group: dict[str, list[Manifest]] = {}
    control_plane: list[str] = []
    for node in sorted(nodes, key=lambda n: str((n.get("metadata") or {}).get("name", ""))):
        if _is_control_plane(node):
            control_plane.append(str(node["metadata"]["name"]))
            continue
        by_group.setdefault(dns_name(_group_name(_labels(node))), []).append(node)
    if control_plane:
        notes.append(
            f"left out {len(control_plane)} control-plane node(s) ({', '.join(control_plane)}): "
            "the simulator models worker groups only"
        )
    groups: list[dict[str, Any]] = []
    assumed: dict[str, GroupBounds] = {}
    for name, members in sorted(by_group.items()):
        given = bounds.get(name)
        if given is None:
            given = assumed[name] = GroupBounds(0, max(10, 2 * len(members)))
        groups.append(_group(name, members, catalog, given, notes))
    return NodeGroupExport(groups, notes, assumed)
