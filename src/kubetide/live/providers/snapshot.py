"""A cloud read from a snapshot file (``kubetide explain --snapshot``): node groups with their sizes,
their member nodes and an optional template, frozen at one moment.

Reads answer from the snapshot; writes are accepted and recorded, never applied: the autoscaler's loop
runs once on it to say what it would do and why, and nothing changes anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubetide.cloud.instance import (
    CloudProviderError,
    Instance,
    InstanceState,
    InstanceStatus,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import BulkNodeLookup, NodeGroup, PricingModel, StaticNodeGroup
from kubetide.model.node import NodeView

__all__ = ["SnapshotCloud", "SnapshotGroup"]


@dataclass
class SnapshotGroup(StaticNodeGroup):
    name: str
    min: int
    max: int
    target: int
    members: tuple[NodeView, ...] = ()
    template: NodeTemplate | None = None
    asked: list[str] = field(default_factory=list)  # what the loop would have done, in words

    static_reason = "a snapshot's node groups are fixed"

    def id(self) -> str:
        return self.name

    def min_size(self) -> int:
        return self.min

    def max_size(self) -> int:
        return self.max

    def target_size(self) -> int:
        return self.target

    def increase_size(self, delta: int) -> None:
        if delta <= 0 or self.target + delta > self.max:
            raise CloudProviderError(
                f"size increase too large - desired:{self.target + delta} max:{self.max}"
            )
        self.asked.append(f"increase size by {delta}")

    def atomic_increase_size(self, delta: int) -> None:
        raise NotImplementedByProvider("atomic_increase_size")

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self.asked.append("delete " + ", ".join(n.name for n in nodes))

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self.delete_nodes(nodes)

    def decrease_target_size(self, delta: int) -> None:
        self.asked.append(f"decrease target size by {-delta}")

    def nodes(self) -> list[Instance]:
        return [
            Instance(n.provider_id or n.name, InstanceStatus(InstanceState.Running)) for n in self.members
        ]

    def template_node_info(self) -> NodeTemplate:
        if self.template is None:
            raise NotImplementedByProvider(f"the snapshot gives no template for group {self.name}")
        return self.template

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        return None

    def debug(self) -> str:
        return f"{self.name} (min {self.min}, max {self.max}, target {self.target})"


class SnapshotCloud:
    def __init__(self, groups: Sequence[SnapshotGroup]) -> None:
        self.groups = list(groups)
        self._by_node = {(n.provider_id or n.name): g for g in self.groups for n in g.members}

    def name(self) -> str:
        return "snapshot"

    def node_groups(self) -> list[NodeGroup]:
        return list(self.groups)

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        return self._by_node.get(node.provider_id or node.name)

    def has_instance(self, node: NodeView) -> bool:
        return (node.provider_id or node.name) in self._by_node

    def pricing(self) -> PricingModel:
        raise NotImplementedByProvider("a snapshot has no prices")

    def gpu_label(self) -> str:
        return ""

    def refresh(self) -> None:
        return None

    def cleanup(self) -> None:
        return None

    def bulk_lookup(self) -> BulkNodeLookup | None:
        return None  # node by node
