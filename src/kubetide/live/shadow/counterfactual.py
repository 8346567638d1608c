"""The cloud as it was before the running autoscaler's latest scale-ups: kubetide decides in its place.

Two autoscalers never loop at the same instant. If the running one scales a group up first, the
shadow's next loop sees those nodes on their way and decides nothing, and the comparison would learn
nothing about what kubetide would have chosen. So, while a running scale-up is still unmatched
(within the match window), the shadow's cloud reports that group's target as before it, without the
instances being created for it: the loop decides on the cluster as the running autoscaler saw it.
Nodes that have registered meanwhile are real and stay.

It is the guard's cloud (:class:`~kubetide.live.guard.GuardedCloud`) under a shadow gate, so every
write is refused, with two reads changed. The provider is refreshed by the shadow itself just before
each decision (:class:`~kubetide.live.shadow.shadow.CAShadow`), so the loop's refresh reads nothing
again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubetide.cloud.instance import InstanceState
from kubetide.cloud.provider import BulkNodeLookup, CloudProvider, Instance, NodeGroup
from kubetide.live.guard import GuardedCloud, GuardedNodeGroup, WriteGate

__all__ = ["CounterfactualCloud"]

Undone = Callable[[], Mapping[str, int]]


class CounterfactualCloud(GuardedCloud):
    """``inner`` with ``undone()[group]`` nodes of each group's latest scale-ups taken back; ``gate``
    must be a shadow's (every write refused)."""

    def __init__(self, inner: CloudProvider, undone: Undone, gate: WriteGate) -> None:
        if not gate.shadow:
            raise ValueError("a counterfactual cloud is a shadow's: its gate must refuse every write")
        super().__init__(inner, gate)
        self._undone = undone

    def _wrap(self, group: NodeGroup) -> NodeGroup:
        return _CounterfactualGroup(group, self._gate, self._undone)

    def refresh(self) -> None:
        """Nothing: the shadow refreshed the provider just before deciding."""

    def bulk_lookup(self) -> BulkNodeLookup | None:
        return None  # group by group, so each answer goes through the counterfactual groups


class _CounterfactualGroup(GuardedNodeGroup):
    def __init__(self, inner: NodeGroup, gate: WriteGate, undone: Undone) -> None:
        super().__init__(inner, gate)
        self._undone = undone

    def _taken_back(self) -> int:
        return self._undone().get(self.id(), 0)

    def target_size(self) -> int:
        return max(super().target_size() - self._taken_back(), 0)

    def nodes(self) -> list[Instance]:
        """The group's instances without the newest ones still being created, up to the taken-back count."""
        instances = super().nodes()
        back = self._taken_back()
        if back <= 0:
            return instances
        creating = [i for i in instances if i.status is not None and i.status.state is InstanceState.Creating]
        dropped = {id(i) for i in creating[-back:]}
        return [i for i in instances if id(i) not in dropped]
