"""What the Escalator loop reads each tick: the port :class:`EscalatorWorldSource`.

Escalator reads two informers (spec §1): every node, and every pod in every namespace whose phase is
neither Succeeded nor Failed. The loop driver asks this port once per tick and shares the answer
between all node groups, as upstream's listers share one cache. The simulator implements it on its
simulated API server, the live adapter on informers or lists, tests on plain lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["EscalatorWorldSource", "StaticWorld"]


class EscalatorWorldSource(Protocol):
    """The cluster as the API server shows it now; both methods are reads with no side effect."""

    def nodes(self) -> Sequence[NodeView]:
        """Every Node, in any state (cordoned, NotReady, tainted), with its current taints and annotations.

        The order is the lister's: the first node of a group gives the cached allocatable used to size
        a scale-up from zero. Taints must be as written (the removal taint's value is the Unix second
        it was added), because a restarted driver reads its past scale-downs back from them.
        """
        ...

    def pods(self) -> Sequence[Pod]:
        """Every pod in every namespace, bound or pending (unbound pods drive the scale-up).

        Succeeded and Failed pods may be included; the driver drops them, as upstream's field selector.
        """
        ...


class StaticWorld:
    """A fixed world, for tests and one-shot runs."""

    def __init__(self, nodes: Sequence[NodeView] = (), pods: Sequence[Pod] = ()) -> None:
        self._nodes = tuple(nodes)
        self._pods = tuple(pods)

    def nodes(self) -> Sequence[NodeView]:
        return self._nodes

    def pods(self) -> Sequence[Pod]:
        return self._pods
