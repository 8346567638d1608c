"""The cloud's writes through the gate: every node group's size changes and deletions.

Every method of the CloudProvider and NodeGroup protocols is written out; the provider-level methods
and the groups' reads pass, the optional capabilities the provider declares among them
(:meth:`~kubetide.cloud.provider.CloudProvider.bulk_lookup`: reads only).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.cloud.provider import (
    BulkNodeLookup,
    CloudProvider,
    CloudProviderError,
    Instance,
    NodeGroup,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    PricingModel,
)
from kubetide.live.guard.gate import WriteGate
from kubetide.model.node import NodeView

__all__ = ["GuardedCloud", "GuardedNodeGroup"]


def _lost() -> CloudProviderError:
    return CloudProviderError("not the leader any more: cloud write refused")


class GuardedCloud:
    """A :class:`CloudProvider` whose groups' writes go through the gate."""

    def __init__(self, inner: CloudProvider, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def _wrap(self, group: NodeGroup) -> NodeGroup:
        return GuardedNodeGroup(group, self._gate)

    def name(self) -> str:
        return self._inner.name()

    def node_groups(self) -> list[NodeGroup]:
        return [self._wrap(g) for g in self._inner.node_groups()]

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        group = self._inner.node_group_for_node(node)
        return None if group is None else self._wrap(group)

    def has_instance(self, node: NodeView) -> bool:
        return self._inner.has_instance(node)

    def pricing(self) -> PricingModel:
        return self._inner.pricing()

    def gpu_label(self) -> str:
        return self._inner.gpu_label()

    def refresh(self) -> None:
        self._inner.refresh()

    def cleanup(self) -> None:
        self._inner.cleanup()

    def bulk_lookup(self) -> BulkNodeLookup | None:
        # Reads pass the guard: the provider's bulk answers are group ids and instance existence, and
        # the loop acts on the groups this guard hands out (node_groups), so no write skips it.
        return self._inner.bulk_lookup()


class GuardedNodeGroup:
    """A :class:`NodeGroup` whose writes go through the gate; its reads pass."""

    def __init__(self, inner: NodeGroup, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def _admit(self, action: str, what: str) -> bool:
        return self._gate.admit(action, what, _lost, node_group=self._inner.id())

    # -- writes

    def increase_size(self, delta: int) -> None:
        if self._admit("increase_size", f"increase node group {self._inner.id()} by {delta}"):
            self._inner.increase_size(delta)

    def atomic_increase_size(self, delta: int) -> str | None:
        what = f"increase node group {self._inner.id()} by {delta} (atomically)"
        if self._admit("increase_size", what):
            return self._inner.atomic_increase_size(delta)
        return None

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        if self._admit("delete_nodes", self._deleting(nodes)):
            self._inner.delete_nodes(nodes)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        if self._admit("delete_nodes", self._deleting(nodes)):
            self._inner.force_delete_nodes(nodes)

    def decrease_target_size(self, delta: int) -> None:
        what = f"decrease the target of node group {self._inner.id()} by {-delta}"
        if self._admit("decrease_target_size", what):
            self._inner.decrease_target_size(delta)

    def create(self) -> NodeGroup:
        if self._admit("create_node_group", f"create node group {self._inner.id()}"):
            return GuardedNodeGroup(self._inner.create(), self._gate)
        return self

    def delete(self) -> None:
        if self._admit("delete_node_group", f"delete node group {self._inner.id()}"):
            self._inner.delete()

    def _deleting(self, nodes: Sequence[NodeView]) -> str:
        return f"delete nodes {', '.join(n.name for n in nodes)} of node group {self._inner.id()}"

    # -- reads

    def id(self) -> str:
        return self._inner.id()

    def min_size(self) -> int:
        return self._inner.min_size()

    def max_size(self) -> int:
        return self._inner.max_size()

    def target_size(self) -> int:
        return self._inner.target_size()

    def nodes(self) -> list[Instance]:
        return self._inner.nodes()

    def template_node_info(self) -> NodeTemplate:
        return self._inner.template_node_info()

    def exist(self) -> bool:
        return self._inner.exist()

    def autoprovisioned(self) -> bool:
        return self._inner.autoprovisioned()

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        return self._inner.get_options(defaults)

    def debug(self) -> str:
        return self._inner.debug()
