"""Node groups as kubetide's cloud provider configuration has them, for ``scenario from-cluster``.

The API knows nodes, not groups: their bounds and the groups with no node at all live in the cloud.
Given the provider a ``kubetide run`` command would use (the kwok provider's ``--cloud-config``, the
aws provider's ``--nodes`` or auto-discovery), the groups, their bounds and each node's group come
from it, as Cluster Autoscaler sees them; a group with no node gets its machine from the provider's
template (what CA scales it up from). Read once here into plain data, so the scenario is still built
by pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubetide.cloud.instance import CloudProviderError, NotImplementedByProvider
from kubetide.cloud.provider import CloudProvider
from kubetide.live.export.snapshot import Manifest
from kubetide.model.node import NodeView

__all__ = ["ProviderGroup", "provider_groups"]


@dataclass(frozen=True)
class ProviderGroup:
    """One group of the provider: its bounds, the cluster's nodes in it, and (only for a group with no
    node) the Node its template describes, or the reason there is none."""

    name: str
    min_size: int
    max_size: int
    nodes: frozenset[str]
    template: Manifest | None = None
    template_problem: str = ""


def provider_groups(provider: CloudProvider, nodes: Sequence[Manifest]) -> list[ProviderGroup]:
    """Every group of ``provider`` with the names of the ``nodes`` it owns (by ``spec.providerID``, as
    CA's ``NodeGroupForNode``). CloudProviderError when the provider cannot list its groups."""
    members: dict[str, set[str]] = {}
    for manifest in nodes:
        view = NodeView.from_manifest(dict(manifest))
        group = provider.node_group_for_node(view)
        if group is not None:
            members.setdefault(group.id(), set()).add(view.name)
    out = []
    for group in provider.node_groups():
        owned = frozenset(members.get(group.id(), ()))
        template, problem = None, ""
        if not owned:  # only then is the template needed (for AWS it costs describe calls)
            try:
                template = node_manifest(group.template_node_info().node)
            except (CloudProviderError, NotImplementedByProvider) as exc:
                problem = str(exc)
        out.append(ProviderGroup(group.id(), group.min_size(), group.max_size(), owned, template, problem))
    return out


def node_manifest(view: NodeView) -> dict[str, Any]:
    """The Node a template view describes, in the API's shape (labels, taints, capacity)."""
    taints = [
        {"key": t.key, "effect": t.effect, **({"value": t.value} if t.value else {})} for t in view.taints
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": view.name, "labels": dict(view.labels)},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": view.capacity.to_manifest(), "allocatable": view.allocatable.to_manifest()},
    }
