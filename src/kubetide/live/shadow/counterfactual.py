"""The cloud as it was before the running autoscaler's latest scale-ups: kubetide decides in its place.

Two autoscalers never loop at the same instant. If the running one scales a group up first, the
shadow's next loop sees those nodes on their way and decides nothing, and the comparison would learn
nothing about what kubetide would have chosen. So, while a running scale-up is still unmatched
(within the match window), the shadow's cloud reports that group's target as before it, without the
instances being created for it: the loop decides on the cluster as the running autoscaler saw it.
Nodes that have registered meanwhile are real and stay. Reads only; every write is refused (the shadow
never acts; :class:`~kubetide.live.guard.GuardedCloud` refuses them first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kubetide.cloud.instance import InstanceState
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
from kubetide.model.node import NodeView

__all__ = ["CounterfactualCloud"]

Undone = Callable[[], Mapping[str, int]]


def _refused() -> CloudProviderError:
    return CloudProviderError("a shadow's cloud is read-only")


class CounterfactualCloud:
    """``inner`` with ``undone()[group]`` nodes of each group's latest scale-ups taken back."""

    def __init__(self, inner: CloudProvider, undone: Undone) -> None:
        self._inner = inner
        self._undone = undone

    def _wrap(self, group: NodeGroup) -> NodeGroup:
        return _CounterfactualGroup(group, self._undone)

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
        return None  # group by group, so each answer goes through the counterfactual groups


class _CounterfactualGroup:
    def __init__(self, inner: NodeGroup, undone: Undone) -> None:
        self._inner = inner
        self._undone = undone

    def _taken_back(self) -> int:
        return self._undone().get(self._inner.id(), 0)

    def target_size(self) -> int:
        return max(self._inner.target_size() - self._taken_back(), 0)

    def nodes(self) -> list[Instance]:
        """The group's instances without the newest ones still being created, up to the taken-back count."""
        instances = self._inner.nodes()
        back = self._taken_back()
        if back <= 0:
            return instances
        creating = [i for i in instances if i.status is not None and i.status.state is InstanceState.Creating]
        dropped = {id(i) for i in creating[-back:]}
        return [i for i in instances if id(i) not in dropped]

    # -- writes: never

    def increase_size(self, delta: int) -> None:
        raise _refused()

    def atomic_increase_size(self, delta: int) -> None:
        raise _refused()

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        raise _refused()

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        raise _refused()

    def decrease_target_size(self, delta: int) -> None:
        raise _refused()

    def create(self) -> NodeGroup:
        raise _refused()

    def delete(self) -> None:
        raise _refused()

    # -- reads

    def id(self) -> str:
        return self._inner.id()

    def min_size(self) -> int:
        return self._inner.min_size()

    def max_size(self) -> int:
        return self._inner.max_size()

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
