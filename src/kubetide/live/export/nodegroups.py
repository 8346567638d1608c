"""Node groups from Nodes: which nodes belong together, and what a group's machines look like.

The API knows nodes, not groups: the group is read from the first group label present among the ones
managed clouds and provisioners set (:data:`GROUP_LABELS`, in that order), else from instance type and
zone. A group's machine is its nodes' most common capacity and allocatable (nodes of one group should
agree; when they do not, a note says so). Group bounds live in the cloud, not the API: they are assumed
(``minSize: 0``, ``maxSize: max(10, 2 x count)``) unless the caller gives them, and a note lists them.

With kubetide's provider configuration (:mod:`.provider`), the groups are the provider's instead: each
node in the group the provider says, the provider's bounds, every group written (one with no node gets
the provider's template as its machine), and nodes of no group kept as fixed groups.

What a node carries that a group cannot (an annotation such as CA's ``scale-down-disabled``, a label or
a taint only some nodes have, a cordon, NotReady) is dropped, and a note names it and its nodes. Each
node that exists at the start gets the simulated node that stands for it (``initial_nodes``), so a pod
bound to it can be bound to that node.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.provider import ProviderGroup
from kubetide.live.export.snapshot import Manifest

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
# Annotations the control plane keeps on every node about its own bookkeeping: dropped without a note.
_BOOKKEEPING_ANNOTATIONS = frozenset(
    {
        "node.alpha.kubernetes.io/ttl",
        "volumes.kubernetes.io/controller-managed-attach-detach",
        "kubeadm.alpha.kubernetes.io/cri-socket",
    }
)
# What dropping one of these changes for the autoscalers, said in its note.
_ANNOTATION_EFFECTS = {
    "cluster-autoscaler.kubernetes.io/scale-down-disabled": (
        "CA never removes such a node; the simulated one may be removed"
    ),
}


@dataclass(frozen=True)
class GroupBounds:
    min_size: int
    max_size: int


@dataclass(frozen=True)
class NodeGroupExport:
    """The ``spec.nodeGroups`` entries and what the user must know about them. ``initial_nodes`` maps
    each node that exists at the start to the simulated node standing for it: (group, index from 1)."""

    groups: list[dict[str, Any]]
    notes: list[str]
    assumed_bounds: dict[str, GroupBounds]  # groups whose bounds were not given
    initial_nodes: dict[str, tuple[str, int]] = field(default_factory=dict)


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
    name: str,
    nodes: list[Manifest],
    catalog: Collection[str],
    bounds: GroupBounds,
    notes: list[str],
    count: int | None = None,
) -> dict[str, Any]:
    """The group entry for ``nodes`` (its machine); ``count`` nodes now (default: as many as ``nodes``;
    0 for a group whose only "node" is the provider's template)."""
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
    count = len(nodes) if count is None else count
    initial = min(max(count, bounds.min_size), bounds.max_size)
    if initial != count:
        notes.append(
            f"node group {name}: {count} node(s) now, outside the bounds "
            f"({bounds.min_size}..{bounds.max_size}); starting at {initial}"
        )
    group.update(minSize=bounds.min_size, maxSize=bounds.max_size, initialSize=initial)
    return group


def _is_control_plane(node: Manifest) -> bool:
    labels = _labels(node)
    return any(k in labels for k in CONTROL_PLANE_LABELS)


def _name(node: Manifest) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _by_label(nodes: Iterable[Manifest]) -> dict[str, list[Manifest]]:
    by_group: dict[str, list[Manifest]] = {}
    for node in nodes:
        by_group.setdefault(dns_name(_group_name(_labels(node))), []).append(node)
    return by_group


def export_node_groups(
    nodes: Iterable[Manifest],
    catalog: Collection[str],
    bounds: Mapping[str, GroupBounds],
    provider: Sequence[ProviderGroup] | None = None,
) -> NodeGroupExport:
    """Node groups for ``nodes``; ``bounds`` by group name (others are assumed), ``catalog`` the
    instance type names the simulator knows; ``provider``: the provider's groups, which then decide."""
    notes: list[str] = []
    control_plane: list[str] = []
    workers: list[Manifest] = []
    for node in sorted(nodes, key=_name):
        if _is_control_plane(node):
            control_plane.append(_name(node))
        else:
            workers.append(node)
    if control_plane:
        notes.append(
            f"left out {len(control_plane)} control-plane node(s) ({', '.join(control_plane)}): "
            "the simulator models worker groups only"
        )
    fixed: dict[str, GroupBounds] = {}
    templates: dict[str, Manifest] = {}
    if provider is None:
        members, given = _by_label(workers), dict(bounds)
    else:
        members, fixed, templates, given = _provider_members(workers, provider, notes)
    groups: list[dict[str, Any]] = []
    assumed: dict[str, GroupBounds] = {}
    initial_nodes: dict[str, tuple[str, int]] = {}
    for name in sorted({*members, *templates}):
        group_nodes = members.get(name, [])
        limits = given.get(name) or fixed.get(name)
        if limits is None:
            limits = assumed[name] = GroupBounds(0, max(10, 2 * len(group_nodes)))
        if group_nodes:
            group = _group(name, group_nodes, catalog, limits, notes)
            _note_dropped(name, group, group_nodes, notes)
        else:
            group = _group(name, [templates[name]], catalog, limits, notes, count=0)
            notes.append(
                f"node group {name}: no node now; its machine is the provider's template, as CA scales "
                "it up from zero"
            )
        groups.append(group)
        for index, node in enumerate(group_nodes[: group["initialSize"]], start=1):
            initial_nodes[_name(node)] = (name, index)
    return NodeGroupExport(groups, notes, assumed, initial_nodes)


def _provider_members(
    workers: list[Manifest], provider: Sequence[ProviderGroup], notes: list[str]
) -> tuple[dict[str, list[Manifest]], dict[str, GroupBounds], dict[str, Manifest], dict[str, GroupBounds]]:
    """(nodes by group, fixed bounds of nodes no group owns, templates of groups with no node, the
    provider's bounds)."""
    owner = {node: g.name for g in provider for node in g.nodes}
    members: dict[str, list[Manifest]] = {g.name: [] for g in provider if g.nodes}
    others: list[Manifest] = []
    for node in workers:
        group = owner.get(_name(node))
        if group is not None:
            members[group].append(node)
        else:
            others.append(node)
    templates: dict[str, Manifest] = {}
    for g in provider:
        if g.nodes:
            continue
        if g.template is None:
            notes.append(f"node group {g.name} left out: no node now and no template ({g.template_problem})")
            continue
        templates[g.name] = g.template
    given = {g.name: GroupBounds(g.min_size, g.max_size) for g in provider}
    fixed: dict[str, GroupBounds] = {}
    for raw, nodes in _by_label(others).items():
        name = raw if raw not in given else f"{raw}-unmanaged"
        members[name] = nodes
        fixed[name] = GroupBounds(len(nodes), len(nodes))
        notes.append(
            f"node group {name}: {len(nodes)} node(s) of no group of the cloud provider "
            f"({', '.join(_name(n) for n in nodes)}), kept at that size: no autoscaler changes them"
        )
    return members, fixed, templates, given


def _note_dropped(name: str, group: Mapping[str, Any], nodes: list[Manifest], notes: list[str]) -> None:
    """A note for each thing some of the group's nodes carry that the group cannot: every annotation
    (but the control plane's bookkeeping), a label or taint not on every node, a cordon, NotReady."""
    dropped: dict[str, list[str]] = {}
    kept_labels = dict(group.get("labels") or {})
    kept_taints = list(group.get("taints") or [])
    for node in nodes:
        meta = node.get("metadata") or {}
        for key, value in sorted((meta.get("annotations") or {}).items()):
            if key not in _BOOKKEEPING_ANNOTATIONS:
                dropped.setdefault(f"annotation {key}={value}", []).append(_name(node))
        for key, value in sorted(_labels(node).items()):
            ignored = key in _PER_NODE_LABELS or key in _SIMULATOR_LABELS or key in INSTANCE_TYPE_LABELS
            if not ignored and kept_labels.get(key) != value:
                dropped.setdefault(f"label {key}={value}", []).append(_name(node))
        for taint in _taints(node):
            if taint not in kept_taints:
                text = f"{taint['key']}={taint.get('value', '')}:{taint['effect']}"
                dropped.setdefault(f"taint {text}", []).append(_name(node))
        if (node.get("spec") or {}).get("unschedulable"):
            dropped.setdefault("spec.unschedulable (cordoned)", []).append(_name(node))
        if not _ready(node):
            dropped.setdefault("status NotReady (simulated nodes start Ready)", []).append(_name(node))
    for what, names in dropped.items():
        key = what.split(" ", 1)[1].split("=", 1)[0] if what.startswith("annotation ") else ""
        effect = f"; {_ANNOTATION_EFFECTS[key]}" if key in _ANNOTATION_EFFECTS else ""
        notes.append(
            f"node group {name}: {what} dropped from node(s) {', '.join(names)}: a node group's nodes are "
            f"all alike{effect}"
        )


def _ready(node: Manifest) -> bool:
    conditions = (node.get("status") or {}).get("conditions")
    if not conditions:
        return True  # a recorded node without conditions: nothing says it is not Ready
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
