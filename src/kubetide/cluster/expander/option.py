"""What an expander chooses among: one expansion option per node group, and the filter protocol.

An option says "add ``node_count`` nodes to ``group`` and these pods will fit". Filters keep the best
options by their own measure; the chain (:mod:`.chain`) runs them in the ``--expander`` order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubetide.cluster.clusterstate.registry import ClusterEvent
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod

__all__ = ["ExpansionContext", "Filter", "Option"]


@dataclass(frozen=True, slots=True)
class Option:
    """``expander.Option``: ``template`` is the group's template node (None if it has none)."""

    group: str
    node_count: int
    pods: tuple[Pod, ...] = ()
    template: NodeView | None = None
    exists: bool = True
    similar_groups: tuple[str, ...] = ()
    debug: str = ""


@dataclass
class ExpansionContext:
    """What filters may read besides the options; ``events`` collects the warnings they raise."""

    now: float = 0.0
    cluster_node_count: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    events: list[ClusterEvent] = field(default_factory=list)
    # Each filter the chain ran, in order, and the groups it kept (for ``kubetide explain``).
    trace: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


class Filter(Protocol):
    def best_options(self, options: Sequence[Option], ctx: ExpansionContext) -> list[Option]:
        """The subset of ``options`` this strategy considers best (possibly empty)."""
        ...
